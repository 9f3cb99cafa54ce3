// dp_data_parallel_* and the pipeline's stages.
#include "capi/handles.h"
#include "capi/options.h"
#include "capi/result.h"
#include "io/checkpoint.h"
#include "parallel/parallel_apply.h"
#include "parallel/replicate.h"
#include "parallel/scatter_gather.h"

using namespace dp::capi;

extern "C" {

dp_result dp_data_parallel_create(dp_module* module, const dp_device* device_ids, size_t n_devices,
                                  const dp_device* output_device, int32_t dim,
                                  const dp_data_parallel_options* options, dp_data_parallel** out) {
  return guard([&] {
    dp_module* m = check(module, "module");
    out_ptr(out, "out");
    std::vector<dp::Device> ids = to_device_ids(device_ids, n_devices);
    dp::DataParallelOptions dpo = data_parallel_options(options, "options");
    std::optional<dp::Device> output;
    if (output_device) output = to_core(*output_device);
    auto h = std::make_unique<dp_data_parallel>();
    h->rep =
        std::make_unique<dp::DataParallel>(m->rep, std::move(ids), output, dim, std::move(dpo));
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
    check_outputs(outputs, capacity, n_outputs);
    std::vector<dp::Tensor> in = unwrap_tensors(inputs, n_inputs, "inputs", h->ctx, "dp");
    hand_out(h->rep->forward(in, to_flags(broadcast, n_inputs)), h->ctx, outputs, capacity,
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
    devices_out(ids, devices, capacity);
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
    dp::parallel::ScatterOptions so;
    so.dim = dim;
    if (chunk_sizes) so.chunk_sizes.assign(chunk_sizes, chunk_sizes + n_devices);
    so.input_name = "input";  // the pipeline's checks name this function's argument
    auto pieces = dp::parallel::scatter_one(x, to_devices(devices, n_devices, "devices"), so);
    hand_out(pieces, input->ctx, outs, n_devices, n_out);
  });
}

dp_result dp_gather(dp_tensor* const* tensors, size_t n, dp_device output_device, int32_t dim,
                    dp_tensor** out) {
  return guard([&] {
    std::vector<dp::Tensor> ts = unwrap_tensors(tensors, n, "tensors", nullptr, nullptr);
    out_ptr(out, "out");
    dp::Tensor gathered = dp::parallel::gather_one(ts, to_core(output_device), dim);
    *out = wrap(std::move(gathered), tensors[0]->ctx);  // n > 0 past gather_one
  });
}

dp_result dp_replicate(dp_module* module, const dp_device* devices, size_t n_devices,
                       dp_module** replicas) {
  return guard([&] {
    dp_module* m = check(module, "module");
    out_ptr(replicas, "replicas");
    auto devs = to_devices(devices, n_devices, "devices");
    wrap_into(dp::parallel::replicate(*m->rep, devs, {}, nullptr), m->ctx, replicas);
  });
}

dp_result dp_parallel_apply(dp_module* const* replicas, size_t n, dp_tensor* const* inputs,
                            size_t inputs_per_replica, const dp_device* devices,
                            dp_tensor** outputs) {
  return guard([&] {
    auto reps = unwrap_modules(replicas, n, "replicas");
    out_ptr(outputs, "outputs");
    auto per_replica = unwrap_tensor_rows(inputs, n, inputs_per_replica, "inputs", replicas[0]->ctx,
                                          "replicas[0]");
    auto result = dp::parallel::parallel_apply_one_output(reps, per_replica,
                                                          to_devices(devices, n, "devices"));
    wrap_into(result, replicas[0]->ctx, outputs);
  });
}

dp_result dp_data_parallel_apply(dp_module* module, dp_tensor* const* inputs, const int* broadcast,
                                 size_t n_inputs, const dp_device* device_ids, size_t n_devices,
                                 const dp_device* output_device, int32_t dim, dp_tensor** outputs,
                                 size_t capacity, size_t* n_outputs) {
  return guard([&] {
    dp_module* m = check(module, "module");
    check_outputs(outputs, capacity, n_outputs);
    std::vector<dp::Tensor> in = unwrap_tensors(inputs, n_inputs, "inputs", m->ctx, "module");
    std::vector<dp::Device> ids = to_device_ids(device_ids, n_devices);
    std::optional<dp::Device> output;
    if (output_device) output = to_core(*output_device);
    auto result =
        dp::data_parallel(*m->rep, in, std::move(ids), output, dim, to_flags(broadcast, n_inputs));
    hand_out(result, m->ctx, outputs, capacity, n_outputs);
  });
}

}  // extern "C"
