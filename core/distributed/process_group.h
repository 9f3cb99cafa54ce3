// ProcessGroup: the ranks of a multi-process job and the collectives between them
// (torch.distributed's ProcessGroup, on its MPI backend's model). The bytes move through
// a Transport (distributed/transport.h) from the MPI plugin, loaded on the first group.
//
// Open MPI makes no progress on a collective unless a thread is inside MPI, so
// non-blocking MPI calls would not overlap with computation. A collective that should
// overlap (DDP's gradient buckets) therefore runs on the group's communication thread,
// while the caller goes on (as PyTorch's MPI backend does): submit() returns a Work to
// wait on. A blocking one runs on the caller's thread when the communication thread is
// idle (run()); either way in the order issued.
//
// A wait that lasts past the group's timeout ends the whole job (Transport::abort) after
// logging which collective and what step it waited on: a rank that died or went another
// way then stops the others instead of hanging them.
//
// CUDA tensors: the first collective on a tensor of a CUDA device (every rank issues it
// at the same point, as all collectives) decides, collectively, how that device's
// collectives run: on a communicator of the CUDA backend (NCCL; Backend::process_comm)
// when every rank can and will use one, on distinct GPUs; else through host memory and
// the transport (host staging). Rank 0 makes the communicator's id and the transport
// carries it to the others. Host staging is used when the backend has no communicator,
// when DP_DISTRIBUTED_CUDA=mpi on some rank, and when two ranks share one GPU (NCCL
// refuses two ranks on one device); the reason is logged once per group. Each rank's
// k-th CUDA device used in collectives must be first used at the same collective on
// every rank (one device per rank, the usual layout, always is).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "context/context.h"
#include "distributed/transport.h"
#include "tensor/tensor.h"

namespace dp {

struct ProcessGroupOptions {
  // Seconds a wait may last before the job is aborted; 0: DP_DISTRIBUTED_TIMEOUT (seconds)
  // when set, else kDefaultTimeoutSeconds.
  double timeout_seconds = 0;
};

constexpr double kDefaultTimeoutSeconds = 300;
// The range of a timeout. Past a year no job waits, and far past it a deadline in the
// steady clock's nanoseconds overflows (the wait would end at once); under a millisecond
// the communication thread's checks (a quarter of the timeout) would spin.
constexpr double kMinTimeoutSeconds = 1e-3;
constexpr double kMaxTimeoutSeconds = 365.0 * 24 * 3600;

// One collective on its way: done once the communication thread has run it.
class Work {
 public:
  explicit Work(std::string what) : what_(std::move(what)) {}
  const std::string& what() const { return what_; }

 private:
  friend class ProcessGroup;
  std::string what_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

class ProcessGroup {
 public:
  // comm_f: kWorldComm for the MPI environment's world (mpirun, srun), or the Fortran
  // handle of a communicator the caller owns. Throws kNotSupported when the MPI plugin
  // cannot be loaded and kBackend when MPI cannot start, each naming what is missing.
  static std::shared_ptr<ProcessGroup> create(std::shared_ptr<Context> ctx, int64_t comm_f,
                                              const ProcessGroupOptions& options);
  // Runs what is queued, then stops the thread and closes the transport.
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::string& describe() const { return describe_; }
  double timeout_seconds() const { return timeout_seconds_; }
  const std::shared_ptr<Context>& context() const { return ctx_; }

  // Runs a blocking collective: on this thread when the communication thread is idle
  // (a hand-off, two thread wake-ups, costs 6 us here, more than a small collective
  // itself), watched by that thread for the timeout; else queued behind what is queued,
  // to keep the issue order. Rethrows the job's error as wait() does.
  void run(const char* name, int64_t arg, const std::string& what,
           const std::function<void(Transport&)>& job);
  // Queues job on the communication thread. `name` (static text) and `arg` label its
  // trace span; `what` names it in errors ("allreduce of bucket 2 in step 17").
  std::shared_ptr<Work> submit(const char* name, int64_t arg, std::string what,
                               std::function<void(Transport&)> job);
  // Waits for work; rethrows its error as kBackend. Past the timeout: logs, prints to
  // stderr and aborts the job.
  void wait(Work& work);

  // Blocking collectives on tensors of any device (CUDA tensors: see above).
  // allreduce: in place; kAverage divides the sum by size() (floating dtypes only).
  // `what` names the collective in errors and in the timeout's message, as submit's does
  // ("the broadcast of buffer '1.running_mean' from rank 0 in step 4"); empty: "allreduce
  // of N elements", "broadcast from rank R".
  void allreduce(const Tensor& t, ReduceOp op, const std::string& what = {});
  void broadcast(const Tensor& t, int root, const std::string& what = {});
  // Every rank's t (same shape everywhere), concatenated along dim 0 in rank order.
  Tensor allgather(const Tensor& t);
  void barrier();

  // The communicator of t's CUDA device (NCCL), deciding the device's route at its first
  // collective (collective then: every rank calls it at the same point); null for host
  // staging and for CPU tensors. Its calls must run on the communication thread (submit).
  // Throws kState when the set-up failed. Valid while the group lives.
  ProcessComm* cuda_comm(const Tensor& t);

 private:
  ProcessGroup(std::shared_ptr<Context> ctx, std::unique_ptr<Transport> transport,
               double timeout_seconds);
  void loop();
  void stop();  // runs what is queued, then ends the thread
  [[noreturn]] void timed_out(const std::string& what);
  [[noreturn]] static void rethrow_as_backend(const std::exception_ptr& error,
                                              const std::string& what);

  // How the collectives of one CUDA device run (decided at its first collective).
  struct CudaRoute {
    bool decided = false;
    std::unique_ptr<ProcessComm> comm;  // null: host staging
    std::string failure;                // why setting up the communicator failed, if it did
  };
  // On the communication thread: the collective decision for CUDA device dev.
  void decide_cuda_route(Transport& tr, int dev, bool want_comm);
  // Runs job (a collective of comm on t's device) on the communication thread and waits.
  void run_on_comm(const char* name, int64_t arg, std::string what, std::function<void()> job);

  std::shared_ptr<Context> ctx_;
  std::unique_ptr<Transport> transport_;
  int rank_ = 0, size_ = 0, local_rank_ = 0, local_size_ = 0;  // size_ 0: not connected
  std::string describe_;
  double timeout_seconds_;

  std::mutex mu_;
  std::condition_variable cv_;
  struct Job {
    const char* name;
    int64_t arg;
    std::shared_ptr<Work> work;
    std::function<void(Transport&)> run;
  };
  std::deque<Job> queue_;
  bool busy_ = false;        // a collective is running, on the communication thread or the caller's
  std::string inline_what_;  // the one the caller runs itself (run), "" when none
  std::chrono::steady_clock::time_point inline_deadline_;
  bool stopping_ = false;
  std::thread thread_;

  std::mutex cuda_mu_;                    // guards cuda_routes_
  std::map<int, CudaRoute> cuda_routes_;  // by CUDA device index; destroyed before transport_
  bool staging_logged_ = false;           // communication thread only
};

// t /= n elementwise, for a host tensor of float32 or float64 (an average after a sum).
void divide_in_place(const Tensor& t, int n);

// The 64-bit FNV-1a hash of s: what ranks compare to tell whether their descriptions (of
// a model, of a machine) agree without sending them whole.
uint64_t fnv1a(const std::string& s);

}  // namespace dp
