// Graph nodes of reverse-mode autograd. An op that produces a tensor from inputs that
// require grad records a Node: it knows how to turn gradients with respect to its
// outputs into gradients with respect to its inputs (apply), and where those go next
// (next_edges, one per differentiable input). Leaves end in an AccumulateGrad node.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/device.h"
#include "tensor/tensor.h"

namespace dp {

class Node;

// Where a gradient goes: input slot `input_nr` of node `fn` (null fn: nowhere).
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node(Device device, uint32_t num_outputs) : device_(device), num_outputs_(num_outputs) {}
  virtual ~Node() = default;

  // grads[i]: gradient with respect to forward output i (undefined = zero). Returns one
  // gradient per next edge (undefined = none). Runs on device()'s worker.
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  virtual const char* name() const = 0;
  // Frees what the node saved for backward; later apply calls raise kState.
  virtual void release_saved() {}
  // Whether the engine runs this node before the other ready nodes of its device, as
  // PyTorch's ready queue does with AccumulateGrad: a leaf's gradient is complete as soon
  // as it is ready, and hooks on it (DistributedDataParallel's bucket allreduces) should
  // start while the rest of backward goes on, not after the next layer's backward.
  virtual bool runs_first() const { return false; }

  Device device() const { return device_; }
  uint32_t num_outputs() const { return num_outputs_; }
  std::vector<Edge>& next_edges() { return next_edges_; }
  const std::vector<Edge>& next_edges() const { return next_edges_; }

 protected:
  Device device_;
  uint32_t num_outputs_;
  std::vector<Edge> next_edges_;
};

struct AutogradMeta {
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  uint32_t output_nr = 0;
  Tensor grad;                           // leaves only
  std::weak_ptr<Node> grad_accumulator;  // leaves only: their AccumulateGrad node
  std::mutex mu;                         // guards grad_accumulator's creation and the hooks
  // Run after AccumulateGrad has added into grad (PyTorch's post-accumulate-grad hooks),
  // on the thread that ran it, with the id add_post_accumulate_hook returned.
  std::vector<std::pair<uint64_t, std::function<void()>>> post_accumulate_hooks;
};

}  // namespace dp
