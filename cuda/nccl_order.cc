#include "nccl_order.h"

#include <string>
#include <utility>

#include "cuda_errors.h"

namespace dp::cuda_plugin {

namespace {

std::string gpu_name(int gpu) {
  return "GPU " + std::to_string(gpu);
}

// An event of `gpu`, the GPU whose streams record it. Raises on failure.
cudaEvent_t make_event(const BackendHost& host, int gpu) {
  DeviceGuard guard(gpu);
  cudaEvent_t event = nullptr;
  check_cuda(host, gpu_name(gpu), cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
             "cudaEventCreateWithFlags for the order of NCCL calls");
  return event;
}

// A stream may still wait for it: CUDA releases it once that wait is done.
void destroy_event(int gpu, cudaEvent_t event) {
  DeviceGuard guard(gpu);
  cudaEventDestroy(event);
  (void)cudaGetLastError();
}

}  // namespace

NcclOrder::~NcclOrder() {
  for (auto& [gpu, chain] : chains_) {
    for (auto& [comm, event] : chain.outer) destroy_event(gpu, event);
    destroy_event(gpu, chain.inner);
  }
}

NcclOrder& NcclOrder::process() {
  // Never destroyed: a communicator may outlive static destruction's turn, and CUDA may
  // be gone by then.
  static NcclOrder* order = new NcclOrder;
  return *order;
}

int NcclOrder::join(const BackendHost& host, int gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = chains_.find(gpu);
  const bool first = found == chains_.end();
  cudaEvent_t inner = first ? make_event(host, gpu) : nullptr;
  cudaEvent_t outer = nullptr;
  try {
    outer = make_event(host, gpu);
  } catch (...) {
    if (first) destroy_event(gpu, inner);
    throw;
  }
  Chain& chain = first ? chains_[gpu] : found->second;
  if (first) chain.inner = inner;
  size_t others = 0;  // communicators between processes joined already, on every GPU
  for (const auto& [g, c] : chains_) others += c.outer.size();
  if (others > 0 && host.log) {
    host.log(host.log_state, 2 /* DP_LOG_WARNING */,
             (gpu_name(gpu) + ": " + std::to_string(others + 1) +
              " NCCL communicators between processes in this process; the calls of different "
              "process groups are not ordered against each other, and using two groups at "
              "once while DataParallel's NCCL calls run on their GPUs can deadlock")
                 .c_str());
  }
  const int comm = next_comm_++;
  chain.outer[comm] = outer;
  return comm;
}

void NcclOrder::leave(int gpu, int comm) {
  std::unique_lock<std::mutex> lock(mu_);
  auto found = chains_.find(gpu);
  if (found == chains_.end()) return;
  Chain& chain = found->second;
  auto mine = chain.outer.find(comm);
  if (mine == chain.outer.end()) return;
  // An in-process launch being queued counts itself on the chain: it ends first (it waits
  // for nothing outside the process). Launches between processes need no wait: this
  // communicator's are over, and the chain outlives the others'.
  ended_.wait(lock, [&] { return chain.inner_queueing == 0; });
  destroy_event(gpu, mine->second);
  chain.outer.erase(mine);
  if (!chain.outer.empty()) return;
  destroy_event(gpu, chain.inner);
  chains_.erase(found);
}

bool NcclOrder::chained(int gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  return chains_.count(gpu) != 0;
}

NcclOrder::Launch::Launch(NcclOrder& order, const BackendHost& host, std::vector<int> gpus,
                          std::vector<cudaStream_t> streams, int comm)
    : order_(order), host_(host), comm_(comm) {
  if (gpus.size() != streams.size()) {
    raise(host, Code::kInternal, "NCCL launch",
          std::to_string(gpus.size()) + " GPUs but " + std::to_string(streams.size()) + " streams");
  }
  const bool inner = comm_ == kInProcess;
  if (!inner && gpus.size() != 1) {
    raise(
        host, Code::kInternal, "NCCL launch",
        "a communicator between processes launches on one GPU, not " + std::to_string(gpus.size()));
  }
  // Reserved now: nothing may throw between counting this launch and leaving.
  gpus_.reserve(gpus.size());
  streams_.reserve(streams.size());
  std::unique_lock<std::mutex> lock(order_.mu_);
  // Conflicting launches being queued on these GPUs end first; none of them waits for
  // anything of this thread's.
  order_.ended_.wait(lock, [&] {
    for (int gpu : gpus) {
      auto found = order_.chains_.find(gpu);
      if (found == order_.chains_.end()) continue;
      const Chain& chain = found->second;
      if (chain.inner_queueing > 0 || (inner && chain.outer_queueing > 0)) return false;
    }
    return true;
  });
  for (size_t i = 0; i < gpus.size(); ++i) {
    auto found = order_.chains_.find(gpus[i]);
    if (found == order_.chains_.end()) continue;
    const Chain& chain = found->second;
    const std::string where = gpu_name(gpus[i]);
    const std::string call = "cudaStreamWaitEvent for the order of NCCL calls";
    // Every launch waits for the last call inside the process (for one inside the process
    // too: logical devices sharing the GPU have compute streams of their own) ...
    check_cuda(host, where, cudaStreamWaitEvent(streams[i], chain.inner, 0), call);
    // ... and one inside the process for every communicator's last call.
    if (inner) {
      for (const auto& [other, event] : chain.outer) {
        check_cuda(host, where, cudaStreamWaitEvent(streams[i], event, 0), call);
      }
    }
  }
  // Nothing raises from here on: the destructor runs.
  for (size_t i = 0; i < gpus.size(); ++i) {
    auto found = order_.chains_.find(gpus[i]);
    if (found == order_.chains_.end()) continue;
    ++(inner ? found->second.inner_queueing : found->second.outer_queueing);
    gpus_.push_back(gpus[i]);
    streams_.push_back(streams[i]);
  }
}

NcclOrder::Launch::~Launch() {
  if (gpus_.empty()) return;
  std::lock_guard<std::mutex> lock(order_.mu_);
  for (size_t i = 0; i < gpus_.size(); ++i) {
    auto found = order_.chains_.find(gpus_[i]);  // kept while this launch counts (leave)
    if (found == order_.chains_.end()) continue;
    Chain& chain = found->second;
    cudaError_t e = cudaSuccess;
    if (comm_ == kInProcess) {
      e = cudaEventRecord(chain.inner, streams_[i]);
      --chain.inner_queueing;
    } else {
      auto mine = chain.outer.find(comm_);
      if (mine != chain.outer.end()) e = cudaEventRecord(mine->second, streams_[i]);
      --chain.outer_queueing;
    }
    if (e != cudaSuccess) {
      // Cleared, so that a later kernel launch's check does not find and misname it.
      (void)cudaGetLastError();
      if (host_.log) {
        host_.log(host_.log_state, 2 /* DP_LOG_WARNING */,
                  (gpu_name(gpus_[i]) + ": cudaEventRecord for the order of NCCL calls failed (" +
                   cudaGetErrorString(e) + "); later NCCL calls there may run out of order")
                      .c_str());
      }
    }
  }
  // Under the lock: a waiter may destroy the order as soon as it sees this.
  order_.ended_.notify_all();
}

}  // namespace dp::cuda_plugin
