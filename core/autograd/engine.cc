#include "autograd/engine.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "autograd/autocast_mode.h"
#include "autograd/function.h"
#include "autograd/grad_arith.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "context/context.h"
#include "context/cpu_parallel.h"
#include "device/trace.h"
#include "error.h"
#include "tensor/copy.h"

namespace dp {

namespace {

using DeviceKey = std::pair<int, int>;  // (type, index)

DeviceKey key_of(Device d) {
  return {static_cast<int>(d.type), d.index};
}

// One backward call's state, shared by the caller and the device drains.
struct GraphTask {
  // Raw: backward() holds the context for the whole call, and a drain's task object may
  // outlive the call by a moment on a worker, where it must not end the context.
  Context* ctx = nullptr;
  bool retain_graph = false;

  std::mutex mu;
  std::condition_variable done_cv;
  std::unordered_map<Node*, int> dependencies;
  // Per node: per forward output, the gradients received so far (summed when it runs).
  std::unordered_map<Node*, std::vector<std::vector<Tensor>>> inputs;
  std::map<DeviceKey, std::deque<std::shared_ptr<Node>>> ready;
  std::map<DeviceKey, bool> draining;
  int outstanding = 0;  // nodes queued or running
  std::exception_ptr error;
  // The CPU device whose nodes the calling thread runs itself, through Worker::run (so on
  // its own thread while the device is idle). It stays marked as draining: enqueue never
  // posts a drain for it, and signals the caller instead.
  std::optional<DeviceKey> caller_key;
  // Bumped, under mu, whenever the caller may have something to do: a node queued on its
  // device, or the graph finished. The caller spins on it before it sleeps on done_cv.
  std::atomic<uint64_t> signals{0};

  std::vector<std::function<void()>> callbacks;  // queue_backward_callback's, under mu

  bool finished() const {
    for (const auto& [k, active] : draining) {
      if (active && k != caller_key) return false;
    }
    return error || outstanding == 0;
  }
  // Caller holds mu.
  void signal_caller() {
    signals.fetch_add(1, std::memory_order_release);
    done_cv.notify_all();
  }
};

void drain(const std::shared_ptr<GraphTask>& task, Device device);

// The backward whose node this thread is running (for queue_backward_callback).
thread_local GraphTask* t_current_task = nullptr;

struct CurrentTask {
  explicit CurrentTask(GraphTask* task) : saved(t_current_task) { t_current_task = task; }
  ~CurrentTask() { t_current_task = saved; }
  GraphTask* saved;
};

// Queues a node whose gradients are complete. Caller holds task->mu.
void enqueue(const std::shared_ptr<GraphTask>& task, const std::shared_ptr<Node>& node) {
  const Device dev = node->device();
  const DeviceKey key = key_of(dev);
  if (node->runs_first()) {
    task->ready[key].push_front(node);
  } else {
    task->ready[key].push_back(node);
  }
  ++task->outstanding;
  if (key == task->caller_key) {
    task->signal_caller();
    return;
  }
  if (!task->draining[key]) {
    task->draining[key] = true;
    task->ctx->worker(dev).post([task, dev] { drain(task, dev); });
  }
}

void add_input(GraphTask& task, Node* node, uint32_t slot, Tensor grad) {
  auto& slots = task.inputs[node];
  if (slots.empty()) slots.resize(node->num_outputs());
  slots[slot].push_back(std::move(grad));
}

// Below this many elements a gradient sum is not worth sharing between CPU workers.
constexpr int64_t kShareElements = 1 << 16;

// sum += g, for the gradients a node receives from several consumers. A large sum on CPU
// devices (the gradient of a parameter used by every replica, reduced in DataParallel's
// backward) is written in place and split over the CPU workers: it runs when every
// replica is done, with the other workers idle.
void accumulate(Context& ctx, Device device, Tensor& sum, Tensor g) {
  if (!sum.defined()) {
    sum = std::move(g);
    return;
  }
  trace::Span span("gradient sum");
  // In place only when nobody else can see `sum` (a node may hand one tensor to several
  // consumers) and the operands match elementwise.
  const bool sole = sum.impl_ptr().use_count() == 1 && sum.impl()->storage.use_count() == 1 &&
                    !sum.read_only() && sum.impl()->autograd == nullptr;
  const bool shareable = device.is_cpu() && sum.device().is_cpu() && g.device().is_cpu() &&
                         sum.shape() == g.shape() && sum.dtype() == g.dtype() &&
                         is_floating(sum.dtype()) && sum.numel() >= kShareElements;
  if (!sole || !shareable) {
    sum = grad_sum(sum, g);
    return;
  }
  Backend& backend = ctx.backend(DeviceType::kCpu);
  cpu_parallel_for(ctx, device.index, sum.numel(), kShareElements / 2,
                   64 / static_cast<int64_t>(sum.element_size()),
                   [&](int64_t begin, int64_t end, int cpu) {
                     const KView a = sum.kview_slice(begin, end);
                     backend.binary(cpu, BinaryOp::kAdd, a, g.kview_slice(begin, end), a);
                   });
}

// Runs the ready nodes of one device until its queue is empty.
void drain(const std::shared_ptr<GraphTask>& task, Device device) {
  GradModeGuard no_grad(false);
  AutocastGuard no_autocast(DType::kFloat32);  // backward ops run in their forward's dtypes
  CurrentTask current(task.get());
  const DeviceKey key = key_of(device);
  for (;;) {
    std::shared_ptr<Node> node;
    std::vector<std::vector<Tensor>> pending;
    {
      std::lock_guard<std::mutex> lock(task->mu);
      auto& queue = task->ready[key];
      if (task->error || queue.empty()) {
        if (key != task->caller_key) task->draining[key] = false;
        if (task->finished()) task->signal_caller();
        return;
      }
      node = std::move(queue.front());
      queue.pop_front();
      auto it = task->inputs.find(node.get());
      if (it != task->inputs.end()) {
        pending = std::move(it->second);
        task->inputs.erase(it);
      }
    }
    std::vector<Tensor> outputs;
    try {
      std::vector<Tensor> grads(node->num_outputs());
      bool any = false;
      for (size_t i = 0; i < pending.size() && i < grads.size(); ++i) {
        for (Tensor& g : pending[i]) {
          if (!g.defined()) continue;
          accumulate(*task->ctx, device, grads[i], std::move(g));
          any = true;
        }
      }
      if (any) {
        trace::Span span(node->name());
        outputs = node->apply(std::move(grads));
      }
      if (!task->retain_graph) node->release_saved();
    } catch (...) {
      std::lock_guard<std::mutex> lock(task->mu);
      if (!task->error) task->error = std::current_exception();
      --task->outstanding;
      continue;  // the loop sees the error and stops this drain
    }
    std::lock_guard<std::mutex> lock(task->mu);
    try {
      const auto& edges = node->next_edges();
      for (size_t i = 0; i < edges.size(); ++i) {
        const Edge& e = edges[i];
        if (!e.valid()) continue;
        if (i < outputs.size() && outputs[i].defined()) {
          add_input(*task, e.fn.get(), e.input_nr, std::move(outputs[i]));
        }
        if (--task->dependencies[e.fn.get()] == 0) enqueue(task, e.fn);
      }
    } catch (...) {
      // No memory to pass the gradients on or queue the next node: the backward fails as
      // it does for a node's own error (uncaught, it would end a worker's thread, and with
      // it the process). The loop sees the error, stops and wakes the caller.
      if (!task->error) task->error = std::current_exception();
    }
    --task->outstanding;
  }
}

}  // namespace

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grads,
              const BackwardOptions& options) {
  trace::Span span("autograd backward");
  DP_CHECK(!roots.empty(), kInvalidArgument, "backward needs at least one tensor");
  DP_CHECK(grads.empty() || grads.size() == roots.size(), kInvalidArgument,
           "backward got " << roots.size() << " tensors but " << grads.size() << " gradients");
  DP_CHECK(roots[0].defined(), kInvalidArgument, "backward: tensor 0 is undefined");
  const std::shared_ptr<Context> ctx = roots[0].context();
  auto task = std::make_shared<GraphTask>();
  task->ctx = ctx.get();
  task->retain_graph = options.retain_graph;
  for (DeviceType t : {DeviceType::kCpu, DeviceType::kCuda}) {
    for (int i = 0; i < task->ctx->device_count(t); ++i) {
      DP_CHECK(!task->ctx->worker(Device{t, i}).is_current(), kState,
               "backward cannot run inside a device task (such as a custom module's forward)");
    }
  }

  // The roots' edges and their starting gradients.
  std::vector<Edge> root_edges;
  std::vector<Tensor> root_grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    DP_CHECK(r.defined(), kInvalidArgument, "backward: tensor " << i << " is undefined");
    DP_CHECK(r.requires_grad(), kState,
             "backward: tensor " << i << " does not require grad and has no grad_fn");
    Tensor g = grads.empty() ? Tensor() : grads[i];
    if (!g.defined()) {
      DP_CHECK(r.numel() == 1, kInvalidArgument,
               "backward: a gradient can be created implicitly only for one-element tensors, "
               "but tensor "
                   << i << " has shape " << shape_str(r.shape()));
      g = grad_ones(ctx, r.shape(), r.dtype(), r.device());
    } else {
      DP_CHECK(g.shape() == r.shape(), kShapeMismatch,
               "backward: gradient " << i << " has shape " << shape_str(g.shape())
                                     << " but its tensor has shape " << shape_str(r.shape()));
      DP_CHECK(g.dtype() == r.dtype(), kDtypeMismatch,
               "backward: gradient " << i << " is " << dtype_name(g.dtype())
                                     << " but its tensor is " << dtype_name(r.dtype()));
      if (g.device() != r.device()) g = copy_to_device(g, r.device());
    }
    root_edges.push_back(gradient_edge(r));
    root_grads.push_back(std::move(g));
  }

  // Count the gradients each reachable node waits for.
  {
    std::vector<Node*> stack;
    std::unordered_map<Node*, bool> seen;
    for (const Edge& e : root_edges) {
      if (!seen[e.fn.get()]) {
        seen[e.fn.get()] = true;
        stack.push_back(e.fn.get());
      }
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges()) {
        if (!e.valid()) continue;
        ++task->dependencies[e.fn.get()];
        if (!seen[e.fn.get()]) {
          seen[e.fn.get()] = true;
          stack.push_back(e.fn.get());
        }
      }
    }
  }

  // The first root's device, if a CPU device, is the caller's: its nodes run on this
  // thread while its worker is idle (through Worker::run, as a single-device forward
  // does), and the caller waits only for the other devices. With one device, a training
  // step then hands nothing to a worker; with DataParallel, the caller goes on working as
  // replica 0's device (see parallel_apply), and that device's worker sleeps instead of
  // spinning beside it.
  const Device caller_device = root_edges[0].fn->device();
  if (caller_device.is_cpu()) {
    task->caller_key = key_of(caller_device);
    task->draining[*task->caller_key] = true;
  }
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(task->mu);
    for (size_t i = 0; i < root_edges.size(); ++i) {
      add_input(*task, root_edges[i].fn.get(), root_edges[i].input_nr, std::move(root_grads[i]));
    }
    std::unordered_map<Node*, bool> queued;
    for (const Edge& e : root_edges) {
      if (task->dependencies[e.fn.get()] == 0 && !queued[e.fn.get()]) {
        queued[e.fn.get()] = true;
        enqueue(task, e.fn);
      }
    }
    if (task->caller_key) {
      Worker& worker = task->ctx->worker(caller_device);
      for (;;) {
        const uint64_t seen = task->signals.load(std::memory_order_acquire);
        const bool work = !task->error && !task->ready[*task->caller_key].empty();
        if (!work && task->finished()) break;
        lock.unlock();
        if (work) {
          std::exception_ptr failed;
          try {
            worker.run([&] { drain(task, caller_device); });
          } catch (...) {
            // A failure outside a node (no memory to queue the next one): handled as a
            // node's error, so the other devices' drains stop before backward returns.
            failed = std::current_exception();
          }
          lock.lock();
          if (failed && !task->error) task->error = failed;
          continue;
        }
        // The other devices are still at work: spin a while (they usually finish within
        // microseconds of the caller), then sleep.
        spin_until([&] { return task->signals.load(std::memory_order_acquire) != seen; });
        lock.lock();
        task->done_cv.wait(lock,
                           [&] { return task->signals.load(std::memory_order_relaxed) != seen; });
      }
    } else {
      task->done_cv.wait(lock, [&] { return task->finished(); });
    }
    // Take the error out: a drain's copy of the task may be destroyed on its worker a
    // moment later, and must not be the one that releases the exception.
    error = std::move(task->error);
    task->error = nullptr;
  }
  if (error) std::rethrow_exception(error);
  // The graph is done, and no drain touches the task any more: run what hooks queued.
  for (size_t i = 0; i < task->callbacks.size(); ++i) task->callbacks[i]();
}

void queue_backward_callback(std::function<void()> fn) {
  GraphTask* task = t_current_task;
  DP_CHECK(task != nullptr, kState, "queue_backward_callback outside a backward");
  std::lock_guard<std::mutex> lock(task->mu);
  task->callbacks.push_back(std::move(fn));
}

}  // namespace dp
