// Autocast's policy, PyTorch's: at entry, an op of the lower-precision list casts its
// inputs with lower(), an op of the float32 list with fp32(), and the arithmetic ops
// promote mixed operands with promote(). Casts are differentiable (to_dtype), so
// gradients return to a float32 parameter in float32. One exception to PyTorch: linear
// casts a float32 weight and bias with lower_untracked() where it can give them their
// gradients in float32 itself (unrounded: ops/matmul.cc, docs/autocast.md). Each helper
// returns its input untouched when autocast is off (autograd/autocast_mode.h), and never
// casts float64 or integer tensors. The lists are in docs/autocast.md, beside PyTorch's;
// a test runs every listed op and checks the dtype it computes in.
//
// Lower precision: linear, matmul, conv2d, conv2d_relu_pool2d.
// float32: softmax, log_softmax, cross_entropy, nll_loss, mse_loss, sum, mean,
//          batch_norm.
// Promote: add, sub, mul, div.
//
// Kept copies (CPU devices): a float32 leaf tensor that requires grad (a parameter, as in
// PyTorch's autocast cache) that lower() casts keeps its copy on its memory's root
// storage, with the memory's version counter at the time. Casts of the same memory reuse
// it while the version is unchanged: DataParallel's replicas on other CPU devices (which
// alias the parameters' memory), every evaluation batch, and the next step, because an
// optimizer step writes the copy along with the parameter (copy_to_refresh). So a
// training step casts no weights; the values are those of a fresh cast. The cost is the
// copies' memory, half the parameters' in bfloat16; a copy that no cast used between two
// optimizer steps is let go. One copy per storage (parameters that are views of one
// buffer keep none across a step). None is kept of memory that can change behind the
// version counter (Storage::exposed), nor on accelerators (whose replicas are copies, not
// aliases); DP_AUTOCAST_CACHE=0 keeps none at all. A cast compares the counter before and
// after it runs, and an optimizer step bumps it again once its values are in place, so a
// copy made during a step, or during a write that begins meanwhile, is not kept as
// current; a cast that starts in the middle of another thread's write reads a mix of
// values, as any read during a write does, and keeps it until the next write.
#pragma once

#include <cstdint>
#include <limits>

#include "tensor/tensor.h"

namespace dp {

// A kept copy, on the root storage of the memory it was cast from (Storage::cast_copy).
struct CastCopy {
  static constexpr uint64_t kOutOfDate = std::numeric_limits<uint64_t>::max();
  const void* data;  // the part of the memory cast: its first element and count
  int64_t numel;
  DType dtype;       // the copy's
  uint64_t version;  // of the memory when the copy was made, or kOutOfDate
  bool used;         // handed out since it was made or last refreshed
  Tensor copy;       // contiguous, no history; handed out through ops::to_dtype_from only

  // Whether the copy is of t's memory (t itself, or another view of the same elements).
  bool of(const Tensor& t) const { return data == t.data() && numel == t.numel(); }
};

}  // namespace dp

namespace dp::ops::autocast {

// t in the autocast dtype when autocast is on and t is float32.
Tensor lower(const Tensor& t);
// lower(t) without the cast's autograd history, for an op whose backward computes t's
// gradient in t's own dtype itself (and whose graph edge is t's): linear's float32
// weight gradient straight from bfloat16 operands.
Tensor lower_untracked(const Tensor& t);
// t in float32 when autocast is on and t is of a lower-precision floating dtype.
Tensor fp32(const Tensor& t);
// When autocast is on and one of a and b is bfloat16 and the other float32 or float64:
// the bfloat16 one cast to the other's dtype.
void promote(Tensor& a, Tensor& b);

// For an in-place update of t (an optimizer step): t's kept copy, when there is one of
// all of t that nobody else holds; the caller writes it along with t, then calls
// refreshed(). It counts as out of date until then. Else an undefined tensor, and a copy
// that others still hold (a graph kept for another backward) is let go: they keep its values.
Tensor copy_to_refresh(const Tensor& t);
// Marks `copy` (from copy_to_refresh(t)), now holding t's values, as current: as of
// `version`, t's version once its values were in place (nothing, if t has been written
// since).
void refreshed(const Tensor& t, const Tensor& copy, uint64_t version);

}  // namespace dp::ops::autocast
