// Autocast's kept copies of parameters (ops/autocast.h): a CPU parameter's bfloat16 cast is
// made once and reused while the parameter is unchanged, refreshed by an optimizer step,
// and never seen stale. Each test checks the values against a fresh cast of the current
// float32 values (to_dtype, itself checked against float64 in test_ops) and against
// bfloat16's rounding bound, and the kept copy itself (Storage::cast_copy): a cast that
// shares its storage reused it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "autograd/autocast_mode.h"
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "context/context.h"
#include "error.h"
#include "ops/autocast.h"
#include "ops/ops.h"
#include "optim/optimizer.h"
#include "parallel/comm.h"
#include "test_context.h"

namespace dp {
namespace {

class AutocastCopies : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = testing_util::cpu_context(2);
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }

  std::vector<float> random_values(int64_t n) {
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = u(rng_);
    return v;
  }

  // A float32 parameter (a leaf that requires grad) on cpu:0.
  Tensor parameter(const Shape& s) {
    const std::vector<float> v = random_values(numel_of(s));
    Tensor t = ops::from_host(ctx_, s, DType::kFloat32, cpu(0), v.data());
    t.set_requires_grad(true);
    return t;
  }

  static std::vector<uint16_t> bits(const Tensor& t) {
    return testing_util::host_values<uint16_t>(t);
  }
  static std::vector<float> floats(const Tensor& t) { return testing_util::host_values<float>(t); }

  // `lowered` holds w's current values in bfloat16: bit for bit a fresh cast, and each
  // within bfloat16's rounding bound (2^-8 of the value) of the float32 value.
  void expect_current(const Tensor& lowered, const Tensor& w) {
    ASSERT_EQ(lowered.dtype(), DType::kBFloat16);
    const Tensor fresh = ops::to_dtype(w.detach(), DType::kBFloat16);
    EXPECT_EQ(bits(lowered), bits(fresh)) << "seed " << seed_;
    const std::vector<float> f = floats(w);
    const std::vector<uint16_t> b = bits(lowered);
    for (size_t i = 0; i < f.size(); ++i) {
      uint32_t u = static_cast<uint32_t>(b[i]) << 16;
      float back;
      std::memcpy(&back, &u, sizeof back);
      ASSERT_LE(std::abs(back - f[i]), std::ldexp(std::abs(f[i]), -8)) << "element " << i;
    }
  }

  // The copy kept on t's memory (null when none).
  static std::shared_ptr<CastCopy> kept(const Tensor& t) {
    Storage& root = t.impl()->storage->root();
    std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
    return root.cast_copy();
  }
  // Whether `lowered` is a view of the kept copy `k` (directly, or through an alias on
  // another CPU device).
  static bool from(const Tensor& lowered, const std::shared_ptr<CastCopy>& k) {
    return k && &lowered.impl()->storage->root() == k->copy.impl()->storage.get();
  }

  std::shared_ptr<Context> ctx_;
  uint32_t seed_ = 0;
  std::mt19937 rng_;
};

TEST_F(AutocastCopies, AParametersCastIsKeptAndReusedWhileItIsUnchanged) {
  const Tensor w = parameter({64, 48});
  AutocastGuard bf16(DType::kBFloat16);
  const Tensor first = ops::autocast::lower(w);
  const std::shared_ptr<CastCopy> k = kept(w);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->version, w.version());
  const Tensor second = ops::autocast::lower(w);
  expect_current(first, w);
  expect_current(second, w);
  EXPECT_TRUE(from(first, k));
  EXPECT_TRUE(from(second, k)) << "the second cast should reuse the first";
  EXPECT_EQ(kept(w), k);
  // Differentiable like a cast: its gradient goes to w.
  ASSERT_NE(second.grad_fn(), nullptr);
  EXPECT_STREQ(second.grad_fn()->name(), "ToDtypeBackward");
  // Under grad mode off (evaluation) too.
  GradModeGuard off(false);
  EXPECT_TRUE(from(ops::autocast::lower(w), k));
}

// A reshaped view of a parameter (same memory, another shape) shares its kept cast, in
// its own shape, and leaves it usable for the parameter.
TEST_F(AutocastCopies, AReshapedViewSharesTheKeptCastInItsOwnShape) {
  const Tensor w = parameter({6, 8});
  AutocastGuard bf16(DType::kBFloat16);
  const Tensor lowered = ops::autocast::lower(w);
  const std::shared_ptr<CastCopy> k = kept(w);
  const Tensor flat = ops::autocast::lower(ops::reshape(w, {48}));
  EXPECT_EQ(flat.shape(), (Shape{48}));
  EXPECT_TRUE(from(flat, k));
  EXPECT_EQ(bits(flat), bits(lowered));
  // Out of date, then cast first through a view of another shape: the parameter's own
  // cast still works, with the new values.
  const std::vector<float> next = random_values(w.numel());
  ops::copy_from_host(w, next.data());
  const Tensor view = ops::autocast::lower(ops::reshape(w, {8, 6}));
  EXPECT_EQ(view.shape(), (Shape{8, 6}));
  const Tensor again = ops::autocast::lower(w);
  EXPECT_EQ(again.shape(), w.shape());
  expect_current(again, w);
  EXPECT_EQ(bits(view), bits(again));
}

TEST_F(AutocastCopies, TensorsThatAreNotParametersAreCastAfresh) {
  const std::vector<float> v = random_values(96);
  const Tensor x = ops::from_host(ctx_, {8, 12}, DType::kFloat32, cpu(0), v.data());
  AutocastGuard bf16(DType::kBFloat16);
  const Tensor first = ops::autocast::lower(x);
  const Tensor second = ops::autocast::lower(x);
  expect_current(second, x);
  EXPECT_EQ(kept(x), nullptr);
  EXPECT_NE(first.data(), second.data());
}

TEST_F(AutocastCopies, AnInPlaceWriteMakesTheKeptCastOutOfDate) {
  const Tensor w = parameter({32, 16});
  AutocastGuard bf16(DType::kBFloat16);
  const Tensor before = ops::autocast::lower(w);
  const std::vector<uint16_t> old_bits = bits(before);
  const std::vector<float> next = random_values(w.numel());
  ops::copy_from_host(w, next.data());
  EXPECT_NE(kept(w)->version, w.version());
  const Tensor after = ops::autocast::lower(w);
  expect_current(after, w);
  EXPECT_FALSE(from(before, kept(w)));
  EXPECT_TRUE(from(after, kept(w)));
  EXPECT_EQ(bits(before), old_bits) << "a cast already handed out keeps its values";
}

// Three parameters laid end to end in the update's range, one of them not a multiple of
// 16 elements long (the range pads it) and one more than a slice long, so slices start
// inside parameters and span two of them.
TEST_F(AutocastCopies, AnOptimizerStepWritesTheKeptCastAlongWithTheParameter) {
  for (const bool adam : {false, true}) {
    SCOPED_TRACE(adam ? "Adam" : "SGD");
    std::vector<Tensor> ws = {parameter({37, 13}), parameter({300, 200}), parameter({5, 7})};
    for (Tensor& w : ws) {
      const std::vector<float> g = random_values(w.numel());
      w.set_grad(ops::from_host(ctx_, w.shape(), DType::kFloat32, cpu(0), g.data()));
    }
    std::unique_ptr<Optimizer> opt;
    if (adam) {
      AdamOptions o;
      o.lr = 0.1;
      opt = std::make_unique<Adam>(ws, o);
    } else {
      opt = std::make_unique<Sgd>(ws, SgdOptions{0.5, 0.9, 0, 0.01, false});
    }
    std::vector<std::shared_ptr<CastCopy>> ks;
    for (const Tensor& w : ws) {
      AutocastGuard bf16(DType::kBFloat16);
      ops::autocast::lower(w);  // released: only the cache holds the copy now
      ks.push_back(kept(w));
      ASSERT_NE(ks.back(), nullptr);
    }
    for (int step = 0; step < 2; ++step) {
      for (size_t i = 0; i < ws.size(); ++i) {
        const Tensor& w = ws[i];
        SCOPED_TRACE("step " + std::to_string(step) + ", parameter " + std::to_string(i));
        if (i == 0) {
          const std::vector<float> before = floats(w);
          opt->step();
          ASSERT_NE(floats(w), before) << "the step changed nothing";
        }
        ASSERT_EQ(kept(w), ks[i]) << "the step let the kept cast go";
        EXPECT_EQ(ks[i]->version, w.version()) << "the step left the kept cast out of date";
        AutocastGuard bf16(DType::kBFloat16);
        const Tensor lowered = ops::autocast::lower(w);
        expect_current(lowered, w);
        EXPECT_TRUE(from(lowered, ks[i]));
      }
    }
  }
}

// A kept cast that no cast used between two steps (autocast off since) is let go, not
// written at every step.
TEST_F(AutocastCopies, AKeptCastUnusedForAWholeStepIsLetGo) {
  Tensor w = parameter({64, 64});
  const std::vector<float> g = random_values(w.numel());
  w.set_grad(ops::from_host(ctx_, w.shape(), DType::kFloat32, cpu(0), g.data()));
  Sgd sgd({w}, SgdOptions{0.1, 0, 0, 0, false});
  {
    AutocastGuard bf16(DType::kBFloat16);
    ops::autocast::lower(w);
  }
  sgd.step();  // used since it was made: refreshed
  ASSERT_NE(kept(w), nullptr);
  EXPECT_EQ(kept(w)->version, w.version());
  sgd.step();  // unused since the last step: let go
  EXPECT_EQ(kept(w), nullptr);
}

// Two graphs save w's kept cast for backward (linear's weight); an optimizer step runs
// between their backward passes. The second backward must see the weights its forward
// saw: the same input gradient as the first.
TEST_F(AutocastCopies, AKeptCastThatAGraphStillHoldsIsNotOverwritten) {
  Tensor w = parameter({40, 24});
  const std::vector<float> xv = random_values(8 * 24);
  Tensor x = ops::from_host(ctx_, {8, 24}, DType::kFloat32, cpu(0), xv.data());
  x.set_requires_grad(true);
  Tensor y1, y2;
  {
    AutocastGuard bf16(DType::kBFloat16);
    y1 = ops::sum(ops::to_dtype(ops::linear(x, w, Tensor()), DType::kFloat32));
    y2 = ops::sum(ops::to_dtype(ops::linear(x, w, Tensor()), DType::kFloat32));
  }
  const std::shared_ptr<CastCopy> k = kept(w);
  ASSERT_NE(k, nullptr);
  backward({y1}, {});
  const std::vector<float> gx_before = floats(x.grad());
  x.set_grad(Tensor());
  Sgd sgd({w}, SgdOptions{0.5, 0, 0, 0, false});
  sgd.step();  // w.grad from y1's backward
  EXPECT_NE(kept(w), k) << "the step wrote a copy that y2's graph holds";
  backward({y2}, {});
  EXPECT_EQ(floats(x.grad()), gx_before);
  AutocastGuard bf16(DType::kBFloat16);
  expect_current(ops::autocast::lower(w), w);
}

TEST_F(AutocastCopies, MemoryWrittenBehindTheVersionCounterIsNeverKept) {
  const Tensor w = parameter({16, 16});
  // As dp_tensor_data, a DLPack export or borrowed memory mark it.
  w.impl()->storage->mark_exposed();
  AutocastGuard bf16(DType::kBFloat16);
  const Tensor first = ops::autocast::lower(w);
  EXPECT_EQ(kept(w), nullptr);
  std::vector<float> next = random_values(w.numel());
  std::memcpy(w.data(), next.data(), next.size() * sizeof(float));  // no version bump
  const Tensor second = ops::autocast::lower(w);
  expect_current(second, w);
  EXPECT_NE(second.data(), first.data());
}

TEST_F(AutocastCopies, TheKeptCastIsReadOnly) {
  const Tensor w = parameter({8, 8});
  AutocastGuard bf16(DType::kBFloat16);
  const Tensor lowered = ops::autocast::lower(w);
  try {
    ops::fill_(lowered, 0);
    FAIL() << "an in-place write to the kept cast went through";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kState);
    EXPECT_NE(std::string(e.what()).find("autocast"), std::string::npos) << e.what();
  }
  expect_current(ops::autocast::lower(w), w);
}

// A DataParallel replica on another CPU device aliases the parameter's memory: its cast
// is the kept one, on its own device.
TEST_F(AutocastCopies, AnAliasOnAnotherCpuDeviceSharesTheKeptCast) {
  const Tensor w = parameter({64, 32});
  const Tensor replica = comm::alias_on(w, cpu(1));
  AutocastGuard bf16(DType::kBFloat16);
  const Tensor on0 = ops::autocast::lower(w);
  const Tensor on1 = ops::autocast::lower(replica);
  EXPECT_EQ(on1.device(), cpu(1));
  EXPECT_TRUE(from(on1, kept(w)));
  EXPECT_EQ(on1.data(), on0.data());
  expect_current(on1, w);
}

// The kept cast changes no gradient: two backward passes through linear, the first
// making the cast and the second reusing it, give w the same float32 gradient. It is the
// gradient through an explicit cast before its rounding: that one is the float32 sums
// rounded to bfloat16 (PyTorch's), then widened by the cast's backward, so each element is
// within a bfloat16 rounding (2^-8 relative) of it and some differ.
TEST_F(AutocastCopies, GradientsThroughTheKeptCastEqualThoseThroughTheCastItMade) {
  Tensor w = parameter({24, 40});
  const std::vector<float> xv = random_values(16 * 40);
  const Tensor x = ops::from_host(ctx_, {16, 40}, DType::kFloat32, cpu(0), xv.data());
  std::vector<std::vector<float>> grads;
  for (int pass = 0; pass < 3; ++pass) {
    w.set_grad(Tensor());
    Tensor y;
    if (pass < 2) {
      AutocastGuard bf16(DType::kBFloat16);
      y = ops::linear(x, w, Tensor());
    } else {
      y = ops::linear(ops::to_dtype(x, DType::kBFloat16), ops::to_dtype(w, DType::kBFloat16),
                      Tensor());
    }
    backward({ops::sum(ops::to_dtype(y, DType::kFloat32))}, {});
    ASSERT_EQ(w.grad().dtype(), DType::kFloat32);
    grads.push_back(floats(w.grad()));
  }
  EXPECT_EQ(grads[1], grads[0]);
  ASSERT_EQ(grads[2].size(), grads[0].size());
  for (size_t i = 0; i < grads[0].size(); ++i) {
    EXPECT_LE(std::fabs(grads[2][i] - grads[0][i]), std::ldexp(std::fabs(grads[0][i]), -8))
        << "element " << i;
  }
  EXPECT_NE(grads[2], grads[0]);
}

}  // namespace
}  // namespace dp
