// dp_context_* and the device queries.
#include <algorithm>
#include <cstring>
#include <memory>

#include "capi/handles.h"
#include "capi/options.h"
#include "capi/result.h"

using namespace dp::capi;

extern "C" {

dp_result dp_context_create(const dp_context_options* options, dp_context** out) {
  return guard([&] {
    out_ptr(out, "out");
    // The first version ended after seed.
    const dp_context_options o =
        read_options(options, dp_context_options DP_CONTEXT_OPTIONS_INIT, "options",
                     {"dp_context_options", "DP_CONTEXT_OPTIONS_INIT",
                      offsetof(dp_context_options, log_user_data_free)});
    DP_CHECK(o.log_level >= DP_LOG_DEBUG && o.log_level <= DP_LOG_ERROR, kInvalidArgument,
             "options->log_level = " << static_cast<int>(o.log_level) << " is not a dp_log_level");
    dp::ContextOptions co;
    co.cpu_devices = o.cpu_devices;
    co.load_cuda = o.load_cuda != 0;
    co.allow_tf32 = o.allow_tf32 != 0;
    co.log_level = o.log_level;
    // The caller's log_user_data_free runs when the last copy of the log function goes,
    // with the context, once the context exists (armed): until then the data is the
    // caller's, so a failed create frees nothing.
    auto armed = std::make_shared<bool>(false);
    if (o.log_fn) {
      std::shared_ptr<void> user_data(o.log_user_data,
                                      [free_fn = o.log_user_data_free, armed](void* p) {
                                        if (*armed && free_fn) free_fn(p);
                                      });
      co.log_fn = [fn = o.log_fn, user_data](int level, const char* message) {
        fn(user_data.get(), static_cast<dp_log_level>(level), message);
      };
    }
    co.seed = o.seed;
    auto* h = new dp_context;
    try {
      h->rep = dp::Context::create(co);
    } catch (...) {
      delete h;
      throw;
    }
    *armed = true;
    *out = h;
  });
}

void dp_context_release(dp_context* ctx) {
  release(ctx);
}

dp_result dp_device_count(const dp_context* ctx, dp_device_type type, int32_t* out) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    DP_CHECK(type == DP_DEVICE_CPU || type == DP_DEVICE_CUDA, kInvalidArgument,
             "type = " << static_cast<int>(type) << " is not a dp_device_type");
    *out_ptr(out, "out") = c->device_count(static_cast<dp::DeviceType>(type));
  });
}

dp_result dp_device_name(const dp_context* ctx, dp_device device, char* buf, size_t buf_size,
                         size_t* needed) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    const dp::Device d = to_core(device);
    c->check_device(d, "device");
    DP_CHECK(buf != nullptr || buf_size == 0, kInvalidArgument,
             "buf is NULL but buf_size = " << buf_size);
    const std::string name = c->backend(d.type).device_name(d.index);
    if (needed) *needed = name.size() + 1;
    if (buf_size > 0) {
      const size_t n = std::min(name.size(), buf_size - 1);
      std::memcpy(buf, name.data(), n);
      buf[n] = '\0';
    }
  });
}

dp_result dp_device_memory(const dp_context* ctx, dp_device device, uint64_t* free_bytes,
                           uint64_t* total_bytes) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    const dp::Device d = to_core(device);
    c->check_device(d, "device");
    uint64_t f = 0, t = 0;
    c->backend(d.type).memory_info(d.index, &f, &t);
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
  });
}

dp_result dp_device_bf16_native(const dp_context* ctx, dp_device device, int* out) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    int* o = out_ptr(out, "out");
    const dp::Device d = to_core(device);
    c->check_device(d, "device");
    *o = c->backend(d.type).bf16_native(d.index) ? 1 : 0;
  });
}

dp_result dp_device_synchronize(dp_context* ctx, dp_device device) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    const dp::Device d = to_core(device);
    c->check_device(d, "device");
    c->run(d, [&] { c->backend(d.type).synchronize(d.index); });
  });
}

}  // extern "C"
