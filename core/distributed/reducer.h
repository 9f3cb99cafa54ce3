// The gradient reducer of DistributedDataParallel (PyTorch's Reducer): it averages the
// parameters' gradients over the ranks during backward.
//
// Parameters go into buckets in reverse order (the order backward tends to produce
// their gradients), and once the first synchronised backward has shown the order they
// really arrive in, in that order (PyTorch's bucket rebuild). A bucket holds one dtype and
// closes once it holds first_bucket_bytes (the first of its dtype, small so that
// communication starts early) or bucket_bytes (the others). A bucket lives where its collective
// runs: on the parameters' CUDA device when the process group runs that device's collectives on
// its communicator (NCCL), else in host memory (CPU parameters, and CUDA ones whose collectives go
// through host memory and MPI). A hook on each parameter copies its gradient, divided by the ranks,
// into its place in the bucket once backward has accumulated it (so the allreduce's sum is the
// average, as in PyTorch's Reducer); where the bucket is on the parameter's device (or both are
// host memory) the gradient then becomes a view of that place (PyTorch's gradient_as_bucket_view),
// so the average needs no copy back, and later backwards without zero_grad accumulate in place.
// When a bucket's last gradient is in, its allreduce is queued on the process group's communication
// thread, while backward goes on. Buckets are queued in index order on every rank (a ready bucket
// waits for the ones before it), so the ranks' collectives match. When the graph is done, a
// backward callback queues the buckets no gradient reached (unused parameters count as zero, or as
// their gradient so far), waits for every bucket and writes the averages back into the gradients
// that are not views: when backward returns, the gradients are synchronised. A bucket on a CUDA
// device is allreduced by the communicator (ProcessComm) on a stream of its own, after the
// kernels that filled it: no copy through the host.
//
// With allreduce_dtype bfloat16 (PyTorch's bf16_compress_hook), a float32 bucket (divided
// by the ranks, as every bucket) is rounded to bfloat16 before it travels, summed in bfloat16
// by the transport or the communicator and widened back (a bucket on a CUDA device is rounded
// there before it is queued and widened after the wait): half the bytes, each average within
// ranks * 2^-8 of the mean of the ranks' gradient magnitudes (first order;
// docs/distributed.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/sync_stats.h"
#include "tensor/tensor.h"

namespace dp {

struct ReducerOptions {
  size_t bucket_bytes = size_t{25} << 20;
  size_t first_bucket_bytes = size_t{1} << 20;
  // The dtype float32 buckets travel in: kFloat32 or kBFloat16 (other buckets travel in
  // their own dtype).
  DType allreduce_dtype = DType::kFloat32;
};

class Reducer {
 public:
  // params: the module's parameters in named_parameters() order (each requires grad).
  // stats (may be null) receives the buckets' allreduce times and backward's wait for them.
  Reducer(std::shared_ptr<ProcessGroup> group, std::vector<Tensor> params,
          const ReducerOptions& options, std::shared_ptr<SyncStats> stats = nullptr);
  // Removes the hooks; waits for buckets already queued.
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Before each forward: whether the next backward averages the gradients (false under
  // no_sync: they only accumulate locally), and the step's number for messages.
  void prepare(bool sync, int64_t step);
  // Throws kState when a backward failed after starting its allreduces (the ranks'
  // collectives no longer match): before a step's first collective.
  void check_between_steps() const;
  // A joined rank's part in a step it has no data for: every bucket's allreduce, in
  // order, with zeros.
  void shadow_step(int64_t step);

  // Changes once, at the rebuild (between steps, on the caller's thread).
  size_t bucket_count() const { return buckets_.size(); }
  size_t param_count() const { return params_.size(); }

  // PyTorch's rebuild: the buckets at creation follow the reverse parameter order; after
  // the first synchronised backward, ready_order() is the order its gradients arrived in
  // (the unused parameters last), and rebuild_buckets(order) refills the buckets in an
  // order (every rank the same: DistributedDataParallel broadcasts rank 0's), so that
  // the first bucket holds the first gradients ready. Between steps only; once.
  std::vector<size_t> ready_order() const;  // empty until recorded
  void rebuild_buckets(const std::vector<size_t>& order);
  // Read without the lock: only the caller's thread writes it (rebuild_buckets).
  bool rebuilt() const { return rebuilt_; }

 private:
  struct Bucket {
    std::vector<size_t> params;
    std::vector<int64_t> offsets;  // element offset of each parameter in flat
    Tensor flat;                   // one dtype, on the host or on a CUDA device (see above)
    Tensor wire;                   // bfloat16 copy that travels (compression on), else undefined
    ProcessComm* comm = nullptr;   // flat's device's communicator; null: host memory and MPI
    size_t pending = 0;            // gradients still to come in this backward
    std::shared_ptr<Work> work;
  };

  // Fills buckets_, bucket_of_ and slot_of_ with the parameters in `order`.
  void assign_buckets(const std::vector<size_t>& order);
  // Logs (info) where the buckets live and what allreduces them.
  void log_buckets() const;
  // param's place in its bucket, shaped as the parameter.
  Tensor slice_of(size_t param) const;
  bool is_bucket_view(size_t param, const Tensor& grad) const;
  void on_grad_ready(size_t param);
  void copy_in(size_t param, bool zero_if_missing);
  // slice /= ranks, on the slice's device.
  void divide(const Tensor& slice) const;
  // Queues the ready buckets from next_launch_ on, in order (takes mu_ itself; called
  // without it).
  void launch_ready();
  void launch(size_t b);  // without mu_: only the launching thread calls it
  void finish();          // the backward callback
  void reset_buckets();

  std::shared_ptr<ProcessGroup> group_;
  std::shared_ptr<SyncStats> stats_;  // may be null
  ReducerOptions options_;
  std::vector<Tensor> params_;
  std::vector<size_t> bucket_of_;  // per parameter
  std::vector<size_t> slot_of_;    // per parameter: index within its bucket
  std::vector<Device> home_;       // per parameter: where its bucket lives
  std::vector<uint64_t> hook_ids_;
  std::vector<Bucket> buckets_;

  mutable std::mutex mu_;
  bool armed_ = false;  // the coming backward averages
  bool callback_queued_ = false;
  std::vector<bool> ready_;  // per parameter, in this backward
  size_t next_launch_ = 0;   // the first bucket not yet queued
  bool launching_ = false;   // a thread is in launch_ready's loop
  int64_t step_ = 0;
  std::vector<size_t> ready_order_;  // the first synchronised backward's, as it arrives
  bool order_recorded_ = false;      // ready_order_ is complete
  bool rebuilt_ = false;
};

}  // namespace dp
