// Process groups and DistributedDataParallel (core/distributed).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "capi/handles.h"
#include "capi/options.h"
#include "capi/result.h"
#include "distributed/ddp.h"
#include "distributed/process_group.h"

using namespace dp::capi;

namespace {

void create_group(dp_context* ctx, int64_t comm_f, const dp_process_group_options* options,
                  dp_process_group** out) {
  dp_context* c = check(ctx, "ctx");
  out_ptr(out, "out");
  const dp_process_group_options o =
      read_options(options, dp_process_group_options DP_PROCESS_GROUP_OPTIONS_INIT, "options",
                   {"dp_process_group_options", "DP_PROCESS_GROUP_OPTIONS_INIT",
                    sizeof(dp_process_group_options)});
  dp::ProcessGroupOptions po;
  po.timeout_seconds = o.timeout_seconds;
  auto h = std::make_unique<dp_process_group>();
  h->rep = dp::ProcessGroup::create(c->rep, comm_f, po);
  h->ctx = retain(c);
  *out = h.release();
}

dp::ReduceOp to_core(dp_reduce_op op) {
  switch (op) {
    case DP_REDUCE_SUM:
      return dp::ReduceOp::kSum;
    case DP_REDUCE_AVERAGE:
      return dp::ReduceOp::kAverage;
    case DP_REDUCE_MAX:
      return dp::ReduceOp::kMax;
    case DP_REDUCE_MIN:
      return dp::ReduceOp::kMin;
    default:
      DP_THROW(kInvalidArgument, "op = " << static_cast<int>(op) << " is not a dp_reduce_op");
  }
}

}  // namespace

dp_result dp_process_group_from_mpi(dp_context* ctx, const dp_process_group_options* options,
                                    dp_process_group** out) {
  return guard([&] { create_group(ctx, dp::kWorldComm, options, out); });
}

dp_result dp_process_group_from_mpi_comm(dp_context* ctx, int64_t fortran_comm,
                                         const dp_process_group_options* options,
                                         dp_process_group** out) {
  return guard([&] {
    DP_CHECK(
        fortran_comm >= INT32_MIN && fortran_comm <= INT32_MAX && fortran_comm != dp::kWorldComm,
        kInvalidArgument,
        "fortran_comm = " << fortran_comm << " is not a Fortran communicator handle");
    create_group(ctx, fortran_comm, options, out);
  });
}

dp_result dp_process_group_rank(const dp_process_group* group, int32_t* rank) {
  return guard([&] { *out_ptr(rank, "rank") = check(group, "group")->rep->rank(); });
}

dp_result dp_process_group_size(const dp_process_group* group, int32_t* size) {
  return guard([&] { *out_ptr(size, "size") = check(group, "group")->rep->size(); });
}

dp_result dp_process_group_local_rank(const dp_process_group* group, int32_t* rank) {
  return guard([&] { *out_ptr(rank, "rank") = check(group, "group")->rep->local_rank(); });
}

dp_result dp_process_group_local_size(const dp_process_group* group, int32_t* size) {
  return guard([&] { *out_ptr(size, "size") = check(group, "group")->rep->local_size(); });
}

dp_result dp_process_group_allreduce(dp_process_group* group, dp_tensor* tensor, dp_reduce_op op) {
  return guard([&] {
    dp_process_group* g = check(group, "group");
    const dp::Tensor& t = unwrap_in(g->ctx, "group", tensor, "tensor");
    g->rep->allreduce(t, to_core(op));
  });
}

dp_result dp_process_group_broadcast(dp_process_group* group, dp_tensor* tensor, int32_t root) {
  return guard([&] {
    dp_process_group* g = check(group, "group");
    g->rep->broadcast(unwrap_in(g->ctx, "group", tensor, "tensor"), root);
  });
}

dp_result dp_process_group_allgather(dp_process_group* group, const dp_tensor* tensor,
                                     dp_tensor** out) {
  return guard([&] {
    dp_process_group* g = check(group, "group");
    const dp::Tensor& t = unwrap_in(g->ctx, "group", tensor, "tensor");
    out_ptr(out, "out");
    *out = wrap(g->rep->allgather(t), g->ctx);
  });
}

dp_result dp_process_group_barrier(dp_process_group* group) {
  return guard([&] { check(group, "group")->rep->barrier(); });
}

void dp_process_group_release(dp_process_group* group) {
  if (!group) return;
  dp_context* ctx = group->ctx;
  group->tag = Tag::kDead;
  delete group;
  release(ctx);
}

dp_result dp_ddp_create(dp_module* module, dp_process_group* group, const dp_device* device_ids,
                        size_t n_devices, const dp_device* output_device, int32_t dim,
                        const dp_ddp_options* options, dp_ddp** out) {
  return guard([&] {
    dp_module* m = check(module, "module");
    dp_process_group* g = check(group, "group");
    check_same_context(m->ctx, "module", g->ctx, "group");
    out_ptr(out, "out");
    std::vector<dp::Device> ids = to_device_ids(device_ids, n_devices);
    const dp_ddp_options o = read_options(
        options, dp_ddp_options DP_DDP_OPTIONS_INIT, "options",
        // The first version ended with `local`: its callers keep working.
        {"dp_ddp_options", "DP_DDP_OPTIONS_INIT", offsetof(dp_ddp_options, allreduce_dtype)});
    dp::DdpOptions ddpo;
    if (o.bucket_bytes) ddpo.buckets.bucket_bytes = o.bucket_bytes;
    if (o.first_bucket_bytes) ddpo.buckets.first_bucket_bytes = o.first_bucket_bytes;
    ddpo.broadcast_buffers = o.broadcast_buffers != 0;
    DP_CHECK(o.allreduce_dtype == DP_FLOAT32 || o.allreduce_dtype == DP_BFLOAT16, kInvalidArgument,
             "options->allreduce_dtype = " << static_cast<int>(o.allreduce_dtype)
                                           << " is neither DP_FLOAT32 (0) nor DP_BFLOAT16 (3)");
    ddpo.buckets.allreduce_dtype = to_core(o.allreduce_dtype, "allreduce_dtype");
    ddpo.local = data_parallel_options(o.local, "options->local");
    std::optional<dp::Device> output;
    if (output_device) output = to_core(*output_device);
    auto h = std::make_unique<dp_ddp>();
    h->rep = std::make_unique<dp::DistributedDataParallel>(m->rep, g->rep, std::move(ids), output,
                                                           dim, ddpo);
    h->module = dp_module_retain(m);
    h->ctx = retain(m->ctx);
    *out = h.release();
  });
}

dp_result dp_ddp_forward(dp_ddp* ddp, dp_tensor* const* inputs, const int* broadcast,
                         size_t n_inputs, dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  return guard([&] {
    dp_ddp* h = check(ddp, "ddp");
    check_outputs(outputs, capacity, n_outputs);
    std::vector<dp::Tensor> in = unwrap_tensors(inputs, n_inputs, "inputs", h->ctx, "ddp");
    hand_out(h->rep->forward(in, to_flags(broadcast, n_inputs)), h->ctx, outputs, capacity,
             n_outputs);
  });
}

dp_result dp_ddp_module(const dp_ddp* ddp, dp_module** out) {
  return guard([&] {
    dp_ddp* h = check(ddp, "ddp");
    out_ptr(out, "out");
    *out = dp_module_retain(h->module);
  });
}

dp_result dp_ddp_devices(const dp_ddp* ddp, dp_device* devices, size_t capacity, size_t* n) {
  return guard([&] {
    const auto& ids = check(ddp, "ddp")->rep->local().device_ids();
    out_ptr(n, "n");
    devices_out(ids, devices, capacity);
    *n = ids.size();
  });
}

dp_result dp_ddp_bucket_count(const dp_ddp* ddp, size_t* n) {
  return guard([&] { *out_ptr(n, "n") = check(ddp, "ddp")->rep->reducer().bucket_count(); });
}

dp_result dp_ddp_stats(const dp_ddp* ddp, dp_ddp_phase_times* last, dp_ddp_phase_times* total,
                       uint64_t* calls) {
  return guard([&] {
    dp::DistributedDataParallel& rep = *check(ddp, "ddp")->rep;
    dp::PhaseTimes local_last, local_total;
    dp::SyncTimes sync_last, sync_total;
    uint64_t n = 0;
    rep.local().stats().read(&local_last, &local_total, nullptr);
    rep.sync_stats().read(&sync_last, &sync_total, &n);
    auto convert = [](const dp::PhaseTimes& p, const dp::SyncTimes& s) {
      return dp_ddp_phase_times{sizeof(dp_ddp_phase_times),
                                {p.scatter, p.replicate, p.apply, p.gather, p.backward, p.reduce},
                                s.buffer_broadcast,
                                s.allreduce,
                                s.sync_wait};
    };
    const OptionsLayout layout{"dp_ddp_phase_times", "DP_DDP_PHASE_TIMES_INIT",
                               sizeof(dp_ddp_phase_times)};
    // Both sizes first: a bad one changes neither result.
    if (last) check_results_size(last, "last", layout);
    if (total) check_results_size(total, "total", layout);
    if (last) write_results(last, convert(local_last, sync_last), "last", layout);
    if (total) write_results(total, convert(local_total, sync_total), "total", layout);
    if (calls) *calls = n;
  });
}

dp_result dp_ddp_reset_stats(dp_ddp* ddp) {
  return guard([&] {
    dp::DistributedDataParallel& rep = *check(ddp, "ddp")->rep;
    rep.local().stats().reset();
    rep.sync_stats().reset();
  });
}

dp_result dp_ddp_set_grad_sync(dp_ddp* ddp, int sync) {
  return guard([&] { check(ddp, "ddp")->rep->set_grad_sync(sync != 0); });
}

dp_result dp_ddp_set_uneven_inputs(dp_ddp* ddp, int on) {
  return guard([&] { check(ddp, "ddp")->rep->set_uneven_inputs(on != 0); });
}

dp_result dp_ddp_join(dp_ddp* ddp) {
  return guard([&] { check(ddp, "ddp")->rep->join(); });
}

void dp_ddp_release(dp_ddp* ddp) {
  if (!ddp) return;
  dp_context* ctx = ddp->ctx;
  dp_module* module = ddp->module;
  ddp->tag = Tag::kDead;
  delete ddp;
  dp_module_release(module);
  release(ctx);
}
