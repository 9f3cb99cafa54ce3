// Losses: cross entropy (log_softmax + negative log-likelihood, mean over the batch) and
// mean squared error.
#include "ops/autocast.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class NllLossBackward final : public Node {
 public:
  NllLossBackward(Device d, const Tensor& target, Shape input_shape)
      : Node(d, 1), target_(target), input_shape_(std::move(input_shape)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const Tensor target = DP_UNPACK(target_);
    Tensor gx = empty_like(g, input_shape_);
    if (gx.numel() > 0)
      backend_of(g).nll_loss_backward(dev(g), g.kview(), target.kview(), gx.kview());
    return {gx};
  }
  const char* name() const override { return "NllLossBackward"; }
  void release_saved() override { target_.reset(); }

 private:
  SavedTensor target_;
  Shape input_shape_;
};

// Checks a [N, C] float input (named `arg` in messages) and its [N] int64 targets.
void check_targets(const Tensor& input, const Tensor& target, const char* op, const char* arg) {
  check_float(input, op, arg);
  check_dtype(target, DType::kInt64, op, "target");
  check_ndim(input, 2, op, arg);
  check_ndim(target, 1, op, "target");
  DP_CHECK(target.shape()[0] == input.shape()[0], kShapeMismatch,
           op << ": " << arg << " has " << input.shape()[0] << " rows but target has "
              << target.shape()[0] << " entries");
  DP_CHECK(target.device() == input.device(), kDeviceMismatch,
           op << ": " << arg << " is on " << input.device().str() << " but target is on "
              << target.device().str());
}

}  // namespace

Tensor nll_loss(const Tensor& log_probs_in, const Tensor& target) {
  const Tensor log_probs = autocast::fp32(log_probs_in);
  check_targets(log_probs, target, "nll_loss", "log_probs");
  return on_device(log_probs, [&] {
    Tensor out = empty_like(log_probs, {});
    backend_of(log_probs).nll_loss(dev(log_probs), log_probs.kview(), target.kview(), out.kview());
    if (needs_grad({&log_probs})) {
      set_history(out, make_node<NllLossBackward>({&log_probs}, log_probs.device(), target.detach(),
                                                  log_probs.shape()));
    }
    return out;
  });
}

Tensor cross_entropy(const Tensor& logits_in, const Tensor& target) {
  const Tensor logits = autocast::fp32(logits_in);
  check_targets(logits, target, "cross_entropy", "logits");
  return on_device(logits, [&] { return nll_loss(log_softmax(logits, 1), target); });
}

Tensor mse_loss(const Tensor& input_in, const Tensor& target_in) {
  const Tensor input = autocast::fp32(input_in), target = autocast::fp32(target_in);
  check_float(input, "mse_loss", "input");
  check_same(input, target, "mse_loss", "input", "target");
  DP_CHECK(input.shape() == target.shape(), kShapeMismatch,
           "mse_loss: input has shape " << shape_str(input.shape()) << " but target has "
                                        << shape_str(target.shape()));
  return on_device(input, [&] {
    const Tensor d = sub(input, target);
    return mean(mul(d, d));
  });
}

}  // namespace dp::ops
