#include "ops/autocast.h"

#include "autograd/autocast_mode.h"
#include "context/context.h"
#include "ops/ops.h"

namespace dp::ops::autocast {

Tensor lower(const Tensor& t) {
  if (!AutocastMode::enabled() || !t.defined() || t.dtype() != DType::kFloat32) return t;
  t.context()->note_autocast(t.device());
  return to_dtype(t, AutocastMode::dtype());
}

Tensor fp32(const Tensor& t) {
  if (!AutocastMode::enabled() || !t.defined() || t.dtype() != DType::kBFloat16) return t;
  return to_dtype(t, DType::kFloat32);
}

void promote(Tensor& a, Tensor& b) {
  if (!AutocastMode::enabled() || !a.defined() || !b.defined() || a.dtype() == b.dtype()) return;
  // A bfloat16 operand takes the other's float32 or float64; any other mix is left to the
  // op's own check, which names it.
  if (a.dtype() == DType::kBFloat16 && is_floating(b.dtype())) {
    a = to_dtype(a, b.dtype());
  } else if (b.dtype() == DType::kBFloat16 && is_floating(a.dtype())) {
    b = to_dtype(b, a.dtype());
  }
}

}  // namespace dp::ops::autocast
