// One element converted to another dtype, for the cast kernels of every backend (the CUDA
// kernels include this too). A float converted to an integer type is truncated toward
// zero and saturates at the type's limits, and NaN becomes 0: C and C++ leave those
// conversions undefined. Everything else converts as static_cast does (int64 to uint8
// keeps the low 8 bits, as PyTorch does).
#pragma once

#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define DP_HOST_DEVICE __host__ __device__
#else
#define DP_HOST_DEVICE
#endif

namespace dp {

// The integer types a float may be converted to: [min, max], and the doubles at and
// beyond which a value saturates (every double strictly between them truncates to a
// value in range).
template <class T>
struct IntLimits;
template <>
struct IntLimits<int64_t> {
  static constexpr int64_t min = INT64_MIN, max = INT64_MAX;
  static constexpr double low = -9223372036854775808.0, high = 9223372036854775808.0;  // 2^63
};
template <>
struct IntLimits<uint8_t> {
  static constexpr uint8_t min = 0, max = 255;
  static constexpr double low = 0.0, high = 256.0;
};

template <class To, class From>
DP_HOST_DEVICE inline To convert_element(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (!(v == v)) return To(0);  // NaN
    if (v <= IntLimits<To>::low) return IntLimits<To>::min;
    if (v >= IntLimits<To>::high) return IntLimits<To>::max;
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace dp
