// NCCL communicators between processes, one GPU in each (the process group's collectives
// on CUDA tensors): made with ncclCommInitRank from an id that one rank made with
// ncclGetUniqueId and the core sent to the others (through MPI, as NCCL's multi-process
// example does). The calls run on a stream of the communicator's own, after the kernels
// queued on the device's compute stream when they are made (an event), and wait for their
// own stream only (device/backend.h, ProcessComm): kernels queued on the compute stream
// later (DDP's backward, while a gradient bucket is allreduced) run alongside.
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
  // every rank has. `where` names the device in messages; `compute` (the device's compute
  // stream) must outlive this. Raises on failure (an id of the wrong size included).
  NcclProcessComm(const BackendHost& host, std::string where, int gpu, cudaStream_t compute,
                  const std::vector<uint8_t>& id, int nranks, int rank);
  // ncclCommDestroy, or ncclCommAbort after a failed call (whose peers may never finish).
  ~NcclProcessComm() override;
  NcclProcessComm(const NcclProcessComm&) = delete;
  NcclProcessComm& operator=(const NcclProcessComm&) = delete;

  void allreduce(void* buf, int64_t count, DType dtype, CollectiveOp op) override;
  void broadcast(void* buf, size_t nbytes, int root) override;
  void allgather(const void* send, void* recv, size_t nbytes) override;

 private:
  // The communicator's stream, made to wait for what the compute stream holds now.
  cudaStream_t after_compute(const std::string& call);
  // Checks a queued call's result, then waits for the communicator's stream and checks
  // NCCL's asynchronous error. Marks the communicator broken on any failure.
  void finish(ncclResult_t queued, const std::string& call);

  const BackendHost& host_;  // the backend's copy, which outlives this
  std::string where_;        // "cuda:0 (GPU 0), NCCL rank 1 of 2"
  int gpu_;
  cudaStream_t compute_;            // the device's, not owned
  cudaStream_t stream_ = nullptr;   // the communicator's own
  cudaEvent_t computed_ = nullptr;  // recorded on compute_ at each call
  int nranks_;
  ncclComm_t comm_ = nullptr;
  bool broken_ = false;
};

}  // namespace dp::cuda_plugin
