#include "autograd/accumulate_grad.h"

#include <atomic>
#include <mutex>

#include "autograd/grad_arith.h"
#include "error.h"
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
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard<std::mutex> lock(meta->mu);
    for (const auto& entry : meta->post_accumulate_hooks) hooks.push_back(entry.second);
  }
  for (const auto& hook : hooks) hook();
  return {};
}

uint64_t add_post_accumulate_hook(const Tensor& leaf, std::function<void()> hook) {
  static std::atomic<uint64_t> next_id{1};
  DP_CHECK(leaf.defined() && leaf.requires_grad() && leaf.is_leaf(), kInvalidArgument,
           "a post-accumulate hook needs a leaf tensor that requires grad");
  AutogradMeta* meta = leaf.impl()->autograd.get();
  const uint64_t id = next_id.fetch_add(1);
  std::lock_guard<std::mutex> lock(meta->mu);
  meta->post_accumulate_hooks.emplace_back(id, std::move(hook));
  return id;
}

void remove_post_accumulate_hook(const Tensor& leaf, uint64_t id) {
  if (!leaf.defined() || !leaf.impl()->autograd) return;
  AutogradMeta* meta = leaf.impl()->autograd.get();
  std::lock_guard<std::mutex> lock(meta->mu);
  auto& hooks = meta->post_accumulate_hooks;
  for (auto it = hooks.begin(); it != hooks.end(); ++it) {
    if (it->first == id) {
      hooks.erase(it);
      return;
    }
  }
}

}  // namespace dp
