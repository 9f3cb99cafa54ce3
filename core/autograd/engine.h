// The backward engine. It counts, for every node reachable from the roots, how many
// gradients it waits for; a node whose count reaches zero goes to the ready queue of its
// device, and that device's worker runs it. Nodes of different devices (the replicas of
// a DataParallel forward) therefore run their backward in parallel, and a chain of nodes
// on one device runs in one worker task without hand-offs.
#pragma once

#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace dp {

struct BackwardOptions {
  bool retain_graph = false;  // keep saved tensors for another backward
};

// Accumulates d(roots)/d(leaf) * grads into every leaf's grad. grads[i] may be undefined
// for a root with one element (it then starts at 1). Throws the first node's error after
// every running node has stopped. Must not be called from a device worker.
void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads,
              const BackwardOptions& options = {});

// Queues fn to run on backward's calling thread once the running backward's graph has
// finished without error, in the order queued (PyTorch's Engine::queue_callback): a
// gradient hook uses it to wait for what it started. Call it only from inside a
// backward (a node or a post-accumulate hook); elsewhere it throws kState. A callback's
// exception becomes backward's.
void queue_backward_callback(std::function<void()> fn);

}  // namespace dp
