#include "device/cpu/cpu_loops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "device/bfloat16.h"
#include "device/cpu/target_clones.h"
#include "device/element_math.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace dp::cpu_loops {

namespace {

// Stores to lines that other cores hold. An optimizer update writes weights that every
// CPU device's replica read in its forward, so each line sits in several cores' caches. A
// store to such a line waits while the other copies are invalidated, and the hardware
// prefetchers fetch lines to be read, not to be written, so those waits come one store
// after another. The optimizer loops below ask for write access (PREFETCHW) 4 KiB ahead
// instead, which overlaps the invalidations. On a 2-vCPU Xeon, dp-train's MLP over two CPU devices
// spent 321-343 us per step in the optimizer (DP_TRACE, bench/trace_summary.py), against 187-198 us
// over one device, where only one core had read the weights; with the hints, 167-184 us.

// Whether the CPU has PREFETCHW (CPUID 0x80000001, ECX bit 8); older ones go without.
bool has_prefetchw() {
#if defined(__x86_64__)
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(0x80000001u, &a, &b, &c, &d) != 0 && (c & (1u << 8)) != 0;
  }();
  return yes;
#else
  return false;
#endif
}

constexpr int64_t kWriteBlock = 256;   // elements done between two rounds of hints
constexpr int64_t kWriteAhead = 1024;  // how far ahead the hints reach (4 KiB of float32)

// Asks for write access to the lines of p[from, to) (indices within the array).
[[gnu::always_inline]] inline void hint_write(const float* p, int64_t from, int64_t to) {
#if defined(__x86_64__)
  for (int64_t i = from; i < to; i += 64 / sizeof(float))
    asm volatile("prefetchw %0" : : "m"(p[i]));
#else
  (void)p, (void)from, (void)to;
#endif
}

// Runs body(begin, end) over [0, n) in blocks of kWriteBlock elements, each block after
// hinting, kWriteAhead elements further on, the lines of the arrays in `outs` (nullptrs
// skipped) that the body will write.
template <class Body>
[[gnu::always_inline]] inline void in_write_blocks(int64_t n,
                                                   std::initializer_list<const float*> outs,
                                                   Body&& body) {
  const bool hint = has_prefetchw();
  if (hint) {
    for (const float* p : outs) {
      if (p) hint_write(p, 0, std::min(n, kWriteAhead));
    }
  }
  for (int64_t b = 0; b < n; b += kWriteBlock) {
    const int64_t e = std::min(n, b + kWriteBlock);
    if (hint && b + kWriteAhead < n) {
      for (const float* p : outs) {
        if (p) hint_write(p, b + kWriteAhead, std::min(n, e + kWriteAhead));
      }
    }
    body(b, e);
  }
}

}  // namespace

// Rows summed in float32 before their sum joins the double total: the rounding error
// grows with the rows of a block, not with all of them (a running float32 sum of 10^7
// rows of 0.1 was 8.8% off), and vectorised float adds still do most of the work.
constexpr int64_t kSumBlockRows = 64;

DP_CLONES
void sum_middle(const float* x, float* out, int64_t outer, int64_t mid, int64_t inner) {
  std::unique_ptr<double[]> total;
  if (inner > 1 && mid > kSumBlockRows) total.reset(new double[static_cast<size_t>(inner)]);
  for (int64_t o = 0; o < outer; ++o) {
    const float* xo = x + o * mid * inner;
    float* oo = out + o * inner;
    if (inner == 1) {
      double acc = 0;  // a long sum: keep the rounding error small
      for (int64_t m = 0; m < mid; ++m) acc += xo[m];
      oo[0] = static_cast<float>(acc);
      continue;
    }
    if (total) std::fill(total.get(), total.get() + inner, 0.0);
    for (int64_t m0 = 0; m0 < mid; m0 += kSumBlockRows) {
      const int64_t m1 = std::min(mid, m0 + kSumBlockRows);
      std::memcpy(oo, xo + m0 * inner, sizeof(float) * inner);
      for (int64_t m = m0 + 1; m < m1; ++m) {
        const float* row = xo + m * inner;
        for (int64_t i = 0; i < inner; ++i) oo[i] += row[i];
      }
      if (total) {
        for (int64_t i = 0; i < inner; ++i) total[i] += oo[i];
      }
    }
    if (total) {
      for (int64_t i = 0; i < inner; ++i) oo[i] = static_cast<float>(total[i]);
    }
  }
}

namespace {

// The loops behind binary_same_shape, one per aliasing case, so that each can promise
// the compiler what it needs to vectorise.
template <BinaryOp Op>
DP_CLONES void binary_distinct(const float* __restrict a, const float* __restrict b,
                               float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = elem::apply_binary(Op, a[i], b[i]);
}

template <BinaryOp Op>
DP_CLONES void binary_into_a(float* __restrict a, const float* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = elem::apply_binary(Op, a[i], b[i]);
}

template <BinaryOp Op>
DP_CLONES void binary_into_b(const float* __restrict a, float* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) b[i] = elem::apply_binary(Op, a[i], b[i]);
}

template <BinaryOp Op>
void binary_op(const float* a, const float* b, float* out, int64_t n) {
  if (a == b) {
    // x op x: every operand is the same array; the element is read before it is written.
    for (int64_t i = 0; i < n; ++i) out[i] = elem::apply_binary(Op, a[i], a[i]);
  } else if (out == a) {
    binary_into_a<Op>(out, b, n);
  } else if (out == b) {
    binary_into_b<Op>(a, out, n);
  } else {
    binary_distinct<Op>(a, b, out, n);
  }
}

}  // namespace

void binary_same_shape(BinaryOp op, const float* a, const float* b, float* out, int64_t n) {
  switch (op) {
    case BinaryOp::kAdd:
      return binary_op<BinaryOp::kAdd>(a, b, out, n);
    case BinaryOp::kSub:
      return binary_op<BinaryOp::kSub>(a, b, out, n);
    case BinaryOp::kMul:
      return binary_op<BinaryOp::kMul>(a, b, out, n);
    case BinaryOp::kDiv:
      return binary_op<BinaryOp::kDiv>(a, b, out, n);
  }
}

namespace {

// The SGD rules on a span of elements; `__restrict` lets each loop vectorise. Inlined, as
// are the loops around it and the callers' lambdas, into each cloned sgd and adam: a copy
// compiled apart would be the baseline instruction set's (no FMA), which both runs slower
// and rounds differently from one build to another.
[[gnu::always_inline]] inline void sgd_span(float* __restrict w, const float* __restrict g,
                                            float* __restrict buf, int64_t n, const SgdParams& p) {
  const float lr = static_cast<float>(p.lr), wd = static_cast<float>(p.weight_decay);
  const float mom = static_cast<float>(p.momentum), damp = static_cast<float>(1.0 - p.dampening);
  if (!buf) {
    for (int64_t i = 0; i < n; ++i) w[i] -= lr * (g[i] + wd * w[i]);
  } else if (p.first_step) {
    for (int64_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * w[i];
      buf[i] = d;
      w[i] -= lr * (p.nesterov ? d + mom * d : d);
    }
  } else if (p.nesterov) {
    for (int64_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * w[i];
      buf[i] = mom * buf[i] + damp * d;
      w[i] -= lr * (d + mom * buf[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float b = mom * buf[i] + damp * (g[i] + wd * w[i]);
      buf[i] = b;
      w[i] -= lr * b;
    }
  }
}

[[gnu::always_inline]] inline void adam_span(float* __restrict w, const float* __restrict g,
                                             float* __restrict m, float* __restrict v, int64_t n,
                                             const elem::AdamScalars<float>& a) {
  for (int64_t i = 0; i < n; ++i) elem::adam_update(w[i], g[i], m[i], v[i], a);
}

}  // namespace

namespace {

// The columns j in [0, ow) whose tap at kernel column c lands inside a row of width w:
// 0 <= j * sw - pw + c < w.
std::pair<int64_t, int64_t> inside_columns(const SingleChannelConv& g, int c) {
  const int64_t off = c - g.pw;  // the tap's column is j * sw + off
  int64_t lo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
  int64_t hi = g.w - 1 - off < 0 ? 0 : std::min<int64_t>(g.ow, (g.w - 1 - off) / g.sw + 1);
  lo = std::min(lo, hi);
  return {lo, hi};
}

template <int B>
[[gnu::always_inline]] inline void conv_single_channel_backward_weights_t(
    const float* x, const float* gy, float* gw, float* gb, const SingleChannelConv& g) {
  const int64_t blocks = (g.channels + B - 1) / B;
  const int taps = g.kh * g.kw;
  // Per channel block: taps sums of B lanes, then the bias's.
  std::vector<double> total(static_cast<size_t>(blocks * (taps + 1) * B), 0.0);
  std::vector<std::pair<int64_t, int64_t>> cols(static_cast<size_t>(g.kw));
  for (int c = 0; c < g.kw; ++c) cols[static_cast<size_t>(c)] = inside_columns(g, c);
  for (int64_t n = 0; n < g.n; ++n) {
    const float* image = x + n * g.h * g.w;
    for (int64_t cb = 0; cb < blocks; ++cb) {
      const float* plane = gy + (n * blocks + cb) * g.oh * g.ow * B;
      double* sums = total.data() + cb * (taps + 1) * B;
      for (int k = 0; k < taps; ++k) {
        const int r = k / g.kw, c = k % g.kw;
        const auto [lo, hi] = cols[static_cast<size_t>(c)];
        // Four running sums, columns j, j+1, j+2, j+3: one sum would wait on each add's
        // latency (4 cycles), and the loop ran 4x slower.
        float acc[4][B] = {};
        for (int64_t i = 0; i < g.oh; ++i) {
          const int64_t row = i * g.sh - g.ph + r;
          if (row < 0 || row >= g.h) continue;
          const float* xr = image + row * g.w;
          const int64_t off = c - g.pw;  // the tap's column is j * sw + off
          const float* gr = plane + i * g.ow * B;
          int64_t j = lo;
          for (; j + 4 <= hi; j += 4) {
            for (int u = 0; u < 4; ++u) {
              const float v = xr[(j + u) * g.sw + off];
              const float* gv = gr + (j + u) * B;
#pragma GCC unroll 1
              for (int l = 0; l < B; ++l) acc[u][l] += gv[l] * v;
            }
          }
          for (; j < hi; ++j) {
            const float v = xr[j * g.sw + off];
#pragma GCC unroll 1
            for (int l = 0; l < B; ++l) acc[0][l] += gr[j * B + l] * v;
          }
        }
        for (int l = 0; l < B; ++l)
          sums[k * B + l] += (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
      }
      if (gb) {
        float acc[4][B] = {};
        const int64_t positions = g.oh * g.ow;
        int64_t p = 0;
        for (; p + 4 <= positions; p += 4) {
          for (int u = 0; u < 4; ++u) {
#pragma GCC unroll 1
            for (int l = 0; l < B; ++l) acc[u][l] += plane[(p + u) * B + l];
          }
        }
        for (; p < positions; ++p) {
#pragma GCC unroll 1
          for (int l = 0; l < B; ++l) acc[0][l] += plane[p * B + l];
        }
        for (int l = 0; l < B; ++l)
          sums[taps * B + l] += (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
      }
    }
  }
  for (int64_t ch = 0; ch < g.channels; ++ch) {
    const double* sums = total.data() + (ch / B) * (taps + 1) * B;
    const int64_t l = ch % B;
    for (int k = 0; k < taps; ++k) gw[ch * taps + k] = static_cast<float>(sums[k * B + l]);
    if (gb) gb[ch] = static_cast<float>(sums[taps * B + l]);
  }
}

}  // namespace

DP_CLONES
void conv_single_channel_backward_weights(const float* x, const float* gy, float* gw, float* gb,
                                          const SingleChannelConv& g) {
  if (g.block == 16) {
    conv_single_channel_backward_weights_t<16>(x, gy, gw, gb, g);
  } else {
    conv_single_channel_backward_weights_t<8>(x, gy, gw, gb, g);
  }
}

// The element conversions are device/bfloat16.h's, inlined so the loops vectorise.
DP_CLONES
void bf16_to_float(const uint16_t* __restrict in, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = dp::bf16_to_float(in[i]);
}

DP_CLONES
void float_to_bf16(const float* __restrict in, uint16_t* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = dp::float_to_bf16(in[i]);
}

DP_CLONES
void round_to_bf16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = dp::bf16_to_float(dp::float_to_bf16(x[i]));
}

DP_CLONES
void relu_backward_bf16(const uint16_t* gy, const uint16_t* x, uint16_t* gx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = dp::bf16_to_float(gy[i]), v = dp::bf16_to_float(x[i]);
    gx[i] = dp::float_to_bf16(g * (v <= 0.f ? 0.f : 1.f));
  }
}

DP_CLONES
void sgd(float* w, const float* g, float* buf, int64_t n, const SgdParams& p) {
  in_write_blocks(
      n, {w, buf}, [&](int64_t b, int64_t e) __attribute__((always_inline)) {
        sgd_span(w + b, g + b, buf ? buf + b : nullptr, e - b, p);
      });
}

DP_CLONES
void adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamParams& p) {
  const elem::AdamScalars<float> a = elem::adam_scalars<float>(p);
  in_write_blocks(
      n, {w, m, v}, [&](int64_t b, int64_t e) __attribute__((always_inline)) {
        adam_span(w + b, g + b, m + b, v + b, e - b, a);
      });
}

namespace {

// Where lane block `o` of BlockedPool g starts in a plane of h x w pixels, and how far
// apart its pixels are: [outer][h][w][B] when channel-blocked, NHWC with groups blocks of
// B channels otherwise.
struct PoolLayout {
  int64_t groups, pixel;
  PoolLayout(const BlockedPool& g, int block)
      : groups(g.groups ? g.groups : 1), pixel(groups * block) {}
  int64_t start(int64_t o, int64_t h, int64_t w, int block) const {
    return (o / groups) * h * w * pixel + (o % groups) * block;
  }
};

// An element of x as float: float32 as it is, bfloat16 bits widened (exact).
[[gnu::always_inline]] inline float widen(float v) {
  return v;
}
[[gnu::always_inline]] inline float widen(uint16_t v) {
  return std::bit_cast<float>(static_cast<uint32_t>(v) << 16);
}

// Inlined into the cloned entry points below, so that each instruction set's copy is
// vectorised for it. KH, KW > 0 fix the window at compile time (2x2 runs twice as fast
// so), 0 takes it from g. T: x's element, float or bfloat16 bits (max_pool_blocked_any
// picks the instance).
template <int B, int KH, int KW, class T>
[[gnu::always_inline]] inline void max_pool_blocked_t(const T* x, float* y, uint8_t* argmax,
                                                      const BlockedPool& g) {
  const int kh = KH ? KH : g.kh, kw = KW ? KW : g.kw;
  const PoolLayout lay(g, B);
  const int64_t P = lay.pixel;
  for (int64_t o = 0; o < g.outer; ++o) {
    const T* in = x + lay.start(o, g.h, g.w, B);
    float* out = y + lay.start(o, g.oh, g.ow, B);
    uint8_t* arg = argmax ? argmax + lay.start(o, g.oh, g.ow, B) : nullptr;
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        const T* window = in + (i * g.sh * g.w + j * g.sw) * P;
        // The window's position as int32 lanes, the width of the floats, so that the
        // selects vectorise; bytes only when stored.
        float m[B];
        int32_t a[B];
        for (int l = 0; l < B; ++l) {
          m[l] = widen(window[l]);
          a[l] = 0;
        }
        for (int r = 0; r < kh; ++r) {
          for (int c = r == 0 ? 1 : 0; c < kw; ++c) {
            const T* v = window + (r * g.w + c) * P;
            const int32_t k = r * kw + c;
            // Not unrolled: GCC unrolls a 16-iteration loop before its vectoriser sees it,
            // and then leaves the lanes scalar.
#pragma GCC unroll 1
            for (int l = 0; l < B; ++l) {
              const float e = widen(v[l]);
              const bool take = (e > m[l]) | (e != e);  // NaN wins, as in PyTorch
              m[l] = take ? e : m[l];
              a[l] = take ? k : a[l];
            }
          }
        }
        const int64_t at = (i * g.ow + j) * P;
        for (int l = 0; l < B; ++l) out[at + l] = m[l];
        if (arg) {
          if (g.relu_mask) {  // a maximum of 0 gets kNoGradient
#pragma GCC unroll 1
            for (int l = 0; l < B; ++l) a[l] = m[l] > 0 ? a[l] : int32_t{kNoGradient};
          }
          for (int l = 0; l < B; ++l) arg[at + l] = static_cast<uint8_t>(a[l]);
        }
      }
    }
  }
}

template <class T>
[[gnu::always_inline]] inline void max_pool_blocked_any(const T* x, float* y, uint8_t* argmax,
                                                        const BlockedPool& g) {
  const bool two = g.kh == 2 && g.kw == 2;
  if (g.block == 16) {
    return two ? max_pool_blocked_t<16, 2, 2>(x, y, argmax, g)
               : max_pool_blocked_t<16, 0, 0>(x, y, argmax, g);
  }
  return two ? max_pool_blocked_t<8, 2, 2>(x, y, argmax, g)
             : max_pool_blocked_t<8, 0, 0>(x, y, argmax, g);
}

// g where `take`, else +0. As a select of the loaded g, GCC vectorises the lanes only with
// masked loads (AVX-512): for AVX2 it kept them scalar, and the blocked pooling's backward
// ran ~10x slower (perf, AVX2 EPYC). As bits it vectorises for both.
[[gnu::always_inline]] inline float masked(float g, bool take) {
  uint32_t bits;
  std::memcpy(&bits, &g, sizeof bits);
  bits &= 0u - static_cast<uint32_t>(take);
  std::memcpy(&g, &bits, sizeof g);
  return g;
}

template <int B, int KH, int KW>
[[gnu::always_inline]] inline void max_pool_blocked_backward_t(const float* gy,
                                                               const uint8_t* argmax, float* gx,
                                                               const BlockedPool& g) {
  const int kh = KH ? KH : g.kh, kw = KW ? KW : g.kw;
  const PoolLayout lay(g, B);
  const int64_t P = lay.pixel;
  // Windows side by side (stride = kernel) write each element they cover once; the rows
  // and columns past the last window are zeroed apart. Overlapping or gapped windows sum
  // into a zeroed gradient. Zeroing runs over whole images: in NHWC an image's lane blocks
  // interleave.
  const bool tiled = g.sh == kh && g.sw == kw;
  const int64_t images = g.outer / lay.groups, image = g.h * g.w * P;
  for (int64_t n = 0; n < images; ++n) {
    float* plane = gx + n * image;
    if (!tiled) {
      std::memset(plane, 0, sizeof(float) * static_cast<size_t>(image));
    } else {
      const int64_t rows = g.oh * g.sh, cols = g.ow * g.sw;
      for (int64_t r = 0; r < rows; ++r) {
        std::memset(plane + (r * g.w + cols) * P, 0,
                    sizeof(float) * static_cast<size_t>((g.w - cols) * P));
      }
      std::memset(plane + rows * g.w * P, 0,
                  sizeof(float) * static_cast<size_t>((g.h - rows) * g.w * P));
    }
  }
  for (int64_t o = 0; o < g.outer; ++o) {
    float* plane = gx + lay.start(o, g.h, g.w, B);
    const int64_t out_start = lay.start(o, g.oh, g.ow, B);
    for (int64_t i = 0; i < g.oh; ++i) {
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t at = out_start + (i * g.ow + j) * P;
        const float* grad = gy + at;
        const uint8_t* a = argmax + at;
        float* window = plane + (i * g.sh * g.w + j * g.sw) * P;
        int32_t pos[B];
        for (int l = 0; l < B; ++l) pos[l] = a[l];
        for (int r = 0; r < kh; ++r) {
          for (int c = 0; c < kw; ++c) {
            float* d = window + (r * g.w + c) * P;
            const int32_t k = r * kw + c;
            if (tiled) {
              // 0 + g, as PyTorch adds into zeros: a -0 gradient lands as +0.
#pragma GCC unroll 1
              for (int l = 0; l < B; ++l) d[l] = 0.f + masked(grad[l], pos[l] == k);
            } else {
#pragma GCC unroll 1
              for (int l = 0; l < B; ++l) d[l] += masked(grad[l], pos[l] == k);
            }
          }
        }
      }
    }
  }
}

}  // namespace

DP_CLONES
void max_pool_blocked(const float* x, float* y, uint8_t* argmax, const BlockedPool& g) {
  max_pool_blocked_any(x, y, argmax, g);
}

DP_CLONES
void max_pool_blocked(const uint16_t* x, float* y, uint8_t* argmax, const BlockedPool& g) {
  max_pool_blocked_any(x, y, argmax, g);
}

DP_CLONES
void max_pool_blocked_backward(const float* gy, const uint8_t* argmax, float* gx,
                               const BlockedPool& g) {
  const bool two = g.kh == 2 && g.kw == 2;
  if (g.block == 16) {
    return two ? max_pool_blocked_backward_t<16, 2, 2>(gy, argmax, gx, g)
               : max_pool_blocked_backward_t<16, 0, 0>(gy, argmax, gx, g);
  }
  return two ? max_pool_blocked_backward_t<8, 2, 2>(gy, argmax, gx, g)
             : max_pool_blocked_backward_t<8, 0, 0>(gy, argmax, gx, g);
}

namespace {

// exp_f32's body, inlined into each loop so that the loop vectorises.
inline float exp_inline(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  // ln 2 split in two: n * kLn2Hi is exact for |n| < 2^10, so r = x - n ln 2 keeps its
  // low bits.
  constexpr float kLn2Hi = 0.693145751953125f;
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;
  constexpr float kMin = -87.33654f;  // ln of the smallest normal float32
  constexpr float kMax = 88.72283f;   // ln of the largest float32
  // Clamped so that n fits the exponent; the selects at the end restore the edges.
  const float xc = x > kMin ? (x < kMax ? x : kMax) : kMin;
  const float n = __builtin_rintf(xc * kLog2e);
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  // e^r = 1 + r + r^2/2! + ... + r^7/7!, by Horner.
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n through the exponent bits; n in [-126, 128], so n + 127 in [1, 255].
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float y = n > 127.0f ? (p * 0x1p127f) * 2.0f : p * scale;  // 2^128 is no float
  if (x != x) return x;
  if (x < kMin) return 0.0f;
  if (x > kMax) return __builtin_inff();
  return y;
}

DP_CLONES void exp_array(const float* __restrict x, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_inline(x[i]);
}

}  // namespace

float exp_f32(float x) {
  return exp_inline(x);
}

void log_softmax_rows(const float* x, float* out, int64_t rows, int64_t cols) {
  // out = x - row max first; then the exponentials of all of it in one vectorised pass.
  // Not zero-filled: every element is written below before it is read.
  const std::unique_ptr<float[]> e(new float[static_cast<size_t>(rows * cols)]);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* o = out + r * cols;
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, xr[c]);
    for (int64_t c = 0; c < cols; ++c) o[c] = xr[c] - mx;
  }
  exp_array(out, e.get(), rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += e[r * cols + c];
    const float log_sum = std::log(sum);
    float* o = out + r * cols;
    for (int64_t c = 0; c < cols; ++c) o[c] -= log_sum;
  }
}

void log_softmax_backward_rows(const float* gy, const float* y, float* gx, int64_t rows,
                               int64_t cols) {
  exp_array(y, gx, rows * cols);  // gx = softmax, then finished row by row
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gy + r * cols;
    float* o = gx + r * cols;
    float dot = 0;
    for (int64_t c = 0; c < cols; ++c) dot += g[c];
    for (int64_t c = 0; c < cols; ++c) o[c] = g[c] - o[c] * dot;
  }
}

}  // namespace dp::cpu_loops
