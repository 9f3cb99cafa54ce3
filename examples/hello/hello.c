/* dp-hello: creates the CPU devices, makes tensors on them, moves one between devices
   and prints what it did. The smallest program that uses the public header. */
#include <dataparallel/dataparallel.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                 \
  do {                                                                              \
    dp_result r_ = (call);                                                          \
    if (r_ != DP_OK) {                                                              \
      fprintf(stderr, "dp-hello: %s: %s\n", dp_result_string(r_), dp_last_error()); \
      exit(2);                                                                      \
    }                                                                               \
  } while (0)

static void on_log(void* user, dp_log_level level, const char* message) {
  (void)user;
  fprintf(stderr, "[dataparallel %d] %s\n", (int)level, message);
}

int main(void) {
  dp_context_options opts = DP_CONTEXT_OPTIONS_INIT;
  opts.log_fn = on_log;
  opts.log_level = DP_LOG_INFO;
  dp_context* ctx = NULL;
  CHECK(dp_context_create(&opts, &ctx));
  printf("libdataparallel %s\n", dp_version_string());

  int32_t ncpu = 0, ncuda = 0;
  CHECK(dp_device_count(ctx, DP_DEVICE_CPU, &ncpu));
  CHECK(dp_device_count(ctx, DP_DEVICE_CUDA, &ncuda));
  printf("%d CPU devices, %d CUDA devices\n", ncpu, ncuda);
  for (int32_t i = 0; i < ncpu; ++i) {
    char name[128];
    dp_device d = {DP_DEVICE_CPU, i};
    CHECK(dp_device_name(ctx, d, name, sizeof name, NULL));
    printf("  %s\n", name);
  }

  const float values[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[2] = {2, 3};
  dp_device cpu0 = {DP_DEVICE_CPU, 0};
  dp_device last = {DP_DEVICE_CPU, ncpu - 1};
  dp_tensor* a = NULL;
  dp_tensor* b = NULL;
  CHECK(dp_tensor_from_data(ctx, DP_FLOAT32, shape, 2, values, sizeof values, cpu0, &a));
  CHECK(dp_tensor_to_device(a, last, &b));
  float back[6];
  CHECK(dp_tensor_to_host(b, back, sizeof back));
  printf("tensor [2, 3] on cpu:0 copied to cpu:%d:", last.index);
  for (int i = 0; i < 6; ++i) printf(" %g", back[i]);
  printf("\n");

  dp_tensor_release(b);
  dp_tensor_release(a);
  dp_context_release(ctx);
  return 0;
}
