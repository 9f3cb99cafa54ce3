// Optimizers over a list of parameters, with PyTorch's update rules. step() updates every
// parameter that has a gradient, in place (bumping its version). An accelerator's
// parameters are updated by that device's worker; CPU parameters are cut into slices that
// every CPU device's worker updates at once (CPU devices share memory, and after a
// DataParallel backward the update is bound by memory traffic between the cores).
#pragma once

#include <memory>
#include <string>
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
  // "sgd", "adam" or "adamw": checkpoints refuse state of another kind.
  virtual const char* kind() const = 0;

  // A state entry of parameter `param`: a buffer with the parameter's shape (undefined
  // until the first update creates it), or a step count.
  struct Slot {
    std::string name;  // PyTorch's: momentum_buffer, exp_avg, exp_avg_sq, step
    Tensor* buffer = nullptr;
    int64_t* count = nullptr;
  };
  virtual std::vector<Slot> slots(size_t param) = 0;

 protected:
  // Before the updates of params_[active...]: create their missing state and count their
  // step (caller's thread). All or nothing: state that cannot be made (out of memory)
  // throws before any parameter's state changes, so a retried step is still a first one.
  virtual void prepare(const std::vector<size_t>& active) = 0;
  // Updates elements [begin, end) of params_[i] with gradient g, on device `dev`'s worker
  // (a CPU device other than the parameter's when the update is sliced).
  virtual void update(size_t i, const Tensor& g, Device dev, int64_t begin, int64_t end) = 0;

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
  const char* kind() const override { return "sgd"; }
  std::vector<Slot> slots(size_t param) override {
    return {{"momentum_buffer", &momentum_[param], nullptr}};
  }

 private:
  void prepare(const std::vector<size_t>& active) override;
  void update(size_t i, const Tensor& g, Device dev, int64_t begin, int64_t end) override;
  SgdOptions o_;
  std::vector<Tensor> momentum_;  // per parameter, created at its first update
  std::vector<bool> first_;       // this step creates the momentum buffer
};

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled_weight_decay = false;  // AdamW
};

class Adam final : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options);
  const char* kind() const override { return o_.decoupled_weight_decay ? "adamw" : "adam"; }
  std::vector<Slot> slots(size_t param) override {
    return {{"step", nullptr, &t_[param]},
            {"exp_avg", &m_[param], nullptr},
            {"exp_avg_sq", &v_[param], nullptr}};
  }

 private:
  void prepare(const std::vector<size_t>& active) override;
  void update(size_t i, const Tensor& g, Device dev, int64_t begin, int64_t end) override;
  AdamOptions o_;
  std::vector<Tensor> m_, v_;
  std::vector<int64_t> t_;  // per-parameter step count (bias correction)
};

}  // namespace dp
