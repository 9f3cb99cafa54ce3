/* What the Python and the Java interface have in common: how SWIG sees the handles and
   the option structs of include/dataparallel/dataparallel.h. Included by
   bindings/<lang>/dataparallel.i before the header itself. */

%{
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataparallel/dataparallel.h"

/* Sets the last error from a printf format (bindings-side argument checks). */
static dp_result dp_bind_error(dp_result code, const char* format, ...) {
  char message[256];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  return dp_set_error(code, message);
}

/* Whether broadcast flags (NULL: none) come one per input; if not, records the error. */
static int dp_bind_flags_fit(const int* flags, size_t n_flags, size_t n_inputs) {
  if (!flags || n_flags == n_inputs) return 1;
  dp_bind_error(DP_ERR_INVALID_ARGUMENT, "broadcast has %zu flags but there are %zu inputs",
                n_flags, n_inputs);
  return 0;
}
%}

/* ---- handles ------------------------------------------------------------------------
   The header declares each handle as an incomplete struct. An empty definition seen by
   SWIG only makes it a proxy class; the proxy has no constructor (handles come from the
   dp_X_create... functions) and its destructor drops the reference it owns. */
%define DP_HANDLE(TYPE, RELEASE)
%nodefaultctor TYPE;
%nodefaultdtor TYPE;
struct TYPE {};
%extend TYPE {
  ~TYPE() { RELEASE($self); }
}
%enddef

DP_HANDLE(dp_context, dp_context_release)
DP_HANDLE(dp_tensor, dp_tensor_release)
DP_HANDLE(dp_module, dp_module_release)
DP_HANDLE(dp_optimizer, dp_optimizer_release)
DP_HANDLE(dp_data_parallel, dp_data_parallel_release)
DP_HANDLE(dp_process_group, dp_process_group_release)
DP_HANDLE(dp_ddp, dp_ddp_release)

/* ---- option structs: constructed with their ..._INIT defaults ------------------------
   SWIG's default constructor would zero struct_size, which the library rejects. */
%define DP_OPTIONS(TYPE, INIT)
%immutable TYPE::struct_size;
%extend TYPE {
  TYPE() {
    TYPE* o = (TYPE*)malloc(sizeof(TYPE));
    if (o) {
      TYPE init = INIT;
      *o = init;
    }
    return o;
  }
}
%enddef

DP_OPTIONS(dp_context_options, DP_CONTEXT_OPTIONS_INIT)
DP_OPTIONS(dp_sgd_options, DP_SGD_OPTIONS_INIT)
DP_OPTIONS(dp_adam_options, DP_ADAM_OPTIONS_INIT)
DP_OPTIONS(dp_process_group_options, DP_PROCESS_GROUP_OPTIONS_INIT)

/* local (the DataParallel inside each rank) is a pointer the struct does not own: the
   proxy owns a copy instead, set with set_local (chunk_sizes included) and freed with the
   struct, so the dp_data_parallel_options proxy passed in need not outlive the call. The
   copy shares the struct's allocation. */
%{
typedef struct dp_bind_ddp_options {
  dp_ddp_options options; /* first: the proxy's pointer is this struct's */
  dp_data_parallel_options local;
} dp_bind_ddp_options;
%}
%immutable dp_ddp_options::struct_size;
%ignore dp_ddp_options::local;
%nodefaultdtor dp_ddp_options;
%extend dp_ddp_options {
  dp_ddp_options() {
    dp_bind_ddp_options* b = (dp_bind_ddp_options*)malloc(sizeof *b);
    if (b) {
      dp_ddp_options init = DP_DDP_OPTIONS_INIT;
      b->options = init;
    }
    return (dp_ddp_options*)b;
  }
  ~dp_ddp_options() {
    if ($self->local) free((void*)$self->local->chunk_sizes);
    free($self);
  }
  /* Copies local; NULL restores the default (DP_DATA_PARALLEL_OPTIONS_INIT). A chunk_sizes
     copy that cannot be allocated stays NULL with its count, which dp_ddp_create rejects,
     rather than quietly becoming equal chunks. */
  void set_local(const dp_data_parallel_options* local) {
    dp_bind_ddp_options* b = (dp_bind_ddp_options*)$self;
    if ($self->local) free((void*)$self->local->chunk_sizes);
    $self->local = NULL;
    if (!local) return;
    b->local = *local;
    b->local.chunk_sizes = NULL;
    if (local->chunk_sizes && local->n_chunk_sizes) {
      int64_t* copy = (int64_t*)malloc(local->n_chunk_sizes * sizeof(int64_t));
      if (copy) memcpy(copy, local->chunk_sizes, local->n_chunk_sizes * sizeof(int64_t));
      b->local.chunk_sizes = copy;
    }
    $self->local = &b->local;
  }
}

/* AdamW's defaults differ from Adam's only in weight_decay. */
%inline %{
dp_adam_options* dp_adamw_default_options(void) {
  dp_adam_options* o = (dp_adam_options*)malloc(sizeof(dp_adam_options));
  if (o) {
    dp_adam_options init = DP_ADAMW_OPTIONS_INIT;
    *o = init;
  }
  return o;
}
%}
%newobject dp_adamw_default_options;

/* The callback fields are set through each language's own helpers. */
%immutable dp_metadata_entry::key; /* only read by the bindings (typemaps fill arrays) */
%immutable dp_metadata_entry::value;
%ignore dp_context_options::log_fn;
%ignore dp_context_options::log_user_data;
%ignore dp_context_options::log_user_data_free;

/* chunk_sizes is a pointer the struct does not own: the proxy keeps a copy, set with
   set_chunk_sizes and freed with the struct. */
%ignore dp_data_parallel_options::chunk_sizes;
%immutable dp_data_parallel_options::n_chunk_sizes;
%immutable dp_data_parallel_options::struct_size;
%nodefaultdtor dp_data_parallel_options;
%extend dp_data_parallel_options {
  dp_data_parallel_options() {
    dp_data_parallel_options* o = (dp_data_parallel_options*)malloc(sizeof *o);
    if (o) {
      dp_data_parallel_options init = DP_DATA_PARALLEL_OPTIONS_INIT;
      *o = init;
    }
    return o;
  }
  ~dp_data_parallel_options() {
    free((void*)$self->chunk_sizes);
    free($self);
  }
  /* Copies sizes[0..n); n = 0 restores the default (equal chunks), as in C. A copy that
     cannot be allocated stays NULL with its count, which the library rejects, rather than
     quietly becoming equal chunks. */
  void set_chunk_sizes(const int64_t* sizes, size_t n) {
    free((void*)$self->chunk_sizes);
    $self->chunk_sizes = NULL;
    $self->n_chunk_sizes = n;
    if (n == 0) return;
    int64_t* copy = (int64_t*)malloc(n * sizeof(int64_t));
    if (!copy) return;
    memcpy(copy, sizes, n * sizeof(int64_t));
    $self->chunk_sizes = copy;
  }
}

/* ---- not bound -----------------------------------------------------------------------
   The function table is for dlopen() users; bindings link the library. Raw pointers to
   caller memory and C callbacks are replaced by each language's safe helpers (borrowing
   keeps the language's buffer alive; custom modules call back into the language). */
%ignore dp_api;
%ignore dp_get_api;
%ignore dp_set_error;
%ignore dp_tensor_from_borrowed;
%ignore dp_tensor_from_adopted;
%ignore dp_custom_module_desc;
%ignore dp_module_custom;
%ignore dp_tensor_retain; /* a second proxy of the same handle adds nothing */
%ignore dp_module_retain;

/* The bucket count under the output name every binding returns (`out`). */
%ignore dp_ddp_bucket_count;
%rename(dp_ddp_bucket_count) dp_ddp_bucket_count_out;
%inline %{
dp_result dp_ddp_bucket_count_out(const dp_ddp* ddp, size_t* out) {
  return dp_ddp_bucket_count(ddp, out);
}
%}

/* Strings copied into caller buffers: the bindings fetch the whole string instead. */
%ignore dp_device_name;
%ignore dp_checkpoint_metadata;
%inline %{
/* dp_device_name's full text in *out (malloc'd; the binding frees it). */
dp_result dp_device_name_string(const dp_context* ctx, dp_device device, char** out) {
  size_t needed = 0;
  dp_result r = dp_device_name(ctx, device, NULL, 0, &needed);
  if (r != DP_OK) return r;
  char* buf = (char*)malloc(needed);
  if (!buf) return DP_ERR_OUT_OF_MEMORY;
  r = dp_device_name(ctx, device, buf, needed, NULL);
  if (r != DP_OK) {
    free(buf);
    return r;
  }
  *out = buf;
  return DP_OK;
}

/* dp_checkpoint_metadata's full value in *out (malloc'd; the binding frees it). The value
   and its size come from one read of the file, repeated with a larger buffer until the
   value fits: a file replaced between two reads cannot cut a value to another's size. */
dp_result dp_checkpoint_metadata_string(const char* path, const char* key, char** out) {
  size_t size = 64;
  for (;;) {
    char* buf = (char*)malloc(size);
    if (!buf) return DP_ERR_OUT_OF_MEMORY;
    size_t needed = 0;
    dp_result r = dp_checkpoint_metadata(path, key, buf, size, &needed);
    if (r == DP_OK && needed <= size) {
      *out = buf;
      return DP_OK;
    }
    free(buf);
    if (r != DP_OK) return r;
    size = needed;
  }
}
%}

/* ---- array functions in one shape ----------------------------------------------------
   SWIG maps one target-language argument to each group of adjacent C parameters. These
   functions take their arrays as (pointer, count) pairs and return theirs as (pointer,
   capacity, count) triples; each checks the counts, then calls the function it replaces
   under that function's name. */
%ignore dp_data_parallel_forward;
%ignore dp_ddp_forward;
%ignore dp_data_parallel_apply;
%ignore dp_op_split;
%ignore dp_scatter;
%ignore dp_replicate;
%ignore dp_parallel_apply;
%rename(dp_data_parallel_forward) dp_data_parallel_forward_flags;
%rename(dp_ddp_forward) dp_ddp_forward_flags;
%rename(dp_data_parallel_apply) dp_data_parallel_apply_flags;
%rename(dp_op_split) dp_op_split_into;
%rename(dp_scatter) dp_scatter_into;
%rename(dp_replicate) dp_replicate_into;
%rename(dp_parallel_apply) dp_parallel_apply_into;
%inline %{
/* dp_data_parallel_forward with the broadcast flags (NULL or n_flags == n_inputs) after
   the inputs. */
dp_result dp_data_parallel_forward_flags(dp_data_parallel* dp, dp_tensor* const* inputs,
                                         size_t n_inputs, const int* flags, size_t n_flags,
                                         dp_tensor** outputs, size_t capacity,
                                         size_t* n_outputs) {
  if (!dp_bind_flags_fit(flags, n_flags, n_inputs)) return DP_ERR_INVALID_ARGUMENT;
  return dp_data_parallel_forward(dp, inputs, flags, n_inputs, outputs, capacity, n_outputs);
}

/* dp_ddp_forward with the broadcast flags (NULL or n_flags == n_inputs) after the
   inputs. */
dp_result dp_ddp_forward_flags(dp_ddp* ddp, dp_tensor* const* inputs, size_t n_inputs,
                               const int* flags, size_t n_flags, dp_tensor** outputs,
                               size_t capacity, size_t* n_outputs) {
  if (!dp_bind_flags_fit(flags, n_flags, n_inputs)) return DP_ERR_INVALID_ARGUMENT;
  return dp_ddp_forward(ddp, inputs, flags, n_inputs, outputs, capacity, n_outputs);
}

/* dp_data_parallel_apply with the broadcast flags (NULL or n_flags == n_inputs) after the
   inputs. */
dp_result dp_data_parallel_apply_flags(dp_module* module, dp_tensor* const* inputs,
                                       size_t n_inputs, const int* flags, size_t n_flags,
                                       const dp_device* device_ids, size_t n_devices,
                                       const dp_device* output_device, int32_t dim,
                                       dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  if (!dp_bind_flags_fit(flags, n_flags, n_inputs)) return DP_ERR_INVALID_ARGUMENT;
  return dp_data_parallel_apply(module, inputs, flags, n_inputs, device_ids, n_devices,
                                output_device, dim, outputs, capacity, n_outputs);
}

/* dp_op_split's pieces into outputs[0 .. n). */
dp_result dp_op_split_into(const dp_tensor* x, const int64_t* sizes, size_t n, int32_t dim,
                           dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  if (n > capacity) {
    return dp_bind_error(DP_ERR_OUT_OF_RANGE, "split: %zu pieces but at most %zu fit", n, capacity);
  }
  dp_result r = dp_op_split(x, sizes, n, dim, outputs);
  if (r == DP_OK) *n_outputs = n;
  return r;
}

/* dp_scatter with chunk_sizes (NULL, or one per device) counted. */
dp_result dp_scatter_into(const dp_tensor* input, const dp_device* devices, size_t n_devices,
                          const int64_t* chunk_sizes, size_t n_chunk_sizes, int32_t dim,
                          dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  if (chunk_sizes && n_chunk_sizes != n_devices) {
    return dp_bind_error(DP_ERR_INVALID_ARGUMENT,
                         "scatter: %zu chunk_sizes for %zu devices (need one per device)",
                         n_chunk_sizes, n_devices);
  }
  if (n_devices > capacity) {
    return dp_bind_error(DP_ERR_OUT_OF_RANGE, "scatter: %zu devices but at most %zu fit",
                         n_devices, capacity);
  }
  return dp_scatter(input, devices, n_devices, chunk_sizes, dim, outputs, n_outputs);
}

/* dp_replicate's n_devices replicas into replicas[0 .. n_devices). */
dp_result dp_replicate_into(dp_module* module, const dp_device* devices, size_t n_devices,
                            dp_module** replicas, size_t capacity, size_t* n_replicas) {
  if (n_devices > capacity) {
    return dp_bind_error(DP_ERR_OUT_OF_RANGE, "replicate: %zu devices but at most %zu fit",
                         n_devices, capacity);
  }
  dp_result r = dp_replicate(module, devices, n_devices, replicas);
  if (r == DP_OK) *n_replicas = n_devices;
  return r;
}

/* dp_parallel_apply over n replicas: inputs holds n_inputs / n per replica, devices one
   per replica. */
dp_result dp_parallel_apply_into(dp_module* const* replicas, size_t n, dp_tensor* const* inputs,
                                 size_t n_inputs, const dp_device* devices, size_t n_devices,
                                 dp_tensor** outputs, size_t capacity, size_t* n_outputs) {
  if (n == 0 || n_devices != n || n_inputs % n != 0) {
    return dp_bind_error(DP_ERR_INVALID_ARGUMENT,
                         "parallel_apply: %zu replicas, %zu devices and %zu inputs (need at "
                         "least one replica, one device per replica and the same number of "
                         "inputs for each)",
                         n, n_devices, n_inputs);
  }
  if (n > capacity) {
    return dp_bind_error(DP_ERR_OUT_OF_RANGE, "parallel_apply: %zu replicas but at most %zu fit",
                         n, capacity);
  }
  dp_result r = dp_parallel_apply(replicas, n, inputs, n_inputs / n, devices, outputs);
  if (r == DP_OK) *n_outputs = n;
  return r;
}
%}
