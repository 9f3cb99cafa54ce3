/*
 * libdataparallel: data-parallel training behind a C ABI.
 *
 * This is the one public header. It compiles as C99 and as C++ and includes no CUDA or
 * C++ headers. SWIG reads it to generate the Python and Java bindings.
 *
 * Conventions
 * -----------
 * - Every fallible function returns a dp_result; DP_OK (0) is success. On failure
 *   dp_last_error() returns a message for the calling thread that names the bad
 *   argument and its value, and every output pointer is left untouched unless stated.
 * - Handles (dp_context, dp_tensor, dp_module, dp_optimizer, dp_data_parallel) are
 *   opaque. dp_X_create... / dp_X_... functions that return a handle through an
 *   `out` parameter give the caller one reference, which the caller owns and must give
 *   back with dp_X_release(). Release functions accept NULL.
 * - Tensors and modules are reference counted (dp_X_retain adds a reference). A handle
 *   keeps its context alive: the context's worker threads stop when the last handle that
 *   needs them is released.
 * - Strings returned as `const char*` are owned by the library; each function says how
 *   long they stay valid.
 * - Option structs start with `size_t struct_size` and have an `..._INIT` macro; fields
 *   added in later versions go at the end, so older callers keep working.
 * - No exception or signal crosses this ABI.
 *
 * Threading
 * ---------
 * See docs/threading.md. In short: a dp_context and tensors may be used from several
 * threads at once; a single dp_module, dp_optimizer or dp_data_parallel must not be
 * used by two threads at the same time (use one per thread, or lock). Each device runs
 * its work on one persistent worker thread owned by the context. Callbacks the library
 * calls (log, deleters, custom module forward) may run on any of these threads.
 */
#ifndef DATAPARALLEL_DATAPARALLEL_H_
#define DATAPARALLEL_DATAPARALLEL_H_

#include <stddef.h>
#include <stdint.h>

#if defined(SWIG)
#define DP_EXPORT
#elif defined(_WIN32)
#define DP_EXPORT __declspec(dllexport)
#else
#define DP_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------- */
/* Versions                                                                          */
/* ---------------------------------------------------------------------------------- */

#define DP_VERSION_MAJOR 0
#define DP_VERSION_MINOR 1
#define DP_VERSION_PATCH 0
/** The version as one number: major * 10000 + minor * 100 + patch. */
#define DP_VERSION_NUMBER (DP_VERSION_MAJOR * 10000 + DP_VERSION_MINOR * 100 + DP_VERSION_PATCH)
/** The newest dp_api table version this header describes (see dp_get_api). */
#define DP_API_VERSION 1

/** The library's version number at run time (same encoding as DP_VERSION_NUMBER). */
DP_EXPORT uint32_t dp_version_number(void);
/** The library's version as "major.minor.patch". Static storage; never NULL. */
DP_EXPORT const char* dp_version_string(void);

/* ---------------------------------------------------------------------------------- */
/* Results and errors                                                                */
/* ---------------------------------------------------------------------------------- */

typedef enum dp_result {
  DP_OK = 0,
  DP_ERR_INVALID_ARGUMENT = 1, /**< NULL where a value is needed, bad enum, bad option */
  DP_ERR_OUT_OF_RANGE = 2,     /**< an index or size outside what exists */
  DP_ERR_SHAPE_MISMATCH = 3,   /**< shapes do not fit the operation */
  DP_ERR_DTYPE_MISMATCH = 4,   /**< element types do not fit the operation */
  DP_ERR_DEVICE_MISMATCH = 5,  /**< tensors or modules on the wrong device */
  DP_ERR_OUT_OF_MEMORY = 6,    /**< an allocation failed */
  DP_ERR_NOT_SUPPORTED = 7,    /**< valid request the library cannot do (yet) */
  DP_ERR_IO = 8,               /**< a file could not be opened, read or written */
  DP_ERR_FORMAT = 9,           /**< a file or buffer is corrupt or of another model */
  DP_ERR_STATE = 10,           /**< an object is not in a state that allows the call */
  DP_ERR_BACKEND = 11,         /**< a device runtime (CUDA, cuBLAS, NCCL, oneDNN) failed */
  DP_ERR_CALLBACK = 12,        /**< a user callback returned an error */
  DP_ERR_INTERNAL = 13         /**< a bug in the library; please report it */
} dp_result;

/** A short constant description of a result code ("invalid argument"). Never NULL. */
DP_EXPORT const char* dp_result_string(dp_result result);

/**
 * The message of the last failed call on the calling thread, or "" if none failed yet.
 * Thread-local: valid until the next failing call on this thread. Never NULL.
 */
DP_EXPORT const char* dp_last_error(void);

/* ---------------------------------------------------------------------------------- */
/* Context and devices                                                               */
/* ---------------------------------------------------------------------------------- */

typedef struct dp_context dp_context;

typedef enum dp_device_type { DP_DEVICE_CPU = 0, DP_DEVICE_CUDA = 1 } dp_device_type;

/** A device: its type and its index among the context's devices of that type. */
typedef struct dp_device {
  dp_device_type type;
  int32_t index;
} dp_device;

typedef enum dp_log_level {
  DP_LOG_DEBUG = 0,
  DP_LOG_INFO = 1,
  DP_LOG_WARNING = 2,
  DP_LOG_ERROR = 3
} dp_log_level;

/**
 * Receives the library's log messages (warnings such as the DataParallel imbalance
 * check, or why CUDA is unavailable). `message` is valid only during the call. May be
 * called from any thread of the context; must not call back into the library.
 */
typedef void (*dp_log_fn)(void* user_data, dp_log_level level, const char* message);

typedef struct dp_context_options {
  size_t struct_size;
  /** Number of virtual CPU devices. 0 = the environment variable DP_CPU_DEVICES if set,
      else the number of cores the process may run on. */
  int32_t cpu_devices;
  /** Non-zero: try to load the CUDA plugin. Its absence, a missing driver or zero GPUs
      is not an error: the context then has zero CUDA devices and logs why. */
  int32_t load_cuda;
  /** Non-zero: allow TF32 tensor-core math for float32 matmul and convolution on CUDA. */
  int32_t allow_tf32;
  /** Messages at or above this level go to log_fn. */
  dp_log_level log_level;
  /** NULL = silent (the default: the library never writes to stderr by itself). */
  dp_log_fn log_fn;
  void* log_user_data;
  /** Seed for parameter initialisation and dropout. */
  uint64_t seed;
} dp_context_options;

#define DP_CONTEXT_OPTIONS_INIT \
  { sizeof(dp_context_options), 0, 1, 0, DP_LOG_WARNING, NULL, NULL, 0 }

/**
 * Creates a context: the devices and their worker threads.
 * options: may be NULL for the defaults; read during the call only.
 * out: receives the context; the caller owns one reference (dp_context_release).
 * Errors: DP_ERR_INVALID_ARGUMENT (out NULL, struct_size too small, cpu_devices < 0 or
 * DP_CPU_DEVICES not a positive integer), DP_ERR_OUT_OF_MEMORY.
 */
DP_EXPORT dp_result dp_context_create(const dp_context_options* options, dp_context** out);

/** Drops the caller's reference. The context ends when no tensor, module, optimizer or
    wrapper made from it remains. NULL-safe. Must not be called from a library callback. */
DP_EXPORT void dp_context_release(dp_context* ctx);

/** Number of devices of `type` in the context (0 for CUDA without GPUs). */
DP_EXPORT dp_result dp_device_count(const dp_context* ctx, dp_device_type type, int32_t* out);

/**
 * A device's name, e.g. "cpu:1 (virtual CPU device, 1 thread)" or "cuda:0 (NVIDIA H200)".
 * Copied into buf (NUL-terminated, truncated to buf_size - 1 bytes); *needed, if not NULL,
 * receives the full length plus one. buf may be NULL when buf_size is 0.
 */
DP_EXPORT dp_result dp_device_name(const dp_context* ctx, dp_device device, char* buf,
                                   size_t buf_size, size_t* needed);

/** Free and total memory of a device in bytes. CPU devices share the host's memory and
    report the host's available and total memory. */
DP_EXPORT dp_result dp_device_memory(const dp_context* ctx, dp_device device, uint64_t* free_bytes,
                                     uint64_t* total_bytes);

/** Waits until every queued operation on `device` has finished. */
DP_EXPORT dp_result dp_device_synchronize(dp_context* ctx, dp_device device);

/* ---------------------------------------------------------------------------------- */
/* Tensors                                                                           */
/* ---------------------------------------------------------------------------------- */

typedef struct dp_tensor dp_tensor;

typedef enum dp_dtype { DP_FLOAT32 = 0, DP_FLOAT64 = 1, DP_INT64 = 2 } dp_dtype;

/** The largest number of dimensions a tensor may have. */
#define DP_MAX_DIMS 8

/** Size in bytes of one element of `dtype`, or 0 for an unknown dtype. */
DP_EXPORT size_t dp_dtype_size(dp_dtype dtype);

/**
 * Creates a tensor filled with zeros on `device`.
 * shape: `ndim` sizes (each >= 0; ndim 0 is a scalar), read during the call only.
 * Errors: DP_ERR_INVALID_ARGUMENT (NULL ctx/out, shape NULL with ndim > 0, negative size,
 * bad dtype), DP_ERR_OUT_OF_RANGE (ndim > DP_MAX_DIMS, device does not exist, element
 * count overflows), DP_ERR_OUT_OF_MEMORY.
 */
DP_EXPORT dp_result dp_tensor_zeros(dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                    size_t ndim, dp_device device, dp_tensor** out);

/** As dp_tensor_zeros, but the contents are unspecified (no fill is done). */
DP_EXPORT dp_result dp_tensor_empty(dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                    size_t ndim, dp_device device, dp_tensor** out);

/** As dp_tensor_zeros, every element set to `value` (converted to dtype). */
DP_EXPORT dp_result dp_tensor_full(dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                   size_t ndim, double value, dp_device device, dp_tensor** out);

/**
 * Creates a tensor on `device` holding a copy of `data` (row-major, `nbytes` bytes, which
 * must equal the element count times the dtype size). The caller keeps `data`.
 * Errors: as dp_tensor_zeros, plus DP_ERR_INVALID_ARGUMENT when data is NULL (and
 * nbytes > 0) or nbytes is not the size the shape needs (message names both).
 */
DP_EXPORT dp_result dp_tensor_from_data(dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                        size_t ndim, const void* data, size_t nbytes,
                                        dp_device device, dp_tensor** out);

/**
 * Wraps caller memory on CPU device `cpu_index` without copying (borrow). The caller
 * keeps ownership of `data` and must keep it valid, and not free it, until the tensor and
 * every tensor viewing it are released. The library may write to it (in-place ops,
 * optimizer steps). `data` must be aligned to the dtype's size.
 */
DP_EXPORT dp_result dp_tensor_from_borrowed(dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                            size_t ndim, void* data, size_t nbytes,
                                            int32_t cpu_index, dp_tensor** out);

/** Frees adopted memory. Called once, from any library thread, when the last tensor
    using the memory goes away (or at once if the adopting call fails). */
typedef void (*dp_deleter_fn)(void* deleter_data, void* data);

/**
 * Wraps caller memory on CPU device `cpu_index` and takes ownership of it (adopt): the
 * library calls deleter(deleter_data, data) when the memory is no longer used. On
 * failure the deleter is called before returning, so the memory never leaks.
 * deleter may be NULL only if the caller will never free `data` (static memory).
 */
DP_EXPORT dp_result dp_tensor_from_adopted(dp_context* ctx, dp_dtype dtype, const int64_t* shape,
                                           size_t ndim, void* data, size_t nbytes,
                                           int32_t cpu_index, dp_deleter_fn deleter,
                                           void* deleter_data, dp_tensor** out);

/** Adds a reference; returns `t` (NULL-safe). */
DP_EXPORT dp_tensor* dp_tensor_retain(dp_tensor* t);
/** Drops a reference; the memory is freed when no tensor views it. NULL-safe. */
DP_EXPORT void dp_tensor_release(dp_tensor* t);

DP_EXPORT dp_result dp_tensor_dtype(const dp_tensor* t, dp_dtype* out);
DP_EXPORT dp_result dp_tensor_ndim(const dp_tensor* t, size_t* out);
/** Copies the sizes into shape[0 .. ndim-1]; `capacity` is the length of `shape`
    (DP_ERR_OUT_OF_RANGE if smaller than the tensor's ndim; message names both). */
DP_EXPORT dp_result dp_tensor_shape(const dp_tensor* t, int64_t* shape, size_t capacity);
/** Size of dimension `dim` (negative counts from the end). */
DP_EXPORT dp_result dp_tensor_dim(const dp_tensor* t, int32_t dim, int64_t* out);
DP_EXPORT dp_result dp_tensor_numel(const dp_tensor* t, int64_t* out);
/** Size of the contents in bytes (numel times the dtype size). */
DP_EXPORT dp_result dp_tensor_nbytes(const dp_tensor* t, size_t* out);
DP_EXPORT dp_result dp_tensor_device(const dp_tensor* t, dp_device* out);

/**
 * Copies the contents into `dst` (host memory, `dst_bytes` long, which must equal
 * dp_tensor_nbytes). Waits for pending work on the tensor's device.
 */
DP_EXPORT dp_result dp_tensor_to_host(const dp_tensor* t, void* dst, size_t dst_bytes);

/** Overwrites the contents from host memory `src` (`src_bytes` must equal the tensor's
    size). Counts as an in-place write (bumps the version counter). */
DP_EXPORT dp_result dp_tensor_copy_from_host(dp_tensor* t, const void* src, size_t src_bytes);

/** A new tensor on `device` with a copy of the contents (a new reference even when the
    device is the tensor's own). Differentiable: gradients flow back to `t`. */
DP_EXPORT dp_result dp_tensor_to_device(const dp_tensor* t, dp_device device, dp_tensor** out);

/** A new tensor of `dtype` with the contents converted (float <-> int truncates). */
DP_EXPORT dp_result dp_tensor_to_dtype(const dp_tensor* t, dp_dtype dtype, dp_tensor** out);

/**
 * The address of the first element, for CPU tensors only (DP_ERR_DEVICE_MISMATCH for
 * others). Valid while `t` is alive. Writing through it bypasses the version counter.
 */
DP_EXPORT dp_result dp_tensor_data(const dp_tensor* t, void** out);

/** The version counter: bumped by every in-place write to the tensor's storage. */
DP_EXPORT dp_result dp_tensor_version(const dp_tensor* t, uint64_t* out);

/* DLPack (https://dmlc.github.io/dlpack), the v0.6 ABI (DLManagedTensor). */
struct DLManagedTensor;

/**
 * Exports `t` as a DLManagedTensor sharing its memory (no copy). The caller owns the
 * result and must call its `deleter` exactly once (NumPy and PyTorch do this when they
 * take it); the tensor's memory stays alive until then.
 */
DP_EXPORT dp_result dp_tensor_to_dlpack(const dp_tensor* t, struct DLManagedTensor** out);

/**
 * Imports a DLManagedTensor without copying. Supported: kDLCPU (as CPU device 0) and,
 * with CUDA devices, kDLCUDA; dtypes float32, float64, int64; compact row-major strides.
 * On success the library owns `src` and calls its deleter when done; on failure
 * ownership stays with the caller (the deleter is not called).
 */
DP_EXPORT dp_result dp_tensor_from_dlpack(dp_context* ctx, struct DLManagedTensor* src,
                                          dp_tensor** out);

/* ---------------------------------------------------------------------------------- */
/* The function table                                                                */
/* ---------------------------------------------------------------------------------- */

/**
 * Every public function, for programs that dlopen() the library and want one dlsym().
 * The member for dp_X is named X. Append-only: later versions add members at the end and
 * raise DP_API_VERSION; `struct_size` says how many bytes of the table this library
 * fills.
 */
typedef struct dp_api {
  uint32_t version;
  size_t struct_size;
  /* version 1 */
  uint32_t (*version_number)(void);
  const char* (*version_string)(void);
  const char* (*result_string)(dp_result);
  const char* (*last_error)(void);
  dp_result (*context_create)(const dp_context_options*, dp_context**);
  void (*context_release)(dp_context*);
  dp_result (*device_count)(const dp_context*, dp_device_type, int32_t*);
  dp_result (*device_name)(const dp_context*, dp_device, char*, size_t, size_t*);
  dp_result (*device_memory)(const dp_context*, dp_device, uint64_t*, uint64_t*);
  dp_result (*device_synchronize)(dp_context*, dp_device);
  size_t (*dtype_size)(dp_dtype);
  dp_result (*tensor_zeros)(dp_context*, dp_dtype, const int64_t*, size_t, dp_device, dp_tensor**);
  dp_result (*tensor_empty)(dp_context*, dp_dtype, const int64_t*, size_t, dp_device, dp_tensor**);
  dp_result (*tensor_full)(dp_context*, dp_dtype, const int64_t*, size_t, double, dp_device,
                           dp_tensor**);
  dp_result (*tensor_from_data)(dp_context*, dp_dtype, const int64_t*, size_t, const void*, size_t,
                                dp_device, dp_tensor**);
  dp_result (*tensor_from_borrowed)(dp_context*, dp_dtype, const int64_t*, size_t, void*, size_t,
                                    int32_t, dp_tensor**);
  dp_result (*tensor_from_adopted)(dp_context*, dp_dtype, const int64_t*, size_t, void*, size_t,
                                   int32_t, dp_deleter_fn, void*, dp_tensor**);
  dp_tensor* (*tensor_retain)(dp_tensor*);
  void (*tensor_release)(dp_tensor*);
  dp_result (*tensor_dtype)(const dp_tensor*, dp_dtype*);
  dp_result (*tensor_ndim)(const dp_tensor*, size_t*);
  dp_result (*tensor_shape)(const dp_tensor*, int64_t*, size_t);
  dp_result (*tensor_dim)(const dp_tensor*, int32_t, int64_t*);
  dp_result (*tensor_numel)(const dp_tensor*, int64_t*);
  dp_result (*tensor_nbytes)(const dp_tensor*, size_t*);
  dp_result (*tensor_device)(const dp_tensor*, dp_device*);
  dp_result (*tensor_to_host)(const dp_tensor*, void*, size_t);
  dp_result (*tensor_copy_from_host)(dp_tensor*, const void*, size_t);
  dp_result (*tensor_to_device)(const dp_tensor*, dp_device, dp_tensor**);
  dp_result (*tensor_to_dtype)(const dp_tensor*, dp_dtype, dp_tensor**);
  dp_result (*tensor_data)(const dp_tensor*, void**);
  dp_result (*tensor_version)(const dp_tensor*, uint64_t*);
  dp_result (*tensor_to_dlpack)(const dp_tensor*, struct DLManagedTensor**);
  dp_result (*tensor_from_dlpack)(dp_context*, struct DLManagedTensor*, dp_tensor**);
  /* DP_API_TABLE_END: new members go above this line */
} dp_api;

/**
 * The function table for API `version` (1 .. DP_API_VERSION), or NULL when the library
 * is older than that version or version is 0. Static storage; never freed.
 */
DP_EXPORT const dp_api* dp_get_api(uint32_t version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DATAPARALLEL_DATAPARALLEL_H_ */
