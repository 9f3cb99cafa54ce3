// NCCL communicators between processes, one GPU in each (the process group's collectives
// on CUDA tensors): made with ncclCommInitRank from an id that one rank made with
// ncclGetUniqueId and the core sent to the others (through MPI, as NCCL's multi-process
// example does). The calls run on a stream of the communicator's own, after the kernels
// queued on the device's compute stream when they are made or at the QueuePoint they are
// given (an event), and wait for their own stream only (device/backend.h, ProcessComm):
// kernels queued on the compute stream later (DDP's backward, while a gradient bucket is
// allreduced) run alongside.
//
// Its calls and DataParallel's NCCL calls on the same GPU (a rank with several GPUs) wait
// for each other in the order they were queued: nccl_order.h.
//
// Non-blocking communicators (NCCL_COMM_BLOCKING=0) are waited for after each call that
// returns ncclInProgress. On any failure the communicator is aborted at once
// (ncclCommAbort: NCCL's calls queued on it stop, nothing of them can be trusted), its
// stream is waited for, so that no buffer is freed under a running NCCL kernel, and every
// later call raises.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <functional>
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
  // ncclCommDestroy (nothing to do for a communicator aborted after a failure).
  ~NcclProcessComm() override;
  NcclProcessComm(const NcclProcessComm&) = delete;
  NcclProcessComm& operator=(const NcclProcessComm&) = delete;

  void allreduce(void* buf, int64_t count, DType dtype, CollectiveOp op,
                 const QueuePoint* after) override;
  void broadcast(void* buf, size_t nbytes, int root) override;
  void allgather(const void* send, void* recv, size_t nbytes) override;
  // An event recorded on the compute stream.
  std::unique_ptr<QueuePoint> mark() override;

 private:
  // The communicator's stream, made to wait for `after` (null: what the compute stream
  // holds now). Raises when the communicator was aborted.
  cudaStream_t after_compute(const std::string& call, const QueuePoint* after);
  // Queues one call on the communicator's stream with `queue`, after `after` (see
  // after_compute) and after the process's own NCCL calls queued before it on the GPU
  // (nccl_order.h); checks its result, waits until NCCL has queued it (non-blocking
  // communicators), then for the stream, checking NCCL's asynchronous error.
  void run(const std::string& call, const QueuePoint* after,
           const std::function<ncclResult_t(cudaStream_t)>& queue);
  // Aborts the communicator and waits for its stream, then raises `why`.
  [[noreturn]] void fail(const std::string& why);

  const BackendHost& host_;  // the backend's copy, which outlives this
  std::string where_;        // "cuda:0 (GPU 0), NCCL rank 1 of 2"
  int gpu_;
  cudaStream_t compute_;            // the device's, not owned
  cudaStream_t stream_ = nullptr;   // the communicator's own
  cudaEvent_t computed_ = nullptr;  // recorded on compute_ at each call
  int nranks_;
  ncclComm_t comm_ = nullptr;  // null once aborted
  int order_id_ = -1;          // its id in NcclOrder::process()
};

}  // namespace dp::cuda_plugin
