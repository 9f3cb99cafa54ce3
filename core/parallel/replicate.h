// Replicate (torch/nn/parallel/replicate.py): one copy of a module per device. Replica 0
// is the module itself; the others are shallow copies of every module in the tree whose
// parameters are broadcast copies (recorded, so gradients flow back through the
// broadcast and are summed into the original's) and whose buffers are detached copies.
// Tied parameters stay tied in every replica.
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"
#include "parallel/stats.h"

namespace dp::parallel {

struct ReplicateOptions {
  size_t bucket_bytes = size_t{10} << 20;
  // CPU replicas alias the original's parameters (read-only) instead of copying them.
  // Buffers are always copied: a replica's in-place update must not reach another device.
  bool alias_cpu = true;
  // The dtype the replicas' parameter gradients are summed in (parallel::broadcast).
  DType grad_reduce_dtype = DType::kFloat32;
};

// devices: checked by check_device_list (named "devices"); devices[0] must be the module's
// device. Throws kDeviceMismatch naming the expected and found device for a parameter or
// buffer elsewhere.
std::vector<std::shared_ptr<Module>> replicate(Module& module, const std::vector<Device>& devices,
                                               const ReplicateOptions& options,
                                               std::shared_ptr<PhaseStats> stats);

// The one replica of a forward whose batch made a single chunk (or had no inputs) under
// DataParallel over several devices. PyTorch replicates to that one device, and its
// replica's parameters are broadcast copies: once backward reaches one of them, every
// parameter gets a gradient, zeros for those the forward did not use (docs/spec.md 5; likewise,
// separately, the buffers that require grad). This replica is a shallow copy of the tree
// whose parameters and differentiable buffers alias the module's through such a recorded
// broadcast to their own device, and whose other buffers are the module's own, so its
// writes to them persist as replica 0's do. With grad mode off, or nothing requiring
// grad, it is the module itself.
std::shared_ptr<Module> lone_replica(Module& module, std::shared_ptr<PhaseStats> stats);

// The storages that the replicas' parameters alias: the original's parameters, which
// replica 0 (the original itself) could otherwise write while the others read them.
std::vector<std::shared_ptr<Storage>> aliased_parameter_memory(
    const std::vector<std::shared_ptr<Module>>& replicas);

// The broadcast-marked inputs (broadcast[i]) that other CPU devices among `devices` alias
// (alias_cpu): under grad mode replica 0 gets the caller's own tensor.
std::vector<std::shared_ptr<Storage>> aliased_broadcast_memory(const std::vector<Tensor>& inputs,
                                                               const std::vector<bool>& broadcast,
                                                               const std::vector<Device>& devices,
                                                               bool alias_cpu);

// The module's parameters and buffers in one fixed order (tied ones once), with the
// versions they have now: replica caching compares these.
struct StateVersions {
  std::vector<const TensorImpl*> tensors;
  std::vector<uint64_t> versions;
  // Every module's train/eval flag, in tree order: a replica copies it when it is made,
  // and train() bumps no version.
  std::vector<bool> training;
  bool operator==(const StateVersions& o) const {
    return tensors == o.tensors && versions == o.versions && training == o.training;
  }
};
StateVersions state_versions(const Module& module);

}  // namespace dp::parallel
