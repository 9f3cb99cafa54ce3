#include "device/torch_generator.h"

#include <cmath>

namespace dp {

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

double unit_double(uint64_t bits) {
  return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * 0x1p-53;
}

}  // namespace

void TorchGenerator::uniform(float* out, size_t n, double from, double to) {
  const float lo = static_cast<float>(from), hi = static_cast<float>(to);
  const float range = hi - lo;  // in float, as PyTorch's distribution of float subtracts
  for (size_t i = 0; i < n; ++i) {
    const float u = static_cast<float>(random() & ((1u << 24) - 1)) * 0x1p-24f;  // exact
    out[i] = std::fma(u, range, lo);
  }
}

void TorchGenerator::uniform(double* out, size_t n, double from, double to) {
  for (size_t i = 0; i < n; ++i) out[i] = std::fma(unit_double(random64()), to - from, from);
}

template <class T>
void TorchGenerator::normal_blocks(T* out, size_t n, double mean, double std) {
  auto transform16 = [&](T* d) {
    for (int j = 0; j < 8; ++j) {
      const T u1 = T(1) - d[j];  // [0, 1) to (0, 1] for the logarithm
      const T u2 = d[j + 8];
      const T radius = std::sqrt(T(-2) * std::log(u1));
      const T theta = static_cast<T>(kTwoPi * u2);
      d[j] = std::fma(radius * std::cos(theta), T(std), T(mean));
      d[j + 8] = std::fma(radius * std::sin(theta), T(std), T(mean));
    }
  };
  uniform(out, n, 0.0, 1.0);
  for (size_t i = 0; i + 16 <= n; i += 16) transform16(out + i);
  if (n % 16 != 0) {
    T* last = out + n - 16;
    uniform(last, 16, 0.0, 1.0);
    transform16(last);
  }
}

template <class T>
void TorchGenerator::normal_pairs(T* out, size_t n, double mean, double std) {
  for (size_t i = 0; i < n; ++i) {
    double z;
    if (next_normal_) {
      z = *next_normal_;
      next_normal_.reset();
    } else {
      const double u1 = unit_double(random64()), u2 = unit_double(random64());
      const double radius = std::sqrt(-2.0 * std::log(1.0 - u2));
      const double theta = kTwoPi * u1;
      next_normal_ = radius * std::sin(theta);
      z = radius * std::cos(theta);
    }
    out[i] = static_cast<T>(std::fma(z, std, mean));
  }
}

void TorchGenerator::normal(float* out, size_t n, double mean, double std) {
  n >= 16 ? normal_blocks(out, n, mean, std) : normal_pairs(out, n, mean, std);
}

void TorchGenerator::normal(double* out, size_t n, double mean, double std) {
  n >= 16 ? normal_blocks(out, n, mean, std) : normal_pairs(out, n, mean, std);
}

}  // namespace dp
