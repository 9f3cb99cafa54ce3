// What every kernel file shares: grid sizing for grid-stride loops, the accumulator type
// of a sum, the arithmetic type of bfloat16, block reductions and the data-error record;
// and the per-element formulas with their float/double math overloads
// (device/element_math.h), shared with the CPU backend.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernels.h"  // backend.h, included the way nvcc accepts it

// after kernels.h, which has included backend.h already
#include "device/bfloat16.h"
#include "device/element_math.h"

namespace dp::cuda_plugin::kernels {

constexpr int kThreads = 256;

// Blocks for n elements in a grid-stride loop: enough to fill the GPU, capped so that
// huge tensors loop instead of launching millions of blocks.
inline unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  const int64_t cap = int64_t{1} << 16;
  return static_cast<unsigned>(blocks < cap ? blocks : cap);
}

#define DP_FOR_EACH(i, n)                                                                \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// Sums of floats accumulate in double (long reductions stay accurate to float32);
// integer sums stay integers.
template <class T>
struct Accumulator {
  using type = double;
};
template <>
struct Accumulator<int64_t> {
  using type = int64_t;
};

// The type arithmetic on elements of T runs in: float for bfloat16, whose kernels widen
// each element, compute in float and round the result once when they store it; T itself
// otherwise.
template <class T>
struct Compute {
  using type = T;
};
template <>
struct Compute<BFloat16> {
  using type = float;
};

// An element as arithmetic type C (a bfloat16 widens exactly to float first: its
// conversion is explicit and yields float only).
template <class C, class T>
__device__ inline C load_as(T v) {
  return static_cast<C>(v);
}
template <class C>
__device__ inline C load_as(BFloat16 v) {
  return static_cast<C>(static_cast<float>(v));
}

template <class T>
__device__ inline T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in
// thread 0.
template <class T>
__device__ inline T block_sum(T v) {
  __shared__ T partial[32];
  v = warp_sum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / 32 ? partial[lane] : T(0);
  if (warp == 0) v = warp_sum(v);
  __syncthreads();  // partial may be reused by a following call
  return v;
}

// Records the first data error (see DataError); later ones are dropped.
__device__ inline void record_data_error(DataErrorSink sink, int op, int64_t position,
                                         int64_t value, int64_t bound) {
  if (atomicCAS(sink.claim, 0, 1) != 0) return;
  volatile DataError* r = sink.record;
  r->op = op;
  r->position = position;
  r->value = value;
  r->bound = bound;
  __threadfence_system();  // the fields reach the host before the code that announces them
  r->code = 1;
  __threadfence_system();
}

}  // namespace dp::cuda_plugin::kernels
