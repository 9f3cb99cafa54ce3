// Shapes: sizes of a contiguous row-major tensor, and the checks every creator runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dp {

using Shape = std::vector<int64_t>;

// Product of the sizes; throws kOutOfRange when it does not fit in int64 or the byte
// count does not fit in size_t, naming `what` (e.g. "shape").
int64_t checked_numel(const Shape& shape, size_t elem_size, const char* what = "shape");

// Product of the sizes, for shapes already checked.
inline int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// "[2, 3, 4]"
std::string shape_str(const Shape& shape);

// Normalises a possibly negative dim against ndim; throws kOutOfRange naming `what`.
int wrap_dim(int64_t dim, int ndim, const char* what = "dim");

// Broadcast shape of a and b (NumPy rules); throws kShapeMismatch naming both.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace dp
