// The arithmetic the backward engine does on gradients: summing the gradients a node
// receives, adding a gradient into a leaf's grad, and the implicit gradient of a
// one-element root. Plain kernels through the Backend interface, recording nothing, so
// autograd does not depend on the differentiable ops built above it. Copies of gradients
// (to another device, or a clone) are tensor/copy.h's copy_to_device.
#pragma once

#include <memory>

#include "tensor/tensor.h"

namespace dp {

// a + b, two gradients of one tensor: a new tensor on a's device, with a's dtype and the
// broadcast shape. Throws kDtypeMismatch, kDeviceMismatch or kShapeMismatch when the two
// do not match. Runs on the device's worker.
Tensor grad_sum(const Tensor& a, const Tensor& b);

// grad += g in place (a leaf's accumulated gradient). g's shape must broadcast to grad's;
// CPU devices share memory, so grad and g may sit on two CPU devices. Bumps grad's
// version. Runs on grad's device's worker.
void grad_accumulate_(const Tensor& grad, const Tensor& g);

// A tensor of ones: the gradient a one-element root gets when none is given.
Tensor grad_ones(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype,
                 Device device);

}  // namespace dp
