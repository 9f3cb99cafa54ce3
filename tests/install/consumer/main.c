/* Links against the installed library and makes a tensor: proves the headers, the
   library and its SONAME link are installed right. */
#include <dataparallel/dataparallel.h>
#include <stdio.h>

int main(void) {
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 1;
  o.load_cuda = 0;
  dp_context* ctx = NULL;
  if (dp_context_create(&o, &ctx) != DP_OK) return 1;
  const int64_t shape[1] = {3};
  dp_tensor* t = NULL;
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  if (dp_tensor_full(ctx, DP_FLOAT32, shape, 1, 2.5, cpu0, &t) != DP_OK) return 1;
  float v[3];
  if (dp_tensor_to_host(t, v, sizeof v) != DP_OK || v[2] != 2.5f) return 1;
  printf("installed libdataparallel %s works\n", dp_version_string());
  dp_tensor_release(t);
  dp_context_release(ctx);
  return 0;
}
