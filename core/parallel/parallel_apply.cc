#include "parallel/parallel_apply.h"

#include "context/context.h"
#include "device/trace.h"
#include "error.h"
#include "parallel/alias_read_guard.h"
#include "parallel/replicate.h"
#include "parallel/validate.h"

namespace dp::parallel {

void check_not_inside_a_replica(const char* what, size_t devices) {
  DP_CHECK(devices <= 1 || !ThreadState::current().in_replica, kState,
           what << " over " << devices
                << " devices cannot run inside a replica of another (a custom module's forward "
                   "under DataParallel): the replicas' workers would wait on each other");
}

std::vector<std::vector<Tensor>> parallel_apply(
    const std::vector<std::shared_ptr<Module>>& replicas,
    const std::vector<std::vector<Tensor>>& inputs, const std::vector<Device>& devices,
    std::shared_ptr<PhaseStats> stats, size_t first_index) {
  PhaseTimer timer(stats.get(), Phase::kApply);
  DP_CHECK(replicas.size() == inputs.size() && replicas.size() == devices.size(), kInvalidArgument,
           "parallel_apply: " << replicas.size() << " replicas, " << inputs.size()
                              << " input lists and " << devices.size()
                              << " devices (they must be equal)");
  check_not_inside_a_replica("parallel_apply", replicas.size());
  std::vector<std::vector<Tensor>> outputs(replicas.size());
  if (replicas.empty()) return outputs;
  for (size_t i = 0; i < replicas.size(); ++i) {
    DP_CHECK(replicas[i] != nullptr, kInvalidArgument,
             "parallel_apply: replicas[" << i << "] is missing");
  }
  auto ctx = replicas[0]->context();
  check_device_list(ctx.get(), devices, "devices");
  // A replica runs on its device's worker, which must not wait on another worker: an
  // input elsewhere would have the two workers wait on each other.
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t k = 0; k < inputs[i].size(); ++k) {
      const Tensor& t = inputs[i][k];
      DP_CHECK(!t.defined() || t.device() == devices[i], kDeviceMismatch,
               "parallel_apply: input " << k << " of replica " << i << " is on " << t.device().str()
                                        << " but the replica runs on " << devices[i].str());
    }
  }
  // Replicas on other CPU devices read the original's parameters in place (alias_cpu):
  // replica 0, the original, must not write them meanwhile.
  AliasReadGuard guard(aliased_parameter_memory(replicas));
  const bool several = replicas.size() > 1;
  auto run_replica = [&](size_t i) {
    trace::Span span("replica forward", static_cast<int64_t>(first_index + i));
    struct Mark {  // restored on the way out, exception or not
      bool before = ThreadState::current().in_replica;
      explicit Mark(bool on) { ThreadState::current().in_replica = before || on; }
      ~Mark() { ThreadState::current().in_replica = before; }
    } mark(several);
    outputs[i] = replicas[i]->forward(inputs[i]);
  };
  // Replica 0 on a CPU device, holding no user code, runs last and through Worker::run:
  // on this thread while its worker is idle, as a single-device forward does. The caller
  // then works as that device in the forward, the backward (autograd::backward drains
  // the loss's device on the caller) and the optimizer step, and the device's worker
  // sleeps instead of spinning beside it: two busy threads on two cores, not three.
  const bool first_here = devices[0].is_cpu() && !replicas[0]->runs_user_code();
  // Called from a device's own worker (a custom module's forward running a DataParallel),
  // that device's replica runs here too: queued behind the running task, it never would.
  size_t own = replicas.size();
  for (size_t i = 0; i < replicas.size() && own == replicas.size(); ++i) {
    if (ctx->worker(devices[i]).is_current()) own = i;
  }
  auto here = [&](size_t i) { return i == own || (i == 0 && first_here); };
  TaskGroup group(replicas.size());
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (!here(i)) group.submit(i, ctx->worker(devices[i]), [&run_replica, i] { run_replica(i); });
  }
  for (size_t i = 0; i < replicas.size(); ++i) {
    if (here(i)) group.run(i, ctx->worker(devices[i]), [&run_replica, i] { run_replica(i); });
  }
  const auto& errors = group.wait();
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    const std::string where =
        "in replica " + std::to_string(first_index + i) + " on device " + devices[i].str() + ": ";
    try {
      std::rethrow_exception(errors[i]);
    } catch (const Error& e) {
      throw Error(e.code(), where + e.what());
    } catch (const std::bad_alloc&) {
      throw Error(Code::kOutOfMemory, where + "out of memory");
    } catch (const std::exception& e) {
      throw Error(Code::kInternal, where + e.what());
    }
  }
  return outputs;
}

std::vector<Tensor> parallel_apply_one_output(const std::vector<std::shared_ptr<Module>>& replicas,
                                              const std::vector<std::vector<Tensor>>& inputs,
                                              const std::vector<Device>& devices) {
  std::vector<std::vector<Tensor>> outputs = parallel_apply(replicas, inputs, devices, nullptr);
  std::vector<Tensor> firsts;
  for (size_t i = 0; i < outputs.size(); ++i) {
    DP_CHECK(outputs[i].size() == 1, kInvalidArgument,
             "replica " << i << " returned " << outputs[i].size()
                        << " outputs; dp_parallel_apply takes one per replica");
    firsts.push_back(outputs[i][0]);
  }
  return firsts;
}

}  // namespace dp::parallel
