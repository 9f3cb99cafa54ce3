// The order between the process's own NCCL calls and its calls between processes, on
// each GPU that both use.
//
// A NCCL kernel waits for its peers on the other GPUs of its communicator. When two
// communicators share a GPU, NCCL (before 2.26, and after it unless
// NCCL_LAUNCH_ORDER_IMPLICIT is set) asks the application to chain the calls on that GPU
// with stream dependencies into one order, the same wherever two GPUs meet; otherwise
// each kernel can wait for a peer that waits for the other. A rank with several GPUs has
// two communicators on its first GPU: DataParallel's inside the process (the gradient
// reduce and the parameter broadcast, on the devices' compute streams) and the process
// group's between the ranks (DDP's bucket allreduces, on the communicator's own stream).
//
// NcclOrder chains those two kinds of call on each GPU that a communicator between
// processes uses (join): a call inside the process waits for the end of every call
// between processes queued before it on that GPU, and a call between processes waits for
// the end of the last call inside the process queued before it (events, recorded once
// NCCL has queued the calls). Calls of one kind are already ordered among themselves:
// those inside the process by the compute streams, a communicator's by its stream. The
// host queues one launch at a time, and the resulting order agrees between GPUs: the
// calls between processes are queued in the same order on every rank (by the process
// group's communication thread), and those inside a process reach all of its GPUs in one
// group call. So every dependency points to an earlier launch of the same rank or to the
// same call on another rank, and no kernel waits in a cycle. The price: on such a GPU,
// DataParallel's reduce (and the compute stream's kernels behind it) waits for a bucket's
// allreduce queued before it.
//
// Two communicators between processes on one GPU (two process groups) are not ordered
// against each other: their communication threads queue independently, so no order
// could be the same on every rank. Using two groups at once stays the caller's affair,
// as in PyTorch. GPUs that no communicator between processes uses are not chained: a
// single-process run queues exactly what it did before.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <vector>

#include "device/backend.h"

namespace dp::cuda_plugin {

class NcclOrder {
 public:
  // Launch's `comm` for the calls inside the process.
  static constexpr int kInProcess = -1;

  NcclOrder() = default;
  // Destroys the events of GPUs still joined.
  ~NcclOrder();
  NcclOrder(const NcclOrder&) = delete;
  NcclOrder& operator=(const NcclOrder&) = delete;

  // The process's: every backend and communicator in the process uses this one, so the
  // order covers them all. Never destroyed.
  static NcclOrder& process();

  // A communicator between processes starts using physical GPU `gpu`: returns its id
  // (>= 0) for Launch and leave. Raises when an event cannot be made.
  int join(const BackendHost& host, int gpu);
  // It stops (once per join). A GPU left by its last communicator is no longer chained.
  void leave(int gpu, int comm);
  // Whether `gpu` is chained now.
  bool chained(int gpu);

  // One launch: a single NCCL call, or a group call with one call per GPU, queued while
  // this object lives; other launches wait for it. gpus[i] is the physical GPU of the call
  // queued on streams[i]. `comm`: kInProcess, or the id join gave the communicator between
  // processes (then one GPU, its own). Construction makes each chained GPU's stream wait
  // for the calls of the other kind queued before (above); queued() records this launch's
  // end, and is to be called once NCCL has queued every call (after ncclGroupEnd, or once
  // a non-blocking communicator has settled). A launch that fails before queued() records
  // nothing.
  class Launch {
   public:
    Launch(NcclOrder& order, const BackendHost& host, std::vector<int> gpus,
           std::vector<cudaStream_t> streams, int comm = kInProcess);
    void queued();

   private:
    NcclOrder& order_;
    const BackendHost& host_;
    std::unique_lock<std::mutex> lock_;
    std::vector<int> gpus_;
    std::vector<cudaStream_t> streams_;
    int comm_;
  };

 private:
  struct Chain {
    cudaEvent_t inner = nullptr;       // the end of the last call inside the process
    std::map<int, cudaEvent_t> outer;  // by communicator: the end of its last call
  };
  std::mutex mu_;
  std::map<int, Chain> chains_;  // by physical GPU; only those joined
  int next_comm_ = 0;
};

}  // namespace dp::cuda_plugin
