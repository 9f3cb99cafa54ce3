#include "distributed/ddp.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>

#include "autograd/grad_mode.h"
#include "error.h"
#include "tensor/shape.h"

namespace dp {

namespace {

// One line per parameter and buffer, then the options that shape the collectives: what
// must agree between the ranks (options that differ would pair collectives of other sizes
// or types, which MPI does not detect). A parameter's line says whether it is trained:
// the buckets hold the parameters that require gradients, so a parameter frozen on one
// rank only would give the ranks buckets of other sizes.
std::vector<std::string> model_entries(const Module& module, const DdpOptions& options) {
  std::vector<std::string> entries;
  for (const auto& [name, p] : module.named_parameters()) {
    entries.push_back("parameter '" + name + "' (" + dtype_name(p.dtype()) + ", " +
                      shape_str(p.shape()) + (p.requires_grad() ? "" : ", frozen") + ")");
  }
  for (const auto& [name, b] : module.named_buffers()) {
    entries.push_back("buffer '" + name + "' (" + dtype_name(b.dtype()) + ", " +
                      shape_str(b.shape()) + ")");
  }
  entries.push_back("option 'allreduce_dtype' (" +
                    std::string(dtype_name(options.buckets.allreduce_dtype)) + ")");
  entries.push_back("option 'bucket_bytes' (" + std::to_string(options.buckets.bucket_bytes) + ")");
  entries.push_back("option 'first_bucket_bytes' (" +
                    std::to_string(options.buckets.first_bucket_bytes) + ")");
  entries.push_back(std::string("option 'broadcast_buffers' (") +
                    (options.broadcast_buffers ? "on" : "off") + ")");
  // CUDA parameters take their device's route (NCCL or host staging) and CPU ones MPI: the
  // ranks' collectives match only when each parameter lives on the same kind of device on
  // every rank. One kind: "(cuda)"; mixed, in runs: "(cuda for parameters 0-2, cpu for 3)".
  const Module::Named params = module.named_parameters();
  std::vector<std::pair<const char*, size_t>> runs;  // kind, first parameter of the run
  for (size_t i = 0; i < params.size(); ++i) {
    const char* k = params[i].second.device().is_cpu() ? "cpu" : "cuda";
    if (runs.empty() || std::string(runs.back().first) != k) runs.emplace_back(k, i);
  }
  std::ostringstream kinds;
  if (runs.size() <= 1) kinds << (runs.empty() ? "cpu" : runs.front().first);
  for (size_t r = 0; runs.size() > 1 && r < runs.size(); ++r) {
    const size_t first = runs[r].second;
    const size_t last = (r + 1 < runs.size() ? runs[r + 1].second : params.size()) - 1;
    if (r > 0) kinds << ", ";
    kinds << runs[r].first << (r == 0 ? " for parameters " : " for ") << first;
    if (last > first) kinds << "-" << last;
  }
  entries.push_back("option 'device type' (" + kinds.str() + ")");
  return entries;
}

std::string joined(const std::vector<std::string>& entries) {
  std::string s;
  for (const std::string& e : entries) s += e + "\n";
  return s;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// The first difference between rank 0's entries and rank r's, in words.
std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b,
                             int r) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      return "rank 0 has " + a[i] + " where rank " + std::to_string(r) + " has " + b[i];
    }
  }
  if (a.size() > n) return "rank 0 has " + a[n] + " that rank " + std::to_string(r) + " lacks";
  return "rank " + std::to_string(r) + " has " + b[n] + " that rank 0 lacks";
}

}  // namespace

std::vector<Device> default_rank_devices(const Context& ctx, int local_rank, int local_size) {
  const int gpus = ctx.device_count(DeviceType::kCuda);
  if (gpus > 0) return {Device{DeviceType::kCuda, local_rank % gpus}};
  const int cpus = ctx.device_count(DeviceType::kCpu);
  const int share = std::max(1, cpus / std::max(1, local_size));
  std::vector<Device> devices;
  for (int i = 0; i < share; ++i) devices.push_back(Device{DeviceType::kCpu, i});
  return devices;
}

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<Module> module,
                                                 std::shared_ptr<ProcessGroup> group,
                                                 std::vector<Device> device_ids,
                                                 std::optional<Device> output_device, int dim,
                                                 const DdpOptions& options)
    : group_(std::move(group)), options_(options) {
  DP_CHECK(module != nullptr, kInvalidArgument, "DistributedDataParallel needs a module");
  DP_CHECK(group_ != nullptr, kInvalidArgument, "DistributedDataParallel needs a process group");
  if (device_ids.empty()) {
    device_ids =
        default_rank_devices(*group_->context(), group_->local_rank(), group_->local_size());
  }
  local_ = std::make_unique<DataParallel>(std::move(module), std::move(device_ids), output_device,
                                          dim, options.local);
  check_models_agree();
  broadcast_state(true, 0, "at creation");
  std::vector<Tensor> params;
  for (const Tensor& p : local_->module()->parameters()) {
    if (p.requires_grad()) params.push_back(p);
  }
  reducer_ = std::make_unique<Reducer>(group_, std::move(params), options.buckets, sync_stats_);
}

void DistributedDataParallel::check_models_agree() {
  const std::vector<std::string> mine = model_entries(*local_->module(), options_);
  const std::string text = joined(mine);
  const int n = group_->size();
  std::vector<uint64_t> hashes(static_cast<size_t>(n));
  const uint64_t hash = fnv1a(text);
  group_->run("model check", -1, "the model check at creation",
              [&](Transport& tr) { tr.allgather(&hash, hashes.data(), sizeof hash); });
  if (std::all_of(hashes.begin(), hashes.end(), [&](uint64_t h) { return h == hashes[0]; })) {
    return;
  }
  // They differ: every rank gathers every description, so that all name the same thing.
  std::vector<int64_t> lengths(static_cast<size_t>(n));
  const int64_t length = static_cast<int64_t>(text.size());
  group_->run("model check", -1, "the model check at creation",
              [&](Transport& tr) { tr.allgather(&length, lengths.data(), sizeof length); });
  const size_t width = static_cast<size_t>(*std::max_element(lengths.begin(), lengths.end()));
  std::string padded = text;
  padded.resize(width, '\0');
  std::string all(width * static_cast<size_t>(n), '\0');
  group_->run("model check", -1, "the model check at creation",
              [&](Transport& tr) { tr.allgather(padded.data(), all.data(), width); });
  const std::vector<std::string> first =
      split_lines(all.substr(0, static_cast<size_t>(lengths[0])));
  for (int r = 1; r < n; ++r) {
    const std::vector<std::string> other =
        split_lines(all.substr(width * static_cast<size_t>(r), static_cast<size_t>(lengths[r])));
    if (other != first) {
      const std::string difference = first_difference(first, other, r);
      const bool option = difference.find("has option '") != std::string::npos;
      DP_THROW(kInvalidArgument, "DistributedDataParallel: the ranks' "
                                     << (option ? "DDP options" : "models")
                                     << " differ: " << difference);
    }
  }
  DP_THROW(kInternal, "DistributedDataParallel: the model descriptions hash apart but are equal");
}

void DistributedDataParallel::broadcast_state(bool parameters, int root, const std::string& when) {
  const Module& m = *local_->module();
  const std::string from = "' from rank " + std::to_string(root) + " " + when;
  if (parameters) {
    for (const auto& [name, p] : m.named_parameters()) {
      group_->broadcast(p, root, "the broadcast of parameter '" + name + from);
    }
  }
  for (const auto& [name, b] : m.named_buffers()) {
    group_->broadcast(b, root, "the broadcast of buffer '" + name + from);
  }
}

void DistributedDataParallel::rebuild_buckets_once(int64_t step) {
  if (reducer_->rebuilt()) return;
  // Collective, before every synchronised forward until it happens (the ranks agree on
  // rebuilt(): they all receive rank 0's answer): [rank 0 has recorded an order, order].
  const std::vector<size_t> mine = reducer_->ready_order();
  const int64_t n = static_cast<int64_t>(reducer_->param_count());
  Tensor t = Tensor::empty(group_->context(), {n + 1}, DType::kInt64, Device{DeviceType::kCpu, 0});
  int64_t* v = t.data_as<int64_t>();
  std::fill(v, v + n + 1, int64_t{0});
  if (group_->rank() == 0 && !mine.empty()) {
    v[0] = 1;
    for (size_t i = 0; i < mine.size() && i < static_cast<size_t>(n); ++i) {
      v[i + 1] = static_cast<int64_t>(mine[i]);
    }
  }
  group_->broadcast(t, 0, "the broadcast of rank 0's bucket order in step " + std::to_string(step));
  if (v[0] == 0) return;
  std::vector<size_t> order;
  for (int64_t i = 0; i < n; ++i) order.push_back(static_cast<size_t>(v[i + 1]));
  reducer_->rebuild_buckets(order);
}

DistributedDataParallel::StepRanks DistributedDataParallel::ranks_in_step(bool active, bool sync,
                                                                          int64_t step) {
  const int n = group_->size();
  const int64_t mine[2] = {active ? 1 : 0, sync ? 1 : 0};
  std::vector<int64_t> all(2 * static_cast<size_t>(n));
  group_->run("allgather", -1, "the count of ranks still training in step " + std::to_string(step),
              [&](Transport& tr) { tr.allgather(mine, all.data(), sizeof mine); });
  StepRanks s;
  s.buffer_root = -1;
  for (int r = 0; r < n; ++r) {
    const bool trains = all[2 * static_cast<size_t>(r)] != 0;
    s.active += trains;
    s.syncing += all[2 * static_cast<size_t>(r) + 1] != 0;
    if (trains && s.buffer_root < 0) s.buffer_root = r;
  }
  if (s.buffer_root < 0) s.buffer_root = 0;  // none trains: no step, no broadcast
  return s;
}

std::vector<Tensor> DistributedDataParallel::forward(const std::vector<Tensor>& inputs,
                                                     const std::vector<bool>& broadcast) {
  reducer_->check_between_steps();  // before this step's first collective
  ++steps_;
  ++trained_steps_;
  const bool sync = GradMode::enabled() && grad_sync_;
  sync_stats_->begin_call();
  const int buffer_root = uneven_inputs_ ? ranks_in_step(true, sync, steps_).buffer_root : 0;
  if (options_.broadcast_buffers && group_->size() > 1) {
    const auto start = std::chrono::steady_clock::now();
    broadcast_state(false, buffer_root, "in step " + std::to_string(steps_));
    sync_stats_->add(&SyncTimes::buffer_broadcast, seconds_since(start));
  }
  if (sync) rebuild_buckets_once(steps_);
  reducer_->prepare(sync, steps_);
  return local_->forward(inputs, broadcast);
}

void DistributedDataParallel::join() {
  DP_CHECK(uneven_inputs_, kState,
           "join() needs uneven inputs turned on (on every rank) before the first forward");
  for (;;) {
    // The step the ranks still training are in: this rank's next, as its steps_ has kept
    // count with theirs (a joined rank takes part in every step).
    const StepRanks ranks = ranks_in_step(false, false, steps_ + 1);
    if (ranks.active == 0) break;
    ++steps_;
    if (options_.broadcast_buffers && group_->size() > 1) {
      broadcast_state(false, ranks.buffer_root, "in step " + std::to_string(steps_));
    }
    if (ranks.syncing > 0) {
      rebuild_buckets_once(steps_);  // as the ranks still training do before their forward
      reducer_->shadow_step(steps_);
    }
  }
  // Every rank has joined. The ranks that ran out early skipped the optimizer steps of
  // the later ones: all take the state of the rank that trained longest (the highest
  // such rank), as PyTorch's join does.
  const int n = group_->size();
  std::vector<int64_t> trained(static_cast<size_t>(n));
  const int64_t mine = trained_steps_;
  const std::string after = "after step " + std::to_string(steps_);
  group_->run("join", -1, "the final model sync of join(), " + after,
              [&](Transport& tr) { tr.allgather(&mine, trained.data(), sizeof mine); });
  int source = 0;
  for (int r = 1; r < n; ++r) {
    if (trained[static_cast<size_t>(r)] >= trained[static_cast<size_t>(source)]) source = r;
  }
  broadcast_state(true, source, "in the final model sync of join(), " + after);
}

}  // namespace dp
