// Helpers shared by the op implementations: argument checks that name the op and the
// bad value, and running on the right worker.
#pragma once

#include <string>
#include <vector>

#include "autograd/function.h"
#include "context/context.h"
#include "error.h"
#include "tensor/copy.h"
#include "tensor/tensor.h"

namespace dp::ops {

inline Backend& backend_of(const Tensor& t) {
  return t.context()->backend(t.device().type);
}

// Runs f on the worker of t's device (inline when already there).
template <class F>
auto on_device(const Tensor& t, F&& f) {
  return t.context()->run(t.device(), std::forward<F>(f));
}

inline void check_defined(const Tensor& t, const char* op, const char* arg) {
  DP_CHECK(t.defined(), kInvalidArgument, op << ": " << arg << " is missing (NULL)");
}

inline void check_float(const Tensor& t, const char* op, const char* arg) {
  check_defined(t, op, arg);
  DP_CHECK(
      is_floating(t.dtype()), kDtypeMismatch,
      op << ": " << arg << " must be float32, float64 or bfloat16, got " << dtype_name(t.dtype()));
}

inline void check_dtype(const Tensor& t, DType want, const char* op, const char* arg) {
  check_defined(t, op, arg);
  DP_CHECK(
      t.dtype() == want, kDtypeMismatch,
      op << ": " << arg << " must be " << dtype_name(want) << ", got " << dtype_name(t.dtype()));
}

// b matches a's dtype and device.
inline void check_same(const Tensor& a, const Tensor& b, const char* op, const char* arg_a,
                       const char* arg_b) {
  check_defined(b, op, arg_b);
  DP_CHECK(a.dtype() == b.dtype(), kDtypeMismatch,
           op << ": " << arg_a << " is " << dtype_name(a.dtype()) << " but " << arg_b << " is "
              << dtype_name(b.dtype()));
  DP_CHECK(a.device() == b.device(), kDeviceMismatch,
           op << ": " << arg_a << " is on " << a.device().str() << " but " << arg_b << " is on "
              << b.device().str());
}

inline void check_ndim(const Tensor& t, int ndim, const char* op, const char* arg) {
  DP_CHECK(t.ndim() == ndim, kShapeMismatch,
           op << ": " << arg << " must have " << ndim << " dimensions, got shape "
              << shape_str(t.shape()));
}

inline Tensor empty_like(const Tensor& t, const Shape& shape) {
  return Tensor::empty(t.context(), shape, t.dtype(), t.device());
}
inline Tensor empty_like(const Tensor& t) {
  return empty_like(t, t.shape());
}

inline int dev(const Tensor& t) {
  return t.device().index;
}

// The sum of `sizes` (split's sizes, DataParallel's chunk_sizes), named prefix + name in
// errors ("split: sizes[1] = -1 is negative"): kInvalidArgument for a negative size,
// `overflow` for a sum past 2^63.
int64_t sum_of_sizes(const std::vector<int64_t>& sizes, const char* prefix, const char* name,
                     Code overflow);

// A node's saved tensors, unpacked with the node's name for the error message.
#define DP_UNPACK(saved) (saved).unpack(name())

}  // namespace dp::ops
