// Tensor's autograd accessors (declared in tensor/tensor.h): they live here, beside the
// metadata they read, so that the tensor layer never includes autograd.
#include "autograd/node.h"
#include "error.h"
#include "tensor/tensor.h"

namespace dp {

void AutogradMetaDeleter::operator()(AutogradMeta* meta) const {
  delete meta;
}

bool Tensor::requires_grad() const {
  return impl_->autograd && (impl_->autograd->requires_grad || impl_->autograd->grad_fn);
}

void Tensor::set_requires_grad(bool requires_grad) {
  if (!impl_->autograd) {
    if (!requires_grad) return;
    impl_->autograd.reset(new AutogradMeta());
  }
  DP_CHECK(!impl_->autograd->grad_fn, kState,
           "requires_grad can only be changed on leaf tensors; this one was computed by "
               << impl_->autograd->grad_fn->name());
  DP_CHECK(!requires_grad || is_floating(dtype()), kDtypeMismatch,
           "only floating-point tensors can require gradients, not " << dtype_name(dtype()));
  impl_->autograd->requires_grad = requires_grad;
}

bool Tensor::is_leaf() const {
  return !impl_->autograd || !impl_->autograd->grad_fn;
}

const std::shared_ptr<Node>& Tensor::grad_fn() const {
  static const std::shared_ptr<Node> none;
  return impl_->autograd ? impl_->autograd->grad_fn : none;
}

uint32_t Tensor::output_nr() const {
  return impl_->autograd ? impl_->autograd->output_nr : 0;
}

Tensor Tensor::grad() const {
  return impl_->autograd ? impl_->autograd->grad : Tensor();
}

void Tensor::set_grad(const Tensor& grad) {
  if (!impl_->autograd) impl_->autograd.reset(new AutogradMeta());
  impl_->autograd->grad = grad;
}

}  // namespace dp
