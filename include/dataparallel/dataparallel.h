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
 * - Tensors, modules and optimizers belong to the context they were made in, and the
 *   results of calls belong to their inputs' context. One call never takes objects of
 *   two contexts (each context has its own workers and memory and, on a GPU, its own
 *   streams, which nothing orders against another context's): that is
 *   DP_ERR_INVALID_ARGUMENT naming the argument of the other context (DP_ERR_CALLBACK when
 *   a custom forward returns a tensor of another context). Move data between contexts
 *   through host memory (dp_tensor_to_host, dp_tensor_from_data), or share it through
 *   DLPack (dp_tensor_to_dlpack, dp_tensor_from_dlpack), which ties the contexts no
 *   more than any other producer and consumer: the caller orders their work.
 * - Strings returned as `const char*` are owned by the library; each function says how
 *   long they stay valid.
 * - Option structs start with `size_t struct_size` and have an `..._INIT` macro; fields
 *   added in later versions go at the end, so older callers keep working (the rule is
 *   written before dp_context_options).
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
#define DP_API_VERSION 4

/** The library's version number at run time (same encoding as DP_VERSION_NUMBER). */
DP_EXPORT uint32_t dp_version_number(void);
/** The library's version as "major.minor.patch". Static storage; never NULL. */
DP_EXPORT const char* dp_version_string(void);

/*
 * Every enum has two range markers, *_RANGE_MIN_ and *_RANGE_MAX_ (not values to pass):
 * they make every int a valid value of the enum type in C++, so the library can receive
 * whatever a C caller passes and reject it with DP_ERR_INVALID_ARGUMENT instead of
 * reading an out-of-range enum (undefined behaviour in C++).
 */
#define DP_ENUM_RANGE(prefix) prefix##_RANGE_MIN_ = -0x7fffffff - 1, prefix##_RANGE_MAX_ = 0x7fffffff

/* ---------------------------------------------------------------------------------- */
/* Results and errors                                                                */
/* ---------------------------------------------------------------------------------- */

/*
 * One rule for arguments, in every function: a malformed argument (NULL where a value is
 * needed, a handle of the wrong kind, a bad enum such as a device type that is neither
 * CPU nor CUDA, an empty device list, a repeated or mixed-type one where the function
 * refuses it (dp_data_parallel_create, dp_data_parallel_apply), a count that does not
 * match its array)
 * is DP_ERR_INVALID_ARGUMENT; a well-formed index past what exists (a device index past
 * the devices of its type, or negative; a dimension, a parameter index, a missing name;
 * an output capacity too small) is DP_ERR_OUT_OF_RANGE. The device lists of
 * dp_data_parallel_create, dp_data_parallel_apply, dp_scatter, dp_replicate and
 * dp_parallel_apply, and dp_gather's output_device, are checked by one function and name
 * the entry: "device_ids[1] = cpu:7 but only 2 CPU devices exist".
 */
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
  DP_ERR_INTERNAL = 13,        /**< a bug in the library; please report it */
  DP_ENUM_RANGE(DP_RESULT)
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

typedef enum dp_device_type {
  DP_DEVICE_CPU = 0,
  DP_DEVICE_CUDA = 1,
  DP_ENUM_RANGE(DP_DEVICE_TYPE)
} dp_device_type;

/** A device: its type and its index among the context's devices of that type. */
typedef struct dp_device {
  dp_device_type type;
  int32_t index;
} dp_device;

typedef enum dp_log_level {
  DP_LOG_DEBUG = 0,
  DP_LOG_INFO = 1,
  DP_LOG_WARNING = 2,
  DP_LOG_ERROR = 3,
  DP_ENUM_RANGE(DP_LOG_LEVEL)
} dp_log_level;

/**
 * Receives the library's log messages (warnings such as the DataParallel imbalance
 * check, or why CUDA is unavailable). `message` is valid only during the call. May be
 * called from any thread of the context; must not call back into the library.
 */
typedef void (*dp_log_fn)(void* user_data, dp_log_level level, const char* message);

/*
 * Option structs (dp_context_options, dp_custom_module_desc, dp_sgd_options,
 * dp_adam_options, dp_data_parallel_options, dp_process_group_options, dp_ddp_options)
 * are read by their first member,
 * `struct_size`: the size of the struct as the caller's header declares it, which the
 * _INIT macro sets to sizeof. Later versions of a struct only add members at the end, each
 * starting at or after the previous version's sizeof. So:
 * - A smaller struct_size, from a caller built against an older header, is accepted: the
 *   members it lacks take the values of the current _INIT macro.
 * - struct_size must be a multiple of sizeof(size_t), at most 4096, and at least the size
 *   of the struct's first version: dp_context_options up to and including `seed`;
 *   dp_process_group_options whole; dp_ddp_options up to and including `local`; the
 *   others their struct_size alone (every other member then takes its default).
 *   Otherwise DP_ERR_INVALID_ARGUMENT naming the struct and the value.
 * - A larger struct_size, from a caller built against a newer header, is accepted when
 *   every byte past this library's sizeof is zero (the newer members left at zero);
 *   otherwise DP_ERR_NOT_SUPPORTED: this library cannot do what those members ask.
 * The struct is read during the call only.
 */
typedef struct dp_context_options {
  size_t struct_size;
  /** Number of virtual CPU devices, at most 4096 (each has a thread). 0 = the environment
      variable DP_CPU_DEVICES if set, else the number of cores the process may run on. */
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
  /** Seed for parameter initialisation and dropout. Layers draw their initial weights,
      in the order they are made, from one stream that is PyTorch's CPU generator after
      torch.manual_seed(seed) (MT19937 seeded with the low 32 bits, PyTorch's uniform_ and
      normal_): layers made in the order a PyTorch model makes its own get PyTorch's
      initial weights, bit for bit as PyTorch computes them on x86 with AVX2 (an
      Embedding's normal values to within ~2e-6). Seeds equal in their low 32 bits give
      the same weights. Each parameter draws its values in one piece; layers made by
      several threads at once may interleave between one layer's weight and bias.
      Dropout masks come from a separate sequence per device. */
  uint64_t seed;
  /** With log_fn: called once with log_user_data when the context has ended (its last
      tensor, module, optimizer and wrapper released), so that the caller can free it; NULL:
      nothing to free. Runs on the thread that released the last of them and must not call
      the library. Not called when dp_context_create fails: log_user_data stays the
      caller's. A struct_size that ends before this member leaves it NULL. */
  void (*log_user_data_free)(void* user_data);
} dp_context_options;

#define DP_CONTEXT_OPTIONS_INIT \
  { sizeof(dp_context_options), 0, 1, 0, DP_LOG_WARNING, NULL, NULL, 0, NULL }

/**
 * Creates a context: the devices and their worker threads.
 * options: may be NULL for the defaults; read during the call only.
 * out: receives the context; the caller owns one reference (dp_context_release).
 * Errors: DP_ERR_INVALID_ARGUMENT (out NULL, struct_size not accepted, cpu_devices not in
 * 0..4096 or DP_CPU_DEVICES not an integer in 1..4096), DP_ERR_OUT_OF_MEMORY.
 */
DP_EXPORT dp_result dp_context_create(const dp_context_options* options, dp_context** out);

/** Drops the caller's reference. The context ends when no tensor, module, optimizer or
    wrapper made from it remains. NULL-safe. Must not be called from a library callback. */
DP_EXPORT void dp_context_release(dp_context* ctx);

/** Number of devices of `type` in the context (0 for CUDA without GPUs). */
DP_EXPORT dp_result dp_device_count(const dp_context* ctx, dp_device_type type, int32_t* out);

/**
 * A device's name, e.g. "cpu:1 (virtual CPU device, 1 thread, oneDNN)" or "cuda:0 (NVIDIA H200)".
 * Copied into buf (NUL-terminated, truncated to buf_size - 1 bytes); *needed, if not NULL,
 * receives the full length plus one. buf may be NULL when buf_size is 0.
 */
DP_EXPORT dp_result dp_device_name(const dp_context* ctx, dp_device device, char* buf,
                                   size_t buf_size, size_t* needed);

/** Free and total memory of a device in bytes. CPU devices share the host's memory and
    report the host's available and total memory. */
DP_EXPORT dp_result dp_device_memory(const dp_context* ctx, dp_device device, uint64_t* free_bytes,
                                     uint64_t* total_bytes);

/**
 * Whether `device` computes bfloat16 products in hardware: 1 for a CPU with AVX512-BF16
 * or AMX (as oneDNN detects it) and a GPU of compute capability 8.0 or later, else 0. On
 * 0, bfloat16 matmul and convolution still work: they widen to float32, compute there and
 * round the result, so autocast saves memory and transfer bytes but not time.
 */
DP_EXPORT dp_result dp_device_bf16_native(const dp_context* ctx, dp_device device, int* out);

/** Waits until every queued operation on `device` has finished. */
DP_EXPORT dp_result dp_device_synchronize(dp_context* ctx, dp_device device);

/* ---------------------------------------------------------------------------------- */
/* Tensors                                                                           */
/* ---------------------------------------------------------------------------------- */

typedef struct dp_tensor dp_tensor;

typedef enum dp_dtype {
  DP_FLOAT32 = 0,
  DP_FLOAT64 = 1,
  DP_INT64 = 2,
  /** bfloat16: 2 bytes, float32's upper half (sign, 8 exponent bits, 7 mantissa bits).
      Conversions from other dtypes round to nearest, ties to even; NaN stays NaN. Every
      op that takes float32 takes it; most compute in float32 and round their result
      once (see dp_set_autocast for mixed precision). */
  DP_BFLOAT16 = 3,
  DP_ENUM_RANGE(DP_DTYPE)
} dp_dtype;

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

/** As dp_tensor_zeros, every element set to `value` (converted to dtype). For DP_INT64, a
    value int64 cannot represent (NaN, infinite, out of range) is DP_ERR_INVALID_ARGUMENT. */
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

/** The context `t` was made in, as a new reference (release it with dp_context_release).
    A tensor keeps its context alive, so this works after every other reference to the
    context is gone: tensors like `t` can still be made. */
DP_EXPORT dp_result dp_tensor_context(const dp_tensor* t, dp_context** out);
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

/** A new tensor of `dtype` with the contents converted. Float to integer truncates toward
    zero and saturates at the integer type's limits; NaN becomes 0. */
DP_EXPORT dp_result dp_tensor_to_dtype(const dp_tensor* t, dp_dtype dtype, dp_tensor** out);

/**
 * The address of the first element, for CPU tensors only (DP_ERR_DEVICE_MISMATCH for
 * others). Valid while `t` is alive. Writing through it bypasses the version counter, so
 * from then on autocast keeps no bfloat16 cast of this memory (docs/autocast.md).
 */
DP_EXPORT dp_result dp_tensor_data(const dp_tensor* t, void** out);

/** The version counter: bumped by every in-place write to the tensor's storage. */
DP_EXPORT dp_result dp_tensor_version(const dp_tensor* t, uint64_t* out);

/* DLPack (https://dmlc.github.io/dlpack), the v0.6 ABI (DLManagedTensor). */
struct DLManagedTensor;

/**
 * Exports `t` as a DLManagedTensor sharing its memory (no copy). The caller owns the
 * result and must call its `deleter` exactly once (NumPy and PyTorch do this when they
 * take it); the tensor's memory stays alive until then. A CUDA tensor's device finishes
 * its queued work first, so that a consumer on another stream reads the values written.
 */
DP_EXPORT dp_result dp_tensor_to_dlpack(const dp_tensor* t, struct DLManagedTensor** out);

/**
 * Imports a DLManagedTensor without copying. Supported: kDLCPU (as CPU device 0) and,
 * with CUDA devices, kDLCUDA; dtypes float32, float64, int64; compact row-major strides.
 * CUDA memory: the call first waits until all work on that GPU has finished (the
 * producer may still be writing it on a stream of its own); a producer that writes it
 * afterwards must synchronise with this library itself (dp_device_synchronize).
 * On success the library owns `src` and calls its deleter when done; on failure
 * ownership stays with the caller (the deleter is not called).
 */
DP_EXPORT dp_result dp_tensor_from_dlpack(dp_context* ctx, struct DLManagedTensor* src,
                                          dp_tensor** out);

/* ---------------------------------------------------------------------------------- */
/* Autograd                                                                          */
/* ---------------------------------------------------------------------------------- */

/**
 * Marks a leaf tensor as requiring gradients (or not). Only floating-point leaves;
 * DP_ERR_STATE for a tensor computed by an op (its requirement follows its inputs).
 */
DP_EXPORT dp_result dp_tensor_set_requires_grad(dp_tensor* t, int requires_grad);
DP_EXPORT dp_result dp_tensor_requires_grad(const dp_tensor* t, int* out);

/** The accumulated gradient of a leaf: a new reference in *out, or NULL when none was
    computed yet (that is not an error). */
DP_EXPORT dp_result dp_tensor_grad(const dp_tensor* t, dp_tensor** out);

/** Drops the accumulated gradient (the next backward starts from none). */
DP_EXPORT dp_result dp_tensor_zero_grad(dp_tensor* t);

/** A new tensor sharing t's memory but outside the graph (no gradient flows through). */
DP_EXPORT dp_result dp_tensor_detach(const dp_tensor* t, dp_tensor** out);

/**
 * Backpropagates from `t`: accumulates d(t)/d(leaf) into every leaf's gradient. `grad` is
 * the gradient with respect to t (same shape and dtype); NULL means 1 and needs t to have
 * one element. Without retain_graph the graph's saved tensors are freed, and a second
 * backward through it fails with DP_ERR_STATE when it reaches a node that had saved
 * tensors (products, matmul, layers); through a graph whose nodes saved none (additions
 * and subtractions only, for one) it runs again and accumulates the gradients a second
 * time, as PyTorch does. Nodes run on their devices' workers, so the replicas of a
 * DataParallel forward run their backward in parallel.
 * Errors: DP_ERR_STATE (t does not require grad; a saved tensor was modified in place),
 * DP_ERR_INVALID_ARGUMENT (grad NULL for a t of more than one element),
 * DP_ERR_SHAPE_MISMATCH / DP_ERR_DTYPE_MISMATCH (grad), or any error of a backward op.
 * Must not be called from inside a custom module's forward.
 */
DP_EXPORT dp_result dp_backward(dp_tensor* t, const dp_tensor* grad, int retain_graph);

/** Whether ops record the graph on the calling thread (default on). */
DP_EXPORT int dp_is_grad_enabled(void);
/** Switches graph recording for the calling thread; returns the previous setting. The
    setting follows the thread's calls onto device workers (replicas see it too). */
DP_EXPORT int dp_set_grad_enabled(int enabled);

/**
 * Mixed precision for the calling thread, PyTorch's autocast. With DP_BFLOAT16, the ops of
 * the lower-precision list (linear, matmul, conv2d and the conv + ReLU + pool block) cast
 * their float32 inputs to bfloat16 (differentiably: gradients flow back to float32
 * parameters in float32; on CPU devices linear gives a float32 weight and bias the float32
 * sums themselves, where PyTorch rounds them to bfloat16 first) and return bfloat16; the
 * ops of the float32 list (softmax, log_softmax, cross_entropy, nll_loss, mse_loss, sum,
 * mean, batch_norm) cast bfloat16 inputs to float32 and return float32; add, sub, mul and
 * div of a bfloat16 and a float32 tensor promote to float32; every other op runs in its
 * input's dtype. float64 inputs are never cast. DP_FLOAT32 turns it off (the default).
 * docs/autocast.md lists the ops beside PyTorch's. Like grad mode, the setting follows
 * the thread's calls onto device workers, so DataParallel replicas run under it. previous
 * (may be NULL) receives the setting before the call. Errors: DP_ERR_INVALID_ARGUMENT for
 * any other dtype.
 */
DP_EXPORT dp_result dp_set_autocast(dp_dtype dtype, dp_dtype* previous);
/** The calling thread's autocast dtype: DP_BFLOAT16 when on, DP_FLOAT32 when off. */
DP_EXPORT dp_dtype dp_autocast_dtype(void);

/**
 * Sets the calling thread's last-error message and returns `code`: lets a callback
 * (custom module forward) report its own error: `return dp_set_error(DP_ERR_CALLBACK,
 * "weights not loaded");`. message may be NULL.
 */
DP_EXPORT dp_result dp_set_error(dp_result code, const char* message);

/* ---------------------------------------------------------------------------------- */
/* Ops                                                                               */
/* ---------------------------------------------------------------------------------- */
/*
 * Each op reads its inputs (borrowed for the call) and returns a new tensor in *out
 * (one reference, owned by the caller). Inputs must share a device and dtype unless
 * stated. When grad mode is on and an input requires grad, the result records how to
 * backpropagate. Errors name the op, the argument and the value: DP_ERR_SHAPE_MISMATCH,
 * DP_ERR_DTYPE_MISMATCH, DP_ERR_DEVICE_MISMATCH, DP_ERR_OUT_OF_RANGE (dims),
 * DP_ERR_INVALID_ARGUMENT (NULL, bad parameters). Thread-safe.
 */

/** Elementwise with NumPy broadcasting. */
DP_EXPORT dp_result dp_op_add(const dp_tensor* a, const dp_tensor* b, dp_tensor** out);
DP_EXPORT dp_result dp_op_sub(const dp_tensor* a, const dp_tensor* b, dp_tensor** out);
DP_EXPORT dp_result dp_op_mul(const dp_tensor* a, const dp_tensor* b, dp_tensor** out);
DP_EXPORT dp_result dp_op_div(const dp_tensor* a, const dp_tensor* b, dp_tensor** out);
DP_EXPORT dp_result dp_op_neg(const dp_tensor* x, dp_tensor** out);
/** x * factor */
DP_EXPORT dp_result dp_op_scale(const dp_tensor* x, double factor, dp_tensor** out);
/** x + value */
DP_EXPORT dp_result dp_op_add_scalar(const dp_tensor* x, double value, dp_tensor** out);
/** max(x, 0). A NaN stays NaN in float64 (as in PyTorch); float32 runs oneDNN's kernel
    (also fused into a Sequential's Linear or Conv2d + ReLU), which gives 0 for NaN. */
DP_EXPORT dp_result dp_op_relu(const dp_tensor* x, dp_tensor** out);
/** The exact (erf) GELU, as torch.nn.GELU(). */
DP_EXPORT dp_result dp_op_gelu(const dp_tensor* x, dp_tensor** out);
DP_EXPORT dp_result dp_op_tanh(const dp_tensor* x, dp_tensor** out);
DP_EXPORT dp_result dp_op_sigmoid(const dp_tensor* x, dp_tensor** out);
DP_EXPORT dp_result dp_op_exp(const dp_tensor* x, dp_tensor** out);
DP_EXPORT dp_result dp_op_log(const dp_tensor* x, dp_tensor** out);

/** Sum of all elements (0-dim result). */
DP_EXPORT dp_result dp_op_sum(const dp_tensor* x, dp_tensor** out);
/** Sum along `dim` (negative counts from the end); keepdim keeps it with size 1. */
DP_EXPORT dp_result dp_op_sum_dim(const dp_tensor* x, int32_t dim, int keepdim, dp_tensor** out);
DP_EXPORT dp_result dp_op_mean(const dp_tensor* x, dp_tensor** out);
DP_EXPORT dp_result dp_op_mean_dim(const dp_tensor* x, int32_t dim, int keepdim, dp_tensor** out);
/** Index of the largest element along dim (int64, dim removed; ties: the first). Not
    differentiable. */
DP_EXPORT dp_result dp_op_argmax(const dp_tensor* x, int32_t dim, dp_tensor** out);

/** [M, K] @ [K, N], or batched [B, M, K] @ [B, K, N] (either side may be 2-D). */
DP_EXPORT dp_result dp_op_matmul(const dp_tensor* a, const dp_tensor* b, dp_tensor** out);
/** x [..., in] @ weight[out, in]^T + bias[out] (bias may be NULL). */
DP_EXPORT dp_result dp_op_linear(const dp_tensor* x, const dp_tensor* weight,
                                 const dp_tensor* bias, dp_tensor** out);
/** A row with a NaN: NaN across it (as in PyTorch), except float32 softmax (oneDNN's
    kernel), which gives NaN at the NaN and 0 elsewhere; a row holding +inf is NaN across it
    in PyTorch and float64, NaN at the +inf and 0 elsewhere in float32. */
DP_EXPORT dp_result dp_op_softmax(const dp_tensor* x, int32_t dim, dp_tensor** out);
DP_EXPORT dp_result dp_op_log_softmax(const dp_tensor* x, int32_t dim, dp_tensor** out);

/** x [N, C, H, W], weight [O, C, KH, KW], bias [O] or NULL -> [N, O, OH, OW]. */
DP_EXPORT dp_result dp_op_conv2d(const dp_tensor* x, const dp_tensor* weight,
                                 const dp_tensor* bias, int32_t stride_h, int32_t stride_w,
                                 int32_t pad_h, int32_t pad_w, dp_tensor** out);
/** Floor mode; padding at most half the kernel; padding never wins the maximum (a window
    of -inf and padding gives -inf). A NaN wins its window in float64 (as in PyTorch);
    float32 without padding runs oneDNN's kernel, which passes over it, and gives
    -FLT_MAX, not -inf, for a window of -inf only. */
DP_EXPORT dp_result dp_op_max_pool2d(const dp_tensor* x, int32_t kernel_h, int32_t kernel_w,
                                     int32_t stride_h, int32_t stride_w, int32_t pad_h,
                                     int32_t pad_w, dp_tensor** out);
/** Floor mode; divides by the full window, padding included (PyTorch's default). */
DP_EXPORT dp_result dp_op_avg_pool2d(const dp_tensor* x, int32_t kernel_h, int32_t kernel_w,
                                     int32_t stride_h, int32_t stride_w, int32_t pad_h,
                                     int32_t pad_w, dp_tensor** out);
/**
 * x [N, C] or [N, C, H, W]; weight, bias, running_mean, running_var [C] (each may be NULL;
 * evaluation needs the running ones). training: normalise with the batch statistics and
 * update the running ones in place (momentum, unbiased variance, as PyTorch).
 */
DP_EXPORT dp_result dp_op_batch_norm(const dp_tensor* x, const dp_tensor* weight,
                                     const dp_tensor* bias, dp_tensor* running_mean,
                                     dp_tensor* running_var, int training, double momentum,
                                     double eps, dp_tensor** out);
/** Zeroes elements with probability p and scales the rest by 1/(1-p) when training; the
    same seed gives the same mask on every device type. Identity when not training. */
DP_EXPORT dp_result dp_op_dropout(const dp_tensor* x, double p, int training, uint64_t seed,
                                  dp_tensor** out);
/** indices (int64, any shape) select rows of weight [num, dim] -> [..., dim]. */
DP_EXPORT dp_result dp_op_embedding(const dp_tensor* indices, const dp_tensor* weight,
                                    dp_tensor** out);
/** logits [N, C], target [N] (int64 class indices): mean over N of the negative log
    softmax at the target. DP_ERR_OUT_OF_RANGE names a target outside [0, C). */
DP_EXPORT dp_result dp_op_cross_entropy(const dp_tensor* logits, const dp_tensor* target,
                                        dp_tensor** out);
DP_EXPORT dp_result dp_op_nll_loss(const dp_tensor* log_probs, const dp_tensor* target,
                                   dp_tensor** out);
/** Mean of (input - target)^2 over all elements. */
DP_EXPORT dp_result dp_op_mse_loss(const dp_tensor* input, const dp_tensor* target,
                                   dp_tensor** out);

/** A view with another shape (one entry may be -1). Shares memory with x. */
DP_EXPORT dp_result dp_op_reshape(const dp_tensor* x, const int64_t* shape, size_t ndim,
                                  dp_tensor** out);
DP_EXPORT dp_result dp_op_flatten(const dp_tensor* x, int32_t start_dim, int32_t end_dim,
                                  dp_tensor** out);
/** Concatenates n tensors along dim onto the device of tensors[0]. */
DP_EXPORT dp_result dp_op_cat(const dp_tensor* const* tensors, size_t n, int32_t dim,
                              dp_tensor** out);
/** Splits x along dim into n pieces of sizes[0..n) (summing to x's size there); outs[i]
    receive new references. Pieces along dim 0 are views of x; along other dims, copies. */
DP_EXPORT dp_result dp_op_split(const dp_tensor* x, const int64_t* sizes, size_t n, int32_t dim,
                                dp_tensor** outs);

/* ---------------------------------------------------------------------------------- */
/* Modules                                                                           */
/* ---------------------------------------------------------------------------------- */

typedef struct dp_module dp_module;

/** The most outputs a module's forward may return. */
#define DP_MAX_OUTPUTS 16

/*
 * Layers. Parameters are created on `device` with PyTorch's default initialisation
 * (drawn from the context's stream; see dp_context_options.seed) and PyTorch's names
 * ("weight", "bias"), in float32.
 * *out receives one reference (dp_module_release). Errors: DP_ERR_INVALID_ARGUMENT for a
 * size that is not positive (named), DP_ERR_OUT_OF_RANGE for a device that does not exist
 * or sizes whose product overflows, DP_ERR_OUT_OF_MEMORY (naming the bytes) for
 * parameters the device cannot hold.
 */
DP_EXPORT dp_result dp_module_linear(dp_context* ctx, int64_t in_features, int64_t out_features,
                                     int bias, dp_device device, dp_module** out);
DP_EXPORT dp_result dp_module_conv2d(dp_context* ctx, int64_t in_channels, int64_t out_channels,
                                     int32_t kernel_h, int32_t kernel_w, int32_t stride_h,
                                     int32_t stride_w, int32_t pad_h, int32_t pad_w, int bias,
                                     dp_device device, dp_module** out);
DP_EXPORT dp_result dp_module_relu(dp_context* ctx, dp_module** out);
DP_EXPORT dp_result dp_module_gelu(dp_context* ctx, dp_module** out);
DP_EXPORT dp_result dp_module_tanh(dp_context* ctx, dp_module** out);
DP_EXPORT dp_result dp_module_sigmoid(dp_context* ctx, dp_module** out);
/** Draws a fresh mask per call from a per-device seed sequence; identity in eval mode. */
DP_EXPORT dp_result dp_module_dropout(dp_context* ctx, double p, dp_module** out);
/** Buffers running_mean, running_var, num_batches_tracked, as PyTorch (defaults there:
    eps 1e-5, momentum 0.1). */
DP_EXPORT dp_result dp_module_batchnorm1d(dp_context* ctx, int64_t num_features, double eps,
                                          double momentum, dp_device device, dp_module** out);
DP_EXPORT dp_result dp_module_batchnorm2d(dp_context* ctx, int64_t num_features, double eps,
                                          double momentum, dp_device device, dp_module** out);
DP_EXPORT dp_result dp_module_maxpool2d(dp_context* ctx, int32_t kernel_h, int32_t kernel_w,
                                        int32_t stride_h, int32_t stride_w, int32_t pad_h,
                                        int32_t pad_w, dp_module** out);
DP_EXPORT dp_result dp_module_avgpool2d(dp_context* ctx, int32_t kernel_h, int32_t kernel_w,
                                        int32_t stride_h, int32_t stride_w, int32_t pad_h,
                                        int32_t pad_w, dp_module** out);
DP_EXPORT dp_result dp_module_flatten(dp_context* ctx, int32_t start_dim, int32_t end_dim,
                                      dp_module** out);
DP_EXPORT dp_result dp_module_embedding(dp_context* ctx, int64_t num_embeddings,
                                        int64_t embedding_dim, dp_device device,
                                        dp_module** out);
/** An empty Sequential; children added with dp_module_append are named "0", "1", ... */
DP_EXPORT dp_result dp_module_sequential(dp_context* ctx, dp_module** out);
/** Appends `child` to a Sequential (which takes its own reference to it). */
DP_EXPORT dp_result dp_module_append(dp_module* sequential, dp_module* child);

/**
 * The forward of a custom module. `self` is the module being run (under DataParallel, a
 * replica with the replica's parameters: read parameters through it). `inputs` are
 * borrowed for the call. Store up to `max_outputs` new references in outputs[] and their
 * count in *n_outputs; the library takes them over (an output that is not a tensor of the
 * module's context fails the forward with DP_ERR_CALLBACK). Return DP_OK, or an error code
 * (dp_set_error sets its message). The call that ran the module then fails with that code
 * (DP_ERR_CALLBACK for a value that is not an error code) and the message
 * "<type> forward failed: <message>", <type> being the desc's type_name ("Custom" for
 * NULL) and <message> the callback thread's last error set during the call; without one,
 * "<type> forward returned <dp_result_string(code)>". Under a DataParallel that message
 * follows "in replica I on device D: ". Runs on the worker thread of the module's device. It
 * may run a DataParallel over several devices unless it is itself a replica under one
 * (that call fails with DP_ERR_STATE: the replicas' workers would wait on each other).
 * Work on another device waits for that device's worker; meanwhile this worker runs what
 * other devices' workers queued for it, another forward included, inside this call (hold
 * no lock across such a call that that forward may take). So two forwards running at once
 * on two devices, each calling into the other's, both finish (docs/threading.md).
 */
typedef dp_result (*dp_forward_fn)(void* user_data, dp_module* self,
                                   dp_tensor* const* inputs, size_t n_inputs,
                                   dp_tensor** outputs, size_t max_outputs, size_t* n_outputs);

typedef struct dp_custom_module_desc {
  size_t struct_size;
  /** Shown in messages; copied. NULL means "Custom". */
  const char* type_name;
  dp_forward_fn forward;
  void* user_data;
  /** Called once with user_data when the module and every replica of it are gone;
      may be NULL. */
  void (*destroy)(void* user_data);
} dp_custom_module_desc;

#define DP_CUSTOM_MODULE_DESC_INIT { sizeof(dp_custom_module_desc), NULL, NULL, NULL, NULL }

/** A module whose forward is `desc->forward`. Register its parameters, buffers and
    children with the functions below. On failure destroy is not called. */
DP_EXPORT dp_result dp_module_custom(dp_context* ctx, const dp_custom_module_desc* desc,
                                     dp_module** out);
/** Adds a parameter (a leaf that then requires grad; float32/float64) under `name` (no
    '.' or '/'). The module keeps its own reference to the tensor. Parameters, buffers and
    children share one set of names, as PyTorch's attributes do: a name already used by
    any of them is DP_ERR_INVALID_ARGUMENT, and so is a tensor that is not a leaf (the
    result of an op recorded for backward; register a detached copy). */
DP_EXPORT dp_result dp_module_register_parameter(dp_module* m, const char* name, dp_tensor* t);
/** Adds a buffer: state saved in checkpoints and broadcast to replicas, not trained. */
DP_EXPORT dp_result dp_module_register_buffer(dp_module* m, const char* name, dp_tensor* t);
/** Adds a child module under `name`; its parameters appear as "name.weight", ... */
DP_EXPORT dp_result dp_module_register_child(dp_module* m, const char* name, dp_module* child);

/**
 * Runs the module on `inputs` (borrowed) on the worker of the module's device. Up to
 * `capacity` outputs go to outputs[] as new references and their count to *n_outputs;
 * DP_ERR_OUT_OF_RANGE (naming the count) if capacity is too small. NULL outputs with a
 * non-zero capacity is refused before the module runs; a capacity found too small is
 * known only after it ran: its outputs are released, but what the forward did stays
 * (BatchNorm's running statistics, for one).
 */
DP_EXPORT dp_result dp_module_forward(dp_module* m, dp_tensor* const* inputs, size_t n_inputs,
                                      dp_tensor** outputs, size_t capacity, size_t* n_outputs);
/** One input, one output: *output receives a new reference. */
DP_EXPORT dp_result dp_module_forward1(dp_module* m, dp_tensor* input, dp_tensor** output);

/** Takes one more reference to m and returns m (NULL gives NULL). */
DP_EXPORT dp_module* dp_module_retain(dp_module* m);
/** Drops one reference; the module ends with its last one (a wrapper, an optimizer, a
    parent or a replica may hold others). NULL-safe. */
DP_EXPORT void dp_module_release(dp_module* m);

/** "Linear", "Sequential", ... Owned by the module; valid while it lives. */
DP_EXPORT dp_result dp_module_type_name(const dp_module* m, const char** out);
/** Train (non-zero) or evaluation mode, for the module and all its children. */
DP_EXPORT dp_result dp_module_train(dp_module* m, int training);
DP_EXPORT dp_result dp_module_is_training(const dp_module* m, int* out);
/** Moves every parameter and buffer to `device` (tied parameters stay tied; gradients
    are dropped). Tensors obtained earlier keep pointing at the old ones. */
DP_EXPORT dp_result dp_module_to(dp_module* m, dp_device device);
/** Sets every parameter's gradient to none. */
DP_EXPORT dp_result dp_module_zero_grad(dp_module* m);

/** Number of distinct parameters (recursive; a tied parameter counts once). */
DP_EXPORT dp_result dp_module_parameter_count(const dp_module* m, size_t* out);
/** Parameter `index` (in registration order): its dotted name and a new reference to the
    tensor. Either out may be NULL. The name is owned by the handle `m` and valid while
    it lives; another handle of the same module (replicas[0] of dp_replicate, a custom
    forward's `self`) keeps names of its own. dp_module_buffer is the same for buffers. */
DP_EXPORT dp_result dp_module_parameter(const dp_module* m, size_t index, const char** name,
                                        dp_tensor** tensor);
/** Number of distinct buffers (recursive). */
DP_EXPORT dp_result dp_module_buffer_count(const dp_module* m, size_t* out);
/** Buffer `index` (in registration order): its dotted name and a new reference, as
    dp_module_parameter. */
DP_EXPORT dp_result dp_module_buffer(const dp_module* m, size_t index, const char** name,
                                     dp_tensor** tensor);
/** A parameter or buffer by dotted name ("0.weight"), as a new reference in *tensor;
    DP_ERR_OUT_OF_RANGE names it when absent. */
DP_EXPORT dp_result dp_module_get(const dp_module* m, const char* name, dp_tensor** tensor);

/**
 * Saves every parameter and buffer under its dotted name as safetensors (PyTorch's
 * safetensors.torch.load_file reads it). Written to a temporary file beside path (named
 * path.tmp.<pid>.<n>), synced to the disk and renamed over path: a reader, and the file
 * after a crash, holds the old contents or the new ones whole, also while other threads or
 * processes save to the same path. The new file keeps the old one's permissions; a
 * symbolic link at path stays a link, and the file it names is replaced. A path that names
 * a device or a FIFO (/dev/null, a pipe) is written directly; one that names a directory
 * is DP_ERR_IO before anything is written.
 */
DP_EXPORT dp_result dp_module_save(const dp_module* m, const char* path);
/**
 * Loads a safetensors file into the module. Every name, dtype and shape is checked
 * before anything is copied: on a missing or extra name, a mismatch, or a corrupt or
 * truncated file, returns DP_ERR_FORMAT (DP_ERR_IO if unreadable) naming the entry and
 * leaves the module unchanged. So does DP_ERR_STATE, for a module whose tensors cannot be
 * written in place (a DataParallel replica reading the original's parameters).
 */
DP_EXPORT dp_result dp_module_load(dp_module* m, const char* path);

/* ---------------------------------------------------------------------------------- */
/* Optimizers                                                                        */
/* ---------------------------------------------------------------------------------- */

typedef struct dp_optimizer dp_optimizer;

typedef struct dp_sgd_options {
  size_t struct_size;
  double lr;
  double momentum;
  double dampening;
  /** L2 penalty added to the gradient (weight_decay * parameter); at least 0, a negative
      value or NaN is DP_ERR_INVALID_ARGUMENT. Infinity is accepted, as torch.optim accepts
      it, and turns every parameter the first step updates into inf or NaN (0 * inf). */
  double weight_decay;
  int nesterov;
} dp_sgd_options;
#define DP_SGD_OPTIONS_INIT { sizeof(dp_sgd_options), 0.01, 0.0, 0.0, 0.0, 0 }

typedef struct dp_adam_options {
  size_t struct_size;
  double lr;
  double beta1;
  double beta2;
  double eps;
  /** Adam: added to the gradient as in dp_sgd_options; AdamW: decoupled, each step first
      scales the parameter by 1 - lr * weight_decay. The same bounds, infinity included
      (every updated parameter becomes inf or NaN). */
  double weight_decay;
} dp_adam_options;
#define DP_ADAM_OPTIONS_INIT { sizeof(dp_adam_options), 1e-3, 0.9, 0.999, 1e-8, 0.0 }
/** AdamW's default weight decay is 0.01, as in PyTorch. */
#define DP_ADAMW_OPTIONS_INIT { sizeof(dp_adam_options), 1e-3, 0.9, 0.999, 1e-8, 0.01 }

/**
 * Optimizers over the module's parameters (as they are now: create the optimizer after
 * moving the module). Update rules are PyTorch's (torch.optim.SGD, Adam, AdamW).
 * options may be NULL for the defaults. The optimizer keeps the parameters alive. A step
 * skips a parameter without a gradient, such as a frozen one (requires_grad off), as
 * PyTorch does.
 */
DP_EXPORT dp_result dp_optimizer_sgd(const dp_module* m, const dp_sgd_options* options,
                                     dp_optimizer** out);
DP_EXPORT dp_result dp_optimizer_adam(const dp_module* m, const dp_adam_options* options,
                                      dp_optimizer** out);
DP_EXPORT dp_result dp_optimizer_adamw(const dp_module* m, const dp_adam_options* options,
                                       dp_optimizer** out);
/** One update of every parameter that has a gradient; parameters without are skipped. */
DP_EXPORT dp_result dp_optimizer_step(dp_optimizer* opt);
/** Sets every parameter's gradient to none. */
DP_EXPORT dp_result dp_optimizer_zero_grad(dp_optimizer* opt);
DP_EXPORT dp_result dp_optimizer_set_lr(dp_optimizer* opt, double lr);
DP_EXPORT dp_result dp_optimizer_lr(const dp_optimizer* opt, double* out);
DP_EXPORT void dp_optimizer_release(dp_optimizer* opt);

/* ---------------------------------------------------------------------------------- */
/* Training checkpoints                                                              */
/* ---------------------------------------------------------------------------------- */

typedef struct dp_metadata_entry {
  const char* key;
  const char* value;
} dp_metadata_entry;

/**
 * Saves a training checkpoint in one safetensors file: the module's state under its names
 * (so dp_module_load and PyTorch read it), the optimizer's state if `opt` is not NULL
 * (entries "optimizer/<i>/<slot>" for parameter i; slots as PyTorch names them; `opt`
 * must be over parameters of `m`, all or some: DP_ERR_INVALID_ARGUMENT otherwise), and
 * n_metadata string pairs (copied into the file's __metadata__). With `opt`, the file
 * also records the optimizer's learning rate (metadata "optimizer_lr", which
 * dp_checkpoint_load restores, as PyTorch's optimizer state_dict keeps its param_groups'
 * lr). The keys "format", "producer", "optimizer" and "optimizer_lr" are the library's
 * own: a pair may repeat their value but not contradict it (DP_ERR_INVALID_ARGUMENT). Names, keys and values must be valid UTF-8
 * (DP_ERR_INVALID_ARGUMENT names the one that is not). Written as dp_module_save writes, so
 * an interrupted save never damages an earlier file at `path`.
 */
DP_EXPORT dp_result dp_checkpoint_save(const dp_module* m, const dp_optimizer* opt,
                                       const char* path, const dp_metadata_entry* metadata,
                                       size_t n_metadata);
/**
 * Restores a checkpoint into the module and, if `opt` is not NULL, the optimizer (which
 * must be of the kind that saved it, over parameters of `m` as for dp_checkpoint_save):
 * its state and its learning rate (a file saved before "optimizer_lr" existed leaves the
 * rate as it is; one that is not a finite number >= 0 is DP_ERR_FORMAT). Its other
 * hyperparameters stay those it was made with.
 * Everything is checked before anything changes:
 * DP_ERR_FORMAT (naming the entry) leaves both untouched. That includes the optimizer's
 * state: each parameter's whole or absent (with a step count of at least 1 exactly when
 * its tensors are there), and no entry this optimizer does not keep. DP_ERR_STATE, as
 * dp_module_load's, also leaves both untouched.
 */
DP_EXPORT dp_result dp_checkpoint_load(dp_module* m, dp_optimizer* opt, const char* path);
/**
 * Reads metadata `key` of a safetensors file into buf (as dp_device_name copies);
 * DP_ERR_OUT_OF_RANGE names the key when it is absent. Reads the file's header only: the
 * tensors are not checked (dp_checkpoint_load does that), so any safetensors file gives
 * its metadata. DP_ERR_FORMAT for a corrupt header, or a value with a NUL character.
 */
DP_EXPORT dp_result dp_checkpoint_metadata(const char* path, const char* key, char* buf,
                                           size_t buf_size, size_t* needed);

/* ---------------------------------------------------------------------------------- */
/* DataParallel                                                                      */
/* ---------------------------------------------------------------------------------- */
/*
 * The pipeline of torch.nn.DataParallel: forward scatters the inputs along `dim` over
 * the devices, replicates the module (replica 0 is the module itself), runs the replicas
 * in parallel on the devices' workers and gathers the outputs on the output device.
 * Backward is the ordinary dp_backward on a loss computed from the outputs: gather,
 * scatter and broadcast are recorded like any op, so the module's gradients become the
 * SUM of the replicas' gradients (for a mean loss over the gathered batch, exactly the
 * full-batch gradient). An optimizer created on the module then trains it.
 */

typedef struct dp_data_parallel dp_data_parallel;

typedef enum dp_buffer_sync {
  /** PyTorch's behaviour: buffers (BatchNorm statistics) keep replica 0's updates only. */
  DP_BUFFER_SYNC_NONE = 0,
  /** After each training forward, the module's floating buffers that a replica wrote
      become the mean over all replicas, so running statistics see the whole batch
      (buffers no replica wrote are left exactly as they were; "wrote" as each copy's
      version counter tells, so a write through dp_tensor_data is not seen). */
  DP_BUFFER_SYNC_AVERAGE = 1,
  DP_ENUM_RANGE(DP_BUFFER_SYNC)
} dp_buffer_sync;

typedef struct dp_data_parallel_options {
  size_t struct_size;
  /** Sizes along dim, one per device, summing to the batch (0 skips a device); copied.
      NULL: equal chunks as torch.chunk (ceil(B/n) each; fewer chunks, and so fewer
      replicas, when the batch is small). */
  const int64_t* chunk_sizes;
  size_t n_chunk_sizes;
  /** Non-zero: forward returns every replica's outputs on its own device, replica by
      replica, instead of gathering them (compute the loss per device, gather scalars). */
  int no_gather;
  /** Non-zero: keep the replicas between forwards while grad mode is off and no
      parameter or buffer has changed (version counters, the replicas' own buffers
      included): repeated inference skips the broadcast. A write that bypasses the
      counters (through dp_tensor_data, borrowed memory or a DLPack export) is not seen:
      replicas holding copies (CUDA, or alias_cpu off) then keep the old values. */
  int cache_replicas;
  dp_buffer_sync buffer_sync;
  /** Non-zero (default): CPU devices share memory, so replicas of parameters, broadcast
      inputs and input chunks alias it, read-only, instead of copying it. While the
      replicas run, an in-place write to memory another replica reads (a replica's
      parameter or broadcast input, or the original module's parameters, which replica 0
      uses) fails with DP_ERR_STATE. Set 0 for a module that writes its parameters in
      forward: every replica then gets its own copy, and replica 0's writes reach the
      original as in PyTorch. */
  int alias_cpu;
  /** Broadcast bucket size in bytes; 0 means 10 MiB. */
  size_t bucket_bytes;
  /** The dtype the replicas' float32 parameter gradients move and are summed in:
      DP_FLOAT32 (the default, 0) or DP_BFLOAT16, which rounds each replica's gradient
      (other than the output device's) to bfloat16, sums them in bfloat16 and widens the
      sum, as PyTorch DDP's bf16_compress_hook: half the bytes; with n devices the sum
      is within (n - 1) * 2^-8 times the sum of those gradients' magnitudes of the
      float32 sum (first order; docs/autocast.md). */
  dp_dtype grad_reduce_dtype;
} dp_data_parallel_options;

#define DP_DATA_PARALLEL_OPTIONS_INIT \
  { sizeof(dp_data_parallel_options), NULL, 0, 0, 0, DP_BUFFER_SYNC_NONE, 1, 0, DP_FLOAT32 }

/**
 * Wraps `module` (the wrapper takes its own reference). device_ids: n_devices devices
 * (NULL: every CUDA device, else every CPU device); output_device: NULL for
 * device_ids[0]; dim: the batch dimension. options may be NULL. The module must have its
 * parameters on device_ids[0] when forward runs; with exactly one device it is moved
 * there now. With unbalanced GPUs a warning goes to the log callback.
 * Errors: DP_ERR_INVALID_ARGUMENT for an empty list, a duplicate id, ids of two device
 * types or a bad option (named); DP_ERR_OUT_OF_RANGE for an id (or output_device) of a
 * device that does not exist (the message names the id).
 */
DP_EXPORT dp_result dp_data_parallel_create(dp_module* module, const dp_device* device_ids,
                                            size_t n_devices, const dp_device* output_device,
                                            int32_t dim, const dp_data_parallel_options* options,
                                            dp_data_parallel** out);

/**
 * One forward. inputs[0..n_inputs) are borrowed; broadcast (may be NULL) marks inputs to
 * copy whole to every device instead of splitting. Outputs: the module's outputs
 * gathered on the output device (no_gather: each replica's, replica by replica). With
 * one device id the module runs itself and its outputs are returned as they are, as
 * PyTorch's DataParallel does with one device. With several, a batch that makes one chunk (or no inputs) runs the original alone
 * as replica 0 and its outputs are still gathered to the output device (a scalar into a
 * vector of one value), as in PyTorch. Its parameters pass through a recorded broadcast
 * to their own device, as PyTorch's lone replica's do: once backward reaches one of them,
 * those the forward did not use get zero gradients (buffers that require grad likewise,
 * as a group of their own), exactly as with several replicas.
 * Up to `capacity` new references go to outputs[] and their count to *n_outputs.
 * An output that is 0-dim on every replica (a loss computed per replica) is gathered
 * along dim 0 into a vector of one value per replica, as PyTorch does, and a
 * DP_LOG_WARNING message says so (reduce it, e.g. with a mean, before backward); with
 * dim != 0 it is DP_ERR_SHAPE_MISMATCH. dp_data_parallel_apply and dp_gather do the same.
 * Errors: DP_ERR_DEVICE_MISMATCH (the module is not on device_ids[0]: the message names
 * both), DP_ERR_SHAPE_MISMATCH (a 0-dim input to split; outputs that cannot be gathered:
 * the message names the replica and the shapes), DP_ERR_OUT_OF_RANGE (capacity too
 * small: found after the forward ran, as in dp_module_forward), and a replica's error as
 * "in replica I on device D: <message>".
 */
DP_EXPORT dp_result dp_data_parallel_forward(dp_data_parallel* dp, dp_tensor* const* inputs,
                                             const int* broadcast, size_t n_inputs,
                                             dp_tensor** outputs, size_t capacity,
                                             size_t* n_outputs);

/** The wrapped module (a new reference): train/eval, parameters, optimizers. */
DP_EXPORT dp_result dp_data_parallel_module(const dp_data_parallel* dp, dp_module** out);
/** The device list (*n receives its length; up to capacity entries are written). */
DP_EXPORT dp_result dp_data_parallel_devices(const dp_data_parallel* dp, dp_device* devices,
                                             size_t capacity, size_t* n);
/** Saves / loads the wrapped module's state under its own names (no "module." prefix),
    exactly as dp_module_save / dp_module_load. */
DP_EXPORT dp_result dp_data_parallel_save(const dp_data_parallel* dp, const char* path);
DP_EXPORT dp_result dp_data_parallel_load(dp_data_parallel* dp, const char* path);

/** Seconds spent in each phase. backward counts from the gathered output's backward to
    the start of the gradient reduce; reduce is the sum over replicas. With no_gather the
    wrapper does not see where backward starts (the losses are the caller's), so gather
    and backward stay 0 and reduce is still counted. */
typedef struct dp_phase_times {
  double scatter;
  double replicate;
  double apply;
  double gather;
  double backward;
  double reduce;
} dp_phase_times;

/** The last forward's (and its backward's) times, and the totals since creation or the
    last reset; calls: forwards counted. Any out may be NULL. */
DP_EXPORT dp_result dp_data_parallel_stats(const dp_data_parallel* dp, dp_phase_times* last,
                                           dp_phase_times* total, uint64_t* calls);
DP_EXPORT dp_result dp_data_parallel_reset_stats(dp_data_parallel* dp);
DP_EXPORT void dp_data_parallel_release(dp_data_parallel* dp);

/* The four stages on their own, and the functional form. */

/**
 * Splits `input` along dim over n_devices devices (chunk_sizes: n_devices sizes, or NULL
 * for torch.chunk's). Up to n_devices new references go to outs[], their count to *n_out
 * (fewer devices when the input is small). Chunks on the input's device are views.
 * Differentiable: gradients gather back to the input.
 */
DP_EXPORT dp_result dp_scatter(const dp_tensor* input, const dp_device* devices,
                               size_t n_devices, const int64_t* chunk_sizes, int32_t dim,
                               dp_tensor** outs, size_t* n_out);
/** Concatenates n tensors (any devices) along dim on output_device into a new reference
    in *out. Differentiable. 0-dim tensors gather as in dp_data_parallel_forward (a
    vector, and a warning to the log callback). */
DP_EXPORT dp_result dp_gather(dp_tensor* const* tensors, size_t n, dp_device output_device,
                              int32_t dim, dp_tensor** out);
/**
 * n_devices replicas of `module` (which must be on devices[0]): replicas[0] is the
 * module itself; the others hold broadcast copies of the parameters (gradients flow back
 * into the module's) and copies of the buffers. On CPU devices the parameter copies alias
 * the module's memory, read-only (as with alias_cpu). New references in replicas[].
 */
DP_EXPORT dp_result dp_replicate(dp_module* module, const dp_device* devices, size_t n_devices,
                                 dp_module** replicas);
/**
 * Runs replicas[i] on inputs[i * inputs_per_replica ...] on devices[i], all at once.
 * Each replica's inputs must be on its device (DP_ERR_DEVICE_MISMATCH otherwise, before
 * anything runs). Each replica must return one output: outputs[i] (new references). On
 * failure every replica has still finished and nothing is returned. While they run, the
 * parameters that replicas alias (dp_replicate on CPU devices) refuse in-place writes,
 * replica 0's included (DP_ERR_STATE).
 */
DP_EXPORT dp_result dp_parallel_apply(dp_module* const* replicas, size_t n,
                                      dp_tensor* const* inputs, size_t inputs_per_replica,
                                      const dp_device* devices, dp_tensor** outputs);
/**
 * The functional form: one DataParallel forward of module (on device_ids[0]) without a
 * wrapper, without moving the module and without the imbalance check. Arguments as
 * dp_data_parallel_create (device_ids, output_device, dim; default options) and
 * dp_data_parallel_forward (inputs borrowed; broadcast NULL or one flag per input, an
 * input flagged non-zero reaches every device whole; outputs new references; capacity
 * as there). Errors as those two: DP_ERR_OUT_OF_RANGE for an id (or output_device) of a
 * device that does not exist.
 */
DP_EXPORT dp_result dp_data_parallel_apply(dp_module* module, dp_tensor* const* inputs,
                                           const int* broadcast, size_t n_inputs,
                                           const dp_device* device_ids, size_t n_devices,
                                           const dp_device* output_device, int32_t dim,
                                           dp_tensor** outputs, size_t capacity,
                                           size_t* n_outputs);

/* ---------------------------------------------------------------------------------- */
/* Distributed: process groups and DistributedDataParallel (docs/distributed.md)       */
/* ---------------------------------------------------------------------------------- */

/**
 * A process group: the ranks of a job started by mpirun, mpiexec or srun, and the
 * collectives between them (torch.distributed's process group). The collectives run on
 * MPI through the plugin libdataparallel_mpi.so, loaded on the first group (beside this
 * library, or DP_MPI_PLUGIN): a program that creates no group never loads MPI. They run
 * in the order issued; the calls below return when theirs is done (DDP's gradient
 * buckets run on the group's communication thread while backward goes on).
 * A wait that lasts past the group's timeout prints which collective it waited for and
 * aborts the whole job (MPI_Abort), so a dead rank stops the others instead of hanging
 * them. Collectives on CUDA tensors run on NCCL (a communicator per CUDA device, made at
 * its first collective) when every rank has a GPU of its own, else through host memory
 * and MPI (DP_DISTRIBUTED_CUDA, docs/environment.md).
 * Every rank must issue the same collectives in the same order: a program that calls a
 * group (or a dp_ddp over it) from several threads orders those calls itself.
 */
typedef struct dp_process_group dp_process_group;

typedef struct dp_process_group_options {
  size_t struct_size;
  /** Seconds a collective may wait before the job is aborted, from 0.001 to 31536000 (a
      year; outside: DP_ERR_INVALID_ARGUMENT); 0: DP_DISTRIBUTED_TIMEOUT (seconds) when
      set, else 300. */
  double timeout_seconds;
} dp_process_group_options;

#define DP_PROCESS_GROUP_OPTIONS_INIT { sizeof(dp_process_group_options), 0.0 }

typedef enum dp_reduce_op {
  DP_REDUCE_SUM = 0,
  DP_REDUCE_AVERAGE = 1, /**< the sum divided by the group's size (floating tensors) */
  DP_REDUCE_MAX = 2,
  DP_REDUCE_MIN = 3,
  DP_ENUM_RANGE(DP_REDUCE_OP)
} dp_reduce_op;

/**
 * A group of every rank of the MPI environment this process was started in. MPI is
 * initialised here (MPI_THREAD_MULTIPLE) unless the program did it, and then finalised
 * when the last such group is released; MPI starts once per process, so keep the group
 * for the program's life. options may be NULL. Collective: every rank calls it.
 * Errors: DP_ERR_NOT_SUPPORTED when the MPI plugin cannot be loaded (the message names
 * the file and why); DP_ERR_BACKEND when MPI cannot start, or the program initialised
 * it below MPI_THREAD_SERIALIZED.
 */
DP_EXPORT dp_result dp_process_group_from_mpi(dp_context* ctx,
                                              const dp_process_group_options* options,
                                              dp_process_group** out);
/**
 * A group over a communicator the caller owns, passed as its Fortran handle
 * (MPI_Comm_c2f(comm) in C; comm.py2f() in mpi4py), which MPI defines the same way in
 * every implementation. MPI must be initialised with MPI_THREAD_SERIALIZED or more
 * (MPI_THREAD_MULTIPLE lets a timeout abort a rank blocked in a collective; see
 * docs/distributed.md), and stays the caller's: release the group before MPI_Finalize.
 * The group works on its own duplicate of the communicator. Collective over the
 * communicator.
 */
DP_EXPORT dp_result dp_process_group_from_mpi_comm(dp_context* ctx, int64_t fortran_comm,
                                                   const dp_process_group_options* options,
                                                   dp_process_group** out);
/** This rank, the ranks in the group, and the same among the ranks of this machine. */
DP_EXPORT dp_result dp_process_group_rank(const dp_process_group* group, int32_t* rank);
DP_EXPORT dp_result dp_process_group_size(const dp_process_group* group, int32_t* size);
DP_EXPORT dp_result dp_process_group_local_rank(const dp_process_group* group, int32_t* rank);
DP_EXPORT dp_result dp_process_group_local_size(const dp_process_group* group, int32_t* size);
/** In place: every rank's tensor (same shape and dtype on all) becomes the reduction.
    Through MPI a bfloat16 tensor is reduced in float32 and rounded to bfloat16 once, and
    an average is the sum divided by the group's size; on the NCCL route (CUDA tensors, a
    GPU per rank) bfloat16 is summed in bfloat16 and an average multiplies each input by
    1/size first, so bfloat16 results and averages can differ in their last bits between
    the two (docs/distributed.md). */
DP_EXPORT dp_result dp_process_group_allreduce(dp_process_group* group, dp_tensor* tensor,
                                               dp_reduce_op op);
/** In place: every rank's tensor becomes rank root's. DP_ERR_OUT_OF_RANGE for a root
    outside the group. */
DP_EXPORT dp_result dp_process_group_broadcast(dp_process_group* group, dp_tensor* tensor,
                                               int32_t root);
/** Every rank's tensor (same shape on all), concatenated along dim 0 in rank order (a
    0-dim tensor gives a vector), as a new reference in *out on the tensor's device. */
DP_EXPORT dp_result dp_process_group_allgather(dp_process_group* group, const dp_tensor* tensor,
                                               dp_tensor** out);
DP_EXPORT dp_result dp_process_group_barrier(dp_process_group* group);
/** Releases the handle; the group ends when no DDP uses it any more. */
DP_EXPORT void dp_process_group_release(dp_process_group* group);

/**
 * DistributedDataParallel, hierarchical: inside this rank the module runs as a
 * DataParallel over the rank's devices (one or several, CPU or CUDA; with one, the
 * module runs itself); across ranks, backward averages the gradients as PyTorch's DDP
 * does. Each rank feeds its own share of the global batch. The parameters go into
 * buckets (reverse order, the first up to first_bucket_bytes, the others up to
 * bucket_bytes; rebuilt once, at the synchronised forward after the first synchronised
 * backward, in the order that backward's gradients arrived in on rank 0, as PyTorch
 * does); a bucket's allreduce starts on the communication thread as soon as
 * backward has produced its last gradient, so it overlaps the rest of backward, and
 * dp_backward returns once every bucket is averaged. Parameters a step did not use get
 * zero gradients (averaged with the ranks that used them).
 */
typedef struct dp_ddp dp_ddp;

typedef struct dp_ddp_options {
  size_t struct_size;
  size_t bucket_bytes;       /**< 0: 25 MiB */
  size_t first_bucket_bytes; /**< 0: 1 MiB */
  /** Non-zero (default): rank 0's buffers (BatchNorm statistics) are broadcast to every
      rank before each forward, as PyTorch's broadcast_buffers. */
  int broadcast_buffers;
  /** The DataParallel inside the rank; NULL: DP_DATA_PARALLEL_OPTIONS_INIT. Copied. */
  const dp_data_parallel_options* local;
  /** The dtype float32 gradient buckets travel between the ranks in: DP_FLOAT32 (the
      default, 0) or DP_BFLOAT16, as PyTorch DDP's bf16_compress_hook: each rank's
      gradient is divided by the ranks and rounded to bfloat16, the ranks' values are summed
      in bfloat16 (each partial sum rounded) and the result widened back. Half the bytes;
      each averaged gradient is within ranks * 2^-8 times the mean of the ranks' gradient
      magnitudes of the float32 average (first order; docs/distributed.md). Buckets of
      other dtypes travel in their own. Every rank must pass the same value. */
  dp_dtype allreduce_dtype;
} dp_ddp_options;

#define DP_DDP_OPTIONS_INIT { sizeof(dp_ddp_options), 0, 0, 1, NULL, DP_FLOAT32 }

/**
 * Wraps module (the wrapper takes its own reference) over group. device_ids: this rank's
 * devices, as dp_data_parallel_create's; NULL for the default: the GPU of the local rank
 * (cuda:(local_rank % GPUs)) where CUDA devices exist, else this rank's share of the CPU
 * devices, cpu:0 .. cpu:(CPU devices / local size - 1), at least one. output_device,
 * dim: as dp_data_parallel_create's. options may be NULL.
 * Collective: every rank checks that the models agree (parameter and buffer names,
 * shapes and dtypes, and which parameters are frozen), and the options that shape the
 * collectives (bucket_bytes, first_bucket_bytes, broadcast_buffers, allreduce_dtype),
 * and then takes rank 0's parameters and buffers. When they differ, every rank fails with
 * DP_ERR_INVALID_ARGUMENT and the same message naming the first difference ("the ranks'
 * models differ: rank 0 has parameter '1.weight' (float32, [256, 512]) where rank 1 has
 * ...", or "the ranks' DDP options differ: rank 0 has option 'allreduce_dtype' ...").
 * Other errors as dp_data_parallel_create.
 */
DP_EXPORT dp_result dp_ddp_create(dp_module* module, dp_process_group* group,
                                  const dp_device* device_ids, size_t n_devices,
                                  const dp_device* output_device, int32_t dim,
                                  const dp_ddp_options* options, dp_ddp** out);
/** One forward of this rank's batch; arguments, outputs and errors as
    dp_data_parallel_forward. With broadcast_buffers, the buffers are broadcast first. */
DP_EXPORT dp_result dp_ddp_forward(dp_ddp* ddp, dp_tensor* const* inputs, const int* broadcast,
                                   size_t n_inputs, dp_tensor** outputs, size_t capacity,
                                   size_t* n_outputs);
/** The wrapped module (a new reference). */
DP_EXPORT dp_result dp_ddp_module(const dp_ddp* ddp, dp_module** out);
/** This rank's devices (*n receives their count; up to capacity are written). */
DP_EXPORT dp_result dp_ddp_devices(const dp_ddp* ddp, dp_device* devices, size_t capacity,
                                   size_t* n);
/** The number of gradient buckets (it may change once, when the buckets are rebuilt). */
DP_EXPORT dp_result dp_ddp_bucket_count(const dp_ddp* ddp, size_t* n);

/**
 * Seconds a DistributedDataParallel step spends, by part. The caller sets struct_size
 * (DP_DDP_PHASE_TIMES_INIT): at least this version's size; the library writes the members
 * it knows and leaves the bytes of a newer header's later members as they are.
 */
typedef struct dp_ddp_phase_times {
  size_t struct_size;
  /** The DataParallel inside the rank, as dp_data_parallel_stats: its reduce is the sum
      between the rank's devices (0 with one device). */
  dp_phase_times local;
  /** Rank 0's buffers to every rank before each forward (broadcast_buffers). */
  double buffer_broadcast;
  /** The gradient buckets' allreduce between the ranks, summed over the buckets, on the
      process group's communication thread: it overlaps backward. */
  double allreduce;
  /** Backward's end waiting for those allreduces: the part backward did not hide. */
  double sync_wait;
} dp_ddp_phase_times;

#define DP_DDP_PHASE_TIMES_INIT { sizeof(dp_ddp_phase_times), { 0, 0, 0, 0, 0, 0 }, 0, 0, 0 }

/** The last forward's (and its backward's) times, and the totals since creation or the
    last reset; calls: forwards counted. Any out may be NULL; each given one needs its
    struct_size set. DP_ERR_INVALID_ARGUMENT for a NULL ddp or a struct_size below this
    version's size (naming it; then neither result is written). Not collective; call it
    between steps (during one, the local phases and the allreduce may come from
    different steps). */
DP_EXPORT dp_result dp_ddp_stats(const dp_ddp* ddp, dp_ddp_phase_times* last,
                                 dp_ddp_phase_times* total, uint64_t* calls);
/** Starts the totals and the count again (DP_ERR_INVALID_ARGUMENT for a NULL ddp). */
DP_EXPORT dp_result dp_ddp_reset_stats(dp_ddp* ddp);
/**
 * sync 0: the backwards of the following forwards only accumulate local gradients
 * (PyTorch's no_sync(), for gradient accumulation); 1 (default): the next backward
 * averages the gradients, what accumulated included. Read at each forward.
 */
DP_EXPORT dp_result dp_ddp_set_grad_sync(dp_ddp* ddp, int sync);
/**
 * Uneven inputs (PyTorch's join()): with on non-zero, each forward first counts the
 * ranks still training (a small allreduce), and a rank out of batches calls dp_ddp_join,
 * which takes part in the others' collectives, with zero gradients, until every rank has
 * joined; the gradients stay averaged over all ranks (the joined ones count as zeros).
 * Then every rank takes the parameters and buffers of the rank that ran the most
 * forwards (the highest such rank), whose optimizer saw every step. Every rank turns it
 * on before its first forward and calls dp_ddp_join after its last batch; with grad
 * mode on, each forward is followed by one backward.
 */
DP_EXPORT dp_result dp_ddp_set_uneven_inputs(dp_ddp* ddp, int on);
/** See dp_ddp_set_uneven_inputs. DP_ERR_STATE when uneven inputs are off. */
DP_EXPORT dp_result dp_ddp_join(dp_ddp* ddp);
DP_EXPORT void dp_ddp_release(dp_ddp* ddp);

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
  dp_result (*tensor_set_requires_grad)(dp_tensor*, int);
  dp_result (*tensor_requires_grad)(const dp_tensor*, int*);
  dp_result (*tensor_grad)(const dp_tensor*, dp_tensor**);
  dp_result (*tensor_zero_grad)(dp_tensor*);
  dp_result (*tensor_detach)(const dp_tensor*, dp_tensor**);
  dp_result (*backward)(dp_tensor*, const dp_tensor*, int);
  int (*is_grad_enabled)(void);
  int (*set_grad_enabled)(int);
  dp_result (*set_error)(dp_result, const char*);
  dp_result (*op_add)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_sub)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_mul)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_div)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_neg)(const dp_tensor*, dp_tensor**);
  dp_result (*op_scale)(const dp_tensor*, double, dp_tensor**);
  dp_result (*op_add_scalar)(const dp_tensor*, double, dp_tensor**);
  dp_result (*op_relu)(const dp_tensor*, dp_tensor**);
  dp_result (*op_gelu)(const dp_tensor*, dp_tensor**);
  dp_result (*op_tanh)(const dp_tensor*, dp_tensor**);
  dp_result (*op_sigmoid)(const dp_tensor*, dp_tensor**);
  dp_result (*op_exp)(const dp_tensor*, dp_tensor**);
  dp_result (*op_log)(const dp_tensor*, dp_tensor**);
  dp_result (*op_sum)(const dp_tensor*, dp_tensor**);
  dp_result (*op_sum_dim)(const dp_tensor*, int32_t, int, dp_tensor**);
  dp_result (*op_mean)(const dp_tensor*, dp_tensor**);
  dp_result (*op_mean_dim)(const dp_tensor*, int32_t, int, dp_tensor**);
  dp_result (*op_argmax)(const dp_tensor*, int32_t, dp_tensor**);
  dp_result (*op_matmul)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_linear)(const dp_tensor*, const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_softmax)(const dp_tensor*, int32_t, dp_tensor**);
  dp_result (*op_log_softmax)(const dp_tensor*, int32_t, dp_tensor**);
  dp_result (*op_conv2d)(const dp_tensor*, const dp_tensor*, const dp_tensor*, int32_t, int32_t,
                         int32_t, int32_t, dp_tensor**);
  dp_result (*op_max_pool2d)(const dp_tensor*, int32_t, int32_t, int32_t, int32_t, int32_t,
                             int32_t, dp_tensor**);
  dp_result (*op_avg_pool2d)(const dp_tensor*, int32_t, int32_t, int32_t, int32_t, int32_t,
                             int32_t, dp_tensor**);
  dp_result (*op_batch_norm)(const dp_tensor*, const dp_tensor*, const dp_tensor*, dp_tensor*,
                             dp_tensor*, int, double, double, dp_tensor**);
  dp_result (*op_dropout)(const dp_tensor*, double, int, uint64_t, dp_tensor**);
  dp_result (*op_embedding)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_cross_entropy)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_nll_loss)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_mse_loss)(const dp_tensor*, const dp_tensor*, dp_tensor**);
  dp_result (*op_reshape)(const dp_tensor*, const int64_t*, size_t, dp_tensor**);
  dp_result (*op_flatten)(const dp_tensor*, int32_t, int32_t, dp_tensor**);
  dp_result (*op_cat)(const dp_tensor* const*, size_t, int32_t, dp_tensor**);
  dp_result (*op_split)(const dp_tensor*, const int64_t*, size_t, int32_t, dp_tensor**);
  dp_result (*module_linear)(dp_context*, int64_t, int64_t, int, dp_device, dp_module**);
  dp_result (*module_conv2d)(dp_context*, int64_t, int64_t, int32_t, int32_t, int32_t, int32_t,
                             int32_t, int32_t, int, dp_device, dp_module**);
  dp_result (*module_relu)(dp_context*, dp_module**);
  dp_result (*module_gelu)(dp_context*, dp_module**);
  dp_result (*module_tanh)(dp_context*, dp_module**);
  dp_result (*module_sigmoid)(dp_context*, dp_module**);
  dp_result (*module_dropout)(dp_context*, double, dp_module**);
  dp_result (*module_batchnorm1d)(dp_context*, int64_t, double, double, dp_device, dp_module**);
  dp_result (*module_batchnorm2d)(dp_context*, int64_t, double, double, dp_device, dp_module**);
  dp_result (*module_maxpool2d)(dp_context*, int32_t, int32_t, int32_t, int32_t, int32_t,
                                int32_t, dp_module**);
  dp_result (*module_avgpool2d)(dp_context*, int32_t, int32_t, int32_t, int32_t, int32_t,
                                int32_t, dp_module**);
  dp_result (*module_flatten)(dp_context*, int32_t, int32_t, dp_module**);
  dp_result (*module_embedding)(dp_context*, int64_t, int64_t, dp_device, dp_module**);
  dp_result (*module_sequential)(dp_context*, dp_module**);
  dp_result (*module_append)(dp_module*, dp_module*);
  dp_result (*module_custom)(dp_context*, const dp_custom_module_desc*, dp_module**);
  dp_result (*module_register_parameter)(dp_module*, const char*, dp_tensor*);
  dp_result (*module_register_buffer)(dp_module*, const char*, dp_tensor*);
  dp_result (*module_register_child)(dp_module*, const char*, dp_module*);
  dp_result (*module_forward)(dp_module*, dp_tensor* const*, size_t, dp_tensor**, size_t,
                              size_t*);
  dp_result (*module_forward1)(dp_module*, dp_tensor*, dp_tensor**);
  dp_module* (*module_retain)(dp_module*);
  void (*module_release)(dp_module*);
  dp_result (*module_type_name)(const dp_module*, const char**);
  dp_result (*module_train)(dp_module*, int);
  dp_result (*module_is_training)(const dp_module*, int*);
  dp_result (*module_to)(dp_module*, dp_device);
  dp_result (*module_zero_grad)(dp_module*);
  dp_result (*module_parameter_count)(const dp_module*, size_t*);
  dp_result (*module_parameter)(const dp_module*, size_t, const char**, dp_tensor**);
  dp_result (*module_buffer_count)(const dp_module*, size_t*);
  dp_result (*module_buffer)(const dp_module*, size_t, const char**, dp_tensor**);
  dp_result (*module_get)(const dp_module*, const char*, dp_tensor**);
  dp_result (*module_save)(const dp_module*, const char*);
  dp_result (*module_load)(dp_module*, const char*);
  dp_result (*optimizer_sgd)(const dp_module*, const dp_sgd_options*, dp_optimizer**);
  dp_result (*optimizer_adam)(const dp_module*, const dp_adam_options*, dp_optimizer**);
  dp_result (*optimizer_adamw)(const dp_module*, const dp_adam_options*, dp_optimizer**);
  dp_result (*optimizer_step)(dp_optimizer*);
  dp_result (*optimizer_zero_grad)(dp_optimizer*);
  dp_result (*optimizer_set_lr)(dp_optimizer*, double);
  dp_result (*optimizer_lr)(const dp_optimizer*, double*);
  void (*optimizer_release)(dp_optimizer*);
  dp_result (*data_parallel_create)(dp_module*, const dp_device*, size_t, const dp_device*,
                                    int32_t, const dp_data_parallel_options*, dp_data_parallel**);
  dp_result (*data_parallel_forward)(dp_data_parallel*, dp_tensor* const*, const int*, size_t,
                                     dp_tensor**, size_t, size_t*);
  dp_result (*data_parallel_module)(const dp_data_parallel*, dp_module**);
  dp_result (*data_parallel_devices)(const dp_data_parallel*, dp_device*, size_t, size_t*);
  dp_result (*data_parallel_save)(const dp_data_parallel*, const char*);
  dp_result (*data_parallel_load)(dp_data_parallel*, const char*);
  dp_result (*data_parallel_stats)(const dp_data_parallel*, dp_phase_times*, dp_phase_times*,
                                   uint64_t*);
  dp_result (*data_parallel_reset_stats)(dp_data_parallel*);
  void (*data_parallel_release)(dp_data_parallel*);
  dp_result (*scatter)(const dp_tensor*, const dp_device*, size_t, const int64_t*, int32_t,
                       dp_tensor**, size_t*);
  dp_result (*gather)(dp_tensor* const*, size_t, dp_device, int32_t, dp_tensor**);
  dp_result (*replicate)(dp_module*, const dp_device*, size_t, dp_module**);
  dp_result (*parallel_apply)(dp_module* const*, size_t, dp_tensor* const*, size_t,
                              const dp_device*, dp_tensor**);
  dp_result (*data_parallel_apply)(dp_module*, dp_tensor* const*, const int*, size_t,
                                   const dp_device*, size_t, const dp_device*, int32_t, dp_tensor**,
                                   size_t, size_t*);
  dp_result (*checkpoint_save)(const dp_module*, const dp_optimizer*, const char*,
                               const dp_metadata_entry*, size_t);
  dp_result (*checkpoint_load)(dp_module*, dp_optimizer*, const char*);
  dp_result (*checkpoint_metadata)(const char*, const char*, char*, size_t, size_t*);
  dp_result (*tensor_context)(const dp_tensor*, dp_context**);
  /* version 2 */
  dp_result (*process_group_from_mpi)(dp_context*, const dp_process_group_options*,
                                      dp_process_group**);
  dp_result (*process_group_from_mpi_comm)(dp_context*, int64_t, const dp_process_group_options*,
                                           dp_process_group**);
  dp_result (*process_group_rank)(const dp_process_group*, int32_t*);
  dp_result (*process_group_size)(const dp_process_group*, int32_t*);
  dp_result (*process_group_local_rank)(const dp_process_group*, int32_t*);
  dp_result (*process_group_local_size)(const dp_process_group*, int32_t*);
  dp_result (*process_group_allreduce)(dp_process_group*, dp_tensor*, dp_reduce_op);
  dp_result (*process_group_broadcast)(dp_process_group*, dp_tensor*, int32_t);
  dp_result (*process_group_allgather)(dp_process_group*, const dp_tensor*, dp_tensor**);
  dp_result (*process_group_barrier)(dp_process_group*);
  void (*process_group_release)(dp_process_group*);
  dp_result (*ddp_create)(dp_module*, dp_process_group*, const dp_device*, size_t,
                          const dp_device*, int32_t, const dp_ddp_options*, dp_ddp**);
  dp_result (*ddp_forward)(dp_ddp*, dp_tensor* const*, const int*, size_t, dp_tensor**, size_t,
                           size_t*);
  dp_result (*ddp_module)(const dp_ddp*, dp_module**);
  dp_result (*ddp_devices)(const dp_ddp*, dp_device*, size_t, size_t*);
  dp_result (*ddp_bucket_count)(const dp_ddp*, size_t*);
  dp_result (*ddp_set_grad_sync)(dp_ddp*, int);
  dp_result (*ddp_set_uneven_inputs)(dp_ddp*, int);
  dp_result (*ddp_join)(dp_ddp*);
  void (*ddp_release)(dp_ddp*);
  /* version 3 */
  dp_result (*device_bf16_native)(const dp_context*, dp_device, int*);
  dp_result (*set_autocast)(dp_dtype, dp_dtype*);
  dp_dtype (*autocast_dtype)(void);
  /* version 4 */
  dp_result (*ddp_stats)(const dp_ddp*, dp_ddp_phase_times*, dp_ddp_phase_times*, uint64_t*);
  dp_result (*ddp_reset_stats)(dp_ddp*);
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
