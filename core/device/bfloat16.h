// bfloat16: the upper 16 bits of a float32 (sign, 8 exponent bits, 7 stored mantissa
// bits). Widening to float32 is exact; narrowing rounds to nearest, ties to even, as
// PyTorch, oneDNN and CUDA's __float2bfloat16 do. NaN stays NaN (quiet, sign kept);
// values past the largest finite bfloat16 (3.39e38) round to infinity. The CUDA kernels
// include this too.
#pragma once

#include <cstdint>
#include <cstring>

#include "device/convert.h"

namespace dp {

DP_HOST_DEVICE inline float float_from_bits(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

DP_HOST_DEVICE inline uint32_t bits_of_float(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

DP_HOST_DEVICE inline float bf16_to_float(uint16_t bits) {
  return float_from_bits(static_cast<uint32_t>(bits) << 16);
}

DP_HOST_DEVICE inline uint16_t float_to_bf16(float f) {
  const uint32_t u = bits_of_float(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // NaN
  const uint32_t round = 0x7fffu + ((u >> 16) & 1u);  // to nearest, ties to the even result
  return static_cast<uint16_t>((u + round) >> 16);
}

// The element type kernels use for DType::kBFloat16: stored bits, converted through float.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  DP_HOST_DEVICE explicit BFloat16(float f) : bits(float_to_bf16(f)) {}
  DP_HOST_DEVICE explicit operator float() const { return bf16_to_float(bits); }
};

// From bfloat16 to any type: through float (convert_element's primary template handles
// the way in: a double is rounded to float first, an integer converts to float, then
// rounds; PyTorch converts the same way).
template <class To>
DP_HOST_DEVICE inline To convert_element(BFloat16 v) {
  return convert_element<To>(static_cast<float>(v));
}

}  // namespace dp
