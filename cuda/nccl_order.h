// One order for the NCCL calls on each GPU of the process.
//
// A NCCL kernel waits for its peers on the other GPUs of its communicator. When two
// communicators share a GPU, NCCL (before 2.26, and after it unless
// NCCL_LAUNCH_ORDER_IMPLICIT is set) asks the application to chain every call on that
// GPU into one total order with stream dependencies, the same order wherever two GPUs
// meet; otherwise each kernel can wait for a peer that waits for the other. A rank with
// several GPUs has two communicators on its first GPU: DataParallel's inside the process
// (the gradient reduce and the parameter broadcast, on the compute streams) and the
// process group's between the ranks (DDP's bucket allreduces, on its own stream).
//
// NcclOrder chains the calls on each GPU that a communicator between processes uses
// (join): each launch's streams wait for the previous launch's end on that GPU (an
// event) and record their own end once NCCL has queued the calls. The chain follows the
// order the host queues launches in, one launch at a time. That order agrees between
// GPUs: the calls between processes are queued in the same order on every rank (by the
// process group's communication thread), and the calls inside a process reach all of
// its GPUs in one group call. Every dependency points to an earlier launch on the same
// rank or to the same call on another rank, so no kernel waits in a cycle. The price: on
// such a GPU, DataParallel's reduce and the kernels queued after it on the compute stream
// wait for a bucket's allreduce that was queued before it.
//
// GPUs that no communicator between processes uses are not chained: their NCCL calls all
// run on the compute streams, which order them already, so a single-process run queues
// exactly what it did before.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <vector>

#include "device/backend.h"

namespace dp::cuda_plugin {

class NcclOrder {
 public:
  NcclOrder() = default;
  // Destroys the events of GPUs still joined.
  ~NcclOrder();
  NcclOrder(const NcclOrder&) = delete;
  NcclOrder& operator=(const NcclOrder&) = delete;

  // The process's: every backend and communicator in the process uses this one, so the
  // order covers them all. Never destroyed.
  static NcclOrder& process();

  // A communicator between processes starts (join) or stops (leave) using physical GPU
  // `gpu`; its calls are chained while at least one does. Calls pair up. join raises when
  // the GPU's event cannot be made.
  void join(const BackendHost& host, int gpu);
  void leave(int gpu);
  // Whether `gpu` is chained now.
  bool chained(int gpu);

  // One launch: a single NCCL call, or a group call with one call per GPU, queued while
  // this object lives; other launches wait for it. gpus[i] is the physical GPU of the call
  // queued on streams[i]. Construction makes each chained GPU's stream wait for the end
  // of the previous launch there; queued() records this launch's end there, and is to be
  // called once NCCL has queued every call (after ncclGroupEnd, or once a non-blocking
  // communicator has settled). A launch that fails before queued() records nothing.
  class Launch {
   public:
    Launch(NcclOrder& order, const BackendHost& host, std::vector<int> gpus,
           std::vector<cudaStream_t> streams);
    void queued();

   private:
    NcclOrder& order_;
    const BackendHost& host_;
    std::unique_lock<std::mutex> lock_;
    std::vector<int> gpus_;
    std::vector<cudaStream_t> streams_;
  };

 private:
  struct Chain {
    int users = 0;
    cudaEvent_t last = nullptr;  // the last launch's end on the GPU
  };
  std::mutex mu_;
  std::map<int, Chain> chains_;  // by physical GPU; only those joined
};

}  // namespace dp::cuda_plugin
