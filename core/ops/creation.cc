// Creating tensors and moving bytes between them and host memory.
#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

// The refusal of an in-place write to to_dtype_from's result (Tensor::check_writable).
const char* const kSharedConversion =
    "that shares a conversion kept for reuse (autocast's copy of a parameter); copy it first";

Device host_device() {
  return cpu(0);
}

// Host <-> device bytes. CPU tensors are host memory: copied on the calling thread.
void host_transfer(const Tensor& t, void* host, bool to_host) {
  const size_t n = t.nbytes();
  if (n == 0) return;
  if (t.device().is_cpu()) {
    if (to_host) {
      std::memcpy(host, t.data(), n);
    } else {
      std::memcpy(t.data(), host, n);
    }
    return;
  }
  on_device(t, [&] {
    Backend& b = backend_of(t);
    if (to_host) {
      b.copy_2d(t.device(), host_device(), host, n, t.device(), t.data(), n, n, 1);
    } else {
      b.copy_2d(t.device(), t.device(), t.data(), n, host_device(), host, n, n, 1);
    }
    b.synchronize(t.device().index);
  });
}

template <class Gen>
Tensor host_generated(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype,
                      Device device, Gen&& gen) {
  DP_CHECK(is_floating(dtype), kDtypeMismatch,
           "random tensors must be float32 or float64, got " << dtype_name(dtype));
  // The tensor first: a size too large fails there, as any allocation does (out of
  // memory, naming the bytes), before any host memory is taken. A CPU tensor is written in
  // place; another device's takes one host copy in its own dtype.
  Tensor t = empty(ctx, shape, dtype, device);
  const size_t n = static_cast<size_t>(t.numel());
  // gen(out, n) fills n values of the tensor's dtype, from the context's stream.
  auto fill = [&](void* out) {
    ctx->with_init_generator([&](TorchGenerator& g) {
      if (dtype == DType::kFloat64) {
        gen(g, static_cast<double*>(out), n);
      } else {
        gen(g, static_cast<float*>(out), n);
      }
    });
  };
  if (device.is_cpu()) {
    fill(t.data());
    return t;
  }
  std::vector<unsigned char> staging(t.nbytes());
  fill(staging.data());
  host_transfer(t, staging.data(), false);
  return t;
}

}  // namespace

Tensor empty(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device) {
  ctx->check_device(device, "device");
  return Tensor::empty(ctx, shape, dtype, device);
}

Tensor full(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device,
            double value) {
  Tensor t = empty(ctx, shape, dtype, device);
  fill_(t, value);
  return t;
}

Tensor zeros(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device) {
  return full(ctx, shape, dtype, device, 0.0);
}

Tensor zeros_like(const Tensor& t) {
  return full(t.context(), t.shape(), t.dtype(), t.device(), 0.0);
}

Tensor from_host(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype,
                 Device device, const void* data) {
  Tensor t = empty(ctx, shape, dtype, device);
  host_transfer(t, const_cast<void*>(data), false);
  return t;
}

Tensor uniform(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device,
               double low, double high) {
  return host_generated(ctx, shape, dtype, device, [&](TorchGenerator& g, auto* out, size_t n) {
    g.uniform(out, n, low, high);
  });
}

Tensor normal(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device,
              double mean, double std) {
  return host_generated(ctx, shape, dtype, device, [&](TorchGenerator& g, auto* out, size_t n) {
    g.normal(out, n, mean, std);
  });
}

void to_host(const Tensor& t, void* dst) {
  check_defined(t, "to_host", "tensor");
  host_transfer(t, dst, true);
}

void copy_from_host(const Tensor& t, const void* src) {
  check_defined(t, "copy_from_host", "tensor");
  t.bump_version();
  host_transfer(t, const_cast<void*>(src), false);
}

void fill_(const Tensor& t, double value) {
  check_defined(t, "fill", "tensor");
  if (t.dtype() == DType::kInt64) {
    // Converting NaN or a value outside int64's range is undefined behaviour.
    DP_CHECK(
        std::isfinite(value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0,
        kInvalidArgument, "value = " << value << " cannot be represented as int64");
  }
  t.bump_version();
  if (t.numel() == 0) return;
  on_device(t, [&] { backend_of(t).fill(dev(t), t.kview(), value); });
}

namespace {
class ToDtypeBackward final : public Node {
 public:
  ToDtypeBackward(Device d, DType input_dtype) : Node(d, 1), input_dtype_(input_dtype) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return {to_dtype(grads[0], input_dtype_)};
  }
  const char* name() const override { return "ToDtypeBackward"; }

 private:
  DType input_dtype_;
};
}  // namespace

Tensor to_dtype(const Tensor& t, DType dtype) {
  check_defined(t, "to_dtype", "tensor");
  return on_device(t, [&] {
    Tensor out = Tensor::empty(t.context(), t.shape(), dtype, t.device());
    if (t.numel() > 0) backend_of(t).cast(dev(t), t.kview(), out.kview());
    if (is_floating(dtype) && needs_grad({&t})) {
      set_history(out, make_node<ToDtypeBackward>({&t}, t.device(), t.dtype()));
    }
    return out;
  });
}

Tensor to_dtype_from(const Tensor& t, const Tensor& converted) {
  check_defined(t, "to_dtype_from", "tensor");
  check_defined(converted, "to_dtype_from", "converted");
  DP_CHECK(
      converted.shape() == t.shape() && is_floating(converted.dtype()) && is_floating(t.dtype()),
      kInternal, "to_dtype_from: converted does not match the tensor");
  // Another CPU device's memory (a replica's parameter asks): seen on t's device, as
  // DataParallel's replicas see the parameters.
  Tensor out =
      converted.device() == t.device() ? converted.detach() : converted.on_cpu_device(t.device());
  out.impl()->read_only_reason = kSharedConversion;
  if (needs_grad({&t})) {
    set_history(out, make_node<ToDtypeBackward>({&t}, t.device(), t.dtype()));
  }
  return out;
}

void cast_into(const Tensor& dst, const Tensor& src) {
  check_defined(dst, "cast_into", "dst");
  check_defined(src, "cast_into", "src");
  DP_CHECK(dst.numel() == src.numel() && dst.device() == src.device(), kShapeMismatch,
           "cast_into: dst (" << shape_str(dst.shape()) << " on " << dst.device().str()
                              << ") and src (" << shape_str(src.shape()) << " on "
                              << src.device().str() << ") differ in size or device");
  dst.bump_version();
  if (src.numel() == 0) return;
  on_device(src, [&] { backend_of(src).cast(dev(src), src.kview(), dst.kview()); });
}

}  // namespace dp::ops
