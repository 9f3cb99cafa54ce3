// dp_module_*: layers, custom modules, forward, parameters, checkpoints.
#include <cstring>

#include "capi/handles.h"
#include "capi/options.h"
#include "capi/result.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "nn/layers.h"

using namespace dp::capi;

namespace {

// Makes a module on the context and hands out a handle.
template <class F>
dp_result make(dp_context* ctx, dp_module** out, F&& f) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    out_ptr(out, "out");
    *out = wrap(std::shared_ptr<dp::Module>(f(c)), ctx);
  });
}

// Converts a dp_result from user code into the core's error. The message is what the
// callback's thread recorded during the call (dp_set_error, or a call that failed), if
// anything: errors_before is error_count() from before the call.
[[noreturn]] void raise_callback_error(dp_result r, const std::string& type,
                                       uint64_t errors_before) {
  const int code = r > DP_OK && r <= DP_ERR_INTERNAL ? r : DP_ERR_CALLBACK;
  const std::string msg = error_count() != errors_before ? dp_last_error() : "";
  // "MLP forward failed: TypeError: ..." with the callback's message; without one, the
  // code it returned ("MLP forward returned callback failed").
  throw dp::Error(static_cast<dp::Code>(code),
                  msg.empty()
                      ? type + " forward returned " + dp_result_string(static_cast<dp_result>(code))
                      : type + " forward failed: " + msg);
}

// The user's forward, called with the module it runs as (a replica under DataParallel).
// It keeps a reference to the context handle its tensor handles belong to: the module can
// outlive every handle the user holds of that context (as a child of a module of another).
dp::CallbackModule::Forward callback_forward(dp_forward_fn fn, void* user_data, dp_context* ctx) {
  std::shared_ptr<dp_context> ctx_ref(retain(ctx), [](dp_context* c) { release(c); });
  return [fn, user_data, ctx_ref](dp::Module& self, const std::vector<dp::Tensor>& inputs) {
    dp_context* ctx = ctx_ref.get();
    // Handles for the call: `self` and the inputs are borrowed by the callback.
    dp_module* self_handle = wrap(self.shared_from_this(), ctx);
    std::vector<dp_tensor*> in;
    std::vector<dp_tensor*> out(DP_MAX_OUTPUTS, nullptr);
    size_t n_out = 0;
    auto cleanup = [&] {
      for (dp_tensor* t : in) dp_tensor_release(t);
      release(self_handle);
    };
    // The forward's own errors only: a forward run inside this one (while it waits in a
    // library call) puts the thread's record back as it found it, and so does this one.
    ErrorRecordScope record;
    const uint64_t errors_before = error_count();
    dp_result r;
    try {
      in = wrap_all(inputs, ctx);
      r = fn(user_data, self_handle, in.data(), in.size(), out.data(), DP_MAX_OUTPUTS, &n_out);
    } catch (...) {
      cleanup();
      throw;
    }
    cleanup();
    std::vector<dp::Tensor> result;
    if (r == DP_OK && n_out > DP_MAX_OUTPUTS) {
      r = set_error(DP_ERR_CALLBACK, "reported " + std::to_string(n_out) + " outputs but at most " +
                                         std::to_string(DP_MAX_OUTPUTS) + " fit");
    }
    for (size_t i = 0; i < std::min<size_t>(n_out, DP_MAX_OUTPUTS); ++i) {
      if (r == DP_OK && (out[i] == nullptr || out[i]->tag != Tag::kTensor)) {
        r = set_error(DP_ERR_CALLBACK, "outputs[" + std::to_string(i) + "] is not a tensor");
      } else if (r == DP_OK && out[i]->ctx->rep != ctx->rep) {
        r = set_error(DP_ERR_CALLBACK, "outputs[" + std::to_string(i) +
                                           "] belongs to another dp_context than the module");
      }
      if (out[i] && out[i]->tag == Tag::kTensor) {
        if (r == DP_OK) result.push_back(out[i]->rep);
        dp_tensor_release(out[i]);
      }
    }
    if (r != DP_OK) raise_callback_error(r, self.type_name(), errors_before);
    return result;
  };
}

// Parameter or buffer `index` of the module's named list.
dp_result entry(const dp_module* m, size_t index, const char** name, dp_tensor** tensor,
                bool parameters) {
  return guard([&] {
    dp_module* h = check(m, "m");
    const auto [n, t] = parameters ? h->rep->named_parameter(index) : h->rep->named_buffer(index);
    // Both made before either is stored: a failure leaves the out-params untouched.
    const char* interned = name ? h->intern(n) : nullptr;
    dp_tensor* handle = tensor ? wrap(t, h->ctx) : nullptr;
    if (name) *name = interned;
    if (tensor) *tensor = handle;
  });
}

// A checkpoint's optimizer (NULL for none), which must be of the module's context.
dp::Optimizer* opt_in(const dp_module* m, const dp_optimizer* opt) {
  if (!opt) return nullptr;
  const dp_optimizer* o = check(opt, "opt");
  check_same_context(m->ctx, "m", o->ctx, "opt");
  return o->rep.get();
}

}  // namespace

extern "C" {

dp_result dp_module_linear(dp_context* ctx, int64_t in_features, int64_t out_features, int bias,
                           dp_device device, dp_module** out) {
  return make(ctx, out, [&](const auto& c) {
    return std::make_shared<dp::Linear>(c, in_features, out_features, bias != 0, to_core(device));
  });
}

dp_result dp_module_conv2d(dp_context* ctx, int64_t in_channels, int64_t out_channels,
                           int32_t kernel_h, int32_t kernel_w, int32_t stride_h, int32_t stride_w,
                           int32_t pad_h, int32_t pad_w, int bias, dp_device device,
                           dp_module** out) {
  return make(ctx, out, [&](const auto& c) {
    return std::make_shared<dp::Conv2d>(c, in_channels, out_channels, kernel_h, kernel_w, stride_h,
                                        stride_w, pad_h, pad_w, bias != 0, to_core(device));
  });
}

dp_result dp_module_relu(dp_context* ctx, dp_module** out) {
  return make(ctx, out, [](const auto& c) {
    return std::make_shared<dp::Activation>(c, dp::UnaryOp::kRelu);
  });
}
dp_result dp_module_gelu(dp_context* ctx, dp_module** out) {
  return make(ctx, out, [](const auto& c) {
    return std::make_shared<dp::Activation>(c, dp::UnaryOp::kGelu);
  });
}
dp_result dp_module_tanh(dp_context* ctx, dp_module** out) {
  return make(ctx, out, [](const auto& c) {
    return std::make_shared<dp::Activation>(c, dp::UnaryOp::kTanh);
  });
}
dp_result dp_module_sigmoid(dp_context* ctx, dp_module** out) {
  return make(ctx, out, [](const auto& c) {
    return std::make_shared<dp::Activation>(c, dp::UnaryOp::kSigmoid);
  });
}
dp_result dp_module_dropout(dp_context* ctx, double p, dp_module** out) {
  return make(ctx, out, [&](const auto& c) { return std::make_shared<dp::Dropout>(c, p); });
}
dp_result dp_module_batchnorm1d(dp_context* ctx, int64_t num_features, double eps, double momentum,
                                dp_device device, dp_module** out) {
  return make(ctx, out, [&](const auto& c) {
    return std::make_shared<dp::BatchNorm>(c, 1, num_features, eps, momentum, to_core(device));
  });
}
dp_result dp_module_batchnorm2d(dp_context* ctx, int64_t num_features, double eps, double momentum,
                                dp_device device, dp_module** out) {
  return make(ctx, out, [&](const auto& c) {
    return std::make_shared<dp::BatchNorm>(c, 2, num_features, eps, momentum, to_core(device));
  });
}
dp_result dp_module_maxpool2d(dp_context* ctx, int32_t kernel_h, int32_t kernel_w, int32_t stride_h,
                              int32_t stride_w, int32_t pad_h, int32_t pad_w, dp_module** out) {
  return make(ctx, out, [&](const auto& c) {
    return std::make_shared<dp::Pool2d>(c, dp::PoolKind::kMax, kernel_h, kernel_w, stride_h,
                                        stride_w, pad_h, pad_w);
  });
}
dp_result dp_module_avgpool2d(dp_context* ctx, int32_t kernel_h, int32_t kernel_w, int32_t stride_h,
                              int32_t stride_w, int32_t pad_h, int32_t pad_w, dp_module** out) {
  return make(ctx, out, [&](const auto& c) {
    return std::make_shared<dp::Pool2d>(c, dp::PoolKind::kAvg, kernel_h, kernel_w, stride_h,
                                        stride_w, pad_h, pad_w);
  });
}
dp_result dp_module_flatten(dp_context* ctx, int32_t start_dim, int32_t end_dim, dp_module** out) {
  return make(ctx, out,
              [&](const auto& c) { return std::make_shared<dp::Flatten>(c, start_dim, end_dim); });
}
dp_result dp_module_embedding(dp_context* ctx, int64_t num_embeddings, int64_t embedding_dim,
                              dp_device device, dp_module** out) {
  return make(ctx, out, [&](const auto& c) {
    return std::make_shared<dp::Embedding>(c, num_embeddings, embedding_dim, to_core(device));
  });
}
dp_result dp_module_sequential(dp_context* ctx, dp_module** out) {
  return make(ctx, out, [](const auto& c) { return std::make_shared<dp::Sequential>(c); });
}

dp_result dp_module_append(dp_module* sequential, dp_module* child) {
  return guard([&] {
    dp_module* s = check(sequential, "sequential");
    dp_module* c = check(child, "child");
    check_same_context(s->ctx, "sequential", c->ctx, "child");
    auto* seq = dynamic_cast<dp::Sequential*>(s->rep.get());
    DP_CHECK(seq != nullptr, kInvalidArgument,
             "sequential is a " << s->rep->type_name() << ", not a Sequential");
    seq->append(c->rep);
  });
}

dp_result dp_module_custom(dp_context* ctx, const dp_custom_module_desc* desc, dp_module** out) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    out_ptr(out, "out");
    DP_CHECK(desc != nullptr, kInvalidArgument, "desc is NULL");
    const dp_custom_module_desc d =
        read_options(desc, dp_custom_module_desc DP_CUSTOM_MODULE_DESC_INIT, "desc",
                     {"dp_custom_module_desc", "DP_CUSTOM_MODULE_DESC_INIT",
                      offsetof(dp_custom_module_desc, type_name)});
    DP_CHECK(d.forward != nullptr, kInvalidArgument, "desc->forward is NULL");
    const std::string type = d.type_name ? d.type_name : "Custom";
    auto module = std::make_shared<dp::CallbackModule>(
        c, type, callback_forward(d.forward, d.user_data, ctx), nullptr);
    // destroy runs with the last copy of the module (replicas included), and never when
    // this call fails: the deleter only fires once `armed` is set, at the very end.
    auto armed = std::make_shared<bool>(false);
    void (*destroy)(void*) = d.destroy;
    std::shared_ptr<void> state(d.user_data, [destroy, armed](void* p) {
      if (*armed && destroy) destroy(p);
    });
    dp_module* handle = wrap(module, ctx);
    module->set_user_state(std::move(state));
    *armed = true;
    *out = handle;
  });
}

dp_result dp_module_register_parameter(dp_module* m, const char* name, dp_tensor* t) {
  return guard([&] {
    dp_module* h = check(m, "m");
    h->rep->register_parameter(str_arg(name, "name"), unwrap_in(h->ctx, "m", t, "t"));
  });
}

dp_result dp_module_register_buffer(dp_module* m, const char* name, dp_tensor* t) {
  return guard([&] {
    dp_module* h = check(m, "m");
    h->rep->register_buffer(str_arg(name, "name"), unwrap_in(h->ctx, "m", t, "t"));
  });
}

dp_result dp_module_register_child(dp_module* m, const char* name, dp_module* child) {
  return guard([&] {
    dp_module* parent = check(m, "m");
    dp_module* c = check(child, "child");
    check_same_context(parent->ctx, "m", c->ctx, "child");
    parent->rep->register_module(str_arg(name, "name"), c->rep);
  });
}

dp_result dp_module_forward(dp_module* m, dp_tensor* const* inputs, size_t n_inputs,
                            dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  return guard([&] {
    dp_module* h = check(m, "m");
    DP_CHECK(inputs != nullptr || n_inputs == 0, kInvalidArgument,
             "inputs is NULL but n_inputs = " << n_inputs);
    check_outputs(outputs, capacity, n_outputs);
    std::vector<dp::Tensor> in = unwrap_tensors(inputs, n_inputs, "inputs", h->ctx, "m");
    hand_out((*h->rep)(in), h->ctx, outputs, capacity, n_outputs, "the module returned");
  });
}

dp_result dp_module_forward1(dp_module* m, dp_tensor* input, dp_tensor** output) {
  return guard([&] {
    dp_module* h = check(m, "m");
    const dp::Tensor& x = unwrap_in(h->ctx, "m", input, "input");
    out_ptr(output, "output");
    std::vector<dp::Tensor> result = (*h->rep)({x});
    DP_CHECK(result.size() == 1, kOutOfRange,
             "the module returned " << result.size() << " outputs; use dp_module_forward");
    *output = wrap(result[0], h->ctx);
  });
}

dp_module* dp_module_retain(dp_module* m) {
  if (m) m->refs.fetch_add(1, std::memory_order_relaxed);
  return m;
}

void dp_module_release(dp_module* m) {
  release(m);
}

dp_result dp_module_type_name(const dp_module* m, const char** out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(m, "m").type_name().c_str(); });
}

dp_result dp_module_train(dp_module* m, int training) {
  return guard([&] { unwrap(m, "m").train(training != 0); });
}

dp_result dp_module_is_training(const dp_module* m, int* out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(m, "m").is_training() ? 1 : 0; });
}

dp_result dp_module_to(dp_module* m, dp_device device) {
  return guard([&] { unwrap(m, "m").to(to_core(device)); });
}

dp_result dp_module_zero_grad(dp_module* m) {
  return guard([&] { unwrap(m, "m").zero_grad(); });
}

dp_result dp_module_parameter_count(const dp_module* m, size_t* out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(m, "m").named_parameters().size(); });
}

dp_result dp_module_parameter(const dp_module* m, size_t index, const char** name,
                              dp_tensor** tensor) {
  return entry(m, index, name, tensor, true);
}

dp_result dp_module_buffer_count(const dp_module* m, size_t* out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(m, "m").named_buffers().size(); });
}

dp_result dp_module_buffer(const dp_module* m, size_t index, const char** name,
                           dp_tensor** tensor) {
  return entry(m, index, name, tensor, false);
}

dp_result dp_module_get(const dp_module* m, const char* name, dp_tensor** tensor) {
  return guard([&] {
    dp_module* h = check(m, "m");
    const std::string n = str_arg(name, "name");
    out_ptr(tensor, "tensor");
    *tensor = wrap(h->rep->get(n), h->ctx);
  });
}

dp_result dp_module_save(const dp_module* m, const char* path) {
  return guard([&] { dp::save_module(unwrap(m, "m"), str_arg(path, "path")); });
}

dp_result dp_module_load(dp_module* m, const char* path) {
  return guard([&] { dp::load_module(unwrap(m, "m"), str_arg(path, "path")); });
}

dp_result dp_checkpoint_save(const dp_module* m, const dp_optimizer* opt, const char* path,
                             const dp_metadata_entry* metadata, size_t n_metadata) {
  return guard([&] {
    const dp_module* h = check(m, "m");
    const dp::Module& module = *h->rep;
    const dp::Optimizer* o = opt_in(h, opt);
    const auto meta = to_metadata(metadata, n_metadata);  // checked before path, as always
    dp::save_checkpoint(module, o, str_arg(path, "path"), meta);
  });
}

dp_result dp_checkpoint_load(dp_module* m, dp_optimizer* opt, const char* path) {
  return guard([&] {
    const dp_module* h = check(m, "m");
    dp::Module& module = *h->rep;
    dp::Optimizer* o = opt_in(h, opt);
    dp::load_checkpoint(module, o, str_arg(path, "path"), nullptr);
  });
}

dp_result dp_checkpoint_metadata(const char* path, const char* key, char* buf, size_t buf_size,
                                 size_t* needed) {
  return guard([&] {
    const std::string p = str_arg(path, "path"), k = str_arg(key, "key");
    DP_CHECK(buf != nullptr || buf_size == 0, kInvalidArgument,
             "buf is NULL but buf_size = " << buf_size);
    const std::map<std::string, std::string> meta = dp::load_safetensors_metadata(p);
    auto it = meta.find(k);
    DP_CHECK(it != meta.end(), kOutOfRange, "\"" << p << "\" has no metadata \"" << k << "\"");
    DP_CHECK(
        it->second.find('\0') == std::string::npos, kFormat,
        "\"" << p << "\": metadata \"" << k << "\" holds a NUL character, which a C string cannot");
    if (needed) *needed = it->second.size() + 1;
    if (buf_size > 0) {
      const size_t n = std::min(it->second.size(), buf_size - 1);
      std::memcpy(buf, it->second.data(), n);
      buf[n] = '\0';
    }
  });
}

}  // extern "C"
