// CUDA, cuBLAS and NCCL failures as the core's errors: host.raise(code, message) with the
// library's own words for the failure and the device it happened on, e.g.
//   "cuda:1 (GPU 0): cudaMallocAsync of 1048576 bytes failed: out of memory".
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "device/backend.h"
#include "error.h"

namespace dp::cuda_plugin {

// Throws the core's error through host.raise. `where` names the device.
[[noreturn]] void raise(const BackendHost& host, Code code, const std::string& where,
                        const std::string& what);

// Each returns normally on success. `call` names what failed, with its arguments where
// they help ("cudaMallocAsync of 4096 bytes").
void check_cuda(const BackendHost& host, const std::string& where, cudaError_t err,
                const std::string& call);
void check_cublas(const BackendHost& host, const std::string& where, cublasStatus_t status,
                  const std::string& call);
// comm (may be null) supplies ncclGetLastError's detail.
void check_nccl(const BackendHost& host, const std::string& where, ncclResult_t result,
                ncclComm_t comm, const std::string& call);
// check_nccl's message: "<call> failed: <NCCL's string> (<comm's last error>)".
std::string nccl_failure(ncclResult_t result, ncclComm_t comm, const std::string& call);

// Sets the calling thread's current GPU for its lifetime and restores the previous one.
// Backend entry points that may run on any thread (allocate, deallocate, the
// collectives) use it so they never leave a caller's thread on another GPU.
class DeviceGuard {
 public:
  explicit DeviceGuard(int gpu);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool changed_ = false;
};

}  // namespace dp::cuda_plugin
