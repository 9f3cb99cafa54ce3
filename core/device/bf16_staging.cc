#include "device/bf16_staging.h"

#include <deque>
#include <initializer_list>

namespace dp {

namespace {

bool is_bf16(const KView* v) {
  return v != nullptr && v->dtype == DType::kBFloat16;
}

bool any_bf16(std::initializer_list<const KView*> views) {
  for (const KView* v : views) {
    if (is_bf16(v)) return true;
  }
  return false;
}

// v as float32, shape only (for the queries that size a kernel's workspace or state).
KView f32_shape(const KView& v) {
  KView out = v;
  if (out.dtype == DType::kBFloat16) {
    out.dtype = DType::kFloat32;
    out.data = nullptr;
  }
  return out;
}

// cp with the block's rounding of its convolution output to bfloat16 on.
Conv2dParams rounding(Conv2dParams cp) {
  cp.round_bf16 = true;
  return cp;
}

// The float32 buffers of one staged call, freed when it ends.
class Staged {
 public:
  Staged(Backend& be, int dev) : be_(be), dev_(dev) {}
  ~Staged() {
    for (const Buffer& b : buffers_) be_.deallocate(dev_, b.f32.data, b.bytes);
  }
  Staged(const Staged&) = delete;
  Staged& operator=(const Staged&) = delete;

  // An input: its float32 copy (the view itself when it is not bfloat16). The same
  // bfloat16 data seen twice (an input that is also the output) shares one buffer.
  const KView& in(const KView& v) { return stage(v, false); }
  const KView* in(const KView* v) { return v ? &in(*v) : nullptr; }
  // An output: a float32 buffer holding v's current values; finish() rounds it into v.
  const KView& out(const KView& v) { return stage(v, true); }
  const KView* out(const KView* v) { return v ? &out(*v) : nullptr; }
  // An output the kernel writes whole without reading it: a float32 buffer whose values
  // are v's only if v is also an input (whichever of in() and fresh() comes first).
  const KView& fresh(const KView& v) { return stage(v, true, false); }

  // Rounds every staged output into its bfloat16 view.
  void finish() {
    for (Buffer& b : buffers_) {
      if (b.written) be_.cast(dev_, b.f32, b.bf16);
    }
  }

 private:
  struct Buffer {
    KView bf16, f32;
    size_t bytes;
    bool written;
    bool filled;  // holds bf16's values
  };

  const KView& stage(const KView& v, bool written, bool values = true) {
    if (v.dtype != DType::kBFloat16) {
      plain_.push_back(v);
      return plain_.back();
    }
    for (Buffer& b : buffers_) {
      if (b.bf16.data == v.data && b.bf16.numel() == v.numel()) {
        b.written = b.written || written;
        if (values && !b.filled) {
          be_.cast(dev_, v, b.f32);
          b.filled = true;
        }
        return b.f32;
      }
    }
    Buffer b{v, v, static_cast<size_t>(v.numel()) * sizeof(float), written, values};
    b.f32.dtype = DType::kFloat32;
    b.f32.data = be_.allocate(dev_, b.bytes > 0 ? b.bytes : 1);
    buffers_.push_back(b);
    if (values) be_.cast(dev_, v, buffers_.back().f32);
    return buffers_.back().f32;
  }

  Backend& be_;
  int dev_;
  std::deque<Buffer> buffers_;  // deques: references handed out stay valid
  std::deque<KView> plain_;
};

}  // namespace

void Bf16Staging::binary(int dev, BinaryOp op, const KView& a, const KView& b, const KView& out) {
  if (!any_bf16({&a, &b, &out})) return inner_->binary(dev, op, a, b, out);
  Staged s(*inner_, dev);
  inner_->binary(dev, op, s.in(a), s.in(b), s.fresh(out));
  s.finish();
}

void Bf16Staging::affine(int dev, const KView& x, const KView& out, double alpha, double beta) {
  if (!any_bf16({&x, &out})) return inner_->affine(dev, x, out, alpha, beta);
  Staged s(*inner_, dev);
  inner_->affine(dev, s.in(x), s.fresh(out), alpha, beta);
  s.finish();
}

void Bf16Staging::unary(int dev, UnaryOp op, const KView& x, const KView& out) {
  if (!any_bf16({&x, &out})) return inner_->unary(dev, op, x, out);
  Staged s(*inner_, dev);
  inner_->unary(dev, op, s.in(x), s.fresh(out));
  s.finish();
}

void Bf16Staging::unary_backward(int dev, UnaryOp op, const KView& gy, const KView& saved,
                                 const KView& gx) {
  const bool all_bf16 = gy.dtype == DType::kBFloat16 && saved.dtype == DType::kBFloat16 &&
                        gx.dtype == DType::kBFloat16;
  if (!any_bf16({&gy, &saved, &gx}) ||
      (op == UnaryOp::kRelu && all_bf16 && inner_->runs_bf16(Bf16Kernel::kReluBackward, dev))) {
    return inner_->unary_backward(dev, op, gy, saved, gx);
  }
  Staged s(*inner_, dev);
  inner_->unary_backward(dev, op, s.in(gy), s.in(saved), s.fresh(gx));
  s.finish();
}

void Bf16Staging::reduce_sum(int dev, const KView& x, const KView& out) {
  if (!any_bf16({&x, &out})) return inner_->reduce_sum(dev, x, out);
  Staged s(*inner_, dev);
  inner_->reduce_sum(dev, s.in(x), s.out(out));
  s.finish();
}

void Bf16Staging::argmax(int dev, const KView& x, int dim, const KView& out) {
  if (!is_bf16(&x)) return inner_->argmax(dev, x, dim, out);
  Staged s(*inner_, dev);
  inner_->argmax(dev, s.in(x), dim, out);
}

void Bf16Staging::matmul(int dev, const KView& a, const KView& b, const KView* bias,
                         const KView& out, const MatmulParams& p) {
  // bfloat16 a and b into a float32 out: a float32 gradient of bfloat16 operands.
  const bool into_f32 = is_bf16(&a) && is_bf16(&b) && bias == nullptr && !is_bf16(&out);
  const Bf16Kernel kernel = into_f32 ? Bf16Kernel::kMatmulIntoFloat32 : Bf16Kernel::kMatmul;
  if (!any_bf16({&a, &b, bias, &out}) || inner_->runs_bf16(kernel, dev)) {
    return inner_->matmul(dev, a, b, bias, out, p);
  }
  Staged s(*inner_, dev);
  inner_->matmul(dev, s.in(a), s.in(b), s.in(bias), p.accumulate ? s.out(out) : s.fresh(out), p);
  s.finish();
}

void Bf16Staging::softmax(int dev, const KView& x, int dim, bool log, const KView& out) {
  if (!any_bf16({&x, &out})) return inner_->softmax(dev, x, dim, log, out);
  Staged s(*inner_, dev);
  inner_->softmax(dev, s.in(x), dim, log, s.fresh(out));
  s.finish();
}

void Bf16Staging::softmax_backward(int dev, const KView& gy, const KView& y, int dim, bool log,
                                   const KView& gx) {
  if (!any_bf16({&gy, &y, &gx})) return inner_->softmax_backward(dev, gy, y, dim, log, gx);
  Staged s(*inner_, dev);
  inner_->softmax_backward(dev, s.in(gy), s.in(y), dim, log, s.fresh(gx));
  s.finish();
}

void Bf16Staging::conv2d(int dev, const KView& x, const KView& w, const KView* bias, const KView& y,
                         const Conv2dParams& p) {
  if (!any_bf16({&x, &w, bias, &y}) || inner_->runs_bf16(Bf16Kernel::kConv2d, dev)) {
    return inner_->conv2d(dev, x, w, bias, y, p);
  }
  Staged s(*inner_, dev);
  inner_->conv2d(dev, s.in(x), s.in(w), s.in(bias), s.fresh(y), p);
  s.finish();
}

void Bf16Staging::conv2d_backward_data(int dev, const KView& gy, const KView& w, const KView& gx,
                                       const Conv2dParams& p) {
  if (!any_bf16({&gy, &w, &gx}) || inner_->runs_bf16(Bf16Kernel::kConv2dBackwardData, dev)) {
    return inner_->conv2d_backward_data(dev, gy, w, gx, p);
  }
  Staged s(*inner_, dev);
  inner_->conv2d_backward_data(dev, s.in(gy), s.in(w), s.out(gx), p);
  s.finish();
}

void Bf16Staging::conv2d_backward_weights(int dev, const KView& x, const KView& gy, const KView& gw,
                                          const KView* gbias, const Conv2dParams& p) {
  if (!any_bf16({&x, &gy, &gw, gbias}) ||
      inner_->runs_bf16(Bf16Kernel::kConv2dBackwardWeights, dev)) {
    return inner_->conv2d_backward_weights(dev, x, gy, gw, gbias, p);
  }
  Staged s(*inner_, dev);
  inner_->conv2d_backward_weights(dev, s.in(x), s.in(gy), s.out(gw), s.out(gbias), p);
  s.finish();
}

size_t Bf16Staging::pool2d_workspace_bytes(int dev, const KView& x, const KView& y,
                                           const Pool2dParams& p) {
  return inner_->pool2d_workspace_bytes(dev, f32_shape(x), f32_shape(y), p);
}

void Bf16Staging::pool2d(int dev, const KView& x, const KView& y, void* workspace,
                         const Pool2dParams& p) {
  if (!any_bf16({&x, &y})) return inner_->pool2d(dev, x, y, workspace, p);
  Staged s(*inner_, dev);
  inner_->pool2d(dev, s.in(x), s.fresh(y), workspace, p);
  s.finish();
}

void Bf16Staging::pool2d_backward(int dev, const KView& gy, const KView& x, const void* workspace,
                                  const KView& gx, const Pool2dParams& p) {
  if (!any_bf16({&gy, &x, &gx})) return inner_->pool2d_backward(dev, gy, x, workspace, gx, p);
  Staged s(*inner_, dev);
  inner_->pool2d_backward(dev, s.in(gy), s.in(x), workspace, s.out(gx), p);
  s.finish();
}

void Bf16Staging::batch_norm(int dev, const KView& x, const KView& gamma, const KView& beta,
                             const KView& mean, const KView& var, const KView& y, double eps,
                             bool training) {
  if (!any_bf16({&x, &gamma, &beta, &mean, &var, &y})) {
    return inner_->batch_norm(dev, x, gamma, beta, mean, var, y, eps, training);
  }
  Staged s(*inner_, dev);
  const KView& m = training ? s.out(mean) : s.in(mean);
  const KView& v = training ? s.out(var) : s.in(var);
  inner_->batch_norm(dev, s.in(x), s.in(gamma), s.in(beta), m, v, s.out(y), eps, training);
  s.finish();
}

void Bf16Staging::batch_norm_backward(int dev, const KView& gy, const KView& x, const KView& gamma,
                                      const KView& mean, const KView& var, const KView& gx,
                                      const KView& ggamma, const KView& gbeta, double eps) {
  if (!any_bf16({&gy, &x, &gamma, &mean, &var, &gx, &ggamma, &gbeta})) {
    return inner_->batch_norm_backward(dev, gy, x, gamma, mean, var, gx, ggamma, gbeta, eps);
  }
  Staged s(*inner_, dev);
  inner_->batch_norm_backward(dev, s.in(gy), s.in(x), s.in(gamma), s.in(mean), s.in(var), s.out(gx),
                              s.out(ggamma), s.out(gbeta), eps);
  s.finish();
}

void Bf16Staging::dropout_mask(int dev, const KView& mask, double p, uint64_t seed) {
  if (!is_bf16(&mask)) return inner_->dropout_mask(dev, mask, p, seed);
  Staged s(*inner_, dev);
  inner_->dropout_mask(dev, s.out(mask), p, seed);
  s.finish();
}

void Bf16Staging::embedding(int dev, const KView& idx, const KView& weight, const KView& out) {
  inner_->embedding(dev, idx, weight, out);  // a row copy: any dtype
}

void Bf16Staging::embedding_backward(int dev, const KView& idx, const KView& gy, const KView& gw) {
  if (!any_bf16({&gy, &gw})) return inner_->embedding_backward(dev, idx, gy, gw);
  Staged s(*inner_, dev);
  inner_->embedding_backward(dev, idx, s.in(gy), s.out(gw));
  s.finish();
}

void Bf16Staging::nll_loss(int dev, const KView& logp, const KView& target, const KView& out) {
  if (!any_bf16({&logp, &out})) return inner_->nll_loss(dev, logp, target, out);
  Staged s(*inner_, dev);
  inner_->nll_loss(dev, s.in(logp), target, s.out(out));
  s.finish();
}

void Bf16Staging::nll_loss_backward(int dev, const KView& grad_out, const KView& target,
                                    const KView& grad_logp) {
  if (!any_bf16({&grad_out, &grad_logp})) {
    return inner_->nll_loss_backward(dev, grad_out, target, grad_logp);
  }
  Staged s(*inner_, dev);
  inner_->nll_loss_backward(dev, s.in(grad_out), target, s.out(grad_logp));
  s.finish();
}

void Bf16Staging::sgd_step(int dev, const KView& param, const KView& grad, const KView* buf,
                           const SgdParams& p) {
  if (!any_bf16({&param, &grad, buf})) return inner_->sgd_step(dev, param, grad, buf, p);
  Staged s(*inner_, dev);
  inner_->sgd_step(dev, s.out(param), s.in(grad), s.out(buf), p);
  s.finish();
}

void Bf16Staging::adam_step(int dev, const KView& param, const KView& grad, const KView& m,
                            const KView& v, const AdamParams& p) {
  if (!any_bf16({&param, &grad, &m, &v})) return inner_->adam_step(dev, param, grad, m, v, p);
  Staged s(*inner_, dev);
  inner_->adam_step(dev, s.out(param), s.in(grad), s.out(m), s.out(v), p);
  s.finish();
}

// The conv + ReLU + pool block of a backend without a bfloat16 one runs in float32 with
// Conv2dParams::round_bf16, which rounds the convolution's output before pooling: pooling
// then sees the values bfloat16 ops would (where two of a window round to the same value,
// the gradient reaches the first, as PyTorch's), and its result is exact in bfloat16.
size_t Bf16Staging::conv_relu_pool_state_bytes(int dev, const KView& x, const KView& w, bool bias,
                                               const KView& y, const KView& z,
                                               const Conv2dParams& cp, const Pool2dParams& pp) {
  if (!any_bf16({&x, &w, &z}) || inner_->runs_bf16(Bf16Kernel::kConvReluPool, dev)) {
    return inner_->conv_relu_pool_state_bytes(dev, x, w, bias, y, z, cp, pp);
  }
  return inner_->conv_relu_pool_state_bytes(dev, f32_shape(x), f32_shape(w), bias, f32_shape(y),
                                            f32_shape(z), rounding(cp), pp);
}

void Bf16Staging::conv_relu_pool(int dev, const KView& x, const KView& w, const KView* bias,
                                 const KView& y, const KView& z, void* state,
                                 const Conv2dParams& cp, const Pool2dParams& pp) {
  if (!any_bf16({&x, &w, bias, &z}) || inner_->runs_bf16(Bf16Kernel::kConvReluPool, dev)) {
    return inner_->conv_relu_pool(dev, x, w, bias, y, z, state, cp, pp);
  }
  Staged s(*inner_, dev);
  inner_->conv_relu_pool(dev, s.in(x), s.in(w), s.in(bias), f32_shape(y), s.out(z), state,
                         rounding(cp), pp);
  s.finish();
}

void Bf16Staging::conv_relu_pool_backward(int dev, const KView& gz, const KView& x, const KView& w,
                                          const KView& y, const KView& z, const void* state,
                                          const KView* gx, const KView& gw, const KView* gbias,
                                          const Conv2dParams& cp, const Pool2dParams& pp) {
  if (!any_bf16({&gz, &x, &w, &z, gx, &gw, gbias}) ||
      inner_->runs_bf16(Bf16Kernel::kConvReluPool, dev)) {
    return inner_->conv_relu_pool_backward(dev, gz, x, w, y, z, state, gx, gw, gbias, cp, pp);
  }
  Staged s(*inner_, dev);
  inner_->conv_relu_pool_backward(dev, s.in(gz), s.in(x), s.in(w), f32_shape(y), s.in(z), state,
                                  s.out(gx), s.out(gw), s.out(gbias), rounding(cp), pp);
  s.finish();
}

}  // namespace dp
