#include "optim/optimizer.h"

#include <map>

#include "device/context.h"
#include "error.h"
#include "ops/ops.h"

namespace dp {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    DP_CHECK(p.defined(), kInvalidArgument, "params[" << i << "] is missing");
    DP_CHECK(p.is_leaf() && p.requires_grad(), kInvalidArgument,
             "params[" << i << "] is not a leaf tensor that requires grad");
    for (size_t j = 0; j < i; ++j) {
      DP_CHECK(!params_[j].same(p), kInvalidArgument,
               "params[" << i << "] is the same tensor as params[" << j << "]");
    }
  }
}

void Optimizer::set_lr(double lr) {
  DP_CHECK(lr >= 0, kInvalidArgument, "lr = " << lr << " must not be negative");
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.set_grad(Tensor());
}

void Optimizer::step() {
  ++steps_;
  if (params_.empty()) return;
  // Group the parameters by device: one task per device, devices in parallel.
  std::map<std::pair<int, int>, std::vector<size_t>> by_device;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].grad().defined()) continue;  // PyTorch skips parameters without a grad
    const Device d = params_[i].device();
    by_device[{static_cast<int>(d.type), d.index}].push_back(i);
  }
  auto ctx = params_[0].context();
  TaskGroup group(by_device.size());
  size_t slot = 0;
  for (const auto& [key, indices] : by_device) {
    const Device d{static_cast<DeviceType>(key.first), key.second};
    group.submit(slot++, ctx->worker(d), [this, &indices] {
      for (size_t i : indices) {
        const Tensor& p = params_[i];
        const Tensor g = p.grad();
        DP_CHECK(g.shape() == p.shape() && g.dtype() == p.dtype() && g.device() == p.device(),
                 kState, "the gradient of params[" << i << "] does not match the parameter");
        p.bump_version();
        update(i, g);
      }
    });
  }
  for (const auto& e : group.wait()) {
    if (e) std::rethrow_exception(e);
  }
}

Sgd::Sgd(std::vector<Tensor> params, const SgdOptions& o) : Optimizer(std::move(params)), o_(o) {
  DP_CHECK(o.lr >= 0, kInvalidArgument, "SGD: lr = " << o.lr << " must not be negative");
  DP_CHECK(o.momentum >= 0, kInvalidArgument,
           "SGD: momentum = " << o.momentum << " must not be negative");
  DP_CHECK(o.weight_decay >= 0, kInvalidArgument,
           "SGD: weight_decay = " << o.weight_decay << " must not be negative");
  DP_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), kInvalidArgument,
           "SGD: nesterov needs momentum > 0 and dampening = 0 (momentum = "
               << o.momentum << ", dampening = " << o.dampening << ")");
  lr_ = o.lr;
  momentum_.resize(params_.size());
}

void Sgd::update(size_t i, const Tensor& g) {
  const Tensor& p = params_[i];
  SgdParams sp{lr_, o_.momentum, o_.dampening, o_.weight_decay, o_.nesterov, false};
  KView buf;
  if (o_.momentum != 0) {
    if (!momentum_[i].defined()) {
      momentum_[i] = Tensor::empty(p.context(), p.shape(), p.dtype(), p.device());
      sp.first_step = true;
    }
    buf = momentum_[i].kview();
  }
  p.context()
      ->backend(p.device().type)
      .sgd_step(p.device().index, p.kview(), g.kview(), o_.momentum != 0 ? &buf : nullptr, sp);
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o) : Optimizer(std::move(params)), o_(o) {
  DP_CHECK(o.lr >= 0, kInvalidArgument, "Adam: lr = " << o.lr << " must not be negative");
  DP_CHECK(o.beta1 >= 0 && o.beta1 < 1, kInvalidArgument,
           "Adam: beta1 = " << o.beta1 << " must be in [0, 1)");
  DP_CHECK(o.beta2 >= 0 && o.beta2 < 1, kInvalidArgument,
           "Adam: beta2 = " << o.beta2 << " must be in [0, 1)");
  DP_CHECK(o.eps > 0, kInvalidArgument, "Adam: eps = " << o.eps << " must be positive");
  DP_CHECK(o.weight_decay >= 0, kInvalidArgument,
           "Adam: weight_decay = " << o.weight_decay << " must not be negative");
  lr_ = o.lr;
  m_.resize(params_.size());
  v_.resize(params_.size());
  t_.assign(params_.size(), 0);
}

void Adam::update(size_t i, const Tensor& g) {
  const Tensor& p = params_[i];
  Backend& be = p.context()->backend(p.device().type);
  if (!m_[i].defined()) {
    m_[i] = Tensor::empty(p.context(), p.shape(), p.dtype(), p.device());
    v_[i] = Tensor::empty(p.context(), p.shape(), p.dtype(), p.device());
    be.fill(p.device().index, m_[i].kview(), 0.0);
    be.fill(p.device().index, v_[i].kview(), 0.0);
  }
  AdamParams ap{lr_,    o_.beta1, o_.beta2, o_.eps, o_.weight_decay, o_.decoupled_weight_decay,
                ++t_[i]};
  be.adam_step(p.device().index, p.kview(), g.kview(), m_[i].kview(), v_[i].kview(), ap);
}

}  // namespace dp
