// Sums, means and argmax.
#include <cmath>
#include <optional>

#include "ops/autocast.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

// g (with x's rank, size 1 in reduced dims) broadcast back to `shape`, times factor.
Tensor expand_to(const Tensor& g, const Shape& shape, double factor) {
  Tensor out = empty_like(g, shape);
  if (out.numel() == 0) return out;
  Backend& b = backend_of(g);
  b.fill(dev(g), out.kview(), 0.0);
  b.binary(dev(g), BinaryOp::kAdd, out.kview(), g.kview(), out.kview());
  if (factor != 1.0) b.affine(dev(g), out.kview(), out.kview(), factor, 0.0);
  return out;
}

class SumBackward final : public Node {
 public:
  SumBackward(Device d, Shape input_shape, Shape kept_shape, double factor)
      : Node(d, 1),
        input_shape_(std::move(input_shape)),
        kept_shape_(std::move(kept_shape)),
        factor_(factor) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return {expand_to(grads[0].view_as_shape(kept_shape_), input_shape_, factor_)};
  }
  const char* name() const override { return "SumBackward"; }

 private:
  Shape input_shape_, kept_shape_;
  double factor_;
};

// Sums x over the dims where `kept` (x's rank) has size 1 and x does not; the result has
// shape `result` (same element count as kept), in x's dtype or `dtype`. mean scales by
// 1/count.
Tensor reduce(const Tensor& x, const Shape& kept, const Shape& result, bool mean, const char* name,
              std::optional<DType> dtype = std::nullopt) {
  check_float(x, name, "x");
  return on_device(x, [&] {
    const int64_t count = x.numel() / std::max<int64_t>(1, numel_of(kept));
    Tensor out = Tensor::empty(x.context(), kept, dtype.value_or(x.dtype()), x.device());
    Backend& b = backend_of(x);
    if (x.numel() == 0) {
      b.fill(dev(x), out.kview(), mean ? std::nan("") : 0.0);
    } else {
      b.reduce_sum(dev(x), x.kview(), out.kview());
      if (mean && count != 1) {
        b.affine(dev(x), out.kview(), out.kview(), 1.0 / static_cast<double>(count), 0.0);
      }
    }
    out = out.view_as_shape(result);
    if (needs_grad({&x})) {
      const double factor = mean ? 1.0 / static_cast<double>(std::max<int64_t>(count, 1)) : 1.0;
      set_history(out, make_node<SumBackward>({&x}, x.device(), x.shape(), kept, factor));
    }
    return out;
  });
}

Shape all_ones(int ndim) {
  return Shape(static_cast<size_t>(ndim), 1);
}

Tensor reduce_dim(const Tensor& x, int64_t dim, bool keepdim, bool mean, const char* name) {
  check_defined(x, name, "x");
  const int d = wrap_dim(dim, x.ndim(), (std::string(name) + ": dim").c_str());
  Shape kept = x.shape();
  Shape result = x.shape();
  if (x.ndim() > 0) {
    kept[d] = 1;
    if (keepdim) {
      result[d] = 1;
    } else {
      result.erase(result.begin() + d);
    }
  }
  return reduce(x, kept, result, mean, name);
}

}  // namespace

Tensor sum(const Tensor& x_in) {
  check_defined(x_in, "sum", "x");
  const Tensor x = autocast::fp32(x_in);
  return reduce(x, all_ones(x.ndim()), {}, false, "sum");
}

Tensor sum(const Tensor& x, int64_t dim, bool keepdim) {
  return reduce_dim(autocast::fp32(x), dim, keepdim, false, "sum");
}

Tensor mean(const Tensor& x_in) {
  check_defined(x_in, "mean", "x");
  const Tensor x = autocast::fp32(x_in);
  return reduce(x, all_ones(x.ndim()), {}, true, "mean");
}

Tensor mean(const Tensor& x, int64_t dim, bool keepdim) {
  return reduce_dim(autocast::fp32(x), dim, keepdim, true, "mean");
}

Tensor sum_to(const Tensor& x, const Shape& shape) {
  return sum_to(x, shape, x.dtype());
}

Tensor sum_to(const Tensor& x, const Shape& shape, DType dtype) {
  if (x.shape() == shape && x.dtype() == dtype) return x;
  const int lead = x.ndim() - static_cast<int>(shape.size());
  DP_CHECK(lead >= 0, kShapeMismatch,
           "sum_to: cannot sum " << shape_str(x.shape()) << " down to " << shape_str(shape));
  DP_CHECK(dtype == x.dtype() || (x.dtype() == DType::kBFloat16 && dtype == DType::kFloat32),
           kInvalidArgument,
           "sum_to: cannot sum " << dtype_name(x.dtype()) << " into " << dtype_name(dtype)
                                 << " (only into its own dtype, or bfloat16 into float32)");
  Shape kept(x.shape().size(), 1);
  for (size_t i = 0; i < shape.size(); ++i) kept[lead + i] = shape[i];
  GradModeGuard no_grad(false);
  return reduce(x, kept, shape, false, "sum_to", dtype);
}

Tensor argmax(const Tensor& x, int64_t dim) {
  check_float(x, "argmax", "x");
  const int d = wrap_dim(dim, x.ndim(), "argmax: dim");
  Shape out_shape = x.shape();
  if (x.ndim() > 0) {
    DP_CHECK(x.shape()[d] > 0, kShapeMismatch,
             "argmax: dimension " << d << " of shape " << shape_str(x.shape()) << " is empty");
    out_shape.erase(out_shape.begin() + d);
  }
  return on_device(x, [&] {
    Tensor out = Tensor::empty(x.context(), out_shape, DType::kInt64, x.device());
    if (x.numel() > 0) backend_of(x).argmax(dev(x), x.kview(), d, out.kview());
    return out;
  });
}

}  // namespace dp::ops
