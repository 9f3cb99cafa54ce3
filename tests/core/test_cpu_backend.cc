// The CPU backend: oneDNN float32 kernels against the float64 reference loops, one
// thread per device, and several devices computing at once.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "context/context.h"
#include "device/bf16_staging.h"
#include "device/bfloat16.h"
#include "device/cpu/cpu_allocator.h"
#include "device/cpu/cpu_backend.h"
#include "device/cpu/cpu_dnnl_device.h"
#include "device/cpu/cpu_loops.h"
#include "device/cpu/cpu_reference.h"
#include "device/element_math.h"
#include "error.h"
#include "tensor/shape.h"
#include "test_context.h"

namespace dp {
namespace {

std::shared_ptr<Context> make_ctx(int devices) {
  return testing_util::cpu_context(devices);
}

KView view(void* data, DType t, Shape s) {
  KView v;
  v.data = data;
  v.dtype = t;
  v.ndim = static_cast<int>(s.size());
  for (size_t i = 0; i < s.size(); ++i) v.shape[i] = s[i];
  return v;
}

std::vector<float> pseudo_random(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(elem::uniform01(seed, i) * 2 - 1);
  return v;
}

// C = A @ B^T in float64 from float32 inputs, the way Linear computes.
std::vector<double> reference_matmul_bt(const std::vector<float>& a, const std::vector<float>& b,
                                        int64_t M, int64_t N, int64_t K) {
  std::vector<double> c(M * N, 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += double(a[i * K + k]) * double(b[j * K + k]);
      c[i * N + j] = acc;
    }
  return c;
}

TEST(CpuBackend, MatmulMatchesTheFloat64ReferenceWithTransposedWeights) {
  auto ctx = make_ctx(1);
  const int64_t M = 37, N = 53, K = 71;
  auto a = pseudo_random(M * K, 1), b = pseudo_random(N * K, 2);
  std::vector<float> c(M * N);
  MatmulParams p;
  p.trans_b = true;
  ctx->run(cpu(0), [&] {
    ctx->backend(DeviceType::kCpu)
        .matmul(0, view(a.data(), DType::kFloat32, {M, K}), view(b.data(), DType::kFloat32, {N, K}),
                nullptr, view(c.data(), DType::kFloat32, {M, N}), p);
  });
  const auto want = reference_matmul_bt(a, b, M, N, K);
  for (int64_t i = 0; i < M * N; ++i) EXPECT_NEAR(c[i], want[i], 1e-4) << "element " << i;
}

TEST(CpuBackend, PrimitivesAreCachedPerShape) {
  // A bias broadcast over rows is a oneDNN binary primitive (same-shape operands take a
  // plain loop; see SameShapeArithmeticIsExactForEveryAliasing).
  auto ctx = make_ctx(1);
  auto& cpu_backend =
      static_cast<CpuBackend&>(static_cast<Bf16Staging&>(ctx->backend(DeviceType::kCpu)).inner());
  std::vector<float> a(16, 1.f), b(4, 2.f), c(16);
  auto add = [&] {
    cpu_backend.binary(0, BinaryOp::kAdd, view(a.data(), DType::kFloat32, {4, 4}),
                       view(b.data(), DType::kFloat32, {1, 4}),
                       view(c.data(), DType::kFloat32, {4, 4}));
    return cpu_backend.primitive_cache_size(0);
  };
  const size_t first = ctx->run(cpu(0), add);
  const size_t second = ctx->run(cpu(0), add);
  EXPECT_EQ(first, 1u);
  EXPECT_EQ(second, 1u);
  EXPECT_FLOAT_EQ(c[5], 3.f);
}

TEST(CpuBackend, SameShapeArithmeticIsExactForEveryAliasing) {
  // float32 +, -, *, / are correctly rounded, and so is the float64 result rounded to
  // float32: every element must be equal, whether the output is a fresh array, the first
  // operand, the second, or both operands are one array. 3003 elements: vector body and
  // remainder.
  auto ctx = make_ctx(1);
  Backend& backend = ctx->backend(DeviceType::kCpu);
  const int64_t n = 3003;
  const auto x = pseudo_random(n, 11), y0 = pseudo_random(n, 12);
  std::vector<float> y(y0);
  for (float& v : y) v += v >= 0 ? 0.25f : -0.25f;  // no divisor near zero
  for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv}) {
    auto exact = [op](float a, float b) {
      return static_cast<float>(elem::apply_binary(op, double(a), double(b)));
    };
    std::vector<float> fresh(n), into_a(x), into_b(y), both(x);
    ctx->run(cpu(0), [&] {
      auto v = [&](std::vector<float>& d) { return view(d.data(), DType::kFloat32, {3, 1001}); };
      std::vector<float> xa(x), ya(y);
      backend.binary(0, op, v(xa), v(ya), v(fresh));
      backend.binary(0, op, v(into_a), v(ya), v(into_a));
      backend.binary(0, op, v(xa), v(into_b), v(into_b));
      backend.binary(0, op, v(both), v(both), v(both));
    });
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(fresh[i], exact(x[i], y[i])) << "op " << int(op) << " element " << i;
      ASSERT_EQ(into_a[i], exact(x[i], y[i])) << "op " << int(op) << " element " << i;
      ASSERT_EQ(into_b[i], exact(x[i], y[i])) << "op " << int(op) << " element " << i;
      ASSERT_EQ(both[i], exact(x[i], x[i])) << "op " << int(op) << " element " << i;
    }
  }
}

// Distance in units in the last place between two finite float32 of one sign.
int64_t ulps(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return std::llabs(static_cast<int64_t>(ia) - ib);
}

TEST(CpuLoops, ExpIsWithinTwoUlpOfTheExactValueAndKeepsItsEdges) {
  // Every 37th float32 from -87.3 to 88.7 (about 15 million values), against exp in
  // float64 rounded once to float32.
  int64_t worst = 0;
  float worst_at = 0;
  for (float lo : {-87.3f, 0.0f}) {
    const float hi = lo < 0 ? 0.0f : 88.7f;
    int32_t bits, end;
    const float from = lo < 0 ? hi : lo, to = lo < 0 ? lo : hi;  // walk away from 0
    std::memcpy(&bits, &from, sizeof bits);
    std::memcpy(&end, &to, sizeof end);
    for (; bits <= end; bits += 37) {
      float x;
      std::memcpy(&x, &bits, sizeof x);
      const float want = static_cast<float>(std::exp(static_cast<double>(x)));
      const int64_t d = ulps(cpu_loops::exp_f32(x), want);
      if (d > worst) {
        worst = d;
        worst_at = x;
      }
    }
  }
  EXPECT_LE(worst, 2) << "at x = " << worst_at;
  EXPECT_EQ(cpu_loops::exp_f32(0.0f), 1.0f);
  EXPECT_EQ(cpu_loops::exp_f32(-100.0f), 0.0f);
  EXPECT_EQ(cpu_loops::exp_f32(-INFINITY), 0.0f);
  EXPECT_EQ(cpu_loops::exp_f32(89.0f), INFINITY);
  EXPECT_EQ(cpu_loops::exp_f32(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(cpu_loops::exp_f32(NAN)));
  // The largest finite result: e^88.72 = 3.39e38, just under FLT_MAX.
  EXPECT_LE(ulps(cpu_loops::exp_f32(88.72f), static_cast<float>(std::exp(double{88.72f}))), 2);
}

TEST(CpuLoops, BlockedMaxPoolingPicksPyTorchsArgmaxAndRoutesTheGradientThere) {
  // Values from {0, 1, 2} (windows full of ties), NaNs and -infs, in the blocked layout
  // [outer][h][w][block] and in NHWC (2 groups of `block` channels, 2 images). PyTorch's
  // CPU rule, scanned row by row through each window: a value greater than the maximum so
  // far, or a NaN, takes over; so the first of equal maxima wins, and the last NaN. A 5x7
  // map leaves a row and a column outside 2x2 windows; 3x3 windows at stride 2 overlap;
  // 2x2 windows at stride 3 leave gaps.
  for (int64_t groups : {0, 2})
    for (int block : {8, 16}) {
      for (const auto& [k, s] : {std::pair{2, 2}, {3, 2}, {2, 3}}) {
        SCOPED_TRACE("block " + std::to_string(block) + (groups ? " NHWC" : "") + ", window " +
                     std::to_string(k) + ", stride " + std::to_string(s));
        const int64_t outer = groups ? 4 : 3;
        const int64_t oh = (5 - k) / s + 1, ow = (7 - k) / s + 1;
        cpu_loops::BlockedPool g{outer, 5, 7, oh, ow, k, k, s, s, block, false, groups};
        const int64_t in_n = g.outer * g.h * g.w * block, out_n = g.outer * g.oh * g.ow * block;
        std::vector<float> x(static_cast<size_t>(in_n));
        for (int64_t i = 0; i < in_n; ++i) {
          const uint64_t r =
              static_cast<uint64_t>(elem::uniform01(7, static_cast<uint64_t>(i)) * 40);
          x[i] = r == 0 ? NAN : r == 1 ? -INFINITY : static_cast<float>(r % 3);
        }
        // Element (lane block o, row h, column w, lane l) of a map of rows x cols.
        auto index = [&](int64_t o, int64_t h, int64_t w, int l, int64_t rows, int64_t cols) {
          if (!groups) return ((o * rows + h) * cols + w) * block + l;
          const int64_t n = o / groups, c = (o % groups) * block + l;
          return ((n * rows + h) * cols + w) * groups * block + c;
        };
        auto at = [&](int64_t o, int64_t h, int64_t w, int l) {
          return index(o, h, w, l, g.h, g.w);
        };
        std::vector<float> y(static_cast<size_t>(out_n)), gy = pseudo_random(out_n, 8);
        std::vector<uint8_t> argmax(static_cast<size_t>(out_n));
        std::vector<float> gx(static_cast<size_t>(in_n), 123.f);  // all overwritten
        cpu_loops::max_pool_blocked(x.data(), y.data(), argmax.data(), g);
        cpu_loops::max_pool_blocked_backward(gy.data(), argmax.data(), gx.data(), g);
        std::vector<double> want_gx(static_cast<size_t>(in_n), 0.0);
        for (int64_t o = 0; o < g.outer; ++o)
          for (int64_t i = 0; i < g.oh; ++i)
            for (int64_t j = 0; j < g.ow; ++j)
              for (int l = 0; l < block; ++l) {
                float m = -INFINITY;
                int64_t best = at(o, i * s, j * s, l), pos = 0;
                int best_pos = 0;
                for (int r = 0; r < k; ++r)
                  for (int c = 0; c < k; ++c, ++pos) {
                    const float v = x[at(o, i * s + r, j * s + c, l)];
                    if (v > m || std::isnan(v)) {
                      m = v;
                      best = at(o, i * s + r, j * s + c, l);
                      best_pos = static_cast<int>(pos);
                    }
                  }
                const int64_t out = index(o, i, j, l, g.oh, g.ow);
                if (std::isnan(m)) {
                  EXPECT_TRUE(std::isnan(y[out])) << out;
                } else {
                  EXPECT_EQ(y[out], m) << out;
                }
                EXPECT_EQ(argmax[out], best_pos) << out;
                want_gx[best] += gy[out];
              }
        for (int64_t i = 0; i < in_n; ++i) EXPECT_NEAR(gx[i], want_gx[i], 1e-6) << i;
        // Without an argmax (evaluation): the same maxima.
        std::vector<float> y_eval(static_cast<size_t>(out_n));
        cpu_loops::max_pool_blocked(x.data(), y_eval.data(), nullptr, g);
        for (int64_t out = 0; out < out_n; ++out) {
          if (std::isnan(y[out])) {
            EXPECT_TRUE(std::isnan(y_eval[out])) << out;
          } else {
            EXPECT_EQ(y_eval[out], y[out]) << out;
          }
        }

        // With relu_mask (pooling a ReLU's output), an output whose maximum is not above 0
        // (0, -inf, NaN here) gets kNoGradient, and its window no gradient.
        g.relu_mask = true;
        std::vector<uint8_t> masked(static_cast<size_t>(out_n));
        cpu_loops::max_pool_blocked(x.data(), y.data(), masked.data(), g);
        cpu_loops::max_pool_blocked_backward(gy.data(), masked.data(), gx.data(), g);
        int64_t dropped = 0;
        for (int64_t out = 0; out < out_n; ++out) {
          const bool positive = y[out] > 0;
          dropped += !positive;
          EXPECT_EQ(masked[out], positive ? argmax[out] : cpu_loops::kNoGradient) << out;
        }
        EXPECT_GT(dropped, 0);
        double got_sum = 0, want_sum = 0;
        for (int64_t i = 0; i < in_n; ++i) got_sum += gx[i];
        for (int64_t out = 0; out < out_n; ++out) want_sum += y[out] > 0 ? gy[out] : 0.0;
        EXPECT_NEAR(got_sum, want_sum, 1e-4);
      }
    }
}

TEST(CpuLoops, BlockedMaxPoolingOfBfloat16EqualsPoolingItsFloat32Values) {
  // bfloat16 input (the bfloat16 conv + ReLU + pool block's y): the same maxima, bit for
  // bit, and argmax as pooling the widened values, in both layouts. Values 1 + d with few
  // distinct d (windows full of ties: the first wins), NaNs, infinities and -1.
  for (int64_t groups : {0, 2}) {
    SCOPED_TRACE(groups ? "NHWC" : "blocked");
    cpu_loops::BlockedPool g{4, 6, 6, 3, 3, 2, 2, 2, 2, 16, true, groups};
    const int64_t in_n = g.outer * g.h * g.w * 16, out_n = g.outer * g.oh * g.ow * 16;
    std::vector<uint16_t> x(static_cast<size_t>(in_n));
    std::vector<float> widened(x.size());
    for (int64_t i = 0; i < in_n; ++i) {
      const double u = elem::uniform01(11, static_cast<uint64_t>(i));
      const float v = u < 0.02   ? NAN
                      : u < 0.04 ? INFINITY
                      : u < 0.1  ? -1.0f
                                 : 1.0f + static_cast<float>(static_cast<int>(u * 4)) / 64;
      x[i] = dp::float_to_bf16(v);
      widened[i] = dp::bf16_to_float(x[i]);
    }
    std::vector<float> y(static_cast<size_t>(out_n)), want(y.size());
    std::vector<uint8_t> arg(y.size()), want_arg(y.size());
    cpu_loops::max_pool_blocked(x.data(), y.data(), arg.data(), g);
    cpu_loops::max_pool_blocked(widened.data(), want.data(), want_arg.data(), g);
    int64_t later = 0;
    for (int64_t o = 0; o < out_n; ++o) {
      EXPECT_EQ(arg[o], want_arg[o]) << o;
      EXPECT_EQ(std::bit_cast<uint32_t>(y[o]), std::bit_cast<uint32_t>(want[o])) << o;
      later += want_arg[o] > 0 && want_arg[o] != cpu_loops::kNoGradient;
    }
    EXPECT_GT(later, 0);  // not every window's maximum is its first element
  }
}

TEST(CpuLoops, BfloatReluBackwardIsTheFloat32ReferenceOnEveryPairOfSpecialValues) {
  // gx = gy * relu'(x) with relu'(x) = x <= 0 ? 0 : 1 (elem::unary_derivative: a NaN x
  // passes the gradient), against the float32 reference on the widened values, for gy and
  // x from 0, -0, +-1.5, the smallest subnormal, +-inf, NaN and random values.
  std::vector<float> special = {0.f, -0.f, 1.5f, -1.5f, 9.18e-41f, INFINITY, -INFINITY, NAN};
  for (int i = 0; i < 24; ++i) {
    special.push_back(static_cast<float>(elem::uniform01(3, static_cast<uint64_t>(i)) * 8 - 4));
  }
  std::vector<uint16_t> gy, x;
  for (float g : special) {
    for (float v : special) {
      gy.push_back(dp::float_to_bf16(g));
      x.push_back(dp::float_to_bf16(v));
    }
  }
  std::vector<uint16_t> gx(gy.size());
  cpu_loops::relu_backward_bf16(gy.data(), x.data(), gx.data(), static_cast<int64_t>(gx.size()));
  for (size_t i = 0; i < gx.size(); ++i) {
    const float g = dp::bf16_to_float(gy[i]), v = dp::bf16_to_float(x[i]);
    const float want = g * elem::unary_derivative(UnaryOp::kRelu, v);
    const float got = dp::bf16_to_float(gx[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "gy " << g << " x " << v;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
          << "gy " << g << " x " << v;
    }
  }
}

TEST(CpuLoops, SingleChannelConvolutionWeightGradientsMatchAFloat64Loop) {
  // gw[ch][r][c] = sum over images and outputs of gy * x at the tap, gb[ch] = sum of gy,
  // against float64 loops over the same data. The geometries cover taps outside the image
  // on every side (padding 0, 1, 2), strides 1 to 3, non-square kernels, and channel counts
  // that leave a block partly padding; the padding lanes of gy hold NaN, which must not
  // reach a gradient.
  struct Geometry {
    int64_t h, w;
    int kh, kw, sh, sw, ph, pw;
    int64_t channels;
  };
  for (int block : {8, 16}) {
    for (const Geometry& t :
         {Geometry{7, 9, 3, 3, 1, 1, 1, 1, 20}, Geometry{7, 9, 3, 3, 2, 3, 0, 0, 5},
          Geometry{6, 11, 2, 4, 1, 2, 2, 1, 16}, Geometry{5, 5, 1, 1, 1, 1, 0, 0, 3},
          Geometry{28, 28, 3, 3, 1, 1, 1, 1, 32}}) {
      SCOPED_TRACE("block " + std::to_string(block) + ", " + std::to_string(t.h) + "x" +
                   std::to_string(t.w) + ", kernel " + std::to_string(t.kh) + "x" +
                   std::to_string(t.kw) + ", stride " + std::to_string(t.sh) + "," +
                   std::to_string(t.sw) + ", padding " + std::to_string(t.ph) + "," +
                   std::to_string(t.pw) + ", " + std::to_string(t.channels) + " channels");
      const int64_t n = 3, oh = (t.h + 2 * t.ph - t.kh) / t.sh + 1,
                    ow = (t.w + 2 * t.pw - t.kw) / t.sw + 1;
      const int64_t blocks = (t.channels + block - 1) / block;
      const cpu_loops::SingleChannelConv g{n,    t.h,  t.w,  t.channels, oh,   ow,   t.kh,
                                           t.kw, t.sh, t.sw, t.ph,       t.pw, block};
      const std::vector<float> x = pseudo_random(static_cast<size_t>(n * t.h * t.w), 21);
      std::vector<float> gy = pseudo_random(static_cast<size_t>(n * blocks * oh * ow * block), 22);
      auto gy_at = [&](int64_t img, int64_t ch, int64_t i, int64_t j) -> float& {
        return gy[static_cast<size_t>((((img * blocks + ch / block) * oh + i) * ow + j) * block +
                                      ch % block)];
      };
      for (int64_t img = 0; img < n; ++img)
        for (int64_t ch = t.channels; ch < blocks * block; ++ch)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) gy_at(img, ch, i, j) = NAN;
      std::vector<float> gw(static_cast<size_t>(t.channels * t.kh * t.kw), 123.f),
          gb(static_cast<size_t>(t.channels), 123.f);
      cpu_loops::conv_single_channel_backward_weights(x.data(), gy.data(), gw.data(), gb.data(), g);
      for (int64_t ch = 0; ch < t.channels; ++ch) {
        double bias = 0;
        for (int r = 0; r < t.kh; ++r) {
          for (int c = 0; c < t.kw; ++c) {
            double sum = 0, scale = 1;
            for (int64_t img = 0; img < n; ++img)
              for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                  const int64_t row = i * t.sh - t.ph + r, col = j * t.sw - t.pw + c;
                  if (row < 0 || row >= t.h || col < 0 || col >= t.w) continue;
                  const double v = x[static_cast<size_t>((img * t.h + row) * t.w + col)];
                  sum += v * gy_at(img, ch, i, j);
                  scale += std::abs(v * gy_at(img, ch, i, j));
                }
            EXPECT_NEAR(gw[static_cast<size_t>((ch * t.kh + r) * t.kw + c)], sum, 1e-6 * scale)
                << "channel " << ch << ", tap " << r << "," << c;
          }
        }
        double bias_scale = 1;
        for (int64_t img = 0; img < n; ++img)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              bias += gy_at(img, ch, i, j);
              bias_scale += std::abs(gy_at(img, ch, i, j));
            }
        EXPECT_NEAR(gb[static_cast<size_t>(ch)], bias, 1e-6 * bias_scale) << "channel " << ch;
      }
      // Without a bias gradient: the same weight gradient.
      std::vector<float> gw2(gw.size(), 0.f);
      cpu_loops::conv_single_channel_backward_weights(x.data(), gy.data(), gw2.data(), nullptr, g);
      EXPECT_EQ(gw2, gw);
    }
  }
}

TEST(CpuBackend, LogSoftmaxOverTheLastDimMatchesTheFloat64Reference) {
  // The float32 rows loop (exp_f32 vectorised, the C library's log) forward and backward,
  // against the float64 reference, for a small class count (the vector loop's remainder
  // inside every row) and a wide row; with a NaN, the row is NaN throughout.
  auto ctx = make_ctx(1);
  Backend& backend = ctx->backend(DeviceType::kCpu);
  for (const Shape& shape : {Shape{37, 10}, Shape{3, 1000}}) {
    const int64_t n = shape[0] * shape[1];
    auto x = pseudo_random(n, 21), gy = pseudo_random(n, 22);
    for (float& v : x) v *= 8;  // logits of a few units, like a classifier's
    std::vector<float> y(n), gx(n);
    ctx->run(cpu(0), [&] {
      backend.softmax(0, view(x.data(), DType::kFloat32, shape), 1, true,
                      view(y.data(), DType::kFloat32, shape));
      backend.softmax_backward(0, view(gy.data(), DType::kFloat32, shape),
                               view(y.data(), DType::kFloat32, shape), 1, true,
                               view(gx.data(), DType::kFloat32, shape));
    });
    std::vector<double> xd(x.begin(), x.end()), gyd(gy.begin(), gy.end()), yd(n), gxd(n);
    ref::softmax<double>(view(xd.data(), DType::kFloat64, shape), 1, true,
                         view(yd.data(), DType::kFloat64, shape));
    ref::softmax_backward<double>(view(gyd.data(), DType::kFloat64, shape),
                                  view(yd.data(), DType::kFloat64, shape), 1, true,
                                  view(gxd.data(), DType::kFloat64, shape));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(y[i], yd[i], 2e-6 * (1 + std::fabs(yd[i]))) << "element " << i;
      ASSERT_NEAR(gx[i], gxd[i], 1e-5 * (1 + std::fabs(gxd[i]))) << "element " << i;
    }
  }
  std::vector<float> x = {1, 2, NAN, 4, 5, 6}, y(6);
  ctx->run(cpu(0), [&] {
    backend.softmax(0, view(x.data(), DType::kFloat32, {2, 3}), 1, true,
                    view(y.data(), DType::kFloat32, {2, 3}));
  });
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(y[i])) << i;
  for (int i = 3; i < 6; ++i) EXPECT_FALSE(std::isnan(y[i])) << i;
}

TEST(CpuBackend, OptimizerUpdatesMatchTheFloat64ReferenceOnEveryElement) {
  // The float32 loops run in blocks of 256 elements, asking write access 1024 elements
  // ahead; 5003 elements cover whole blocks, a partial last block and the loop's end.
  // Three steps of each rule (the first sets the momentum buffer or Adam's bias
  // correction), against the float64 loops from the same float32 start: an element
  // skipped or updated twice would be off by about lr * |g|, here at least 1e-4.
  auto ctx = make_ctx(1);
  Backend& backend = ctx->backend(DeviceType::kCpu);
  const int64_t n = 5003;
  const auto w0 = pseudo_random(n, 21), g = pseudo_random(n, 22);
  auto as_double = [](const std::vector<float>& v) {
    return std::vector<double>(v.begin(), v.end());
  };
  const std::vector<double> gd = as_double(g);
  auto f32 = [&](std::vector<float>& d) { return view(d.data(), DType::kFloat32, {n}); };
  auto f64 = [&](std::vector<double>& d) { return view(d.data(), DType::kFloat64, {n}); };
  auto gf = g;
  auto gdd = gd;
  auto expect_close = [&](const std::vector<float>& got, const std::vector<double>& want,
                          const char* what) {
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    EXPECT_LT(worst, 2e-6) << what;
  };
  struct SgdCase {
    const char* name;
    double momentum, dampening, weight_decay;
    bool nesterov;
  };
  for (const SgdCase& c : {SgdCase{"plain", 0, 0, 0, false}, SgdCase{"momentum", 0.9, 0, 0, false},
                           SgdCase{"dampening and decay", 0.9, 0.3, 0.01, false},
                           SgdCase{"nesterov", 0.9, 0, 0.01, true}}) {
    std::vector<float> w(w0), buf(n);
    std::vector<double> wd = as_double(w0), bufd(n);
    for (int step = 0; step < 3; ++step) {
      SgdParams p;
      p.lr = 0.1;
      p.momentum = c.momentum;
      p.dampening = c.dampening;
      p.weight_decay = c.weight_decay;
      p.nesterov = c.nesterov;
      p.first_step = step == 0;
      ctx->run(cpu(0), [&] {
        const KView b = f32(buf), bd = f64(bufd);
        backend.sgd_step(0, f32(w), f32(gf), c.momentum != 0 ? &b : nullptr, p);
        backend.sgd_step(0, f64(wd), f64(gdd), c.momentum != 0 ? &bd : nullptr, p);
      });
    }
    expect_close(w, wd, c.name);
    if (c.momentum != 0) expect_close(buf, bufd, c.name);
  }
  for (bool decoupled : {false, true}) {
    std::vector<float> w(w0), m(n), v(n);
    std::vector<double> wd = as_double(w0), md(n), vd(n);
    for (int64_t step = 1; step <= 3; ++step) {
      AdamParams p;
      p.lr = 0.01;
      p.weight_decay = 0.1;
      p.decoupled = decoupled;
      p.step = step;
      ctx->run(cpu(0), [&] {
        backend.adam_step(0, f32(w), f32(gf), f32(m), f32(v), p);
        backend.adam_step(0, f64(wd), f64(gdd), f64(md), f64(vd), p);
      });
    }
    const char* name = decoupled ? "AdamW" : "Adam";
    expect_close(w, wd, name);
    expect_close(m, md, name);
    expect_close(v, vd, name);
  }
}

TEST(CpuBackend, DevicesComputeConcurrentlyWithCorrectResults) {
  // Both devices run the MLP's first-layer GEMM at the same time, many times; every
  // result must equal the float64 reference (oneDNN state is per device and thread).
  auto ctx = make_ctx(2);
  const int64_t M = 256, N = 512, K = 784;
  auto a = pseudo_random(M * K, 3), b = pseudo_random(N * K, 4);
  const auto want = reference_matmul_bt(a, b, M, N, K);
  std::vector<std::vector<float>> out(2, std::vector<float>(M * N));
  MatmulParams p;
  p.trans_b = true;
  TaskGroup group(2);
  for (int d = 0; d < 2; ++d) {
    group.submit(d, ctx->worker(cpu(d)), [&, d] {
      for (int rep = 0; rep < 20; ++rep) {
        std::fill(out[d].begin(), out[d].end(), 0.f);
        ctx->backend(DeviceType::kCpu)
            .matmul(d, view(a.data(), DType::kFloat32, {M, K}),
                    view(b.data(), DType::kFloat32, {N, K}), nullptr,
                    view(out[d].data(), DType::kFloat32, {M, N}), p);
      }
    });
  }
  for (const auto& e : group.wait()) EXPECT_FALSE(e);
  for (int d = 0; d < 2; ++d) {
    double worst = 0;
    for (int64_t i = 0; i < M * N; ++i) worst = std::max(worst, std::abs(out[d][i] - want[i]));
    EXPECT_LT(worst, 1e-3) << "device " << d;
  }
}

// From GNU OpenMP, which oneDNN's threads use (as core/device/cpu/cpu_dnnl.cc declares them).
extern "C" void omp_set_num_threads(int);
extern "C" int omp_get_max_threads(void);

TEST(CpuBackend, InlineWorkLimitsTheCallersOpenMpThreadsOnlyOnceAKernelRunsAndRestoresThem) {
  // A device's work run inline on the caller's thread runs oneDNN single-threaded there, as
  // on the device's own worker; work with no oneDNN kernel leaves the limit alone, and the
  // caller's own limit is back when the work ends, nested frames included.
  auto ctx = make_ctx(2);
  auto& backend = ctx->backend(DeviceType::kCpu);
  std::vector<float> a(16, 1.f), b(16, 2.f), c(16, 0.f);
  auto product = [&](int dev) {
    backend.matmul(dev, view(a.data(), DType::kFloat32, {4, 4}),
                   view(b.data(), DType::kFloat32, {4, 4}), nullptr,
                   view(c.data(), DType::kFloat32, {4, 4}), MatmulParams{});
  };
  const int before = omp_get_max_threads();
  omp_set_num_threads(3);
  std::thread::id ran_on, inner_ran_on;
  int no_kernel = 0, after_kernel = 0, inner_after = 0, outer_after_inner = 0;
  ctx->run(cpu(0), [&] {
    ran_on = std::this_thread::get_id();
    no_kernel = omp_get_max_threads();
    product(0);
    after_kernel = omp_get_max_threads();
  });
  const int after_first = omp_get_max_threads();
  ctx->run(cpu(0), [&] {
    ctx->run(cpu(1), [&] {
      inner_ran_on = std::this_thread::get_id();
      product(1);
      inner_after = omp_get_max_threads();
    });
    outer_after_inner = omp_get_max_threads();  // the inner frame set it, and restored it
    product(0);
  });
  const int after_nested = omp_get_max_threads();
  omp_set_num_threads(before);
  EXPECT_EQ(ran_on, std::this_thread::get_id());  // inline: both workers were idle
  EXPECT_EQ(inner_ran_on, std::this_thread::get_id());
  EXPECT_EQ(no_kernel, 3);
  EXPECT_EQ(after_kernel, 1);
  EXPECT_EQ(after_first, 3);
  EXPECT_EQ(inner_after, 1);
  EXPECT_EQ(outer_after_inner, 3);
  EXPECT_EQ(after_nested, 3);
  EXPECT_FLOAT_EQ(c[0], 8.f);  // 4 products of 1 * 2
}

TEST(CpuBackend, PrimitiveCacheKeysThatSwapTwoWordsOrMoveSizeBetweenThemHashApart) {
  // A matmul's key as dnnl_cpu::matmul builds it: three views, then bias, trans_a,
  // trans_b, accumulate, relu and four dtypes. Pairs that a hash summing the words
  // position by position (linear in each word) would collide: flags swapped between two
  // positions of the same parity, and sizes moved from one dimension to another.
  std::vector<float> none(1);  // the views' data, which keys do not read
  auto key = [&](Shape a, Shape b, Shape out, std::vector<int64_t> flags) {
    dnnl_cpu::Key k('m');
    k.add(view(none.data(), DType::kFloat32, a))
        .add(view(none.data(), DType::kFloat32, b))
        .add(view(none.data(), DType::kFloat32, out));
    for (int64_t f : flags) k.add(f);
    return dnnl_cpu::KeyHash{}(k.view());
  };
  const std::vector<int64_t> plain{0, 0, 1, 0, 0, 0, 0, 0, 0};
  auto with = [&](std::initializer_list<int> set) {
    std::vector<int64_t> f = plain;
    for (int i : set) f[i] = 1;
    return f;
  };
  const Shape a{64, 128}, b{32, 128}, out{64, 32};
  EXPECT_NE(key(a, b, out, with({0})), key(a, b, out, with({4})));  // bias vs relu
  EXPECT_NE(key(a, b, out, with({1})), key(a, b, out, with({3})));  // trans_a vs accumulate
  EXPECT_NE(key({1, 4}, {1, 4}, {1, 1}, plain), key({2, 2}, {2, 2}, {2, 2}, plain));
  EXPECT_NE(key(a, b, out, plain), key({65, 126}, {33, 126}, {65, 33}, plain));
  // The string the cache keeps of a key hashes as the key does.
  dnnl_cpu::Key k('m');
  k.add(view(none.data(), DType::kFloat32, {3, 5})).add(7);
  EXPECT_EQ(dnnl_cpu::KeyHash{}(k.str()), dnnl_cpu::KeyHash{}(k.view()));
}

TEST(CpuBackend, KernelsOutsideTheirWorkerAreRefused) {
  auto ctx = make_ctx(1);
  std::vector<float> a(4, 1.f), c(4);
  EXPECT_THROW(ctx->backend(DeviceType::kCpu)
                   .unary(0, UnaryOp::kRelu, view(a.data(), DType::kFloat32, {4}),
                          view(c.data(), DType::kFloat32, {4})),
               Error);
}

}  // namespace
}  // namespace dp

namespace dp {
namespace {

TEST(CpuBlockCache, AFreedBlockIsHandedBackForTheSameSize) {
  CpuBlockCache cache(1 << 20);
  void* a = cache.allocate(100000);
  cache.deallocate(a, 100000);
  EXPECT_EQ(cache.cached_bytes(), CpuBlockCache::round_up(100000));
  EXPECT_EQ(cache.allocate(100000), a);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  cache.deallocate(a, 100000);
}

TEST(CpuBlockCache, AFreedBlockThatPassesTheLimitEvictsTheLargestCachedBlocks) {
  const size_t mib = size_t{1} << 20;
  CpuBlockCache cache(4 * mib);
  void* small = cache.allocate(mib / 2);
  void* mid = cache.allocate(mib);
  void* large = cache.allocate(2 * mib);
  void* big = cache.allocate(3 * mib);
  cache.deallocate(small, mib / 2);
  cache.deallocate(mid, mib);
  cache.deallocate(large, 2 * mib);
  EXPECT_EQ(cache.cached_bytes(), 3 * mib + mib / 2);
  // 3 MiB more needs 2.5 MiB of room: the 2 MiB block goes, then the 1 MiB one.
  cache.deallocate(big, 3 * mib);
  EXPECT_EQ(cache.cached_bytes(), 3 * mib + mib / 2);
  EXPECT_EQ(cache.allocate(3 * mib), big);
  EXPECT_EQ(cache.allocate(mib / 2), small);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  cache.deallocate(big, 3 * mib);
  cache.deallocate(small, mib / 2);
}

TEST(CpuBlockCache, ABlockLargerThanTheLimitIsNotKept) {
  CpuBlockCache cache(1 << 20);
  void* small = cache.allocate(1000);
  cache.deallocate(small, 1000);
  void* huge = cache.allocate(2 << 20);
  cache.deallocate(huge, 2 << 20);
  EXPECT_EQ(cache.cached_bytes(), CpuBlockCache::round_up(1000));  // the small one stays
}

}  // namespace
}  // namespace dp
