// The plugin's entry point: creates the CUDA backend when a driver and GPUs exist, and
// otherwise says why not, in the CUDA runtime's words.
#include <cuda_runtime.h>

#include <string>

#include "device/backend.h"

extern "C" __attribute__((visibility("default"))) dp::Backend* dp_cuda_plugin_entry(
    const dp::BackendHost* host, int abi_version, bool allow_tf32, const char** why) {
  (void)host;
  (void)allow_tf32;
  thread_local std::string message;
  if (abi_version != dp::kBackendAbiVersion) {
    message = "plugin ABI " + std::to_string(dp::kBackendAbiVersion) + " but the core wants " +
              std::to_string(abi_version);
    *why = message.c_str();
    return nullptr;
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    message = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
    *why = message.c_str();
    return nullptr;
  }
  if (count == 0) {
    message = "the CUDA runtime reports 0 devices";
    *why = message.c_str();
    return nullptr;
  }
  message = "the CUDA backend's kernels are not built into this plugin yet";
  *why = message.c_str();
  return nullptr;
}
