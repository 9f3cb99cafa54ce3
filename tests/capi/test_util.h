/* Helpers shared by the cmocka suites of the C API. */
#ifndef DP_TESTS_CAPI_TEST_UTIL_H_
#define DP_TESTS_CAPI_TEST_UTIL_H_

#include <dataparallel/dataparallel.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above. */
#include <cmocka.h>

/* The call must succeed; otherwise the test fails with the library's message. */
#define ASSERT_OK(call)                                                                      \
  do {                                                                                       \
    dp_result r_ = (call);                                                                   \
    if (r_ != DP_OK) fail_msg("%s -> %s: %s", #call, dp_result_string(r_), dp_last_error()); \
  } while (0)

/* The call must fail with `code` and a message that contains `needle`. */
#define ASSERT_ERROR(call, code, needle)                                                        \
  do {                                                                                          \
    dp_result r_ = (call);                                                                      \
    if (r_ != (code))                                                                           \
      fail_msg("%s -> %s (%s), expected %s", #call, dp_result_string(r_), dp_last_error(),      \
               dp_result_string(code));                                                         \
    if (strstr(dp_last_error(), (needle)) == NULL)                                              \
      fail_msg("%s: message \"%s\" does not mention \"%s\"", #call, dp_last_error(), (needle)); \
  } while (0)

static inline dp_device cpu_dev(int32_t index) {
  dp_device d = {DP_DEVICE_CPU, index};
  return d;
}

/* A context with `n` CPU devices and no CUDA, for deterministic tests. */
static inline dp_context* make_context(int32_t n) {
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = n;
  o.load_cuda = 0;
  dp_context* ctx = NULL;
  if (dp_context_create(&o, &ctx) != DP_OK) fail_msg("context: %s", dp_last_error());
  return ctx;
}

/* A float32 tensor from values. */
static inline dp_tensor* make_f32(dp_context* ctx, const float* values, const int64_t* shape,
                                  size_t ndim, dp_device device) {
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  dp_tensor* t = NULL;
  dp_result r =
      dp_tensor_from_data(ctx, DP_FLOAT32, shape, ndim, values, n * sizeof(float), device, &t);
  if (r != DP_OK) fail_msg("from_data: %s", dp_last_error());
  return t;
}

/* Copies a float32 tensor's contents into `out` (n elements). */
static inline void read_f32(const dp_tensor* t, float* out, size_t n) {
  dp_result r = dp_tensor_to_host(t, out, n * sizeof(float));
  if (r != DP_OK) fail_msg("to_host: %s", dp_last_error());
}

/* |a - b| <= atol + rtol * |b| for every element. */
static inline void assert_close_f32(const float* a, const float* b, size_t n, double rtol,
                                    double atol) {
  for (size_t i = 0; i < n; ++i) {
    const double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= atol + rtol * fabs((double)b[i])))
      fail_msg("element %zu: %.9g vs expected %.9g (diff %.3g)", i, (double)a[i], (double)b[i], d);
  }
}

#endif /* DP_TESTS_CAPI_TEST_UTIL_H_ */
