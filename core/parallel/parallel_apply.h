// parallel_apply (torch/nn/parallel/parallel_apply.py): each replica's forward on its
// device's persistent worker, all at once. The caller's grad mode holds in every worker.
// If replicas fail, every worker is still waited for, and the error of the lowest-index
// failing replica is raised as "in replica I on device D: <its message>".
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"
#include "parallel/stats.h"

namespace dp::parallel {

// devices: checked by check_device_list (named "devices"). Replicas are numbered in
// errors and traces from `first_index` (DataParallel passes 1 when its chunk sizes leave
// replica 0 out).
std::vector<std::vector<Tensor>> parallel_apply(
    const std::vector<std::shared_ptr<Module>>& replicas,
    const std::vector<std::vector<Tensor>>& inputs, const std::vector<Device>& devices,
    std::shared_ptr<PhaseStats> stats, size_t first_index = 0);

// parallel_apply of replicas that return one output each (dp_parallel_apply's contract):
// result[i] is replica i's output; kInvalidArgument names a replica that returned another
// count.
std::vector<Tensor> parallel_apply_one_output(const std::vector<std::shared_ptr<Module>>& replicas,
                                              const std::vector<std::vector<Tensor>>& inputs,
                                              const std::vector<Device>& devices);

// Throws kState when this thread runs a replica of a parallel_apply over several devices
// and `what` would run over several devices too: a DataParallel inside a module that is
// itself under DataParallel. Each replica's worker would wait for the others' workers,
// busy with replicas that wait in turn. (From a custom module's forward that is not a
// replica, a DataParallel runs: its device's worker runs replica 0 itself.)
void check_not_inside_a_replica(const char* what, size_t devices);

}  // namespace dp::parallel
