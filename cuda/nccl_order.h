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
// NCCL has queued the calls). Calls of one kind are ordered among themselves too: a
// communicator's by its stream, those inside the process by waiting for the last one
// (logical devices that share a GPU each have a compute stream of their own). The
// order agrees between GPUs: the calls between processes are queued in the same order on
// every rank (by the process group's communication thread), and those inside a process
// reach all of its GPUs in one group call. So every dependency points to an earlier
// launch of the same rank or to the same call on another rank, and no kernel waits in a
// cycle. The price: on such a GPU, DataParallel's reduce (and the compute stream's
// kernels behind it) waits for a bucket's allreduce queued before it, and through the
// reduce itself, so do the rank's other GPUs.
//
// On the host, a launch waits only while another is being queued on the same GPU: one of
// the other kind, or for a launch inside the process, any other. A call between processes
// may block in NCCL until its peers make the same call (the first use of a connection);
// it holds up only the process's own calls on that GPU, and those, once being queued,
// wait for nothing outside the process, so no two ranks wait for each other here.
//
// The communicators of two process groups are not ordered against each other: their
// communication threads queue independently, so no order could be the same on every
// rank. On a rank with several GPUs, using both groups at once can then deadlock
// through DataParallel's calls in between (on one GPU, or over two that an in-process
// call spans); join logs a warning when a second communicator between processes joins.
// GPUs that no communicator between processes uses are not chained: a single-process run
// queues exactly what it did before.
#pragma once

#include <cuda_runtime_api.h>

#include <condition_variable>
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
  // (>= 0) for Launch and leave. Raises when an event cannot be made; logs a warning
  // through `host` when another communicator between processes exists in the process
  // (on any GPU: an in-process call over two GPUs can link two groups' calls). Calls
  // inside the process queued before the join are not ordered against its calls.
  int join(const BackendHost& host, int gpu);
  // It stops (once per join), after any call inside the process being queued on the GPU
  // (which waits for nothing outside the process). A GPU left by its last communicator is
  // no longer chained.
  void leave(int gpu, int comm);
  // Whether `gpu` is chained now.
  bool chained(int gpu);

  // One launch: a single NCCL call, or a group call with one call per GPU, queued while
  // this object lives. gpus[i] is the physical GPU of the call queued on streams[i].
  // `comm`: kInProcess, or the id join gave a communicator between processes (then one
  // GPU, its own). Construction waits while a launch of the other kind (or, for one
  // inside the process, any other) is being queued on a chained GPU of `gpus`, then makes
  // each such GPU's stream wait for the calls queued before it there (above).
  // Destruction records this launch's end there: it is to come once NCCL has queued
  // every call (after ncclGroupEnd, or once a non-blocking communicator has settled),
  // and comes on every way out, so calls queued before a failure are waited for too. A
  // failure to record is logged as a warning through `host`, which must outlive the
  // launch (a destructor cannot raise).
  class Launch {
   public:
    Launch(NcclOrder& order, const BackendHost& host, std::vector<int> gpus,
           std::vector<cudaStream_t> streams, int comm = kInProcess);
    ~Launch();
    Launch(const Launch&) = delete;
    Launch& operator=(const Launch&) = delete;

   private:
    NcclOrder& order_;
    const BackendHost& host_;
    std::vector<int> gpus_;  // the chained ones only, with their streams
    std::vector<cudaStream_t> streams_;
    int comm_;
  };

 private:
  struct Chain {
    cudaEvent_t inner = nullptr;       // the end of the last call inside the process
    std::map<int, cudaEvent_t> outer;  // by communicator: the end of its last call
    int inner_queueing = 0;            // launches inside the process being queued (0 or 1)
    int outer_queueing = 0;            // launches between processes being queued
  };
  std::mutex mu_;
  std::condition_variable ended_;  // a launch ended
  std::map<int, Chain> chains_;    // by physical GPU; only those joined
  int next_comm_ = 0;
};

}  // namespace dp::cuda_plugin
