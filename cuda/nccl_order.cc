#include "nccl_order.h"

#include <string>
#include <utility>

#include "cuda_errors.h"

namespace dp::cuda_plugin {

namespace {

std::string gpu_name(int gpu) {
  return "GPU " + std::to_string(gpu);
}

}  // namespace

NcclOrder::~NcclOrder() {
  for (auto& [gpu, chain] : chains_) {
    DeviceGuard guard(gpu);
    cudaEventDestroy(chain.last);
  }
  (void)cudaGetLastError();
}

NcclOrder& NcclOrder::process() {
  // Never destroyed: a communicator may outlive static destruction's turn, and CUDA may
  // be gone by then.
  static NcclOrder* order = new NcclOrder;
  return *order;
}

void NcclOrder::join(const BackendHost& host, int gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = chains_.find(gpu);
  if (found != chains_.end()) {
    ++found->second.users;
    return;
  }
  DeviceGuard guard(gpu);  // the event belongs to the GPU whose streams record it
  cudaEvent_t event = nullptr;
  check_cuda(host, gpu_name(gpu), cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
             "cudaEventCreateWithFlags for the order of NCCL calls");
  chains_[gpu] = Chain{1, event};
}

void NcclOrder::leave(int gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = chains_.find(gpu);
  if (found == chains_.end() || --found->second.users > 0) return;
  {
    DeviceGuard guard(gpu);
    // A stream may still wait for it: CUDA releases it once that wait is done.
    cudaEventDestroy(found->second.last);
    (void)cudaGetLastError();
  }
  chains_.erase(found);
}

bool NcclOrder::chained(int gpu) {
  std::lock_guard<std::mutex> lock(mu_);
  return chains_.count(gpu) != 0;
}

NcclOrder::Launch::Launch(NcclOrder& order, const BackendHost& host, std::vector<int> gpus,
                          std::vector<cudaStream_t> streams)
    : order_(order),
      host_(host),
      lock_(order.mu_),
      gpus_(std::move(gpus)),
      streams_(std::move(streams)) {
  if (gpus_.size() != streams_.size()) {
    raise(
        host_, Code::kInternal, "NCCL launch",
        std::to_string(gpus_.size()) + " GPUs but " + std::to_string(streams_.size()) + " streams");
  }
  for (size_t i = 0; i < gpus_.size(); ++i) {
    auto found = order_.chains_.find(gpus_[i]);
    if (found == order_.chains_.end()) continue;
    check_cuda(host_, gpu_name(gpus_[i]), cudaStreamWaitEvent(streams_[i], found->second.last, 0),
               "cudaStreamWaitEvent for the order of NCCL calls");
  }
}

void NcclOrder::Launch::queued() {
  for (size_t i = 0; i < gpus_.size(); ++i) {
    auto found = order_.chains_.find(gpus_[i]);
    if (found == order_.chains_.end()) continue;
    check_cuda(host_, gpu_name(gpus_[i]), cudaEventRecord(found->second.last, streams_[i]),
               "cudaEventRecord for the order of NCCL calls");
  }
}

}  // namespace dp::cuda_plugin
