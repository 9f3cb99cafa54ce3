#include "cuda_errors.h"

#include <cstdlib>

namespace dp::cuda_plugin {

void raise(const BackendHost& host, Code code, const std::string& where, const std::string& what) {
  const std::string message = where + ": " + what;
  host.raise(static_cast<int>(code), message.c_str());
  std::abort();  // raise never returns; GCC does not see [[noreturn]] through the pointer
}

void check_cuda(const BackendHost& host, const std::string& where, cudaError_t err,
                const std::string& call) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();  // a failed call is also the thread's last error: clear it
  const Code code = err == cudaErrorMemoryAllocation ? Code::kOutOfMemory : Code::kBackend;
  raise(host, code, where,
        call + " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")");
}

void check_cublas(const BackendHost& host, const std::string& where, cublasStatus_t status,
                  const std::string& call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  Code code = Code::kBackend;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) code = Code::kOutOfMemory;
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) code = Code::kNotSupported;
  raise(host, code, where,
        call + " failed: " + cublasLtGetStatusName(status) + " (" +
            cublasLtGetStatusString(status) + ")");
}

void check_nccl(const BackendHost& host, const std::string& where, ncclResult_t result,
                ncclComm_t comm, const std::string& call) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  raise(host, Code::kBackend, where, nccl_failure(result, comm, call));
}

std::string nccl_failure(ncclResult_t result, ncclComm_t comm, const std::string& call) {
  std::string what = call + " failed: " + ncclGetErrorString(result);
  const char* detail = ncclGetLastError(comm);
  if (detail != nullptr && *detail != '\0') what += std::string(" (") + detail + ")";
  return what;
}

DeviceGuard::DeviceGuard(int gpu) {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    (void)cudaGetLastError();
    previous_ = -1;
  }
  if (previous_ != gpu) {
    changed_ = cudaSetDevice(gpu) == cudaSuccess;
    if (!changed_) (void)cudaGetLastError();  // the next call on this GPU reports it
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_ && previous_ >= 0) (void)cudaSetDevice(previous_);
}

}  // namespace dp::cuda_plugin
