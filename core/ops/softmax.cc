// softmax and log_softmax along one dimension.
#include "ops/autocast.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class SoftmaxBackward final : public Node {
 public:
  SoftmaxBackward(Device d, SavedTensor y, int dim, bool log)
      : Node(d, 1), y_(std::move(y)), dim_(dim), log_(log) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const Tensor y = DP_UNPACK(y_);
    Tensor gx = empty_like(g);
    if (gx.numel() > 0) {
      backend_of(g).softmax_backward(dev(g), g.kview(), y.kview(), dim_, log_, gx.kview());
    }
    return {gx};
  }
  const char* name() const override { return log_ ? "LogSoftmaxBackward" : "SoftmaxBackward"; }
  void release_saved() override { y_.reset(); }

 private:
  SavedTensor y_;
  int dim_;
  bool log_;
};

Tensor softmax_impl(const Tensor& x, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  check_float(x, name, "x");
  const int d = wrap_dim(dim, x.ndim(), (std::string(name) + ": dim").c_str());
  return on_device(x, [&] {
    Tensor y = empty_like(x);
    if (y.numel() > 0) backend_of(x).softmax(dev(x), x.kview(), d, log, y.kview());
    if (needs_grad({&x})) {
      set_history(y, make_node<SoftmaxBackward>({&x}, x.device(), SavedTensor(y), d, log));
    }
    return y;
  });
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  return softmax_impl(autocast::fp32(x), dim, false);
}
Tensor log_softmax(const Tensor& x, int64_t dim) {
  return softmax_impl(autocast::fp32(x), dim, true);
}

}  // namespace dp::ops
