#include "optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "context/context.h"
#include "context/cpu_parallel.h"
#include "device/trace.h"
#include "error.h"
#include "ops/autocast.h"
#include "ops/ops.h"

namespace dp {

namespace {

// The learning rate every optimizer takes: finite and >= 0 (">= 0" is false for NaN).
// `who` names the optimizer in the message ("SGD"), or is "" for set_lr.
void check_lr(const char* who, double lr) {
  DP_CHECK(lr >= 0 && std::isfinite(lr), kInvalidArgument,
           who << (*who ? ": " : "") << "lr = " << lr << " must be a finite number >= 0");
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    DP_CHECK(p.defined(), kInvalidArgument, "params[" << i << "] is missing");
    // A frozen parameter (requires_grad off) is kept, as torch.optim keeps it: it has no
    // gradient to step with until it is trained again.
    DP_CHECK(p.is_leaf(), kInvalidArgument, "params[" << i << "] is not a leaf tensor");
    for (size_t j = 0; j < i; ++j) {
      DP_CHECK(!params_[j].same(p), kInvalidArgument,
               "params[" << i << "] is the same tensor as params[" << j << "]");
    }
  }
}

void Optimizer::set_lr(double lr) {
  check_lr("", lr);
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.set_grad(Tensor());
}

namespace {

// Below this many elements a parameter is not worth cutting into slices.
constexpr int64_t kMinSlice = 1 << 14;

}  // namespace

void Optimizer::step() {
  trace::Span span("optimizer step");
  // Its updates run on the workers, which a worker's own task would wait on.
  DP_CHECK(!Worker::on_a_worker(), kState,
           "an optimizer step cannot run inside a device task (such as a custom module's "
           "forward)");
  ++steps_;
  if (params_.empty()) return;
  std::vector<size_t> active;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    const Tensor g = p.grad();
    if (!g.defined()) continue;  // PyTorch skips parameters without a gradient
    DP_CHECK(g.shape() == p.shape() && g.dtype() == p.dtype() && g.device() == p.device(), kState,
             "the gradient of params[" << i << "] does not match the parameter");
    active.push_back(i);
  }
  if (active.empty()) return;
  auto ctx = params_[0].context();
  // Every refusal before any change: a parameter whose writes are blocked (a DataParallel
  // forward reading it) or state that cannot be made leaves the optimizer as it was.
  for (size_t i : active) params_[i].check_writable();
  prepare(active);
  for (size_t i : active) params_[i].bump_version();

  // Accelerator parameters: one task per device, on its worker. CPU parameters: laid end
  // to end in one range of elements, which cpu_parallel_for shares out between the CPU
  // workers (CPU devices share memory).
  std::map<std::pair<int, int>, std::vector<size_t>> device_tasks;
  struct CpuParam {
    size_t param;
    int64_t start;  // in the range
  };
  std::vector<CpuParam> cpu_params;
  int64_t cpu_elements = 0;
  for (size_t i : active) {
    const Device d = params_[i].device();
    if (d.is_cpu()) {
      // Each parameter starts a new 64-byte line of float32 in the range, so chunks that
      // start on a multiple of 16 elements never share a line.
      cpu_elements = (cpu_elements + 15) / 16 * 16;
      cpu_params.push_back({i, cpu_elements});
      cpu_elements += params_[i].numel();
    } else {
      device_tasks[{static_cast<int>(d.type), d.index}].push_back(i);
    }
  }
  TaskGroup group(device_tasks.size());
  size_t slot = 0;
  for (const auto& [key, list] : device_tasks) {
    const Device dev{static_cast<DeviceType>(key.first), key.second};
    group.submit(slot++, ctx->worker(dev), [this, &list = list, dev] {
      trace::Span update_span("optimizer update");
      for (size_t i : list) update(i, params_[i].grad(), dev, 0, params_[i].numel());
    });
  }
  std::exception_ptr cpu_error;
  if (!cpu_params.empty()) {
    // Autocast's copies of CPU parameters (ops/autocast.h) are written along with each
    // slice of the update, while it is in cache, so the next forward casts no weights.
    std::vector<Tensor> lowered(params_.size());
    for (const CpuParam& c : cpu_params) {
      lowered[c.param] = ops::autocast::copy_to_refresh(params_[c.param]);
    }
    Backend& cpu_backend = ctx->backend(DeviceType::kCpu);
    const auto update_range = [&](int64_t begin, int64_t end, int cpu) {
      trace::Span update_span("optimizer update");
      // The first parameter that ends after `begin`.
      auto it = std::upper_bound(cpu_params.begin(), cpu_params.end(), begin,
                                 [](int64_t b, const CpuParam& c) { return b < c.start; });
      if (it != cpu_params.begin()) --it;
      for (; it != cpu_params.end() && it->start < end; ++it) {
        const int64_t numel = params_[it->param].numel();
        const int64_t lo = std::max(begin, it->start) - it->start;
        const int64_t hi = std::min(end, it->start + numel) - it->start;
        if (lo >= hi) continue;
        const Tensor& p = params_[it->param];
        update(it->param, p.grad(), Device{DeviceType::kCpu, cpu}, lo, hi);
        if (const Tensor& copy = lowered[it->param]; copy.defined()) {
          cpu_backend.cast(cpu, p.kview_slice(lo, hi), copy.kview_slice(lo, hi));
        }
      }
    };
    // CPU device 0's worker asleep (it sat out a long single-device step): this thread
    // runs as that device, sparing the wake-up. Else the workers take the chunks.
    Worker& cpu0 = ctx->worker(Device{DeviceType::kCpu, 0});
    try {
      if (cpu0.asleep()) {
        cpu0.run([&] { cpu_parallel_for(*ctx, 0, cpu_elements, kMinSlice, 16, update_range); });
      } else {
        cpu_parallel_for(*ctx, kNotOnACpuWorker, cpu_elements, kMinSlice, 16, update_range);
      }
    } catch (...) {
      cpu_error = std::current_exception();
    }
    // Bumped again now the values are final (or the update stopped): a cast that another
    // thread made during the update, of a mix of old and new values, counts as out of
    // date. On the storage: the write happened, whatever blocks writes now.
    for (const CpuParam& c : cpu_params) {
      const Tensor& p = params_[c.param];
      p.impl()->storage->bump_version();
      if (!cpu_error && lowered[c.param].defined()) {
        ops::autocast::refreshed(p, lowered[c.param], p.version());
      }
    }
  }
  if (cpu_error) {
    group.wait();  // the accelerators' tasks are joined before the error goes up
    std::rethrow_exception(cpu_error);
  }
  for (const auto& e : group.wait()) {
    if (e) std::rethrow_exception(e);
  }
}

Sgd::Sgd(std::vector<Tensor> params, const SgdOptions& o) : Optimizer(std::move(params)), o_(o) {
  // ">= 0" is false for NaN, which the messages cover too.
  check_lr("SGD", o.lr);
  DP_CHECK(o.momentum >= 0, kInvalidArgument,
           "SGD: momentum = " << o.momentum << " must be a number >= 0");
  DP_CHECK(o.weight_decay >= 0, kInvalidArgument,
           "SGD: weight_decay = " << o.weight_decay << " must be a number >= 0");
  DP_CHECK(!o.nesterov || (o.momentum > 0 && o.dampening == 0), kInvalidArgument,
           "SGD: nesterov needs momentum > 0 and dampening = 0 (momentum = "
               << o.momentum << ", dampening = " << o.dampening << ")");
  lr_ = o.lr;
  momentum_.resize(params_.size());
  first_.resize(params_.size());
}

void Sgd::prepare(const std::vector<size_t>& active) {
  std::vector<Tensor> made(active.size());  // the buffers this step creates
  for (size_t k = 0; o_.momentum != 0 && k < active.size(); ++k) {
    const Tensor& p = params_[active[k]];
    if (!momentum_[active[k]].defined()) {
      made[k] = Tensor::empty(p.context(), p.shape(), p.dtype(), p.device());
    }
  }
  for (size_t k = 0; k < active.size(); ++k) {
    first_[active[k]] = made[k].defined();
    if (made[k].defined()) momentum_[active[k]] = std::move(made[k]);
  }
}

void Sgd::update(size_t i, const Tensor& g, Device dev, int64_t begin, int64_t end) {
  const Tensor& p = params_[i];
  SgdParams sp{lr_, o_.momentum, o_.dampening, o_.weight_decay, o_.nesterov, first_[i]};
  KView buf;
  if (o_.momentum != 0) buf = momentum_[i].kview_slice(begin, end);
  p.context()->backend(dev.type).sgd_step(dev.index, p.kview_slice(begin, end),
                                          g.kview_slice(begin, end),
                                          o_.momentum != 0 ? &buf : nullptr, sp);
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& o) : Optimizer(std::move(params)), o_(o) {
  const char* kind = o.decoupled_weight_decay ? "AdamW" : "Adam";
  check_lr(kind, o.lr);
  DP_CHECK(o.beta1 >= 0 && o.beta1 < 1, kInvalidArgument,
           kind << ": beta1 = " << o.beta1 << " must be in [0, 1)");
  DP_CHECK(o.beta2 >= 0 && o.beta2 < 1, kInvalidArgument,
           kind << ": beta2 = " << o.beta2 << " must be in [0, 1)");
  DP_CHECK(o.eps > 0, kInvalidArgument, kind << ": eps = " << o.eps << " must be positive");
  DP_CHECK(o.weight_decay >= 0, kInvalidArgument,
           kind << ": weight_decay = " << o.weight_decay << " must be a number >= 0");
  lr_ = o.lr;
  m_.resize(params_.size());
  v_.resize(params_.size());
  t_.assign(params_.size(), 0);
}

void Adam::prepare(const std::vector<size_t>& active) {
  std::vector<std::pair<Tensor, Tensor>> made(active.size());  // m and v this step creates
  for (size_t k = 0; k < active.size(); ++k) {
    const Tensor& p = params_[active[k]];
    if (!m_[active[k]].defined()) {
      made[k] = {ops::zeros(p.context(), p.shape(), p.dtype(), p.device()),
                 ops::zeros(p.context(), p.shape(), p.dtype(), p.device())};
    }
  }
  for (size_t k = 0; k < active.size(); ++k) {
    const size_t i = active[k];
    if (made[k].first.defined()) {
      m_[i] = std::move(made[k].first);
      v_[i] = std::move(made[k].second);
    }
    ++t_[i];
  }
}

void Adam::update(size_t i, const Tensor& g, Device dev, int64_t begin, int64_t end) {
  const Tensor& p = params_[i];
  AdamParams ap{lr_, o_.beta1, o_.beta2, o_.eps, o_.weight_decay, o_.decoupled_weight_decay, t_[i]};
  p.context()->backend(dev.type).adam_step(dev.index, p.kview_slice(begin, end),
                                           g.kview_slice(begin, end), m_[i].kview_slice(begin, end),
                                           v_[i].kview_slice(begin, end), ap);
}

}  // namespace dp
