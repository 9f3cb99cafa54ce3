#include "nccl_comm.h"

#include <chrono>
#include <thread>

#include "cuda_errors.h"

namespace dp::cuda_plugin {

ncclResult_t nccl_settled(ncclComm_t comm) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t got = ncclCommGetAsyncError(comm, &state);
    if (got != ncclSuccess) return got;
    if (state != ncclInProgress) return state;
    // Spin briefly (an enqueue takes microseconds), then leave the core to others. A
    // peer that never comes leaves it in progress: the core's timeout ends the job.
    if (std::chrono::steady_clock::now() - start < std::chrono::microseconds(200)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

NcclComms::~NcclComms() {
  for (auto& [gpus, comms] : comms_) {
    for (ncclComm_t c : comms) ncclCommDestroy(c);
  }
}

const std::vector<ncclComm_t>& NcclComms::get(const std::vector<int>& gpus) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = comms_.find(gpus);
  if (it != comms_.end()) return it->second;
  std::vector<ncclComm_t> comms(gpus.size(), nullptr);
  std::string list;
  for (int g : gpus) {
    if (!list.empty()) list += ',';
    list += std::to_string(g);
  }
  const ncclResult_t made =
      ncclCommInitAll(comms.data(), static_cast<int>(gpus.size()), gpus.data());
  check_nccl(host_, "GPUs " + list, made, nullptr, "ncclCommInitAll");
  for (size_t i = 0; made == ncclInProgress && i < comms.size(); ++i) {
    if (const ncclResult_t state = nccl_settled(comms[i]); state != ncclSuccess) {
      const std::string why = nccl_failure(state, comms[i], "ncclCommInitAll");
      for (ncclComm_t c : comms) ncclCommAbort(c);
      raise(host_, Code::kBackend, "GPUs " + list, why);
    }
  }
  return comms_.emplace(gpus, std::move(comms)).first->second;
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kInt64:
      return ncclInt64;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kUInt8:
      return ncclUint8;
  }
  return ncclUint8;
}

}  // namespace dp::cuda_plugin
