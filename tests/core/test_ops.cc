// Every op, three ways:
//  1. its float64 gradient against central finite differences (fresh random inputs each
//     run; the seed is printed on failure),
//  2. its float32 forward and backward (oneDNN where it has the primitive) against the
//     float64 reference,
//  3. hand-computed values where a formula is easy to write down.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "autograd/autocast_mode.h"
#include "autograd/engine.h"
#include "autograd/grad_arith.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "context/context.h"
#include "error.h"
#include "finishes_within.h"
#include "ops/ops.h"
#include "test_context.h"

namespace dp {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

class Ops : public ::testing::Test {
 protected:
  void SetUp() override {
    ContextOptions o;
    o.cpu_devices = 2;
    o.load_cuda = false;
    ctx_ = Context::create(o);
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }

  // float64 tensor with uniform values in [lo, hi), optionally requiring grad.
  Tensor rand(const Shape& s, bool grad = true, double lo = -1, double hi = 1) {
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(static_cast<size_t>(numel_of(s)));
    for (double& x : v) x = u(rng_);
    Tensor t = ops::from_host(ctx_, s, DType::kFloat64, cpu(0), v.data());
    t.set_requires_grad(grad);
    return t;
  }

  Tensor int64s(const Shape& s, std::vector<int64_t> v) {
    return ops::from_host(ctx_, s, DType::kInt64, cpu(0), v.data());
  }

  static std::vector<double> values(const Tensor& t) {
    return testing_util::host_values<double>(
        t.dtype() == DType::kFloat64 ? t : ops::to_dtype(t.detach(), DType::kFloat64));
  }

  // L = sum(f(x) * w) for fixed random weights w: checks every output's gradient.
  double weighted_sum(const Tensor& y, const std::vector<double>& w) {
    const auto v = values(y);
    double s = 0;
    for (size_t i = 0; i < v.size(); ++i) s += v[i] * w[i];
    return s;
  }

  Tensor weights_like(const Tensor& y, const std::vector<double>& w) {
    Tensor t = ops::from_host(ctx_, y.shape(), DType::kFloat64, y.device(), w.data());
    return y.dtype() == DType::kFloat64 ? t : ops::to_dtype(t, y.dtype());
  }

  // Runs f, backpropagates sum(f(x) * w), returns the output and every input's gradient.
  std::pair<std::vector<double>, std::vector<std::vector<double>>> forward_backward(
      const Fn& f, const std::vector<Tensor>& inputs, const std::vector<double>& w) {
    for (const Tensor& t : inputs) {
      if (t.requires_grad()) const_cast<Tensor&>(t).set_grad(Tensor());
    }
    Tensor y = f(inputs);
    std::vector<std::vector<double>> grads;
    if (y.requires_grad()) {
      backward({y}, {weights_like(y, w)});
    }
    for (const Tensor& t : inputs) {
      if (t.requires_grad() && t.grad().defined()) {
        grads.push_back(values(t.grad()));
      } else {
        grads.push_back(std::vector<double>(t.requires_grad() ? t.numel() : 0, 0.0));
      }
    }
    return {values(y), grads};
  }

  void check(const std::string& what, const Fn& f, const std::vector<Tensor>& inputs,
             double f32_rtol = 2e-4, double f32_atol = 2e-5) {
    SCOPED_TRACE(what + " (seed " + std::to_string(seed_) + ")");
    // Output weights for L = sum(y * w).
    Tensor probe;
    {
      GradModeGuard g(false);
      probe = f(inputs);
    }
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> w(static_cast<size_t>(probe.numel()));
    for (double& x : w) x = u(rng_);

    // 1. float64 analytic gradients against central differences.
    auto [y64, g64] = forward_backward(f, inputs, w);
    const double eps = 1e-6;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& x = inputs[i];
      if (!x.requires_grad()) continue;
      double* p = x.data_as<double>();
      for (int64_t k = 0; k < x.numel(); ++k) {
        const double saved = p[k];
        GradModeGuard g(false);
        p[k] = saved + eps;
        const double up = weighted_sum(f(inputs), w);
        p[k] = saved - eps;
        const double down = weighted_sum(f(inputs), w);
        p[k] = saved;
        const double numeric = (up - down) / (2 * eps);
        EXPECT_NEAR(g64[i][k], numeric, 1e-6 + 1e-5 * std::abs(numeric))
            << "d/d input " << i << "[" << k << "]";
      }
    }

    // 2. float32 against the float64 reference, forward and backward.
    std::vector<Tensor> in32;
    for (const Tensor& x : inputs) {
      if (x.dtype() != DType::kFloat64) {
        in32.push_back(x);
        continue;
      }
      Tensor c = ops::to_dtype(x.detach(), DType::kFloat32);
      c.set_requires_grad(x.requires_grad());
      in32.push_back(c);
    }
    auto [y32, g32] = forward_backward(f, in32, w);
    ASSERT_EQ(y32.size(), y64.size());
    for (size_t k = 0; k < y64.size(); ++k) {
      EXPECT_NEAR(y32[k], y64[k], f32_atol + f32_rtol * std::abs(y64[k])) << "output[" << k << "]";
    }
    for (size_t i = 0; i < g64.size(); ++i) {
      for (size_t k = 0; k < g64[i].size(); ++k) {
        EXPECT_NEAR(g32[i][k], g64[i][k], f32_atol + f32_rtol * std::abs(g64[i][k]))
            << "grad of input " << i << "[" << k << "]";
      }
    }
  }

  std::shared_ptr<Context> ctx_;
  uint32_t seed_ = 0;
  std::mt19937_64 rng_;
};

TEST_F(Ops, ArithmeticBroadcastsAndDifferentiates) {
  check("add [3,4]+[4]", [](auto& x) { return ops::add(x[0], x[1]); }, {rand({3, 4}), rand({4})});
  check("sub [3,1]-[3,4]", [](auto& x) { return ops::sub(x[0], x[1]); },
        {rand({3, 1}), rand({3, 4})});
  check("mul [2,3,4]*[3,1]", [](auto& x) { return ops::mul(x[0], x[1]); },
        {rand({2, 3, 4}), rand({3, 1})});
  check("div [3,4]/[4]", [](auto& x) { return ops::div(x[0], x[1]); },
        {rand({3, 4}), rand({4}, true, 0.5, 2.0)});
  check("div scalar/[5]", [](auto& x) { return ops::div(x[0], x[1]); },
        {rand({}), rand({5}, true, 0.5, 2.0)});
  check("neg", [](auto& x) { return ops::neg(x[0]); }, {rand({7})});
  check("scale", [](auto& x) { return ops::scale(x[0], -2.5); }, {rand({2, 3})});
  check("add_scalar", [](auto& x) { return ops::add_scalar(x[0], 4.0); }, {rand({2, 3})});
}

TEST_F(Ops, ActivationsDifferentiate) {
  check("relu", [](auto& x) { return ops::relu(x[0]); }, {rand({4, 5})});
  check("gelu", [](auto& x) { return ops::gelu(x[0]); }, {rand({4, 5}, true, -3, 3)});
  check("tanh", [](auto& x) { return ops::tanh(x[0]); }, {rand({4, 5}, true, -3, 3)});
  check("sigmoid", [](auto& x) { return ops::sigmoid(x[0]); }, {rand({4, 5}, true, -4, 4)});
  check("exp", [](auto& x) { return ops::exp(x[0]); }, {rand({4, 5})});
  check("log", [](auto& x) { return ops::log(x[0]); }, {rand({4, 5}, true, 0.2, 3)});
}

TEST_F(Ops, ReductionsDifferentiate) {
  check("sum all", [](auto& x) { return ops::sum(x[0]); }, {rand({3, 4})});
  check("sum dim 1", [](auto& x) { return ops::sum(x[0], 1, false); }, {rand({3, 4, 2})});
  check("sum dim -1 keepdim", [](auto& x) { return ops::sum(x[0], -1, true); }, {rand({3, 4})});
  check("mean all", [](auto& x) { return ops::mean(x[0]); }, {rand({3, 4})});
  check("mean dim 0", [](auto& x) { return ops::mean(x[0], 0, false); }, {rand({5, 3})});
}

TEST_F(Ops, MatmulAndLinearDifferentiate) {
  check("matmul 2-D", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({3, 5}), rand({5, 4})});
  check("matmul batched", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({2, 3, 5}), rand({2, 5, 4})});
  check("matmul 3-D @ 2-D", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({2, 3, 5}), rand({5, 4})});
  check("linear", [](auto& x) { return ops::linear(x[0], x[1], x[2]); },
        {rand({6, 5}), rand({4, 5}), rand({4})});
  check("linear without bias", [](auto& x) { return ops::linear(x[0], x[1], Tensor()); },
        {rand({6, 5}), rand({4, 5})});
  check("linear + relu", [](auto& x) { return ops::linear(x[0], x[1], x[2], true); },
        {rand({6, 5}), rand({4, 5}), rand({4})});
  check("linear 3-D input", [](auto& x) { return ops::linear(x[0], x[1], x[2]); },
        {rand({2, 3, 5}), rand({4, 5}), rand({4})});
}

TEST_F(Ops, SoftmaxesDifferentiate) {
  check("softmax dim 1", [](auto& x) { return ops::softmax(x[0], 1); },
        {rand({3, 5}, true, -3, 3)});
  check("softmax dim 0", [](auto& x) { return ops::softmax(x[0], 0); },
        {rand({3, 5}, true, -3, 3)});
  check("log_softmax dim 1", [](auto& x) { return ops::log_softmax(x[0], 1); },
        {rand({3, 5}, true, -3, 3)});
  check("log_softmax dim 1 of 3-D", [](auto& x) { return ops::log_softmax(x[0], 1); },
        {rand({2, 3, 4}, true, -3, 3)});
}

TEST_F(Ops, ConvolutionDifferentiatesWithStrideAndPadding) {
  check(
      "conv2d 3x3 pad 1", [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1); },
      {rand({2, 2, 5, 5}), rand({3, 2, 3, 3}), rand({3})}, 5e-4, 1e-4);
  check(
      "conv2d stride 2 pad (1, 0), odd sizes",
      [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 2, 2, 1, 0); },
      {rand({1, 3, 7, 6}), rand({2, 3, 3, 2}), rand({2})}, 5e-4, 1e-4);
  check(
      "conv2d no bias", [](auto& x) { return ops::conv2d(x[0], x[1], Tensor(), 1, 2, 0, 1); },
      {rand({2, 1, 4, 5}), rand({2, 1, 2, 3})}, 5e-4, 1e-4);
}

TEST_F(Ops, PoolingDifferentiatesWithStrideAndPadding) {
  check("max_pool2d 2x2", [](auto& x) { return ops::max_pool2d(x[0], 2, 2, 2, 2, 0, 0); },
        {rand({2, 2, 4, 6})});
  check("max_pool2d 3x3 stride 2 pad 1",
        [](auto& x) { return ops::max_pool2d(x[0], 3, 3, 2, 2, 1, 1); }, {rand({1, 2, 7, 5})});
  check("avg_pool2d 2x2", [](auto& x) { return ops::avg_pool2d(x[0], 2, 2, 2, 2, 0, 0); },
        {rand({2, 2, 4, 6})});
  check("avg_pool2d 3x3 stride 2 pad 1",
        [](auto& x) { return ops::avg_pool2d(x[0], 3, 3, 2, 2, 1, 1); }, {rand({1, 2, 7, 5})});
}

// conv2d + ReLU + pooling as one block: float64 runs the composed ops (checked against
// finite differences); float32 runs oneDNN's block (against that float64 reference).
TEST_F(Ops, ConvReluPoolBlockDifferentiatesLikeItsParts) {
  const Pool2dParams max2{PoolKind::kMax, 2, 2, 2, 2, 0, 0};
  const Pool2dParams max3{PoolKind::kMax, 3, 3, 2, 2, 1, 1};
  const Pool2dParams avg2{PoolKind::kAvg, 2, 2, 2, 2, 0, 0};
  check(
      "conv 3x3 pad 1, relu, max 2x2",
      [&](auto& x) {
        return ops::conv2d_relu_pool2d(x[0], x[1], x[2], {1, 1, 1, 1}, max2);
      },
      {rand({2, 1, 6, 6}), rand({3, 1, 3, 3}), rand({3})}, 5e-4, 1e-4);
  check(
      "conv stride 2 pad (1, 0), relu, max 3x3 stride 2 pad 1, odd sizes",
      [&](auto& x) {
        return ops::conv2d_relu_pool2d(x[0], x[1], x[2], {2, 2, 1, 0}, max3);
      },
      {rand({1, 3, 9, 8}), rand({5, 3, 3, 2}), rand({5})}, 5e-4, 1e-4);
  check(
      "conv no bias, relu, avg 2x2",
      [&](auto& x) {
        return ops::conv2d_relu_pool2d(x[0], x[1], Tensor(), {1, 1, 0, 0}, avg2);
      },
      {rand({2, 2, 5, 5}), rand({4, 2, 2, 2})}, 5e-4, 1e-4);
}

// In float32 the block and the three ops give the same values and gradients, for channel
// counts that fill oneDNN's 16-channel blocks and for ones that do not. The block's max
// pooling without padding runs the library's own loops on the blocked layout; the
// composed ops run oneDNN's pooling on NCHW. Besides 2x2 windows: a 13x13 map (the last
// row and column in no window: their gradient is 0), overlapping 3x3 windows at stride 2
// (gradients summed) and 2x2 windows at stride 3 (gaps between them).
TEST_F(Ops, ConvReluPoolBlockMatchesTheComposedOpsInFloat32) {
  struct Case {
    int64_t c_in, c_out, size;
    Pool2dParams pp;
    Conv2dParams cp = {1, 1, 1, 1};  // stride, padding
  };
  const Pool2dParams max2{PoolKind::kMax, 2, 2, 2, 2, 0, 0};
  // One input channel takes the library's weight-gradient loop: also at stride 2 without
  // padding, and with 20 channels (a block partly padding).
  for (const Case& c :
       {Case{1, 32, 12, max2}, Case{1, 20, 13, max2, {2, 2, 0, 0}},
        Case{1, 16, 12, max2, {1, 2, 2, 1}}, Case{32, 64, 12, max2}, Case{3, 20, 12, max2},
        Case{4, 16, 13, max2}, Case{4, 16, 13, {PoolKind::kMax, 3, 3, 2, 2, 0, 0}},
        Case{4, 16, 13, {PoolKind::kMax, 2, 2, 3, 3, 0, 0}}}) {
    const int64_t c_in = c.c_in, c_out = c.c_out, size = c.size;
    const Pool2dParams pp = c.pp;
    const Conv2dParams cp = c.cp;
    SCOPED_TRACE("channels " + std::to_string(c_in) + " -> " + std::to_string(c_out) + ", " +
                 std::to_string(size) + "x" + std::to_string(size) + ", conv stride " +
                 std::to_string(cp.stride_h) + "," + std::to_string(cp.stride_w) + " padding " +
                 std::to_string(cp.pad_h) + "," + std::to_string(cp.pad_w) + ", pool " +
                 std::to_string(pp.kernel_h) + " stride " + std::to_string(pp.stride_h));
    const int64_t conv_h = (size + 2 * cp.pad_h - 3) / cp.stride_h + 1,
                  conv_w = (size + 2 * cp.pad_w - 3) / cp.stride_w + 1;
    const int64_t pooled_h = (conv_h - pp.kernel_h) / pp.stride_h + 1,
                  pooled_w = (conv_w - pp.kernel_w) / pp.stride_w + 1;
    auto f32 = [&](const Shape& s, bool grad) {
      Tensor t = ops::to_dtype(rand(s, false), DType::kFloat32);
      t.set_requires_grad(grad);
      return t;
    };
    const Tensor x = f32({4, c_in, size, size}, c_in > 1), w = f32({c_out, c_in, 3, 3}, true),
                 b = f32({c_out}, true);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> wts(static_cast<size_t>(4 * c_out * pooled_h * pooled_w));
    for (double& v : wts) v = u(rng_);
    auto fused = forward_backward(
        [&](auto& in) {
          Tensor z = ops::conv2d_relu_pool2d(in[0], in[1], in[2], cp, pp);
          EXPECT_STREQ(z.grad_fn()->name(), "ConvReluPoolBackward");
          return z;
        },
        {x, w, b}, wts);
    auto composed = forward_backward(
        [&](auto& in) {
          return ops::max_pool2d(
              ops::conv2d(in[0], in[1], in[2], cp.stride_h, cp.stride_w, cp.pad_h, cp.pad_w, true),
              pp.kernel_h, pp.kernel_w, pp.stride_h, pp.stride_w, 0, 0);
        },
        {x, w, b}, wts);
    ASSERT_EQ(fused.first.size(), composed.first.size());
    for (size_t k = 0; k < fused.first.size(); ++k) {
      EXPECT_NEAR(fused.first[k], composed.first[k], 1e-6 * (1 + std::abs(composed.first[k])));
    }
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(fused.second[i].size(), composed.second[i].size());
      for (size_t k = 0; k < fused.second[i].size(); ++k) {
        EXPECT_NEAR(fused.second[i][k], composed.second[i][k],
                    1e-5 * (1 + std::abs(composed.second[i][k])))
            << "grad of input " << i << "[" << k << "]";
      }
    }
    // With grad mode off the block keeps no state (no argmax): the same values.
    GradModeGuard off(false);
    const auto eval = values(ops::conv2d_relu_pool2d(x, w, b, cp, pp));
    ASSERT_EQ(eval.size(), composed.first.size());
    for (size_t k = 0; k < eval.size(); ++k) {
      EXPECT_NEAR(eval[k], composed.first[k], 1e-6 * (1 + std::abs(composed.first[k])));
    }
  }
}

// Under bfloat16 autocast the block equals the composed ops too: both round the
// convolution's ReLU output to bfloat16 once and pool those values, so the outputs agree
// to a bfloat16 rounding (equal where both sum in the same order) and the float32
// gradients at the leaves to 2^-7 of each tensor's largest. On a CPU with native bfloat16
// the block is oneDNN's bfloat16 convolution, into a bfloat16 y where the library's pooling
// loops take its layout (the state is then one argmax byte per output: checked below),
// else into a float32 y rounded before oneDNN's pooling; elsewhere the float32 block with
// Conv2dParams::round_bf16. Max pooling without padding (the library's loops, one input
// channel among them), with padding (oneDNN's pooling and the ReLU mask from z) and
// average pooling (y kept for the mask).
TEST_F(Ops, ConvReluPoolBlockMatchesTheComposedOpsUnderBf16Autocast) {
  const Pool2dParams max2{PoolKind::kMax, 2, 2, 2, 2, 0, 0};
  const Pool2dParams max3pad{PoolKind::kMax, 3, 3, 2, 2, 1, 1};
  const Pool2dParams avg2{PoolKind::kAvg, 2, 2, 2, 2, 0, 0};
  struct Case {
    int64_t c_in, c_out;
    Pool2dParams pp;
  };
  for (const Case& c :
       {Case{1, 32, max2}, Case{32, 64, max2}, Case{3, 20, max3pad}, Case{4, 16, avg2}}) {
    SCOPED_TRACE("channels " + std::to_string(c.c_in) + " -> " + std::to_string(c.c_out) +
                 ", pool " + std::to_string(c.pp.kernel_h) +
                 (c.pp.kind == PoolKind::kAvg ? " avg" : " max"));
    auto f32 = [&](const Shape& s) {
      Tensor t = ops::to_dtype(rand(s, false), DType::kFloat32);
      t.set_requires_grad(true);
      return t;
    };
    const Tensor x = f32({4, c.c_in, 12, 12}), w = f32({c.c_out, c.c_in, 3, 3}), b = f32({c.c_out});
    const Conv2dParams cp{1, 1, 1, 1};
    const int64_t pooled = (12 + 2 * c.pp.pad_h - c.pp.kernel_h) / c.pp.stride_h + 1;
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> wts(static_cast<size_t>(4 * c.c_out * pooled * pooled));
    for (double& v : wts) v = u(rng_);
    AutocastGuard bf16(DType::kBFloat16);
    Backend& be = ctx_->backend(DeviceType::kCpu);
    if (be.bf16_native(0) && c.pp.kind == PoolKind::kMax && c.pp.pad_h == 0) {
      // The library's pooling loops ran: the state is their argmax bytes, one per output.
      const Tensor xb = ops::to_dtype(x, DType::kBFloat16), wb = ops::to_dtype(w, DType::kBFloat16);
      const Tensor zb =
          Tensor::empty(ctx_, {4, c.c_out, pooled, pooled}, DType::kBFloat16, x.device());
      KView y;
      y.dtype = DType::kBFloat16;
      y.ndim = 4;
      const int64_t ys[4] = {4, c.c_out, 12, 12};
      for (int i = 0; i < 4; ++i) y.shape[i] = ys[i];
      const size_t bytes = ctx_->run(cpu(0), [&] {
        return be.conv_relu_pool_state_bytes(0, xb.kview(), wb.kview(), true, y, zb.kview(),
                                             {1, 1, 1, 1, true}, c.pp);
      });
      EXPECT_EQ(bytes, static_cast<size_t>(zb.numel()));
    }
    auto fused = forward_backward(
        [&](auto& in) {
          Tensor z = ops::conv2d_relu_pool2d(in[0], in[1], in[2], cp, c.pp);
          EXPECT_EQ(z.dtype(), DType::kBFloat16);
          EXPECT_STREQ(z.grad_fn()->name(), "ConvReluPoolBackward");
          return z;
        },
        {x, w, b}, wts);
    auto composed = forward_backward(
        [&](auto& in) {
          const Tensor y = ops::conv2d(in[0], in[1], in[2], 1, 1, 1, 1, true);
          const Pool2dParams& p = c.pp;
          return p.kind == PoolKind::kMax ? ops::max_pool2d(y, p.kernel_h, p.kernel_w, p.stride_h,
                                                            p.stride_w, p.pad_h, p.pad_w)
                                          : ops::avg_pool2d(y, p.kernel_h, p.kernel_w, p.stride_h,
                                                            p.stride_w, p.pad_h, p.pad_w);
        },
        {x, w, b}, wts);
    ASSERT_EQ(fused.first.size(), composed.first.size());
    for (size_t k = 0; k < fused.first.size(); ++k) {
      EXPECT_NEAR(fused.first[k], composed.first[k], std::abs(composed.first[k]) / 128)
          << "output " << k;
    }
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(fused.second[i].size(), composed.second[i].size());
      double largest = 0;
      for (double v : composed.second[i]) largest = std::max(largest, std::abs(v));
      for (size_t k = 0; k < fused.second[i].size(); ++k) {
        EXPECT_NEAR(fused.second[i][k], composed.second[i][k], largest / 128)
            << "grad of input " << i << "[" << k << "]";
      }
    }
  }
}

// The conv + ReLU + max-pool block under bfloat16 autocast against float64 loops, forward
// and backward, within docs/autocast.md's bound (u = 2^-8; the output 3u, the input and
// weight gradients 2u, the bias gradient u, each of the sum of magnitudes). The data keeps
// each 2x2 window's values far apart (x rises through the window's four positions, the
// centre tap dominates the weight), so the block and float64 pick the same maximum and
// ReLU passes it: near a tie no reference could say where the gradient belongs. The test
// checks that margin before it trusts its reference.
TEST_F(Ops, ConvReluPoolBlockUnderBf16AutocastIsWithinTheBoundOfFloat64) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  constexpr int N = 2, C = 3, H = 8, W = 8, O = 4, R = 3, P = H / 2;
  constexpr double u = 1.0 / 256;
  std::uniform_real_distribution<double> noise(-1, 1);
  std::vector<double> xv(N * C * H * W), wv(O * C * R * R), bv(O);
  for (int n = 0; n < N; ++n) {
    for (int c = 0; c < C; ++c) {
      for (int i = 0; i < H; ++i) {
        for (int j = 0; j < W; ++j) {
          xv[((n * C + c) * H + i) * W + j] = 0.25 * ((i % 2) * 2 + j % 2) + 0.02 * noise(rng_);
        }
      }
    }
  }
  for (int k = 0; k < O * C * R * R; ++k) {
    const bool centre = k % (R * R) == (R * R) / 2;
    wv[k] = centre ? 0.75 + 0.25 * noise(rng_) : 0.01 * noise(rng_);
  }
  for (double& b : bv) b = 0.1 * noise(rng_);
  std::vector<double> g(N * O * P * P);
  for (double& v : g) v = noise(rng_);
  // The incoming gradient is bfloat16 (forward_backward casts it to the output's dtype).
  g = values(ops::to_dtype(ops::from_host(ctx_, {N, O, P, P}, DType::kFloat64, cpu(0), g.data()),
                           DType::kBFloat16));

  // float64: the convolution and the magnitudes of its terms.
  std::vector<double> y(N * O * H * W), ys(N * O * H * W);
  auto x_at = [&](int n, int c, int i, int j) { return xv[((n * C + c) * H + i) * W + j]; };
  auto w_at = [&](int o, int c, int r, int q) { return wv[((o * C + c) * R + r) * R + q]; };
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < O; ++o) {
      for (int i = 0; i < H; ++i) {
        for (int j = 0; j < W; ++j) {
          double sum = bv[o], mag = std::abs(bv[o]);
          for (int c = 0; c < C; ++c) {
            for (int r = 0; r < R; ++r) {
              for (int q = 0; q < R; ++q) {
                const int ii = i + r - 1, jj = j + q - 1;
                if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                sum += x_at(n, c, ii, jj) * w_at(o, c, r, q);
                mag += std::abs(x_at(n, c, ii, jj) * w_at(o, c, r, q));
              }
            }
          }
          y[((n * O + o) * H + i) * W + j] = sum;
          ys[((n * O + o) * H + i) * W + j] = mag;
        }
      }
    }
  }
  // Each window's maximum (checked to stand clear of the others and of zero), the pooled
  // output, and the gradients that flow back through it.
  std::vector<double> z(N * O * P * P), zs(N * O * P * P);
  std::vector<double> gx(xv.size()), gxs(xv.size()), gw(wv.size()), gws(wv.size());
  std::vector<double> gb(O), gbs(O);
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < O; ++o) {
      for (int pi = 0; pi < P; ++pi) {
        for (int pj = 0; pj < P; ++pj) {
          int best = -1, second = -1;
          for (int d = 0; d < 4; ++d) {
            const int at = ((n * O + o) * H + 2 * pi + d / 2) * W + 2 * pj + d % 2;
            if (best < 0 || y[at] > y[best]) {
              second = best;
              best = at;
            } else if (second < 0 || y[at] > y[second]) {
              second = at;
            }
          }
          const double margin = 3 * u * std::max(ys[best], ys[second]);
          ASSERT_GT(y[best] - y[second], 2 * margin) << "the data's margin, window " << best;
          ASSERT_GT(y[best], 2 * margin) << "ReLU's margin, window " << best;
          const int zi = ((n * O + o) * P + pi) * P + pj;
          z[zi] = y[best];
          zs[zi] = ys[best];
          const int i = (best / W) % H, j = best % W;
          gb[o] += g[zi];
          gbs[o] += std::abs(g[zi]);
          for (int c = 0; c < C; ++c) {
            for (int r = 0; r < R; ++r) {
              for (int q = 0; q < R; ++q) {
                const int ii = i + r - 1, jj = j + q - 1;
                if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                const size_t xi = static_cast<size_t>(((n * C + c) * H + ii) * W + jj);
                const size_t wi = static_cast<size_t>(((o * C + c) * R + r) * R + q);
                gx[xi] += g[zi] * wv[wi];
                gxs[xi] += std::abs(g[zi] * wv[wi]);
                gw[wi] += g[zi] * xv[xi];
                gws[wi] += std::abs(g[zi] * xv[xi]);
              }
            }
          }
        }
      }
    }
  }

  auto f32 = [&](const Shape& s, std::vector<double>& v) {
    Tensor t =
        ops::to_dtype(ops::from_host(ctx_, s, DType::kFloat64, cpu(0), v.data()), DType::kFloat32);
    t.set_requires_grad(true);
    return t;
  };
  const Tensor x = f32({N, C, H, W}, xv), w = f32({O, C, R, R}, wv), b = f32({O}, bv);
  AutocastGuard bf16(DType::kBFloat16);
  const auto [got, grads] = forward_backward(
      [&](auto& in) {
        Tensor out = ops::conv2d_relu_pool2d(in[0], in[1], in[2], Conv2dParams{1, 1, 1, 1},
                                             Pool2dParams{PoolKind::kMax, 2, 2, 2, 2, 0, 0});
        EXPECT_EQ(out.dtype(), DType::kBFloat16);
        return out;
      },
      {x, w, b}, g);
  auto within = [&](const char* what, const std::vector<double>& v,
                    const std::vector<double>& exact, const std::vector<double>& mag,
                    double factor) {
    ASSERT_EQ(v.size(), exact.size()) << what;
    for (size_t k = 0; k < v.size(); ++k) {
      EXPECT_LE(std::abs(v[k] - exact[k]), factor * u * mag[k] + 1e-6 * mag[k])
          << what << "[" << k << "]: " << v[k] << ", float64 " << exact[k];
    }
  };
  within("output", got, z, zs, 3);
  within("grad x", grads[0], gx, gxs, 2);
  within("grad weight", grads[1], gw, gws, 2);
  within("grad bias", grads[2], gb, gbs, 1);
}

TEST_F(Ops, BatchNormDifferentiatesInTrainingAndEvaluation) {
  Tensor rm = rand({3}, false), rv = rand({3}, false, 0.5, 1.5);
  check(
      "batch_norm training 2-D",
      [&](auto& x) {
        return ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 0.1, 1e-5);
      },
      {rand({6, 3}), rand({3}), rand({3})}, 1e-3, 1e-4);
  check(
      "batch_norm training 4-D",
      [&](auto& x) {
        return ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 0.1, 1e-5);
      },
      {rand({2, 3, 2, 3}), rand({3}), rand({3})}, 1e-3, 1e-4);
  check(
      "batch_norm evaluation",
      [&](auto& x) {
        Tensor m = x[0].dtype() == DType::kFloat64 ? rm : ops::to_dtype(rm, DType::kFloat32);
        Tensor v = x[0].dtype() == DType::kFloat64 ? rv : ops::to_dtype(rv, DType::kFloat32);
        return ops::batch_norm(x[0], x[1], x[2], m, v, false, 0.1, 1e-5);
      },
      {rand({2, 3, 2, 2}), rand({3}), rand({3})}, 1e-3, 1e-4);
}

TEST_F(Ops, DropoutAndEmbeddingAndLossesDifferentiate) {
  check("dropout p=0.3", [](auto& x) { return ops::dropout(x[0], 0.3, true, 1234); },
        {rand({4, 6})});
  Tensor idx = int64s({5}, {3, 0, 3, 1, 2});
  check("embedding", [&](auto& x) { return ops::embedding(idx, x[0]); }, {rand({4, 3})});
  Tensor target = int64s({4}, {2, 0, 4, 4});
  check("cross_entropy", [&](auto& x) { return ops::cross_entropy(x[0], target); },
        {rand({4, 5}, true, -2, 2)});
  check("nll_loss", [&](auto& x) { return ops::nll_loss(x[0], target); }, {rand({4, 5})});
  check("mse_loss", [](auto& x) { return ops::mse_loss(x[0], x[1]); },
        {rand({3, 4}), rand({3, 4})});
}

TEST_F(Ops, ShapeOpsDifferentiate) {
  check("reshape with -1", [](auto& x) { return ops::reshape(x[0], {-1, 2}); }, {rand({3, 4})});
  check("flatten 1..-1", [](auto& x) { return ops::flatten(x[0], 1, -1); }, {rand({2, 3, 2})});
  check("cat dim 0",
        [](auto& x) {
          return ops::cat({x[0], x[1]}, 0);
        },
        {rand({2, 3}), rand({1, 3})});
  check("cat dim 1",
        [](auto& x) {
          return ops::cat({x[0], x[1], x[2]}, 1);
        },
        {rand({2, 1}), rand({2, 3}), rand({2, 2})});
  check("split dim 0 (views), one piece used twice",
        [](auto& x) {
          auto p = ops::split(x[0], {1, 2, 1}, 0);
          return ops::add(ops::mul(p[1], p[1]), ops::cat({p[0], p[0]}, 0));
        },
        {rand({4, 3})});
  check("split dim 1 (copies), one piece unused",
        [](auto& x) {
          auto p = ops::split(x[0], {2, 1, 2}, 1);
          return ops::mul(p[0], p[2]);
        },
        {rand({3, 5})});
  check(
      "to_device and back",
      [](auto& x) { return ops::to_device(ops::scale(ops::to_device(x[0], cpu(1)), 3.0), cpu(0)); },
      {rand({2, 3})});
  check("clone", [](auto& x) { return ops::clone(x[0]); }, {rand({5})});
}

TEST_F(Ops, ValuesMatchHandComputedResults) {
  auto f32 = [&](const Shape& s, std::vector<float> v) {
    return ops::from_host(ctx_, s, DType::kFloat32, cpu(0), v.data());
  };
  auto host = testing_util::host_values<float>;
  // [[1,2],[3,4]] @ [[5],[6]] = [[17],[39]]
  EXPECT_EQ(host(ops::matmul(f32({2, 2}, {1, 2, 3, 4}), f32({2, 1}, {5, 6}))),
            (std::vector<float>{17, 39}));
  // Linear: x=[1,2], W=[[1,0],[0,-1],[1,1]], b=[0.5,0,-4] -> [1.5,-2,-1] -> relu [1.5,0,0]
  auto y = ops::linear(f32({1, 2}, {1, 2}), f32({3, 2}, {1, 0, 0, -1, 1, 1}),
                       f32({3}, {0.5f, 0, -4}), true);
  EXPECT_EQ(host(y), (std::vector<float>{1.5f, 0, 0}));
  // softmax([0, ln 3]) = [0.25, 0.75]
  auto sm = host(ops::softmax(f32({1, 2}, {0, std::log(3.0f)}), 1));
  EXPECT_NEAR(sm[0], 0.25f, 1e-6);
  EXPECT_NEAR(sm[1], 0.75f, 1e-6);
  // cross entropy of uniform logits over 4 classes = ln 4
  Tensor t = ops::from_host(ctx_, {2}, DType::kInt64, cpu(0), std::vector<int64_t>{1, 3}.data());
  EXPECT_NEAR(host(ops::cross_entropy(f32({2, 4}, {0, 0, 0, 0, 1, 1, 1, 1}), t))[0], std::log(4.0f),
              5e-6);
  // 2x2 max pool of 1..16 (4x4) = [6, 8, 14, 16]; average pool = [3.5, 5.5, 11.5, 13.5]
  std::vector<float> seq(16);
  for (int i = 0; i < 16; ++i) seq[i] = static_cast<float>(i + 1);
  EXPECT_EQ(host(ops::max_pool2d(f32({1, 1, 4, 4}, seq), 2, 2, 2, 2, 0, 0)),
            (std::vector<float>{6, 8, 14, 16}));
  EXPECT_EQ(host(ops::avg_pool2d(f32({1, 1, 4, 4}, seq), 2, 2, 2, 2, 0, 0)),
            (std::vector<float>{3.5f, 5.5f, 11.5f, 13.5f}));
  // argmax ties pick the first
  auto am = ops::argmax(f32({2, 3}, {1, 5, 5, 9, 2, 9}), 1);
  std::vector<int64_t> amv(2);
  ops::to_host(am, amv.data());
  EXPECT_EQ(amv, (std::vector<int64_t>{1, 0}));
}

TEST_F(Ops, PoolingWithAKernelFarLargerThanTheInputCostsTheInputsSize) {
  // kernel 2^30 + 1 with padding 2^29 (valid: at most half the kernel) over a 3x3 plane:
  // every window holds the whole plane. The loops walked the whole kernel, 2^60 steps a
  // window; only the 9 inputs count. float64 takes the reference loops, float32 padded
  // max pooling too.
  const int k = (1 << 30) + 1, pad = 1 << 29;
  auto host = [](const Tensor& t) {
    return testing_util::host_values<float>(ops::to_dtype(t, DType::kFloat32));
  };
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    testing_util::finishes_within(20, "max_pool2d with a 2^30 kernel", [&] {
      std::vector<double> seq{3, 1, 4, 1, 5, 9, 2, 6, 5};
      Tensor x = ops::to_dtype(
          ops::from_host(ctx_, {1, 1, 3, 3}, DType::kFloat64, cpu(0), seq.data()), dt);
      x.set_requires_grad(true);
      Tensor y = ops::max_pool2d(x, k, k, 1, 1, pad, pad);
      ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
      EXPECT_EQ(host(y), std::vector<float>(9, 9.0f));
      backward({ops::sum(y)}, {});
      std::vector<float> want(9, 0.0f);
      want[5] = 9;  // the maximum, chosen by all 9 windows
      EXPECT_EQ(host(x.grad()), want);
      // Average pooling divides by the whole window, padding included (2^60 + ...).
      const double sum = 36, window = double(k) * double(k);
      const Tensor a = ops::to_dtype(ops::avg_pool2d(x, k, k, 1, 1, pad, pad), DType::kFloat64);
      std::vector<double> got(9);
      ops::to_host(a, got.data());
      for (double v : got) EXPECT_NEAR(v / (sum / window), 1.0, 1e-6);
    });
  }
}

TEST_F(Ops, BatchNormUpdatesRunningStatisticsLikePyTorch) {
  // x over one channel: [1, 2, 3, 4]; mean 2.5, biased var 1.25, unbiased 5/3.
  std::vector<float> xv{1, 2, 3, 4};
  Tensor x = ops::from_host(ctx_, {4, 1}, DType::kFloat32, cpu(0), xv.data());
  Tensor rm = ops::zeros(ctx_, {1}, DType::kFloat32, cpu(0));
  Tensor rv = ops::full(ctx_, {1}, DType::kFloat32, cpu(0), 1.0);
  ops::batch_norm(x, Tensor(), Tensor(), rm, rv, true, 0.1, 1e-5);
  float m = 0, v = 0;
  ops::to_host(rm, &m);
  ops::to_host(rv, &v);
  EXPECT_NEAR(m, 0.25f, 1e-6);                      // 0.9 * 0 + 0.1 * 2.5
  EXPECT_NEAR(v, 0.9f + 0.1f * 5.0f / 3.0f, 1e-6);  // 0.9 * 1 + 0.1 * unbiased var
}

TEST_F(Ops, DropoutKeepsTheExpectedFractionAndScales) {
  Tensor x = ops::full(ctx_, {10000}, DType::kFloat32, cpu(0), 1.0);
  Tensor y = ops::dropout(x, 0.25, true, 7);
  std::vector<float> v(10000);
  ops::to_host(y, v.data());
  int kept = 0;
  for (float f : v) {
    if (f != 0) {
      ++kept;
      EXPECT_NEAR(f, 1.0f / 0.75f, 1e-6);
    }
  }
  EXPECT_NEAR(kept / 10000.0, 0.75, 0.02);
  EXPECT_TRUE(ops::dropout(x, 0.25, false, 7).same(x));  // identity in evaluation
}

TEST_F(Ops, SavedTensorModifiedInPlaceIsDetectedAtBackward) {
  Tensor a = rand({3}), b = rand({3}, false);
  Tensor y = ops::sum(ops::mul(a, b));
  ops::fill_(b, 2.0);  // b was saved for mul's backward
  try {
    backward({y}, {});
    FAIL() << "backward should have refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kState);
    EXPECT_NE(std::string(e.what()).find("modified in place"), std::string::npos) << e.what();
  }
}

TEST_F(Ops, BackwardTwiceWithoutRetainGraphFails) {
  Tensor a = rand({3});
  Tensor y = ops::sum(ops::mul(a, a));
  backward({y}, {});
  EXPECT_THROW(backward({y}, {}), Error);
  Tensor z = ops::sum(ops::mul(a, a));
  backward({z}, {}, {.retain_graph = true});
  backward({z}, {});  // retained once: works
}

TEST_F(Ops, GradientsAccumulateAcrossBackwardCalls) {
  Tensor a = rand({4});
  backward({ops::sum(ops::scale(a, 2.0))}, {});
  backward({ops::sum(ops::scale(a, 3.0))}, {});
  for (double g : values(a.grad())) EXPECT_DOUBLE_EQ(g, 5.0);
}

// The engine's own gradient arithmetic (autograd/grad_arith.h) records nothing, even with
// grad mode on, and checks its operands as the ops add and add_ do.
TEST_F(Ops, GradientArithmeticRecordsNothingAndChecksItsOperands) {
  auto code_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return Code::kOk;
  };
  Tensor a = rand({2, 3}), b = rand({3});
  Tensor s = grad_sum(a, b);  // b broadcasts over a's rows
  EXPECT_FALSE(s.requires_grad());
  ASSERT_EQ(s.shape(), (Shape{2, 3}));
  const auto va = values(a), vb = values(b), vs = values(s);
  for (size_t k = 0; k < 6; ++k) EXPECT_DOUBLE_EQ(vs[k], va[k] + vb[k % 3]) << k;
  EXPECT_EQ(code_of([&] { grad_sum(a, ops::to_dtype(b.detach(), DType::kFloat32)); }),
            Code::kDtypeMismatch);
  EXPECT_EQ(code_of([&] { grad_sum(a, ops::to_device(b.detach(), cpu(1))); }),
            Code::kDeviceMismatch);
  EXPECT_EQ(code_of([&] { grad_sum(a, rand({2})); }), Code::kShapeMismatch);

  // In place, from another CPU device (they share memory); a NaN propagates.
  Tensor grad = rand({2, 3}, false);
  const auto before = values(grad);
  std::vector<double> nan_row = {1.0, std::nan(""), -2.0};
  Tensor g = ops::from_host(ctx_, {3}, DType::kFloat64, cpu(1), nan_row.data());
  const uint64_t version = grad.version();
  grad_accumulate_(grad, g);
  EXPECT_GT(grad.version(), version);
  const auto after = values(grad);
  for (size_t k = 0; k < 6; ++k) {
    if (k % 3 == 1) {
      EXPECT_TRUE(std::isnan(after[k])) << k;
    } else {
      EXPECT_DOUBLE_EQ(after[k], before[k] + nan_row[k % 3]) << k;
    }
  }
  EXPECT_EQ(code_of([&] { grad_accumulate_(b.detach(), a); }), Code::kShapeMismatch);
  EXPECT_EQ(code_of([&] { grad_accumulate_(grad, ops::to_dtype(a.detach(), DType::kFloat32)); }),
            Code::kDtypeMismatch);

  Tensor ones = grad_ones(ctx_, {1}, DType::kFloat32, cpu(1));
  EXPECT_EQ(ones.device(), cpu(1));
  EXPECT_EQ(values(ones), std::vector<double>{1.0});
  EXPECT_EQ(code_of([&] { grad_ones(ctx_, {1}, DType::kFloat32, cpu(2)); }), Code::kOutOfRange);
}

// A tensor used by several ops gets the sum of their gradients. Large CPU sums are done in
// place and shared between the CPU workers; a gradient tensor handed to several consumers
// ((x + x) + x) must not be summed into itself.
TEST_F(Ops, LargeGradientSumsAreExactAndNeverAliasTheirInputs) {
  const int64_t n = 300001;  // several shared slices, and an odd tail
  Tensor x = ops::to_dtype(rand({n}, false), DType::kFloat32);
  x.set_requires_grad(true);
  Tensor a = ops::to_dtype(rand({n}, false), DType::kFloat32);
  Tensor b = ops::to_dtype(rand({n}, false), DType::kFloat32);
  backward({ops::sum(ops::add(ops::mul(x, a), ops::mul(x, b)))}, {});
  const auto g = values(x.grad()), va = values(a), vb = values(b);
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_FLOAT_EQ(static_cast<float>(g[k]), static_cast<float>(va[k]) + static_cast<float>(vb[k]))
        << "element " << k;
  }
  x.set_grad(Tensor());
  backward({ops::sum(ops::add(ops::add(x, x), x))}, {});
  for (double v : values(x.grad())) ASSERT_EQ(v, 3.0);
}

// A float32 sum over many rows (a bias gradient over a large batch) stays as accurate as
// PyTorch's: 2,000,000 rows of 0.1 in two columns. A running float32 total was 8.8% off
// at 10^7 rows and ~100x PyTorch's error on random data.
TEST_F(Ops, Float32SumsOverManyRowsStayAccurate) {
  const int64_t rows = 2'000'000;
  const Tensor tenths = ops::full(ctx_, {rows, 2}, DType::kFloat32, cpu(0), 0.1);
  std::vector<float> got(2);
  ops::to_host(ops::sum(tenths, 0, false), got.data());
  const double exact = static_cast<double>(0.1f) * static_cast<double>(rows);
  for (float v : got) EXPECT_NEAR(v, exact, exact * 1e-6);
  // Random rows against a float64 sum, for a middle dimension too ([4, rows, 3] over 1).
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const int64_t n = 100'000;
  std::vector<float> x(static_cast<size_t>(4 * n * 3));
  for (float& v : x) v = u(rng_);
  const Tensor t = ops::from_host(ctx_, {4, n, 3}, DType::kFloat32, cpu(0), x.data());
  std::vector<float> sums(12);
  ops::to_host(ops::sum(t, 1, false), sums.data());
  for (int64_t o = 0; o < 4; ++o) {
    for (int64_t i = 0; i < 3; ++i) {
      double want = 0;
      for (int64_t m = 0; m < n; ++m) want += x[static_cast<size_t>((o * n + m) * 3 + i)];
      EXPECT_NEAR(sums[static_cast<size_t>(o * 3 + i)], want, want * 3e-7) << o << "," << i;
    }
  }
}

TEST_F(Ops, GradModeOffRecordsNothing) {
  Tensor a = rand({4});
  GradModeGuard off(false);
  Tensor y = ops::relu(a);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
}

TEST_F(Ops, ArgumentErrorsNameTheOpAndTheValue) {
  auto message = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  Tensor a = rand({2, 3}), b = rand({4, 5});
  EXPECT_NE(message([&] { ops::matmul(a, b); }).find("do not chain"), std::string::npos);
  EXPECT_NE(message([&] { ops::add(a, b); }).find("cannot be broadcast"), std::string::npos);
  EXPECT_NE(message([&] { ops::softmax(a, 5); }).find("dim = 5"), std::string::npos);
  Tensor t = int64s({2}, {0, 9});
  EXPECT_NE(message([&] { ops::cross_entropy(a, t); }).find("target[1] = 9"), std::string::npos);
  Tensor other = ops::to_device(a.detach(), cpu(1));
  EXPECT_NE(message([&] { ops::add(a, other); }).find("cpu:1"), std::string::npos);
}

}  // namespace
}  // namespace dp
