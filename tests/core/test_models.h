// The MLP and CNN of torch_reference.py and synthetic Fashion-MNIST-shaped batches, shared
// by the core's and the CUDA backend's DataParallel tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "autograd/grad_mode.h"
#include "context/context.h"
#include "nn/layers.h"
#include "ops/ops.h"

namespace dp::testing_util {

// 784-512-256-10 with ReLUs, on `d`.
inline std::shared_ptr<Module> mlp(const std::shared_ptr<Context>& ctx, Device d = cpu(0),
                                   DType t = DType::kFloat32) {
  auto s = std::make_shared<Sequential>(ctx);
  s->append(std::make_shared<Linear>(ctx, 784, 512, true, d, t));
  s->append(std::make_shared<Activation>(ctx, UnaryOp::kRelu));
  s->append(std::make_shared<Linear>(ctx, 512, 256, true, d, t));
  s->append(std::make_shared<Activation>(ctx, UnaryOp::kRelu));
  s->append(std::make_shared<Linear>(ctx, 256, 10, true, d, t));
  return s;
}

// conv(1->32) relu maxpool, conv(32->64) relu maxpool, fc 3136->128 relu, fc 128->10.
inline std::shared_ptr<Module> cnn(const std::shared_ptr<Context>& ctx, Device d = cpu(0)) {
  auto s = std::make_shared<Sequential>(ctx);
  s->append(std::make_shared<Conv2d>(ctx, 1, 32, 3, 3, 1, 1, 1, 1, true, d));
  s->append(std::make_shared<Activation>(ctx, UnaryOp::kRelu));
  s->append(std::make_shared<Pool2d>(ctx, PoolKind::kMax, 2, 2, 2, 2, 0, 0));
  s->append(std::make_shared<Conv2d>(ctx, 32, 64, 3, 3, 1, 1, 1, 1, true, d));
  s->append(std::make_shared<Activation>(ctx, UnaryOp::kRelu));
  s->append(std::make_shared<Pool2d>(ctx, PoolKind::kMax, 2, 2, 2, 2, 0, 0));
  s->append(std::make_shared<Flatten>(ctx, 1, -1));
  s->append(std::make_shared<Linear>(ctx, 3136, 128, true, d));
  s->append(std::make_shared<Activation>(ctx, UnaryOp::kRelu));
  s->append(std::make_shared<Linear>(ctx, 128, 10, true, d));
  return s;
}

// Copies every parameter and buffer of `from` into `to` (same structure; converted to
// `to`'s dtypes).
inline void copy_weights(const Module& from, Module& to) {
  auto a = from.state(), b = to.state();
  ASSERT_EQ(a.size(), b.size());
  GradModeGuard no_grad(false);
  for (size_t i = 0; i < a.size(); ++i)
    ops::copy_(b[i].second, ops::to_dtype(a[i].second, b[i].second.dtype()));
}

struct Batch {
  Tensor x, y;  // on the host (cpu:0), as a data loader hands them over
};

// `count` batches of uniform [0, 1) pixels ([batch, 784], or [batch, 1, 28, 28] for
// images) in `dtype`, and labels in [0, 10); the same every run.
inline std::vector<Batch> make_batches(const std::shared_ptr<Context>& ctx, bool image, int count,
                                       int64_t batch, DType dtype = DType::kFloat32) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<Batch> out;
  for (int k = 0; k < count; ++k) {
    std::vector<float> x(static_cast<size_t>(batch * 784));
    for (float& v : x) v = u(rng);
    std::vector<int64_t> y(static_cast<size_t>(batch));
    for (auto& v : y) v = static_cast<int64_t>(rng() % 10);
    const Shape xs = image ? Shape{batch, 1, 28, 28} : Shape{batch, 784};
    const Tensor xt = ops::from_host(ctx, xs, DType::kFloat32, cpu(0), x.data());
    out.push_back({dtype == DType::kFloat32 ? xt : ops::to_dtype(xt, dtype),
                   ops::from_host(ctx, {batch}, DType::kInt64, cpu(0), y.data())});
  }
  return out;
}

}  // namespace dp::testing_util
