// Hand-written float32 loops for the hot work oneDNN has no fast primitive for (column
// and row sums, the optimizer updates). Compiled for several instruction sets and picked
// at load time for the CPU it runs on (GCC's target_clones), so a generic x86-64 build
// still runs AVX-512 code where the machine has it.
#pragma once

#include <cstdint>

#include "device/backend.h"

namespace dp::cpu_loops {

// out[o, i] = sum over m of x[o, m, i], x seen as [outer, mid, inner].
void sum_middle(const float* x, float* out, int64_t outer, int64_t mid, int64_t inner);

// out[i] = a[i] op b[i] for i < n, where out is a, b, or an array overlapping neither
// (the caller checks). oneDNN's binary primitive costs ~2 us a call to set up, which is
// the whole cost for the small gradient sums of a backward pass.
void binary_same_shape(BinaryOp op, const float* a, const float* b, float* out, int64_t n);

// In-place SGD and Adam updates with PyTorch's rules (see ref::sgd_step, ref::adam_step).
void sgd(float* w, const float* g, float* buf, int64_t n, const SgdParams& p);
void adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamParams& p);

}  // namespace dp::cpu_loops
