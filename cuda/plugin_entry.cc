// The plugin's entry point: creates the CUDA backend when a driver and GPUs exist, and
// otherwise says why not, in the CUDA runtime's words. Nothing here throws: every failure
// becomes a null backend and a message, so the context simply has no CUDA devices.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <exception>
#include <string>

#include "cuda_backend.h"
#include "device/backend.h"
#include "device_map.h"

extern "C" __attribute__((visibility("default"))) dp::Backend* dp_cuda_plugin_entry(
    const dp::BackendHost* host, int abi_version, bool allow_tf32, const char** why) {
  thread_local std::string message;
  auto fail = [&](std::string text) -> dp::Backend* {
    message = std::move(text);
    *why = message.c_str();
    return nullptr;
  };
  if (abi_version != dp::kBackendAbiVersion) {
    return fail("plugin ABI " + std::to_string(dp::kBackendAbiVersion) + " but the core wants " +
                std::to_string(abi_version));
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return fail(std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err));
  }
  if (count == 0) return fail("the CUDA runtime reports 0 devices");
  std::string map_error;
  const std::vector<int> gpus =
      dp::cuda_plugin::parse_device_map(std::getenv("DP_CUDA_DEVICES"), count, &map_error);
  if (gpus.empty()) return fail(map_error);
  try {
    return new dp::cuda_plugin::CudaBackend(*host, gpus, allow_tf32);
  } catch (const std::exception& e) {
    return fail(std::string("the CUDA backend could not start: ") + e.what());
  } catch (...) {
    return fail("the CUDA backend could not start");
  }
}
