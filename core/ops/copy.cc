// Copies between tensors, within a device and across devices.
#include "tensor/copy.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class ToDeviceBackward final : public Node {
 public:
  ToDeviceBackward(Device out_device, Device in_device) : Node(out_device, 1), in_(in_device) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return {to_device(grads[0], in_)};
  }
  const char* name() const override { return "ToDeviceBackward"; }

 private:
  Device in_;
};

class CloneBackward final : public Node {
 public:
  explicit CloneBackward(Device d) : Node(d, 1) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override { return {std::move(grads[0])}; }
  const char* name() const override { return "CloneBackward"; }
};

}  // namespace

void copy_(const Tensor& dst, const Tensor& src) {
  check_defined(dst, "copy", "dst");
  check_defined(src, "copy", "src");
  DP_CHECK(dst.dtype() == src.dtype(), kDtypeMismatch,
           "copy: dst is " << dtype_name(dst.dtype()) << " but src is " << dtype_name(src.dtype()));
  DP_CHECK(dst.numel() == src.numel(), kShapeMismatch,
           "copy: dst has shape " << shape_str(dst.shape()) << " but src has shape "
                                  << shape_str(src.shape()));
  dst.bump_version();
  copy_bytes(dst, src);
}

Tensor to_device(const Tensor& t, Device device) {
  check_defined(t, "to_device", "tensor");
  Tensor out = copy_to_device(t, device);
  if (needs_grad({&t})) {
    set_history(out, make_node<ToDeviceBackward>({&t}, device, t.device()));
  }
  return out;
}

Tensor clone(const Tensor& t) {
  check_defined(t, "clone", "tensor");
  Tensor out = copy_to_device(t, t.device());
  if (needs_grad({&t})) set_history(out, make_node<CloneBackward>({&t}, t.device()));
  return out;
}

}  // namespace dp::ops
