#include "autograd/function.h"

#include "autograd/accumulate_grad.h"
#include "error.h"

namespace dp {

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t && t->defined() && t->requires_grad()) return true;
  }
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!GradMode::enabled()) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  if (const auto& fn = t.grad_fn()) return {fn, t.output_nr()};
  return {AccumulateGrad::for_leaf(t), 0};
}

void set_history(Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  TensorImpl* impl = out.impl();
  if (!impl->autograd) impl->autograd.reset(new AutogradMeta());
  impl->autograd->grad_fn = node;
  impl->autograd->output_nr = output_nr;
  impl->autograd->requires_grad = true;
}

Tensor SavedTensor::unpack(const char* node) const {
  DP_CHECK(data_.defined() || !saved_, kState,
           "backward through " << node
                               << " a second time: its saved tensors were already freed "
                                  "(pass retain_graph to keep them)");
  if (!data_.defined()) return data_;
  DP_CHECK(data_.version() == version_, kState,
           "a tensor saved for the backward of " << node << " was modified in place since (version "
                                                 << data_.version() << ", saved at version "
                                                 << version_ << ")");
  return data_;
}

}  // namespace dp
