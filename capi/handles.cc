#include "capi/handles.h"

namespace dp::capi {

dp_context* retain(dp_context* ctx) {
  if (ctx) ctx->refs.fetch_add(1, std::memory_order_relaxed);
  return ctx;
}

void release(dp_context* ctx) {
  if (ctx && ctx->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    ctx->tag = Tag::kDead;
    delete ctx;
  }
}

dp_tensor* wrap(dp::Tensor t, dp_context* ctx) {
  auto* h = new dp_tensor;
  h->rep = std::move(t);
  h->ctx = retain(ctx);
  return h;
}

dp_module* wrap(std::shared_ptr<dp::Module> m, dp_context* ctx) {
  auto* h = new dp_module;
  h->rep = std::move(m);
  h->ctx = retain(ctx);
  return h;
}

void release(dp_module* m) {
  if (m && m->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    dp_context* ctx = m->ctx;
    m->tag = Tag::kDead;
    delete m;
    release(ctx);
  }
}

dp_module* check(const dp_module* h, const char* arg) {
  DP_CHECK(h != nullptr, kInvalidArgument, arg << " is NULL");
  DP_CHECK(h->tag == Tag::kModule, kInvalidArgument,
           arg << " is not a live dp_module handle (released, or another kind of handle)");
  return const_cast<dp_module*>(h);
}

dp_optimizer* check(const dp_optimizer* h, const char* arg) {
  DP_CHECK(h != nullptr, kInvalidArgument, arg << " is NULL");
  DP_CHECK(h->tag == Tag::kOptimizer, kInvalidArgument,
           arg << " is not a live dp_optimizer handle (released, or another kind of handle)");
  return const_cast<dp_optimizer*>(h);
}

dp_data_parallel* check(const dp_data_parallel* h, const char* arg) {
  DP_CHECK(h != nullptr, kInvalidArgument, arg << " is NULL");
  DP_CHECK(h->tag == Tag::kDataParallel, kInvalidArgument,
           arg << " is not a live dp_data_parallel handle (released, or another kind of handle)");
  return const_cast<dp_data_parallel*>(h);
}

std::vector<dp::Device> to_devices(const dp_device* devices, size_t n, const char* arg) {
  DP_CHECK(devices != nullptr || n == 0, kInvalidArgument,
           arg << " is NULL but its count is " << n);
  std::vector<dp::Device> out;
  for (size_t i = 0; i < n; ++i) out.push_back(to_core(devices[i]));
  return out;
}

namespace {

template <class Handle, class T, class Release>
std::vector<Handle*> wrap_each(const std::vector<T>& objects, dp_context* ctx, Release release) {
  std::vector<Handle*> handles;
  // Reserved first: a push_back that reallocated could throw after its wrap succeeded,
  // leaving that handle (and its context reference) held by nobody.
  handles.reserve(objects.size());
  try {
    for (const T& o : objects) handles.push_back(wrap(o, ctx));
  } catch (...) {
    for (Handle* h : handles) release(h);
    throw;
  }
  return handles;
}

}  // namespace

std::vector<dp_tensor*> wrap_all(const std::vector<dp::Tensor>& ts, dp_context* ctx) {
  return wrap_each<dp_tensor>(ts, ctx, dp_tensor_release);
}

std::vector<dp_module*> wrap_all(const std::vector<std::shared_ptr<dp::Module>>& ms,
                                 dp_context* ctx) {
  return wrap_each<dp_module>(ms, ctx, [](dp_module* m) { release(m); });
}

dp_context* check(const dp_context* h, const char* arg) {
  DP_CHECK(h != nullptr, kInvalidArgument, arg << " is NULL");
  DP_CHECK(h->tag == Tag::kContext, kInvalidArgument,
           arg << " is not a live dp_context handle (released, or another kind of handle)");
  return const_cast<dp_context*>(h);
}

dp_tensor* check(const dp_tensor* h, const char* arg) {
  DP_CHECK(h != nullptr, kInvalidArgument, arg << " is NULL");
  DP_CHECK(h->tag == Tag::kTensor, kInvalidArgument,
           arg << " is not a live dp_tensor handle (released, or another kind of handle)");
  return const_cast<dp_tensor*>(h);
}

void check_same_context(const dp_context* ctx, const char* owner, const dp_context* other,
                        const char* arg) {
  DP_CHECK(other->rep == ctx->rep, kInvalidArgument,
           arg << " belongs to another dp_context than " << owner
               << " (objects of two contexts cannot be used together)");
}

dp::Device to_core(dp_device d) {
  return dp::Device{static_cast<dp::DeviceType>(d.type), static_cast<int>(d.index)};
}

dp_device to_c(dp::Device d) {
  return dp_device{static_cast<dp_device_type>(d.type), static_cast<int32_t>(d.index)};
}

dp::DType to_core(dp_dtype t, const char* arg) {
  DP_CHECK(t == DP_FLOAT32 || t == DP_FLOAT64 || t == DP_INT64, kInvalidArgument,
           arg << " = " << static_cast<int>(t)
               << " is not a dtype (DP_FLOAT32 = 0, DP_FLOAT64 = 1, DP_INT64 = 2)");
  return static_cast<dp::DType>(t);
}

dp_dtype to_c(dp::DType t) {
  return static_cast<dp_dtype>(t);
}

dp::Shape to_shape(const int64_t* shape, size_t ndim, const char* arg) {
  DP_CHECK(ndim <= static_cast<size_t>(dp::kMaxDims), kOutOfRange,
           "ndim = " << ndim << " but at most " << dp::kMaxDims << " dimensions are supported");
  DP_CHECK(shape != nullptr || ndim == 0, kInvalidArgument, arg << " is NULL but ndim = " << ndim);
  dp::Shape s(shape, shape + ndim);
  dp::checked_numel(s, 1, arg);
  return s;
}

}  // namespace dp::capi
