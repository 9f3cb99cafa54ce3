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
};

// devices[0] must be the module's device. Throws kDeviceMismatch naming the expected and
// found device for a parameter or buffer elsewhere.
std::vector<std::shared_ptr<Module>> replicate(Module& module, const std::vector<Device>& devices,
                                               const ReplicateOptions& options,
                                               std::shared_ptr<PhaseStats> stats);

// With alias_cpu, the replicas on CPU devices other than devices[0] read the original's
// parameters in place, so an in-place write through the original (replica 0, or user code
// elsewhere) would reach them mid-forward. For this guard's lifetime such a write is
// refused (kState). Does nothing when no replica aliases the parameters.
class AliasedParametersGuard {
 public:
  AliasedParametersGuard(const Module& original, const std::vector<Device>& devices,
                         bool alias_cpu);
  ~AliasedParametersGuard();
  AliasedParametersGuard(const AliasedParametersGuard&) = delete;
  AliasedParametersGuard& operator=(const AliasedParametersGuard&) = delete;

 private:
  std::vector<std::shared_ptr<Storage>> guarded_;
};

// The module's parameters and buffers in one fixed order (tied ones once), with the
// versions they have now: replica caching compares these.
struct StateVersions {
  std::vector<const TensorImpl*> tensors;
  std::vector<uint64_t> versions;
  bool operator==(const StateVersions& o) const {
    return tensors == o.tensors && versions == o.versions;
  }
};
StateVersions state_versions(const Module& module);

}  // namespace dp::parallel
