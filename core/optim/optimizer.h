// Optimizers over a list of parameters, with PyTorch's update rules. step() updates every
// parameter that has a gradient, in place (bumping its version), running each device's
// parameters on that device's worker, devices in parallel.
#pragma once

#include <memory>
#include <vector>

#include "device/backend.h"
#include "tensor/tensor.h"

namespace dp {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  void step();
  void zero_grad();  // sets every parameter's grad to none
  double lr() const { return lr_; }
  void set_lr(double lr);
  const std::vector<Tensor>& params() const { return params_; }
  int64_t steps() const { return steps_; }

 protected:
  // Updates params_[i] with its gradient g, on its device's worker.
  virtual void update(size_t i, const Tensor& g) = 0;

  std::vector<Tensor> params_;
  double lr_ = 0;
  int64_t steps_ = 0;
};

struct SgdOptions {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
};

class Sgd final : public Optimizer {
 public:
  Sgd(std::vector<Tensor> params, const SgdOptions& options);

 private:
  void update(size_t i, const Tensor& g) override;
  SgdOptions o_;
  std::vector<Tensor> momentum_;  // per parameter, created at its first update
};

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled_weight_decay = false;  // AdamW
};

class Adam final : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options);

 private:
  void update(size_t i, const Tensor& g) override;
  AdamOptions o_;
  std::vector<Tensor> m_, v_;
  std::vector<int64_t> t_;  // per-parameter step count (bias correction)
};

}  // namespace dp
