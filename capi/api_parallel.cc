// dp_data_parallel_* and the pipeline's stages.
#include "capi/handles.h"
#include "capi/options.h"
#include "capi/result.h"
#include "io/checkpoint.h"
#include "parallel/parallel_apply.h"
#include "parallel/replicate.h"
#include "parallel/scatter_gather.h"

using namespace dp::capi;

namespace {

// inputs[0..n), each of ctx, the context of the argument named `owner`; with ctx NULL,
// of inputs[0]'s context.
std::vector<dp::Tensor> unwrap_inputs(dp_tensor* const* inputs, size_t n, const char* arg,
                                      const dp_context* ctx, const char* owner) {
  DP_CHECK(inputs != nullptr || n == 0, kInvalidArgument, arg << " is NULL but its count is " << n);
  std::vector<dp::Tensor> out;
  std::string first;  // names inputs[0] when its context is the one the rest share
  for (size_t i = 0; i < n; ++i) {
    const std::string name = std::string(arg) + "[" + std::to_string(i) + "]";
    if (i == 0 && ctx == nullptr) {
      out.push_back(unwrap(inputs[0], name.c_str()));
      ctx = inputs[0]->ctx;
      first = name;
      owner = first.c_str();
    } else {
      out.push_back(unwrap_in(ctx, owner, inputs[i], name.c_str()));
    }
  }
  return out;
}

// broadcast[0..n) as flags (none when broadcast is NULL: every input is split).
std::vector<bool> broadcast_flags(const int* broadcast, size_t n) {
  std::vector<bool> flags;
  if (broadcast) flags.assign(broadcast, broadcast + n);
  return flags;
}

// The output array's arguments, checked before anything runs.
void check_output_array(dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  out_ptr(n_outputs, "n_outputs");
  DP_CHECK(outputs != nullptr || capacity == 0, kInvalidArgument,
           "outputs is NULL but capacity = " << capacity);
}

// Hands `ts` out through outputs[0..capacity) and *n_outputs.
void hand_out(const std::vector<dp::Tensor>& ts, dp_context* ctx, dp_tensor** outputs,
              size_t capacity, size_t* n_outputs) {
  check_output_array(outputs, capacity, n_outputs);
  DP_CHECK(ts.size() <= capacity, kOutOfRange,
           "there are " << ts.size() << " outputs but capacity = " << capacity);
  std::vector<dp_tensor*> handles = wrap_all(ts, ctx);
  for (size_t i = 0; i < handles.size(); ++i) outputs[i] = handles[i];
  *n_outputs = handles.size();
}

}  // namespace

extern "C" {

dp_result dp_data_parallel_create(dp_module* module, const dp_device* device_ids, size_t n_devices,
                                  const dp_device* output_device, int32_t dim,
                                  const dp_data_parallel_options* options, dp_data_parallel** out) {
  return guard([&] {
    dp_module* m = check(module, "module");
    out_ptr(out, "out");
    DP_CHECK(device_ids != nullptr || n_devices == 0, kInvalidArgument,
             "device_ids is NULL but n_devices = " << n_devices);
    DP_CHECK(device_ids == nullptr || n_devices > 0, kInvalidArgument,
             "device_ids is empty (n_devices = 0); pass NULL for every device");
    const dp_data_parallel_options o =
        read_options(options, dp_data_parallel_options DP_DATA_PARALLEL_OPTIONS_INIT, "options",
                     {"dp_data_parallel_options", "DP_DATA_PARALLEL_OPTIONS_INIT",
                      offsetof(dp_data_parallel_options, chunk_sizes)});
    DP_CHECK(o.chunk_sizes != nullptr || o.n_chunk_sizes == 0, kInvalidArgument,
             "options->chunk_sizes is NULL but n_chunk_sizes = " << o.n_chunk_sizes);
    DP_CHECK(
        o.buffer_sync == DP_BUFFER_SYNC_NONE || o.buffer_sync == DP_BUFFER_SYNC_AVERAGE,
        kInvalidArgument,
        "options->buffer_sync = " << static_cast<int>(o.buffer_sync) << " is not a dp_buffer_sync");
    dp::DataParallelOptions dpo;
    if (o.chunk_sizes) dpo.chunk_sizes.assign(o.chunk_sizes, o.chunk_sizes + o.n_chunk_sizes);
    dpo.no_gather = o.no_gather != 0;
    dpo.cache_replicas = o.cache_replicas != 0;
    dpo.buffer_sync =
        o.buffer_sync == DP_BUFFER_SYNC_AVERAGE ? dp::BufferSync::kAverage : dp::BufferSync::kNone;
    dpo.alias_cpu = o.alias_cpu != 0;
    if (o.bucket_bytes) dpo.bucket_bytes = o.bucket_bytes;
    std::optional<dp::Device> output;
    if (output_device) output = to_core(*output_device);
    auto h = std::make_unique<dp_data_parallel>();
    h->rep = std::make_unique<dp::DataParallel>(
        m->rep, to_devices(device_ids, n_devices, "device_ids"), output, dim, std::move(dpo));
    h->module = dp_module_retain(m);
    h->ctx = retain(m->ctx);
    *out = h.release();
  });
}

dp_result dp_data_parallel_forward(dp_data_parallel* dp, dp_tensor* const* inputs,
                                   const int* broadcast, size_t n_inputs, dp_tensor** outputs,
                                   size_t capacity, size_t* n_outputs) {
  return guard([&] {
    dp_data_parallel* h = check(dp, "dp");
    check_output_array(outputs, capacity, n_outputs);
    std::vector<dp::Tensor> in = unwrap_inputs(inputs, n_inputs, "inputs", h->ctx, "dp");
    hand_out(h->rep->forward(in, broadcast_flags(broadcast, n_inputs)), h->ctx, outputs, capacity,
             n_outputs);
  });
}

dp_result dp_data_parallel_module(const dp_data_parallel* dp, dp_module** out) {
  return guard([&] {
    dp_data_parallel* h = check(dp, "dp");
    out_ptr(out, "out");  // before the reference is taken
    *out = dp_module_retain(h->module);
  });
}

dp_result dp_data_parallel_devices(const dp_data_parallel* dp, dp_device* devices, size_t capacity,
                                   size_t* n) {
  return guard([&] {
    const auto& ids = check(dp, "dp")->rep->device_ids();
    out_ptr(n, "n");
    DP_CHECK(devices != nullptr || capacity == 0, kInvalidArgument,
             "devices is NULL but capacity = " << capacity);
    for (size_t i = 0; i < ids.size() && i < capacity; ++i) devices[i] = to_c(ids[i]);
    *n = ids.size();
  });
}

dp_result dp_data_parallel_save(const dp_data_parallel* dp, const char* path) {
  return guard([&] { dp::save_module(*check(dp, "dp")->rep->module(), str_arg(path, "path")); });
}

dp_result dp_data_parallel_load(dp_data_parallel* dp, const char* path) {
  return guard([&] { dp::load_module(*check(dp, "dp")->rep->module(), str_arg(path, "path")); });
}

dp_result dp_data_parallel_stats(const dp_data_parallel* dp, dp_phase_times* last,
                                 dp_phase_times* total, uint64_t* calls) {
  return guard([&] {
    dp::PhaseTimes l, t;
    check(dp, "dp")->rep->stats().read(&l, &t, calls);
    auto convert = [](const dp::PhaseTimes& p) {
      return dp_phase_times{p.scatter, p.replicate, p.apply, p.gather, p.backward, p.reduce};
    };
    if (last) *last = convert(l);
    if (total) *total = convert(t);
  });
}

dp_result dp_data_parallel_reset_stats(dp_data_parallel* dp) {
  return guard([&] { check(dp, "dp")->rep->stats().reset(); });
}

void dp_data_parallel_release(dp_data_parallel* dp) {
  if (!dp) return;
  dp_context* ctx = dp->ctx;
  dp_module* module = dp->module;
  dp->tag = Tag::kDead;
  delete dp;
  dp_module_release(module);
  release(ctx);
}

dp_result dp_scatter(const dp_tensor* input, const dp_device* devices, size_t n_devices,
                     const int64_t* chunk_sizes, int32_t dim, dp_tensor** outs, size_t* n_out) {
  return guard([&] {
    const dp::Tensor& x = unwrap(input, "input");
    out_ptr(outs, "outs");
    out_ptr(n_out, "n_out");
    DP_CHECK(x.ndim() > 0, kShapeMismatch, "input is a 0-dim tensor, which cannot be scattered");
    dp::wrap_dim(dim, x.ndim(), "dim");  // named as this function's argument
    dp::parallel::ScatterOptions so;
    so.dim = dim;
    auto devs = to_devices(devices, n_devices, "devices");
    for (size_t i = 0; i < devs.size(); ++i) {
      x.context()->check_device(devs[i], ("devices[" + std::to_string(i) + "]").c_str());
    }
    if (chunk_sizes) so.chunk_sizes.assign(chunk_sizes, chunk_sizes + n_devices);
    so.input_name = "input";  // the pipeline's checks name this function's argument
    auto scattered = dp::parallel::scatter_inputs({x}, {}, devs, so, nullptr);
    std::vector<dp::Tensor> pieces;
    for (auto& list : scattered.inputs) pieces.push_back(list[0]);
    hand_out(pieces, input->ctx, outs, n_devices, n_out);
  });
}

dp_result dp_gather(dp_tensor* const* tensors, size_t n, dp_device output_device, int32_t dim,
                    dp_tensor** out) {
  return guard([&] {
    DP_CHECK(tensors != nullptr || n == 0, kInvalidArgument, "tensors is NULL but n = " << n);
    DP_CHECK(n > 0, kInvalidArgument, "tensors is empty (n = 0)");
    std::vector<dp::Tensor> ts = unwrap_inputs(tensors, n, "tensors", nullptr, nullptr);
    out_ptr(out, "out");
    std::vector<std::vector<dp::Tensor>> per_replica;
    for (const dp::Tensor& t : ts) per_replica.push_back({t});
    const auto& ctx = ts[0].context();
    ctx->check_device(to_core(output_device), "output_device");
    auto result =
        dp::parallel::gather_outputs(per_replica, to_core(output_device), dim, true, nullptr,
                                     [&](const std::string& m) { ctx->log(dp::kLogWarning, m); });
    *out = wrap(result[0], tensors[0]->ctx);
  });
}

dp_result dp_replicate(dp_module* module, const dp_device* devices, size_t n_devices,
                       dp_module** replicas) {
  return guard([&] {
    dp_module* m = check(module, "module");
    out_ptr(replicas, "replicas");
    auto devs = to_devices(devices, n_devices, "devices");
    DP_CHECK(!devs.empty(), kInvalidArgument, "devices is empty");
    for (size_t i = 0; i < devs.size(); ++i) {
      m->rep->context()->check_device(devs[i], ("devices[" + std::to_string(i) + "]").c_str());
    }
    auto reps = dp::parallel::replicate(*m->rep, devs, {}, nullptr);
    std::vector<dp_module*> handles = wrap_all(reps, m->ctx);
    for (size_t i = 0; i < handles.size(); ++i) replicas[i] = handles[i];
  });
}

dp_result dp_parallel_apply(dp_module* const* replicas, size_t n, dp_tensor* const* inputs,
                            size_t inputs_per_replica, const dp_device* devices,
                            dp_tensor** outputs) {
  return guard([&] {
    DP_CHECK(replicas != nullptr || n == 0, kInvalidArgument, "replicas is NULL but n = " << n);
    DP_CHECK(n > 0, kInvalidArgument, "replicas is empty (n = 0)");
    size_t total_inputs = 0;
    DP_CHECK(!__builtin_mul_overflow(n, inputs_per_replica, &total_inputs), kInvalidArgument,
             "inputs_per_replica = " << inputs_per_replica << " times n = " << n << " overflows");
    out_ptr(outputs, "outputs");
    std::vector<std::shared_ptr<dp::Module>> reps;
    const dp_context* ctx = check(replicas[0], "replicas[0]")->ctx;
    for (size_t i = 0; i < n; ++i) {
      const std::string arg = "replicas[" + std::to_string(i) + "]";
      const dp_module* r = check(replicas[i], arg.c_str());
      check_same_context(ctx, "replicas[0]", r->ctx, arg.c_str());
      reps.push_back(r->rep);
    }
    std::vector<dp::Tensor> flat =
        unwrap_inputs(inputs, total_inputs, "inputs", ctx, "replicas[0]");
    std::vector<std::vector<dp::Tensor>> per_replica(n);
    for (size_t i = 0; i < n; ++i) {
      per_replica[i].assign(flat.begin() + i * inputs_per_replica,
                            flat.begin() + (i + 1) * inputs_per_replica);
    }
    auto devs = to_devices(devices, n, "devices");
    for (size_t i = 0; i < devs.size(); ++i) {
      reps[0]->context()->check_device(devs[i], ("devices[" + std::to_string(i) + "]").c_str());
    }
    auto result = dp::parallel::parallel_apply(reps, per_replica, devs, nullptr);
    std::vector<dp::Tensor> firsts;
    for (size_t i = 0; i < n; ++i) {
      DP_CHECK(result[i].size() == 1, kInvalidArgument,
               "replica " << i << " returned " << result[i].size()
                          << " outputs; dp_parallel_apply takes one per replica");
      firsts.push_back(result[i][0]);
    }
    std::vector<dp_tensor*> handles = wrap_all(firsts, replicas[0]->ctx);
    for (size_t i = 0; i < n; ++i) outputs[i] = handles[i];
  });
}

dp_result dp_data_parallel_apply(dp_module* module, dp_tensor* const* inputs, const int* broadcast,
                                 size_t n_inputs, const dp_device* device_ids, size_t n_devices,
                                 const dp_device* output_device, int32_t dim, dp_tensor** outputs,
                                 size_t capacity, size_t* n_outputs) {
  return guard([&] {
    dp_module* m = check(module, "module");
    check_output_array(outputs, capacity, n_outputs);
    std::vector<dp::Tensor> in = unwrap_inputs(inputs, n_inputs, "inputs", m->ctx, "module");
    DP_CHECK(device_ids == nullptr || n_devices > 0, kInvalidArgument,
             "device_ids is empty (n_devices = 0); pass NULL for every device");
    std::optional<dp::Device> output;
    if (output_device) output = to_core(*output_device);
    auto result = dp::data_parallel(*m->rep, in, to_devices(device_ids, n_devices, "device_ids"),
                                    output, dim, broadcast_flags(broadcast, n_inputs));
    hand_out(result, m->ctx, outputs, capacity, n_outputs);
  });
}

}  // extern "C"
