// A kernel that holds its stream until the host releases it (test_nccl_order.cc).
#include "spin_kernel.h"

namespace {

__global__ void spin_until_set(const volatile int* flag) {
  while (*flag == 0) {
  }
}

}  // namespace

cudaError_t launch_spin_until_set(const volatile int* flag, cudaStream_t stream) {
  spin_until_set<<<1, 1, 0, stream>>>(flag);
  return cudaGetLastError();
}
