/* Comparing library tensors with the PyTorch fixtures of tests/fixtures/torch_fixtures.h.
 * FIXTURE(NAME) expands to the array, its shape and its ndim, in that order. */
#ifndef DP_TESTS_CAPI_TORCH_COMPARE_H_
#define DP_TESTS_CAPI_TORCH_COMPARE_H_

#include <stdlib.h>

#include "../fixtures/torch_fixtures.h"
#include "test_util.h"

#define FIXTURE(NAME) NAME, NAME##_SHAPE, (size_t)NAME##_NDIM

/* float32 against float32 results of PyTorch: a few ulps of difference in accumulation
   order (oneDNN's blocked kernels versus PyTorch's) at the sizes of the fixtures. */
#ifndef TORCH_RTOL
#define TORCH_RTOL 1e-5
#endif
#ifndef TORCH_ATOL
#define TORCH_ATOL 1e-6
#endif

static inline size_t numel_of(const int64_t* shape, size_t ndim) {
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  return n;
}

/* A float32 tensor on `device` holding a fixture; requires grad when asked. */
static inline dp_tensor* fixture_tensor_on(dp_context* ctx, dp_device device, const float* values,
                                           const int64_t* shape, size_t ndim, int requires_grad) {
  dp_tensor* t = make_f32(ctx, values, shape, ndim, device);
  if (requires_grad) ASSERT_OK(dp_tensor_set_requires_grad(t, 1));
  return t;
}

static inline dp_tensor* fixture_tensor(dp_context* ctx, const float* values, const int64_t* shape,
                                        size_t ndim, int requires_grad) {
  return fixture_tensor_on(ctx, cpu_dev(0), values, shape, ndim, requires_grad);
}

/* An int64 tensor on cpu:0 holding a fixture (class targets, embedding indices). */
static inline dp_tensor* fixture_int64(dp_context* ctx, const int64_t* values, const int64_t* shape,
                                       size_t ndim) {
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_from_data(ctx, DP_INT64, shape, ndim, values,
                                numel_of(shape, ndim) * sizeof(int64_t), cpu_dev(0), &t));
  return t;
}

/* `t` has exactly `shape`. */
static inline void assert_shape(const char* what, const dp_tensor* t, const int64_t* shape,
                                size_t ndim) {
  size_t got_ndim = 0;
  int64_t got[DP_MAX_DIMS];
  ASSERT_OK(dp_tensor_ndim(t, &got_ndim));
  if (got_ndim != ndim) fail_msg("%s: ndim %zu, expected %zu", what, got_ndim, ndim);
  ASSERT_OK(dp_tensor_shape(t, got, DP_MAX_DIMS));
  for (size_t i = 0; i < ndim; ++i) {
    if (got[i] != shape[i])
      fail_msg("%s: size %lld at dim %zu, expected %lld", what, (long long)got[i], i,
               (long long)shape[i]);
  }
}

/* `t` (float32) has the fixture's shape and |t - expected| <= atol + rtol |expected|. */
static inline void assert_tensor_near(const char* what, const dp_tensor* t, const float* expected,
                                      const int64_t* shape, size_t ndim, double rtol, double atol) {
  if (t == NULL) fail_msg("%s: no tensor", what);
  assert_shape(what, t, shape, ndim);
  const size_t n = numel_of(shape, ndim);
  float* got = (float*)malloc(n * sizeof(float) + 1);
  read_f32(t, got, n);
  size_t bad = n;
  for (size_t i = 0; i < n && bad == n; ++i) {
    const double d = fabs((double)got[i] - (double)expected[i]);
    if (!(d <= atol + rtol * fabs((double)expected[i]))) bad = i;
  }
  const double g = bad < n ? (double)got[bad] : 0.0;
  free(got);
  if (bad < n) {
    fail_msg("%s: element %zu is %.9g, PyTorch gives %.9g (diff %.3g)", what, bad, g,
             (double)expected[bad], fabs(g - (double)expected[bad]));
  }
}

static inline void assert_tensor_matches(const char* what, const dp_tensor* t,
                                         const float* expected, const int64_t* shape, size_t ndim) {
  assert_tensor_near(what, t, expected, shape, ndim, TORCH_RTOL, TORCH_ATOL);
}

/* The accumulated gradient of `t` matches. */
static inline void assert_grad_near(const char* what, const dp_tensor* t, const float* expected,
                                    const int64_t* shape, size_t ndim, double rtol, double atol) {
  dp_tensor* g = NULL;
  ASSERT_OK(dp_tensor_grad(t, &g));
  if (g == NULL) fail_msg("%s: no gradient was computed", what);
  assert_tensor_near(what, g, expected, shape, ndim, rtol, atol);
  dp_tensor_release(g);
}

static inline void assert_grad_matches(const char* what, const dp_tensor* t, const float* expected,
                                       const int64_t* shape, size_t ndim) {
  assert_grad_near(what, t, expected, shape, ndim, TORCH_RTOL, TORCH_ATOL);
}

/* Overwrites the module's parameter or buffer `name` with a fixture (shape checked). */
static inline void load_fixture(dp_module* m, const char* name, const float* values,
                                const int64_t* shape, size_t ndim) {
  dp_tensor* t = NULL;
  ASSERT_OK(dp_module_get(m, name, &t));
  assert_shape(name, t, shape, ndim);
  ASSERT_OK(dp_tensor_copy_from_host(t, values, numel_of(shape, ndim) * sizeof(float)));
  dp_tensor_release(t);
}

/* The module's parameter or buffer `name` matches a fixture. */
static inline void assert_state_matches(const dp_module* m, const char* name, const float* expected,
                                        const int64_t* shape, size_t ndim) {
  dp_tensor* t = NULL;
  ASSERT_OK(dp_module_get(m, name, &t));
  assert_tensor_matches(name, t, expected, shape, ndim);
  dp_tensor_release(t);
}

/* The gradient of the module's parameter `name` matches a fixture. */
static inline void assert_param_grad_near(const dp_module* m, const char* name,
                                          const float* expected, const int64_t* shape, size_t ndim,
                                          double rtol, double atol) {
  dp_tensor* t = NULL;
  ASSERT_OK(dp_module_get(m, name, &t));
  char what[128];
  snprintf(what, sizeof what, "grad of %s", name);
  assert_grad_near(what, t, expected, shape, ndim, rtol, atol);
  dp_tensor_release(t);
}

static inline void assert_param_grad_matches(const dp_module* m, const char* name,
                                             const float* expected, const int64_t* shape,
                                             size_t ndim) {
  assert_param_grad_near(m, name, expected, shape, ndim, TORCH_RTOL, TORCH_ATOL);
}

/* Backpropagates sum(y * w): the gradient of every element of y is checked, not only of
   their sum. w has y's shape. */
static inline void backward_weighted_sum(dp_context* ctx, dp_tensor* y, const float* w,
                                         const int64_t* shape, size_t ndim) {
  assert_shape("output", y, shape, ndim);
  dp_device device;
  ASSERT_OK(dp_tensor_device(y, &device));
  dp_tensor* wt = make_f32(ctx, w, shape, ndim, device);
  dp_tensor* prod = NULL;
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_mul(y, wt, &prod));
  ASSERT_OK(dp_op_sum(prod, &loss));
  ASSERT_OK(dp_backward(loss, NULL, 0));
  dp_tensor_release(loss);
  dp_tensor_release(prod);
  dp_tensor_release(wt);
}

/* A named parameter of a fixture model: its values and the gradient PyTorch computed. */
typedef struct named_fixture {
  const char* name;
  const float* values;
  const int64_t* shape;
  size_t ndim;
  const float* grad;
} named_fixture;

/* The small MLP of the fixtures, in PyTorch's parameter order. */
static const named_fixture kMlpParameters[] = {
    {"0.weight", FIXTURE(MLP_0_WEIGHT), MLP_D0_WEIGHT},
    {"0.bias", FIXTURE(MLP_0_BIAS), MLP_D0_BIAS},
    {"2.weight", FIXTURE(MLP_2_WEIGHT), MLP_D2_WEIGHT},
    {"2.bias", FIXTURE(MLP_2_BIAS), MLP_D2_BIAS},
    {"4.weight", FIXTURE(MLP_4_WEIGHT), MLP_D4_WEIGHT},
    {"4.bias", FIXTURE(MLP_4_BIAS), MLP_D4_BIAS},
};
#define MLP_FIXTURE_PARAMETERS (sizeof kMlpParameters / sizeof kMlpParameters[0])

/* Appends `child` to `seq` and drops the caller's reference to it. */
static inline void append_child(dp_module* seq, dp_module* child) {
  ASSERT_OK(dp_module_append(seq, child));
  dp_module_release(child);
}

/* Sequential(Linear(20, 16), ReLU, Linear(16, 8), ReLU, Linear(8, 4)) built with the C API,
   with the library's own initialisation. */
static inline dp_module* build_mlp(dp_context* ctx, dp_device device) {
  dp_module* seq = NULL;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_sequential(ctx, &seq));
  ASSERT_OK(dp_module_linear(ctx, 20, 16, 1, device, &m));
  append_child(seq, m);
  ASSERT_OK(dp_module_relu(ctx, &m));
  append_child(seq, m);
  ASSERT_OK(dp_module_linear(ctx, 16, 8, 1, device, &m));
  append_child(seq, m);
  ASSERT_OK(dp_module_relu(ctx, &m));
  append_child(seq, m);
  ASSERT_OK(dp_module_linear(ctx, 8, 4, 1, device, &m));
  append_child(seq, m);
  return seq;
}

#endif /* DP_TESTS_CAPI_TORCH_COMPARE_H_ */
