// Copies between tensors, within a device and across devices.
#include <cstring>

#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

// The worker a cross-device copy runs on: the current thread's if it is the worker of
// either device (a worker never waits on another worker, so device tasks cannot
// deadlock on each other), else the destination's.
Device exec_device(const Context& ctx, Device dst, Device src) {
  if (ctx.worker(src).is_current()) return src;
  return dst;
}

// The backend that can reach both devices: the non-CPU one, if any.
Backend& copy_backend(const Context& ctx, Device dst, Device src) {
  if (!dst.is_cpu()) return ctx.backend(dst.type);
  return ctx.backend(src.type);
}

void raw_copy(const Tensor& dst, const Tensor& src) {
  const size_t n = src.nbytes();
  if (n == 0) return;
  auto ctx = src.context();
  if (dst.device().is_cpu() && src.device().is_cpu()) {
    // CPU devices share the host's memory: no worker needed.
    if (dst.data() != src.data()) std::memcpy(dst.data(), src.data(), n);
    return;
  }
  const Device exec = exec_device(*ctx, dst.device(), src.device());
  ctx->run(exec, [&] {
    copy_backend(*ctx, dst.device(), src.device())
        .copy_2d(exec, dst.device(), dst.data(), n, src.device(), src.data(), n, n, 1);
  });
}

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
  raw_copy(dst, src);
}

Tensor to_device(const Tensor& t, Device device) {
  check_defined(t, "to_device", "tensor");
  auto ctx = t.context();
  ctx->check_device(device, "device");
  Tensor out = Tensor::empty(ctx, t.shape(), t.dtype(), device);
  raw_copy(out, t);
  if (needs_grad({&t})) {
    set_history(out, make_node<ToDeviceBackward>({&t}, device, t.device()));
  }
  return out;
}

Tensor clone(const Tensor& t) {
  check_defined(t, "clone", "tensor");
  Tensor out = Tensor::empty(t.context(), t.shape(), t.dtype(), t.device());
  raw_copy(out, t);
  if (needs_grad({&t})) set_history(out, make_node<CloneBackward>({&t}, t.device()));
  return out;
}

}  // namespace dp::ops
