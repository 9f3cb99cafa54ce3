// Dropout with a counter-based mask, so a seed gives the same mask on every device type.
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

Tensor dropout(const Tensor& x, double p, bool training, uint64_t seed) {
  check_float(x, "dropout", "x");
  DP_CHECK(p >= 0 && p <= 1, kInvalidArgument, "dropout: p = " << p << " must be in [0, 1]");
  if (!training || p == 0) return x;
  return on_device(x, [&] {
    Tensor mask = empty_like(x);
    if (p >= 1) {
      backend_of(x).fill(dev(x), mask.kview(), 0.0);
    } else if (mask.numel() > 0) {
      backend_of(x).dropout_mask(dev(x), mask.kview(), p, seed);
    }
    return mul(x, mask);  // the gradient is g * mask, through mul's backward
  });
}

}  // namespace dp::ops
