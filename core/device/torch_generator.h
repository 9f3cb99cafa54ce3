// The random stream of PyTorch's CPU generator: a context seeded with s initialises its
// layers with the numbers torch.manual_seed(s) gives a PyTorch model that makes the same
// layers in the same order. The engine is the 32-bit Mersenne Twister (MT19937) seeded
// with the seed's low 32 bits, as torch.manual_seed seeds it; on top of it are PyTorch's
// conversions, as torch 1.13's AVX2 kernels compute them on x86 (one rounding for each
// multiply-add, hence std::fma; its scalar build rounds twice and differs in the last
// bit), checked against it by tests/core/test_torch_random.cc and the Python parity tests:
// - uniform, float32: 24 bits of one draw, u = bits / 2^24, and
//   fma(u, float(to) - float(from), float(from)) in float;
// - uniform, float64: 53 bits of two draws (the first the high word), in double;
// - normal, 16 values or more: uniform [0, 1) values first, then Box-Muller over each
//   block of 16 (the first 8 with the last 8), the last block drawn anew when the count
//   is not a multiple of 16. PyTorch computes float32 blocks with vectorised log and
//   cos/sin, so float32 values differ from its by up to ~2e-6 (the stream stays in step);
//   float64 values are its own;
// - normal, fewer than 16 values: Box-Muller in double per pair of draws, keeping the
//   second value of each pair for the next call, as PyTorch's generator does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>

namespace dp {

class TorchGenerator {
 public:
  explicit TorchGenerator(uint64_t seed) : engine_(static_cast<uint32_t>(seed)) {}

  uint32_t random() { return static_cast<uint32_t>(engine_()); }
  uint64_t random64() {
    const uint64_t hi = random();
    return hi << 32 | random();
  }

  void uniform(float* out, size_t n, double from, double to);
  void uniform(double* out, size_t n, double from, double to);
  void normal(float* out, size_t n, double mean, double std);
  void normal(double* out, size_t n, double mean, double std);

 private:
  template <class T>
  void normal_blocks(T* out, size_t n, double mean, double std);
  template <class T>
  void normal_pairs(T* out, size_t n, double mean, double std);

  std::mt19937 engine_;
  std::optional<double> next_normal_;  // the second value of the last pair (fewer than 16)
};

}  // namespace dp
