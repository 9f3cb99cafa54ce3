#include "capi/handles.h"

#include <algorithm>
#include <cstddef>

#include "capi/options.h"

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

dp_process_group* check(const dp_process_group* h, const char* arg) {
  DP_CHECK(h != nullptr, kInvalidArgument, arg << " is NULL");
  DP_CHECK(h->tag == Tag::kProcessGroup, kInvalidArgument,
           arg << " is not a live dp_process_group handle (released, or another kind of handle)");
  return const_cast<dp_process_group*>(h);
}

dp_ddp* check(const dp_ddp* h, const char* arg) {
  DP_CHECK(h != nullptr, kInvalidArgument, arg << " is NULL");
  DP_CHECK(h->tag == Tag::kDdp, kInvalidArgument,
           arg << " is not a live dp_ddp handle (released, or another kind of handle)");
  return const_cast<dp_ddp*>(h);
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

std::vector<dp::Device> to_device_ids(const dp_device* device_ids, size_t n) {
  DP_CHECK(device_ids == nullptr || n > 0, kInvalidArgument,
           "device_ids is empty (n_devices = 0); pass NULL for every device");
  return to_devices(device_ids, n, "device_ids");
}

void devices_out(const std::vector<dp::Device>& ds, dp_device* devices, size_t capacity) {
  DP_CHECK(devices != nullptr || capacity == 0, kInvalidArgument,
           "devices is NULL but capacity = " << capacity);
  for (size_t i = 0; i < ds.size() && i < capacity; ++i) devices[i] = to_c(ds[i]);
}

std::vector<dp::Tensor> unwrap_tensors(const dp_tensor* const* handles, size_t n, const char* arg,
                                       const dp_context* ctx, const char* owner) {
  DP_CHECK(handles != nullptr || n == 0, kInvalidArgument,
           arg << " is NULL but its count is " << n);
  std::vector<dp::Tensor> out;
  std::string first;  // names handles[0] when its context is the one the rest share
  for (size_t i = 0; i < n; ++i) {
    const std::string name = std::string(arg) + "[" + std::to_string(i) + "]";
    if (i == 0 && ctx == nullptr) {
      out.push_back(unwrap(handles[0], name.c_str()));
      ctx = handles[0]->ctx;
      first = owner ? owner : name;
      owner = first.c_str();
    } else {
      out.push_back(unwrap_in(ctx, owner, handles[i], name.c_str()));
    }
  }
  return out;
}

std::vector<std::vector<dp::Tensor>> unwrap_tensor_rows(const dp_tensor* const* handles,
                                                        size_t rows, size_t per_row,
                                                        const char* arg, const dp_context* ctx,
                                                        const char* owner) {
  size_t total = 0;
  DP_CHECK(!__builtin_mul_overflow(rows, per_row, &total), kInvalidArgument,
           "inputs_per_replica = " << per_row << " times n = " << rows << " overflows");
  std::vector<dp::Tensor> flat = unwrap_tensors(handles, total, arg, ctx, owner);
  std::vector<std::vector<dp::Tensor>> out(rows);
  for (size_t i = 0; i < rows; ++i) {
    out[i].assign(flat.begin() + i * per_row, flat.begin() + (i + 1) * per_row);
  }
  return out;
}

std::vector<std::shared_ptr<dp::Module>> unwrap_modules(dp_module* const* handles, size_t n,
                                                        const char* arg) {
  DP_CHECK(handles != nullptr || n == 0, kInvalidArgument, arg << " is NULL but n = " << n);
  DP_CHECK(n > 0, kInvalidArgument, arg << " is empty (n = 0)");
  const std::string first = std::string(arg) + "[0]";
  const dp_context* ctx = check(handles[0], first.c_str())->ctx;
  std::vector<std::shared_ptr<dp::Module>> out;
  for (size_t i = 0; i < n; ++i) {
    const std::string name = std::string(arg) + "[" + std::to_string(i) + "]";
    const dp_module* m = check(handles[i], name.c_str());
    check_same_context(ctx, first.c_str(), m->ctx, name.c_str());
    out.push_back(m->rep);
  }
  return out;
}

std::vector<bool> to_flags(const int* flags, size_t n) {
  std::vector<bool> out;
  if (flags) out.assign(flags, flags + n);
  return out;
}

void check_outputs(dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  out_ptr(n_outputs, "n_outputs");
  DP_CHECK(outputs != nullptr || capacity == 0, kInvalidArgument,
           "outputs is NULL but capacity = " << capacity);
}

void hand_out(const std::vector<dp::Tensor>& ts, dp_context* ctx, dp_tensor** outputs,
              size_t capacity, size_t* n_outputs, const char* source) {
  check_outputs(outputs, capacity, n_outputs);
  DP_CHECK(ts.size() <= capacity, kOutOfRange,
           source << " " << ts.size() << " outputs but capacity = " << capacity);
  wrap_into(ts, ctx, outputs);
  *n_outputs = ts.size();
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

void wrap_into(const std::vector<dp::Tensor>& ts, dp_context* ctx, dp_tensor** out) {
  std::vector<dp_tensor*> handles = wrap_all(ts, ctx);
  std::copy(handles.begin(), handles.end(), out);
}

void wrap_into(const std::vector<std::shared_ptr<dp::Module>>& ms, dp_context* ctx,
               dp_module** out) {
  std::vector<dp_module*> handles = wrap_all(ms, ctx);
  std::copy(handles.begin(), handles.end(), out);
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
  DP_CHECK(
      t == DP_FLOAT32 || t == DP_FLOAT64 || t == DP_INT64 || t == DP_BFLOAT16, kInvalidArgument,
      arg << " = " << static_cast<int>(t)
          << " is not a dtype (DP_FLOAT32 = 0, DP_FLOAT64 = 1, DP_INT64 = 2, DP_BFLOAT16 = 3)");
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

void shape_out(const dp::Shape& s, int64_t* shape, size_t capacity) {
  DP_CHECK(capacity >= s.size(), kOutOfRange,
           "capacity = " << capacity << " but the tensor has " << s.size() << " dimensions");
  DP_CHECK(shape != nullptr || s.empty(), kInvalidArgument, "shape is NULL");
  std::copy(s.begin(), s.end(), shape);
}

std::map<std::string, std::string> to_metadata(const dp_metadata_entry* metadata, size_t n) {
  DP_CHECK(metadata != nullptr || n == 0, kInvalidArgument,
           "metadata is NULL but n_metadata = " << n);
  std::map<std::string, std::string> meta;
  for (size_t i = 0; i < n; ++i) {
    const std::string idx = "metadata[" + std::to_string(i) + "]";
    meta[str_arg(metadata[i].key, (idx + ".key").c_str())] =
        str_arg(metadata[i].value, (idx + ".value").c_str());
  }
  return meta;
}

dp::DataParallelOptions data_parallel_options(const dp_data_parallel_options* options,
                                              const char* arg) {
  const dp_data_parallel_options o =
      read_options(options, dp_data_parallel_options DP_DATA_PARALLEL_OPTIONS_INIT, arg,
                   {"dp_data_parallel_options", "DP_DATA_PARALLEL_OPTIONS_INIT",
                    offsetof(dp_data_parallel_options, chunk_sizes)});
  DP_CHECK(o.chunk_sizes != nullptr || o.n_chunk_sizes == 0, kInvalidArgument,
           arg << "->chunk_sizes is NULL but n_chunk_sizes = " << o.n_chunk_sizes);
  DP_CHECK(
      o.buffer_sync == DP_BUFFER_SYNC_NONE || o.buffer_sync == DP_BUFFER_SYNC_AVERAGE,
      kInvalidArgument,
      arg << "->buffer_sync = " << static_cast<int>(o.buffer_sync) << " is not a dp_buffer_sync");
  dp::DataParallelOptions dpo;
  if (o.chunk_sizes) dpo.chunk_sizes.assign(o.chunk_sizes, o.chunk_sizes + o.n_chunk_sizes);
  dpo.no_gather = o.no_gather != 0;
  dpo.cache_replicas = o.cache_replicas != 0;
  dpo.buffer_sync =
      o.buffer_sync == DP_BUFFER_SYNC_AVERAGE ? dp::BufferSync::kAverage : dp::BufferSync::kNone;
  dpo.alias_cpu = o.alias_cpu != 0;
  if (o.bucket_bytes) dpo.bucket_bytes = o.bucket_bytes;
  DP_CHECK(o.grad_reduce_dtype == DP_FLOAT32 || o.grad_reduce_dtype == DP_BFLOAT16,
           kInvalidArgument,
           arg << "->grad_reduce_dtype = " << static_cast<int>(o.grad_reduce_dtype)
               << " is neither DP_FLOAT32 (0) nor DP_BFLOAT16 (3)");
  dpo.grad_reduce_dtype = to_core(o.grad_reduce_dtype, "grad_reduce_dtype");
  return dpo;
}

}  // namespace dp::capi
