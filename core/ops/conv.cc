// 2-D convolution (dilation 1, one group), as torch.nn.functional.conv2d.
#include "ops/autocast.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class Conv2dBackward final : public Node {
 public:
  Conv2dBackward(Device d, SavedTensor x, SavedTensor w, SavedTensor y, Conv2dParams p,
                 bool has_bias)
      : Node(d, 1),
        x_(std::move(x)),
        w_(std::move(w)),
        y_(std::move(y)),
        p_(p),
        has_bias_(has_bias) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    Tensor g = grads[0];
    const Tensor x = DP_UNPACK(x_), w = DP_UNPACK(w_);
    Backend& be = backend_of(g);
    if (p_.relu) {
      const Tensor y = DP_UNPACK(y_);
      Tensor masked = empty_like(g);
      be.unary_backward(dev(g), UnaryOp::kRelu, g.kview(), y.kview(), masked.kview());
      g = masked;
    }
    Tensor gx, gw, gb;
    if (next_edges_[0].valid()) {
      gx = empty_like(x);
      be.conv2d_backward_data(dev(g), g.kview(), w.kview(), gx.kview(), p_);
    }
    const bool need_b = has_bias_ && next_edges_[2].valid();
    if (next_edges_[1].valid() || need_b) {
      gw = empty_like(w);
      KView gb_view;
      if (need_b) {
        gb = empty_like(w, {w.shape()[0]});
        gb_view = gb.kview();
      }
      be.conv2d_backward_weights(dev(g), x.kview(), g.kview(), gw.kview(),
                                 need_b ? &gb_view : nullptr, p_);
      if (!next_edges_[1].valid()) gw = Tensor();
    }
    return {gx, gw, gb};
  }
  const char* name() const override { return "Conv2dBackward"; }
  void release_saved() override {
    x_.reset();
    w_.reset();
    y_.reset();
  }

 private:
  SavedTensor x_, w_, y_;
  Conv2dParams p_;
  bool has_bias_;
};

// Backward of conv2d + ReLU + pooling run as one block (the backend kept the ReLU output
// in its private layout, inside `state`).
class ConvReluPoolBackward final : public Node {
 public:
  ConvReluPoolBackward(Device d, SavedTensor x, SavedTensor w, SavedTensor z, Tensor state,
                       const KView& y, Conv2dParams cp, Pool2dParams pp, bool has_bias)
      : Node(d, 1),
        x_(std::move(x)),
        w_(std::move(w)),
        z_(std::move(z)),
        state_(std::move(state)),
        y_(y),
        cp_(cp),
        pp_(pp),
        has_bias_(has_bias) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& gz = grads[0];
    const Tensor x = DP_UNPACK(x_), w = DP_UNPACK(w_), z = DP_UNPACK(z_);
    Tensor gx, gb;
    Tensor gw = empty_like(w);  // the kernel computes it in any case
    KView gx_view, gb_view;
    if (next_edges_[0].valid()) {
      gx = empty_like(x);
      gx_view = gx.kview();
    }
    const bool need_b = has_bias_ && next_edges_[2].valid();
    if (need_b) {
      gb = empty_like(w, {w.shape()[0]});
      gb_view = gb.kview();
    }
    backend_of(gz).conv_relu_pool_backward(dev(gz), gz.kview(), x.kview(), w.kview(), y_, z.kview(),
                                           state_.data(), gx.defined() ? &gx_view : nullptr,
                                           gw.kview(), need_b ? &gb_view : nullptr, cp_, pp_);
    if (!next_edges_[1].valid()) gw = Tensor();
    return {gx, gw, gb};
  }
  const char* name() const override { return "ConvReluPoolBackward"; }
  void release_saved() override {
    x_.reset();
    w_.reset();
    z_.reset();
    state_ = Tensor();
  }

 private:
  SavedTensor x_, w_, z_;
  Tensor state_;
  KView y_;  // the ReLU output's shape and dtype only (no data: the backend keeps it)
  Conv2dParams cp_;
  Pool2dParams pp_;
  bool has_bias_;
};

}  // namespace

Shape conv2d_output_shape(const Tensor& x, const Tensor& weight, const Tensor& bias,
                          const Conv2dParams& p) {
  const int stride_h = p.stride_h, stride_w = p.stride_w, pad_h = p.pad_h, pad_w = p.pad_w;
  check_float(x, "conv2d", "x");
  check_same(x, weight, "conv2d", "x", "weight");
  check_ndim(x, 4, "conv2d", "x");
  check_ndim(weight, 4, "conv2d", "weight");
  DP_CHECK(stride_h > 0 && stride_w > 0, kInvalidArgument,
           "conv2d: stride = (" << stride_h << ", " << stride_w << ") must be positive");
  DP_CHECK(pad_h >= 0 && pad_w >= 0, kInvalidArgument,
           "conv2d: padding = (" << pad_h << ", " << pad_w << ") must not be negative");
  DP_CHECK(x.shape()[1] == weight.shape()[1], kShapeMismatch,
           "conv2d: x has " << x.shape()[1] << " channels but weight " << shape_str(weight.shape())
                            << " expects " << weight.shape()[1]);
  const int64_t O = weight.shape()[0], KH = weight.shape()[2], KW = weight.shape()[3];
  if (bias.defined()) {
    check_same(x, bias, "conv2d", "x", "bias");
    DP_CHECK(bias.ndim() == 1 && bias.shape()[0] == O, kShapeMismatch,
             "conv2d: bias has shape " << shape_str(bias.shape()) << " but there are " << O
                                       << " output channels");
  }
  const int64_t OH = (x.shape()[2] + 2 * int64_t{pad_h} - KH) / stride_h + 1;
  const int64_t OW = (x.shape()[3] + 2 * int64_t{pad_w} - KW) / stride_w + 1;
  DP_CHECK(x.shape()[2] + 2 * int64_t{pad_h} >= KH && x.shape()[3] + 2 * int64_t{pad_w} >= KW &&
               OH > 0 && OW > 0,
           kShapeMismatch,
           "conv2d: kernel " << KH << "x" << KW << " does not fit input " << shape_str(x.shape())
                             << " with padding (" << pad_h << ", " << pad_w << ")");
  const Shape out{x.shape()[0], O, OH, OW};
  // Huge padding makes an output too large to describe: say which op and argument.
  const std::string what = "conv2d: the output of padding (" + std::to_string(pad_h) + ", " +
                           std::to_string(pad_w) + "), of shape";
  checked_numel(out, dtype_size(x.dtype()), what.c_str());
  return out;
}

Tensor conv2d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in, int stride_h,
              int stride_w, int pad_h, int pad_w, bool relu) {
  const Tensor x = autocast::lower(x_in), weight = autocast::lower(weight_in);
  const Tensor bias = autocast::lower(bias_in);
  const Conv2dParams p{stride_h, stride_w, pad_h, pad_w, relu};
  const Shape y_shape = conv2d_output_shape(x, weight, bias, p);
  return on_device(x, [&] {
    Tensor y = empty_like(x, y_shape);
    if (y.numel() > 0) {
      KView bv;
      if (bias.defined()) bv = bias.kview();
      backend_of(x).conv2d(dev(x), x.kview(), weight.kview(), bias.defined() ? &bv : nullptr,
                           y.kview(), p);
    }
    if (needs_grad({&x, &weight, &bias})) {
      set_history(
          y, make_node<Conv2dBackward>({&x, &weight, bias.defined() ? &bias : nullptr}, x.device(),
                                       SavedTensor(x), SavedTensor(weight),
                                       relu ? SavedTensor(y) : SavedTensor(), p, bias.defined()));
    }
    return y;
  });
}

Tensor conv2d_relu_pool2d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in,
                          Conv2dParams cp, const Pool2dParams& pp) {
  const Tensor x = autocast::lower(x_in), weight = autocast::lower(weight_in);
  const Tensor bias = autocast::lower(bias_in);
  cp.relu = true;
  const Shape y_shape = conv2d_output_shape(x, weight, bias, cp);
  const char* pool_name = pp.kind == PoolKind::kMax ? "max_pool2d" : "avg_pool2d";
  // The pooling's checks on the conv output's shape, without computing it.
  const Shape z_shape = pool2d_output_shape(y_shape, pp, pool_name);
  auto compose = [&] {
    const Tensor y = conv2d(x, weight, bias, cp.stride_h, cp.stride_w, cp.pad_h, cp.pad_w, true);
    return pp.kind == PoolKind::kMax ? max_pool2d(y, pp.kernel_h, pp.kernel_w, pp.stride_h,
                                                  pp.stride_w, pp.pad_h, pp.pad_w)
                                     : avg_pool2d(y, pp.kernel_h, pp.kernel_w, pp.stride_h,
                                                  pp.stride_w, pp.pad_h, pp.pad_w);
  };
  return on_device(x, [&] {
    Backend& be = backend_of(x);
    Tensor z = empty_like(x, z_shape);
    KView y;  // shape only: the backend keeps y to itself
    y.dtype = x.dtype();
    y.ndim = 4;
    for (int i = 0; i < 4; ++i) y.shape[i] = y_shape[i];
    const size_t state_bytes = be.conv_relu_pool_state_bytes(dev(x), x.kview(), weight.kview(),
                                                             bias.defined(), y, z.kview(), cp, pp);
    if (state_bytes == 0) return compose();
    const bool grad = needs_grad({&x, &weight, &bias});
    Tensor state;
    if (grad) {
      state = Tensor::empty(x.context(), {static_cast<int64_t>(state_bytes)}, DType::kUInt8,
                            x.device());
    }
    KView bv;
    if (bias.defined()) bv = bias.kview();
    be.conv_relu_pool(dev(x), x.kview(), weight.kview(), bias.defined() ? &bv : nullptr, y,
                      z.kview(), grad ? state.data() : nullptr, cp, pp);
    if (grad) {
      set_history(
          z, make_node<ConvReluPoolBackward>({&x, &weight, bias.defined() ? &bias : nullptr},
                                             x.device(), SavedTensor(x), SavedTensor(weight),
                                             SavedTensor(z), state, y, cp, pp, bias.defined()));
    }
    return z;
  });
}

}  // namespace dp::ops
