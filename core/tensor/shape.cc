#include "tensor/shape.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "device/backend.h"
#include "error.h"

namespace dp {

int64_t checked_numel(const Shape& shape, size_t elem_size, const char* what) {
  DP_CHECK(shape.size() <= static_cast<size_t>(kMaxDims), kOutOfRange,
           what << " has " << shape.size() << " dimensions but at most " << kMaxDims
                << " are supported");
  // The product of the non-zero sizes must fit too: a shape derived from an empty one by
  // dropping its zeros (the result of reducing over them) would otherwise overflow.
  const bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
  int64_t nonzero = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[i];
    DP_CHECK(s >= 0, kInvalidArgument, what << "[" << i << "] = " << s << " is negative");
    if (s == 0) continue;
    if (nonzero > std::numeric_limits<int64_t>::max() / s) {
      DP_THROW(kOutOfRange, what << " " << shape_str(shape)
                                 << (empty ? ": its non-zero sizes multiply to more than fits "
                                             "in 64 bits"
                                           : " has more elements than fit in 64 bits"));
    }
    nonzero *= s;
  }
  const int64_t n = empty ? 0 : nonzero;
  if (elem_size > 0 &&
      static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / elem_size / 2) {
    DP_THROW(kOutOfRange,
             what << " " << shape_str(shape) << " needs more bytes than fit in memory");
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

int wrap_dim(int64_t dim, int ndim, const char* what) {
  const int64_t lo = ndim == 0 ? -1 : -ndim;
  const int64_t hi = ndim == 0 ? 0 : ndim - 1;
  DP_CHECK(dim >= lo && dim <= hi, kOutOfRange,
           what << " = " << dim << " is out of range for a tensor with " << ndim
                << " dimensions (expected " << lo << " to " << hi << ")");
  return static_cast<int>(dim < 0 ? dim + (ndim == 0 ? 1 : ndim) : dim);
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    DP_CHECK(sa == sb || sa == 1 || sb == 1, kShapeMismatch,
             "shapes " << shape_str(a) << " and " << shape_str(b)
                       << " cannot be broadcast together (dimension " << i << ": " << sa << " vs "
                       << sb << ")");
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

}  // namespace dp
