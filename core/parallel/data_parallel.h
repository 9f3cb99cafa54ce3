// DataParallel (torch/nn/parallel/data_parallel.py, docs/spec.md sections 2, 3 and 8): scatter
// the inputs, replicate the module, run the replicas in parallel, gather the outputs.
// Backward is the ordinary backward() call: gather, scatter and broadcast are recorded
// like any op, so the original module's gradients become the sum over replicas.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/module.h"
#include "parallel/replicate.h"
#include "parallel/stats.h"

namespace dp {

enum class BufferSync {
  kNone,     // PyTorch's behaviour: only replica 0's (the original's) in-place updates count
  kAverage,  // after forward, the original's floating buffers become the replicas' mean
};

struct DataParallelOptions {
  std::vector<int64_t> chunk_sizes;  // empty: torch.chunk's sizes
  bool no_gather = false;            // return every replica's outputs where they are
  bool cache_replicas = false;       // reuse replicas while no parameter changes (no grad)
  BufferSync buffer_sync = BufferSync::kNone;
  bool alias_cpu = true;  // CPU devices alias read-only data instead of copying it
  size_t bucket_bytes = size_t{10} << 20;
  // kBFloat16: the replicas' float32 parameter gradients are rounded to bfloat16 to be
  // moved and summed (half the bytes), then widened; kFloat32 (default): float32 throughout.
  DType grad_reduce_dtype = DType::kFloat32;
};

class DataParallel {
 public:
  // device_ids empty: every device of the accelerator in use (CUDA if any, else CPU).
  // output_device: defaults to device_ids[0]. The lists are checked here, once
  // (parallel/validate.h): kOutOfRange for a device that does not exist, kInvalidArgument
  // for a repeated id, mixed device types or bad chunk_sizes, each naming the value. With
  // one device the module is moved there. On CUDA, warns (log) about unbalanced GPUs.
  DataParallel(std::shared_ptr<Module> module, std::vector<Device> device_ids,
               std::optional<Device> output_device, int dim, DataParallelOptions options);

  // The gathered outputs on the output device (no_gather: one list per replica,
  // concatenated replica by replica; see forward_per_replica).
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs,
                              const std::vector<bool>& broadcast = {});
  // The replicas' outputs without gathering: result[r] lives on devices()[r].
  std::vector<std::vector<Tensor>> forward_per_replica(const std::vector<Tensor>& inputs,
                                                       const std::vector<bool>& broadcast = {});

  const std::shared_ptr<Module>& module() const { return module_; }
  const std::vector<Device>& device_ids() const { return device_ids_; }
  Device output_device() const { return output_device_; }
  int dim() const { return dim_; }
  const DataParallelOptions& options() const { return options_; }
  // Devices used by the last forward (fewer than device_ids for small batches).
  const std::vector<Device>& last_devices() const { return last_devices_; }
  PhaseStats& stats() { return *stats_; }

 private:
  // The constructor's checks alone, without moving the module or the imbalance check:
  // data_parallel() runs one forward through such a wrapper.
  struct Checked {};
  DataParallel(Checked, std::shared_ptr<Module> module, std::vector<Device> device_ids,
               std::optional<Device> output_device, int dim, DataParallelOptions options);
  friend std::vector<Tensor> data_parallel(Module& module, const std::vector<Tensor>& inputs,
                                           std::vector<Device> device_ids,
                                           std::optional<Device> output_device, int dim,
                                           const std::vector<bool>& broadcast);

  std::vector<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                       const std::vector<bool>& broadcast);
  void sync_buffers(const std::vector<std::shared_ptr<Module>>& replicas,
                    const std::vector<std::vector<uint64_t>>& versions_before);
  // Each replica's buffers' version counters, in named_buffers() order.
  static std::vector<std::vector<uint64_t>> buffer_versions(
      const std::vector<std::shared_ptr<Module>>& replicas);
  void check_balance() const;
  void drop_cache();
  // Whether a forward calls the module itself, without replicas or a gather: one device.
  bool runs_directly() const { return device_ids_.size() == 1; }

  std::shared_ptr<Module> module_;
  std::vector<Device> device_ids_;
  Device output_device_;
  int dim_;
  DataParallelOptions options_;
  std::shared_ptr<PhaseStats> stats_ = std::make_shared<PhaseStats>();
  std::vector<Device> last_devices_;

  // Replica cache (options_.cache_replicas): valid while the original's state versions
  // and train/eval flags match; empty, all three, when there is none.
  std::vector<std::shared_ptr<Module>> cached_replicas_;
  std::vector<Device> cached_devices_;
  parallel::StateVersions cached_versions_;
};

// docs/spec.md section 2's imbalance check on the devices' total memory and multiprocessor
// counts: the warning naming the weaker and the stronger device, or "" when balanced.
std::string imbalance_warning(const std::vector<Device>& devices,
                              const std::vector<uint64_t>& memory,
                              const std::vector<int>& multiprocessors);

// The functional form (docs/spec.md section 8): one forward of a DataParallel with default options
// (the same pipeline and checks), without moving the module and without the imbalance
// check. module must be on device_ids[0].
std::vector<Tensor> data_parallel(Module& module, const std::vector<Tensor>& inputs,
                                  std::vector<Device> device_ids,
                                  std::optional<Device> output_device, int dim,
                                  const std::vector<bool>& broadcast = {});

}  // namespace dp
