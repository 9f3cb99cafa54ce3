// DLPack exchange (v0.6 ABI, DLManagedTensor): zero-copy export of a tensor's memory to
// NumPy, PyTorch and others, and zero-copy import of theirs.
#pragma once

#include <memory>

#include "tensor/tensor.h"

struct DLManagedTensor;

namespace dp {

class Context;

// A DLManagedTensor that keeps t's storage alive until its deleter is called.
DLManagedTensor* to_dlpack(const Tensor& t);

// Wraps src's memory. On success the tensor owns src (its deleter runs when the memory is
// no longer used); on failure (unsupported device, dtype or strides) nothing is taken.
Tensor from_dlpack(const std::shared_ptr<Context>& ctx, DLManagedTensor* src);

}  // namespace dp
