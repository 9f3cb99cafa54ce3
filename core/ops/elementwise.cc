// Elementwise arithmetic with broadcasting, scalar affine maps, and activations.
#include "ops/autocast.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "add";
    case BinaryOp::kSub:
      return "sub";
    case BinaryOp::kMul:
      return "mul";
    case BinaryOp::kDiv:
      return "div";
  }
  return "binary";
}

Tensor raw_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Shape& out_shape) {
  Tensor out = empty_like(a, out_shape);
  if (out.numel() > 0) backend_of(a).binary(dev(a), op, a.kview(), b.kview(), out.kview());
  return out;
}

class BinaryBackward final : public Node {
 public:
  BinaryBackward(Device d, BinaryOp op, Shape a_shape, Shape b_shape, SavedTensor a, SavedTensor b)
      : Node(d, 1),
        op_(op),
        a_shape_(std::move(a_shape)),
        b_shape_(std::move(b_shape)),
        a_(std::move(a)),
        b_(std::move(b)) {}

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const bool need_a = next_edges_[0].valid(), need_b = next_edges_[1].valid();
    Tensor ga, gb;
    switch (op_) {
      case BinaryOp::kAdd:
        if (need_a) ga = sum_to(g, a_shape_);
        if (need_b) gb = sum_to(g, b_shape_);
        break;
      case BinaryOp::kSub:
        if (need_a) ga = sum_to(g, a_shape_);
        if (need_b) gb = neg(sum_to(g, b_shape_));
        break;
      case BinaryOp::kMul:
        if (need_a) ga = sum_to(mul(g, DP_UNPACK(b_)), a_shape_);
        if (need_b) gb = sum_to(mul(g, DP_UNPACK(a_)), b_shape_);
        break;
      case BinaryOp::kDiv: {
        const Tensor b = DP_UNPACK(b_);
        if (need_a) ga = sum_to(div(g, b), a_shape_);
        // -g (a / b) / b, as PyTorch: b * b would overflow (or vanish) where the quotient
        // and the gradient do not.
        if (need_b) gb = sum_to(neg(mul(g, div(div(DP_UNPACK(a_), b), b))), b_shape_);
        break;
      }
    }
    return {ga, gb};
  }
  const char* name() const override { return "BinaryBackward"; }
  void release_saved() override {
    a_.reset();
    b_.reset();
  }

 private:
  BinaryOp op_;
  Shape a_shape_, b_shape_;
  SavedTensor a_, b_;
};

Tensor binary(BinaryOp op, const Tensor& a_in, const Tensor& b_in) {
  const char* name = binary_name(op);
  check_defined(a_in, name, "a");
  Tensor a = a_in, b = b_in;
  autocast::promote(a, b);
  check_same(a, b, name, "a", "b");
  Shape out_shape;
  try {
    out_shape = broadcast_shapes(a.shape(), b.shape());
  } catch (const Error& e) {
    throw Error(e.code(), std::string(name) + ": a and b: " + e.what());
  }
  return on_device(a, [&] {
    Tensor out = raw_binary(op, a, b, out_shape);
    if (needs_grad({&a, &b})) {
      const bool save = op == BinaryOp::kMul || op == BinaryOp::kDiv;
      set_history(out, make_node<BinaryBackward>({&a, &b}, a.device(), op, a.shape(), b.shape(),
                                                 save ? SavedTensor(a) : SavedTensor(),
                                                 save ? SavedTensor(b) : SavedTensor()));
    }
    return out;
  });
}

class AffineBackward final : public Node {
 public:
  AffineBackward(Device d, double alpha) : Node(d, 1), alpha_(alpha) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return {alpha_ == 1.0 ? std::move(grads[0]) : scale(grads[0], alpha_)};
  }
  const char* name() const override { return "AffineBackward"; }

 private:
  double alpha_;
};

Tensor affine(const Tensor& x, double alpha, double beta, const char* name) {
  check_float(x, name, "x");
  return on_device(x, [&] {
    Tensor out = empty_like(x);
    if (out.numel() > 0) backend_of(x).affine(dev(x), x.kview(), out.kview(), alpha, beta);
    if (needs_grad({&x})) set_history(out, make_node<AffineBackward>({&x}, x.device(), alpha));
    return out;
  });
}

const char* unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kRelu:
      return "relu";
    case UnaryOp::kGelu:
      return "gelu";
    case UnaryOp::kTanh:
      return "tanh";
    case UnaryOp::kSigmoid:
      return "sigmoid";
    case UnaryOp::kExp:
      return "exp";
    case UnaryOp::kLog:
      return "log";
  }
  return "unary";
}

// tanh, sigmoid and exp differentiate from their output; the others from their input.
bool saves_output(UnaryOp op) {
  return op == UnaryOp::kTanh || op == UnaryOp::kSigmoid || op == UnaryOp::kExp;
}

class UnaryBackward final : public Node {
 public:
  UnaryBackward(Device d, UnaryOp op, SavedTensor saved)
      : Node(d, 1), op_(op), saved_(std::move(saved)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const Tensor s = DP_UNPACK(saved_);
    Tensor gx = empty_like(g);
    if (gx.numel() > 0) backend_of(g).unary_backward(dev(g), op_, g.kview(), s.kview(), gx.kview());
    return {gx};
  }
  const char* name() const override { return "UnaryBackward"; }
  void release_saved() override { saved_.reset(); }

 private:
  UnaryOp op_;
  SavedTensor saved_;
};

Tensor unary(UnaryOp op, const Tensor& x) {
  const char* name = unary_name(op);
  check_float(x, name, "x");
  return on_device(x, [&] {
    Tensor out = empty_like(x);
    if (out.numel() > 0) backend_of(x).unary(dev(x), op, x.kview(), out.kview());
    if (needs_grad({&x})) {
      set_history(out, make_node<UnaryBackward>({&x}, x.device(), op,
                                                SavedTensor(saves_output(op) ? out : x)));
    }
    return out;
  });
}

void check_in_place(const Tensor& t, const char* op) {
  DP_CHECK(!(GradMode::enabled() && t.requires_grad()), kState,
           op << ": cannot modify in place a tensor that requires grad while grad mode is on");
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kAdd, a, b);
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kSub, a, b);
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kMul, a, b);
}
Tensor div(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::kDiv, a, b);
}
Tensor neg(const Tensor& x) {
  return affine(x, -1.0, 0.0, "neg");
}
Tensor scale(const Tensor& x, double factor) {
  return affine(x, factor, 0.0, "scale");
}
Tensor add_scalar(const Tensor& x, double value) {
  return affine(x, 1.0, value, "add_scalar");
}

Tensor relu(const Tensor& x) {
  return unary(UnaryOp::kRelu, x);
}
Tensor gelu(const Tensor& x) {
  return unary(UnaryOp::kGelu, x);
}
Tensor tanh(const Tensor& x) {
  return unary(UnaryOp::kTanh, x);
}
Tensor sigmoid(const Tensor& x) {
  return unary(UnaryOp::kSigmoid, x);
}
Tensor exp(const Tensor& x) {
  return unary(UnaryOp::kExp, x);
}
Tensor log(const Tensor& x) {
  return unary(UnaryOp::kLog, x);
}

void add_(const Tensor& dst, const Tensor& src, double alpha) {
  check_defined(dst, "add_", "dst");
  check_defined(src, "add_", "src");
  check_in_place(dst, "add_");
  DP_CHECK(dst.dtype() == src.dtype(), kDtypeMismatch,
           "add_: dst is " << dtype_name(dst.dtype()) << " but src is " << dtype_name(src.dtype()));
  // CPU devices share memory, so a CPU kernel may read another CPU device's tensor.
  DP_CHECK(dst.device() == src.device() || (dst.device().is_cpu() && src.device().is_cpu()),
           kDeviceMismatch,
           "add_: dst is on " << dst.device().str() << " but src is on " << src.device().str());
  DP_CHECK(broadcast_shapes(dst.shape(), src.shape()) == dst.shape(), kShapeMismatch,
           "add_: src of shape " << shape_str(src.shape()) << " does not broadcast to dst's "
                                 << shape_str(dst.shape()));
  dst.bump_version();
  if (dst.numel() == 0) return;
  on_device(dst, [&] {
    Backend& b = backend_of(dst);
    if (alpha == 1.0) {
      b.binary(dev(dst), BinaryOp::kAdd, dst.kview(), src.kview(), dst.kview());
    } else {
      Tensor scaled = empty_like(src);
      b.affine(dev(dst), src.kview(), scaled.kview(), alpha, 0.0);
      b.binary(dev(dst), BinaryOp::kAdd, dst.kview(), scaled.kview(), dst.kview());
    }
  });
}

void scale_(const Tensor& t, double factor) {
  check_float(t, "scale_", "tensor");
  check_in_place(t, "scale_");
  t.bump_version();
  if (t.numel() == 0) return;
  on_device(t, [&] { backend_of(t).affine(dev(t), t.kview(), t.kview(), factor, 0.0); });
}

}  // namespace dp::ops
