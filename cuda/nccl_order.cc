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
  const int comm = next_comm_++;
  chain.outer[comm] = outer;
  return comm;
}

void NcclOrder::leave(int gpu, int comm) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = chains_.find(gpu);
  if (found == chains_.end()) return;
  Chain& chain = found->second;
  auto mine = chain.outer.find(comm);
  if (mine == chain.outer.end()) return;
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
    : order_(order),
      host_(host),
      lock_(order.mu_),
      gpus_(std::move(gpus)),
      streams_(std::move(streams)),
      comm_(comm) {
  if (gpus_.size() != streams_.size()) {
    raise(
        host_, Code::kInternal, "NCCL launch",
        std::to_string(gpus_.size()) + " GPUs but " + std::to_string(streams_.size()) + " streams");
  }
  if (comm_ != kInProcess && gpus_.size() != 1) {
    raise(host_, Code::kInternal, "NCCL launch",
          "a communicator between processes launches on one GPU, not " +
              std::to_string(gpus_.size()));
  }
  for (size_t i = 0; i < gpus_.size(); ++i) {
    auto found = order_.chains_.find(gpus_[i]);
    if (found == order_.chains_.end()) continue;
    const Chain& chain = found->second;
    const std::string where = gpu_name(gpus_[i]);
    const std::string call = "cudaStreamWaitEvent for the order of NCCL calls";
    if (comm_ == kInProcess) {
      for (const auto& [other, event] : chain.outer) {
        check_cuda(host_, where, cudaStreamWaitEvent(streams_[i], event, 0), call);
      }
    } else {
      check_cuda(host_, where, cudaStreamWaitEvent(streams_[i], chain.inner, 0), call);
    }
  }
}

void NcclOrder::Launch::queued() {
  for (size_t i = 0; i < gpus_.size(); ++i) {
    auto found = order_.chains_.find(gpus_[i]);
    if (found == order_.chains_.end()) continue;
    Chain& chain = found->second;
    cudaEvent_t end = chain.inner;
    if (comm_ != kInProcess) {
      auto mine = chain.outer.find(comm_);
      if (mine == chain.outer.end()) continue;  // left already: nothing waits for it
      end = mine->second;
    }
    check_cuda(host_, gpu_name(gpus_[i]), cudaEventRecord(end, streams_[i]),
               "cudaEventRecord for the order of NCCL calls");
  }
}

}  // namespace dp::cuda_plugin
