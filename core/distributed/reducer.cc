#include "distributed/reducer.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "autograd/accumulate_grad.h"
#include "autograd/engine.h"
#include "device/cpu/cpu_loops.h"
#include "error.h"
#include "ops/ops.h"
#include "tensor/copy.h"

namespace dp {

namespace {

// The compressed allreduce of a float32 bucket (its gradients already divided by the
// ranks): rounded to bfloat16, summed over the ranks in bfloat16 and widened back.
void allreduce_compressed(Transport& tr, const Tensor& flat, const Tensor& wire) {
  const int64_t count = flat.numel();
  uint16_t* w = wire.data_as<uint16_t>();
  cpu_loops::float_to_bf16(flat.data_as<float>(), w, count);
  tr.allreduce(w, static_cast<size_t>(count), DType::kBFloat16, ReduceOp::kSum);
  cpu_loops::bf16_to_float(w, flat.data_as<float>(), count);
}

// Zeros a bucket or a part of one: host memory directly, device memory by a kernel.
void zero(const Tensor& t) {
  if (t.device().is_cpu()) {
    std::memset(t.data(), 0, t.nbytes());
  } else {
    ops::fill_(t, 0.0);
  }
}

}  // namespace

Reducer::Reducer(std::shared_ptr<ProcessGroup> group, std::vector<Tensor> params,
                 const ReducerOptions& options, std::shared_ptr<SyncStats> stats)
    : group_(std::move(group)),
      stats_(std::move(stats)),
      options_(options),
      params_(std::move(params)) {
  DP_CHECK(options.bucket_bytes > 0 && options.first_bucket_bytes > 0, kInvalidArgument,
           "bucket sizes must be positive (bucket_bytes = "
               << options.bucket_bytes << ", first_bucket_bytes = " << options.first_bucket_bytes
               << ")");
  DP_CHECK(
      options.allreduce_dtype == DType::kFloat32 || options.allreduce_dtype == DType::kBFloat16,
      kInvalidArgument,
      "the gradients' allreduce dtype must be float32 or bfloat16, not "
          << dtype_name(options.allreduce_dtype));
  for (size_t k = 0; k < params_.size(); ++k) {
    const Tensor& p = params_[k];
    DP_CHECK(p.requires_grad() && p.is_leaf() && is_floating(p.dtype()), kInvalidArgument,
             "parameter " << k << " is not a floating leaf that requires grad");
  }
  // Where each parameter's bucket lives (the first call for a CUDA device decides its
  // route, collectively: every rank makes its reducer at the same point, with the same
  // parameters; DistributedDataParallel's broadcast at creation has decided it already).
  const Device host{DeviceType::kCpu, 0};
  for (const Tensor& p : params_) {
    home_.push_back(p.device().type == DeviceType::kCuda && group_->cuda_comm(p) ? p.device()
                                                                                 : host);
  }
  ready_.assign(params_.size(), false);
  std::vector<size_t> reverse(params_.size());
  for (size_t k = 0; k < params_.size(); ++k) reverse[k] = params_.size() - 1 - k;
  assign_buckets(reverse);
  log_buckets();
  for (size_t k = 0; k < params_.size(); ++k) {
    hook_ids_.push_back(add_post_accumulate_hook(params_[k], [this, k] { on_grad_ready(k); }));
  }
}

void Reducer::assign_buckets(const std::vector<size_t>& order) {
  // PyTorch's rule: one open bucket per dtype (and device, here); a bucket closes once it holds at
  // least its limit (first_bucket_bytes for the first of its dtype, else bucket_bytes; so one
  // parameter larger than the limit makes a bucket of its own) and takes the next index;
  // the buckets still open at the end follow, in the order their dtypes first came.
  struct Open {
    DType dtype;
    Device home;
    std::vector<size_t> params;
    size_t bytes = 0;
    bool first = true;
  };
  std::vector<Open> open;
  std::vector<std::vector<size_t>> lists;
  for (size_t k : order) {
    const Tensor& p = params_[k];
    auto it = std::find_if(open.begin(), open.end(), [&](const Open& o) {
      return o.dtype == p.dtype() && o.home == home_[k];
    });
    if (it == open.end()) it = open.insert(open.end(), Open{p.dtype(), home_[k], {}, 0, true});
    it->params.push_back(k);
    it->bytes += p.nbytes();
    if (it->bytes >= (it->first ? options_.first_bucket_bytes : options_.bucket_bytes)) {
      lists.push_back(std::move(it->params));
      *it = Open{p.dtype(), home_[k], {}, 0, false};
    }
  }
  for (Open& o : open) {
    if (!o.params.empty()) lists.push_back(std::move(o.params));
  }
  std::vector<Bucket> buckets(lists.size());
  bucket_of_.assign(params_.size(), 0);
  slot_of_.assign(params_.size(), 0);
  for (size_t i = 0; i < lists.size(); ++i) {
    Bucket& b = buckets[i];
    for (size_t k : lists[i]) {
      bucket_of_[k] = i;
      slot_of_[k] = b.params.size();
      b.offsets.push_back(b.params.empty() ? 0
                                           : b.offsets.back() + params_[b.params.back()].numel());
      b.params.push_back(k);
    }
  }
  const std::shared_ptr<Context>& ctx = group_->context();
  for (Bucket& b : buckets) {
    const Tensor& last = params_[b.params.back()];
    const Device home = home_[b.params.back()];
    const int64_t total = b.offsets.back() + last.numel();
    b.flat = Tensor::empty(ctx, {total}, last.dtype(), home);
    if (last.dtype() == DType::kFloat32 && options_.allreduce_dtype == DType::kBFloat16) {
      b.wire = Tensor::empty(ctx, {total}, DType::kBFloat16, home);
    }
    b.comm = home.is_cpu() ? nullptr : group_->cuda_comm(b.flat);  // decided: no collective
    b.pending = b.params.size();
  }
  buckets_ = std::move(buckets);
}

void Reducer::log_buckets() const {
  // "3 on cuda:0, allreduced by its communicator (NCCL)", "2 in host memory, allreduced by
  // MPI": one clause per place, in bucket order.
  std::vector<std::pair<Device, size_t>> places;
  for (const Bucket& b : buckets_) {
    const Device d = b.flat.device();
    auto it =
        std::find_if(places.begin(), places.end(), [&](const auto& e) { return e.first == d; });
    if (it == places.end()) {
      places.emplace_back(d, 1);
    } else {
      ++it->second;
    }
  }
  std::string text = "DistributedDataParallel: gradient buckets";
  for (size_t i = 0; i < places.size(); ++i) {
    const auto& [d, n] = places[i];
    text += (i ? "; " : ": ") + std::to_string(n) +
            (d.is_cpu() ? " in host memory, allreduced by MPI"
                        : " on " + d.str() + ", allreduced by its communicator (NCCL)");
  }
  group_->context()->log(kLogInfo, text);
}

std::vector<size_t> Reducer::ready_order() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_recorded_ ? ready_order_ : std::vector<size_t>{};
}

void Reducer::rebuild_buckets(const std::vector<size_t>& order) {
  std::lock_guard<std::mutex> lock(mu_);
  DP_CHECK(!rebuilt_, kState, "the gradient buckets were rebuilt already");
  DP_CHECK(next_launch_ == 0 && !armed_, kState,
           "the gradient buckets can be rebuilt only between steps (step " << step_ << ")");
  DP_CHECK(order.size() == params_.size(), kInternal,
           "a bucket order of " << order.size() << " parameters for " << params_.size());
  std::vector<bool> seen(params_.size(), false);
  for (size_t k : order) {
    DP_CHECK(k < params_.size() && !seen[k], kInternal,
             "the bucket order is not a permutation of the "
                 << params_.size() << " parameters: it has " << k << " out of range or twice");
    seen[k] = true;
  }
  // Gradients that are views of the old buckets move into the new ones now, so that the
  // old buffers go (PyTorch copies them during its rebuild too).
  std::vector<Tensor> views(params_.size());
  for (size_t k = 0; k < params_.size(); ++k) {
    const Tensor grad = params_[k].grad();
    if (is_bucket_view(k, grad)) views[k] = grad;
  }
  assign_buckets(order);
  for (size_t k = 0; k < params_.size(); ++k) {
    if (!views[k].defined()) continue;
    Tensor slice = slice_of(k);
    copy_bytes(slice, views[k]);
    params_[k].set_grad(slice);
  }
  reset_buckets();
  rebuilt_ = true;
  ready_order_.clear();
}

Reducer::~Reducer() {
  for (size_t k = 0; k < params_.size(); ++k) remove_post_accumulate_hook(params_[k], hook_ids_[k]);
  for (Bucket& b : buckets_) {
    if (!b.work) continue;
    try {
      group_->wait(*b.work);
    } catch (...) {
      // The job's error was the backward's; the reducer only has to outlive the work.
    }
  }
}

void Reducer::check_between_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  DP_CHECK(next_launch_ == 0, kState,
           "the backward of step " << step_ << " failed after rank " << group_->rank()
                                   << " had started its gradient allreduces: the ranks' "
                                      "collectives no longer match; end the job");
  // A synchronised backward that had begun filling the buckets (its end is queued) and
  // never ended failed midway. The ranks whose backward ended have queued every bucket's
  // allreduce, which this rank's next collectives would meet out of step.
  DP_CHECK(!(armed_ && callback_queued_), kState,
           "the backward of step " << step_ << " failed on rank " << group_->rank()
                                   << " after its first gradients had reached their buckets: "
                                      "the ranks whose backward ended wait in those buckets' "
                                      "allreduces, and the ranks' collectives no longer "
                                      "match; end the job");
}

void Reducer::prepare(bool sync, int64_t step) {
  check_between_steps();
  std::lock_guard<std::mutex> lock(mu_);
  reset_buckets();
  armed_ = sync;
  step_ = step;
  // A synchronised backward that failed before its end left part of an order: the
  // recording starts again.
  if (sync && !rebuilt_ && !order_recorded_) ready_order_.clear();
}

Tensor Reducer::slice_of(size_t param) const {
  const Bucket& b = buckets_[bucket_of_[param]];
  const int64_t offset = b.offsets[slot_of_[param]];
  const Tensor& p = params_[param];
  return b.flat.rows(offset, offset + p.numel()).view_as_shape(p.shape());
}

bool Reducer::is_bucket_view(size_t param, const Tensor& grad) const {
  const Tensor& flat = buckets_[bucket_of_[param]].flat;
  return grad.defined() && grad.impl()->storage == flat.impl()->storage &&
         grad.data() == slice_of(param).data();
}

void Reducer::reset_buckets() {
  for (Bucket& b : buckets_) {
    b.pending = b.params.size();
    b.work.reset();
  }
  ready_.assign(params_.size(), false);
  next_launch_ = 0;
  callback_queued_ = false;
}

void Reducer::copy_in(size_t param, bool zero_if_missing) {
  Tensor& p = params_[param];
  const Tensor grad = p.grad();
  Tensor slice = slice_of(param);
  // The gradient enters its bucket divided by the ranks (PyTorch's Reducer does the same):
  // the allreduce's sum is then the average, and the division runs here, on memory the
  // backward has just written, not in a pass of its own over the summed bucket.
  if (is_bucket_view(param, grad)) {  // accumulated in place
    divide(slice);
    return;
  }
  if (grad.defined()) {
    copy_bytes(slice, grad);
    divide(slice);
  } else if (zero_if_missing) {
    zero(slice);
  } else {
    return;
  }
  // From now on the gradient is the bucket's slice (where both are in the same memory): the
  // average lands in it, and later backwards (without zero_grad) accumulate in place.
  if (p.device() == slice.device() || (p.device().is_cpu() && slice.device().is_cpu())) {
    p.set_grad(slice);
  }
}

void Reducer::divide(const Tensor& slice) const {
  const int n = group_->size();
  if (slice.device().is_cpu()) {
    divide_in_place(slice, n);
  } else if (n > 1) {
    // A kernel on the device, x * (1 / n): x / n exactly when n is a power of two, else
    // within one rounding of it.
    ops::scale_(slice, 1.0 / n);
  }
}

void Reducer::on_grad_ready(size_t param) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!armed_ || ready_[param]) return;
    if (!callback_queued_) {
      queue_backward_callback([this] { finish(); });
      callback_queued_ = true;
    }
  }
  copy_in(param, false);  // its own slice: no lock needed
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_[param] = true;
    if (!rebuilt_ && !order_recorded_) ready_order_.push_back(param);
    --buckets_[bucket_of_[param]].pending;
  }
  launch_ready();
}

void Reducer::launch_ready() {
  // One thread launches at a time, in index order, and without mu_: a launch may run
  // kernels on a bucket's device (the bfloat16 rounding), which waits for that device's
  // worker, and the worker may be waiting for mu_ in its own gradient hook. A thread that
  // finds a launch under way leaves its ready bucket to that thread, which looks again
  // under mu_ before it stops launching.
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (launching_) return;
    launching_ = true;
  }
  for (;;) {
    size_t b = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_launch_ == buckets_.size() || buckets_[next_launch_].pending != 0) {
        launching_ = false;
        return;
      }
      b = next_launch_++;
    }
    try {
      launch(b);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      launching_ = false;
      throw;
    }
  }
}

void Reducer::launch(size_t b) {
  Bucket& bucket = buckets_[b];
  const Tensor flat = bucket.flat;
  const Tensor wire = bucket.wire;
  const std::string what = "the gradient allreduce of bucket " + std::to_string(b) + " (of " +
                           std::to_string(buckets_.size()) + ") in step " + std::to_string(step_);
  // The gradients came in divided by the ranks (copy_in): the sum is the average.
  if (ProcessComm* comm = bucket.comm) {
    // On the device: rounded there now, behind the kernels that filled the bucket; the
    // communicator's call runs on the device's stream after them (widened in finish).
    if (wire.defined()) ops::cast_into(wire, flat);
    const Tensor travels = wire.defined() ? wire : flat;
    // The bucket is complete in the device's queue now; the call waits for that point only,
    // not for the backward kernels queued by the time the communication thread reaches it.
    std::shared_ptr<QueuePoint> filled = comm->mark();
    bucket.work = group_->submit("bucket allreduce", static_cast<int64_t>(b), what + " (NCCL)",
                                 [comm, travels, filled, stats = stats_](Transport&) {
                                   const auto start = std::chrono::steady_clock::now();
                                   comm->allreduce(travels.data(), travels.numel(), travels.dtype(),
                                                   CollectiveOp::kSum, filled.get());
                                   if (stats) {
                                     stats->add(&SyncTimes::allreduce, seconds_since(start));
                                   }
                                 });
    return;
  }
  bucket.work = group_->submit("bucket allreduce", static_cast<int64_t>(b), what,
                               [flat, wire, stats = stats_](Transport& tr) {
                                 const auto start = std::chrono::steady_clock::now();
                                 if (wire.defined()) {
                                   allreduce_compressed(tr, flat, wire);
                                 } else {
                                   tr.allreduce(flat.data(), static_cast<size_t>(flat.numel()),
                                                flat.dtype(), ReduceOp::kSum);
                                 }
                                 if (stats) {
                                   stats->add(&SyncTimes::allreduce, seconds_since(start));
                                 }
                               });
}

void Reducer::finish() {
  // What no gradient reached: unused parameters, as zeros (or their gradient so far),
  // copied in without mu_ (kernels on a device, as in on_grad_ready).
  std::vector<size_t> missing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t k = 0; k < params_.size(); ++k) {
      if (!ready_[k]) missing.push_back(k);
    }
  }
  for (size_t k : missing) copy_in(k, true);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t k : missing) {
      ready_[k] = true;
      --buckets_[bucket_of_[k]].pending;
    }
  }
  launch_ready();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Every hook has returned (the graph is done), so no other thread is launching.
    DP_CHECK(!launching_ && next_launch_ == buckets_.size(), kInternal,
             "step " << step_ << ": " << next_launch_ << " of " << buckets_.size()
                     << " gradient buckets queued when backward ended");
    armed_ = false;
    if (!rebuilt_ && !order_recorded_) {
      // The first synchronised backward's order, the unused parameters last (in reverse,
      // as at creation): the order the buckets are rebuilt in.
      std::vector<bool> listed(params_.size(), false);
      for (size_t k : ready_order_) listed[k] = true;
      for (size_t k = params_.size(); k-- > 0;) {
        if (!listed[k]) ready_order_.push_back(k);
      }
      order_recorded_ = true;
    }
  }
  const auto wait_start = std::chrono::steady_clock::now();
  for (Bucket& b : buckets_) {
    group_->wait(*b.work);
    if (b.comm && b.wire.defined()) ops::cast_into(b.flat, b.wire);
    b.flat.bump_version();
  }
  if (stats_) stats_->add(&SyncTimes::sync_wait, seconds_since(wait_start));
  for (size_t k = 0; k < params_.size(); ++k) {
    Tensor& p = params_[k];
    Tensor grad = p.grad();
    if (is_bucket_view(k, grad)) continue;  // the average is already there
    const Tensor slice = slice_of(k);
    if (grad.defined()) {
      copy_bytes(grad, slice);
      grad.bump_version();
    } else {
      p.set_grad(copy_to_device(slice, p.device()));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  reset_buckets();
}

void Reducer::shadow_step(int64_t step) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    step_ = step;
  }
  // No backward runs on this rank: the caller's thread launches every bucket alone.
  for (size_t b = 0; b < buckets_.size(); ++b) {
    zero(buckets_[b].flat);
    launch(b);
  }
  for (Bucket& b : buckets_) group_->wait(*b.work);
  std::lock_guard<std::mutex> lock(mu_);
  reset_buckets();
}

}  // namespace dp
