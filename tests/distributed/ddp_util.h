/* Helpers of the distributed tests: models, deterministic data, parameter reads. Each
   rank of a test builds the same things from the same seeds. */
#ifndef DP_TESTS_DISTRIBUTED_DDP_UTIL_H_
#define DP_TESTS_DISTRIBUTED_DDP_UTIL_H_

#include <dataparallel/dataparallel.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exits the process (so mpirun ends the job) when a call fails. */
#define MUST(call)                                                                              \
  do {                                                                                          \
    dp_result r_ = (call);                                                                      \
    if (r_ != DP_OK) {                                                                          \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, dp_result_string(r_), \
              dp_last_error());                                                                 \
      exit(3);                                                                                  \
    }                                                                                           \
  } while (0)

static inline dp_context* ddp_context(int32_t cpu_devices, uint64_t seed) {
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = cpu_devices;
  o.load_cuda = 0;
  o.seed = seed;
  dp_context* ctx = NULL;
  MUST(dp_context_create(&o, &ctx));
  return ctx;
}

static inline void append(dp_module* seq, dp_module* layer) {
  MUST(dp_module_append(seq, layer));
  dp_module_release(layer);
}

/* 784 -> 64 -> 32 -> 10 with ReLUs (dp-train's MLP, narrower). */
static inline dp_module* make_mlp(dp_context* ctx, int64_t hidden) {
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  dp_module *seq = NULL, *m = NULL;
  MUST(dp_module_sequential(ctx, &seq));
  MUST(dp_module_linear(ctx, 784, hidden, 1, cpu0, &m));
  append(seq, m);
  MUST(dp_module_relu(ctx, &m));
  append(seq, m);
  MUST(dp_module_linear(ctx, hidden, 32, 1, cpu0, &m));
  append(seq, m);
  MUST(dp_module_relu(ctx, &m));
  append(seq, m);
  MUST(dp_module_linear(ctx, 32, 10, 1, cpu0, &m));
  append(seq, m);
  return seq;
}

/* conv 1->4 3x3 pad 1, ReLU, average-pool 2, flatten, linear 784 -> 10. No batch norm:
   its batch statistics are per replica, so no DDP equals full-batch training with it. No
   max-pool: where two values of a window are within rounding of each other, the
   reference and DDP may pick different ones, and the gradient then moves by O(1) instead
   of by rounding (measured: 6.7e-5 after 20 steps with 3 ranks, against 3e-8 with
   average pooling). */
static inline dp_module* make_cnn(dp_context* ctx) {
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  dp_module *seq = NULL, *m = NULL;
  MUST(dp_module_sequential(ctx, &seq));
  MUST(dp_module_conv2d(ctx, 1, 4, 3, 3, 1, 1, 1, 1, 1, cpu0, &m));
  append(seq, m);
  MUST(dp_module_relu(ctx, &m));
  append(seq, m);
  MUST(dp_module_avgpool2d(ctx, 2, 2, 2, 2, 0, 0, &m));
  append(seq, m);
  MUST(dp_module_flatten(ctx, 1, -1, &m));
  append(seq, m);
  MUST(dp_module_linear(ctx, 4 * 14 * 14, 10, 1, cpu0, &m));
  append(seq, m);
  return seq;
}

/* Deterministic inputs: sample i of step s is the same on every rank. */
static inline float sample_value(int64_t step, int64_t i, int64_t k) {
  uint64_t x = (uint64_t)(step * 1000003 + i) * 6364136223846793005ull +
               (uint64_t)k * 1442695040888963407ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (float)((double)(x >> 11) / 9007199254740992.0) - 0.5f;
}

/* Rows [first, first + n) of step s's global batch: x [n, 784] (or [n, 1, 28, 28] when
   image), labels [n]. */
static inline void make_batch(dp_context* ctx, int64_t step, int64_t first, int64_t n, int image,
                              dp_tensor** x, dp_tensor** y) {
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  float* values = malloc((size_t)(n * 784) * sizeof(float));
  int64_t* labels = malloc((size_t)n * sizeof(int64_t));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t k = 0; k < 784; ++k) values[r * 784 + k] = sample_value(step, first + r, k);
    labels[r] = (first + r + step) % 10;
  }
  const int64_t flat[2] = {n, 784};
  const int64_t img[4] = {n, 1, 28, 28};
  MUST(dp_tensor_from_data(ctx, DP_FLOAT32, image ? img : flat, image ? 4 : 2, values,
                           (size_t)(n * 784) * sizeof(float), cpu0, x));
  const int64_t lshape[1] = {n};
  MUST(dp_tensor_from_data(ctx, DP_INT64, lshape, 1, labels, (size_t)n * sizeof(int64_t), cpu0, y));
  free(values);
  free(labels);
}

/* Every parameter of m (or its gradient), concatenated, into a new array; *n receives its
   length. */
static inline float* read_floats(const dp_module* m, int gradients, size_t* n) {
  size_t count = 0, total = 0;
  MUST(dp_module_parameter_count(m, &count));
  float* all = NULL;
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    dp_tensor *p = NULL, *t = NULL;
    int64_t numel = 0;
    MUST(dp_module_parameter(m, i, &name, &p));
    if (gradients) {
      MUST(dp_tensor_grad(p, &t));
      dp_tensor_release(p);
    } else {
      t = p;
    }
    MUST(dp_tensor_numel(t, &numel));
    all = realloc(all, (total + (size_t)numel) * sizeof(float));
    MUST(dp_tensor_to_host(t, all + total, (size_t)numel * sizeof(float)));
    total += (size_t)numel;
    dp_tensor_release(t);
  }
  *n = total;
  return all;
}

static inline float* read_parameters(const dp_module* m, size_t* n) {
  return read_floats(m, 0, n);
}

static inline float* read_gradients(const dp_module* m, size_t* n) {
  return read_floats(m, 1, n);
}

/* Copies every parameter (and buffer) of src into dst (same architecture). */
static inline void copy_state(const dp_module* src, dp_module* dst) {
  size_t count = 0;
  MUST(dp_module_parameter_count(src, &count));
  for (int buffers = 0; buffers < 2; ++buffers) {
    if (buffers) MUST(dp_module_buffer_count(src, &count));
    for (size_t i = 0; i < count; ++i) {
      const char *a = NULL, *b = NULL;
      dp_tensor *s = NULL, *d = NULL;
      size_t bytes = 0;
      if (buffers) {
        MUST(dp_module_buffer(src, i, &a, &s));
        MUST(dp_module_buffer(dst, i, &b, &d));
      } else {
        MUST(dp_module_parameter(src, i, &a, &s));
        MUST(dp_module_parameter(dst, i, &b, &d));
      }
      MUST(dp_tensor_nbytes(s, &bytes));
      void* tmp = malloc(bytes);
      MUST(dp_tensor_to_host(s, tmp, bytes));
      MUST(dp_tensor_copy_from_host(d, tmp, bytes));
      free(tmp);
      dp_tensor_release(s);
      dp_tensor_release(d);
    }
  }
}

static inline double max_abs_diff(const float* a, const float* b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs((double)a[i] - (double)b[i]);
    if (d > m || d != d) m = d;
  }
  return m;
}

/* loss = cross_entropy(model(x), y) * scale, for a forward already run. */
static inline dp_tensor* loss_of(dp_tensor* logits, dp_tensor* y, double scale) {
  dp_tensor *loss = NULL, *scaled = NULL;
  MUST(dp_op_cross_entropy(logits, y, &loss));
  if (scale == 1.0) return loss;
  MUST(dp_op_scale(loss, scale, &scaled));
  dp_tensor_release(loss);
  return scaled;
}

#endif /* DP_TESTS_DISTRIBUTED_DDP_UTIL_H_ */
