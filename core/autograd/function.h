// What ops use to record themselves in the graph: deciding whether a node is needed,
// the edges to an op's inputs, attaching a node to its outputs, and tensors saved for
// backward with their version check.
#pragma once

#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/node.h"

namespace dp {

// Grad mode is on and at least one input requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const std::vector<Tensor>& inputs);

// Where the gradient for `t` goes: its grad_fn, its AccumulateGrad node (leaves that
// require grad), or nowhere.
Edge gradient_edge(const Tensor& t);

// Makes `out` the output `output_nr` of `node`.
void set_history(Tensor& out, const std::shared_ptr<Node>& node, uint32_t output_nr = 0);

// Creates node T(args...) whose next edges are the inputs' gradient edges.
template <class T, class... Args>
std::shared_ptr<T> make_node(const std::vector<const Tensor*>& inputs, Args&&... args) {
  auto node = std::make_shared<T>(std::forward<Args>(args)...);
  node->next_edges().reserve(inputs.size());
  for (const Tensor* t : inputs) node->next_edges().push_back(t ? gradient_edge(*t) : Edge{});
  return node;
}

// A tensor saved for backward: a detached alias plus the version it had, so backward
// can tell that an in-place write changed it since.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t)
      : data_(t.defined() ? t.detach() : Tensor()),
        version_(t.defined() ? t.version() : 0),
        saved_(true) {}
  // Throws kState if the tensor was modified in place or already freed.
  Tensor unpack(const char* node) const;
  void reset() { data_ = Tensor(); }
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  uint64_t version_ = 0;
  bool saved_ = false;
};

}  // namespace dp
