#include "parallel/scatter_gather.h"

#include "context/context.h"
#include "error.h"
#include "ops/ops.h"
#include "parallel/comm.h"
#include "parallel/functions.h"
#include "parallel/validate.h"

namespace dp::parallel {

namespace {

// Input `index` as errors name it (built only for a message).
std::string input_label(const ScatterOptions& options, size_t index) {
  return options.input_name.empty() ? "inputs[" + std::to_string(index) + "]" : options.input_name;
}

// The sizes x (split along dim) is cut into, one per device.
std::vector<int64_t> sizes_for(const Tensor& x, int dim, const std::vector<Device>& devices,
                               const ScatterOptions& options, int64_t explicit_total,
                               size_t index) {
  const int64_t batch = x.shape()[dim];
  if (options.chunk_sizes.empty()) {
    return comm::chunk_sizes(batch, static_cast<int64_t>(devices.size()));
  }
  DP_CHECK(explicit_total == batch, kInvalidArgument,
           "chunk_sizes sum to " << explicit_total << " but " << input_label(options, index)
                                 << " has size " << batch << " along dim " << dim);
  return options.chunk_sizes;
}

}  // namespace

ScatteredInputs scatter_inputs(const std::vector<Tensor>& inputs,
                               const std::vector<bool>& broadcast,
                               const std::vector<Device>& devices, const ScatterOptions& options,
                               std::shared_ptr<PhaseStats> stats) {
  PhaseTimer timer(stats.get(), Phase::kScatter);
  DP_CHECK(broadcast.empty() || broadcast.size() == inputs.size(), kInvalidArgument,
           "broadcast flags: " << broadcast.size() << " for " << inputs.size() << " inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    DP_CHECK(inputs[i].defined(), kInvalidArgument, "inputs[" << i << "] is missing");
  }
  check_device_list(inputs.empty() ? nullptr : inputs[0].context().get(), devices, "devices");
  const int64_t explicit_total = check_chunk_sizes(options.chunk_sizes, devices.size());
  ScatteredInputs out;
  if (inputs.empty()) {
    out.devices = {devices[0]};
    out.inputs = {{}};
    return out;
  }

  // Which devices get a chunk: with explicit sizes, those whose size is not 0; with
  // torch.chunk's sizes, the first k, k being the smallest chunk count over the split
  // inputs (PyTorch zips the chunks, so a longer input's extra chunks are dropped).
  auto is_broadcast = [&](size_t i) { return !broadcast.empty() && broadcast[i]; };
  std::vector<std::vector<int64_t>> sizes(inputs.size());
  std::vector<int> dims(inputs.size());
  size_t replicas = devices.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (is_broadcast(i)) continue;
    check_splittable(inputs[i], input_label(options, i));
    // dp_scatter's dim is its own argument; the pipeline's names the input it splits.
    const std::string what = options.input_name.empty()
                                 ? "dim (scattering inputs[" + std::to_string(i) + "])"
                                 : std::string("dim");
    dims[i] = wrap_dim(options.dim, inputs[i].ndim(), what.c_str());
    sizes[i] = sizes_for(inputs[i], dims[i], devices, options, explicit_total, i);
    replicas = std::min(replicas, sizes[i].size());
  }
  std::vector<size_t> used;  // indices into devices
  if (!options.chunk_sizes.empty()) {
    for (size_t d = 0; d < devices.size(); ++d) {
      if (options.chunk_sizes[d] > 0) used.push_back(d);
    }
    if (used.empty()) used.push_back(0);  // every size 0: one empty chunk on device 0
  } else {
    for (size_t d = 0; d < replicas; ++d) used.push_back(d);
  }
  for (size_t d : used) out.devices.push_back(devices[d]);
  out.inputs.assign(used.size(), std::vector<Tensor>(inputs.size()));

  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (is_broadcast(i)) {
      auto copies = parallel::broadcast(std::vector<Tensor>{x}, out.devices,
                                        comm::kDefaultBucketBytes, options.alias_cpu, nullptr);
      for (size_t r = 0; r < used.size(); ++r) out.inputs[r][i] = copies[r][0];
      continue;
    }
    std::vector<int64_t> s;
    for (size_t d : used) s.push_back(sizes[i][d]);
    std::vector<Tensor> pieces = parallel::scatter(x, out.devices, s, dims[i], options.alias_cpu);
    for (size_t r = 0; r < used.size(); ++r) out.inputs[r][i] = pieces[r];
  }
  return out;
}

std::vector<Tensor> scatter_one(const Tensor& input, const std::vector<Device>& devices,
                                const ScatterOptions& options) {
  ScatteredInputs scattered = scatter_inputs({input}, {}, devices, options, nullptr);
  std::vector<Tensor> pieces;
  for (auto& list : scattered.inputs) pieces.push_back(std::move(list[0]));
  return pieces;
}

std::vector<Tensor> gather_outputs(const std::vector<std::vector<Tensor>>& outputs, Device device,
                                   int dim, bool alias_cpu, std::shared_ptr<PhaseStats> stats,
                                   const std::function<void(const std::string&)>& warn) {
  PhaseTimer timer(stats.get(), Phase::kGather);
  DP_CHECK(!outputs.empty(), kInvalidArgument, "gather: no outputs");
  const size_t n = outputs[0].size();
  for (size_t r = 1; r < outputs.size(); ++r) {
    DP_CHECK(outputs[r].size() == n, kShapeMismatch,
             "replica " << r << " returned " << outputs[r].size()
                        << " outputs but replica 0 returned " << n);
  }
  if (n > 0 && outputs[0][0].defined()) {
    outputs[0][0].context()->check_device(device, "output_device");
  }
  std::vector<Tensor> result;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Tensor> column;
    for (size_t r = 0; r < outputs.size(); ++r) {
      DP_CHECK(outputs[r][i].defined(), kInvalidArgument,
               "replica " << r << " output " << i << " is missing");
      column.push_back(outputs[r][i]);
    }
    bool all_scalars = true;
    for (const Tensor& t : column) all_scalars = all_scalars && t.ndim() == 0;
    if (all_scalars) {
      DP_CHECK(dim == 0, kShapeMismatch,
               "gather: output " << i << " is 0-dim on every replica and dim = " << dim
                                 << " (only dim 0 gathers scalars)");
      if (warn) {
        warn("gather: every replica returned a scalar for output " + std::to_string(i) +
             "; they are gathered into a vector of " + std::to_string(column.size()) +
             " values (one per replica): reduce it (e.g. mean) before backward");
      }
      for (Tensor& t : column) t = ops::reshape(t, {1});
    }
    const Tensor& first = column[0];
    const int d = wrap_dim(dim, std::max(first.ndim(), 1), "dim");
    for (size_t r = 1; r < column.size(); ++r) {
      const Tensor& t = column[r];
      DP_CHECK(t.dtype() == first.dtype(), kDtypeMismatch,
               "gather: replica " << r << " output " << i << " is " << dtype_name(t.dtype())
                                  << " but replica 0's is " << dtype_name(first.dtype()));
      bool fits = t.ndim() == first.ndim() && t.ndim() > 0;
      for (int k = 0; fits && k < t.ndim(); ++k) fits = k == d || t.shape()[k] == first.shape()[k];
      DP_CHECK(fits, kShapeMismatch,
               "gather: replica " << r << " output " << i << " has shape " << shape_str(t.shape())
                                  << " but replica 0's has shape " << shape_str(first.shape())
                                  << " (they may differ only along dim " << d << ")");
    }
    result.push_back(parallel::gather(column, device, d, alias_cpu, stats));
  }
  return result;
}

Tensor gather_one(const std::vector<Tensor>& tensors, Device device, int dim) {
  DP_CHECK(!tensors.empty(), kInvalidArgument, "tensors is empty (n = 0)");
  std::vector<std::vector<Tensor>> per_replica;
  for (const Tensor& t : tensors) per_replica.push_back({t});
  const auto& ctx = tensors[0].context();
  return gather_outputs(per_replica, device, dim, true, nullptr,
                        [&](const std::string& m) { ctx->log(kLogWarning, m); })[0];
}

}  // namespace dp::parallel
