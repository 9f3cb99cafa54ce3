// The node at the end of every path to a leaf: adds the incoming gradient into the
// leaf's `grad` (taking the tensor over when nothing else holds it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "autograd/node.h"

namespace dp {

class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& leaf);
  // The leaf's accumulator, created on first use and shared by every use after.
  static std::shared_ptr<Node> for_leaf(const Tensor& leaf);

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  const char* name() const override { return "AccumulateGrad"; }
  bool runs_first() const override { return true; }
  const Tensor& leaf() const { return leaf_; }

 private:
  Tensor leaf_;
};

// Registers hook to run each time a backward has accumulated into leaf's grad (leaf must
// require grad); returns its id. The hook runs on a device worker, must not throw and
// must not start a backward.
uint64_t add_post_accumulate_hook(const Tensor& leaf, std::function<void()> hook);
// Removes the hook with that id (no-op when there is none).
void remove_post_accumulate_hook(const Tensor& leaf, uint64_t id);

}  // namespace dp
