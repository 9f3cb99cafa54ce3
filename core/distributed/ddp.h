// DistributedDataParallel (torch/nn/parallel/distributed.py, docs/spec.md section 9),
// hierarchical: inside a rank the module runs as a DataParallel over the rank's local
// devices (one or several, CPU or CUDA); across ranks the Reducer averages the gradients
// during backward, as PyTorch's DDP does. A rank with one device runs the module itself.
//
// At creation every rank checks that the models agree (parameter and buffer names,
// shapes, dtypes), and the options that shape the collectives (bucket sizes, the
// allreduce dtype, broadcast_buffers): the first difference is named on every rank. Then
// every rank takes rank 0's parameters and buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/process_group.h"
#include "distributed/reducer.h"
#include "nn/module.h"
#include "parallel/data_parallel.h"

namespace dp {

struct DdpOptions {
  ReducerOptions buckets;
  bool broadcast_buffers = true;  // rank 0's buffers reach every rank before each forward
  DataParallelOptions local;      // the DataParallel inside the rank
};

class DistributedDataParallel {
 public:
  // device_ids empty: default_rank_devices(). Throws kInvalidArgument, on every rank,
  // when the ranks' models differ.
  DistributedDataParallel(std::shared_ptr<Module> module, std::shared_ptr<ProcessGroup> group,
                          std::vector<Device> device_ids, std::optional<Device> output_device,
                          int dim, const DdpOptions& options);

  // One forward of this rank's batch (its share of the global batch). With grad mode on
  // and gradient sync on, the next backward averages the gradients over the ranks.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs,
                              const std::vector<bool>& broadcast = {});

  // Off: backward only accumulates local gradients (PyTorch's no_sync()); the first
  // backward after it is back on averages what accumulated.
  void set_grad_sync(bool sync) { grad_sync_ = sync; }
  bool grad_sync() const { return grad_sync_; }

  // Uneven inputs (PyTorch's join()): with it on, every forward first counts the ranks
  // still training (one small allreduce), and a rank with no batches left calls join(),
  // which takes part in the others' collectives (buffer broadcasts; gradient allreduces
  // with zeros, so the average is still over all ranks) until every rank has joined.
  // When all have joined, every rank takes the parameters and buffers of the rank that
  // ran the most forwards. Every rank must turn it on and call join() after its last
  // batch, and each forward with grad mode on must be followed by one backward.
  void set_uneven_inputs(bool on) { uneven_inputs_ = on; }
  bool uneven_inputs() const { return uneven_inputs_; }
  void join();

  const std::shared_ptr<Module>& module() const { return local_->module(); }
  const std::shared_ptr<ProcessGroup>& group() const { return group_; }
  DataParallel& local() { return *local_; }
  const Reducer& reducer() const { return *reducer_; }
  int64_t steps() const { return steps_; }
  // The synchronisation's seconds (the rank's DataParallel keeps its own: local().stats()).
  SyncStats& sync_stats() { return *sync_stats_; }

 private:
  void check_models_agree();
  // Rank root's buffers (and parameters) to every rank. `when` ends each broadcast's name
  // in errors and timeouts ("in step 4", "at creation").
  void broadcast_state(bool parameters, int root, const std::string& when);
  // PyTorch's bucket rebuild, once: before a synchronised forward, every rank takes rank
  // 0's order of the first synchronised backward's gradients (a broadcast) and refills
  // its buckets in it. A collective at each synchronised forward until rank 0 has one.
  void rebuild_buckets_once(int64_t step);
  // Uneven inputs, step `step`: how many ranks still train, how many of those sync their
  // gradients, and the lowest rank still training, whose buffers the step broadcasts (rank
  // 0's while it trains; a rank that has joined has stale ones). One allgather.
  struct StepRanks {
    int64_t active = 0;
    int64_t syncing = 0;
    int buffer_root = 0;
  };
  StepRanks ranks_in_step(bool active, bool sync, int64_t step);

  std::shared_ptr<ProcessGroup> group_;
  std::unique_ptr<DataParallel> local_;
  std::unique_ptr<Reducer> reducer_;
  std::shared_ptr<SyncStats> sync_stats_ = std::make_shared<SyncStats>();
  DdpOptions options_;
  bool grad_sync_ = true;
  bool uneven_inputs_ = false;
  int64_t steps_ = 0;          // forwards and joined steps: numbers steps in messages
  int64_t trained_steps_ = 0;  // forwards since creation
};

// The devices a rank takes by default: the GPU of its local rank (cuda:(local_rank %
// GPUs)) when the context has CUDA devices, else its share of the CPU devices,
// cpu:0 .. cpu:(cpu devices / local_size - 1), at least one.
std::vector<Device> default_rank_devices(const Context& ctx, int local_rank, int local_size);

}  // namespace dp
