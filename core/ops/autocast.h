// Autocast's policy, PyTorch's: at entry, an op of the lower-precision list casts its
// inputs with lower(), an op of the float32 list with fp32(), and the arithmetic ops
// promote mixed operands with promote(). Casts are differentiable (to_dtype), so
// gradients return to a float32 parameter in float32. Each helper returns its input
// untouched when autocast is off (autograd/autocast_mode.h), and never casts float64 or
// integer tensors. The lists are in docs/autocast.md, beside PyTorch's; a test runs every
// listed op and checks the dtype it computes in.
//
// Lower precision: linear, matmul, conv2d, conv2d_relu_pool2d.
// float32: softmax, log_softmax, cross_entropy, nll_loss, mse_loss, sum, mean,
//          batch_norm.
// Promote: add, sub, mul, div.
#pragma once

#include "tensor/tensor.h"

namespace dp::ops::autocast {

// t in the autocast dtype when autocast is on and t is float32.
Tensor lower(const Tensor& t);
// t in float32 when autocast is on and t is of a lower-precision floating dtype.
Tensor fp32(const Tensor& t);
// When autocast is on and one of a and b is bfloat16 and the other float32 or float64:
// the bfloat16 one cast to the other's dtype.
void promote(Tensor& a, Tensor& b);

}  // namespace dp::ops::autocast
