// NCCL communicators between processes, one GPU in each (the process group's collectives
// on CUDA tensors): made with ncclCommInitRank from an id that one rank made with
// ncclGetUniqueId and the core sent to the others (through MPI, as NCCL's multi-process
// example does). The calls run on the device's compute stream, after the kernels queued
// there, and wait for it (device/backend.h, ProcessComm).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "device/backend.h"

namespace dp::cuda_plugin {

// ncclGetUniqueId's bytes. Raises on failure.
std::vector<uint8_t> nccl_unique_id(const BackendHost& host);

class NcclProcessComm final : public ProcessComm {
 public:
  // Joins the communicator `id` as `rank` of `nranks` on physical GPU `gpu`; blocks until
  // every rank has. `where` names the device in messages; `stream` (the device's compute
  // stream) must outlive this. Raises on failure (an id of the wrong size included).
  NcclProcessComm(const BackendHost& host, std::string where, int gpu, cudaStream_t stream,
                  const std::vector<uint8_t>& id, int nranks, int rank);
  // ncclCommDestroy, or ncclCommAbort after a failed call (whose peers may never finish).
  ~NcclProcessComm() override;
  NcclProcessComm(const NcclProcessComm&) = delete;
  NcclProcessComm& operator=(const NcclProcessComm&) = delete;

  void allreduce(void* buf, int64_t count, DType dtype, CollectiveOp op) override;
  void broadcast(void* buf, size_t nbytes, int root) override;
  void allgather(const void* send, void* recv, size_t nbytes) override;

 private:
  // Checks a queued call's result, then waits for the stream and checks NCCL's
  // asynchronous error. Marks the communicator broken on any failure.
  void finish(ncclResult_t queued, const std::string& call);

  const BackendHost& host_;  // the backend's copy, which outlives this
  std::string where_;        // "cuda:0 (GPU 0), NCCL rank 1 of 2"
  int gpu_;
  cudaStream_t stream_;
  int nranks_;
  ncclComm_t comm_ = nullptr;
  bool broken_ = false;
};

}  // namespace dp::cuda_plugin
