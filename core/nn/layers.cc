#include "nn/layers.h"

#include <cmath>

#include "context/context.h"
#include "error.h"
#include "ops/ops.h"

namespace dp {

namespace {

const Tensor& single_input(const std::vector<Tensor>& inputs, const std::string& type) {
  DP_CHECK(inputs.size() == 1 && inputs[0].defined(), kInvalidArgument,
           type << " takes exactly one input tensor, got " << inputs.size());
  return inputs[0];
}

// PyTorch's default initialisation of Linear and Conv2d, its bounds computed as
// reset_parameters computes them (the weight's through kaiming_uniform_ with a = sqrt(5),
// which can differ from the bias's in the last bit), drawn weight first.
Tensor default_weight(const std::shared_ptr<Context>& ctx, const Shape& shape, int64_t fan_in,
                      Device device, DType dtype) {
  const double a = std::sqrt(5.0);  // a * a is not quite 5 in double, nor in PyTorch
  const double gain = std::sqrt(2.0 / (1.0 + a * a));  // calculate_gain("leaky_relu", a)
  const double bound = std::sqrt(3.0) * (gain / std::sqrt(static_cast<double>(fan_in)));
  return ops::uniform(ctx, shape, dtype, device, -bound, bound);
}
Tensor default_bias(const std::shared_ptr<Context>& ctx, int64_t out, int64_t fan_in, Device device,
                    DType dtype) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return ops::uniform(ctx, {out}, dtype, device, -bound, bound);
}

void check_positive(int64_t v, const char* what, const char* layer) {
  DP_CHECK(v > 0, kInvalidArgument, layer << ": " << what << " = " << v << " must be positive");
}

}  // namespace

Linear::Linear(std::shared_ptr<Context> ctx, int64_t in, int64_t out, bool bias, Device device,
               DType dtype)
    : Module(std::move(ctx), "Linear"), in_features(in), out_features(out) {
  check_positive(in, "in_features", "Linear");
  check_positive(out, "out_features", "Linear");
  ctx_->check_device(device, "device");
  register_parameter("weight", default_weight(ctx_, {out, in}, in, device, dtype));
  if (bias) register_parameter("bias", default_bias(ctx_, out, in, device, dtype));
}

std::vector<Tensor> Linear::forward(const std::vector<Tensor>& inputs) {
  return {ops::linear(single_input(inputs, type_name_), param("weight"), param("bias"))};
}

Tensor Linear::forward_relu(const Tensor& x) {
  return ops::linear(x, param("weight"), param("bias"), true);
}

Conv2d::Conv2d(std::shared_ptr<Context> ctx, int64_t in, int64_t out, int kh, int kw, int sh,
               int sw, int ph, int pw, bool bias, Device device, DType dtype)
    : Module(std::move(ctx), "Conv2d"), stride_h(sh), stride_w(sw), pad_h(ph), pad_w(pw) {
  check_positive(in, "in_channels", "Conv2d");
  check_positive(out, "out_channels", "Conv2d");
  check_positive(kh, "kernel_h", "Conv2d");
  check_positive(kw, "kernel_w", "Conv2d");
  check_positive(sh, "stride_h", "Conv2d");
  check_positive(sw, "stride_w", "Conv2d");
  DP_CHECK(ph >= 0 && pw >= 0, kInvalidArgument,
           "Conv2d: padding = (" << ph << ", " << pw << ") must not be negative");
  ctx_->check_device(device, "device");
  // The weight [out, in, kh, kw] must be a valid shape before in * kh * kw is formed.
  checked_numel({out, in, kh, kw}, dtype_size(dtype), "Conv2d weight");
  const int64_t fan_in = in * kh * kw;
  register_parameter("weight", default_weight(ctx_, {out, in, kh, kw}, fan_in, device, dtype));
  if (bias) register_parameter("bias", default_bias(ctx_, out, fan_in, device, dtype));
}

std::vector<Tensor> Conv2d::forward(const std::vector<Tensor>& inputs) {
  return {ops::conv2d(single_input(inputs, type_name_), param("weight"), param("bias"), stride_h,
                      stride_w, pad_h, pad_w)};
}

Tensor Conv2d::forward_relu(const Tensor& x) {
  return ops::conv2d(x, param("weight"), param("bias"), stride_h, stride_w, pad_h, pad_w, true);
}

Tensor Conv2d::forward_relu_pool(const Tensor& x, const Pool2dParams& pool) {
  return ops::conv2d_relu_pool2d(x, param("weight"), param("bias"),
                                 Conv2dParams{stride_h, stride_w, pad_h, pad_w, true}, pool);
}

static const char* activation_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kRelu:
      return "ReLU";
    case UnaryOp::kGelu:
      return "GELU";
    case UnaryOp::kTanh:
      return "Tanh";
    case UnaryOp::kSigmoid:
      return "Sigmoid";
    default:
      break;
  }
  DP_THROW(kInvalidArgument, "activation " << static_cast<int>(op) << " is not a layer");
}

Activation::Activation(std::shared_ptr<Context> ctx, UnaryOp o)
    : Module(std::move(ctx), activation_name(o)), op(o) {}

std::vector<Tensor> Activation::forward(const std::vector<Tensor>& inputs) {
  const Tensor& x = single_input(inputs, type_name_);
  switch (op) {
    case UnaryOp::kRelu:
      return {ops::relu(x)};
    case UnaryOp::kGelu:
      return {ops::gelu(x)};
    case UnaryOp::kTanh:
      return {ops::tanh(x)};
    default:
      return {ops::sigmoid(x)};
  }
}

Dropout::Dropout(std::shared_ptr<Context> ctx, double prob)
    : Module(std::move(ctx), "Dropout"), p(prob) {
  DP_CHECK(p >= 0 && p <= 1, kInvalidArgument, "Dropout: p = " << p << " must be in [0, 1]");
}

std::vector<Tensor> Dropout::forward(const std::vector<Tensor>& inputs) {
  const Tensor& x = single_input(inputs, type_name_);
  if (!training_ || p == 0) return {x};
  return {ops::dropout(x, p, true, ctx_->next_seed(x.device()))};
}

BatchNorm::BatchNorm(std::shared_ptr<Context> ctx, int dims, int64_t n, double e, double m,
                     Device device, DType dtype)
    : Module(std::move(ctx), dims == 1 ? "BatchNorm1d" : "BatchNorm2d"),
      spatial_dims(dims),
      eps(e),
      momentum(m) {
  check_positive(n, "num_features", type_name_.c_str());
  DP_CHECK(eps > 0, kInvalidArgument, type_name_ << ": eps = " << eps << " must be positive");
  DP_CHECK(momentum >= 0 && momentum <= 1, kInvalidArgument,
           type_name_ << ": momentum = " << momentum << " must be in [0, 1]");
  ctx_->check_device(device, "device");
  register_parameter("weight", ops::full(ctx_, {n}, dtype, device, 1.0));
  register_parameter("bias", ops::zeros(ctx_, {n}, dtype, device));
  register_buffer("running_mean", ops::zeros(ctx_, {n}, dtype, device));
  register_buffer("running_var", ops::full(ctx_, {n}, dtype, device, 1.0));
  register_buffer("num_batches_tracked", ops::zeros(ctx_, {}, DType::kInt64, device));
}

std::vector<Tensor> BatchNorm::forward(const std::vector<Tensor>& inputs) {
  const Tensor& x = single_input(inputs, type_name_);
  const bool ok = spatial_dims == 1 ? (x.ndim() == 2 || x.ndim() == 3) : x.ndim() == 4;
  DP_CHECK(ok, kShapeMismatch,
           type_name_ << " expects " << (spatial_dims == 1 ? "[N, C] or [N, C, L]" : "[N, C, H, W]")
                      << " input, got " << shape_str(x.shape()));
  Tensor in = x;
  if (x.ndim() == 3) in = ops::reshape(x, {x.shape()[0], x.shape()[1], x.shape()[2], 1});
  if (training_) {
    const Tensor count = buffer("num_batches_tracked");
    if (count.defined()) ops::add_(count, ops::full(ctx_, {}, DType::kInt64, count.device(), 1.0));
  }
  Tensor y = ops::batch_norm(in, param("weight"), param("bias"), buffer("running_mean"),
                             buffer("running_var"), training_, momentum, eps);
  return {x.ndim() == 3 ? ops::reshape(y, x.shape()) : y};
}

Pool2d::Pool2d(std::shared_ptr<Context> ctx, PoolKind kind, int kh, int kw, int sh, int sw, int ph,
               int pw)
    : Module(std::move(ctx), kind == PoolKind::kMax ? "MaxPool2d" : "AvgPool2d"), p{kind, kh, kw,
                                                                                    sh,   sw, ph,
                                                                                    pw} {
  check_positive(kh, "kernel_h", type_name_.c_str());
  check_positive(kw, "kernel_w", type_name_.c_str());
  check_positive(sh, "stride_h", type_name_.c_str());
  check_positive(sw, "stride_w", type_name_.c_str());
  DP_CHECK(ph >= 0 && pw >= 0 && ph <= kh / 2 && pw <= kw / 2, kInvalidArgument,
           type_name_ << ": padding = (" << ph << ", " << pw
                      << ") must be between 0 and half the kernel (" << kh << "x" << kw << ")");
}

std::vector<Tensor> Pool2d::forward(const std::vector<Tensor>& inputs) {
  const Tensor& x = single_input(inputs, type_name_);
  if (p.kind == PoolKind::kMax) {
    return {ops::max_pool2d(x, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w)};
  }
  return {ops::avg_pool2d(x, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w)};
}

Flatten::Flatten(std::shared_ptr<Context> ctx, int64_t s, int64_t e)
    : Module(std::move(ctx), "Flatten"), start_dim(s), end_dim(e) {}

std::vector<Tensor> Flatten::forward(const std::vector<Tensor>& inputs) {
  return {ops::flatten(single_input(inputs, type_name_), start_dim, end_dim)};
}

Embedding::Embedding(std::shared_ptr<Context> ctx, int64_t num, int64_t dim, Device device,
                     DType dtype)
    : Module(std::move(ctx), "Embedding") {
  check_positive(num, "num_embeddings", "Embedding");
  check_positive(dim, "embedding_dim", "Embedding");
  ctx_->check_device(device, "device");
  register_parameter("weight", ops::normal(ctx_, {num, dim}, dtype, device, 0.0, 1.0));
}

std::vector<Tensor> Embedding::forward(const std::vector<Tensor>& inputs) {
  return {ops::embedding(single_input(inputs, type_name_), param("weight"))};
}

Sequential::Sequential(std::shared_ptr<Context> ctx) : Module(std::move(ctx), "Sequential") {}

void Sequential::append(std::shared_ptr<Module> child) {
  register_module(std::to_string(children_.size()), std::move(child));
}

std::vector<Tensor> Sequential::forward(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> x = inputs;
  for (size_t i = 0; i < children_.size(); ++i) {
    Module& m = *children_[i].second;
    auto* next = i + 1 < children_.size() ? dynamic_cast<Activation*>(children_[i + 1].second.get())
                                          : nullptr;
    const bool relu_next = next && next->op == UnaryOp::kRelu && x.size() == 1;
    if (auto* linear = dynamic_cast<Linear*>(&m); linear && relu_next) {
      x = {linear->forward_relu(x[0])};
      ++i;  // the ReLU ran inside the product
    } else if (auto* conv = dynamic_cast<Conv2d*>(&m); conv && relu_next) {
      auto* pool =
          i + 2 < children_.size() ? dynamic_cast<Pool2d*>(children_[i + 2].second.get()) : nullptr;
      if (pool) {
        x = {conv->forward_relu_pool(x[0], pool->p)};
        i += 2;  // the ReLU and the pooling ran in the same block
      } else {
        x = {conv->forward_relu(x[0])};
        ++i;
      }
    } else {
      x = m.forward(x);
    }
  }
  return x;
}

CallbackModule::CallbackModule(std::shared_ptr<Context> ctx, std::string type_name, Forward forward,
                               std::shared_ptr<void> user_state)
    : Module(std::move(ctx), std::move(type_name)),
      forward_(std::move(forward)),
      user_state_(std::move(user_state)) {
  DP_CHECK(forward_ != nullptr, kInvalidArgument, "a custom module needs a forward function");
}

std::vector<Tensor> CallbackModule::forward(const std::vector<Tensor>& inputs) {
  return forward_(*this, inputs);
}

}  // namespace dp
