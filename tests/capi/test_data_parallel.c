/*
 * DataParallel through the C API: one test per rule of docs/spec.md sections 2 to 8 and the
 * [better] items of sections 4-7 and 9 that the API exposes.
 *
 * Every expected value is computed here by hand (closed forms over the inputs the test
 * makes), never read back from the library through the path under test.
 *
 * Most tests watch the replicas through a custom module whose forward callback records,
 * per device, what it saw (inputs, thread, grad mode, parameter addresses) under a mutex.
 *
 * Not testable here (no GPU on the machines this suite runs on, and the rules are CUDA
 * only): the GPU imbalance warning of section 2 (memory / multiprocessor ratio < 0.75),
 * and the NCCL broadcast of section 5. "No usable device at all" (section 2) cannot be
 * reached either: a context always has at least one CPU device.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

enum { MAXD = 8, MAXIN = 4 };

/* What the recording module's forward computes (x = inputs[0], dev = its device index). */
typedef enum fwd_mode {
  FWD_MUL_W,           /* x * w */
  FWD_SCALE_BY_DEVICE, /* x * (dev + 1): lets a gradient tell the replicas apart */
  FWD_SUM,             /* sum(x), a 0-dim output */
  FWD_TIED,            /* x * a + x * b, where a and b may be one tied tensor */
  FWD_AFFINE,          /* x * inputs[2] + inputs[1] (the broadcast inputs) */
  FWD_RAGGED,          /* x on every device but cpu:2, which returns sum over dim 1 */
  FWD_WRITE_W,         /* on cpu:0, w = {5, 5} in place first; then x * w */
} fwd_mode;

typedef struct recorder {
  pthread_mutex_t mu;
  fwd_mode mode;
  int has_w;          /* the module has a parameter "w" ("a" in FWD_TIED) */
  unsigned fail_mask; /* bit d: the replica on cpu:d returns an error */
  int calls;
  int calls_on[MAXD];
  size_t n_inputs[MAXD];
  size_t ndim[MAXD][MAXIN];
  int64_t size0[MAXD][MAXIN];
  int64_t size1[MAXD][MAXIN];
  int input_dev[MAXD][MAXIN];
  float first_values[MAXD][MAXIN][4]; /* up to 4 leading values of each input */
  int grad_enabled[MAXD];
  pthread_t thread[MAXD];
  void* w_ptr[MAXD]; /* data address of self's "w" ("a" in FWD_TIED) */
  void* b_ptr[MAXD]; /* data address of self's "b" in FWD_TIED */
  int w_dev[MAXD];
  void* out_ptr[MAXD];
} recorder;

static void recorder_init(recorder* rec, fwd_mode mode) {
  memset(rec, 0, sizeof *rec);
  pthread_mutex_init(&rec->mu, NULL);
  rec->mode = mode;
}

static void recorder_destroy(recorder* rec) {
  pthread_mutex_destroy(&rec->mu);
}

static int device_index(const dp_tensor* t) {
  dp_device d;
  if (dp_tensor_device(t, &d) != DP_OK) return -1;
  return d.index;
}

static dp_result recording_forward(void* user_data, dp_module* self, dp_tensor* const* inputs,
                                   size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                                   size_t* n_outputs) {
  recorder* rec = (recorder*)user_data;
  (void)max_outputs;
  dp_tensor* w = NULL;
  dp_tensor* b = NULL;
  dp_result r = DP_OK;
  if (rec->has_w) {
    r = dp_module_get(self, rec->mode == FWD_TIED ? "a" : "w", &w);
    if (r != DP_OK) return r;
    if (rec->mode == FWD_TIED && (r = dp_module_get(self, "b", &b)) != DP_OK) {
      dp_tensor_release(w);
      return r;
    }
  }
  int dev = n_inputs > 0 ? device_index(inputs[0]) : (w ? device_index(w) : 0);
  if (dev < 0 || dev >= MAXD) dev = 0;

  pthread_mutex_lock(&rec->mu);
  rec->calls++;
  rec->calls_on[dev]++;
  rec->n_inputs[dev] = n_inputs;
  for (size_t i = 0; i < n_inputs && i < MAXIN; ++i) {
    int64_t shape[DP_MAX_DIMS] = {0};
    size_t nd = 0;
    dp_tensor_ndim(inputs[i], &nd);
    dp_tensor_shape(inputs[i], shape, DP_MAX_DIMS);
    rec->ndim[dev][i] = nd;
    rec->size0[dev][i] = nd > 0 ? shape[0] : -1;
    rec->size1[dev][i] = nd > 1 ? shape[1] : -1;
    rec->input_dev[dev][i] = device_index(inputs[i]);
    int64_t numel = 0;
    void* data = NULL;
    dp_tensor_numel(inputs[i], &numel);
    /* The callback runs on the device's worker: read CPU memory directly. */
    if (dp_tensor_data(inputs[i], &data) == DP_OK) {
      for (int64_t k = 0; k < numel && k < 4; ++k) rec->first_values[dev][i][k] = ((float*)data)[k];
    }
  }
  rec->grad_enabled[dev] = dp_is_grad_enabled();
  rec->thread[dev] = pthread_self();
  void* p = NULL;
  if (w && dp_tensor_data(w, &p) == DP_OK) rec->w_ptr[dev] = p;
  if (w) rec->w_dev[dev] = device_index(w);
  if (b && dp_tensor_data(b, &p) == DP_OK) rec->b_ptr[dev] = p;
  const int fail = (rec->fail_mask >> dev) & 1u;
  pthread_mutex_unlock(&rec->mu);

  dp_tensor* y = NULL;
  if (fail) {
    char msg[64];
    snprintf(msg, sizeof msg, "replica failed on purpose on cpu:%d", dev);
    r = dp_set_error(DP_ERR_CALLBACK, msg);
  } else if (n_inputs == 0) {
    r = dp_op_scale(w, 1.0, &y);
  } else {
    dp_tensor* x = inputs[0];
    switch (rec->mode) {
      case FWD_MUL_W:
        r = dp_op_mul(x, w, &y);
        break;
      case FWD_WRITE_W: {
        const float five[2] = {5.0f, 5.0f};
        if (dev == 0) r = dp_tensor_copy_from_host(w, five, sizeof five);
        if (r == DP_OK) r = dp_op_mul(x, w, &y);
        break;
      }
      case FWD_SCALE_BY_DEVICE:
        r = dp_op_scale(x, (double)(dev + 1), &y);
        break;
      case FWD_SUM:
        r = dp_op_sum(x, &y);
        break;
      case FWD_TIED: {
        dp_tensor* xa = NULL;
        dp_tensor* xb = NULL;
        r = dp_op_mul(x, w, &xa);
        if (r == DP_OK) r = dp_op_mul(x, b, &xb);
        if (r == DP_OK) r = dp_op_add(xa, xb, &y);
        dp_tensor_release(xa);
        dp_tensor_release(xb);
        break;
      }
      case FWD_AFFINE: {
        dp_tensor* xs = NULL;
        r = n_inputs == 3 ? dp_op_mul(x, inputs[2], &xs)
                          : dp_set_error(DP_ERR_CALLBACK, "3 inputs");
        if (r == DP_OK) r = dp_op_add(xs, inputs[1], &y);
        dp_tensor_release(xs);
        break;
      }
      case FWD_RAGGED:
        r = dev == 2 ? dp_op_sum_dim(x, 1, 1, &y) : dp_op_scale(x, 1.0, &y);
        break;
    }
  }
  dp_tensor_release(w);
  dp_tensor_release(b);
  if (r != DP_OK) return r;
  void* out = NULL;
  if (dp_tensor_data(y, &out) == DP_OK) {
    pthread_mutex_lock(&rec->mu);
    rec->out_ptr[dev] = out;
    pthread_mutex_unlock(&rec->mu);
  }
  outputs[0] = y;
  *n_outputs = 1;
  return DP_OK;
}

/* A custom module named `name` (NULL: "Custom") whose forward is fn(user, ...). */
static dp_module* custom(dp_context* ctx, const char* name, dp_forward_fn fn, void* user) {
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.type_name = name;
  desc.forward = fn;
  desc.user_data = user;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_custom(ctx, &desc, &m));
  return m;
}

/* A recording module; with `w` (n values) a parameter "w" of shape [n] on `dev`. */
static dp_module* recording_module(dp_context* ctx, recorder* rec, const float* w, int64_t n,
                                   dp_device dev) {
  dp_module* m = custom(ctx, "Recording", recording_forward, rec);
  if (w) {
    dp_tensor* t = make_f32(ctx, w, &n, 1, dev);
    ASSERT_OK(dp_module_register_parameter(m, "w", t));
    dp_tensor_release(t);
    rec->has_w = 1;
  }
  return m;
}

/* ---------------------------------------------------------------------------------- */
/* Small helpers                                                                      */
/* ---------------------------------------------------------------------------------- */

static int setup(void** state) {
  *state = make_context(4);
  return 0;
}

static int teardown(void** state) {
  dp_context_release((dp_context*)*state);
  return 0;
}

/* devs[i] = cpu:(first + i). */
static void cpu_range(dp_device* devs, int n, int first) {
  for (int i = 0; i < n; ++i) devs[i] = cpu_dev(first + i);
}

/* Element k of the test inputs: small integers, exact in float32. */
static float seq_value(int64_t k) {
  return (float)(k % 7) - 2.0f + 0.5f * (float)(k / 7);
}

/* A [rows, cols] tensor with element (i, c) = seq_value(i * cols + c). */
static dp_tensor* seq_matrix(dp_context* ctx, int64_t rows, int64_t cols, dp_device dev) {
  const int64_t shape[2] = {rows, cols};
  if (rows * cols == 0) {
    dp_tensor* t = NULL;
    ASSERT_OK(dp_tensor_zeros(ctx, DP_FLOAT32, shape, 2, dev, &t));
    return t;
  }
  float* v = malloc(sizeof(float) * (size_t)(rows * cols));
  for (int64_t k = 0; k < rows * cols; ++k) v[k] = seq_value(k);
  dp_tensor* t = make_f32(ctx, v, shape, 2, dev);
  free(v);
  return t;
}

static void assert_on_device(const dp_tensor* t, int32_t index) {
  dp_device d;
  ASSERT_OK(dp_tensor_device(t, &d));
  assert_int_equal(d.type, DP_DEVICE_CPU);
  assert_int_equal(d.index, index);
}

static void assert_shape2(const dp_tensor* t, int64_t a, int64_t b) {
  size_t nd = 0;
  int64_t s[DP_MAX_DIMS];
  ASSERT_OK(dp_tensor_ndim(t, &nd));
  assert_int_equal(nd, 2);
  ASSERT_OK(dp_tensor_shape(t, s, DP_MAX_DIMS));
  assert_int_equal(s[0], a);
  assert_int_equal(s[1], b);
}

static void* data_of(const dp_tensor* t) {
  void* p = NULL;
  ASSERT_OK(dp_tensor_data(t, &p));
  return p;
}

/* The accumulated gradient of a leaf (must exist), copied to out. */
static void read_grad(const dp_tensor* t, float* out, size_t n) {
  dp_tensor* g = NULL;
  ASSERT_OK(dp_tensor_grad(t, &g));
  if (g == NULL) fail_msg("no gradient was computed");
  read_f32(g, out, n);
  dp_tensor_release(g);
}

static dp_data_parallel* make_dp(dp_module* m, const dp_device* ids, size_t n,
                                 const dp_device* output, int32_t dim,
                                 const dp_data_parallel_options* o) {
  dp_data_parallel* dp = NULL;
  ASSERT_OK(dp_data_parallel_create(m, ids, n, output, dim, o, &dp));
  return dp;
}

/* One forward with one output. */
static dp_tensor* forward1(dp_data_parallel* dp, dp_tensor* x) {
  dp_tensor* out[DP_MAX_OUTPUTS] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_forward(dp, &x, NULL, 1, out, DP_MAX_OUTPUTS, &n));
  assert_int_equal(n, 1);
  return out[0];
}

static dp_tensor* param(const dp_module* m, const char* name) {
  dp_tensor* t = NULL;
  ASSERT_OK(dp_module_get(m, name, &t));
  return t;
}

/* Backpropagates sum(out). */
static void backward_sum(dp_tensor* out) {
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_sum(out, &loss));
  ASSERT_OK(dp_backward(loss, NULL, 0));
  dp_tensor_release(loss);
}

static const float kW2[2] = {2.0f, -3.0f};

/* y is seq_matrix(rows, 2) times kW2 per column (FWD_MUL_W's output), exactly. */
static void assert_rows_times_w2(const dp_tensor* y, int64_t rows) {
  float got[64], want[64];
  assert_true(rows * 2 <= 64);
  read_f32(y, got, (size_t)(rows * 2));
  for (int64_t k = 0; k < rows * 2; ++k) want[k] = seq_value(k) * kW2[k % 2];
  assert_close_f32(got, want, (size_t)(rows * 2), 0, 0);
}

/* ---------------------------------------------------------------------------------- */
/* Section 2: construction                                                            */
/* ---------------------------------------------------------------------------------- */

static void device_ids_null_means_every_cpu_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_device devs[MAXD];
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_devices(dp, devs, MAXD, &n));
  assert_int_equal(n, 4);
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(devs[i].type, DP_DEVICE_CPU);
    assert_int_equal(devs[i].index, i);
  }
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 4);
  for (int d = 0; d < 4; ++d) assert_int_equal(rec.calls_on[d], 1);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void output_device_defaults_to_device_ids_0(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(1));
  dp_device ids[3];
  cpu_range(ids, 3, 1);
  dp_data_parallel* dp = make_dp(m, ids, 3, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 6, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 3);
  assert_on_device(y, 1);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void empty_device_ids_are_rejected(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 2, 2, 1, cpu_dev(0), &m));
  dp_device ids[1] = {{DP_DEVICE_CPU, 0}};
  dp_data_parallel* dp = NULL;
  ASSERT_ERROR(dp_data_parallel_create(m, ids, 0, NULL, 0, NULL, &dp), DP_ERR_INVALID_ARGUMENT,
               "empty");
  assert_null(dp);
  dp_module_release(m);
}

static void duplicate_device_id_is_rejected_naming_it(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 2, 2, 1, cpu_dev(0), &m));
  const dp_device ids[3] = {{DP_DEVICE_CPU, 0}, {DP_DEVICE_CPU, 2}, {DP_DEVICE_CPU, 2}};
  dp_data_parallel* dp = NULL;
  ASSERT_ERROR(dp_data_parallel_create(m, ids, 3, NULL, 0, NULL, &dp), DP_ERR_INVALID_ARGUMENT,
               "cpu:2");
  assert_null(dp);
  dp_module_release(m);
}

/* An id past the devices that exist is out of range, as everywhere in the C API (the rule
   beside dp_result), its message naming the id (the output device too). */
static void out_of_range_device_id_is_rejected_naming_it(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 2, 2, 1, cpu_dev(0), &m));
  const dp_device ids[2] = {{DP_DEVICE_CPU, 0}, {DP_DEVICE_CPU, 7}};
  dp_data_parallel* dp = NULL;
  ASSERT_ERROR(dp_data_parallel_create(m, ids, 2, NULL, 0, NULL, &dp), DP_ERR_OUT_OF_RANGE,
               "device_ids[1] = cpu:7");
  assert_null(dp);
  const dp_device out = {DP_DEVICE_CPU, 9};
  ASSERT_ERROR(dp_data_parallel_create(m, ids, 1, &out, 0, NULL, &dp), DP_ERR_OUT_OF_RANGE,
               "output_device = cpu:9");
  assert_null(dp);
  dp_module_release(m);
}

static void with_one_device_the_module_moves_there_at_construction(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 3, 2, 1, cpu_dev(0), &m));
  const dp_device ids[1] = {{DP_DEVICE_CPU, 3}};
  dp_data_parallel* dp = make_dp(m, ids, 1, NULL, 0, NULL);
  dp_tensor* w = param(m, "weight");
  dp_tensor* b = param(m, "bias");
  assert_on_device(w, 3);
  assert_on_device(b, 3);
  dp_tensor_release(w);
  dp_tensor_release(b);
  dp_data_parallel_release(dp);
  dp_module_release(m);
}

/* ---------------------------------------------------------------------------------- */
/* Section 3: forward                                                                 */
/* ---------------------------------------------------------------------------------- */

static void forward_rejects_a_module_off_device_ids_0_naming_both_devices(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_device ids[2];
  cpu_range(ids, 2, 0);
  dp_data_parallel* dp = make_dp(m, ids, 2, NULL, 0, NULL);
  ASSERT_OK(dp_module_to(m, cpu_dev(2)));
  dp_tensor* x = seq_matrix(ctx, 4, 2, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_DEVICE_MISMATCH,
               "cpu:2");
  assert_non_null(strstr(dp_last_error(), "cpu:0"));
  assert_null(out[0]);
  assert_int_equal(rec.calls, 0);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void forward_rejects_a_buffer_off_device_ids_0(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  const int64_t one = 1;
  dp_tensor* buf = NULL;
  ASSERT_OK(dp_tensor_zeros(ctx, DP_FLOAT32, &one, 1, cpu_dev(3), &buf));
  ASSERT_OK(dp_module_register_buffer(m, "stray", buf));
  dp_device ids[2];
  cpu_range(ids, 2, 0);
  dp_data_parallel* dp = make_dp(m, ids, 2, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 4, 2, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_DEVICE_MISMATCH,
               "cpu:3");
  assert_int_equal(rec.calls, 0);
  dp_tensor_release(x);
  dp_tensor_release(buf);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void inputs_are_scattered_even_with_one_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  const dp_device ids[1] = {{DP_DEVICE_CPU, 3}};
  dp_data_parallel* dp = make_dp(m, ids, 1, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 5, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.calls_on[3], 1);
  assert_int_equal(rec.input_dev[3][0], 3);
  assert_int_equal(rec.size0[3][0], 5);
  assert_on_device(y, 3);
  assert_rows_times_w2(y, 5);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void without_inputs_the_module_runs_once_on_device_ids_0(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(1));
  dp_device ids[2];
  cpu_range(ids, 2, 1);
  dp_data_parallel* dp = make_dp(m, ids, 2, NULL, 0, NULL);
  /* A forward with inputs first, to learn which thread is cpu:1's worker. */
  dp_tensor* x = seq_matrix(ctx, 4, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 2);
  const pthread_t cpu1_worker = rec.thread[1];
  dp_tensor_release(y);

  dp_tensor* out[DP_MAX_OUTPUTS] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_forward(dp, NULL, NULL, 0, out, DP_MAX_OUTPUTS, &n));
  assert_int_equal(n, 1);
  assert_int_equal(rec.calls, 3);
  assert_int_equal(rec.calls_on[1], 2);
  assert_int_equal(rec.calls_on[2], 1);
  assert_int_equal(rec.n_inputs[1], 0);
  assert_true(pthread_equal(rec.thread[1], cpu1_worker));
  float got[2];
  read_f32(out[0], got, 2);
  assert_close_f32(got, kW2, 2, 0, 0);
  dp_tensor_release(out[0]);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void one_device_calls_the_module_directly_and_returns_its_output(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_tensor* w = param(m, "w");
  const dp_device ids[1] = {{DP_DEVICE_CPU, 0}};
  dp_data_parallel* dp = make_dp(m, ids, 1, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 3, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.calls_on[0], 1);
  assert_ptr_equal(rec.w_ptr[0], data_of(w));   /* self is the original module */
  assert_ptr_equal(data_of(y), rec.out_ptr[0]); /* its very output, not a gathered copy */
  assert_on_device(y, 0);
  assert_rows_times_w2(y, 3);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_tensor_release(w);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* A batch of one row over four devices makes one chunk: as in PyTorch, the original runs
   alone (replica 0, no copies) and its output is still gathered to output_device, so a
   training loop's labels on output_device meet it there whatever the batch. */
static void one_chunk_over_several_devices_runs_the_original_and_gathers_it(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_tensor* w = param(m, "w");
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.alias_cpu = 0; /* replicas would then have parameters of their own */
  dp_device ids[4];
  cpu_range(ids, 4, 0);
  const dp_device out_dev = cpu_dev(3);
  dp_data_parallel* dp = make_dp(m, ids, 4, &out_dev, 0, &o);
  dp_tensor* x = seq_matrix(ctx, 1, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 1);
  assert_int_equal(rec.calls_on[0], 1);
  assert_ptr_equal(rec.w_ptr[0], data_of(w)); /* self is the original module */
  assert_on_device(y, 3);
  assert_rows_times_w2(y, 1);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_tensor_release(w);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void several_devices_replicate_apply_and_gather(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_device ids[4];
  cpu_range(ids, 4, 0);
  dp_data_parallel* dp = make_dp(m, ids, 4, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  const int64_t rows[4] = {3, 3, 3, 1};
  for (int d = 0; d < 4; ++d) {
    assert_int_equal(rec.calls_on[d], 1);
    assert_int_equal(rec.input_dev[d][0], d);
    assert_int_equal(rec.size0[d][0], rows[d]);
    assert_int_equal(rec.w_dev[d], d);
  }
  assert_shape2(y, 10, 2);
  assert_on_device(y, 0);
  assert_rows_times_w2(y, 10);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* ---------------------------------------------------------------------------------- */
/* Section 4: scatter                                                                 */
/* ---------------------------------------------------------------------------------- */

/* dp_scatter of a [B, 2] tensor over cpu:0..n-1 must give chunks of `want` rows. */
static void check_chunk_table(int32_t context_devices, int64_t batch, int32_t n,
                              const int64_t* want, size_t n_want) {
  dp_context* ctx = make_context(context_devices);
  dp_tensor* x = seq_matrix(ctx, batch, 2, cpu_dev(0));
  dp_device devs[MAXD];
  cpu_range(devs, n, 0);
  dp_tensor* outs[MAXD] = {NULL};
  size_t n_out = 99;
  ASSERT_OK(dp_scatter(x, devs, (size_t)n, NULL, 0, outs, &n_out));
  assert_int_equal(n_out, n_want);
  int64_t row = 0;
  for (size_t i = 0; i < n_out; ++i) {
    assert_shape2(outs[i], want[i], 2);
    assert_on_device(outs[i], (int32_t)i);
    float got[64], exp[64];
    read_f32(outs[i], got, (size_t)(want[i] * 2));
    for (int64_t k = 0; k < want[i] * 2; ++k) exp[k] = seq_value(row * 2 + k);
    assert_close_f32(got, exp, (size_t)(want[i] * 2), 0, 0);
    row += want[i];
    dp_tensor_release(outs[i]);
  }
  for (size_t i = n_out; i < MAXD; ++i) assert_null(outs[i]);
  dp_tensor_release(x);
  dp_context_release(ctx);
}

static void scatter_splits_ten_rows_over_four_devices_as_3_3_3_1(void** state) {
  (void)state;
  const int64_t want[4] = {3, 3, 3, 1};
  check_chunk_table(4, 10, 4, want, 4);
}

static void scatter_splits_nine_rows_over_four_devices_as_3_3_3_on_three_devices(void** state) {
  (void)state;
  const int64_t want[3] = {3, 3, 3};
  check_chunk_table(4, 9, 4, want, 3);
}

static void scatter_splits_six_rows_over_four_devices_as_2_2_2_on_three_devices(void** state) {
  (void)state;
  const int64_t want[3] = {2, 2, 2};
  check_chunk_table(4, 6, 4, want, 3);
}

static void scatter_splits_three_rows_over_four_devices_as_1_1_1_on_three_devices(void** state) {
  (void)state;
  const int64_t want[3] = {1, 1, 1};
  check_chunk_table(4, 3, 4, want, 3);
}

/* The one table row that needs more than 4 devices. */
static void scatter_splits_nine_rows_over_eight_devices_as_2_2_2_2_1_on_five_devices(void** state) {
  (void)state;
  const int64_t want[5] = {2, 2, 2, 2, 1};
  check_chunk_table(8, 9, 8, want, 5);
}

static void scatter_of_zero_rows_gives_one_empty_chunk_per_device(void** state) {
  (void)state;
  const int64_t want[4] = {0, 0, 0, 0};
  check_chunk_table(4, 0, 4, want, 4);
}

static void a_batch_smaller_than_the_device_count_runs_fewer_replicas(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 6, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 3);
  for (int d = 0; d < 3; ++d) assert_int_equal(rec.size0[d][0], 2);
  assert_int_equal(rec.calls_on[3], 0);
  assert_rows_times_w2(y, 6);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void an_empty_batch_runs_one_replica_per_device_and_gathers_zero_rows(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 0, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 4);
  for (int d = 0; d < 4; ++d) assert_int_equal(rec.size0[d][0], 0);
  assert_shape2(y, 0, 2);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void several_inputs_run_as_many_replicas_as_the_fewest_chunks(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* in[2] = {seq_matrix(ctx, 10, 2, cpu_dev(0)), seq_matrix(ctx, 6, 1, cpu_dev(0))};
  dp_tensor* out[DP_MAX_OUTPUTS] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_forward(dp, in, NULL, 2, out, DP_MAX_OUTPUTS, &n));
  assert_int_equal(n, 1);
  /* 10 rows -> 4 chunks (3,3,3,1), 6 rows -> 3 chunks (2,2,2): 3 replicas. */
  assert_int_equal(rec.calls, 3);
  for (int d = 0; d < 3; ++d) {
    assert_int_equal(rec.n_inputs[d], 2);
    assert_int_equal(rec.size0[d][0], 3);
    assert_int_equal(rec.size0[d][1], 2);
    assert_int_equal(rec.input_dev[d][1], d);
    /* The second input's chunk d starts at its row 2d. */
    assert_true(rec.first_values[d][1][0] == seq_value(2 * d));
  }
  assert_int_equal(rec.calls_on[3], 0);
  assert_shape2(out[0], 9, 2);
  dp_tensor_release(out[0]);
  dp_tensor_release(in[0]);
  dp_tensor_release(in[1]);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* One forward of x * s + bias over the four CPU devices, bias and s flagged as broadcast:
   through the wrapper, or through the functional form (functional != 0). */
static void check_broadcast_inputs_reach_every_replica_whole(dp_context* ctx, int functional) {
  recorder rec;
  recorder_init(&rec, FWD_AFFINE);
  dp_module* m = recording_module(ctx, &rec, NULL, 0, cpu_dev(0));
  dp_data_parallel* dp = functional ? NULL : make_dp(m, NULL, 0, NULL, 0, NULL);
  const float bias[2] = {10.0f, -20.0f};
  const int64_t two = 2;
  const float s = 3.0f;
  dp_tensor* in[3] = {seq_matrix(ctx, 8, 2, cpu_dev(0)), make_f32(ctx, bias, &two, 1, cpu_dev(0)),
                      make_f32(ctx, &s, NULL, 0, cpu_dev(0))};
  const int flags[3] = {0, 1, 1};
  dp_tensor* out[DP_MAX_OUTPUTS] = {NULL};
  size_t n = 0;
  if (functional) {
    ASSERT_OK(dp_data_parallel_apply(m, in, flags, 3, NULL, 0, NULL, 0, out, DP_MAX_OUTPUTS, &n));
  } else {
    ASSERT_OK(dp_data_parallel_forward(dp, in, flags, 3, out, DP_MAX_OUTPUTS, &n));
  }
  assert_int_equal(n, 1);
  assert_int_equal(rec.calls, 4);
  for (int d = 0; d < 4; ++d) {
    assert_int_equal(rec.size0[d][0], 2);
    assert_int_equal(rec.ndim[d][1], 1);
    assert_int_equal(rec.size0[d][1], 2);
    assert_int_equal(rec.input_dev[d][1], d);
    assert_true(rec.first_values[d][1][0] == bias[0]);
    assert_true(rec.first_values[d][1][1] == bias[1]);
    assert_int_equal(rec.ndim[d][2], 0);
    assert_int_equal(rec.input_dev[d][2], d);
    assert_true(rec.first_values[d][2][0] == s);
  }
  float got[16], want[16];
  read_f32(out[0], got, 16);
  for (int k = 0; k < 16; ++k) want[k] = seq_value(k) * s + bias[k % 2];
  assert_close_f32(got, want, 16, 0, 0);
  dp_tensor_release(out[0]);
  for (int i = 0; i < 3; ++i) dp_tensor_release(in[i]);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void broadcast_inputs_reach_every_replica_whole(void** state) {
  check_broadcast_inputs_reach_every_replica_whole((dp_context*)*state, 0);
}

static void data_parallel_apply_copies_broadcast_inputs_whole_to_every_replica(void** state) {
  check_broadcast_inputs_reach_every_replica_whole((dp_context*)*state, 1);
}

static void a_0_dim_input_cannot_be_split(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  const float v = 1.0f;
  dp_tensor* s = make_f32(ctx, &v, NULL, 0, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_data_parallel_forward(dp, &s, NULL, 1, out, 1, &n), DP_ERR_SHAPE_MISMATCH,
               "0-dim");
  assert_int_equal(rec.calls, 0);
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_tensor* outs[4] = {NULL};
  ASSERT_ERROR(dp_scatter(s, devs, 4, NULL, 0, outs, &n), DP_ERR_SHAPE_MISMATCH, "0-dim");
  assert_null(outs[0]);
  dp_tensor_release(s);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void chunk_sizes_split_the_batch_with_the_given_weights(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  const int64_t sizes[4] = {1, 2, 3, 4};
  dp_tensor* outs[4] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_scatter(x, devs, 4, sizes, 0, outs, &n));
  assert_int_equal(n, 4);
  int64_t row = 0;
  for (int i = 0; i < 4; ++i) {
    assert_shape2(outs[i], sizes[i], 2);
    assert_on_device(outs[i], i);
    float got[8], want[8];
    read_f32(outs[i], got, (size_t)sizes[i] * 2);
    for (int64_t k = 0; k < sizes[i] * 2; ++k) want[k] = seq_value(row * 2 + k);
    assert_close_f32(got, want, (size_t)sizes[i] * 2, 0, 0);
    row += sizes[i];
    dp_tensor_release(outs[i]);
  }

  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.chunk_sizes = sizes;
  o.n_chunk_sizes = 4;
  dp_data_parallel* dp = make_dp(m, devs, 4, NULL, 0, &o);
  dp_tensor* y = forward1(dp, x);
  for (int d = 0; d < 4; ++d) assert_int_equal(rec.size0[d][0], sizes[d]);
  assert_rows_times_w2(y, 10);
  dp_tensor_release(y);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
  dp_tensor_release(x);
}

static void chunk_sizes_must_sum_to_the_batch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  const int64_t sizes[4] = {3, 3, 3, 2};
  dp_tensor* outs[4] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_scatter(x, devs, 4, sizes, 0, outs, &n), DP_ERR_INVALID_ARGUMENT, "11");
  assert_null(outs[0]);

  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.chunk_sizes = sizes;
  o.n_chunk_sizes = 4;
  dp_data_parallel* dp = make_dp(m, devs, 4, NULL, 0, &o);
  dp_tensor* out[1] = {NULL};
  ASSERT_ERROR(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_INVALID_ARGUMENT,
               "11");
  assert_int_equal(rec.calls, 0);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
  dp_tensor_release(x);
}

static void chunk_sizes_need_one_entry_per_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 2, 2, 1, cpu_dev(0), &m));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  const int64_t sizes[3] = {4, 3, 3};
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.chunk_sizes = sizes;
  o.n_chunk_sizes = 3;
  dp_data_parallel* dp = NULL;
  ASSERT_ERROR(dp_data_parallel_create(m, devs, 4, NULL, 0, &o, &dp), DP_ERR_INVALID_ARGUMENT,
               "chunk_sizes");
  assert_non_null(strstr(dp_last_error(), "3"));
  assert_null(dp);
  dp_module_release(m);
}

static void a_zero_chunk_size_skips_that_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  const int64_t sizes[4] = {4, 0, 3, 3};
  dp_tensor* outs[4] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_scatter(x, devs, 4, sizes, 0, outs, &n));
  assert_int_equal(n, 3);
  const int want_dev[3] = {0, 2, 3};
  const int64_t want_rows[3] = {4, 3, 3};
  for (int i = 0; i < 3; ++i) {
    assert_on_device(outs[i], want_dev[i]);
    assert_shape2(outs[i], want_rows[i], 2);
    dp_tensor_release(outs[i]);
  }

  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.chunk_sizes = sizes;
  o.n_chunk_sizes = 4;
  dp_data_parallel* dp = make_dp(m, devs, 4, NULL, 0, &o);
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 3);
  assert_int_equal(rec.calls_on[1], 0);
  assert_int_equal(rec.size0[0][0], 4);
  assert_int_equal(rec.size0[2][0], 3);
  assert_int_equal(rec.size0[3][0], 3);
  assert_rows_times_w2(y, 10);
  dp_tensor_release(y);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
  dp_tensor_release(x);
}

/* "A zero entry skips that device" holds for device_ids[0] too: the batch then runs on the
   other devices and the gradients still reach the module on device_ids[0]. */
static void a_zero_chunk_size_for_device_ids_0_skips_it_too(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  const int64_t sizes[4] = {0, 4, 3, 3};
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.chunk_sizes = sizes;
  o.n_chunk_sizes = 4;
  dp_data_parallel* dp = make_dp(m, devs, 4, NULL, 0, &o);
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 3);
  assert_int_equal(rec.calls_on[0], 0);
  assert_int_equal(rec.size0[1][0], 4);
  assert_int_equal(rec.size0[2][0], 3);
  assert_int_equal(rec.size0[3][0], 3);
  assert_rows_times_w2(y, 10);
  backward_sum(y);
  dp_tensor* w = param(m, "w");
  float g[2], gwant[2] = {0, 0};
  for (int k = 0; k < 20; ++k) gwant[k % 2] += seq_value(k);
  read_grad(w, g, 2);
  assert_close_f32(g, gwant, 2, 0, 0);
  dp_tensor_release(w);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void scatter_chunks_on_the_source_device_are_views_of_the_input(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(1));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_tensor* outs[4] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_scatter(x, devs, 4, NULL, 0, outs, &n));
  assert_int_equal(n, 4);
  assert_on_device(outs[1], 1);
  /* Chunk 1 (rows 3..5) stays on x's device: x's memory from row 3 on. */
  assert_ptr_equal(data_of(outs[1]), (float*)data_of(x) + 3 * 2);
  float fresh[20];
  for (int k = 0; k < 20; ++k) fresh[k] = 100.0f + (float)k;
  ASSERT_OK(dp_tensor_copy_from_host(x, fresh, sizeof fresh));
  float got[6];
  read_f32(outs[1], got, 6);
  assert_close_f32(got, fresh + 6, 6, 0, 0);
  for (size_t i = 0; i < n; ++i) dp_tensor_release(outs[i]);
  dp_tensor_release(x);
}

static void scatter_along_dim_1_copies_the_chunks(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = seq_matrix(ctx, 2, 8, cpu_dev(0));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_tensor* outs[4] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_scatter(x, devs, 4, NULL, 1, outs, &n));
  assert_int_equal(n, 4);
  const char* base = (const char*)data_of(x);
  for (int i = 0; i < 4; ++i) {
    assert_shape2(outs[i], 2, 2);
    assert_on_device(outs[i], i);
    float got[4];
    read_f32(outs[i], got, 4);
    const float want[4] = {seq_value(2 * i), seq_value(2 * i + 1), seq_value(8 + 2 * i),
                           seq_value(8 + 2 * i + 1)};
    assert_close_f32(got, want, 4, 0, 0);
  }
  /* Even the chunk that stays on cpu:0 is a copy: its memory lies outside x's. */
  const char* c0 = (const char*)data_of(outs[0]);
  assert_true(c0 + 4 * sizeof(float) <= base || c0 >= base + 16 * sizeof(float));
  for (int i = 0; i < 4; ++i) dp_tensor_release(outs[i]);
  dp_tensor_release(x);
}

/* Backward through a scatter: x's gradient gathers the chunks' gradients back, and a
   chunk nobody used contributes zeros (here the chunks on cpu:0 and cpu:2). */
static void scatter_backward_gives_the_rows_of_an_unused_chunk_zero_gradient(void** state) {
  dp_context* ctx = (dp_context*)*state;
  for (int32_t dim = 0; dim < 2; ++dim) {
    dp_tensor* x = dim == 0 ? seq_matrix(ctx, 6, 2, cpu_dev(0)) : seq_matrix(ctx, 2, 6, cpu_dev(0));
    ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
    dp_device devs[3];
    cpu_range(devs, 3, 0);
    dp_tensor* outs[3] = {NULL};
    size_t n = 0;
    ASSERT_OK(dp_scatter(x, devs, 3, NULL, dim, outs, &n));
    assert_int_equal(n, 3);
    backward_sum(outs[1]); /* only chunk 1 (on cpu:1) reaches the loss */
    float got[12];
    read_grad(x, got, 12);
    for (int64_t r = 0; r < (dim == 0 ? 6 : 2); ++r) {
      for (int64_t c = 0; c < (dim == 0 ? 2 : 6); ++c) {
        const int64_t along = dim == 0 ? r : c; /* the index that was split, 2 per chunk */
        const float want = along / 2 == 1 ? 1.0f : 0.0f;
        const int64_t k = r * (dim == 0 ? 2 : 6) + c;
        if (got[k] != want)
          fail_msg("dim %d: grad[%lld] = %g, want %g", dim, (long long)k, got[k], want);
      }
    }
    for (size_t i = 0; i < n; ++i) dp_tensor_release(outs[i]);
    dp_tensor_release(x);
  }
}

/* ---------------------------------------------------------------------------------- */
/* Section 5: replicate                                                               */
/* ---------------------------------------------------------------------------------- */

static void replica_0_is_the_original_module(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 4, 3, 1, cpu_dev(0), &m));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_module* reps[4] = {NULL};
  ASSERT_OK(dp_replicate(m, devs, 4, reps));
  const char* names[2] = {"weight", "bias"};
  for (int i = 0; i < 2; ++i) {
    dp_tensor* mine = param(m, names[i]);
    dp_tensor* r0 = param(reps[0], names[i]);
    assert_ptr_equal(data_of(r0), data_of(mine));
    dp_tensor_release(mine);
    dp_tensor_release(r0);
  }
  for (int r = 0; r < 4; ++r) dp_module_release(reps[r]);
  dp_module_release(m);
}

static void other_replicas_hold_the_parameters_on_their_devices_as_non_leaves(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 4, 3, 1, cpu_dev(0), &m));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_module* reps[4] = {NULL};
  ASSERT_OK(dp_replicate(m, devs, 4, reps));
  dp_tensor* w = param(m, "weight");
  float want[12];
  read_f32(w, want, 12);
  for (int r = 1; r < 4; ++r) {
    dp_tensor* rw = param(reps[r], "weight");
    assert_on_device(rw, r);
    float got[12];
    read_f32(rw, got, 12);
    assert_close_f32(got, want, 12, 0, 0);
    int rg = 0;
    ASSERT_OK(dp_tensor_requires_grad(rw, &rg));
    assert_int_equal(rg, 1);
    /* Not a leaf: its requirement follows the original's through the broadcast. */
    ASSERT_ERROR(dp_tensor_set_requires_grad(rw, 0), DP_ERR_STATE, "");
    dp_tensor_release(rw);
  }
  dp_tensor_release(w);
  for (int r = 0; r < 4; ++r) dp_module_release(reps[r]);
  dp_module_release(m);
}

static void replica_buffers_are_detached_copies(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* bn = NULL;
  ASSERT_OK(dp_module_batchnorm1d(ctx, 2, 1e-5, 0.1, cpu_dev(0), &bn));
  const float start[2] = {0.25f, -0.5f};
  dp_tensor* mean = param(bn, "running_mean");
  ASSERT_OK(dp_tensor_copy_from_host(mean, start, sizeof start));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_module* reps[4] = {NULL};
  ASSERT_OK(dp_replicate(bn, devs, 4, reps));
  for (int r = 1; r < 4; ++r) {
    dp_tensor* rm = param(reps[r], "running_mean");
    assert_on_device(rm, r);
    assert_ptr_not_equal(data_of(rm), data_of(mean));
    float got[2];
    read_f32(rm, got, 2);
    assert_close_f32(got, start, 2, 0, 0);
    int rg = 1;
    ASSERT_OK(dp_tensor_requires_grad(rm, &rg));
    assert_int_equal(rg, 0);
    /* A write to the copy does not reach the original. */
    const float other[2] = {9.0f, 9.0f};
    ASSERT_OK(dp_tensor_copy_from_host(rm, other, sizeof other));
    read_f32(mean, got, 2);
    assert_close_f32(got, start, 2, 0, 0);
    dp_tensor_release(rm);
  }
  dp_tensor_release(mean);
  for (int r = 0; r < 4; ++r) dp_module_release(reps[r]);
  dp_module_release(bn);
}

/* The batch [8, 2] as 4 chunks of 2 rows: per-chunk mean and unbiased variance. */
static void chunk_stats(int chunk, int c, double* mean, double* var) {
  const double a = seq_value(chunk * 4 + c), b = seq_value(chunk * 4 + 2 + c);
  *mean = (a + b) / 2;
  *var = (a - b) * (a - b) / 2; /* unbiased, n = 2 */
}

/* BatchNorm1d(2) over cpu:0..3 on `rows` rows of seq_matrix, split by `sizes` (NULL: the
   default 2 rows per device); the original's running statistics and batch count after
   one forward. */
static void run_batchnorm_split(dp_context* ctx, dp_buffer_sync sync, int64_t rows,
                                const int64_t* sizes, float* mean, float* var, int64_t* batches) {
  dp_module* bn = NULL;
  ASSERT_OK(dp_module_batchnorm1d(ctx, 2, 1e-5, 0.1, cpu_dev(0), &bn));
  ASSERT_OK(dp_module_train(bn, 1));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.buffer_sync = sync;
  o.chunk_sizes = sizes;
  o.n_chunk_sizes = sizes ? 4 : 0;
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_data_parallel* dp = make_dp(bn, devs, 4, NULL, 0, &o);
  dp_tensor* x = seq_matrix(ctx, rows, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  dp_tensor* rm = param(bn, "running_mean");
  dp_tensor* rv = param(bn, "running_var");
  dp_tensor* nb = param(bn, "num_batches_tracked");
  read_f32(rm, mean, 2);
  read_f32(rv, var, 2);
  ASSERT_OK(dp_tensor_to_host(nb, batches, sizeof *batches));
  dp_tensor_release(rm);
  dp_tensor_release(rv);
  dp_tensor_release(nb);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(bn);
}

static void run_batchnorm_over_four_devices(dp_context* ctx, dp_buffer_sync sync, float* mean,
                                            float* var) {
  int64_t batches = 0;
  run_batchnorm_split(ctx, sync, 8, NULL, mean, var, &batches);
  assert_int_equal(batches, 1);
}

static void batchnorm_statistics_keep_replica_0s_update_only(void** state) {
  dp_context* ctx = (dp_context*)*state;
  float mean[2], var[2], want_mean[2], want_var[2];
  run_batchnorm_over_four_devices(ctx, DP_BUFFER_SYNC_NONE, mean, var);
  for (int c = 0; c < 2; ++c) {
    double m, v;
    chunk_stats(0, c, &m, &v);
    want_mean[c] = (float)(0.1 * m);
    want_var[c] = (float)(0.9 * 1.0 + 0.1 * v);
  }
  assert_close_f32(mean, want_mean, 2, 1e-6, 1e-6);
  assert_close_f32(var, want_var, 2, 1e-6, 1e-6);
}

/* Running statistics that are the mean of the updates (momentum 0.1, from mean 0 and
   variance 1) of chunks 0 .. n-1. */
static void assert_mean_of_chunk_updates(const float* mean, const float* var, int n) {
  float want_mean[2], want_var[2];
  for (int c = 0; c < 2; ++c) {
    double sm = 0, sv = 0;
    for (int r = 0; r < n; ++r) {
      double m, v;
      chunk_stats(r, c, &m, &v);
      sm += 0.1 * m;
      sv += 0.9 * 1.0 + 0.1 * v;
    }
    want_mean[c] = (float)(sm / n);
    want_var[c] = (float)(sv / n);
  }
  assert_close_f32(mean, want_mean, 2, 1e-6, 1e-6);
  assert_close_f32(var, want_var, 2, 1e-6, 1e-6);
}

static void buffer_sync_average_gives_the_mean_of_every_replicas_update(void** state) {
  dp_context* ctx = (dp_context*)*state;
  float mean[2], var[2];
  run_batchnorm_over_four_devices(ctx, DP_BUFFER_SYNC_AVERAGE, mean, var);
  assert_mean_of_chunk_updates(mean, var, 4);
}

/* chunk_sizes {0, 2, 2, 2}: the original (replica 0) does not run, so the mean is over the
   three replicas that did; its own unchanged statistics must not dilute it, and its batch
   count is theirs. */
static void buffer_sync_average_skips_a_device_ids_0_that_got_no_rows(void** state) {
  dp_context* ctx = (dp_context*)*state;
  float mean[2], var[2];
  const int64_t sizes[4] = {0, 2, 2, 2};
  int64_t batches = 0;
  run_batchnorm_split(ctx, DP_BUFFER_SYNC_AVERAGE, 6, sizes, mean, var, &batches);
  assert_mean_of_chunk_updates(mean, var, 3);
  assert_int_equal(batches, 1);
}

static void parameter_gradient_is_the_sum_over_replicas_on_device_ids_0(void** state) {
  dp_context* ctx = (dp_context*)*state;
  for (int alias = 0; alias <= 1; ++alias) {
    recorder rec;
    recorder_init(&rec, FWD_MUL_W);
    dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
    dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
    o.alias_cpu = alias;
    dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, &o);
    dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
    dp_tensor* y = forward1(dp, x);
    assert_int_equal(rec.calls, 4);
    backward_sum(y);
    /* d sum(x * w) / dw[c] = sum over all 8 rows of x[:, c]: the 4 replicas' sums added. */
    float want[2] = {0, 0};
    for (int k = 0; k < 16; ++k) want[k % 2] += seq_value(k);
    dp_tensor* w = param(m, "w");
    dp_tensor* g = NULL;
    ASSERT_OK(dp_tensor_grad(w, &g));
    assert_non_null(g);
    assert_on_device(g, 0);
    float got[2];
    read_f32(g, got, 2);
    assert_close_f32(got, want, 2, 0, 0);
    dp_tensor_release(g);
    dp_tensor_release(w);
    dp_tensor_release(y);
    dp_tensor_release(x);
    dp_data_parallel_release(dp);
    dp_module_release(m);
    recorder_destroy(&rec);
  }
}

/* A parameter is a leaf: the result of an op recorded for backward is refused when it is
   registered, naming it, instead of later by the optimizer ("params[0] is not a leaf"). */
static void a_parameter_that_is_not_a_leaf_is_refused_when_registered(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, NULL, 0, cpu_dev(0));
  const float v[2] = {1.0f, 2.0f};
  const int64_t two = 2;
  dp_tensor* leaf = make_f32(ctx, v, &two, 1, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(leaf, 1));
  dp_tensor* scaled = NULL;
  ASSERT_OK(dp_op_scale(leaf, 2.0, &scaled));
  ASSERT_ERROR(dp_module_register_parameter(m, "nl", scaled), DP_ERR_INVALID_ARGUMENT,
               "parameter \"nl\" must be a leaf tensor");
  size_t n = 9;
  ASSERT_OK(dp_module_parameter_count(m, &n));
  assert_int_equal(n, 0);
  ASSERT_OK(dp_module_register_parameter(m, "w", leaf)); /* the leaf itself is fine */
  dp_tensor_release(scaled);
  dp_tensor_release(leaf);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* A NULL output array (with a capacity) is refused before anything runs: the module's
   forward never sees the batch, in the wrapper and the functional form alike. */
static void a_null_output_array_is_refused_before_the_forward_runs(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  size_t n = 7;
  assert_int_equal(dp_data_parallel_forward(dp, &x, NULL, 1, NULL, 4, &n), DP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(dp_last_error(), "outputs is NULL but capacity = 4"));
  assert_int_equal(dp_data_parallel_apply(m, &x, NULL, 1, NULL, 0, NULL, 0, NULL, 4, &n),
                   DP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rec.calls, 0);
  uint64_t calls = 99;
  ASSERT_OK(dp_data_parallel_stats(dp, NULL, NULL, &calls));
  assert_int_equal(calls, 0);
  assert_int_equal(n, 7); /* untouched */
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* Over two devices, with 8 rows (two replicas) and with 1 row (one chunk: the original
   runs alone, where PyTorch runs a broadcast copy whose backward gives the zeros). */
static void a_parameter_no_replica_uses_gets_a_zero_gradient(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t rows[2] = {8, 1};
  for (int i = 0; i < 2; ++i) {
    recorder rec;
    recorder_init(&rec, FWD_MUL_W);
    dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
    const float u[3] = {1.0f, 2.0f, 3.0f};
    const int64_t three = 3;
    dp_tensor* unused = make_f32(ctx, u, &three, 1, cpu_dev(0));
    ASSERT_OK(dp_module_register_parameter(m, "unused", unused));
    dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
    dp_tensor* x = seq_matrix(ctx, rows[i], 2, cpu_dev(0));
    dp_tensor* y = forward1(dp, x);
    backward_sum(y);
    float got[3];
    read_grad(unused, got, 3);
    const float zeros[3] = {0, 0, 0};
    assert_close_f32(got, zeros, 3, 0, 0);
    dp_tensor_release(unused);
    dp_tensor_release(y);
    dp_tensor_release(x);
    dp_data_parallel_release(dp);
    dp_module_release(m);
    recorder_destroy(&rec);
  }
}

static void tied_weights_stay_tied_in_every_replica(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_TIED);
  dp_module* m = custom(ctx, NULL, recording_forward, &rec);
  const int64_t two = 2;
  dp_tensor* t = make_f32(ctx, kW2, &two, 1, cpu_dev(0));
  ASSERT_OK(dp_module_register_parameter(m, "a", t));
  ASSERT_OK(dp_module_register_parameter(m, "b", t));
  rec.has_w = 1;
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.alias_cpu = 0; /* real copies, so that "tied" is not just "everyone aliases the original" */
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, &o);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 4);
  for (int d = 0; d < 4; ++d) {
    assert_non_null(rec.w_ptr[d]);
    assert_ptr_equal(rec.w_ptr[d], rec.b_ptr[d]);
    if (d > 0) assert_ptr_not_equal(rec.w_ptr[d], data_of(t));
  }
  assert_ptr_equal(rec.w_ptr[0], data_of(t));
  float got[16], want[16];
  read_f32(y, got, 16);
  for (int k = 0; k < 16; ++k) want[k] = 2.0f * seq_value(k) * kW2[k % 2];
  assert_close_f32(got, want, 16, 0, 0);
  backward_sum(y);
  float g[2], gwant[2] = {0, 0};
  for (int k = 0; k < 16; ++k) gwant[k % 2] += 2.0f * seq_value(k);
  read_grad(t, g, 2);
  assert_close_f32(g, gwant, 2, 0, 0);
  dp_tensor_release(t);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* Replicas get the original's values whether every tensor has its own bucket or all share
   one (the coalescing itself, one transfer per bucket, is not observable on CPU). */
static void replicas_see_the_original_parameters_whatever_the_bucket_size(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const size_t buckets[3] = {4, 64, 0};
  for (int b = 0; b < 3; ++b) {
    dp_module* m = NULL;
    ASSERT_OK(dp_module_linear(ctx, 3, 2, 1, cpu_dev(0), &m));
    float w[6], bias[2];
    dp_tensor* tw = param(m, "weight");
    dp_tensor* tb = param(m, "bias");
    read_f32(tw, w, 6);
    read_f32(tb, bias, 2);
    dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
    o.alias_cpu = 0;
    o.bucket_bytes = buckets[b];
    dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, &o);
    dp_tensor* x = seq_matrix(ctx, 8, 3, cpu_dev(0));
    dp_tensor* y = forward1(dp, x);
    float got[16], want[16];
    read_f32(y, got, 16);
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 2; ++j) {
        double acc = bias[j];
        for (int k = 0; k < 3; ++k) acc += (double)seq_value(i * 3 + k) * w[j * 3 + k];
        want[i * 2 + j] = (float)acc;
      }
    }
    assert_close_f32(got, want, 16, 1e-5, 1e-5);
    dp_tensor_release(tw);
    dp_tensor_release(tb);
    dp_tensor_release(y);
    dp_tensor_release(x);
    dp_data_parallel_release(dp);
    dp_module_release(m);
  }
}

static void cached_replicas_are_reused_until_a_parameter_changes(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.cache_replicas = 1;
  o.alias_cpu = 0; /* with aliases even stale replicas would see new values */
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, &o);
  const int prev = dp_set_grad_enabled(0);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  dp_phase_times last;

  dp_tensor* y = forward1(dp, x);
  ASSERT_OK(dp_data_parallel_stats(dp, &last, NULL, NULL));
  assert_true(last.replicate > 0);
  void* replica1_w = rec.w_ptr[1];
  dp_tensor_release(y);

  y = forward1(dp, x);
  ASSERT_OK(dp_data_parallel_stats(dp, &last, NULL, NULL));
  assert_true(last.replicate == 0.0);
  assert_ptr_equal(rec.w_ptr[1], replica1_w);
  assert_rows_times_w2(y, 8);
  dp_tensor_release(y);

  const float w2[2] = {-1.0f, 4.0f};
  dp_tensor* w = param(m, "w");
  ASSERT_OK(dp_tensor_copy_from_host(w, w2, sizeof w2));
  y = forward1(dp, x);
  ASSERT_OK(dp_data_parallel_stats(dp, &last, NULL, NULL));
  assert_true(last.replicate > 0);
  float got[16], want[16];
  read_f32(y, got, 16);
  for (int k = 0; k < 16; ++k) want[k] = seq_value(k) * w2[k % 2];
  assert_close_f32(got, want, 16, 0, 0);
  dp_tensor_release(y);

  dp_set_grad_enabled(prev);
  dp_tensor_release(w);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void replicas_are_not_cached_while_grad_mode_is_on(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.cache_replicas = 1;
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, &o);
  assert_true(dp_is_grad_enabled());
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  for (int i = 0; i < 2; ++i) {
    dp_tensor* y = forward1(dp, x);
    dp_phase_times last;
    ASSERT_OK(dp_data_parallel_stats(dp, &last, NULL, NULL));
    assert_true(last.replicate > 0);
    dp_tensor_release(y);
  }
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* ---------------------------------------------------------------------------------- */
/* Section 6: parallel_apply                                                          */
/* ---------------------------------------------------------------------------------- */

static void parallel_apply_rejects_inputs_that_do_not_match_the_replicas(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_device devs[2];
  cpu_range(devs, 2, 0);
  dp_module* reps[2] = {NULL};
  ASSERT_OK(dp_replicate(m, devs, 2, reps));
  dp_tensor* outs[2] = {NULL};
  /* The C API takes n replicas and n devices, so only the inputs can fall short. */
  ASSERT_ERROR(dp_parallel_apply(reps, 2, NULL, 1, devs, outs), DP_ERR_INVALID_ARGUMENT, "inputs");
  ASSERT_ERROR(dp_parallel_apply(reps, 0, NULL, 0, devs, outs), DP_ERR_INVALID_ARGUMENT,
               "replicas");
  assert_null(outs[0]);
  assert_int_equal(rec.calls, 0);
  for (int r = 0; r < 2; ++r) dp_module_release(reps[r]);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void each_device_has_one_persistent_worker(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  pthread_t first[4];
  for (int call = 0; call < 3; ++call) {
    dp_tensor* y = forward1(dp, x);
    for (int d = 0; d < 4; ++d) {
      assert_false(pthread_equal(rec.thread[d], pthread_self()));
      for (int e = 0; e < d; ++e) assert_false(pthread_equal(rec.thread[d], rec.thread[e]));
      if (call == 0) first[d] = rec.thread[d];
      assert_true(pthread_equal(rec.thread[d], first[d]));
    }
    dp_tensor_release(y);
  }
  /* The stage on its own uses the same workers. */
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_module* reps[4] = {NULL};
  dp_tensor* chunks[4] = {NULL};
  dp_tensor* outs[4] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_replicate(m, devs, 4, reps));
  ASSERT_OK(dp_scatter(x, devs, 4, NULL, 0, chunks, &n));
  ASSERT_OK(dp_parallel_apply(reps, 4, chunks, 1, devs, outs));
  for (int d = 0; d < 4; ++d) {
    assert_true(pthread_equal(rec.thread[d], first[d]));
    dp_tensor_release(outs[d]);
    dp_tensor_release(chunks[d]);
    dp_module_release(reps[d]);
  }
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void the_callers_grad_mode_holds_in_every_replica(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  const int modes[3] = {0, 1, 0};
  for (int i = 0; i < 3; ++i) {
    const int prev = dp_set_grad_enabled(modes[i]);
    for (int d = 0; d < 4; ++d) rec.grad_enabled[d] = -1;
    dp_tensor* y = forward1(dp, x);
    for (int d = 0; d < 4; ++d) assert_int_equal(rec.grad_enabled[d], modes[i]);
    int rg = -1;
    ASSERT_OK(dp_tensor_requires_grad(y, &rg));
    assert_int_equal(rg, modes[i]);
    dp_tensor_release(y);
    dp_set_grad_enabled(prev);
  }
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void replica_error_names_lowest_failing_replica_and_its_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  rec.fail_mask = (1u << 1) | (1u << 2);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_CALLBACK,
               "replica failed on purpose on cpu:1");
  const char* prefix = "in replica 1 on device cpu:1: ";
  if (strncmp(dp_last_error(), prefix, strlen(prefix)) != 0)
    fail_msg("message \"%s\" does not start with \"%s\"", dp_last_error(), prefix);
  assert_null(strstr(dp_last_error(), "in replica 2"));
  assert_null(out[0]);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* Chunk sizes that give device_ids[0] no rows leave replica 0 (the original) out of the
   run: the replica on device_ids[2] is still replica 2 in the message. */
static void a_replica_error_keeps_its_number_when_chunk_sizes_skip_the_first_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  rec.fail_mask = 1u << 2;
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  const int64_t sizes[3] = {0, 2, 2};
  o.chunk_sizes = sizes;
  o.n_chunk_sizes = 3;
  dp_device ids[3];
  cpu_range(ids, 3, 0);
  dp_data_parallel* dp = make_dp(m, ids, 3, NULL, 0, &o);
  dp_tensor* x = seq_matrix(ctx, 4, 2, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_CALLBACK,
               "in replica 2 on device cpu:2: ");
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void every_replica_still_runs_when_some_fail(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  rec.fail_mask = (1u << 1) | (1u << 2);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  assert_int_equal(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_CALLBACK);
  assert_int_equal(rec.calls, 4);
  for (int d = 0; d < 4; ++d) assert_int_equal(rec.calls_on[d], 1);
  /* The stage on its own reports its lowest failing replica the same way. */
  rec.fail_mask = (1u << 2) | (1u << 3);
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_module* reps[4] = {NULL};
  dp_tensor* chunks[4] = {NULL};
  dp_tensor* outs[4] = {NULL};
  ASSERT_OK(dp_replicate(m, devs, 4, reps));
  ASSERT_OK(dp_scatter(x, devs, 4, NULL, 0, chunks, &n));
  ASSERT_ERROR(dp_parallel_apply(reps, 4, chunks, 1, devs, outs), DP_ERR_CALLBACK,
               "in replica 2 on device cpu:2: ");
  assert_int_equal(rec.calls, 8);
  for (int d = 0; d < 4; ++d) {
    assert_null(outs[d]);
    dp_tensor_release(chunks[d]);
    dp_module_release(reps[d]);
  }
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void the_wrapper_stays_usable_after_a_replica_fails(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  rec.fail_mask = 1u << 3;
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_CALLBACK,
               "in replica 3 on device cpu:3: ");
  rec.fail_mask = 0;
  dp_tensor* y = forward1(dp, x);
  assert_rows_times_w2(y, 8);
  backward_sum(y);
  dp_tensor* w = param(m, "w");
  float g[2], gwant[2] = {0, 0};
  for (int k = 0; k < 16; ++k) gwant[k % 2] += seq_value(k);
  read_grad(w, g, 2);
  assert_close_f32(g, gwant, 2, 0, 0);
  dp_tensor_release(w);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* ---------------------------------------------------------------------------------- */
/* Section 7: gather                                                                  */
/* ---------------------------------------------------------------------------------- */

static void outputs_are_concatenated_onto_the_output_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  const dp_device out_dev = {DP_DEVICE_CPU, 2};
  dp_data_parallel* dp = make_dp(m, NULL, 0, &out_dev, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_on_device(y, 2);
  assert_shape2(y, 10, 2);
  assert_rows_times_w2(y, 10);
  dp_tensor_release(y);

  /* The stage on its own, along dim 1, from three devices. */
  dp_tensor* parts[3] = {seq_matrix(ctx, 2, 1, cpu_dev(0)), seq_matrix(ctx, 2, 3, cpu_dev(1)),
                         seq_matrix(ctx, 2, 2, cpu_dev(3))};
  dp_tensor* g = NULL;
  ASSERT_OK(dp_gather(parts, 3, cpu_dev(2), 1, &g));
  assert_on_device(g, 2);
  assert_shape2(g, 2, 6);
  float gv[12];
  read_f32(g, gv, 12);
  const int cols[3] = {1, 3, 2};
  int at = 0;
  for (int i = 0; i < 2; ++i) {
    for (int p = 0; p < 3; ++p) {
      for (int c = 0; c < cols[p]; ++c) {
        assert_true(gv[at] == seq_value(i * cols[p] + c));
        ++at;
      }
    }
  }
  dp_tensor_release(g);
  for (int p = 0; p < 3; ++p) dp_tensor_release(parts[p]);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void the_wrapper_splits_and_gathers_along_dim_1(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_SCALE_BY_DEVICE);
  dp_module* m = recording_module(ctx, &rec, NULL, 0, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 1, NULL);
  dp_tensor* x = seq_matrix(ctx, 2, 8, cpu_dev(0));
  dp_tensor* y = forward1(dp, x);
  assert_int_equal(rec.calls, 4);
  for (int d = 0; d < 4; ++d) {
    assert_int_equal(rec.size0[d][0], 2);
    assert_int_equal(rec.size1[d][0], 2);
  }
  assert_shape2(y, 2, 8);
  float got[16], want[16];
  read_f32(y, got, 16);
  for (int k = 0; k < 16; ++k) want[k] = seq_value(k) * (float)((k % 8) / 2 + 1);
  assert_close_f32(got, want, 16, 0, 0);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void gather_rejects_outputs_of_different_shapes_naming_the_replica(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* a = seq_matrix(ctx, 2, 3, cpu_dev(0));
  dp_tensor* b = seq_matrix(ctx, 2, 4, cpu_dev(1));
  dp_tensor* parts[2] = {a, b};
  dp_tensor* g = NULL;
  ASSERT_ERROR(dp_gather(parts, 2, cpu_dev(0), 0, &g), DP_ERR_SHAPE_MISMATCH, "replica 1");
  assert_non_null(strstr(dp_last_error(), "[2, 4]"));
  assert_non_null(strstr(dp_last_error(), "[2, 3]"));
  assert_null(g);
  /* Another rank. */
  const int64_t six = 6;
  const float v[6] = {0};
  dp_tensor* c = make_f32(ctx, v, &six, 1, cpu_dev(1));
  parts[1] = c;
  ASSERT_ERROR(dp_gather(parts, 2, cpu_dev(0), 0, &g), DP_ERR_SHAPE_MISMATCH, "replica 1");
  assert_non_null(strstr(dp_last_error(), "[6]"));

  /* Through the wrapper: the replica on cpu:2 returns [2, 1] where the others return [2, 2]. */
  recorder rec;
  recorder_init(&rec, FWD_RAGGED);
  dp_module* m = recording_module(ctx, &rec, NULL, 0, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  dp_tensor* out[1] = {NULL};
  size_t n = 0;
  ASSERT_ERROR(dp_data_parallel_forward(dp, &x, NULL, 1, out, 1, &n), DP_ERR_SHAPE_MISMATCH,
               "replica 2");
  assert_non_null(strstr(dp_last_error(), "[2, 1]"));
  assert_non_null(strstr(dp_last_error(), "[2, 2]"));
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
  dp_tensor_release(a);
  dp_tensor_release(b);
  dp_tensor_release(c);
}

typedef struct log_capture {
  pthread_mutex_t mu;
  int warnings;
  char last[512];
} log_capture;

static void capture_log(void* user_data, dp_log_level level, const char* message) {
  log_capture* cap = (log_capture*)user_data;
  pthread_mutex_lock(&cap->mu);
  if (level == DP_LOG_WARNING) {
    cap->warnings++;
    snprintf(cap->last, sizeof cap->last, "%s", message);
  }
  pthread_mutex_unlock(&cap->mu);
}

static void scalar_outputs_gather_into_a_vector_with_a_warning(void** state) {
  (void)state;
  log_capture cap;
  memset(&cap, 0, sizeof cap);
  pthread_mutex_init(&cap.mu, NULL);
  dp_context_options co = DP_CONTEXT_OPTIONS_INIT;
  co.cpu_devices = 4;
  co.load_cuda = 0;
  co.log_fn = capture_log;
  co.log_user_data = &cap;
  dp_context* ctx = NULL;
  ASSERT_OK(dp_context_create(&co, &ctx));
  recorder rec;
  recorder_init(&rec, FWD_SUM);
  dp_module* m = recording_module(ctx, &rec, NULL, 0, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 8, 2, cpu_dev(0));
  assert_int_equal(cap.warnings, 0);
  dp_tensor* y = forward1(dp, x);
  size_t nd = 9;
  int64_t len = 0;
  ASSERT_OK(dp_tensor_ndim(y, &nd));
  assert_int_equal(nd, 1);
  ASSERT_OK(dp_tensor_dim(y, 0, &len));
  assert_int_equal(len, 4);
  float got[4], want[4] = {0, 0, 0, 0};
  for (int k = 0; k < 16; ++k) want[k / 4] += seq_value(k);
  read_f32(y, got, 4);
  assert_close_f32(got, want, 4, 0, 0);
  assert_int_equal(cap.warnings, 1);
  assert_non_null(strstr(cap.last, "scalar"));
  dp_tensor_release(y);
  dp_tensor_release(x);
  /* One row makes one chunk: its scalar is gathered too, into a vector of one value. */
  x = seq_matrix(ctx, 1, 2, cpu_dev(0));
  y = forward1(dp, x);
  ASSERT_OK(dp_tensor_ndim(y, &nd));
  assert_int_equal(nd, 1);
  ASSERT_OK(dp_tensor_dim(y, 0, &len));
  assert_int_equal(len, 1);
  read_f32(y, got, 1);
  assert_true(got[0] == seq_value(0) + seq_value(1));
  assert_int_equal(cap.warnings, 2);
  assert_non_null(strstr(cap.last, "a vector of 1 values"));
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
  dp_context_release(ctx);
  pthread_mutex_destroy(&cap.mu);
}

static void gather_backward_splits_the_gradient_with_the_forward_sizes(void** state) {
  dp_context* ctx = (dp_context*)*state;
  /* Through the wrapper: y = x * (device + 1), 10 rows over 4 devices as 3, 3, 3, 1. */
  recorder rec;
  recorder_init(&rec, FWD_SCALE_BY_DEVICE);
  dp_module* m = recording_module(ctx, &rec, NULL, 0, cpu_dev(0));
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  dp_tensor* y = forward1(dp, x);
  const int64_t shape[2] = {10, 2};
  float gv[20];
  for (int k = 0; k < 20; ++k) gv[k] = (float)(k + 1);
  dp_tensor* g = make_f32(ctx, gv, shape, 2, cpu_dev(0));
  ASSERT_OK(dp_backward(y, g, 0));
  float got[20], want[20];
  read_grad(x, got, 20);
  const int device_of_row[10] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
  for (int k = 0; k < 20; ++k) want[k] = gv[k] * (float)(device_of_row[k / 2] + 1);
  assert_close_f32(got, want, 20, 0, 0);
  dp_tensor_release(g);
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);

  /* The stage on its own: each leaf gets its rows of the gradient, on its own device. */
  const int64_t rows[4] = {3, 3, 3, 1};
  dp_tensor* leaves[4];
  for (int d = 0; d < 4; ++d) {
    leaves[d] = seq_matrix(ctx, rows[d], 2, cpu_dev(d));
    ASSERT_OK(dp_tensor_set_requires_grad(leaves[d], 1));
  }
  dp_tensor* out = NULL;
  ASSERT_OK(dp_gather(leaves, 4, cpu_dev(2), 0, &out));
  dp_tensor* g2 = make_f32(ctx, gv, shape, 2, cpu_dev(2));
  ASSERT_OK(dp_backward(out, g2, 0));
  int row = 0;
  for (int d = 0; d < 4; ++d) {
    dp_tensor* lg = NULL;
    ASSERT_OK(dp_tensor_grad(leaves[d], &lg));
    assert_non_null(lg);
    assert_on_device(lg, d);
    assert_shape2(lg, rows[d], 2);
    float lv[6];
    read_f32(lg, lv, (size_t)rows[d] * 2);
    assert_close_f32(lv, gv + row * 2, (size_t)rows[d] * 2, 0, 0);
    row += (int)rows[d];
    dp_tensor_release(lg);
    dp_tensor_release(leaves[d]);
  }
  dp_tensor_release(g2);
  dp_tensor_release(out);
}

static void no_gather_returns_each_replicas_output_on_its_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.no_gather = 1;
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, &o);
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_tensor* out[DP_MAX_OUTPUTS] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_forward(dp, &x, NULL, 1, out, DP_MAX_OUTPUTS, &n));
  assert_int_equal(n, 4);
  const int64_t rows[4] = {3, 3, 3, 1};
  int64_t row = 0;
  for (int d = 0; d < 4; ++d) {
    assert_on_device(out[d], d);
    assert_shape2(out[d], rows[d], 2);
    assert_ptr_equal(data_of(out[d]), rec.out_ptr[d]);
    float got[6], want[6];
    read_f32(out[d], got, (size_t)rows[d] * 2);
    for (int64_t k = 0; k < rows[d] * 2; ++k) want[k] = seq_value(row * 2 + k) * kW2[k % 2];
    assert_close_f32(got, want, (size_t)rows[d] * 2, 0, 0);
    row += rows[d];
  }
  /* Per-device losses, summed: the gradient is still the sum over replicas. */
  dp_tensor* loss = NULL;
  for (int d = 0; d < 4; ++d) {
    dp_tensor* s = NULL;
    ASSERT_OK(dp_op_sum(out[d], &s));
    dp_tensor* s0 = NULL;
    ASSERT_OK(dp_tensor_to_device(s, cpu_dev(0), &s0));
    if (loss == NULL) {
      loss = s0;
    } else {
      dp_tensor* t = NULL;
      ASSERT_OK(dp_op_add(loss, s0, &t));
      dp_tensor_release(loss);
      dp_tensor_release(s0);
      loss = t;
    }
    dp_tensor_release(s);
  }
  ASSERT_OK(dp_backward(loss, NULL, 0));
  dp_tensor* w = param(m, "w");
  float g[2], gwant[2] = {0, 0};
  for (int k = 0; k < 20; ++k) gwant[k % 2] += seq_value(k);
  read_grad(w, g, 2);
  assert_close_f32(g, gwant, 2, 0, 0);
  /* Nothing was gathered, and without a gather the wrapper cannot see where backward
     began (documented): only the reduce is timed after the forward's phases. */
  dp_phase_times last;
  ASSERT_OK(dp_data_parallel_stats(dp, &last, NULL, NULL));
  assert_true(last.scatter > 0 && last.replicate > 0 && last.apply > 0 && last.reduce > 0);
  assert_true(last.gather == 0 && last.backward == 0);
  dp_tensor_release(w);
  dp_tensor_release(loss);
  for (size_t i = 0; i < n; ++i) dp_tensor_release(out[i]);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* ---------------------------------------------------------------------------------- */
/* Section 8: the functional form and the stages                                      */
/* ---------------------------------------------------------------------------------- */

/* y = x @ W^T + b of a Linear(3, 2) on [rows, 3] seq inputs, from its read-back weights. */
static void linear_reference(const dp_module* m, int rows, float* want) {
  float w[6], b[2];
  dp_tensor* tw = param(m, "weight");
  dp_tensor* tb = param(m, "bias");
  read_f32(tw, w, 6);
  read_f32(tb, b, 2);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < 2; ++j) {
      double acc = b[j];
      for (int k = 0; k < 3; ++k) acc += (double)seq_value(i * 3 + k) * w[j * 3 + k];
      want[i * 2 + j] = (float)acc;
    }
  }
  dp_tensor_release(tw);
  dp_tensor_release(tb);
}

static void data_parallel_apply_matches_one_forward_of_the_wrapper(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 3, 2, 1, cpu_dev(0), &m));
  dp_tensor* x = seq_matrix(ctx, 10, 3, cpu_dev(0));
  float want[20];
  linear_reference(m, 10, want);

  const dp_device out_dev = {DP_DEVICE_CPU, 2};
  dp_tensor* fo[DP_MAX_OUTPUTS] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_apply(m, &x, NULL, 1, NULL, 0, &out_dev, 0, fo, DP_MAX_OUTPUTS, &n));
  assert_int_equal(n, 1);
  assert_on_device(fo[0], 2);
  float fv[20];
  read_f32(fo[0], fv, 20);
  assert_close_f32(fv, want, 20, 1e-5, 1e-5);

  dp_data_parallel* dp = make_dp(m, NULL, 0, &out_dev, 0, NULL);
  dp_tensor* y = forward1(dp, x);
  float wv[20];
  read_f32(y, wv, 20);
  assert_memory_equal(fv, wv, sizeof fv);
  dp_tensor_release(y);
  dp_tensor_release(fo[0]);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
}

static void data_parallel_apply_does_not_move_the_module(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 3, 2, 1, cpu_dev(0), &m));
  dp_tensor* x = seq_matrix(ctx, 4, 3, cpu_dev(0));
  const dp_device ids[1] = {{DP_DEVICE_CPU, 3}};
  dp_tensor* fo[1] = {NULL};
  size_t n = 0;
  /* The wrapper would move it to its one device; the functional form leaves it and fails. */
  ASSERT_ERROR(dp_data_parallel_apply(m, &x, NULL, 1, ids, 1, NULL, 0, fo, 1, &n),
               DP_ERR_DEVICE_MISMATCH, "cpu:3");
  assert_null(fo[0]);
  dp_tensor* w = param(m, "weight");
  assert_on_device(w, 0);
  dp_tensor_release(w);
  /* The module's device is checked before the inputs are scattered, as the wrapper does:
     a 0-dim input, which scatter refuses, still gives the device error. */
  const int64_t no_dims[1] = {0};
  dp_tensor* scalar = NULL;
  ASSERT_OK(dp_tensor_zeros(ctx, DP_FLOAT32, no_dims, 0, cpu_dev(0), &scalar));
  ASSERT_ERROR(dp_data_parallel_apply(m, &scalar, NULL, 1, ids, 1, NULL, 0, fo, 1, &n),
               DP_ERR_DEVICE_MISMATCH, "cpu:3");
  dp_tensor_release(scalar);
  /* On the module's own device it runs and still does not move it. */
  const dp_device ids2[2] = {{DP_DEVICE_CPU, 0}, {DP_DEVICE_CPU, 1}};
  ASSERT_OK(dp_data_parallel_apply(m, &x, NULL, 1, ids2, 2, NULL, 0, fo, 1, &n));
  float got[8], want[8];
  read_f32(fo[0], got, 8);
  linear_reference(m, 4, want);
  assert_close_f32(got, want, 8, 1e-5, 1e-5);
  w = param(m, "weight");
  assert_on_device(w, 0);
  dp_tensor_release(w);
  dp_tensor_release(fo[0]);
  dp_tensor_release(x);
  dp_module_release(m);
}

/* dp_replicate's replicas on other CPU devices alias the module's parameters: while
   dp_parallel_apply runs them, replica 0 (the module itself) cannot write those in place. */
static void the_stages_refuse_a_write_to_parameters_other_replicas_alias(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_WRITE_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_device devs[2];
  cpu_range(devs, 2, 0);
  dp_tensor* x = seq_matrix(ctx, 4, 2, cpu_dev(0));
  dp_tensor* chunks[2] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_scatter(x, devs, 2, NULL, 0, chunks, &n));
  dp_module* reps[2] = {NULL};
  ASSERT_OK(dp_replicate(m, devs, 2, reps));
  dp_tensor* outs[2] = {NULL};
  assert_int_equal(dp_parallel_apply(reps, 2, chunks, 1, devs, outs), DP_ERR_STATE);
  /* The callback's own error, as the library wraps it. */
  assert_non_null(strstr(dp_last_error(), "in replica 0 on device cpu:0: "));
  assert_non_null(strstr(dp_last_error(),
                         "cannot write in place to a tensor on cpu:0 while DataParallel "
                         "replicas on other CPU devices read"));
  assert_null(outs[0]);
  dp_tensor* w = param(m, "w");
  float got[2];
  read_f32(w, got, 2);
  assert_close_f32(got, kW2, 2, 0, 0); /* unchanged */
  const float five[2] = {5.0f, 5.0f};
  ASSERT_OK(dp_tensor_copy_from_host(w, five, sizeof five)); /* writable once they stopped */
  dp_tensor_release(w);
  for (int d = 0; d < 2; ++d) {
    dp_tensor_release(chunks[d]);
    dp_module_release(reps[d]);
  }
  dp_tensor_release(x);
  dp_module_release(m);
  recorder_destroy(&rec);
}

static void the_four_stages_compose_into_one_forward(void** state) {
  dp_context* ctx = (dp_context*)*state;
  recorder rec;
  recorder_init(&rec, FWD_MUL_W);
  dp_module* m = recording_module(ctx, &rec, kW2, 2, cpu_dev(0));
  dp_device devs[4];
  cpu_range(devs, 4, 0);
  dp_tensor* x = seq_matrix(ctx, 10, 2, cpu_dev(0));
  dp_tensor* chunks[4] = {NULL};
  size_t n = 0;
  ASSERT_OK(dp_scatter(x, devs, 4, NULL, 0, chunks, &n));
  assert_int_equal(n, 4);
  dp_module* reps[4] = {NULL};
  ASSERT_OK(dp_replicate(m, devs, 4, reps));
  dp_tensor* outs[4] = {NULL};
  ASSERT_OK(dp_parallel_apply(reps, 4, chunks, 1, devs, outs));
  for (int d = 0; d < 4; ++d) {
    assert_on_device(outs[d], d);
    assert_int_equal(rec.calls_on[d], 1);
    assert_int_equal(rec.w_dev[d], d);
  }
  dp_tensor* y = NULL;
  ASSERT_OK(dp_gather(outs, 4, cpu_dev(1), 0, &y));
  assert_on_device(y, 1);
  assert_rows_times_w2(y, 10);
  backward_sum(y);
  dp_tensor* w = param(m, "w");
  float g[2], gwant[2] = {0, 0};
  for (int k = 0; k < 20; ++k) gwant[k % 2] += seq_value(k);
  read_grad(w, g, 2);
  assert_close_f32(g, gwant, 2, 0, 0);
  dp_tensor_release(w);
  dp_tensor_release(y);
  for (int d = 0; d < 4; ++d) {
    dp_tensor_release(outs[d]);
    dp_tensor_release(chunks[d]);
    dp_module_release(reps[d]);
  }
  dp_tensor_release(x);
  dp_module_release(m);
  recorder_destroy(&rec);
}

/* ---------------------------------------------------------------------------------- */
/* Section 9: checkpoints, stats, concurrency                                         */
/* ---------------------------------------------------------------------------------- */

static dp_module* small_mlp(dp_context* ctx) {
  dp_module* seq = NULL;
  dp_module* l1 = NULL;
  dp_module* act = NULL;
  dp_module* l2 = NULL;
  ASSERT_OK(dp_module_sequential(ctx, &seq));
  ASSERT_OK(dp_module_linear(ctx, 3, 4, 1, cpu_dev(0), &l1));
  ASSERT_OK(dp_module_relu(ctx, &act));
  ASSERT_OK(dp_module_linear(ctx, 4, 2, 1, cpu_dev(0), &l2));
  ASSERT_OK(dp_module_append(seq, l1));
  ASSERT_OK(dp_module_append(seq, act));
  ASSERT_OK(dp_module_append(seq, l2));
  dp_module_release(l1);
  dp_module_release(act);
  dp_module_release(l2);
  return seq;
}

static const char* const kMlpNames[4] = {"0.weight", "0.bias", "2.weight", "2.bias"};
static const size_t kMlpSizes[4] = {12, 4, 8, 2};

/* Every parameter of `m` set to `value`. */
static void fill_params(dp_module* m, float value) {
  for (int i = 0; i < 4; ++i) {
    float v[12];
    for (int k = 0; k < 12; ++k) v[k] = value;
    dp_tensor* t = param(m, kMlpNames[i]);
    ASSERT_OK(dp_tensor_copy_from_host(t, v, kMlpSizes[i] * sizeof(float)));
    dp_tensor_release(t);
  }
}

static void assert_same_params(const dp_module* a, const dp_module* b) {
  for (int i = 0; i < 4; ++i) {
    float va[12], vb[12];
    dp_tensor* ta = param(a, kMlpNames[i]);
    dp_tensor* tb = param(b, kMlpNames[i]);
    read_f32(ta, va, kMlpSizes[i]);
    read_f32(tb, vb, kMlpSizes[i]);
    assert_memory_equal(va, vb, kMlpSizes[i] * sizeof(float));
    dp_tensor_release(ta);
    dp_tensor_release(tb);
  }
}

static void wrapper_checkpoints_use_the_inner_modules_names(void** state) {
  dp_context* ctx = (dp_context*)*state;
  char dir[] = "/tmp/dp_test_ckpt_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], plain_path[256];
  snprintf(path, sizeof path, "%s/wrapped.safetensors", dir);
  snprintf(plain_path, sizeof plain_path, "%s/plain.safetensors", dir);

  dp_module* m = small_mlp(ctx);
  dp_data_parallel* dp = make_dp(m, NULL, 0, NULL, 0, NULL);
  ASSERT_OK(dp_data_parallel_save(dp, path));

  /* The file names "0.weight", never "module.0.weight". */
  FILE* f = fopen(path, "rb");
  assert_non_null(f);
  static char bytes[1 << 16];
  const size_t len = fread(bytes, 1, sizeof bytes - 1, f);
  fclose(f);
  bytes[len] = '\0';
  int has_name = 0, has_prefix = 0;
  for (size_t i = 0; i + 10 < len; ++i) {
    if (memcmp(bytes + i, "\"0.weight\"", 10) == 0) has_name = 1;
    if (memcmp(bytes + i, "module.", 7) == 0) has_prefix = 1;
  }
  assert_true(has_name);
  assert_false(has_prefix);

  /* A plain module of the same shape loads it. */
  dp_module* plain = small_mlp(ctx);
  fill_params(plain, 0.0f);
  ASSERT_OK(dp_module_load(plain, path));
  assert_same_params(plain, m);

  /* And the wrapper loads a plain module's file. */
  fill_params(plain, 0.75f);
  ASSERT_OK(dp_module_save(plain, plain_path));
  ASSERT_OK(dp_data_parallel_load(dp, plain_path));
  assert_same_params(m, plain);

  unlink(path);
  unlink(plain_path);
  rmdir(dir);
  dp_module_release(plain);
  dp_data_parallel_release(dp);
  dp_module_release(m);
}

static void one_training_step(dp_data_parallel* dp, dp_tensor* x) {
  dp_tensor* y = forward1(dp, x);
  backward_sum(y);
  dp_tensor_release(y);
}

static void phase_times_are_recorded_accumulated_and_reset(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 3, 2, 1, cpu_dev(0), &m));
  dp_device ids[2];
  cpu_range(ids, 2, 0);
  dp_data_parallel* dp = make_dp(m, ids, 2, NULL, 0, NULL);
  dp_tensor* x = seq_matrix(ctx, 4, 3, cpu_dev(0));
  dp_phase_times last1, last2, total;
  uint64_t calls = 0;

  one_training_step(dp, x);
  ASSERT_OK(dp_data_parallel_stats(dp, &last1, &total, &calls));
  assert_int_equal(calls, 1);
  /* Every phase ran in a training step over two devices, so each took some time. */
  const double* l1 = &last1.scatter;
  for (int p = 0; p < 6; ++p) assert_true(l1[p] > 0);

  one_training_step(dp, x);
  ASSERT_OK(dp_data_parallel_stats(dp, &last2, &total, &calls));
  assert_int_equal(calls, 2);
  const double* l2 = &last2.scatter;
  const double* t = &total.scatter;
  for (int p = 0; p < 6; ++p) {
    assert_true(l2[p] >= 0);
    assert_true(fabs(t[p] - (l1[p] + l2[p])) <= 1e-9 * (1 + t[p]));
  }

  ASSERT_OK(dp_data_parallel_reset_stats(dp));
  ASSERT_OK(dp_data_parallel_stats(dp, &last2, &total, &calls));
  assert_int_equal(calls, 0);
  for (int p = 0; p < 6; ++p) {
    assert_true(l2[p] == 0.0);
    assert_true(t[p] == 0.0);
  }
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
}

typedef struct training_run {
  dp_data_parallel* dp;
  dp_module* module;
  dp_tensor* x;
  int steps;
  float out[16 * 3];
  float grad_w[3 * 8];
  float grad_b[3];
  int ok;
} training_run;

/* `steps` forward+backward passes from zero gradients; keeps the last output and grads. */
static void* train_steps(void* arg) {
  training_run* run = (training_run*)arg;
  run->ok = 0;
  dp_tensor* w = NULL;
  dp_tensor* b = NULL;
  if (dp_module_get(run->module, "weight", &w) != DP_OK) return NULL;
  if (dp_module_get(run->module, "bias", &b) != DP_OK) return NULL;
  for (int s = 0; s < run->steps; ++s) {
    if (dp_module_zero_grad(run->module) != DP_OK) goto done;
    dp_tensor* y = NULL;
    size_t n = 0;
    if (dp_data_parallel_forward(run->dp, &run->x, NULL, 1, &y, 1, &n) != DP_OK) goto done;
    dp_tensor* sq = NULL;
    dp_tensor* loss = NULL;
    dp_result r = dp_op_mul(y, y, &sq);
    if (r == DP_OK) r = dp_op_sum(sq, &loss);
    if (r == DP_OK) r = dp_backward(loss, NULL, 0);
    if (r == DP_OK) r = dp_tensor_to_host(y, run->out, sizeof run->out);
    dp_tensor_release(sq);
    dp_tensor_release(loss);
    dp_tensor_release(y);
    if (r != DP_OK) goto done;
    dp_tensor* gw = NULL;
    dp_tensor* gb = NULL;
    if (dp_tensor_grad(w, &gw) != DP_OK || gw == NULL) goto done;
    if (dp_tensor_grad(b, &gb) != DP_OK || gb == NULL) {
      dp_tensor_release(gw);
      goto done;
    }
    r = dp_tensor_to_host(gw, run->grad_w, sizeof run->grad_w);
    if (r == DP_OK) r = dp_tensor_to_host(gb, run->grad_b, sizeof run->grad_b);
    dp_tensor_release(gw);
    dp_tensor_release(gb);
    if (r != DP_OK) goto done;
  }
  run->ok = 1;
done:
  dp_tensor_release(w);
  dp_tensor_release(b);
  return NULL;
}

static void two_wrappers_in_two_threads_match_running_them_one_after_the_other(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* ma = NULL;
  dp_module* mb = NULL;
  ASSERT_OK(dp_module_linear(ctx, 8, 3, 1, cpu_dev(0), &ma));
  ASSERT_OK(dp_module_linear(ctx, 8, 3, 1, cpu_dev(0), &mb));
  const char* names[2] = {"weight", "bias"};
  for (int i = 0; i < 2; ++i) {
    float v[24];
    dp_tensor* ta = param(ma, names[i]);
    dp_tensor* tb = param(mb, names[i]);
    size_t nb = 0;
    ASSERT_OK(dp_tensor_nbytes(ta, &nb));
    ASSERT_OK(dp_tensor_to_host(ta, v, nb));
    ASSERT_OK(dp_tensor_copy_from_host(tb, v, nb));
    dp_tensor_release(ta);
    dp_tensor_release(tb);
  }
  training_run runs[2];
  training_run refs[2];
  memset(runs, 0, sizeof runs);
  for (int i = 0; i < 2; ++i) {
    runs[i].module = i == 0 ? ma : mb;
    runs[i].dp = make_dp(runs[i].module, NULL, 0, NULL, 0, NULL);
    /* Values that round differently depending on the order of the sums. */
    const int64_t shape[2] = {16, 8};
    float v[128];
    for (int k = 0; k < 128; ++k) v[k] = sinf(0.37f * (float)(k + 1 + 5 * i)) * 3.1f;
    runs[i].x = make_f32(ctx, v, shape, 2, cpu_dev(0));
    runs[i].steps = 1;
  }
  for (int i = 0; i < 2; ++i) {
    train_steps(&runs[i]);
    assert_true(runs[i].ok);
    refs[i] = runs[i];
  }
  for (int round = 0; round < 5; ++round) {
    pthread_t threads[2];
    for (int i = 0; i < 2; ++i) {
      runs[i].steps = 3;
      memset(runs[i].out, 0, sizeof runs[i].out);
      assert_int_equal(pthread_create(&threads[i], NULL, train_steps, &runs[i]), 0);
    }
    for (int i = 0; i < 2; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
    for (int i = 0; i < 2; ++i) {
      assert_true(runs[i].ok);
      assert_memory_equal(runs[i].out, refs[i].out, sizeof refs[i].out);
      assert_memory_equal(runs[i].grad_w, refs[i].grad_w, sizeof refs[i].grad_w);
      assert_memory_equal(runs[i].grad_b, refs[i].grad_b, sizeof refs[i].grad_b);
    }
  }
  for (int i = 0; i < 2; ++i) {
    dp_tensor_release(runs[i].x);
    dp_data_parallel_release(runs[i].dp);
  }
  dp_module_release(ma);
  dp_module_release(mb);
}

/* Two custom forwards at once, on cpu:0 and cpu:1, each calling a module on the other's
   device. cpu:1's asks cpu:0 for a module that fails with a message of its own; cpu:0's
   worker runs it while its own forward waits on cpu:1. Then cpu:0's forward fails without
   a message: the nested failure's message must not become its. */
typedef struct crossing {
  int arrived; /* both forwards are running before either calls the other's device */
  dp_module* other;
  dp_tensor* other_input;
  dp_result other_result;
  dp_result returned; /* what this forward returns */
} crossing;

static void meet(int* arrived) {
  __atomic_add_fetch(arrived, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(arrived, __ATOMIC_SEQ_CST) < 2) sched_yield();
}

static int shared_arrived;

static dp_result crossing_forward(void* user, dp_module* self, dp_tensor* const* in, size_t n_in,
                                  dp_tensor** out, size_t max_out, size_t* n_out) {
  (void)self;
  (void)n_in;
  (void)max_out;
  crossing* c = (crossing*)user;
  meet(&shared_arrived);
  dp_tensor* y = NULL;
  c->other_result = dp_module_forward1(c->other, c->other_input, &y);
  if (y) dp_tensor_release(y);
  if (c->returned != DP_OK) return c->returned; /* no dp_set_error: no message */
  out[0] = dp_tensor_retain(in[0]);
  *n_out = 1;
  return DP_OK;
}

static dp_result failing_forward(void* user, dp_module* self, dp_tensor* const* in, size_t n_in,
                                 dp_tensor** out, size_t max_out, size_t* n_out) {
  (void)user, (void)self, (void)in, (void)n_in, (void)out, (void)max_out, (void)n_out;
  return dp_set_error(DP_ERR_CALLBACK, "the nested module failed");
}

typedef struct forward_call {
  dp_module* m;
  dp_tensor* x;
  dp_result r;
  char message[512];
} forward_call;

static void* call_forward(void* arg) {
  forward_call* f = (forward_call*)arg;
  dp_tensor* y = NULL;
  f->r = dp_module_forward1(f->m, f->x, &y);
  snprintf(f->message, sizeof f->message, "%s", f->r == DP_OK ? "" : dp_last_error());
  if (y) dp_tensor_release(y);
  return NULL;
}

static void a_forward_run_inside_another_leaves_the_outer_ones_error_message_alone(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float v[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {1, 4};
  dp_tensor* x0 = make_f32(ctx, v, shape, 2, cpu_dev(0));
  dp_tensor* x1 = make_f32(ctx, v, shape, 2, cpu_dev(1));
  dp_module* lin1 = NULL;
  ASSERT_OK(dp_module_linear(ctx, 4, 2, 1, cpu_dev(1), &lin1));
  dp_module* fails = custom(ctx, "Fails", failing_forward, NULL);
  crossing c0 = {0, lin1, x1, DP_OK, DP_ERR_CALLBACK};
  crossing c1 = {0, fails, x0, DP_OK, DP_OK};
  dp_module* on0 = custom(ctx, "On0", crossing_forward, &c0);
  dp_module* on1 = custom(ctx, "On1", crossing_forward, &c1);
  shared_arrived = 0;
  forward_call f0 = {on0, x0, DP_OK, ""};
  forward_call f1 = {on1, x1, DP_OK, ""};
  pthread_t t0, t1;
  assert_int_equal(pthread_create(&t0, NULL, call_forward, &f0), 0);
  assert_int_equal(pthread_create(&t1, NULL, call_forward, &f1), 0);
  assert_int_equal(pthread_join(t0, NULL), 0);
  assert_int_equal(pthread_join(t1, NULL), 0);
  assert_int_equal(c0.other_result, DP_OK);           /* On0's call of the Linear on cpu:1 */
  assert_int_equal(c1.other_result, DP_ERR_CALLBACK); /* On1's call of Fails on cpu:0 */
  assert_int_equal(f1.r, DP_OK);
  assert_int_equal(f0.r, DP_ERR_CALLBACK);
  /* Its own error, with no message after it (before, ": the nested module failed"). */
  assert_string_equal(f0.message, "On0 forward returned callback failed");
  dp_module_release(on0);
  dp_module_release(on1);
  dp_module_release(fails);
  dp_module_release(lin1);
  dp_tensor_release(x0);
  dp_tensor_release(x1);
}

/* A forward that reads dp_last_error(), then makes a call that succeeds but runs another
   forward on its thread (a module on its own device), which fails a call of its own: the
   text read before stays valid and unchanged (dataparallel.h: until the next failing call
   on this thread). Under AddressSanitizer a freed message would be reported. */
typedef struct reading {
  dp_module* inner;
  int ok;
} reading;

static dp_result inner_failing_a_call(void* user, dp_module* self, dp_tensor* const* in,
                                      size_t n_in, dp_tensor** out, size_t max_out, size_t* n_out) {
  (void)user, (void)self, (void)n_in, (void)max_out;
  /* Records a message of its own on this thread, as a failing call would. */
  dp_set_error(DP_ERR_INVALID_ARGUMENT, "the inner forward's message, which replaces it");
  out[0] = dp_tensor_retain(in[0]);
  *n_out = 1;
  return DP_OK;
}

static dp_result outer_reading_its_error(void* user, dp_module* self, dp_tensor* const* in,
                                         size_t n_in, dp_tensor** out, size_t max_out,
                                         size_t* n_out) {
  (void)self, (void)n_in, (void)max_out;
  reading* r = (reading*)user;
  dp_tensor* y = NULL;
  /* A message too long for std::string's inline buffer: its text lives on the heap. */
  dp_set_error(DP_ERR_INVALID_ARGUMENT,
               "the outer forward's own message, long enough for the heap");
  const char* message = dp_last_error();
  char copy[512];
  snprintf(copy, sizeof copy, "%s", message);
  if (dp_module_forward1(r->inner, in[0], &y) != DP_OK) return DP_ERR_INTERNAL;
  dp_tensor_release(y);
  r->ok = strcmp(message, copy) == 0;
  out[0] = dp_tensor_retain(in[0]);
  *n_out = 1;
  return DP_OK;
}

static void a_forward_run_inside_another_keeps_the_outer_ones_last_error_text_valid(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float v[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {1, 4};
  dp_tensor* x = make_f32(ctx, v, shape, 2, cpu_dev(0));
  reading r = {custom(ctx, "Inner", inner_failing_a_call, NULL), 0};
  dp_module* outer = custom(ctx, "Outer", outer_reading_its_error, &r);
  dp_tensor* y = NULL;
  ASSERT_OK(dp_module_forward1(outer, x, &y));
  assert_true(r.ok);
  dp_tensor_release(y);
  dp_module_release(outer);
  dp_module_release(r.inner);
  dp_tensor_release(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      /* Section 2 */
      cmocka_unit_test(device_ids_null_means_every_cpu_device),
      cmocka_unit_test(output_device_defaults_to_device_ids_0),
      cmocka_unit_test(empty_device_ids_are_rejected),
      cmocka_unit_test(duplicate_device_id_is_rejected_naming_it),
      cmocka_unit_test(out_of_range_device_id_is_rejected_naming_it),
      cmocka_unit_test(with_one_device_the_module_moves_there_at_construction),
      /* Section 3 */
      cmocka_unit_test(forward_rejects_a_module_off_device_ids_0_naming_both_devices),
      cmocka_unit_test(forward_rejects_a_buffer_off_device_ids_0),
      cmocka_unit_test(inputs_are_scattered_even_with_one_device),
      cmocka_unit_test(without_inputs_the_module_runs_once_on_device_ids_0),
      cmocka_unit_test(one_device_calls_the_module_directly_and_returns_its_output),
      cmocka_unit_test(one_chunk_over_several_devices_runs_the_original_and_gathers_it),
      cmocka_unit_test(several_devices_replicate_apply_and_gather),
      /* Section 4 */
      cmocka_unit_test(scatter_splits_ten_rows_over_four_devices_as_3_3_3_1),
      cmocka_unit_test(scatter_splits_nine_rows_over_four_devices_as_3_3_3_on_three_devices),
      cmocka_unit_test(scatter_splits_six_rows_over_four_devices_as_2_2_2_on_three_devices),
      cmocka_unit_test(scatter_splits_three_rows_over_four_devices_as_1_1_1_on_three_devices),
      cmocka_unit_test(scatter_splits_nine_rows_over_eight_devices_as_2_2_2_2_1_on_five_devices),
      cmocka_unit_test(scatter_of_zero_rows_gives_one_empty_chunk_per_device),
      cmocka_unit_test(a_batch_smaller_than_the_device_count_runs_fewer_replicas),
      cmocka_unit_test(an_empty_batch_runs_one_replica_per_device_and_gathers_zero_rows),
      cmocka_unit_test(several_inputs_run_as_many_replicas_as_the_fewest_chunks),
      cmocka_unit_test(broadcast_inputs_reach_every_replica_whole),
      cmocka_unit_test(a_0_dim_input_cannot_be_split),
      cmocka_unit_test(chunk_sizes_split_the_batch_with_the_given_weights),
      cmocka_unit_test(chunk_sizes_must_sum_to_the_batch),
      cmocka_unit_test(chunk_sizes_need_one_entry_per_device),
      cmocka_unit_test(a_zero_chunk_size_skips_that_device),
      cmocka_unit_test(a_zero_chunk_size_for_device_ids_0_skips_it_too),
      cmocka_unit_test(scatter_chunks_on_the_source_device_are_views_of_the_input),
      cmocka_unit_test(scatter_along_dim_1_copies_the_chunks),
      cmocka_unit_test(scatter_backward_gives_the_rows_of_an_unused_chunk_zero_gradient),
      /* Section 5 */
      cmocka_unit_test(replica_0_is_the_original_module),
      cmocka_unit_test(other_replicas_hold_the_parameters_on_their_devices_as_non_leaves),
      cmocka_unit_test(replica_buffers_are_detached_copies),
      cmocka_unit_test(batchnorm_statistics_keep_replica_0s_update_only),
      cmocka_unit_test(buffer_sync_average_gives_the_mean_of_every_replicas_update),
      cmocka_unit_test(buffer_sync_average_skips_a_device_ids_0_that_got_no_rows),
      cmocka_unit_test(parameter_gradient_is_the_sum_over_replicas_on_device_ids_0),
      cmocka_unit_test(a_parameter_no_replica_uses_gets_a_zero_gradient),
      cmocka_unit_test(a_null_output_array_is_refused_before_the_forward_runs),
      cmocka_unit_test(a_parameter_that_is_not_a_leaf_is_refused_when_registered),
      cmocka_unit_test(tied_weights_stay_tied_in_every_replica),
      cmocka_unit_test(replicas_see_the_original_parameters_whatever_the_bucket_size),
      cmocka_unit_test(cached_replicas_are_reused_until_a_parameter_changes),
      cmocka_unit_test(replicas_are_not_cached_while_grad_mode_is_on),
      /* Section 6 */
      cmocka_unit_test(parallel_apply_rejects_inputs_that_do_not_match_the_replicas),
      cmocka_unit_test(each_device_has_one_persistent_worker),
      cmocka_unit_test(the_callers_grad_mode_holds_in_every_replica),
      cmocka_unit_test(replica_error_names_lowest_failing_replica_and_its_device),
      cmocka_unit_test(a_replica_error_keeps_its_number_when_chunk_sizes_skip_the_first_device),
      cmocka_unit_test(every_replica_still_runs_when_some_fail),
      cmocka_unit_test(the_wrapper_stays_usable_after_a_replica_fails),
      /* Section 7 */
      cmocka_unit_test(outputs_are_concatenated_onto_the_output_device),
      cmocka_unit_test(the_wrapper_splits_and_gathers_along_dim_1),
      cmocka_unit_test(gather_rejects_outputs_of_different_shapes_naming_the_replica),
      cmocka_unit_test(scalar_outputs_gather_into_a_vector_with_a_warning),
      cmocka_unit_test(gather_backward_splits_the_gradient_with_the_forward_sizes),
      cmocka_unit_test(no_gather_returns_each_replicas_output_on_its_device),
      /* Section 8 */
      cmocka_unit_test(data_parallel_apply_matches_one_forward_of_the_wrapper),
      cmocka_unit_test(data_parallel_apply_does_not_move_the_module),
      cmocka_unit_test(data_parallel_apply_copies_broadcast_inputs_whole_to_every_replica),
      cmocka_unit_test(the_four_stages_compose_into_one_forward),
      cmocka_unit_test(the_stages_refuse_a_write_to_parameters_other_replicas_alias),
      /* Section 9 */
      cmocka_unit_test(wrapper_checkpoints_use_the_inner_modules_names),
      cmocka_unit_test(phase_times_are_recorded_accumulated_and_reset),
      cmocka_unit_test(two_wrappers_in_two_threads_match_running_them_one_after_the_other),
      cmocka_unit_test(a_forward_run_inside_another_leaves_the_outer_ones_error_message_alone),
      cmocka_unit_test(a_forward_run_inside_another_keeps_the_outer_ones_last_error_text_valid),
  };
  return cmocka_run_group_tests_name("data_parallel", tests, setup, teardown);
}
