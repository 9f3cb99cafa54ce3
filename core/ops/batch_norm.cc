// Batch normalisation over [N, C] or [N, C, H, W], as torch.nn.functional.batch_norm.
#include "ops/autocast.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class BatchNormBackward final : public Node {
 public:
  BatchNormBackward(Device d, SavedTensor x, SavedTensor gamma, Tensor mean, Tensor var, double eps)
      : Node(d, 1),
        x_(std::move(x)),
        gamma_(std::move(gamma)),
        mean_(std::move(mean)),
        var_(std::move(var)),
        eps_(eps) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const Tensor x = DP_UNPACK(x_), gamma = DP_UNPACK(gamma_);
    Tensor gx = empty_like(x), ggamma = empty_like(gamma), gbeta = empty_like(gamma);
    backend_of(g).batch_norm_backward(dev(g), g.kview(), x.kview(), gamma.kview(), mean_.kview(),
                                      var_.kview(), gx.kview(), ggamma.kview(), gbeta.kview(),
                                      eps_);
    return {gx, ggamma, gbeta};
  }
  const char* name() const override { return "BatchNormBackward"; }
  void release_saved() override {
    x_.reset();
    gamma_.reset();
    mean_ = var_ = Tensor();
  }

 private:
  SavedTensor x_, gamma_;
  Tensor mean_, var_;  // this batch's statistics, owned by the node
  double eps_;
};

// [C] -> [1, C, 1, 1] (or [1, C] for 2-D input), for broadcasting against x.
Tensor per_channel(const Tensor& t, int ndim) {
  Shape s(static_cast<size_t>(ndim), 1);
  s[1] = t.numel();
  return reshape(t, s);
}

}  // namespace

Tensor batch_norm(const Tensor& x_in, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps) {
  const Tensor x = autocast::fp32(x_in);
  check_float(x, "batch_norm", "x");
  DP_CHECK(x.ndim() == 2 || x.ndim() == 4, kShapeMismatch,
           "batch_norm: x must be [N, C] or [N, C, H, W], got " << shape_str(x.shape()));
  const int64_t C = x.shape()[1];
  auto check_channel = [&](const Tensor& t, const char* arg) {
    if (!t.defined()) return;
    check_same(x, t, "batch_norm", "x", arg);
    DP_CHECK(t.ndim() == 1 && t.shape()[0] == C, kShapeMismatch,
             "batch_norm: " << arg << " has shape " << shape_str(t.shape()) << " but x has " << C
                            << " channels");
  };
  check_channel(weight, "weight");
  check_channel(bias, "bias");
  check_channel(running_mean, "running_mean");
  check_channel(running_var, "running_var");
  DP_CHECK(eps > 0, kInvalidArgument, "batch_norm: eps = " << eps << " must be positive");
  DP_CHECK(training || (running_mean.defined() && running_var.defined()), kInvalidArgument,
           "batch_norm: evaluation mode needs running_mean and running_var");
  const int64_t count = x.numel() / std::max<int64_t>(C, 1);
  // As PyTorch: one value per channel has no variance to train on; none at all (an empty
  // batch) gives an empty output and leaves the running statistics alone.
  DP_CHECK(!training || count != 1, kShapeMismatch,
           "batch_norm: training needs more than one value per channel, got input "
               << shape_str(x.shape()));
  DP_CHECK(momentum >= 0 && momentum <= 1, kInvalidArgument,
           "batch_norm: momentum = " << momentum << " must be in [0, 1]");
  if (x.numel() == 0) return clone(x);

  return on_device(x, [&] {
    const Tensor gamma =
        weight.defined() ? weight : full(x.context(), {C}, x.dtype(), x.device(), 1.0);
    const Tensor beta = bias.defined() ? bias : zeros(x.context(), {C}, x.dtype(), x.device());
    Backend& be = backend_of(x);
    if (!training) {
      if (!needs_grad({&x, &weight, &bias})) {
        Tensor y = empty_like(x);
        be.batch_norm(dev(x), x.kview(), gamma.kview(), beta.kview(), running_mean.kview(),
                      running_var.kview(), y.kview(), eps, false);
        return y;
      }
      // Differentiable evaluation: y = (x - mean) * gamma / sqrt(var + eps) + beta, with
      // (var + eps)^-1/2 computed as exp(-log(var + eps) / 2) by the backend's kernels.
      Tensor inv = empty_like(running_var);
      be.affine(dev(x), running_var.kview(), inv.kview(), 1.0, eps);
      be.unary(dev(x), UnaryOp::kLog, inv.kview(), inv.kview());
      be.affine(dev(x), inv.kview(), inv.kview(), -0.5, 0.0);
      be.unary(dev(x), UnaryOp::kExp, inv.kview(), inv.kview());
      const int nd = x.ndim();
      Tensor centered = sub(x, per_channel(running_mean, nd));
      Tensor scaled = mul(centered, per_channel(mul(gamma, inv), nd));
      return add(scaled, per_channel(beta, nd));
    }
    Tensor y = empty_like(x);
    Tensor mean = empty_like(x, {C}), var = empty_like(x, {C});
    be.batch_norm(dev(x), x.kview(), gamma.kview(), beta.kview(), mean.kview(), var.kview(),
                  y.kview(), eps, true);
    if (running_mean.defined()) {
      running_mean.bump_version();
      be.affine(dev(x), running_mean.kview(), running_mean.kview(), 1.0 - momentum, 0.0);
      Tensor m = empty_like(mean);
      be.affine(dev(x), mean.kview(), m.kview(), momentum, 0.0);
      be.binary(dev(x), BinaryOp::kAdd, running_mean.kview(), m.kview(), running_mean.kview());
    }
    if (running_var.defined()) {
      // The running variance is updated with the unbiased estimate, as PyTorch does.
      running_var.bump_version();
      const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
      be.affine(dev(x), running_var.kview(), running_var.kview(), 1.0 - momentum, 0.0);
      Tensor v = empty_like(var);
      be.affine(dev(x), var.kview(), v.kview(), momentum * unbias, 0.0);
      be.binary(dev(x), BinaryOp::kAdd, running_var.kview(), v.kview(), running_var.kview());
    }
    if (needs_grad({&x, &weight, &bias})) {
      set_history(y,
                  make_node<BatchNormBackward>(
                      {&x, weight.defined() ? &weight : nullptr, bias.defined() ? &bias : nullptr},
                      x.device(), SavedTensor(x), SavedTensor(gamma), mean, var, eps));
    }
    return y;
  });
}

}  // namespace dp::ops
