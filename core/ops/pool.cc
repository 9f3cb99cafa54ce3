// 2-D max and average pooling, as torch.nn.functional.max_pool2d / avg_pool2d
// (floor mode; average pooling counts padding).
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class Pool2dBackward final : public Node {
 public:
  Pool2dBackward(Device d, SavedTensor x, Tensor workspace, Pool2dParams p)
      : Node(d, 1), x_(std::move(x)), workspace_(std::move(workspace)), p_(p) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const Tensor x = DP_UNPACK(x_);
    Tensor gx = empty_like(x);
    backend_of(g).pool2d_backward(dev(g), g.kview(), x.kview(),
                                  workspace_.defined() ? workspace_.data() : nullptr, gx.kview(),
                                  p_);
    return {gx};
  }
  const char* name() const override {
    return p_.kind == PoolKind::kMax ? "MaxPool2dBackward" : "AvgPool2dBackward";
  }
  void release_saved() override {
    x_.reset();
    workspace_ = Tensor();
  }

 private:
  SavedTensor x_;
  Tensor workspace_;  // the backend's record of where each maximum came from
  Pool2dParams p_;
};

}  // namespace

Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p, const char* name) {
  DP_CHECK(x.size() == 4, kShapeMismatch,
           name << ": x must have 4 dimensions, got shape " << shape_str(x));
  DP_CHECK(p.kernel_h > 0 && p.kernel_w > 0, kInvalidArgument,
           name << ": kernel = (" << p.kernel_h << ", " << p.kernel_w << ") must be positive");
  DP_CHECK(p.stride_h > 0 && p.stride_w > 0, kInvalidArgument,
           name << ": stride = (" << p.stride_h << ", " << p.stride_w << ") must be positive");
  DP_CHECK(p.pad_h >= 0 && p.pad_w >= 0 && p.pad_h <= p.kernel_h / 2 && p.pad_w <= p.kernel_w / 2,
           kInvalidArgument,
           name << ": padding = (" << p.pad_h << ", " << p.pad_w
                << ") must be between 0 and half the kernel");
  DP_CHECK(x[2] + 2 * int64_t{p.pad_h} >= p.kernel_h && x[3] + 2 * int64_t{p.pad_w} >= p.kernel_w,
           kShapeMismatch,
           name << ": kernel " << p.kernel_h << "x" << p.kernel_w << " does not fit input "
                << shape_str(x));
  const int64_t OH = (x[2] + 2 * int64_t{p.pad_h} - p.kernel_h) / p.stride_h + 1;
  const int64_t OW = (x[3] + 2 * int64_t{p.pad_w} - p.kernel_w) / p.stride_w + 1;
  return {x[0], x[1], OH, OW};
}

namespace {

Tensor pool2d(const Tensor& x, Pool2dParams p, const char* name) {
  check_float(x, name, "x");
  check_ndim(x, 4, name, "x");
  const Shape y_shape = pool2d_output_shape(x.shape(), p, name);
  return on_device(x, [&] {
    Backend& be = backend_of(x);
    Tensor y = empty_like(x, y_shape);
    const bool grad = needs_grad({&x});
    Tensor ws;
    if (grad && p.kind == PoolKind::kMax) {
      const size_t bytes = be.pool2d_workspace_bytes(dev(x), x.kview(), y.kview(), p);
      ws = Tensor::empty(x.context(), {static_cast<int64_t>(bytes)}, DType::kUInt8, x.device());
    }
    if (y.numel() > 0)
      be.pool2d(dev(x), x.kview(), y.kview(), ws.defined() ? ws.data() : nullptr, p);
    if (grad) set_history(y, make_node<Pool2dBackward>({&x}, x.device(), SavedTensor(x), ws, p));
    return y;
  });
}

}  // namespace

Tensor max_pool2d(const Tensor& x, int kernel_h, int kernel_w, int stride_h, int stride_w,
                  int pad_h, int pad_w) {
  return pool2d(x, {PoolKind::kMax, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w},
                "max_pool2d");
}

Tensor avg_pool2d(const Tensor& x, int kernel_h, int kernel_w, int stride_h, int stride_w,
                  int pad_h, int pad_w) {
  return pool2d(x, {PoolKind::kAvg, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w},
                "avg_pool2d");
}

}  // namespace dp::ops
