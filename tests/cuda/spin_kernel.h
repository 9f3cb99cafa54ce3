// A kernel that holds its stream until the host releases it (test_nccl_order.cc).
#pragma once

#include <cuda_runtime_api.h>

// Queues one thread on `stream` that spins until *flag (host memory mapped into the GPU,
// cudaHostAllocMapped) is non-zero. Returns the launch's error.
cudaError_t launch_spin_until_set(const volatile int* flag, cudaStream_t stream);
