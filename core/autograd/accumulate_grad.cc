#include "autograd/accumulate_grad.h"

#include <mutex>

#include "autograd/grad_arith.h"
#include "tensor/copy.h"

namespace dp {

AccumulateGrad::AccumulateGrad(const Tensor& leaf) : Node(leaf.device(), 1), leaf_(leaf) {}

std::shared_ptr<Node> AccumulateGrad::for_leaf(const Tensor& leaf) {
  // Several replicas' forwards may ask at once for the same leaf (replica 0 shares the
  // original's parameters), so creation is serialised.
  AutogradMeta* meta = leaf.impl()->autograd.get();
  std::lock_guard<std::mutex> lock(meta->mu);
  if (auto existing = meta->grad_accumulator.lock()) return existing;
  auto node = std::make_shared<AccumulateGrad>(leaf);
  meta->grad_accumulator = node;
  return node;
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor& g = grads[0];
  if (!g.defined()) return {};
  AutogradMeta* meta = leaf_.impl()->autograd.get();
  if (!meta->grad.defined()) {
    // Take the incoming tensor over only when nobody else can see it.
    const bool sole = g.impl_ptr().use_count() == 1 && g.impl()->storage.use_count() == 1 &&
                      !g.read_only() && g.impl()->autograd == nullptr;
    meta->grad = sole ? std::move(g) : copy_to_device(g, g.device());
  } else {
    grad_accumulate_(meta->grad, g);
  }
  return {};
}

}  // namespace dp
