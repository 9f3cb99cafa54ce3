/* A program that dlopen()s the built library, looks up only dp_get_api, and drives a
   tensor round trip through the table. Not linked against libdataparallel. */
#include <dlfcn.h>

#include "test_util.h"

#ifndef DP_LIBRARY_PATH
#error "DP_LIBRARY_PATH must name the built libdataparallel.so"
#endif

static void dlopen_and_one_dlsym_are_enough_for_a_tensor_round_trip(void** state) {
  (void)state;
  void* lib = dlopen(DP_LIBRARY_PATH, RTLD_NOW | RTLD_LOCAL);
  if (!lib) fail_msg("dlopen: %s", dlerror());
  typedef const dp_api* (*get_api_fn)(uint32_t);
  get_api_fn get_api = NULL;
  *(void**)&get_api = dlsym(lib, "dp_get_api");
  assert_non_null(get_api);
  const dp_api* api = get_api(1);
  assert_non_null(api);
  assert_int_equal(api->version_number(), DP_VERSION_NUMBER);

  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 2;
  o.load_cuda = 0;
  dp_context* ctx = NULL;
  assert_int_equal(api->context_create(&o, &ctx), DP_OK);
  const int64_t shape[2] = {2, 2};
  const float v[4] = {1, -2, 3.5f, 4};
  dp_device d0 = {DP_DEVICE_CPU, 0}, d1 = {DP_DEVICE_CPU, 1};
  dp_tensor* a = NULL;
  dp_tensor* b = NULL;
  assert_int_equal(api->tensor_from_data(ctx, DP_FLOAT32, shape, 2, v, sizeof v, d0, &a), DP_OK);
  assert_int_equal(api->tensor_to_device(a, d1, &b), DP_OK);
  float out[4];
  assert_int_equal(api->tensor_to_host(b, out, sizeof out), DP_OK);
  assert_memory_equal(out, v, sizeof v);
  dp_tensor* bad = NULL;
  assert_int_equal(api->tensor_to_host(NULL, out, sizeof out), DP_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(api->last_error(), "t is NULL"));
  (void)bad;
  api->tensor_release(b);
  api->tensor_release(a);
  api->context_release(ctx);
  /* The library stays mapped: its worker threads are gone, but glibc may still hold
     thread-local destructors registered by it. */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dlopen_and_one_dlsym_are_enough_for_a_tensor_round_trip),
  };
  return cmocka_run_group_tests_name("dlopen", tests, NULL, NULL);
}
