// The layers, with PyTorch's default initialisation and parameter names.
#pragma once

#include <functional>

#include "device/backend.h"
#include "nn/module.h"

namespace dp {

// y = x W^T + b. weight [out, in], bias [out]; both U(-1/sqrt(in), 1/sqrt(in)) as
// torch.nn.Linear (kaiming-uniform with a = sqrt(5)).
class Linear final : public Module {
 public:
  Linear(std::shared_ptr<Context> ctx, int64_t in_features, int64_t out_features, bool bias,
         Device device, DType dtype = DType::kFloat32);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override { return std::make_shared<Linear>(*this); }
  // forward with a ReLU fused into the product (Sequential uses it for Linear, ReLU).
  Tensor forward_relu(const Tensor& x);
  int64_t in_features, out_features;
};

class Conv2d final : public Module {
 public:
  Conv2d(std::shared_ptr<Context> ctx, int64_t in_channels, int64_t out_channels, int kernel_h,
         int kernel_w, int stride_h, int stride_w, int pad_h, int pad_w, bool bias, Device device,
         DType dtype = DType::kFloat32);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override { return std::make_shared<Conv2d>(*this); }
  // forward with a ReLU fused into the convolution (Sequential uses it for Conv2d, ReLU).
  Tensor forward_relu(const Tensor& x);
  // forward, ReLU and `pool` as one block (Sequential: Conv2d, ReLU, MaxPool2d/AvgPool2d).
  Tensor forward_relu_pool(const Tensor& x, const Pool2dParams& pool);
  int stride_h, stride_w, pad_h, pad_w;
};

// ReLU, GELU, Tanh, Sigmoid.
class Activation final : public Module {
 public:
  Activation(std::shared_ptr<Context> ctx, UnaryOp op);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override {
    return std::make_shared<Activation>(*this);
  }
  UnaryOp op;
};

class Dropout final : public Module {
 public:
  Dropout(std::shared_ptr<Context> ctx, double p);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override { return std::make_shared<Dropout>(*this); }
  double p;
};

// BatchNorm1d (input [N, C] or [N, C, L]) and BatchNorm2d ([N, C, H, W]): weight 1, bias 0,
// buffers running_mean 0, running_var 1 and num_batches_tracked (int64), as PyTorch.
class BatchNorm final : public Module {
 public:
  BatchNorm(std::shared_ptr<Context> ctx, int spatial_dims, int64_t num_features, double eps,
            double momentum, Device device, DType dtype = DType::kFloat32);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override {
    return std::make_shared<BatchNorm>(*this);
  }
  int spatial_dims;
  double eps, momentum;
};

class Pool2d final : public Module {
 public:
  Pool2d(std::shared_ptr<Context> ctx, PoolKind kind, int kernel_h, int kernel_w, int stride_h,
         int stride_w, int pad_h, int pad_w);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override { return std::make_shared<Pool2d>(*this); }
  Pool2dParams p;
};

class Flatten final : public Module {
 public:
  Flatten(std::shared_ptr<Context> ctx, int64_t start_dim, int64_t end_dim);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override { return std::make_shared<Flatten>(*this); }
  int64_t start_dim, end_dim;
};

// weight [num, dim] ~ N(0, 1), as torch.nn.Embedding.
class Embedding final : public Module {
 public:
  Embedding(std::shared_ptr<Context> ctx, int64_t num_embeddings, int64_t embedding_dim,
            Device device, DType dtype = DType::kFloat32);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override {
    return std::make_shared<Embedding>(*this);
  }
};

// Children "0", "1", ... applied in order; each takes the previous one's outputs. A Linear
// or Conv2d followed by a ReLU runs as one fused kernel, and a Conv2d, ReLU and pooling as
// one block (ops::conv2d_relu_pool2d).
class Sequential final : public Module {
 public:
  explicit Sequential(std::shared_ptr<Context> ctx);
  void append(std::shared_ptr<Module> child);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override {
    return std::make_shared<Sequential>(*this);
  }
};

// A module whose forward is user code (the C API's callback modules). The function gets
// the module it runs as: a replica, under DataParallel, with the replica's parameters.
class CallbackModule final : public Module {
 public:
  using Forward = std::function<std::vector<Tensor>(Module& self, const std::vector<Tensor>&)>;
  CallbackModule(std::shared_ptr<Context> ctx, std::string type_name, Forward forward,
                 std::shared_ptr<void> user_state);
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) override;
  std::shared_ptr<Module> shallow_copy() const override {
    return std::make_shared<CallbackModule>(*this);
  }
  bool runs_user_code() const override { return true; }
  const std::shared_ptr<void>& user_state() const { return user_state_; }
  void set_user_state(std::shared_ptr<void> state) { user_state_ = std::move(state); }

 private:
  Forward forward_;
  std::shared_ptr<void> user_state_;  // released (destroy callback) with the last copy
};

}  // namespace dp
