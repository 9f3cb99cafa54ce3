// dp_tensor_*: creation over library or caller memory, queries, copies.
#include <cstring>

#include "capi/handles.h"
#include "capi/result.h"
#include "ops/ops.h"

using namespace dp::capi;

namespace {

// Common part of the creators that allocate: checks, then makes the tensor.
dp_result create(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                 dp_device device, dp_tensor** out,
                 const std::function<dp::Tensor(const std::shared_ptr<dp::Context>&,
                                                const dp::Shape&, dp::DType, dp::Device)>& make) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    out_ptr(out, "out");
    const dp::DType t = to_core(dtype, "dtype");
    const dp::Shape s = to_shape(shape, ndim, "shape");
    const dp::Device d = to_core(device);
    c->check_device(d, "device");
    *out = wrap(make(c, s, t, d), ctx);
  });
}

void check_nbytes(const dp::Shape& s, dp::DType t, size_t nbytes, const char* arg) {
  // The element count in bytes must fit before it is compared (2^62 int64s would wrap).
  const size_t want =
      static_cast<size_t>(dp::checked_numel(s, dp::dtype_size(t))) * dp::dtype_size(t);
  DP_CHECK(nbytes == want, kInvalidArgument,
           arg << " = " << nbytes << " but shape " << dp::shape_str(s) << " of "
               << dp::dtype_name(t) << " needs " << want << " bytes");
}

// Wraps caller memory. When adopting, `deleter` runs exactly once: on failure before the
// storage exists, or later by the storage.
dp_result wrap_external(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                        void* data, size_t nbytes, int32_t cpu_index, dp::Storage::Deleter deleter,
                        dp_tensor** out) {
  bool owned_by_storage = false;
  dp_result r = guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    out_ptr(out, "out");
    const dp::DType t = to_core(dtype, "dtype");
    const dp::Shape s = to_shape(shape, ndim, "shape");
    check_nbytes(s, t, nbytes, "nbytes");
    DP_CHECK(data != nullptr || nbytes == 0, kInvalidArgument, "data is NULL");
    DP_CHECK(reinterpret_cast<uintptr_t>(data) % dp::dtype_size(t) == 0, kInvalidArgument,
             "data = " << data << " is not aligned to " << dp::dtype_size(t) << " bytes");
    const dp::Device d = dp::cpu(cpu_index);
    c->check_device(d, "cpu_index");
    auto storage = std::make_shared<dp::Storage>(c, d, data, nbytes, deleter);
    owned_by_storage = true;
    storage->mark_exposed();  // the caller may keep writing it, past the version counter
    *out = wrap(dp::Tensor(std::make_shared<dp::TensorImpl>(std::move(storage), 0, s, t)), ctx);
  });
  if (r != DP_OK && !owned_by_storage && deleter) deleter(data);
  return r;
}

}  // namespace

extern "C" {

size_t dp_dtype_size(dp_dtype dtype) {
  switch (dtype) {
    case DP_FLOAT32:
      return 4;
    case DP_FLOAT64:
      return 8;
    case DP_INT64:
      return 8;
    case DP_BFLOAT16:
      return 2;
    default:
      return 0;
  }
}

dp_result dp_tensor_zeros(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                          dp_device device, dp_tensor** out) {
  return create(ctx, dtype, shape, ndim, device, out,
                [](const auto& c, const dp::Shape& s, dp::DType t, dp::Device d) {
                  return dp::ops::zeros(c, s, t, d);
                });
}

dp_result dp_tensor_empty(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                          dp_device device, dp_tensor** out) {
  return create(ctx, dtype, shape, ndim, device, out,
                [](const auto& c, const dp::Shape& s, dp::DType t, dp::Device d) {
                  return dp::ops::empty(c, s, t, d);
                });
}

dp_result dp_tensor_full(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                         double value, dp_device device, dp_tensor** out) {
  return create(ctx, dtype, shape, ndim, device, out,
                [value](const auto& c, const dp::Shape& s, dp::DType t, dp::Device d) {
                  return dp::ops::full(c, s, t, d, value);
                });
}

dp_result dp_tensor_from_data(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                              const void* data, size_t nbytes, dp_device device, dp_tensor** out) {
  return create(ctx, dtype, shape, ndim, device, out,
                [&](const auto& c, const dp::Shape& s, dp::DType t, dp::Device d) {
                  check_nbytes(s, t, nbytes, "nbytes");
                  DP_CHECK(data != nullptr || nbytes == 0, kInvalidArgument, "data is NULL");
                  return dp::ops::from_host(c, s, t, d, data);
                });
}

dp_result dp_tensor_from_borrowed(dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                  size_t ndim, void* data, size_t nbytes, int32_t cpu_index,
                                  dp_tensor** out) {
  return wrap_external(ctx, dtype, shape, ndim, data, nbytes, cpu_index, nullptr, out);
}

dp_result dp_tensor_from_adopted(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                                 void* data, size_t nbytes, int32_t cpu_index,
                                 dp_deleter_fn deleter, void* deleter_data, dp_tensor** out) {
  dp::Storage::Deleter d;
  if (deleter) d = [deleter, deleter_data](void* p) { deleter(deleter_data, p); };
  return wrap_external(ctx, dtype, shape, ndim, data, nbytes, cpu_index, std::move(d), out);
}

dp_tensor* dp_tensor_retain(dp_tensor* t) {
  if (t) t->refs.fetch_add(1, std::memory_order_relaxed);
  return t;
}

void dp_tensor_release(dp_tensor* t) {
  if (t && t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    dp_context* ctx = t->ctx;
    t->tag = Tag::kDead;
    delete t;
    release(ctx);
  }
}

dp_result dp_tensor_dtype(const dp_tensor* t, dp_dtype* out) {
  return guard([&] { *out_ptr(out, "out") = to_c(unwrap(t, "t").dtype()); });
}

dp_result dp_tensor_ndim(const dp_tensor* t, size_t* out) {
  return guard([&] { *out_ptr(out, "out") = static_cast<size_t>(unwrap(t, "t").ndim()); });
}

dp_result dp_tensor_shape(const dp_tensor* t, int64_t* shape, size_t capacity) {
  return guard([&] { shape_out(unwrap(t, "t").shape(), shape, capacity); });
}

dp_result dp_tensor_dim(const dp_tensor* t, int32_t dim, int64_t* out) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    out_ptr(out, "out");
    DP_CHECK(x.ndim() > 0, kOutOfRange, "dim = " << dim << " but the tensor is 0-dimensional");
    *out = x.shape()[dp::wrap_dim(dim, x.ndim(), "dim")];
  });
}

dp_result dp_tensor_numel(const dp_tensor* t, int64_t* out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(t, "t").numel(); });
}

dp_result dp_tensor_nbytes(const dp_tensor* t, size_t* out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(t, "t").nbytes(); });
}

dp_result dp_tensor_context(const dp_tensor* t, dp_context** out) {
  return guard([&] {
    unwrap(t, "t");
    dp_context** slot = out_ptr(out, "out");  // checked before the reference is taken
    *slot = retain(t->ctx);
  });
}

dp_result dp_tensor_device(const dp_tensor* t, dp_device* out) {
  return guard([&] { *out_ptr(out, "out") = to_c(unwrap(t, "t").device()); });
}

dp_result dp_tensor_to_host(const dp_tensor* t, void* dst, size_t dst_bytes) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    DP_CHECK(dst_bytes == x.nbytes(), kInvalidArgument,
             "dst_bytes = " << dst_bytes << " but the tensor holds " << x.nbytes() << " bytes");
    DP_CHECK(dst != nullptr || dst_bytes == 0, kInvalidArgument, "dst is NULL");
    dp::ops::to_host(x, dst);
  });
}

dp_result dp_tensor_copy_from_host(dp_tensor* t, const void* src, size_t src_bytes) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    DP_CHECK(src_bytes == x.nbytes(), kInvalidArgument,
             "src_bytes = " << src_bytes << " but the tensor holds " << x.nbytes() << " bytes");
    DP_CHECK(src != nullptr || src_bytes == 0, kInvalidArgument, "src is NULL");
    dp::ops::copy_from_host(x, src);
  });
}

dp_result dp_tensor_to_device(const dp_tensor* t, dp_device device, dp_tensor** out) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    out_ptr(out, "out");
    *out = wrap(dp::ops::to_device(x, to_core(device)), t->ctx);
  });
}

dp_result dp_tensor_to_dtype(const dp_tensor* t, dp_dtype dtype, dp_tensor** out) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    out_ptr(out, "out");
    *out = wrap(dp::ops::to_dtype(x, to_core(dtype, "dtype")), t->ctx);
  });
}

dp_result dp_tensor_data(const dp_tensor* t, void** out) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    out_ptr(out, "out");
    DP_CHECK(x.device().is_cpu(), kDeviceMismatch,
             "dp_tensor_data needs a CPU tensor, but t is on " << x.device().str());
    x.impl()->storage->mark_exposed();  // writes through the address bypass the version
    *out = x.data();
  });
}

dp_result dp_tensor_version(const dp_tensor* t, uint64_t* out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(t, "t").version(); });
}

}  // extern "C"
