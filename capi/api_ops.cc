// dp_op_*: each unwraps its tensors, calls the core op, wraps the result.
#include <string>

#include "capi/handles.h"
#include "capi/result.h"
#include "ops/ops.h"

using namespace dp::capi;
namespace ops = dp::ops;

namespace {

// Runs an op's argument checks; an error they raise gets the op's name in front ("add: a
// is NULL"), so that every error names the op. The name is put together only then: a
// call that succeeds builds no string.
template <class F>
decltype(auto) checking_args_of(const char* op, F&& checks) {
  try {
    return checks();
  } catch (const dp::Error& e) {
    throw dp::Error(e.code(), std::string(op) + ": " + e.what());
  }
}

// One tensor in, one out.
template <class F>
dp_result unary(const char* op, const dp_tensor* x, dp_tensor** out, F&& f) {
  return guard([&] {
    const dp::Tensor& t = checking_args_of(op, [&]() -> const dp::Tensor& {
      const dp::Tensor& checked = unwrap(x, "x");
      out_ptr(out, "out");
      return checked;
    });
    *out = wrap(f(t), x->ctx);
  });
}

// Two tensors in (named `na`, `nb`), one out.
template <class F>
dp_result binary(const char* op, const dp_tensor* a, const dp_tensor* b, dp_tensor** out,
                 const char* na, const char* nb, F&& f) {
  return guard([&] {
    const dp::Tensor* ta = nullptr;
    const dp::Tensor* tb = nullptr;
    checking_args_of(op, [&] {
      ta = &unwrap(a, na);
      tb = &unwrap_in(a->ctx, na, b, nb);
      out_ptr(out, "out");
    });
    *out = wrap(f(*ta, *tb), a->ctx);
  });
}

}  // namespace

extern "C" {

dp_result dp_op_add(const dp_tensor* a, const dp_tensor* b, dp_tensor** out) {
  return binary("add", a, b, out, "a", "b", ops::add);
}
dp_result dp_op_sub(const dp_tensor* a, const dp_tensor* b, dp_tensor** out) {
  return binary("sub", a, b, out, "a", "b", ops::sub);
}
dp_result dp_op_mul(const dp_tensor* a, const dp_tensor* b, dp_tensor** out) {
  return binary("mul", a, b, out, "a", "b", ops::mul);
}
dp_result dp_op_div(const dp_tensor* a, const dp_tensor* b, dp_tensor** out) {
  return binary("div", a, b, out, "a", "b", ops::div);
}
dp_result dp_op_neg(const dp_tensor* x, dp_tensor** out) {
  return unary("neg", x, out, ops::neg);
}
dp_result dp_op_scale(const dp_tensor* x, double factor, dp_tensor** out) {
  return unary("scale", x, out, [&](const dp::Tensor& t) { return ops::scale(t, factor); });
}
dp_result dp_op_add_scalar(const dp_tensor* x, double value, dp_tensor** out) {
  return unary("add_scalar", x, out,
               [&](const dp::Tensor& t) { return ops::add_scalar(t, value); });
}
dp_result dp_op_relu(const dp_tensor* x, dp_tensor** out) {
  return unary("relu", x, out, ops::relu);
}
dp_result dp_op_gelu(const dp_tensor* x, dp_tensor** out) {
  return unary("gelu", x, out, ops::gelu);
}
dp_result dp_op_tanh(const dp_tensor* x, dp_tensor** out) {
  return unary("tanh", x, out, ops::tanh);
}
dp_result dp_op_sigmoid(const dp_tensor* x, dp_tensor** out) {
  return unary("sigmoid", x, out, ops::sigmoid);
}
dp_result dp_op_exp(const dp_tensor* x, dp_tensor** out) {
  return unary("exp", x, out, ops::exp);
}
dp_result dp_op_log(const dp_tensor* x, dp_tensor** out) {
  return unary("log", x, out, ops::log);
}

dp_result dp_op_sum(const dp_tensor* x, dp_tensor** out) {
  return unary("sum", x, out, [](const dp::Tensor& t) { return ops::sum(t); });
}
dp_result dp_op_sum_dim(const dp_tensor* x, int32_t dim, int keepdim, dp_tensor** out) {
  return unary("sum_dim", x, out,
               [&](const dp::Tensor& t) { return ops::sum(t, dim, keepdim != 0); });
}
dp_result dp_op_mean(const dp_tensor* x, dp_tensor** out) {
  return unary("mean", x, out, [](const dp::Tensor& t) { return ops::mean(t); });
}
dp_result dp_op_mean_dim(const dp_tensor* x, int32_t dim, int keepdim, dp_tensor** out) {
  return unary("mean_dim", x, out,
               [&](const dp::Tensor& t) { return ops::mean(t, dim, keepdim != 0); });
}
dp_result dp_op_argmax(const dp_tensor* x, int32_t dim, dp_tensor** out) {
  return unary("argmax", x, out, [&](const dp::Tensor& t) { return ops::argmax(t, dim); });
}

dp_result dp_op_matmul(const dp_tensor* a, const dp_tensor* b, dp_tensor** out) {
  return binary("matmul", a, b, out, "a", "b", ops::matmul);
}
dp_result dp_op_linear(const dp_tensor* x, const dp_tensor* weight, const dp_tensor* bias,
                       dp_tensor** out) {
  return binary("linear", x, weight, out, "x", "weight",
                [&](const dp::Tensor& tx, const dp::Tensor& tw) {
                  return ops::linear(tx, tw, unwrap_optional_in(x->ctx, "x", bias, "linear: bias"));
                });
}
dp_result dp_op_softmax(const dp_tensor* x, int32_t dim, dp_tensor** out) {
  return unary("softmax", x, out, [&](const dp::Tensor& t) { return ops::softmax(t, dim); });
}
dp_result dp_op_log_softmax(const dp_tensor* x, int32_t dim, dp_tensor** out) {
  return unary("log_softmax", x, out,
               [&](const dp::Tensor& t) { return ops::log_softmax(t, dim); });
}

dp_result dp_op_conv2d(const dp_tensor* x, const dp_tensor* weight, const dp_tensor* bias,
                       int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                       dp_tensor** out) {
  return binary("conv2d", x, weight, out, "x", "weight",
                [&](const dp::Tensor& tx, const dp::Tensor& tw) {
                  return ops::conv2d(tx, tw, unwrap_optional_in(x->ctx, "x", bias, "conv2d: bias"),
                                     stride_h, stride_w, pad_h, pad_w);
                });
}
dp_result dp_op_max_pool2d(const dp_tensor* x, int32_t kernel_h, int32_t kernel_w, int32_t stride_h,
                           int32_t stride_w, int32_t pad_h, int32_t pad_w, dp_tensor** out) {
  return unary("max_pool2d", x, out, [&](const dp::Tensor& t) {
    return ops::max_pool2d(t, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w);
  });
}
dp_result dp_op_avg_pool2d(const dp_tensor* x, int32_t kernel_h, int32_t kernel_w, int32_t stride_h,
                           int32_t stride_w, int32_t pad_h, int32_t pad_w, dp_tensor** out) {
  return unary("avg_pool2d", x, out, [&](const dp::Tensor& t) {
    return ops::avg_pool2d(t, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w);
  });
}
dp_result dp_op_batch_norm(const dp_tensor* x, const dp_tensor* weight, const dp_tensor* bias,
                           dp_tensor* running_mean, dp_tensor* running_var, int training,
                           double momentum, double eps, dp_tensor** out) {
  return unary("batch_norm", x, out, [&](const dp::Tensor& t) {
    auto optional = [&](const dp_tensor* h, const char* arg) {
      return unwrap_optional_in(x->ctx, "x", h, arg);
    };
    return ops::batch_norm(
        t, optional(weight, "batch_norm: weight"), optional(bias, "batch_norm: bias"),
        optional(running_mean, "batch_norm: running_mean"),
        optional(running_var, "batch_norm: running_var"), training != 0, momentum, eps);
  });
}
dp_result dp_op_dropout(const dp_tensor* x, double p, int training, uint64_t seed,
                        dp_tensor** out) {
  return unary("dropout", x, out,
               [&](const dp::Tensor& t) { return ops::dropout(t, p, training != 0, seed); });
}
dp_result dp_op_embedding(const dp_tensor* indices, const dp_tensor* weight, dp_tensor** out) {
  return binary("embedding", indices, weight, out, "indices", "weight", ops::embedding);
}
dp_result dp_op_cross_entropy(const dp_tensor* logits, const dp_tensor* target, dp_tensor** out) {
  return binary("cross_entropy", logits, target, out, "logits", "target", ops::cross_entropy);
}
dp_result dp_op_nll_loss(const dp_tensor* log_probs, const dp_tensor* target, dp_tensor** out) {
  return binary("nll_loss", log_probs, target, out, "log_probs", "target", ops::nll_loss);
}
dp_result dp_op_mse_loss(const dp_tensor* input, const dp_tensor* target, dp_tensor** out) {
  return binary("mse_loss", input, target, out, "input", "target", ops::mse_loss);
}

dp_result dp_op_reshape(const dp_tensor* x, const int64_t* shape, size_t ndim, dp_tensor** out) {
  return unary("reshape", x, out, [&](const dp::Tensor& t) {
    DP_CHECK(ndim <= static_cast<size_t>(dp::kMaxDims), kOutOfRange,
             "reshape: ndim = " << ndim << " but at most " << dp::kMaxDims
                                << " dimensions are supported");
    DP_CHECK(shape != nullptr || ndim == 0, kInvalidArgument,
             "reshape: shape is NULL but ndim = " << ndim);
    return ops::reshape(t, dp::Shape(shape, shape + ndim));
  });
}
dp_result dp_op_flatten(const dp_tensor* x, int32_t start_dim, int32_t end_dim, dp_tensor** out) {
  return unary("flatten", x, out,
               [&](const dp::Tensor& t) { return ops::flatten(t, start_dim, end_dim); });
}

dp_result dp_op_cat(const dp_tensor* const* tensors, size_t n, int32_t dim, dp_tensor** out) {
  return guard([&] {
    DP_CHECK(tensors != nullptr && n > 0, kInvalidArgument,
             "cat: tensors is " << (tensors ? "empty" : "NULL") << " (n = " << n << ")");
    std::vector<dp::Tensor> ts = unwrap_tensors(tensors, n, "cat: tensors", nullptr, "tensors[0]");
    out_ptr(out, "cat: out");
    *out = wrap(ops::cat(ts, dim), tensors[0]->ctx);
  });
}

dp_result dp_op_split(const dp_tensor* x, const int64_t* sizes, size_t n, int32_t dim,
                      dp_tensor** outs) {
  return guard([&] {
    const dp::Tensor& t = unwrap(x, "split: x");
    DP_CHECK(sizes != nullptr && n > 0, kInvalidArgument,
             "split: sizes is " << (sizes ? "empty" : "NULL") << " (n = " << n << ")");
    out_ptr(outs, "split: outs");
    wrap_into(ops::split(t, std::vector<int64_t>(sizes, sizes + n), dim), x->ctx, outs);
  });
}

}  // extern "C"
