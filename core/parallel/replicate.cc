#include "parallel/replicate.h"

#include <unordered_map>
#include <unordered_set>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "error.h"
#include "parallel/comm.h"
#include "parallel/functions.h"
#include "parallel/validate.h"

namespace dp::parallel {

namespace {

// Every distinct parameter, then every distinct buffer, in tree order.
void collect(Module& root, std::vector<Tensor>* params, std::vector<Tensor>* buffers) {
  std::unordered_set<const TensorImpl*> seen;
  visit_modules(root, [&](const std::string&, Module& m) {
    for (auto& [n, t] : m.own_parameters()) {
      if (seen.insert(t.impl()).second) params->push_back(t);
    }
  });
  visit_modules(root, [&](const std::string&, Module& m) {
    for (auto& [n, t] : m.own_buffers()) {
      if (seen.insert(t.impl()).second) buffers->push_back(t);
    }
  });
}

// A copy of the tree whose tensors are swapped through `replace`.
std::shared_ptr<Module> copy_tree(const Module& m,
                                  const std::unordered_map<const TensorImpl*, Tensor>& replace) {
  std::shared_ptr<Module> copy = m.shallow_copy();
  for (auto& [n, t] : copy->own_parameters()) t = replace.at(t.impl());
  for (auto& [n, t] : copy->own_buffers()) t = replace.at(t.impl());
  for (auto& [n, child] : copy->children()) child = copy_tree(*child, replace);
  return copy;
}

}  // namespace

std::vector<std::shared_ptr<Module>> replicate(Module& module, const std::vector<Device>& devices,
                                               const ReplicateOptions& options,
                                               std::shared_ptr<PhaseStats> stats) {
  PhaseTimer timer(stats.get(), Phase::kReplicate);
  check_device_list(module.context().get(), devices, "devices");
  for (const auto& [what, list] : {std::pair{"parameter", module.named_parameters()},
                                   std::pair{"buffer", module.named_buffers()}}) {
    for (const auto& [name, t] : list) {
      DP_CHECK(t.device() == devices[0], kDeviceMismatch,
               "replicate: " << what << " \"" << name << "\" is on " << t.device().str()
                             << " but the module must be on the first device, "
                             << devices[0].str());
    }
  }
  std::vector<Tensor> params, buffers;
  collect(module, &params, &buffers);
  std::vector<std::shared_ptr<Module>> replicas{module.shared_from_this()};
  if (devices.size() == 1) return replicas;

  const auto param_copies =
      broadcast(params, devices, options.bucket_bytes, options.alias_cpu, stats,
                options.grad_reduce_dtype);
  // Buffers are state: copies, never aliases (replica 0 updates its own in place), and
  // detached, except those that require grad, whose replicas' gradients are summed back
  // into the original as a parameter's are (docs/spec.md 5, PyTorch's replicate).
  std::vector<Tensor> state, differentiable;
  for (const Tensor& b : buffers) (b.requires_grad() ? differentiable : state).push_back(b);
  const auto differentiable_copies =
      broadcast(differentiable, devices, options.bucket_bytes, /*alias_cpu=*/false, nullptr);
  std::vector<std::vector<Tensor>> state_copies;
  {
    GradModeGuard no_grad(false);
    state_copies = broadcast(state, devices, options.bucket_bytes, /*alias_cpu=*/false, nullptr);
  }
  // Each copy counts its own writes (the bucket's views would share one counter).
  for (size_t d = 1; d < devices.size(); ++d) {
    if (devices[d] == devices[0]) continue;  // the originals themselves
    for (Tensor& t : state_copies[d]) t = comm::with_own_version(t);
  }
  for (size_t d = 1; d < devices.size(); ++d) {
    std::unordered_map<const TensorImpl*, Tensor> replace;
    auto swap_in = [&](const std::vector<Tensor>& originals,
                       const std::vector<std::vector<Tensor>>& copies) {
      for (size_t j = 0; j < originals.size(); ++j)
        replace.emplace(originals[j].impl(), copies[d][j]);
    };
    swap_in(params, param_copies);
    swap_in(state, state_copies);
    swap_in(differentiable, differentiable_copies);
    replicas.push_back(copy_tree(module, replace));
  }
  return replicas;
}

std::shared_ptr<Module> lone_replica(Module& module, std::shared_ptr<PhaseStats> stats) {
  std::vector<Tensor> params, buffers;
  collect(module, &params, &buffers);
  std::vector<Tensor> differentiable;
  for (const Tensor& b : buffers) {
    if (b.requires_grad()) differentiable.push_back(b);
  }
  if (!needs_grad(params) && !needs_grad(differentiable)) return module.shared_from_this();
  std::unordered_map<const TensorImpl*, Tensor> replace;
  for (const Tensor& b : buffers) replace.emplace(b.impl(), b);  // state: the module's own
  auto swap_in = [&](const std::vector<Tensor>& originals, const std::vector<Tensor>& copies) {
    for (size_t j = 0; j < originals.size(); ++j) replace[originals[j].impl()] = copies[j];
  };
  swap_in(params, broadcast_to_own_device(params, std::move(stats)));
  swap_in(differentiable, broadcast_to_own_device(differentiable, nullptr));
  return copy_tree(module, replace);
}

std::vector<std::shared_ptr<Storage>> aliased_parameter_memory(
    const std::vector<std::shared_ptr<Module>>& replicas) {
  std::vector<std::shared_ptr<Storage>> out;
  for (const auto& r : replicas) {
    if (!r) continue;
    visit_modules(*r, [&](const std::string&, Module& m) {
      for (auto& [n, t] : m.own_parameters()) {
        if (t.defined() && t.impl()->storage->owner()) out.push_back(t.impl()->storage->owner());
      }
    });
  }
  return out;
}

std::vector<std::shared_ptr<Storage>> aliased_broadcast_memory(const std::vector<Tensor>& inputs,
                                                               const std::vector<bool>& broadcast,
                                                               const std::vector<Device>& devices,
                                                               bool alias_cpu) {
  std::vector<std::shared_ptr<Storage>> out;
  for (size_t i = 0; i < inputs.size() && i < broadcast.size(); ++i) {
    const Tensor& t = inputs[i];
    if (broadcast[i] && t.defined() &&
        comm::aliased_by_another_device(t.device(), devices, alias_cpu)) {
      out.push_back(t.impl()->storage);
    }
  }
  return out;
}

StateVersions state_versions(const Module& module) {
  std::vector<Tensor> params, buffers;
  collect(const_cast<Module&>(module), &params, &buffers);
  StateVersions v;
  for (const auto* list : {&params, &buffers}) {
    for (const Tensor& t : *list) {
      v.tensors.push_back(t.impl());
      v.versions.push_back(t.version());
    }
  }
  visit_modules(const_cast<Module&>(module),
                [&](const std::string&, Module& m) { v.training.push_back(m.is_training()); });
  return v;
}

}  // namespace dp::parallel
