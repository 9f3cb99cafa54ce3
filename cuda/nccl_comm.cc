#include "nccl_comm.h"

#include "cuda_errors.h"

namespace dp::cuda_plugin {

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
  check_nccl(host_, "GPUs " + list,
             ncclCommInitAll(comms.data(), static_cast<int>(gpus.size()), gpus.data()), nullptr,
             "ncclCommInitAll");
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
