#include "autograd/grad_arith.h"

#include "context/context.h"
#include "error.h"

namespace dp {

namespace {

// Runs f(backend, device index) on the worker of t's device (inline when already there).
template <class F>
void on_worker_of(const Tensor& t, F&& f) {
  auto ctx = t.context();
  Backend& backend = ctx->backend(t.device().type);
  ctx->run(t.device(), [&] { f(backend, t.device().index); });
}

void check_dtypes(const Tensor& a, const Tensor& b, const char* what) {
  DP_CHECK(a.dtype() == b.dtype(), kDtypeMismatch,
           what << ": one gradient is " << dtype_name(a.dtype()) << " but the other is "
                << dtype_name(b.dtype()));
}

}  // namespace

Tensor grad_sum(const Tensor& a, const Tensor& b) {
  check_dtypes(a, b, "gradient sum");
  DP_CHECK(a.device() == b.device(), kDeviceMismatch,
           "gradient sum: one gradient is on " << a.device().str() << " but the other is on "
                                               << b.device().str());
  Tensor out =
      Tensor::empty(a.context(), broadcast_shapes(a.shape(), b.shape()), a.dtype(), a.device());
  if (out.numel() == 0) return out;
  on_worker_of(a, [&](Backend& backend, int dev) {
    backend.binary(dev, BinaryOp::kAdd, a.kview(), b.kview(), out.kview());
  });
  return out;
}

void grad_accumulate_(const Tensor& grad, const Tensor& g) {
  check_dtypes(grad, g, "gradient accumulation");
  // CPU devices share memory, so a CPU kernel may read another CPU device's tensor.
  DP_CHECK(grad.device() == g.device() || (grad.device().is_cpu() && g.device().is_cpu()),
           kDeviceMismatch,
           "gradient accumulation: the grad is on "
               << grad.device().str() << " but the new gradient is on " << g.device().str());
  DP_CHECK(broadcast_shapes(grad.shape(), g.shape()) == grad.shape(), kShapeMismatch,
           "gradient accumulation: a gradient of shape " << shape_str(g.shape())
                                                         << " does not broadcast to the grad's "
                                                         << shape_str(grad.shape()));
  grad.bump_version();
  if (grad.numel() == 0) return;
  on_worker_of(grad, [&](Backend& backend, int dev) {
    backend.binary(dev, BinaryOp::kAdd, grad.kview(), g.kview(), grad.kview());
  });
}

Tensor grad_ones(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype,
                 Device device) {
  ctx->check_device(device, "device");
  Tensor out = Tensor::empty(ctx, shape, dtype, device);
  if (out.numel() == 0) return out;
  on_worker_of(out, [&](Backend& backend, int dev) { backend.fill(dev, out.kview(), 1.0); });
  return out;
}

}  // namespace dp
