// Matrix products: matmul and the Linear layer's fused x @ W^T + b (+ ReLU).
#include <optional>

#include "autograd/autocast_mode.h"
#include "autograd/grad_mode.h"
#include "ops/autocast.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

// out = op(a) @ op(b) (+ bias) (relu), through the backend, in a's dtype or `dtype`;
// shapes already checked.
Tensor raw_matmul(const Tensor& a, const Tensor& b, const Tensor* bias, Shape out_shape,
                  MatmulParams p, std::optional<DType> dtype = std::nullopt) {
  const std::shared_ptr<Context> ctx = a.context();
  Tensor out = Tensor::empty(ctx, std::move(out_shape), dtype.value_or(a.dtype()), a.device());
  if (out.numel() == 0) return out;
  KView bias_view;
  if (bias) bias_view = bias->kview();
  ctx->backend(a.device().type)
      .matmul(dev(a), a.kview(), b.kview(), bias ? &bias_view : nullptr, out.kview(), p);
  return out;
}

MatmulParams trans(bool ta, bool tb) {
  MatmulParams p;
  p.trans_a = ta;
  p.trans_b = tb;
  return p;
}

class MatmulBackward final : public Node {
 public:
  MatmulBackward(Device d, SavedTensor a, SavedTensor b)
      : Node(d, 1), a_(std::move(a)), b_(std::move(b)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const Tensor a = DP_UNPACK(a_), b = DP_UNPACK(b_);
    Tensor ga, gb;
    if (next_edges_[0].valid()) {
      // ga = g @ b^T, summed over a broadcast batch.
      Shape s = g.shape();
      s.back() = b.shape()[b.ndim() - 2];
      ga = sum_to(raw_matmul(g, b, nullptr, s, trans(false, true)), a.shape());
    }
    if (next_edges_[1].valid()) {
      // gb = a^T @ g, summed over a broadcast batch.
      Shape s = g.shape();
      s[s.size() - 2] = a.shape().back();
      gb = sum_to(raw_matmul(a, g, nullptr, s, trans(true, false)), b.shape());
    }
    return {ga, gb};
  }
  const char* name() const override { return "MatmulBackward"; }
  void release_saved() override {
    a_.reset();
    b_.reset();
  }

 private:
  SavedTensor a_, b_;
};

// Whether linear's gradient for t, a float32 tensor that autocast lowers to bfloat16, is
// computed in float32 straight from the bfloat16 operands: float32 sums with no rounding to
// bfloat16 and no cast back (PyTorch rounds the bfloat16 gradient, then its cast's backward
// widens it), as Megatron-LM's fused weight-gradient accumulation does. Where t's backend
// has such a product (Bf16Kernel::kMatmulIntoFloat32), or stages bfloat16 products anyway
// (then it runs the float32 product of the widened operands, as before, minus the
// rounding); not where it would stage a product that it runs in bfloat16.
bool float32_grad_of_lowered(const Tensor& t) {
  if (!(t.defined() && t.dtype() == DType::kFloat32 && t.requires_grad() &&
        AutocastMode::dtype() == DType::kBFloat16 && GradMode::enabled())) {
    return false;
  }
  const Backend& be = backend_of(t);
  return be.runs_bf16(Bf16Kernel::kMatmulIntoFloat32, dev(t)) ||
         !be.runs_bf16(Bf16Kernel::kMatmul, dev(t));
}

class LinearBackward final : public Node {
 public:
  // f32_weight_grad, f32_bias_grad: the weight (bias) reached the product as a bfloat16
  // copy of the float32 tensor the node's edge leads to, whose gradient it returns in
  // float32.
  LinearBackward(Device d, SavedTensor x, SavedTensor w, SavedTensor y, bool relu, bool has_bias,
                 bool f32_weight_grad, bool f32_bias_grad)
      : Node(d, 1),
        x_(std::move(x)),
        w_(std::move(w)),
        y_(std::move(y)),
        relu_(relu),
        has_bias_(has_bias),
        f32_weight_grad_(f32_weight_grad),
        f32_bias_grad_(f32_bias_grad) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    Tensor g = grads[0];
    const Tensor x = DP_UNPACK(x_), w = DP_UNPACK(w_);
    Backend& be = backend_of(g);
    const int64_t in = w.shape()[1], out = w.shape()[0];
    const bool flat = x.ndim() == 2 && g.ndim() == 2;  // else seen as [rows, in], [rows, out]
    const int64_t rows =
        flat ? x.shape()[0] : numel_of(Shape(x.shape().begin(), x.shape().end() - 1));
    if (relu_) {
      const Tensor y = DP_UNPACK(y_);
      Tensor masked = empty_like(g);
      if (g.numel() > 0)
        be.unary_backward(dev(g), UnaryOp::kRelu, g.kview(), y.kview(), masked.kview());
      g = masked;
    }
    const Tensor g2 = flat ? g : g.view_as_shape({rows, out});
    const Tensor x2 = flat ? x : x.view_as_shape({rows, in});
    Tensor gx, gw, gb;
    if (next_edges_[0].valid()) {
      gx = raw_matmul(g2, w, nullptr, {rows, in}, trans(false, false));
      if (!flat) gx = gx.view_as_shape(x.shape());
    }
    if (next_edges_[1].valid()) {
      gw = raw_matmul(g2, x2, nullptr, {out, in}, trans(true, false),
                      f32_weight_grad_ ? DType::kFloat32 : g2.dtype());
    }
    if (has_bias_ && next_edges_[2].valid()) {
      gb = sum_to(g2, {out}, f32_bias_grad_ ? DType::kFloat32 : g2.dtype());
    }
    return {gx, gw, gb};
  }
  const char* name() const override { return "LinearBackward"; }
  void release_saved() override {
    x_.reset();
    w_.reset();
    y_.reset();
  }

 private:
  SavedTensor x_, w_, y_;
  bool relu_, has_bias_, f32_weight_grad_, f32_bias_grad_;
};

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  const Tensor a = autocast::lower(a_in), b = autocast::lower(b_in);
  check_float(a, "matmul", "a");
  check_same(a, b, "matmul", "a", "b");
  DP_CHECK((a.ndim() == 2 || a.ndim() == 3) && (b.ndim() == 2 || b.ndim() == 3), kShapeMismatch,
           "matmul: a and b must be 2-D or 3-D, got " << shape_str(a.shape()) << " and "
                                                      << shape_str(b.shape()));
  const int64_t K = a.shape().back();
  DP_CHECK(b.shape()[b.ndim() - 2] == K, kShapeMismatch,
           "matmul: a " << shape_str(a.shape()) << " and b " << shape_str(b.shape())
                        << " do not chain (inner sizes " << K << " and " << b.shape()[b.ndim() - 2]
                        << ")");
  if (a.ndim() == 3 && b.ndim() == 3) {
    DP_CHECK(
        a.shape()[0] == b.shape()[0], kShapeMismatch,
        "matmul: batch sizes differ: " << shape_str(a.shape()) << " and " << shape_str(b.shape()));
  }
  const int64_t M = a.shape()[a.ndim() - 2], N = b.shape().back();
  Shape out_shape = a.ndim() == 3 || b.ndim() == 3
                        ? Shape{a.ndim() == 3 ? a.shape()[0] : b.shape()[0], M, N}
                        : Shape{M, N};
  return on_device(a, [&] {
    // [B, M, K] @ [K, N] is one 2-D product over B * M rows.
    Tensor out;
    if (a.ndim() == 3 && b.ndim() == 2) {
      out = raw_matmul(a.view_as_shape({a.shape()[0] * a.shape()[1], K}), b, nullptr,
                       {a.shape()[0] * a.shape()[1], b.shape()[1]}, {})
                .view_as_shape(out_shape);
    } else {
      out = raw_matmul(a, b, nullptr, std::move(out_shape), {});
    }
    if (needs_grad({&a, &b})) {
      set_history(out,
                  make_node<MatmulBackward>({&a, &b}, a.device(), SavedTensor(a), SavedTensor(b)));
    }
    return out;
  });
}

Tensor linear(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in, bool relu) {
  const Tensor x = autocast::lower(x_in);
  // A float32 weight (bias) lowered to bfloat16 whose gradient the node computes in float32
  // itself (float32_grad_of_lowered): its edge goes to it, not to its cast.
  const bool f32_weight_grad = float32_grad_of_lowered(weight_in);
  const bool f32_bias_grad = float32_grad_of_lowered(bias_in);
  const Tensor weight =
      f32_weight_grad ? autocast::lower_untracked(weight_in) : autocast::lower(weight_in);
  const Tensor bias = f32_bias_grad ? autocast::lower_untracked(bias_in) : autocast::lower(bias_in);
  check_float(x, "linear", "x");
  check_same(x, weight, "linear", "x", "weight");
  check_ndim(weight, 2, "linear", "weight");
  DP_CHECK(x.ndim() >= 1 && x.shape().back() == weight.shape()[1], kShapeMismatch,
           "linear: x has shape " << shape_str(x.shape()) << " but weight "
                                  << shape_str(weight.shape()) << " expects " << weight.shape()[1]
                                  << " input features");
  const int64_t out_features = weight.shape()[0];
  if (bias.defined()) {
    check_same(x, bias, "linear", "x", "bias");
    DP_CHECK(bias.ndim() == 1 && bias.shape()[0] == out_features, kShapeMismatch,
             "linear: bias has shape " << shape_str(bias.shape()) << " but weight has "
                                       << out_features << " output features");
  }
  return on_device(x, [&] {
    MatmulParams p;
    p.trans_b = true;
    p.relu = relu;
    const Tensor* b = bias.defined() ? &bias : nullptr;
    Tensor out;
    if (x.ndim() == 2) {  // the common case, without the views around the 2-D product
      out = raw_matmul(x, weight, b, {x.shape()[0], out_features}, p);
    } else {  // [..., in] as [rows, in]
      Shape out_shape = x.shape();
      out_shape.back() = out_features;
      const int64_t rows = numel_of(Shape(x.shape().begin(), x.shape().end() - 1));
      out =
          raw_matmul(x.view_as_shape({rows, x.shape().back()}), weight, b, {rows, out_features}, p)
              .view_as_shape(out_shape);
    }
    const Tensor& w_edge = f32_weight_grad ? weight_in : weight;
    const Tensor& b_edge = f32_bias_grad ? bias_in : bias;
    if (needs_grad({&x, &w_edge, &b_edge})) {
      auto node = make_node<LinearBackward>({&x, &w_edge, bias.defined() ? &b_edge : nullptr},
                                            x.device(), SavedTensor(x), SavedTensor(weight),
                                            relu ? SavedTensor(out) : SavedTensor(), relu,
                                            bias.defined(), f32_weight_grad, f32_bias_grad);
      set_history(out, node);
    }
    return out;
  });
}

}  // namespace dp::ops
