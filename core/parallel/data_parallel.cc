#include "parallel/data_parallel.h"

#include <algorithm>
#include <sstream>

#include "autograd/grad_mode.h"
#include "context/context.h"
#include "device/trace.h"
#include "error.h"
#include "ops/ops.h"
#include "parallel/alias_read_guard.h"
#include "parallel/comm.h"
#include "parallel/parallel_apply.h"
#include "parallel/scatter_gather.h"
#include "parallel/validate.h"

namespace dp {

namespace {

// docs/spec.md 3.1: every parameter and buffer on device_ids[0], or an error naming both devices.
void check_module_on(const Module& module, Device want) {
  for (const auto& [name, t] : module.state()) {
    DP_CHECK(t.device() == want, kDeviceMismatch,
             "module must have its parameters and buffers on device "
                 << want.str() << " (device_ids[0]) but found \"" << name << "\" on "
                 << t.device().str());
  }
}

}  // namespace

DataParallel::DataParallel(std::shared_ptr<Module> module, std::vector<Device> device_ids,
                           std::optional<Device> output_device, int dim,
                           DataParallelOptions options)
    : DataParallel(Checked{}, std::move(module), std::move(device_ids), output_device, dim,
                   std::move(options)) {
  if (device_ids_[0].type == DeviceType::kCuda) check_balance();
  if (device_ids_.size() == 1) module_->to(device_ids_[0]);
}

DataParallel::DataParallel(Checked, std::shared_ptr<Module> module, std::vector<Device> device_ids,
                           std::optional<Device> output_device, int dim,
                           DataParallelOptions options)
    : module_(std::move(module)),
      device_ids_(std::move(device_ids)),
      dim_(dim),
      options_(std::move(options)) {
  // The pipeline's one validation of its arguments (parallel/validate.h); the stages it
  // calls check them again only as the entries they also are.
  DP_CHECK(module_ != nullptr, kInvalidArgument, "module is missing");
  const auto& ctx = module_->context();
  if (device_ids_.empty()) device_ids_ = ctx->default_devices();
  parallel::check_device_list(ctx.get(), device_ids_, "device_ids",
                              {.distinct = true, .one_type = true});
  output_device_ = output_device.value_or(device_ids_[0]);
  ctx->check_device(output_device_, "output_device");
  parallel::check_chunk_sizes(options_.chunk_sizes, device_ids_.size());
  DP_CHECK(options_.bucket_bytes > 0, kInvalidArgument, "bucket_bytes must be positive");
}

std::string imbalance_warning(const std::vector<Device>& devices,
                              const std::vector<uint64_t>& memory,
                              const std::vector<int>& multiprocessors) {
  auto check = [&](const auto& values, const char* what) -> std::string {
    if (values.empty()) return "";
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    if (*hi <= 0 || static_cast<double>(*lo) / static_cast<double>(*hi) >= 0.75) return "";
    std::ostringstream os;
    os << "there is an imbalance between your GPUs: " << devices[lo - values.begin()].str()
       << " has less than 75% of the " << what << " of " << devices[hi - values.begin()].str()
       << "; you may want to leave the weaker one out of device_ids";
    return os.str();
  };
  // Memory first; multiprocessors only when memory is balanced (as PyTorch).
  std::string w = check(memory, "memory");
  return w.empty() ? check(multiprocessors, "multiprocessors") : w;
}

void DataParallel::check_balance() const {
  const auto& ctx = module_->context();
  Backend& b = ctx->backend(DeviceType::kCuda);
  std::vector<uint64_t> memory;
  std::vector<int> sms;
  for (const Device& d : device_ids_) {
    uint64_t m = 0;
    int s = 0;
    b.properties(d.index, &m, &s);
    memory.push_back(m);
    sms.push_back(s);
  }
  const std::string w = imbalance_warning(device_ids_, memory, sms);
  if (!w.empty()) ctx->log(kLogWarning, w);
}

void DataParallel::drop_cache() {
  cached_replicas_.clear();
  cached_devices_.clear();
  cached_versions_ = {};
}

std::vector<std::vector<Tensor>> DataParallel::run(const std::vector<Tensor>& inputs,
                                                   const std::vector<bool>& broadcast) {
  stats_->begin_call();
  check_module_on(*module_, device_ids_[0]);
  parallel::check_not_inside_a_replica("DataParallel", device_ids_.size());
  parallel::ScatterOptions so;
  so.dim = dim_;
  so.chunk_sizes = options_.chunk_sizes;
  so.alias_cpu = options_.alias_cpu;
  parallel::ScatteredInputs scattered =
      parallel::scatter_inputs(inputs, broadcast, device_ids_, so, stats_);
  last_devices_ = scattered.devices;
  if (inputs.empty()) {
    // No inputs: the module runs once, on device_ids[0] (docs/spec.md 3.3); with several devices
    // its outputs are then gathered as one replica's, as PyTorch does.
    last_devices_ = {device_ids_[0]};
    PhaseTimer timer(stats_.get(), Phase::kApply);
    if (device_ids_.size() == 1) return {(*module_)({})};
    return {(*parallel::lone_replica(*module_, stats_))({})};
  }
  if (runs_directly()) {
    // One device: the module itself on its chunk, no gather (docs/spec.md 3.4).
    PhaseTimer timer(stats_.get(), Phase::kApply);
    return {module_->run_forward_on(device_ids_[0],
                                    [&] { return module_->forward(scattered.inputs[0]); })};
  }
  // Several devices: the chunks' replicas, gathered to output_device however few chunks
  // the batch made (one chunk runs the original alone, as replica 0).
  // With explicit chunk sizes device_ids[0] may get no rows: the module (which lives
  // there) is still replica 0 of the broadcast, but only the others run.
  const bool skip_first = scattered.devices[0] != device_ids_[0];
  std::vector<Device> replica_devices = scattered.devices;
  if (skip_first) replica_devices.insert(replica_devices.begin(), device_ids_[0]);
  std::vector<std::shared_ptr<Module>> replicas;
  const bool cacheable = options_.cache_replicas && !GradMode::enabled();
  if (replica_devices.size() == 1) {
    // The original alone (one chunk on device_ids[0]), its parameters behind a recorded
    // broadcast to their own device; the cached replicas of full batches stay for the next
    // batch.
    replicas = {parallel::lone_replica(*module_, stats_)};
  } else if (cacheable && cached_devices_ == replica_devices &&
             cached_versions_ == parallel::state_versions(*module_)) {
    replicas = cached_replicas_;
  } else {
    parallel::ReplicateOptions ro;
    ro.bucket_bytes = options_.bucket_bytes;
    ro.alias_cpu = options_.alias_cpu;
    ro.grad_reduce_dtype = options_.grad_reduce_dtype;
    replicas = parallel::replicate(*module_, replica_devices, ro, stats_);
    if (cacheable) {
      cached_replicas_ = replicas;
      cached_devices_ = replica_devices;
      cached_versions_ = parallel::state_versions(*module_);
    } else {
      drop_cache();
    }
  }
  std::vector<std::shared_ptr<Module>> running = replicas;
  if (skip_first) running.erase(running.begin());
  // The running replicas' buffer versions before they run: buffer sync averages only the
  // buffers some replica wrote, and a cached replica set whose buffers a forward wrote is
  // dropped (the next forward would see their writes, which docs/spec.md 5 says are lost).
  // (A lone replica writes the original's own buffers: nothing to average.)
  const bool sync = options_.buffer_sync == BufferSync::kAverage && module_->is_training() &&
                    (running.size() > 1 || skip_first);
  std::vector<std::vector<uint64_t>> before;
  if (sync || cacheable) before = buffer_versions(running);
  std::vector<std::vector<Tensor>> outputs;
  {
    // parallel_apply guards the parameters the replicas alias; the broadcast inputs that
    // they alias, replica 0 (under grad mode the caller's own tensor) must not write
    // either.
    parallel::AliasReadGuard guard(parallel::aliased_broadcast_memory(
        inputs, broadcast, scattered.devices, options_.alias_cpu));
    outputs = parallel::parallel_apply(running, scattered.inputs, scattered.devices, stats_,
                                       skip_first ? 1 : 0);
  }
  if (sync) sync_buffers(running, before);
  if (cacheable && (!(cached_versions_ == parallel::state_versions(*module_)) ||
                    buffer_versions(running) != before)) {
    // The forward changed the original's state (replica 0's BatchNorm statistics in train
    // mode, buffer sync), whose copies the other replicas hold, or a replica's own buffers.
    drop_cache();
  }
  return outputs;
}

std::vector<std::vector<uint64_t>> DataParallel::buffer_versions(
    const std::vector<std::shared_ptr<Module>>& replicas) {
  std::vector<std::vector<uint64_t>> versions;
  for (const auto& r : replicas) {
    versions.emplace_back();
    for (const auto& [name, b] : r->named_buffers()) versions.back().push_back(b.version());
  }
  return versions;
}

void DataParallel::sync_buffers(const std::vector<std::shared_ptr<Module>>& replicas,
                                const std::vector<std::vector<uint64_t>>& before) {
  // The original's floating buffers become the mean over the replicas that ran (replica 0
  // is the original itself, absent when chunk_sizes gave device_ids[0] no rows); integer
  // buffers (num_batches_tracked) take the count of the first replica that ran: every
  // replica counted the same batches, the original none when it was skipped. A buffer no
  // replica wrote stays as it is: the float32 mean of k equal copies need not equal them.
  GradModeGuard no_grad(false);
  const auto mine = module_->named_buffers();
  std::vector<Module::Named> theirs;
  for (const auto& r : replicas) theirs.push_back(r->named_buffers());
  const double scale = 1.0 / static_cast<double>(replicas.size());
  for (size_t j = 0; j < mine.size(); ++j) {
    const Tensor& b = mine[j].second;
    bool written = false;
    for (size_t r = 0; r < replicas.size(); ++r)
      written = written || theirs[r][j].second.version() != before[r][j];
    // Each replica's copy of a buffer counts its own writes (comm::with_own_version), on
    // every kind of device: BatchNorm's statistics beside a constant buffer mark only
    // themselves.
    if (!written) continue;
    if (!is_floating(b.dtype())) {
      if (replicas[0] != module_) ops::copy_(b, theirs[0][j].second);
      continue;
    }
    std::vector<Tensor> all;
    for (const auto& list : theirs) all.push_back(list[j].second);
    Tensor sum = comm::reduce_add(all, b.device());
    ops::copy_(b, sum);
    ops::scale_(b, scale);
  }
}

std::vector<std::vector<Tensor>> DataParallel::forward_per_replica(
    const std::vector<Tensor>& inputs, const std::vector<bool>& broadcast) {
  trace::Span span("data parallel forward");
  return run(inputs, broadcast);
}

std::vector<Tensor> DataParallel::forward(const std::vector<Tensor>& inputs,
                                          const std::vector<bool>& broadcast) {
  trace::Span span("data parallel forward");
  auto outputs = run(inputs, broadcast);
  if (runs_directly()) return outputs[0];
  if (options_.no_gather) {
    std::vector<Tensor> flat;
    for (auto& list : outputs) flat.insert(flat.end(), list.begin(), list.end());
    return flat;
  }
  const auto& ctx = module_->context();
  return parallel::gather_outputs(outputs, output_device_, dim_, options_.alias_cpu, stats_,
                                  [&](const std::string& m) { ctx->log(kLogWarning, m); });
}

std::vector<Tensor> data_parallel(Module& module, const std::vector<Tensor>& inputs,
                                  std::vector<Device> device_ids,
                                  std::optional<Device> output_device, int dim,
                                  const std::vector<bool>& broadcast) {
  // The wrapper's pipeline, for one forward with default options: the wrapper's checks
  // without moving the module or the imbalance check.
  DataParallel once(DataParallel::Checked{}, module.shared_from_this(), std::move(device_ids),
                    output_device, dim, {});
  return once.forward(inputs, broadcast);
}

}  // namespace dp
