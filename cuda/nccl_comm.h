// NCCL communicators for the collectives between distinct GPUs: one set per list of
// physical GPUs (rank i on list[i]), created once with ncclCommInitAll and cached until
// the backend goes away.
#pragma once

#include <nccl.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "device/backend.h"

namespace dp::cuda_plugin {

class NcclComms {
 public:
  explicit NcclComms(const BackendHost& host) : host_(host) {}
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  // The communicators for `gpus` (pairwise distinct), one per rank. Raises on failure.
  const std::vector<ncclComm_t>& get(const std::vector<int>& gpus);

 private:
  const BackendHost& host_;
  std::mutex mu_;
  std::map<std::vector<int>, std::vector<ncclComm_t>> comms_;
};

// ncclDataType_t of a dtype.
ncclDataType_t nccl_type(DType dtype);

// For a non-blocking communicator (NCCL_COMM_BLOCKING=0 makes every communicator one,
// whatever its config says), whose initialisation and calls may return ncclInProgress:
// polls ncclCommGetAsyncError until the communicator is no longer in progress and
// returns its state (ncclSuccess, or the error to report). Immediate for a blocking one.
ncclResult_t nccl_settled(ncclComm_t comm);

}  // namespace dp::cuda_plugin
