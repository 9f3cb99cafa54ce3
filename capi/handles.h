// The C handles: each is a small struct holding the C++ object (as LevelDB's c.cc does),
// a reference count where the handle can be shared, and a tag that lets every entry
// point reject a pointer that is not a live handle of the expected kind.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "context/context.h"
#include "dataparallel/dataparallel.h"
#include "distributed/ddp.h"
#include "distributed/process_group.h"
#include "error.h"
#include "nn/module.h"
#include "optim/optimizer.h"
#include "parallel/data_parallel.h"
#include "tensor/tensor.h"

namespace dp::capi {

enum class Tag : uint32_t {
  kContext = 0x44504358,  // "DPCX"
  kTensor = 0x44505453,   // "DPTS"
  kModule = 0x44504d44,   // "DPMD"
  kOptimizer = 0x44504f50,
  kDataParallel = 0x44504450,
  kProcessGroup = 0x44505047,  // "DPPG"
  kDdp = 0x44504444,           // "DPDD"
  kDead = 0xdeadbeef,
};

}  // namespace dp::capi

struct dp_context {
  dp::capi::Tag tag = dp::capi::Tag::kContext;
  std::atomic<int> refs{1};
  std::shared_ptr<dp::Context> rep;
};

struct dp_tensor {
  dp::capi::Tag tag = dp::capi::Tag::kTensor;
  std::atomic<int> refs{1};
  dp::Tensor rep;
  dp_context* ctx = nullptr;  // one reference, dropped with the handle
};

struct dp_module {
  dp::capi::Tag tag = dp::capi::Tag::kModule;
  std::atomic<int> refs{1};
  std::shared_ptr<dp::Module> rep;
  dp_context* ctx = nullptr;
  // Parameter and buffer names handed out as const char*: interned here so the pointers
  // stay valid while the handle lives (the header promises that much, not more).
  std::mutex names_mu;
  std::set<std::string> names;
  const char* intern(const std::string& name) {
    std::lock_guard<std::mutex> lock(names_mu);
    return names.insert(name).first->c_str();
  }
};

struct dp_data_parallel {
  dp::capi::Tag tag = dp::capi::Tag::kDataParallel;
  std::unique_ptr<dp::DataParallel> rep;
  dp_module* module = nullptr;  // one reference: what dp_data_parallel_module hands out
  dp_context* ctx = nullptr;
};

struct dp_process_group {
  dp::capi::Tag tag = dp::capi::Tag::kProcessGroup;
  std::shared_ptr<dp::ProcessGroup> rep;  // a DDP holds its own reference
  dp_context* ctx = nullptr;
};

struct dp_ddp {
  dp::capi::Tag tag = dp::capi::Tag::kDdp;
  std::unique_ptr<dp::DistributedDataParallel> rep;
  dp_module* module = nullptr;  // one reference: what dp_ddp_module hands out
  dp_context* ctx = nullptr;
};

struct dp_optimizer {
  dp::capi::Tag tag = dp::capi::Tag::kOptimizer;
  std::unique_ptr<dp::Optimizer> rep;
  dp_context* ctx = nullptr;
};

namespace dp::capi {

dp_context* retain(dp_context* ctx);
void release(dp_context* ctx);

// A new handle (one reference) for t, belonging to ctx.
dp_tensor* wrap(dp::Tensor t, dp_context* ctx);

dp_module* wrap(std::shared_ptr<dp::Module> m, dp_context* ctx);
void release(dp_module* m);

// The C++ object behind a handle; throws kInvalidArgument naming `arg` when the pointer
// is NULL or not a live handle of that kind.
dp_context* check(const dp_context* h, const char* arg);
dp_tensor* check(const dp_tensor* h, const char* arg);
dp_module* check(const dp_module* h, const char* arg);
dp_optimizer* check(const dp_optimizer* h, const char* arg);
dp_data_parallel* check(const dp_data_parallel* h, const char* arg);
dp_process_group* check(const dp_process_group* h, const char* arg);
dp_ddp* check(const dp_ddp* h, const char* arg);

// A dp_data_parallel_options read by struct_size and checked, named `arg` in errors
// (NULL: the defaults).
dp::DataParallelOptions data_parallel_options(const dp_data_parallel_options* options,
                                              const char* arg);

// --- arrays in and out: every C array argument passes through one of these ---

// n devices from a C array (NULL with n == 0 allowed), named `arg` in errors.
std::vector<dp::Device> to_devices(const dp_device* devices, size_t n, const char* arg);
// A DataParallel's device_ids: NULL (with n == 0) for every device (an empty list), else
// n > 0 devices (a non-NULL empty list is kInvalidArgument).
std::vector<dp::Device> to_device_ids(const dp_device* device_ids, size_t n);
// devices[0..min(capacity, ds.size())) from ds (devices NULL only with capacity 0).
void devices_out(const std::vector<dp::Device>& ds, dp_device* devices, size_t capacity);
// handles[0..n) (NULL with n == 0 allowed), named arg[i] in errors, each of ctx, the
// context of the argument named `owner`; with ctx NULL, each of handles[0]'s context,
// handles[0] being named `owner` in those errors (arg[0] when owner is NULL).
std::vector<dp::Tensor> unwrap_tensors(const dp_tensor* const* handles, size_t n, const char* arg,
                                       const dp_context* ctx, const char* owner);
// unwrap_tensors of rows * per_row handles, cut into `rows` lists of per_row each
// (dp_parallel_apply's inputs, replica by replica); kInvalidArgument if the count overflows.
std::vector<std::vector<dp::Tensor>> unwrap_tensor_rows(const dp_tensor* const* handles,
                                                        size_t rows, size_t per_row,
                                                        const char* arg, const dp_context* ctx,
                                                        const char* owner);
// handles[0..n) as modules, named arg[i], all of handles[0]'s context; n must be > 0.
std::vector<std::shared_ptr<dp::Module>> unwrap_modules(dp_module* const* handles, size_t n,
                                                        const char* arg);
// Flags from a C int array (none when flags is NULL).
std::vector<bool> to_flags(const int* flags, size_t n);
// Wraps tensors (or modules) into new handles, or none: if one wrap fails, the handles
// made so far are released before the exception goes on.
std::vector<dp_tensor*> wrap_all(const std::vector<dp::Tensor>& ts, dp_context* ctx);
std::vector<dp_module*> wrap_all(const std::vector<std::shared_ptr<dp::Module>>& ms,
                                 dp_context* ctx);
// wrap_all into out[0..objects.size()): the caller checked that they fit.
void wrap_into(const std::vector<dp::Tensor>& ts, dp_context* ctx, dp_tensor** out);
void wrap_into(const std::vector<std::shared_ptr<dp::Module>>& ms, dp_context* ctx,
               dp_module** out);
// An output array and its count pointer, checked before anything runs.
void check_outputs(dp_tensor** outputs, size_t capacity, size_t* n_outputs);
// Hands `ts` out through outputs[0..capacity) and *n_outputs; more than capacity is
// kOutOfRange, "<source> N outputs but capacity = C" ("there are", "the module returned").
void hand_out(const std::vector<dp::Tensor>& ts, dp_context* ctx, dp_tensor** outputs,
              size_t capacity, size_t* n_outputs, const char* source = "there are");
inline const std::shared_ptr<dp::Context>& unwrap(const dp_context* h, const char* arg) {
  return check(h, arg)->rep;
}
inline const dp::Tensor& unwrap(const dp_tensor* h, const char* arg) {
  return check(h, arg)->rep;
}
inline dp::Module& unwrap(const dp_module* h, const char* arg) {
  return *check(h, arg)->rep;
}
// NULL allowed: an undefined tensor (optional arguments such as a bias).
inline dp::Tensor unwrap_optional(const dp_tensor* h, const char* arg) {
  return h ? check(h, arg)->rep : dp::Tensor();
}

// Objects of two contexts are never used together: each context has its own workers and
// memory and, on a GPU, its own streams, which nothing orders against another context's.
// Throws kInvalidArgument naming `arg` unless `other` is `ctx`, the context of the
// argument named `owner`.
void check_same_context(const dp_context* ctx, const char* owner, const dp_context* other,
                        const char* arg);
// unwrap and unwrap_optional for an argument that must belong to ctx (owner's context).
inline const dp::Tensor& unwrap_in(const dp_context* ctx, const char* owner, const dp_tensor* h,
                                   const char* arg) {
  const dp_tensor* t = check(h, arg);
  check_same_context(ctx, owner, t->ctx, arg);
  return t->rep;
}
inline dp::Tensor unwrap_optional_in(const dp_context* ctx, const char* owner, const dp_tensor* h,
                                     const char* arg) {
  return h ? unwrap_in(ctx, owner, h, arg) : dp::Tensor();
}
// A C string argument that must not be NULL.
inline std::string str_arg(const char* s, const char* arg) {
  DP_CHECK(s != nullptr, kInvalidArgument, arg << " is NULL");
  return s;
}

// Checks an output pointer and returns it.
template <class T>
T* out_ptr(T* p, const char* arg) {
  DP_CHECK(p != nullptr, kInvalidArgument, arg << " is NULL");
  return p;
}

dp::Device to_core(dp_device d);
dp_device to_c(dp::Device d);
dp::DType to_core(dp_dtype t, const char* arg);
dp_dtype to_c(dp::DType t);
// shape[0..ndim) as a Shape, checking the pointer, ndim and every size.
dp::Shape to_shape(const int64_t* shape, size_t ndim, const char* arg);
// s into shape[0..capacity) (kOutOfRange when it has more dimensions than capacity).
void shape_out(const dp::Shape& s, int64_t* shape, size_t capacity);
// metadata[0..n) as a map; NULL only with n == 0, every key and value non-NULL.
std::map<std::string, std::string> to_metadata(const dp_metadata_entry* metadata, size_t n);

}  // namespace dp::capi
