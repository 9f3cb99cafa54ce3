/* Bad input through every public function of the C API, driven by one table: each row makes
   one call with one bad argument and names the dp_result it must return and a substring of
   dp_last_error() that names the argument and its value. The runner also checks that a
   failing call leaves every output untouched (the header's convention).

   DP_BAD_INPUT_ONLY=<row name> runs one row; DP_BAD_INPUT_VERBOSE=1 names each row
   before it runs. (The rows that found library bugs while this suite was written are the
   ones with a "was a library bug" note; each now passes like the others.)

   Functions that return void or plain values are checked separately for NULL-safety and
   sensible values. Released handles are undefined behaviour and not tested. */
#define _POSIX_C_SOURCE 200809L
#include <dlpack/dlpack.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

/* Malformed DLPack tensors for dp_tensor_from_dlpack, one per defect. */
enum {
  DLV_NDIM_9,
  DLV_NDIM_NEGATIVE,
  DLV_SHAPE_NULL,
  DLV_SHAPE_NEGATIVE,
  DLV_FLOAT16,
  DLV_LANES_4,
  DLV_DEVICE_TYPE_8,
  DLV_STRIDED,
  DLV_DATA_NULL,
  DLV_COUNT
};

/* The handles and values the rows use; made once by setup. */
typedef struct fixture {
  dp_context* ctx;  /* 2 CPU devices, no CUDA */
  dp_tensor* x;     /* float32 [2, 3] on cpu:0 */
  dp_tensor* x1;    /* float32 [2, 3] on cpu:1 */
  dp_tensor* d;     /* float64 [2, 3] */
  dp_tensor* w23;   /* float32 [2, 3] */
  dp_tensor* w32;   /* float32 [3, 2] */
  dp_tensor* s;     /* float32 scalar */
  dp_tensor* row;   /* float32 [1, 3] */
  dp_tensor* empty; /* float32 [2, 0] */
  dp_tensor* v2;    /* float32 [2] */
  dp_tensor* v2_1;  /* float32 [2] on cpu:1 */
  dp_tensor* v2_64; /* float64 [2] */
  dp_tensor* v3;    /* float32 [3] */
  dp_tensor* v3_1;  /* float32 [3] on cpu:1 */
  dp_tensor* v3_64; /* float64 [3] */
  dp_tensor* one64; /* float64 [1] */
  dp_tensor* i;     /* int64 [2] = {0, 1} */
  dp_tensor* i_1;   /* int64 [2] on cpu:1 */
  dp_tensor* i2;    /* int64 [2, 3] */
  dp_tensor* i3;    /* int64 [3] */
  dp_tensor* i22;   /* int64 [2, 2] */
  dp_tensor* i5;    /* int64 [2] = {5, 0} */
  dp_tensor* ineg;  /* int64 [2] = {0, -1} */
  dp_tensor* img;   /* float32 [1, 1, 4, 4] */
  dp_tensor* img2c; /* float32 [1, 2, 4, 4] */
  dp_tensor* img3;  /* float32 [1, 4, 4] */
  dp_tensor* ker;   /* float32 [1, 1, 2, 2] */
  dp_tensor* ker1;  /* float32 [1, 1, 2, 2] on cpu:1 */
  dp_tensor* ker64; /* float64 [1, 1, 2, 2] */
  dp_tensor* p;     /* float32 [2], for parameter registration rows */
  dp_tensor* rg;    /* float32 [2, 3] leaf that requires grad */
  dp_tensor* y;     /* rg * 2: not a leaf */
  dp_tensor* gleaf; /* float32 [2] leaf that has a gradient */
  dp_module* lin;   /* Linear(3, 2) on cpu:0 */
  dp_module* lin2;  /* Linear(3, 2) wrapped by dpw */
  dp_module* lin3;  /* Linear(3, 2) for the wrapper-creation rows */
  dp_module* seq;   /* empty Sequential */
  dp_module* relu;
  dp_module* custom;     /* has a parameter "taken" and a buffer "held" */
  dp_optimizer* opt;     /* SGD over lin */
  dp_data_parallel* dpw; /* lin2 over cpu:0 and cpu:1 */
  float mem[8];          /* caller memory for the borrow/adopt rows */
  int freed;             /* adopt deleter calls */
  DLManagedTensor dl;    /* a valid DLPack tensor over mem */
  int64_t dl_shape[1];
  DLManagedTensor dlv[DLV_COUNT];
  int64_t dl_ones[9], dl_neg[1], dl_2x4[2], dl_strides[2];
  char path[128];         /* a checkpoint of lin with metadata epoch = 3 */
  char scratch_path[128]; /* never written: every row using it fails first */
} fixture;

/* What the rows write to. Filled with a pattern before each row: a failing call must leave
   it as it was. */
typedef struct scratch {
  dp_context* ctx;
  dp_tensor* t;
  dp_tensor* ts[4];
  dp_module* m;
  dp_module* ms[4];
  dp_optimizer* opt;
  dp_data_parallel* dp;
  DLManagedTensor* dl;
  size_t z;
  int32_t i32;
  int64_t i64;
  int iv;
  double dv;
  uint64_t u64, u64b;
  dp_dtype dt;
  dp_device dev;
  dp_device devs[4];
  void* ptr;
  const char* str;
  char buf[32];
  int64_t shape[DP_MAX_DIMS];
  float host[8];
  dp_phase_times pt, pt2;
} scratch;

#define PATTERN 0xA5

static const float kData[6] = {1, 2, 3, 4, 5, 6};
static const int64_t S23[2] = {2, 3};
static const int64_t S_NEG[2] = {2, -3};
static const int64_t S_HUGE[3] = {1LL << 32, 1LL << 32, 4};
static const int64_t S_MAX2[2] = {INT64_MAX, 2};
static const int64_t S_2_62[1] = {1LL << 62};
static const int64_t S_NINE[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
static const char kMissingPath[] = "/nonexistent-dp-test-dir/model.safetensors";

static dp_device dev_of(int type, int32_t index) {
  dp_device d;
  d.type = (dp_device_type)type;
  d.index = index;
  return d;
}
#define CPU(i) dev_of(DP_DEVICE_CPU, (i))
#define CUDA(i) dev_of(DP_DEVICE_CUDA, (i))
#define BADTYPE dev_of(5, 0)

/* A handle of another kind where one kind is expected: the library must notice the tag. */
#define AS_T(h) ((dp_tensor*)(void*)(h))
#define AS_M(h) ((dp_module*)(void*)(h))
#define AS_C(h) ((dp_context*)(void*)(h))
#define AS_O(h) ((dp_optimizer*)(void*)(h))
#define AS_W(h) ((dp_data_parallel*)(void*)(h))

static void count_free(void* user, void* data) {
  (void)data;
  ++*(int*)user;
}

static dp_result identity_forward(void* user_data, dp_module* self, dp_tensor* const* inputs,
                                  size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                                  size_t* n_outputs) {
  (void)user_data;
  (void)self;
  (void)max_outputs;
  if (n_inputs != 1) return dp_set_error(DP_ERR_INVALID_ARGUMENT, "one input");
  outputs[0] = dp_tensor_retain(inputs[0]);
  *n_outputs = 1;
  return DP_OK;
}

/* ---------------------------------------------------------------------------------- */
/* The calls                                                                         */
/* ---------------------------------------------------------------------------------- */

typedef dp_result (*row_call)(fixture* f, scratch* o);

#define CALL(id, expr)                          \
  static dp_result id(fixture* f, scratch* o) { \
    (void)f;                                    \
    (void)o;                                    \
    return (expr);                              \
  }

/* DP_CPU_DEVICES is read when cpu_devices is 0; restores the variable afterwards. */
static dp_result create_with_env(const char* value, scratch* o) {
  const char* old = getenv("DP_CPU_DEVICES");
  char saved[64] = "";
  if (old) snprintf(saved, sizeof saved, "%s", old);
  setenv("DP_CPU_DEVICES", value, 1);
  dp_context_options opts = DP_CONTEXT_OPTIONS_INIT;
  opts.cpu_devices = 0;
  opts.load_cuda = 0;
  const dp_result r = dp_context_create(&opts, &o->ctx);
  if (old) {
    setenv("DP_CPU_DEVICES", saved, 1);
  } else {
    unsetenv("DP_CPU_DEVICES");
  }
  return r;
}
static dp_result context_create__env_not_a_number(fixture* f, scratch* o) {
  (void)f;
  return create_with_env("abc", o);
}
static dp_result context_create__env_zero(fixture* f, scratch* o) {
  (void)f;
  return create_with_env("0", o);
}

CALL(context_create__out_null, dp_context_create(NULL, NULL))
CALL(context_create__struct_size_0,
     dp_context_create(
         &(dp_context_options){.struct_size = 0, .cpu_devices = 1, .log_level = DP_LOG_WARNING},
         &o->ctx))
CALL(context_create__struct_size_8,
     dp_context_create(
         &(dp_context_options){.struct_size = 8, .cpu_devices = 1, .log_level = DP_LOG_WARNING},
         &o->ctx))
/* One byte short of the members every version of the struct has (up to seed). */
CALL(context_create__struct_size_ends_inside_a_member,
     dp_context_create(&(dp_context_options){.struct_size = offsetof(dp_context_options, seed) +
                                                            sizeof(uint64_t) - 1,
                                             .cpu_devices = 1,
                                             .log_level = DP_LOG_WARNING},
                       &o->ctx))
CALL(context_create__cpu_devices_negative,
     dp_context_create(&(dp_context_options){.struct_size = sizeof(dp_context_options),
                                             .cpu_devices = -1,
                                             .log_level = DP_LOG_WARNING},
                       &o->ctx))
CALL(context_create__log_level_7,
     dp_context_create(&(dp_context_options){.struct_size = sizeof(dp_context_options),
                                             .cpu_devices = 1,
                                             .log_level = (dp_log_level)7},
                       &o->ctx))
CALL(context_create__log_level_negative,
     dp_context_create(&(dp_context_options){.struct_size = sizeof(dp_context_options),
                                             .cpu_devices = 1,
                                             .log_level = (dp_log_level)-1},
                       &o->ctx))
CALL(device_count__ctx_null, dp_device_count(NULL, DP_DEVICE_CPU, &o->i32))
CALL(device_count__ctx_is_a_tensor, dp_device_count(AS_C(f->x), DP_DEVICE_CPU, &o->i32))
CALL(device_count__type_5, dp_device_count(f->ctx, (dp_device_type)5, &o->i32))
CALL(device_count__type_negative, dp_device_count(f->ctx, (dp_device_type)-1, &o->i32))
CALL(device_count__out_null, dp_device_count(f->ctx, DP_DEVICE_CPU, NULL))
CALL(device_name__ctx_null, dp_device_name(NULL, CPU(0), o->buf, sizeof o->buf, &o->z))
CALL(device_name__ctx_is_a_module,
     dp_device_name(AS_C(f->lin), CPU(0), o->buf, sizeof o->buf, &o->z))
CALL(device_name__cpu_2_of_2, dp_device_name(f->ctx, CPU(2), o->buf, sizeof o->buf, &o->z))
CALL(device_name__cpu_negative, dp_device_name(f->ctx, CPU(-1), o->buf, sizeof o->buf, &o->z))
CALL(device_name__cuda_0_without_cuda,
     dp_device_name(f->ctx, CUDA(0), o->buf, sizeof o->buf, &o->z))
CALL(device_name__device_type_5, dp_device_name(f->ctx, BADTYPE, o->buf, sizeof o->buf, &o->z))
CALL(device_name__buf_null_with_size, dp_device_name(f->ctx, CPU(0), NULL, 8, &o->z))
CALL(device_memory__ctx_null, dp_device_memory(NULL, CPU(0), &o->u64, &o->u64b))
CALL(device_memory__ctx_is_a_module, dp_device_memory(AS_C(f->lin), CPU(0), &o->u64, &o->u64b))
CALL(device_memory__cpu_2_of_2, dp_device_memory(f->ctx, CPU(2), &o->u64, &o->u64b))
CALL(device_memory__cpu_negative, dp_device_memory(f->ctx, CPU(-1), &o->u64, &o->u64b))
CALL(device_memory__cuda_0_without_cuda, dp_device_memory(f->ctx, CUDA(0), &o->u64, &o->u64b))
CALL(device_memory__device_type_5, dp_device_memory(f->ctx, BADTYPE, &o->u64, &o->u64b))
CALL(device_synchronize__ctx_null, dp_device_synchronize(NULL, CPU(0)))
CALL(device_synchronize__ctx_is_a_module, dp_device_synchronize(AS_C(f->lin), CPU(0)))
CALL(device_synchronize__cpu_2_of_2, dp_device_synchronize(f->ctx, CPU(2)))
CALL(device_synchronize__cpu_negative, dp_device_synchronize(f->ctx, CPU(-1)))
CALL(device_synchronize__cuda_0_without_cuda, dp_device_synchronize(f->ctx, CUDA(0)))
CALL(device_synchronize__device_type_5, dp_device_synchronize(f->ctx, BADTYPE))
CALL(tensor_zeros__ctx_null, dp_tensor_zeros(NULL, DP_FLOAT32, S23, 2, CPU(0), &o->t))
CALL(tensor_zeros__ctx_is_a_tensor, dp_tensor_zeros(AS_C(f->x), DP_FLOAT32, S23, 2, CPU(0), &o->t))
CALL(tensor_zeros__out_null, dp_tensor_zeros(f->ctx, DP_FLOAT32, S23, 2, CPU(0), NULL))
CALL(tensor_zeros__shape_null_ndim_2, dp_tensor_zeros(f->ctx, DP_FLOAT32, NULL, 2, CPU(0), &o->t))
CALL(tensor_zeros__shape_negative, dp_tensor_zeros(f->ctx, DP_FLOAT32, S_NEG, 2, CPU(0), &o->t))
CALL(tensor_zeros__shape_past_2_63, dp_tensor_zeros(f->ctx, DP_FLOAT32, S_HUGE, 3, CPU(0), &o->t))
CALL(tensor_zeros__shape_int64_max_by_2,
     dp_tensor_zeros(f->ctx, DP_FLOAT32, S_MAX2, 2, CPU(0), &o->t))
CALL(tensor_zeros__ndim_9, dp_tensor_zeros(f->ctx, DP_FLOAT32, S_NINE, 9, CPU(0), &o->t))
CALL(tensor_zeros__dtype_9, dp_tensor_zeros(f->ctx, (dp_dtype)9, S23, 2, CPU(0), &o->t))
CALL(tensor_zeros__dtype_negative, dp_tensor_zeros(f->ctx, (dp_dtype)-1, S23, 2, CPU(0), &o->t))
CALL(tensor_zeros__cpu_2_of_2, dp_tensor_zeros(f->ctx, DP_FLOAT32, S23, 2, CPU(2), &o->t))
CALL(tensor_zeros__cpu_negative, dp_tensor_zeros(f->ctx, DP_FLOAT32, S23, 2, CPU(-1), &o->t))
CALL(tensor_zeros__device_type_5, dp_tensor_zeros(f->ctx, DP_FLOAT32, S23, 2, BADTYPE, &o->t))
CALL(tensor_empty__ctx_null, dp_tensor_empty(NULL, DP_FLOAT32, S23, 2, CPU(0), &o->t))
CALL(tensor_empty__ctx_is_a_tensor, dp_tensor_empty(AS_C(f->x), DP_FLOAT32, S23, 2, CPU(0), &o->t))
CALL(tensor_empty__out_null, dp_tensor_empty(f->ctx, DP_FLOAT32, S23, 2, CPU(0), NULL))
CALL(tensor_empty__shape_null_ndim_2, dp_tensor_empty(f->ctx, DP_FLOAT32, NULL, 2, CPU(0), &o->t))
CALL(tensor_empty__shape_negative, dp_tensor_empty(f->ctx, DP_FLOAT32, S_NEG, 2, CPU(0), &o->t))
CALL(tensor_empty__shape_past_2_63, dp_tensor_empty(f->ctx, DP_FLOAT32, S_HUGE, 3, CPU(0), &o->t))
CALL(tensor_empty__shape_int64_max_by_2,
     dp_tensor_empty(f->ctx, DP_FLOAT32, S_MAX2, 2, CPU(0), &o->t))
CALL(tensor_empty__ndim_9, dp_tensor_empty(f->ctx, DP_FLOAT32, S_NINE, 9, CPU(0), &o->t))
CALL(tensor_empty__dtype_9, dp_tensor_empty(f->ctx, (dp_dtype)9, S23, 2, CPU(0), &o->t))
CALL(tensor_empty__dtype_negative, dp_tensor_empty(f->ctx, (dp_dtype)-1, S23, 2, CPU(0), &o->t))
CALL(tensor_empty__cpu_2_of_2, dp_tensor_empty(f->ctx, DP_FLOAT32, S23, 2, CPU(2), &o->t))
CALL(tensor_empty__cpu_negative, dp_tensor_empty(f->ctx, DP_FLOAT32, S23, 2, CPU(-1), &o->t))
CALL(tensor_empty__device_type_5, dp_tensor_empty(f->ctx, DP_FLOAT32, S23, 2, BADTYPE, &o->t))
CALL(tensor_full__ctx_null, dp_tensor_full(NULL, DP_FLOAT32, S23, 2, 1.5, CPU(0), &o->t))
CALL(tensor_full__ctx_is_a_tensor,
     dp_tensor_full(AS_C(f->x), DP_FLOAT32, S23, 2, 1.5, CPU(0), &o->t))
CALL(tensor_full__out_null, dp_tensor_full(f->ctx, DP_FLOAT32, S23, 2, 1.5, CPU(0), NULL))
CALL(tensor_full__shape_null_ndim_2,
     dp_tensor_full(f->ctx, DP_FLOAT32, NULL, 2, 1.5, CPU(0), &o->t))
CALL(tensor_full__shape_negative, dp_tensor_full(f->ctx, DP_FLOAT32, S_NEG, 2, 1.5, CPU(0), &o->t))
CALL(tensor_full__shape_past_2_63,
     dp_tensor_full(f->ctx, DP_FLOAT32, S_HUGE, 3, 1.5, CPU(0), &o->t))
CALL(tensor_full__shape_int64_max_by_2,
     dp_tensor_full(f->ctx, DP_FLOAT32, S_MAX2, 2, 1.5, CPU(0), &o->t))
CALL(tensor_full__ndim_9, dp_tensor_full(f->ctx, DP_FLOAT32, S_NINE, 9, 1.5, CPU(0), &o->t))
CALL(tensor_full__dtype_9, dp_tensor_full(f->ctx, (dp_dtype)9, S23, 2, 1.5, CPU(0), &o->t))
CALL(tensor_full__dtype_negative, dp_tensor_full(f->ctx, (dp_dtype)-1, S23, 2, 1.5, CPU(0), &o->t))
CALL(tensor_full__cpu_2_of_2, dp_tensor_full(f->ctx, DP_FLOAT32, S23, 2, 1.5, CPU(2), &o->t))
CALL(tensor_full__cpu_negative, dp_tensor_full(f->ctx, DP_FLOAT32, S23, 2, 1.5, CPU(-1), &o->t))
CALL(tensor_full__device_type_5, dp_tensor_full(f->ctx, DP_FLOAT32, S23, 2, 1.5, BADTYPE, &o->t))
CALL(tensor_from_data__ctx_null,
     dp_tensor_from_data(NULL, DP_FLOAT32, S23, 2, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__ctx_is_a_tensor,
     dp_tensor_from_data(AS_C(f->x), DP_FLOAT32, S23, 2, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__out_null,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S23, 2, kData, 24, CPU(0), NULL))
CALL(tensor_from_data__shape_null_ndim_2,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, NULL, 2, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__shape_negative,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S_NEG, 2, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__shape_past_2_63,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S_HUGE, 3, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__shape_int64_max_by_2,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S_MAX2, 2, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__ndim_9,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S_NINE, 9, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__dtype_9,
     dp_tensor_from_data(f->ctx, (dp_dtype)9, S23, 2, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__dtype_negative,
     dp_tensor_from_data(f->ctx, (dp_dtype)-1, S23, 2, kData, 24, CPU(0), &o->t))
CALL(tensor_from_data__cpu_2_of_2,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S23, 2, kData, 24, CPU(2), &o->t))
CALL(tensor_from_data__cpu_negative,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S23, 2, kData, 24, CPU(-1), &o->t))
CALL(tensor_from_data__device_type_5,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S23, 2, kData, 24, BADTYPE, &o->t))
CALL(tensor_zeros__bytes_past_size_max, dp_tensor_zeros(f->ctx, DP_INT64, S_2_62, 1, CPU(0), &o->t))
CALL(tensor_empty__bytes_past_size_max, dp_tensor_empty(f->ctx, DP_INT64, S_2_62, 1, CPU(0), &o->t))
CALL(tensor_full__bytes_past_size_max,
     dp_tensor_full(f->ctx, DP_INT64, S_2_62, 1, 1.5, CPU(0), &o->t))
CALL(tensor_from_data__data_null,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S23, 2, NULL, 24, CPU(0), &o->t))
CALL(tensor_from_data__nbytes_short,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S23, 2, kData, 20, CPU(0), &o->t))
CALL(tensor_from_data__nbytes_0,
     dp_tensor_from_data(f->ctx, DP_FLOAT32, S23, 2, kData, 0, CPU(0), &o->t))
CALL(tensor_from_data__bytes_wrap_to_0,
     dp_tensor_from_data(f->ctx, DP_INT64, S_2_62, 1, NULL, 0, CPU(0), &o->t))
CALL(tensor_from_borrowed__ctx_null,
     dp_tensor_from_borrowed(NULL, DP_FLOAT32, S23, 2, f->mem, 24, 0, &o->t))
CALL(tensor_from_borrowed__ctx_is_an_optimizer,
     dp_tensor_from_borrowed(AS_C(f->opt), DP_FLOAT32, S23, 2, f->mem, 24, 0, &o->t))
CALL(tensor_from_borrowed__out_null,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S23, 2, f->mem, 24, 0, NULL))
CALL(tensor_from_borrowed__shape_null_ndim_2,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, NULL, 2, f->mem, 24, 0, &o->t))
CALL(tensor_from_borrowed__shape_negative,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S_NEG, 2, f->mem, 24, 0, &o->t))
CALL(tensor_from_borrowed__shape_past_2_63,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S_HUGE, 3, f->mem, 24, 0, &o->t))
CALL(tensor_from_borrowed__ndim_9,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S_NINE, 9, f->mem, 4, 0, &o->t))
CALL(tensor_from_borrowed__dtype_9,
     dp_tensor_from_borrowed(f->ctx, (dp_dtype)9, S23, 2, f->mem, 24, 0, &o->t))
CALL(tensor_from_borrowed__data_null,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S23, 2, NULL, 24, 0, &o->t))
CALL(tensor_from_borrowed__nbytes_wrong,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S23, 2, f->mem, 16, 0, &o->t))
CALL(tensor_from_borrowed__misaligned,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S23, 2, (char*)f->mem + 1, 24, 0, &o->t))
CALL(tensor_from_borrowed__cpu_index_2_of_2,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S23, 2, f->mem, 24, 2, &o->t))
CALL(tensor_from_borrowed__cpu_index_negative,
     dp_tensor_from_borrowed(f->ctx, DP_FLOAT32, S23, 2, f->mem, 24, -1, &o->t))
CALL(tensor_from_borrowed__bytes_wrap_to_0,
     dp_tensor_from_borrowed(f->ctx, DP_INT64, S_2_62, 1, NULL, 0, 0, &o->t))
CALL(tensor_from_adopted__ctx_null,
     dp_tensor_from_adopted(NULL, DP_FLOAT32, S23, 2, f->mem, 24, 0, count_free, &f->freed, &o->t))
CALL(tensor_from_adopted__ctx_is_an_optimizer,
     dp_tensor_from_adopted(AS_C(f->opt), DP_FLOAT32, S23, 2, f->mem, 24, 0, count_free, &f->freed,
                            &o->t))
CALL(tensor_from_adopted__out_null,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S23, 2, f->mem, 24, 0, count_free, &f->freed, NULL))
CALL(tensor_from_adopted__shape_null_ndim_2,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, NULL, 2, f->mem, 24, 0, count_free, &f->freed,
                            &o->t))
CALL(tensor_from_adopted__shape_negative,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S_NEG, 2, f->mem, 24, 0, count_free, &f->freed,
                            &o->t))
CALL(tensor_from_adopted__shape_past_2_63,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S_HUGE, 3, f->mem, 24, 0, count_free, &f->freed,
                            &o->t))
CALL(tensor_from_adopted__ndim_9, dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S_NINE, 9, f->mem, 4,
                                                         0, count_free, &f->freed, &o->t))
CALL(tensor_from_adopted__dtype_9, dp_tensor_from_adopted(f->ctx, (dp_dtype)9, S23, 2, f->mem, 24,
                                                          0, count_free, &f->freed, &o->t))
CALL(tensor_from_adopted__data_null,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S23, 2, NULL, 24, 0, count_free, &f->freed, &o->t))
CALL(tensor_from_adopted__nbytes_wrong, dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S23, 2, f->mem,
                                                               16, 0, count_free, &f->freed, &o->t))
CALL(tensor_from_adopted__misaligned,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S23, 2, (char*)f->mem + 1, 24, 0, count_free,
                            &f->freed, &o->t))
CALL(tensor_from_adopted__cpu_index_2_of_2,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S23, 2, f->mem, 24, 2, count_free, &f->freed,
                            &o->t))
CALL(tensor_from_adopted__cpu_index_negative,
     dp_tensor_from_adopted(f->ctx, DP_FLOAT32, S23, 2, f->mem, 24, -1, count_free, &f->freed,
                            &o->t))
CALL(tensor_from_adopted__bytes_wrap_to_0,
     dp_tensor_from_adopted(f->ctx, DP_INT64, S_2_62, 1, NULL, 0, 0, count_free, &f->freed, &o->t))
CALL(tensor_dtype__t_null, dp_tensor_dtype(NULL, &o->dt))
CALL(tensor_dtype__t_is_a_module, dp_tensor_dtype(AS_T(f->lin), &o->dt))
CALL(tensor_dtype__t_is_a_context, dp_tensor_dtype(AS_T(f->ctx), &o->dt))
CALL(tensor_dtype__out_null, dp_tensor_dtype(f->x, NULL))
CALL(tensor_ndim__t_null, dp_tensor_ndim(NULL, &o->z))
CALL(tensor_ndim__t_is_a_module, dp_tensor_ndim(AS_T(f->lin), &o->z))
CALL(tensor_ndim__t_is_a_context, dp_tensor_ndim(AS_T(f->ctx), &o->z))
CALL(tensor_ndim__out_null, dp_tensor_ndim(f->x, NULL))
CALL(tensor_shape__t_null, dp_tensor_shape(NULL, o->shape, DP_MAX_DIMS))
CALL(tensor_shape__t_is_a_module, dp_tensor_shape(AS_T(f->lin), o->shape, DP_MAX_DIMS))
CALL(tensor_shape__t_is_a_context, dp_tensor_shape(AS_T(f->ctx), o->shape, DP_MAX_DIMS))
CALL(tensor_shape__shape_null, dp_tensor_shape(f->x, NULL, DP_MAX_DIMS))
CALL(tensor_shape__capacity_1, dp_tensor_shape(f->x, o->shape, 1))
CALL(tensor_shape__capacity_0_with_shape_null, dp_tensor_shape(f->x, NULL, 0))
CALL(tensor_dim__t_null, dp_tensor_dim(NULL, 0, &o->i64))
CALL(tensor_dim__t_is_a_module, dp_tensor_dim(AS_T(f->lin), 0, &o->i64))
CALL(tensor_dim__t_is_a_context, dp_tensor_dim(AS_T(f->ctx), 0, &o->i64))
CALL(tensor_dim__out_null, dp_tensor_dim(f->x, 0, NULL))
CALL(tensor_dim__dim_2, dp_tensor_dim(f->x, 2, &o->i64))
CALL(tensor_dim__dim_minus_3, dp_tensor_dim(f->x, -3, &o->i64))
CALL(tensor_dim__of_a_scalar, dp_tensor_dim(f->s, 0, &o->i64))
CALL(tensor_numel__t_null, dp_tensor_numel(NULL, &o->i64))
CALL(tensor_numel__t_is_a_module, dp_tensor_numel(AS_T(f->lin), &o->i64))
CALL(tensor_numel__t_is_a_context, dp_tensor_numel(AS_T(f->ctx), &o->i64))
CALL(tensor_numel__out_null, dp_tensor_numel(f->x, NULL))
CALL(tensor_nbytes__t_null, dp_tensor_nbytes(NULL, &o->z))
CALL(tensor_nbytes__t_is_a_module, dp_tensor_nbytes(AS_T(f->lin), &o->z))
CALL(tensor_nbytes__t_is_a_context, dp_tensor_nbytes(AS_T(f->ctx), &o->z))
CALL(tensor_nbytes__out_null, dp_tensor_nbytes(f->x, NULL))
CALL(tensor_context__t_null, dp_tensor_context(NULL, &o->ctx))
CALL(tensor_context__t_is_a_module, dp_tensor_context(AS_T(f->lin), &o->ctx))
CALL(tensor_context__out_null, dp_tensor_context(f->x, NULL))
CALL(tensor_device__t_null, dp_tensor_device(NULL, &o->dev))
CALL(tensor_device__t_is_a_module, dp_tensor_device(AS_T(f->lin), &o->dev))
CALL(tensor_device__t_is_a_context, dp_tensor_device(AS_T(f->ctx), &o->dev))
CALL(tensor_device__out_null, dp_tensor_device(f->x, NULL))
CALL(tensor_to_host__t_null, dp_tensor_to_host(NULL, o->host, 24))
CALL(tensor_to_host__t_is_a_module, dp_tensor_to_host(AS_T(f->lin), o->host, 24))
CALL(tensor_to_host__t_is_a_context, dp_tensor_to_host(AS_T(f->ctx), o->host, 24))
CALL(tensor_to_host__dst_null, dp_tensor_to_host(f->x, NULL, 24))
CALL(tensor_to_host__dst_bytes_short, dp_tensor_to_host(f->x, o->host, 20))
CALL(tensor_to_host__dst_bytes_0, dp_tensor_to_host(f->x, o->host, 0))
CALL(tensor_copy_from_host__t_null, dp_tensor_copy_from_host(NULL, kData, 24))
CALL(tensor_copy_from_host__t_is_a_module, dp_tensor_copy_from_host(AS_T(f->lin), kData, 24))
CALL(tensor_copy_from_host__t_is_a_context, dp_tensor_copy_from_host(AS_T(f->ctx), kData, 24))
CALL(tensor_copy_from_host__src_null, dp_tensor_copy_from_host(f->x, NULL, 24))
CALL(tensor_copy_from_host__src_bytes_long, dp_tensor_copy_from_host(f->x, kData, 28))
CALL(tensor_to_device__t_null, dp_tensor_to_device(NULL, CPU(1), &o->t))
CALL(tensor_to_device__t_is_a_module, dp_tensor_to_device(AS_T(f->lin), CPU(1), &o->t))
CALL(tensor_to_device__t_is_a_context, dp_tensor_to_device(AS_T(f->ctx), CPU(1), &o->t))
CALL(tensor_to_device__out_null, dp_tensor_to_device(f->x, CPU(1), NULL))
CALL(tensor_to_device__cpu_2_of_2, dp_tensor_to_device(f->x, CPU(2), &o->t))
CALL(tensor_to_device__cpu_negative, dp_tensor_to_device(f->x, CPU(-1), &o->t))
CALL(tensor_to_device__device_type_5, dp_tensor_to_device(f->x, BADTYPE, &o->t))
CALL(tensor_to_dtype__t_null, dp_tensor_to_dtype(NULL, DP_FLOAT64, &o->t))
CALL(tensor_to_dtype__t_is_a_module, dp_tensor_to_dtype(AS_T(f->lin), DP_FLOAT64, &o->t))
CALL(tensor_to_dtype__t_is_a_context, dp_tensor_to_dtype(AS_T(f->ctx), DP_FLOAT64, &o->t))
CALL(tensor_to_dtype__out_null, dp_tensor_to_dtype(f->x, DP_FLOAT64, NULL))
CALL(tensor_to_dtype__dtype_9, dp_tensor_to_dtype(f->x, (dp_dtype)9, &o->t))
CALL(tensor_to_dtype__dtype_negative, dp_tensor_to_dtype(f->x, (dp_dtype)-1, &o->t))
CALL(tensor_data__t_null, dp_tensor_data(NULL, &o->ptr))
CALL(tensor_data__t_is_a_module, dp_tensor_data(AS_T(f->lin), &o->ptr))
CALL(tensor_data__t_is_a_context, dp_tensor_data(AS_T(f->ctx), &o->ptr))
CALL(tensor_data__out_null, dp_tensor_data(f->x, NULL))
CALL(tensor_version__t_null, dp_tensor_version(NULL, &o->u64))
CALL(tensor_version__t_is_a_module, dp_tensor_version(AS_T(f->lin), &o->u64))
CALL(tensor_version__t_is_a_context, dp_tensor_version(AS_T(f->ctx), &o->u64))
CALL(tensor_version__out_null, dp_tensor_version(f->x, NULL))
CALL(tensor_to_dlpack__t_null, dp_tensor_to_dlpack(NULL, &o->dl))
CALL(tensor_to_dlpack__t_is_a_module, dp_tensor_to_dlpack(AS_T(f->lin), &o->dl))
CALL(tensor_to_dlpack__t_is_a_context, dp_tensor_to_dlpack(AS_T(f->ctx), &o->dl))
CALL(tensor_to_dlpack__out_null, dp_tensor_to_dlpack(f->x, NULL))
CALL(tensor_from_dlpack__ctx_null, dp_tensor_from_dlpack(NULL, &f->dl, &o->t))
CALL(tensor_from_dlpack__ctx_is_a_tensor, dp_tensor_from_dlpack(AS_C(f->x), &f->dl, &o->t))
CALL(tensor_from_dlpack__src_null, dp_tensor_from_dlpack(f->ctx, NULL, &o->t))
CALL(tensor_from_dlpack__out_null, dp_tensor_from_dlpack(f->ctx, &f->dl, NULL))
CALL(tensor_set_requires_grad__t_null, dp_tensor_set_requires_grad(NULL, 1))
CALL(tensor_set_requires_grad__t_is_a_module, dp_tensor_set_requires_grad(AS_T(f->lin), 1))
CALL(tensor_set_requires_grad__t_is_a_context, dp_tensor_set_requires_grad(AS_T(f->ctx), 1))
CALL(tensor_set_requires_grad__int64, dp_tensor_set_requires_grad(f->i, 1))
CALL(tensor_set_requires_grad__not_a_leaf, dp_tensor_set_requires_grad(f->y, 0))
CALL(tensor_requires_grad__t_null, dp_tensor_requires_grad(NULL, &o->iv))
CALL(tensor_requires_grad__t_is_a_module, dp_tensor_requires_grad(AS_T(f->lin), &o->iv))
CALL(tensor_requires_grad__t_is_a_context, dp_tensor_requires_grad(AS_T(f->ctx), &o->iv))
CALL(tensor_requires_grad__out_null, dp_tensor_requires_grad(f->x, NULL))
CALL(tensor_grad__t_null, dp_tensor_grad(NULL, &o->t))
CALL(tensor_grad__t_is_a_module, dp_tensor_grad(AS_T(f->lin), &o->t))
CALL(tensor_grad__t_is_a_context, dp_tensor_grad(AS_T(f->ctx), &o->t))
CALL(tensor_grad__out_null, dp_tensor_grad(f->x, NULL))
CALL(tensor_grad__out_null_with_a_gradient, dp_tensor_grad(f->gleaf, NULL))
CALL(tensor_zero_grad__t_null, dp_tensor_zero_grad(NULL))
CALL(tensor_zero_grad__t_is_a_module, dp_tensor_zero_grad(AS_T(f->lin)))
CALL(tensor_zero_grad__t_is_a_context, dp_tensor_zero_grad(AS_T(f->ctx)))
CALL(tensor_detach__t_null, dp_tensor_detach(NULL, &o->t))
CALL(tensor_detach__t_is_a_module, dp_tensor_detach(AS_T(f->lin), &o->t))
CALL(tensor_detach__t_is_a_context, dp_tensor_detach(AS_T(f->ctx), &o->t))
CALL(tensor_detach__out_null, dp_tensor_detach(f->x, NULL))
CALL(backward__t_null, dp_backward(NULL, NULL, 0))
CALL(backward__t_is_a_module, dp_backward(AS_T(f->lin), NULL, 0))
CALL(backward__t_is_a_context, dp_backward(AS_T(f->ctx), NULL, 0))
CALL(backward__grad_is_a_module, dp_backward(f->y, AS_T(f->lin), 0))
CALL(backward__not_requiring_grad, dp_backward(f->x, NULL, 0))
CALL(backward__implicit_grad_of_6_elements, dp_backward(f->y, NULL, 0))
CALL(backward__grad_shape, dp_backward(f->y, f->v3, 0))
CALL(backward__grad_dtype, dp_backward(f->y, f->d, 0))
CALL(op_neg__x_null, dp_op_neg(NULL, &o->t))
CALL(op_neg__x_is_a_module, dp_op_neg(AS_T(f->lin), &o->t))
CALL(op_neg__x_is_a_data_parallel, dp_op_neg(AS_T(f->dpw), &o->t))
CALL(op_neg__out_null, dp_op_neg(f->x, NULL))
CALL(op_neg__int64_x, dp_op_neg(f->i2, &o->t))
CALL(op_relu__x_null, dp_op_relu(NULL, &o->t))
CALL(op_relu__x_is_a_module, dp_op_relu(AS_T(f->lin), &o->t))
CALL(op_relu__x_is_a_data_parallel, dp_op_relu(AS_T(f->dpw), &o->t))
CALL(op_relu__out_null, dp_op_relu(f->x, NULL))
CALL(op_relu__int64_x, dp_op_relu(f->i2, &o->t))
CALL(op_gelu__x_null, dp_op_gelu(NULL, &o->t))
CALL(op_gelu__x_is_a_module, dp_op_gelu(AS_T(f->lin), &o->t))
CALL(op_gelu__x_is_a_data_parallel, dp_op_gelu(AS_T(f->dpw), &o->t))
CALL(op_gelu__out_null, dp_op_gelu(f->x, NULL))
CALL(op_gelu__int64_x, dp_op_gelu(f->i2, &o->t))
CALL(op_tanh__x_null, dp_op_tanh(NULL, &o->t))
CALL(op_tanh__x_is_a_module, dp_op_tanh(AS_T(f->lin), &o->t))
CALL(op_tanh__x_is_a_data_parallel, dp_op_tanh(AS_T(f->dpw), &o->t))
CALL(op_tanh__out_null, dp_op_tanh(f->x, NULL))
CALL(op_tanh__int64_x, dp_op_tanh(f->i2, &o->t))
CALL(op_sigmoid__x_null, dp_op_sigmoid(NULL, &o->t))
CALL(op_sigmoid__x_is_a_module, dp_op_sigmoid(AS_T(f->lin), &o->t))
CALL(op_sigmoid__x_is_a_data_parallel, dp_op_sigmoid(AS_T(f->dpw), &o->t))
CALL(op_sigmoid__out_null, dp_op_sigmoid(f->x, NULL))
CALL(op_sigmoid__int64_x, dp_op_sigmoid(f->i2, &o->t))
CALL(op_exp__x_null, dp_op_exp(NULL, &o->t))
CALL(op_exp__x_is_a_module, dp_op_exp(AS_T(f->lin), &o->t))
CALL(op_exp__x_is_a_data_parallel, dp_op_exp(AS_T(f->dpw), &o->t))
CALL(op_exp__out_null, dp_op_exp(f->x, NULL))
CALL(op_exp__int64_x, dp_op_exp(f->i2, &o->t))
CALL(op_log__x_null, dp_op_log(NULL, &o->t))
CALL(op_log__x_is_a_module, dp_op_log(AS_T(f->lin), &o->t))
CALL(op_log__x_is_a_data_parallel, dp_op_log(AS_T(f->dpw), &o->t))
CALL(op_log__out_null, dp_op_log(f->x, NULL))
CALL(op_log__int64_x, dp_op_log(f->i2, &o->t))
CALL(op_sum__x_null, dp_op_sum(NULL, &o->t))
CALL(op_sum__x_is_a_module, dp_op_sum(AS_T(f->lin), &o->t))
CALL(op_sum__x_is_a_data_parallel, dp_op_sum(AS_T(f->dpw), &o->t))
CALL(op_sum__out_null, dp_op_sum(f->x, NULL))
CALL(op_sum__int64_x, dp_op_sum(f->i2, &o->t))
CALL(op_mean__x_null, dp_op_mean(NULL, &o->t))
CALL(op_mean__x_is_a_module, dp_op_mean(AS_T(f->lin), &o->t))
CALL(op_mean__x_is_a_data_parallel, dp_op_mean(AS_T(f->dpw), &o->t))
CALL(op_mean__out_null, dp_op_mean(f->x, NULL))
CALL(op_mean__int64_x, dp_op_mean(f->i2, &o->t))
CALL(op_scale__x_null, dp_op_scale(NULL, 2.0, &o->t))
CALL(op_scale__x_is_a_module, dp_op_scale(AS_T(f->lin), 2.0, &o->t))
CALL(op_scale__x_is_a_data_parallel, dp_op_scale(AS_T(f->dpw), 2.0, &o->t))
CALL(op_scale__out_null, dp_op_scale(f->x, 2.0, NULL))
CALL(op_scale__int64_x, dp_op_scale(f->i2, 2.0, &o->t))
CALL(op_add_scalar__x_null, dp_op_add_scalar(NULL, 2.0, &o->t))
CALL(op_add_scalar__x_is_a_module, dp_op_add_scalar(AS_T(f->lin), 2.0, &o->t))
CALL(op_add_scalar__x_is_a_data_parallel, dp_op_add_scalar(AS_T(f->dpw), 2.0, &o->t))
CALL(op_add_scalar__out_null, dp_op_add_scalar(f->x, 2.0, NULL))
CALL(op_add_scalar__int64_x, dp_op_add_scalar(f->i2, 2.0, &o->t))
CALL(op_sum_dim__x_null, dp_op_sum_dim(NULL, 1, 0, &o->t))
CALL(op_sum_dim__x_is_a_module, dp_op_sum_dim(AS_T(f->lin), 1, 0, &o->t))
CALL(op_sum_dim__x_is_a_data_parallel, dp_op_sum_dim(AS_T(f->dpw), 1, 0, &o->t))
CALL(op_sum_dim__out_null, dp_op_sum_dim(f->x, 1, 0, NULL))
CALL(op_sum_dim__int64_x, dp_op_sum_dim(f->i2, 1, 0, &o->t))
CALL(op_mean_dim__x_null, dp_op_mean_dim(NULL, 1, 1, &o->t))
CALL(op_mean_dim__x_is_a_module, dp_op_mean_dim(AS_T(f->lin), 1, 1, &o->t))
CALL(op_mean_dim__x_is_a_data_parallel, dp_op_mean_dim(AS_T(f->dpw), 1, 1, &o->t))
CALL(op_mean_dim__out_null, dp_op_mean_dim(f->x, 1, 1, NULL))
CALL(op_mean_dim__int64_x, dp_op_mean_dim(f->i2, 1, 1, &o->t))
CALL(op_argmax__x_null, dp_op_argmax(NULL, 1, &o->t))
CALL(op_argmax__x_is_a_module, dp_op_argmax(AS_T(f->lin), 1, &o->t))
CALL(op_argmax__x_is_a_data_parallel, dp_op_argmax(AS_T(f->dpw), 1, &o->t))
CALL(op_argmax__out_null, dp_op_argmax(f->x, 1, NULL))
CALL(op_argmax__int64_x, dp_op_argmax(f->i2, 1, &o->t))
CALL(op_softmax__x_null, dp_op_softmax(NULL, 1, &o->t))
CALL(op_softmax__x_is_a_module, dp_op_softmax(AS_T(f->lin), 1, &o->t))
CALL(op_softmax__x_is_a_data_parallel, dp_op_softmax(AS_T(f->dpw), 1, &o->t))
CALL(op_softmax__out_null, dp_op_softmax(f->x, 1, NULL))
CALL(op_softmax__int64_x, dp_op_softmax(f->i2, 1, &o->t))
CALL(op_log_softmax__x_null, dp_op_log_softmax(NULL, 1, &o->t))
CALL(op_log_softmax__x_is_a_module, dp_op_log_softmax(AS_T(f->lin), 1, &o->t))
CALL(op_log_softmax__x_is_a_data_parallel, dp_op_log_softmax(AS_T(f->dpw), 1, &o->t))
CALL(op_log_softmax__out_null, dp_op_log_softmax(f->x, 1, NULL))
CALL(op_log_softmax__int64_x, dp_op_log_softmax(f->i2, 1, &o->t))
CALL(op_flatten__x_null, dp_op_flatten(NULL, 0, -1, &o->t))
CALL(op_flatten__x_is_a_module, dp_op_flatten(AS_T(f->lin), 0, -1, &o->t))
CALL(op_flatten__x_is_a_data_parallel, dp_op_flatten(AS_T(f->dpw), 0, -1, &o->t))
CALL(op_flatten__out_null, dp_op_flatten(f->x, 0, -1, NULL))
CALL(op_dropout__x_null, dp_op_dropout(NULL, 0.5, 1, 7, &o->t))
CALL(op_dropout__x_is_a_module, dp_op_dropout(AS_T(f->lin), 0.5, 1, 7, &o->t))
CALL(op_dropout__x_is_a_data_parallel, dp_op_dropout(AS_T(f->dpw), 0.5, 1, 7, &o->t))
CALL(op_dropout__out_null, dp_op_dropout(f->x, 0.5, 1, 7, NULL))
CALL(op_dropout__int64_x, dp_op_dropout(f->i2, 0.5, 1, 7, &o->t))
CALL(op_sum_dim__dim_2, dp_op_sum_dim(f->x, 2, 0, &o->t))
CALL(op_sum_dim__dim_minus_3, dp_op_sum_dim(f->x, -3, 0, &o->t))
CALL(op_mean_dim__dim_2, dp_op_mean_dim(f->x, 2, 1, &o->t))
CALL(op_mean_dim__dim_minus_3, dp_op_mean_dim(f->x, -3, 1, &o->t))
CALL(op_argmax__dim_2, dp_op_argmax(f->x, 2, &o->t))
CALL(op_argmax__dim_minus_3, dp_op_argmax(f->x, -3, &o->t))
CALL(op_softmax__dim_2, dp_op_softmax(f->x, 2, &o->t))
CALL(op_softmax__dim_minus_3, dp_op_softmax(f->x, -3, &o->t))
CALL(op_log_softmax__dim_2, dp_op_log_softmax(f->x, 2, &o->t))
CALL(op_log_softmax__dim_minus_3, dp_op_log_softmax(f->x, -3, &o->t))
CALL(op_argmax__empty_dim, dp_op_argmax(f->empty, 1, &o->t))
CALL(op_flatten__start_dim_2, dp_op_flatten(f->x, 2, -1, &o->t))
CALL(op_flatten__end_dim_minus_3, dp_op_flatten(f->x, 0, -3, &o->t))
CALL(op_flatten__start_after_end, dp_op_flatten(f->x, 1, 0, &o->t))
CALL(op_dropout__p_negative, dp_op_dropout(f->x, -0.1, 1, 7, &o->t))
CALL(op_dropout__p_1_5, dp_op_dropout(f->x, 1.5, 1, 7, &o->t))
CALL(op_dropout__p_nan, dp_op_dropout(f->x, NAN, 1, 7, &o->t))
CALL(op_add__a_null, dp_op_add(NULL, f->x, &o->t))
CALL(op_add__b_null, dp_op_add(f->x, NULL, &o->t))
CALL(op_add__a_is_a_module, dp_op_add(AS_T(f->lin), f->x, &o->t))
CALL(op_add__b_is_an_optimizer, dp_op_add(f->x, AS_T(f->opt), &o->t))
CALL(op_add__out_null, dp_op_add(f->x, f->x, NULL))
CALL(op_add__float32_with_float64, dp_op_add(f->x, f->d, &o->t))
CALL(op_add__float32_with_int64, dp_op_add(f->x, f->i, &o->t))
CALL(op_add__cpu0_with_cpu1, dp_op_add(f->x, f->x1, &o->t))
CALL(op_add__shapes_do_not_broadcast, dp_op_add(f->x, f->v2, &o->t))
CALL(op_sub__a_null, dp_op_sub(NULL, f->x, &o->t))
CALL(op_sub__b_null, dp_op_sub(f->x, NULL, &o->t))
CALL(op_sub__a_is_a_module, dp_op_sub(AS_T(f->lin), f->x, &o->t))
CALL(op_sub__b_is_an_optimizer, dp_op_sub(f->x, AS_T(f->opt), &o->t))
CALL(op_sub__out_null, dp_op_sub(f->x, f->x, NULL))
CALL(op_sub__float32_with_float64, dp_op_sub(f->x, f->d, &o->t))
CALL(op_sub__float32_with_int64, dp_op_sub(f->x, f->i, &o->t))
CALL(op_sub__cpu0_with_cpu1, dp_op_sub(f->x, f->x1, &o->t))
CALL(op_sub__shapes_do_not_broadcast, dp_op_sub(f->x, f->v2, &o->t))
CALL(op_mul__a_null, dp_op_mul(NULL, f->x, &o->t))
CALL(op_mul__b_null, dp_op_mul(f->x, NULL, &o->t))
CALL(op_mul__a_is_a_module, dp_op_mul(AS_T(f->lin), f->x, &o->t))
CALL(op_mul__b_is_an_optimizer, dp_op_mul(f->x, AS_T(f->opt), &o->t))
CALL(op_mul__out_null, dp_op_mul(f->x, f->x, NULL))
CALL(op_mul__float32_with_float64, dp_op_mul(f->x, f->d, &o->t))
CALL(op_mul__float32_with_int64, dp_op_mul(f->x, f->i, &o->t))
CALL(op_mul__cpu0_with_cpu1, dp_op_mul(f->x, f->x1, &o->t))
CALL(op_mul__shapes_do_not_broadcast, dp_op_mul(f->x, f->v2, &o->t))
CALL(op_div__a_null, dp_op_div(NULL, f->x, &o->t))
CALL(op_div__b_null, dp_op_div(f->x, NULL, &o->t))
CALL(op_div__a_is_a_module, dp_op_div(AS_T(f->lin), f->x, &o->t))
CALL(op_div__b_is_an_optimizer, dp_op_div(f->x, AS_T(f->opt), &o->t))
CALL(op_div__out_null, dp_op_div(f->x, f->x, NULL))
CALL(op_div__float32_with_float64, dp_op_div(f->x, f->d, &o->t))
CALL(op_div__float32_with_int64, dp_op_div(f->x, f->i, &o->t))
CALL(op_div__cpu0_with_cpu1, dp_op_div(f->x, f->x1, &o->t))
CALL(op_div__shapes_do_not_broadcast, dp_op_div(f->x, f->v2, &o->t))
CALL(op_matmul__a_null, dp_op_matmul(NULL, f->w32, &o->t))
CALL(op_matmul__b_null, dp_op_matmul(f->x, NULL, &o->t))
CALL(op_matmul__a_is_a_module, dp_op_matmul(AS_T(f->lin), f->w32, &o->t))
CALL(op_matmul__b_is_a_context, dp_op_matmul(f->x, AS_T(f->ctx), &o->t))
CALL(op_matmul__out_null, dp_op_matmul(f->x, f->w32, NULL))
CALL(op_matmul__int64_a, dp_op_matmul(f->i, f->i, &o->t))
CALL(op_matmul__float32_with_float64, dp_op_matmul(f->x, f->d, &o->t))
CALL(op_matmul__cpu0_with_cpu1, dp_op_matmul(f->x, f->x1, &o->t))
CALL(op_matmul__inner_sizes_differ, dp_op_matmul(f->x, f->x, &o->t))
CALL(op_matmul__1d, dp_op_matmul(f->v3, f->v3, &o->t))
CALL(op_linear__x_null, dp_op_linear(NULL, f->x, NULL, &o->t))
CALL(op_linear__weight_null, dp_op_linear(f->x, NULL, NULL, &o->t))
CALL(op_linear__x_is_a_module, dp_op_linear(AS_T(f->lin), f->x, NULL, &o->t))
CALL(op_linear__weight_is_a_context, dp_op_linear(f->x, AS_T(f->ctx), NULL, &o->t))
CALL(op_linear__out_null, dp_op_linear(f->x, f->x, NULL, NULL))
CALL(op_linear__bias_is_a_module, dp_op_linear(f->x, f->w23, AS_T(f->lin), &o->t))
CALL(op_linear__int64_x, dp_op_linear(f->i, f->w23, NULL, &o->t))
CALL(op_linear__float64_weight, dp_op_linear(f->x, f->d, NULL, &o->t))
CALL(op_linear__weight_on_cpu1, dp_op_linear(f->x, f->x1, NULL, &o->t))
CALL(op_linear__float64_bias, dp_op_linear(f->x, f->w23, f->v2_64, &o->t))
CALL(op_linear__bias_on_cpu1, dp_op_linear(f->x, f->w23, f->v2_1, &o->t))
CALL(op_linear__1d_weight, dp_op_linear(f->x, f->v3, NULL, &o->t))
CALL(op_linear__in_features_differ, dp_op_linear(f->x, f->w32, NULL, &o->t))
CALL(op_linear__bias_size, dp_op_linear(f->x, f->w23, f->v3, &o->t))
CALL(op_conv2d__x_null, dp_op_conv2d(NULL, f->ker, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__padding_huge, dp_op_conv2d(f->img, f->ker, NULL, 1, 1, INT32_MAX, INT32_MAX, &o->t))
CALL(op_conv2d__weight_null, dp_op_conv2d(f->img, NULL, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__x_is_a_module, dp_op_conv2d(AS_T(f->lin), f->ker, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__weight_is_a_context, dp_op_conv2d(f->img, AS_T(f->ctx), NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__out_null, dp_op_conv2d(f->img, f->ker, NULL, 1, 1, 0, 0, NULL))
CALL(op_conv2d__bias_is_a_tensor_of_the_wrong_kind,
     dp_op_conv2d(f->img, f->ker, AS_T(f->seq), 1, 1, 0, 0, &o->t))
CALL(op_conv2d__int64_x, dp_op_conv2d(f->i, f->ker, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__float64_weight, dp_op_conv2d(f->img, f->ker64, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__weight_on_cpu1, dp_op_conv2d(f->img, f->ker1, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__float64_bias, dp_op_conv2d(f->img, f->ker, f->one64, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__stride_0, dp_op_conv2d(f->img, f->ker, NULL, 0, 1, 0, 0, &o->t))
CALL(op_conv2d__stride_negative, dp_op_conv2d(f->img, f->ker, NULL, 1, -2, 0, 0, &o->t))
CALL(op_conv2d__padding_negative, dp_op_conv2d(f->img, f->ker, NULL, 1, 1, -1, 0, &o->t))
CALL(op_conv2d__2d_x, dp_op_conv2d(f->x, f->ker, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__channels_differ, dp_op_conv2d(f->img2c, f->ker, NULL, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__bias_size, dp_op_conv2d(f->img, f->ker, f->v3, 1, 1, 0, 0, &o->t))
CALL(op_conv2d__kernel_larger_than_input, dp_op_conv2d(f->ker, f->img, NULL, 1, 1, 0, 0, &o->t))
CALL(op_max_pool2d__x_null, dp_op_max_pool2d(NULL, 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_max_pool2d__x_is_a_module, dp_op_max_pool2d(AS_T(f->lin), 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_max_pool2d__out_null, dp_op_max_pool2d(f->img, 2, 2, 2, 2, 0, 0, NULL))
CALL(op_max_pool2d__int64_x, dp_op_max_pool2d(f->i, 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_max_pool2d__2d_x, dp_op_max_pool2d(f->x, 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_max_pool2d__kernel_0, dp_op_max_pool2d(f->img, 0, 2, 2, 2, 0, 0, &o->t))
CALL(op_max_pool2d__kernel_negative, dp_op_max_pool2d(f->img, 2, -1, 2, 2, 0, 0, &o->t))
CALL(op_max_pool2d__stride_0, dp_op_max_pool2d(f->img, 2, 2, 0, 2, 0, 0, &o->t))
CALL(op_max_pool2d__padding_negative, dp_op_max_pool2d(f->img, 2, 2, 2, 2, -1, 0, &o->t))
CALL(op_max_pool2d__padding_past_half_the_kernel, dp_op_max_pool2d(f->img, 2, 2, 2, 2, 0, 2, &o->t))
CALL(op_max_pool2d__kernel_larger_than_input, dp_op_max_pool2d(f->img, 5, 5, 1, 1, 0, 0, &o->t))
CALL(op_avg_pool2d__x_null, dp_op_avg_pool2d(NULL, 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_avg_pool2d__x_is_a_module, dp_op_avg_pool2d(AS_T(f->lin), 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_avg_pool2d__out_null, dp_op_avg_pool2d(f->img, 2, 2, 2, 2, 0, 0, NULL))
CALL(op_avg_pool2d__int64_x, dp_op_avg_pool2d(f->i, 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_avg_pool2d__2d_x, dp_op_avg_pool2d(f->x, 2, 2, 2, 2, 0, 0, &o->t))
CALL(op_avg_pool2d__kernel_0, dp_op_avg_pool2d(f->img, 0, 2, 2, 2, 0, 0, &o->t))
CALL(op_avg_pool2d__kernel_negative, dp_op_avg_pool2d(f->img, 2, -1, 2, 2, 0, 0, &o->t))
CALL(op_avg_pool2d__stride_0, dp_op_avg_pool2d(f->img, 2, 2, 0, 2, 0, 0, &o->t))
CALL(op_avg_pool2d__padding_negative, dp_op_avg_pool2d(f->img, 2, 2, 2, 2, -1, 0, &o->t))
CALL(op_avg_pool2d__padding_past_half_the_kernel, dp_op_avg_pool2d(f->img, 2, 2, 2, 2, 0, 2, &o->t))
CALL(op_avg_pool2d__kernel_larger_than_input, dp_op_avg_pool2d(f->img, 5, 5, 1, 1, 0, 0, &o->t))
CALL(op_batch_norm__x_null, dp_op_batch_norm(NULL, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__x_is_a_module,
     dp_op_batch_norm(AS_T(f->lin), NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__out_null, dp_op_batch_norm(f->x, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, NULL))
CALL(op_batch_norm__weight_is_a_module,
     dp_op_batch_norm(f->x, AS_T(f->lin), NULL, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__bias_is_a_context,
     dp_op_batch_norm(f->x, NULL, AS_T(f->ctx), NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__running_mean_is_a_module,
     dp_op_batch_norm(f->x, NULL, NULL, AS_T(f->lin), NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__running_var_is_an_optimizer,
     dp_op_batch_norm(f->x, NULL, NULL, NULL, AS_T(f->opt), 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__int64_x, dp_op_batch_norm(f->i2, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__float64_weight,
     dp_op_batch_norm(f->x, f->v3_64, NULL, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__bias_on_cpu1,
     dp_op_batch_norm(f->x, NULL, f->v3_1, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__running_mean_size,
     dp_op_batch_norm(f->x, NULL, NULL, f->v2, f->v3, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__3d_x, dp_op_batch_norm(f->img3, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__eps_0, dp_op_batch_norm(f->x, NULL, NULL, NULL, NULL, 1, 0.1, 0.0, &o->t))
CALL(op_batch_norm__eps_negative,
     dp_op_batch_norm(f->x, NULL, NULL, NULL, NULL, 1, 0.1, -1e-5, &o->t))
CALL(op_batch_norm__momentum_2, dp_op_batch_norm(f->x, NULL, NULL, NULL, NULL, 1, 2.0, 1e-5, &o->t))
CALL(op_batch_norm__momentum_negative,
     dp_op_batch_norm(f->x, NULL, NULL, NULL, NULL, 1, -0.5, 1e-5, &o->t))
CALL(op_batch_norm__eval_without_running_stats,
     dp_op_batch_norm(f->x, NULL, NULL, NULL, NULL, 0, 0.1, 1e-5, &o->t))
CALL(op_batch_norm__training_on_one_row,
     dp_op_batch_norm(f->row, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, &o->t))
CALL(op_embedding__indices_null, dp_op_embedding(NULL, f->x, &o->t))
CALL(op_embedding__weight_null, dp_op_embedding(f->i, NULL, &o->t))
CALL(op_embedding__indices_is_a_module, dp_op_embedding(AS_T(f->lin), f->x, &o->t))
CALL(op_embedding__weight_is_a_context, dp_op_embedding(f->i, AS_T(f->ctx), &o->t))
CALL(op_embedding__out_null, dp_op_embedding(f->i, f->x, NULL))
CALL(op_embedding__float_indices, dp_op_embedding(f->x, f->x, &o->t))
CALL(op_embedding__int64_weight, dp_op_embedding(f->i, f->i2, &o->t))
CALL(op_embedding__1d_weight, dp_op_embedding(f->i, f->v3, &o->t))
CALL(op_embedding__weight_on_cpu1, dp_op_embedding(f->i, f->x1, &o->t))
CALL(op_embedding__index_past_the_rows, dp_op_embedding(f->i5, f->x, &o->t))
CALL(op_embedding__negative_index, dp_op_embedding(f->ineg, f->x, &o->t))
CALL(op_cross_entropy__logits_null, dp_op_cross_entropy(NULL, f->i, &o->t))
CALL(op_cross_entropy__target_null, dp_op_cross_entropy(f->x, NULL, &o->t))
CALL(op_cross_entropy__logits_is_a_module, dp_op_cross_entropy(AS_T(f->lin), f->i, &o->t))
CALL(op_cross_entropy__target_is_a_context, dp_op_cross_entropy(f->x, AS_T(f->ctx), &o->t))
CALL(op_cross_entropy__out_null, dp_op_cross_entropy(f->x, f->i, NULL))
CALL(op_cross_entropy__int64_logits, dp_op_cross_entropy(f->i2, f->i, &o->t))
CALL(op_cross_entropy__1d_logits, dp_op_cross_entropy(f->v3, f->i, &o->t))
CALL(op_cross_entropy__float_target, dp_op_cross_entropy(f->x, f->v2, &o->t))
CALL(op_cross_entropy__target_rows, dp_op_cross_entropy(f->x, f->i3, &o->t))
CALL(op_cross_entropy__target_on_cpu1, dp_op_cross_entropy(f->x, f->i_1, &o->t))
CALL(op_cross_entropy__target_past_the_classes, dp_op_cross_entropy(f->x, f->i5, &o->t))
CALL(op_nll_loss__log_probs_null, dp_op_nll_loss(NULL, f->i, &o->t))
CALL(op_nll_loss__target_null, dp_op_nll_loss(f->x, NULL, &o->t))
CALL(op_nll_loss__log_probs_is_a_module, dp_op_nll_loss(AS_T(f->lin), f->i, &o->t))
CALL(op_nll_loss__target_is_a_context, dp_op_nll_loss(f->x, AS_T(f->ctx), &o->t))
CALL(op_nll_loss__out_null, dp_op_nll_loss(f->x, f->i, NULL))
CALL(op_nll_loss__int64_log_probs, dp_op_nll_loss(f->i2, f->i, &o->t))
CALL(op_nll_loss__1d_log_probs, dp_op_nll_loss(f->v3, f->i, &o->t))
CALL(op_nll_loss__float_target, dp_op_nll_loss(f->x, f->v2, &o->t))
CALL(op_nll_loss__2d_target, dp_op_nll_loss(f->x, f->i22, &o->t))
CALL(op_nll_loss__target_on_cpu1, dp_op_nll_loss(f->x, f->i_1, &o->t))
CALL(op_nll_loss__target_past_the_classes, dp_op_nll_loss(f->x, f->i5, &o->t))
CALL(op_mse_loss__input_null, dp_op_mse_loss(NULL, f->x, &o->t))
CALL(op_mse_loss__target_null, dp_op_mse_loss(f->x, NULL, &o->t))
CALL(op_mse_loss__input_is_a_module, dp_op_mse_loss(AS_T(f->lin), f->x, &o->t))
CALL(op_mse_loss__target_is_a_context, dp_op_mse_loss(f->x, AS_T(f->ctx), &o->t))
CALL(op_mse_loss__out_null, dp_op_mse_loss(f->x, f->x, NULL))
CALL(op_mse_loss__int64_input, dp_op_mse_loss(f->i, f->i, &o->t))
CALL(op_mse_loss__float32_with_float64, dp_op_mse_loss(f->x, f->d, &o->t))
CALL(op_mse_loss__cpu0_with_cpu1, dp_op_mse_loss(f->x, f->x1, &o->t))
CALL(op_mse_loss__shapes_differ, dp_op_mse_loss(f->x, f->w32, &o->t))
CALL(op_reshape__x_null, dp_op_reshape(NULL, S23, 2, &o->t))
CALL(op_reshape__x_is_a_module, dp_op_reshape(AS_T(f->lin), S23, 2, &o->t))
CALL(op_reshape__out_null, dp_op_reshape(f->x, S23, 2, NULL))
CALL(op_reshape__shape_null_ndim_2, dp_op_reshape(f->x, NULL, 2, &o->t))
CALL(op_reshape__ndim_9, dp_op_reshape(f->x, S_NINE, 9, &o->t))
CALL(op_reshape__shape_negative, dp_op_reshape(f->x, S_NEG, 2, &o->t))
CALL(op_reshape__two_minus_ones, dp_op_reshape(f->x, (const int64_t[]){-1, -1}, 2, &o->t))
CALL(op_reshape__element_count_differs, dp_op_reshape(f->x, (const int64_t[]){4, 2}, 2, &o->t))
CALL(op_reshape__minus_one_does_not_divide, dp_op_reshape(f->x, (const int64_t[]){-1, 4}, 2, &o->t))
CALL(op_reshape__shape_past_2_63, dp_op_reshape(f->x, S_HUGE, 3, &o->t))
CALL(op_cat__tensors_null, dp_op_cat(NULL, 2, 0, &o->t))
CALL(op_cat__n_0, dp_op_cat((const dp_tensor* const[]){NULL}, 0, 0, &o->t))
CALL(op_cat__tensors_1_null, dp_op_cat((const dp_tensor* const[]){f->x, NULL}, 2, 0, &o->t))
CALL(op_cat__tensors_1_is_a_module,
     dp_op_cat((const dp_tensor* const[]){f->x, AS_T(f->lin)}, 2, 0, &o->t))
CALL(op_cat__out_null, dp_op_cat((const dp_tensor* const[]){f->x, f->x}, 2, 0, NULL))
CALL(op_cat__float32_with_float64, dp_op_cat((const dp_tensor* const[]){f->x, f->d}, 2, 0, &o->t))
CALL(op_cat__dim_2, dp_op_cat((const dp_tensor* const[]){f->x, f->x}, 2, 2, &o->t))
CALL(op_cat__shapes_differ, dp_op_cat((const dp_tensor* const[]){f->x, f->w32}, 2, 0, &o->t))
CALL(op_cat__scalar, dp_op_cat((const dp_tensor* const[]){f->s, f->s}, 2, 0, &o->t))
CALL(op_split__x_null, dp_op_split(NULL, (const int64_t[]){1, 1}, 2, 0, o->ts))
CALL(op_split__x_is_a_context, dp_op_split(AS_T(f->ctx), (const int64_t[]){1, 1}, 2, 0, o->ts))
CALL(op_split__sizes_null, dp_op_split(f->x, NULL, 2, 0, o->ts))
CALL(op_split__n_0, dp_op_split(f->x, (const int64_t[]){2}, 0, 0, o->ts))
CALL(op_split__outs_null, dp_op_split(f->x, (const int64_t[]){1, 1}, 2, 0, NULL))
CALL(op_split__size_negative, dp_op_split(f->x, (const int64_t[]){3, -1}, 2, 0, o->ts))
CALL(op_split__sizes_do_not_sum, dp_op_split(f->x, (const int64_t[]){1, 2}, 2, 0, o->ts))
CALL(op_split__dim_2, dp_op_split(f->x, (const int64_t[]){1, 1}, 2, 2, o->ts))
CALL(op_split__scalar, dp_op_split(f->s, (const int64_t[]){1}, 1, 0, o->ts))
CALL(op_split__sizes_sum_overflows_to_the_size,
     dp_op_split(f->x, (const int64_t[]){INT64_MAX, INT64_MAX, 4}, 3, 0, o->ts))
CALL(module_linear__ctx_null, dp_module_linear(NULL, 3, 2, 1, CPU(0), &o->m))
CALL(module_linear__ctx_is_a_tensor, dp_module_linear(AS_C(f->x), 3, 2, 1, CPU(0), &o->m))
CALL(module_linear__out_null, dp_module_linear(f->ctx, 3, 2, 1, CPU(0), NULL))
CALL(module_linear__in_features_0, dp_module_linear(f->ctx, 0, 2, 1, CPU(0), &o->m))
CALL(module_linear__out_features_negative, dp_module_linear(f->ctx, 3, -2, 1, CPU(0), &o->m))
CALL(module_linear__cpu_2_of_2, dp_module_linear(f->ctx, 3, 2, 1, CPU(2), &o->m))
CALL(module_linear__cpu_negative, dp_module_linear(f->ctx, 3, 2, 1, CPU(-1), &o->m))
CALL(module_linear__device_type_5, dp_module_linear(f->ctx, 3, 2, 1, BADTYPE, &o->m))
CALL(module_conv2d__ctx_null, dp_module_conv2d(NULL, 1, 1, 2, 2, 1, 1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__ctx_is_a_tensor,
     dp_module_conv2d(AS_C(f->x), 1, 1, 2, 2, 1, 1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__out_null, dp_module_conv2d(f->ctx, 1, 1, 2, 2, 1, 1, 0, 0, 1, CPU(0), NULL))
CALL(module_conv2d__in_channels_0,
     dp_module_conv2d(f->ctx, 0, 1, 2, 2, 1, 1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__out_channels_negative,
     dp_module_conv2d(f->ctx, 1, -1, 2, 2, 1, 1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__kernel_h_0, dp_module_conv2d(f->ctx, 1, 1, 0, 2, 1, 1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__kernel_w_negative,
     dp_module_conv2d(f->ctx, 1, 1, 2, -2, 1, 1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__stride_h_0, dp_module_conv2d(f->ctx, 1, 1, 2, 2, 0, 1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__stride_w_negative,
     dp_module_conv2d(f->ctx, 1, 1, 2, 2, 1, -1, 0, 0, 1, CPU(0), &o->m))
CALL(module_conv2d__pad_negative,
     dp_module_conv2d(f->ctx, 1, 1, 2, 2, 1, 1, 0, -1, 1, CPU(0), &o->m))
CALL(module_conv2d__cpu_2_of_2, dp_module_conv2d(f->ctx, 1, 1, 2, 2, 1, 1, 0, 0, 1, CPU(2), &o->m))
CALL(module_conv2d__cpu_negative,
     dp_module_conv2d(f->ctx, 1, 1, 2, 2, 1, 1, 0, 0, 1, CPU(-1), &o->m))
CALL(module_conv2d__device_type_5,
     dp_module_conv2d(f->ctx, 1, 1, 2, 2, 1, 1, 0, 0, 1, BADTYPE, &o->m))
CALL(module_relu__ctx_null, dp_module_relu(NULL, &o->m))
CALL(module_relu__ctx_is_a_tensor, dp_module_relu(AS_C(f->x), &o->m))
CALL(module_relu__out_null, dp_module_relu(f->ctx, NULL))
CALL(module_gelu__ctx_null, dp_module_gelu(NULL, &o->m))
CALL(module_gelu__ctx_is_a_tensor, dp_module_gelu(AS_C(f->x), &o->m))
CALL(module_gelu__out_null, dp_module_gelu(f->ctx, NULL))
CALL(module_tanh__ctx_null, dp_module_tanh(NULL, &o->m))
CALL(module_tanh__ctx_is_a_tensor, dp_module_tanh(AS_C(f->x), &o->m))
CALL(module_tanh__out_null, dp_module_tanh(f->ctx, NULL))
CALL(module_sigmoid__ctx_null, dp_module_sigmoid(NULL, &o->m))
CALL(module_sigmoid__ctx_is_a_tensor, dp_module_sigmoid(AS_C(f->x), &o->m))
CALL(module_sigmoid__out_null, dp_module_sigmoid(f->ctx, NULL))
CALL(module_sequential__ctx_null, dp_module_sequential(NULL, &o->m))
CALL(module_sequential__ctx_is_a_tensor, dp_module_sequential(AS_C(f->x), &o->m))
CALL(module_sequential__out_null, dp_module_sequential(f->ctx, NULL))
CALL(module_dropout__ctx_null, dp_module_dropout(NULL, 0.5, &o->m))
CALL(module_dropout__ctx_is_a_tensor, dp_module_dropout(AS_C(f->x), 0.5, &o->m))
CALL(module_dropout__out_null, dp_module_dropout(f->ctx, 0.5, NULL))
CALL(module_dropout__p_negative, dp_module_dropout(f->ctx, -0.5, &o->m))
CALL(module_dropout__p_2, dp_module_dropout(f->ctx, 2.0, &o->m))
CALL(module_batchnorm1d__ctx_null, dp_module_batchnorm1d(NULL, 3, 1e-5, 0.1, CPU(0), &o->m))
CALL(module_batchnorm1d__ctx_is_a_tensor,
     dp_module_batchnorm1d(AS_C(f->x), 3, 1e-5, 0.1, CPU(0), &o->m))
CALL(module_batchnorm1d__out_null, dp_module_batchnorm1d(f->ctx, 3, 1e-5, 0.1, CPU(0), NULL))
CALL(module_batchnorm1d__num_features_0, dp_module_batchnorm1d(f->ctx, 0, 1e-5, 0.1, CPU(0), &o->m))
CALL(module_batchnorm1d__eps_0, dp_module_batchnorm1d(f->ctx, 3, 0.0, 0.1, CPU(0), &o->m))
CALL(module_batchnorm1d__momentum_1_5, dp_module_batchnorm1d(f->ctx, 3, 1e-5, 1.5, CPU(0), &o->m))
CALL(module_batchnorm1d__cpu_2_of_2, dp_module_batchnorm1d(f->ctx, 3, 1e-5, 0.1, CPU(2), &o->m))
CALL(module_batchnorm1d__cpu_negative, dp_module_batchnorm1d(f->ctx, 3, 1e-5, 0.1, CPU(-1), &o->m))
CALL(module_batchnorm1d__device_type_5, dp_module_batchnorm1d(f->ctx, 3, 1e-5, 0.1, BADTYPE, &o->m))
CALL(module_batchnorm2d__ctx_null, dp_module_batchnorm2d(NULL, 3, 1e-5, 0.1, CPU(0), &o->m))
CALL(module_batchnorm2d__ctx_is_a_tensor,
     dp_module_batchnorm2d(AS_C(f->x), 3, 1e-5, 0.1, CPU(0), &o->m))
CALL(module_batchnorm2d__out_null, dp_module_batchnorm2d(f->ctx, 3, 1e-5, 0.1, CPU(0), NULL))
CALL(module_batchnorm2d__num_features_0, dp_module_batchnorm2d(f->ctx, 0, 1e-5, 0.1, CPU(0), &o->m))
CALL(module_batchnorm2d__eps_0, dp_module_batchnorm2d(f->ctx, 3, 0.0, 0.1, CPU(0), &o->m))
CALL(module_batchnorm2d__momentum_1_5, dp_module_batchnorm2d(f->ctx, 3, 1e-5, 1.5, CPU(0), &o->m))
CALL(module_batchnorm2d__cpu_2_of_2, dp_module_batchnorm2d(f->ctx, 3, 1e-5, 0.1, CPU(2), &o->m))
CALL(module_batchnorm2d__cpu_negative, dp_module_batchnorm2d(f->ctx, 3, 1e-5, 0.1, CPU(-1), &o->m))
CALL(module_batchnorm2d__device_type_5, dp_module_batchnorm2d(f->ctx, 3, 1e-5, 0.1, BADTYPE, &o->m))
CALL(module_maxpool2d__ctx_null, dp_module_maxpool2d(NULL, 2, 2, 2, 2, 0, 0, &o->m))
CALL(module_maxpool2d__ctx_is_a_tensor, dp_module_maxpool2d(AS_C(f->x), 2, 2, 2, 2, 0, 0, &o->m))
CALL(module_maxpool2d__out_null, dp_module_maxpool2d(f->ctx, 2, 2, 2, 2, 0, 0, NULL))
CALL(module_maxpool2d__kernel_h_0, dp_module_maxpool2d(f->ctx, 0, 2, 2, 2, 0, 0, &o->m))
CALL(module_maxpool2d__kernel_w_negative, dp_module_maxpool2d(f->ctx, 2, -2, 2, 2, 0, 0, &o->m))
CALL(module_maxpool2d__stride_h_0, dp_module_maxpool2d(f->ctx, 2, 2, 0, 2, 0, 0, &o->m))
CALL(module_maxpool2d__stride_w_negative, dp_module_maxpool2d(f->ctx, 2, 2, 2, -1, 0, 0, &o->m))
CALL(module_maxpool2d__pad_negative, dp_module_maxpool2d(f->ctx, 2, 2, 2, 2, -1, 0, &o->m))
CALL(module_maxpool2d__pad_past_half_the_kernel,
     dp_module_maxpool2d(f->ctx, 2, 2, 2, 2, 0, 3, &o->m))
CALL(module_avgpool2d__ctx_null, dp_module_avgpool2d(NULL, 2, 2, 2, 2, 0, 0, &o->m))
CALL(module_avgpool2d__ctx_is_a_tensor, dp_module_avgpool2d(AS_C(f->x), 2, 2, 2, 2, 0, 0, &o->m))
CALL(module_avgpool2d__out_null, dp_module_avgpool2d(f->ctx, 2, 2, 2, 2, 0, 0, NULL))
CALL(module_avgpool2d__kernel_h_0, dp_module_avgpool2d(f->ctx, 0, 2, 2, 2, 0, 0, &o->m))
CALL(module_avgpool2d__kernel_w_negative, dp_module_avgpool2d(f->ctx, 2, -2, 2, 2, 0, 0, &o->m))
CALL(module_avgpool2d__stride_h_0, dp_module_avgpool2d(f->ctx, 2, 2, 0, 2, 0, 0, &o->m))
CALL(module_avgpool2d__stride_w_negative, dp_module_avgpool2d(f->ctx, 2, 2, 2, -1, 0, 0, &o->m))
CALL(module_avgpool2d__pad_negative, dp_module_avgpool2d(f->ctx, 2, 2, 2, 2, -1, 0, &o->m))
CALL(module_avgpool2d__pad_past_half_the_kernel,
     dp_module_avgpool2d(f->ctx, 2, 2, 2, 2, 0, 3, &o->m))
CALL(module_flatten__ctx_null, dp_module_flatten(NULL, 1, -1, &o->m))
CALL(module_flatten__ctx_is_a_tensor, dp_module_flatten(AS_C(f->x), 1, -1, &o->m))
CALL(module_flatten__out_null, dp_module_flatten(f->ctx, 1, -1, NULL))
CALL(module_embedding__ctx_null, dp_module_embedding(NULL, 4, 2, CPU(0), &o->m))
CALL(module_embedding__ctx_is_a_tensor, dp_module_embedding(AS_C(f->x), 4, 2, CPU(0), &o->m))
CALL(module_embedding__out_null, dp_module_embedding(f->ctx, 4, 2, CPU(0), NULL))
CALL(module_embedding__num_embeddings_0, dp_module_embedding(f->ctx, 0, 2, CPU(0), &o->m))
CALL(module_embedding__embedding_dim_negative, dp_module_embedding(f->ctx, 4, -2, CPU(0), &o->m))
CALL(module_embedding__cpu_2_of_2, dp_module_embedding(f->ctx, 4, 2, CPU(2), &o->m))
CALL(module_embedding__cpu_negative, dp_module_embedding(f->ctx, 4, 2, CPU(-1), &o->m))
CALL(module_embedding__device_type_5, dp_module_embedding(f->ctx, 4, 2, BADTYPE, &o->m))
CALL(module_append__sequential_null, dp_module_append(NULL, f->relu))
CALL(module_append__child_null, dp_module_append(f->seq, NULL))
CALL(module_append__sequential_is_a_tensor, dp_module_append(AS_M(f->x), f->relu))
CALL(module_append__child_is_an_optimizer, dp_module_append(f->seq, AS_M(f->opt)))
CALL(module_append__to_a_linear, dp_module_append(f->lin, f->relu))
CALL(module_append__to_itself, dp_module_append(f->seq, f->seq))
CALL(module_custom__ctx_null,
     dp_module_custom(NULL,
                      &(dp_custom_module_desc){sizeof(dp_custom_module_desc), NULL,
                                               identity_forward, NULL, NULL},
                      &o->m))
CALL(module_custom__ctx_is_a_module,
     dp_module_custom(AS_C(f->lin),
                      &(dp_custom_module_desc){sizeof(dp_custom_module_desc), NULL,
                                               identity_forward, NULL, NULL},
                      &o->m))
CALL(module_custom__out_null,
     dp_module_custom(f->ctx,
                      &(dp_custom_module_desc){sizeof(dp_custom_module_desc), NULL,
                                               identity_forward, NULL, NULL},
                      NULL))
CALL(module_custom__desc_null, dp_module_custom(f->ctx, NULL, &o->m))
CALL(module_custom__struct_size_0,
     dp_module_custom(f->ctx, &(dp_custom_module_desc){0, NULL, identity_forward, NULL, NULL},
                      &o->m))
CALL(module_custom__struct_size_ends_inside_a_member,
     dp_module_custom(f->ctx,
                      &(dp_custom_module_desc){sizeof(dp_custom_module_desc) - 1, NULL,
                                               identity_forward, NULL, NULL},
                      &o->m))
CALL(module_custom__forward_null,
     dp_module_custom(f->ctx,
                      &(dp_custom_module_desc){sizeof(dp_custom_module_desc), NULL, NULL, NULL,
                                               NULL},
                      &o->m))
CALL(module_register_parameter__m_null, dp_module_register_parameter(NULL, "p", f->p))
CALL(module_register_parameter__m_is_a_tensor, dp_module_register_parameter(AS_M(f->x), "p", f->p))
CALL(module_register_parameter__name_null, dp_module_register_parameter(f->custom, NULL, f->p))
CALL(module_register_parameter__t_null, dp_module_register_parameter(f->custom, "p", NULL))
CALL(module_register_parameter__t_is_a_module,
     dp_module_register_parameter(f->custom, "p", AS_T(f->lin)))
CALL(module_register_parameter__name_empty, dp_module_register_parameter(f->custom, "", f->p))
CALL(module_register_parameter__name_with_a_dot,
     dp_module_register_parameter(f->custom, "a.b", f->p))
CALL(module_register_parameter__name_with_a_slash,
     dp_module_register_parameter(f->custom, "a/b", f->p))
CALL(module_register_parameter__name_taken, dp_module_register_parameter(f->custom, "taken", f->p))
CALL(module_register_buffer__m_null, dp_module_register_buffer(NULL, "p", f->p))
CALL(module_register_buffer__m_is_a_tensor, dp_module_register_buffer(AS_M(f->x), "p", f->p))
CALL(module_register_buffer__name_null, dp_module_register_buffer(f->custom, NULL, f->p))
CALL(module_register_buffer__t_null, dp_module_register_buffer(f->custom, "p", NULL))
CALL(module_register_buffer__t_is_a_module, dp_module_register_buffer(f->custom, "p", AS_T(f->lin)))
CALL(module_register_buffer__name_empty, dp_module_register_buffer(f->custom, "", f->p))
CALL(module_register_buffer__name_with_a_dot, dp_module_register_buffer(f->custom, "a.b", f->p))
CALL(module_register_buffer__name_with_a_slash, dp_module_register_buffer(f->custom, "a/b", f->p))
CALL(module_register_buffer__name_taken, dp_module_register_buffer(f->custom, "held", f->p))
CALL(module_register_buffer__name_of_a_parameter,
     dp_module_register_buffer(f->custom, "taken", f->p))
CALL(module_register_parameter__name_of_a_buffer,
     dp_module_register_parameter(f->custom, "held", f->p))
CALL(module_register_parameter__int64, dp_module_register_parameter(f->custom, "p", f->i))
CALL(module_register_child__m_null, dp_module_register_child(NULL, "c", f->relu))
CALL(module_register_child__m_is_a_tensor, dp_module_register_child(AS_M(f->x), "c", f->relu))
CALL(module_register_child__name_null, dp_module_register_child(f->custom, NULL, f->relu))
CALL(module_register_child__child_null, dp_module_register_child(f->custom, "c", NULL))
CALL(module_register_child__child_is_a_data_parallel,
     dp_module_register_child(f->custom, "c", AS_M(f->dpw)))
CALL(module_register_child__name_with_a_dot, dp_module_register_child(f->custom, "c.d", f->relu))
CALL(module_register_child__itself, dp_module_register_child(f->custom, "me", f->custom))
CALL(module_register_child__name_of_a_parameter,
     dp_module_register_child(f->custom, "taken", f->relu))
CALL(module_forward__m_null,
     dp_module_forward(NULL, (dp_tensor* const[]){f->x}, 1, o->ts, 4, &o->z))
CALL(module_forward__m_is_a_tensor,
     dp_module_forward(AS_M(f->x), (dp_tensor* const[]){f->x}, 1, o->ts, 4, &o->z))
CALL(module_forward__inputs_null, dp_module_forward(f->lin, NULL, 1, o->ts, 4, &o->z))
CALL(module_forward__n_outputs_null,
     dp_module_forward(f->lin, (dp_tensor* const[]){f->x}, 1, o->ts, 4, NULL))
CALL(module_forward__outputs_null,
     dp_module_forward(f->lin, (dp_tensor* const[]){f->x}, 1, NULL, 4, &o->z))
CALL(module_forward__inputs_0_null,
     dp_module_forward(f->lin, (dp_tensor* const[]){NULL}, 1, o->ts, 4, &o->z))
CALL(module_forward__inputs_0_is_a_module,
     dp_module_forward(f->lin, (dp_tensor* const[]){AS_T(f->lin)}, 1, o->ts, 4, &o->z))
CALL(module_forward__capacity_0,
     dp_module_forward(f->lin, (dp_tensor* const[]){f->x}, 1, o->ts, 0, &o->z))
CALL(module_forward__two_inputs_to_linear,
     dp_module_forward(f->lin, (dp_tensor* const[]){f->x, f->x}, 2, o->ts, 4, &o->z))
CALL(module_forward__wrong_features,
     dp_module_forward(f->lin, (dp_tensor* const[]){f->w32}, 1, o->ts, 4, &o->z))
CALL(module_forward__int64_input,
     dp_module_forward(f->lin, (dp_tensor* const[]){f->i}, 1, o->ts, 4, &o->z))
CALL(module_forward__input_on_cpu1,
     dp_module_forward(f->lin, (dp_tensor* const[]){f->x1}, 1, o->ts, 4, &o->z))
CALL(module_forward1__m_null, dp_module_forward1(NULL, f->x, &o->t))
CALL(module_forward1__m_is_an_optimizer, dp_module_forward1(AS_M(f->opt), f->x, &o->t))
CALL(module_forward1__input_null, dp_module_forward1(f->lin, NULL, &o->t))
CALL(module_forward1__input_is_a_module, dp_module_forward1(f->lin, AS_T(f->lin), &o->t))
CALL(module_forward1__output_null, dp_module_forward1(f->lin, f->x, NULL))
CALL(module_forward1__float64_input, dp_module_forward1(f->lin, f->d, &o->t))
CALL(module_type_name__m_null, dp_module_type_name(NULL, &o->str))
CALL(module_type_name__m_is_a_tensor, dp_module_type_name(AS_M(f->x), &o->str))
CALL(module_type_name__m_is_a_context, dp_module_type_name(AS_M(f->ctx), &o->str))
CALL(module_type_name__out_null, dp_module_type_name(f->lin, NULL))
CALL(module_train__m_null, dp_module_train(NULL, 1))
CALL(module_train__m_is_a_tensor, dp_module_train(AS_M(f->x), 1))
CALL(module_train__m_is_a_context, dp_module_train(AS_M(f->ctx), 1))
CALL(module_is_training__m_null, dp_module_is_training(NULL, &o->iv))
CALL(module_is_training__m_is_a_tensor, dp_module_is_training(AS_M(f->x), &o->iv))
CALL(module_is_training__m_is_a_context, dp_module_is_training(AS_M(f->ctx), &o->iv))
CALL(module_is_training__out_null, dp_module_is_training(f->lin, NULL))
CALL(module_to__m_null, dp_module_to(NULL, CPU(0)))
CALL(module_to__m_is_a_tensor, dp_module_to(AS_M(f->x), CPU(0)))
CALL(module_to__m_is_a_context, dp_module_to(AS_M(f->ctx), CPU(0)))
CALL(module_to__cpu_2_of_2, dp_module_to(f->lin, CPU(2)))
CALL(module_to__cpu_negative, dp_module_to(f->lin, CPU(-1)))
CALL(module_to__device_type_5, dp_module_to(f->lin, BADTYPE))
CALL(module_zero_grad__m_null, dp_module_zero_grad(NULL))
CALL(module_zero_grad__m_is_a_tensor, dp_module_zero_grad(AS_M(f->x)))
CALL(module_zero_grad__m_is_a_context, dp_module_zero_grad(AS_M(f->ctx)))
CALL(module_parameter_count__m_null, dp_module_parameter_count(NULL, &o->z))
CALL(module_parameter_count__m_is_a_tensor, dp_module_parameter_count(AS_M(f->x), &o->z))
CALL(module_parameter_count__m_is_a_context, dp_module_parameter_count(AS_M(f->ctx), &o->z))
CALL(module_parameter_count__out_null, dp_module_parameter_count(f->lin, NULL))
CALL(module_buffer_count__m_null, dp_module_buffer_count(NULL, &o->z))
CALL(module_buffer_count__m_is_a_tensor, dp_module_buffer_count(AS_M(f->x), &o->z))
CALL(module_buffer_count__m_is_a_context, dp_module_buffer_count(AS_M(f->ctx), &o->z))
CALL(module_buffer_count__out_null, dp_module_buffer_count(f->lin, NULL))
CALL(module_parameter__m_null, dp_module_parameter(NULL, 0, &o->str, &o->t))
CALL(module_parameter__m_is_a_tensor, dp_module_parameter(AS_M(f->x), 0, &o->str, &o->t))
CALL(module_parameter__m_is_a_context, dp_module_parameter(AS_M(f->ctx), 0, &o->str, &o->t))
CALL(module_parameter__index_2_of_2, dp_module_parameter(f->lin, 2, &o->str, &o->t))
CALL(module_parameter__index_size_max, dp_module_parameter(f->lin, SIZE_MAX, &o->str, &o->t))
CALL(module_buffer__m_null, dp_module_buffer(NULL, 0, &o->str, &o->t))
CALL(module_buffer__m_is_a_tensor, dp_module_buffer(AS_M(f->x), 0, &o->str, &o->t))
CALL(module_buffer__m_is_a_context, dp_module_buffer(AS_M(f->ctx), 0, &o->str, &o->t))
CALL(module_buffer__index_0_of_0, dp_module_buffer(f->lin, 0, &o->str, &o->t))
CALL(module_get__m_null, dp_module_get(NULL, "weight", &o->t))
CALL(module_get__m_is_a_tensor, dp_module_get(AS_M(f->x), "weight", &o->t))
CALL(module_get__m_is_a_context, dp_module_get(AS_M(f->ctx), "weight", &o->t))
CALL(module_get__name_null, dp_module_get(f->lin, NULL, &o->t))
CALL(module_get__tensor_null, dp_module_get(f->lin, "weight", NULL))
CALL(module_get__absent_name, dp_module_get(f->lin, "nope", &o->t))
CALL(module_save__m_null, dp_module_save(NULL, f->scratch_path))
CALL(module_save__m_is_a_tensor, dp_module_save(AS_M(f->x), f->scratch_path))
CALL(module_save__m_is_a_context, dp_module_save(AS_M(f->ctx), f->scratch_path))
CALL(module_save__path_null, dp_module_save(f->lin, NULL))
CALL(module_save__path_in_a_missing_folder, dp_module_save(f->lin, kMissingPath))
CALL(module_load__m_null, dp_module_load(NULL, f->path))
CALL(module_load__m_is_a_tensor, dp_module_load(AS_M(f->x), f->path))
CALL(module_load__m_is_a_context, dp_module_load(AS_M(f->ctx), f->path))
CALL(module_load__path_null, dp_module_load(f->lin, NULL))
CALL(module_load__missing_file, dp_module_load(f->lin, kMissingPath))
CALL(optimizer_sgd__m_null, dp_optimizer_sgd(NULL, NULL, &o->opt))
CALL(optimizer_sgd__m_is_an_optimizer, dp_optimizer_sgd(AS_M(f->opt), NULL, &o->opt))
CALL(optimizer_sgd__out_null, dp_optimizer_sgd(f->lin, NULL, NULL))
CALL(optimizer_sgd__struct_size_0, dp_optimizer_sgd(f->lin,
                                                    &(dp_sgd_options){.struct_size = 0,
                                                                      .lr = 0.01,
                                                                      .momentum = 0.0,
                                                                      .dampening = 0.0,
                                                                      .weight_decay = 0.0,
                                                                      .nesterov = 0},
                                                    &o->opt))
CALL(optimizer_sgd__struct_size_ends_inside_a_member,
     dp_optimizer_sgd(f->lin,
                      &(dp_sgd_options){.struct_size = sizeof(dp_sgd_options) - 1,
                                        .lr = 0.01,
                                        .momentum = 0.0,
                                        .dampening = 0.0,
                                        .weight_decay = 0.0,
                                        .nesterov = 0},
                      &o->opt))
CALL(optimizer_sgd__lr_negative,
     dp_optimizer_sgd(f->lin,
                      &(dp_sgd_options){.struct_size = sizeof(dp_sgd_options),
                                        .lr = -0.1,
                                        .momentum = 0.0,
                                        .dampening = 0.0,
                                        .weight_decay = 0.0,
                                        .nesterov = 0},
                      &o->opt))
CALL(optimizer_sgd__weight_decay_negative,
     dp_optimizer_sgd(f->lin,
                      &(dp_sgd_options){.struct_size = sizeof(dp_sgd_options),
                                        .lr = 0.01,
                                        .momentum = 0.0,
                                        .dampening = 0.0,
                                        .weight_decay = -1.0,
                                        .nesterov = 0},
                      &o->opt))
CALL(optimizer_sgd__momentum_negative,
     dp_optimizer_sgd(f->lin,
                      &(dp_sgd_options){.struct_size = sizeof(dp_sgd_options),
                                        .lr = 0.01,
                                        .momentum = -0.9,
                                        .dampening = 0.0,
                                        .weight_decay = 0.0,
                                        .nesterov = 0},
                      &o->opt))
CALL(optimizer_sgd__nesterov_without_momentum,
     dp_optimizer_sgd(f->lin,
                      &(dp_sgd_options){.struct_size = sizeof(dp_sgd_options),
                                        .lr = 0.01,
                                        .momentum = 0.0,
                                        .dampening = 0.0,
                                        .weight_decay = 0.0,
                                        .nesterov = 1},
                      &o->opt))
CALL(optimizer_sgd__lr_nan,
     dp_optimizer_sgd(f->lin,
                      &(dp_sgd_options){.struct_size = sizeof(dp_sgd_options),
                                        .lr = NAN,
                                        .momentum = 0.0,
                                        .dampening = 0.0,
                                        .weight_decay = 0.0,
                                        .nesterov = 0},
                      &o->opt))
CALL(optimizer_adam__m_null, dp_optimizer_adam(NULL, NULL, &o->opt))
CALL(optimizer_adam__m_is_an_optimizer, dp_optimizer_adam(AS_M(f->opt), NULL, &o->opt))
CALL(optimizer_adam__out_null, dp_optimizer_adam(f->lin, NULL, NULL))
CALL(optimizer_adam__struct_size_0, dp_optimizer_adam(f->lin,
                                                      &(dp_adam_options){.struct_size = 0,
                                                                         .lr = 1e-3,
                                                                         .beta1 = 0.9,
                                                                         .beta2 = 0.999,
                                                                         .eps = 1e-8,
                                                                         .weight_decay = 0.0},
                                                      &o->opt))
CALL(optimizer_adam__struct_size_ends_inside_a_member,
     dp_optimizer_adam(f->lin,
                       &(dp_adam_options){.struct_size = sizeof(dp_adam_options) - 1,
                                          .lr = 1e-3,
                                          .beta1 = 0.9,
                                          .beta2 = 0.999,
                                          .eps = 1e-8,
                                          .weight_decay = 0.0},
                       &o->opt))
CALL(optimizer_adam__lr_negative,
     dp_optimizer_adam(f->lin,
                       &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                          .lr = -0.1,
                                          .beta1 = 0.9,
                                          .beta2 = 0.999,
                                          .eps = 1e-8,
                                          .weight_decay = 0.0},
                       &o->opt))
CALL(optimizer_adam__weight_decay_negative,
     dp_optimizer_adam(f->lin,
                       &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                          .lr = 1e-3,
                                          .beta1 = 0.9,
                                          .beta2 = 0.999,
                                          .eps = 1e-8,
                                          .weight_decay = -1.0},
                       &o->opt))
CALL(optimizer_adam__beta1_1,
     dp_optimizer_adam(f->lin,
                       &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                          .lr = 1e-3,
                                          .beta1 = 1.0,
                                          .beta2 = 0.999,
                                          .eps = 1e-8,
                                          .weight_decay = 0.0},
                       &o->opt))
CALL(optimizer_adam__beta2_negative,
     dp_optimizer_adam(f->lin,
                       &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                          .lr = 1e-3,
                                          .beta1 = 0.9,
                                          .beta2 = -0.5,
                                          .eps = 1e-8,
                                          .weight_decay = 0.0},
                       &o->opt))
CALL(optimizer_adam__eps_0,
     dp_optimizer_adam(f->lin,
                       &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                          .lr = 1e-3,
                                          .beta1 = 0.9,
                                          .beta2 = 0.999,
                                          .eps = 0.0,
                                          .weight_decay = 0.0},
                       &o->opt))
CALL(optimizer_adamw__m_null, dp_optimizer_adamw(NULL, NULL, &o->opt))
CALL(optimizer_adamw__m_is_an_optimizer, dp_optimizer_adamw(AS_M(f->opt), NULL, &o->opt))
CALL(optimizer_adamw__out_null, dp_optimizer_adamw(f->lin, NULL, NULL))
CALL(optimizer_adamw__struct_size_0, dp_optimizer_adamw(f->lin,
                                                        &(dp_adam_options){.struct_size = 0,
                                                                           .lr = 1e-3,
                                                                           .beta1 = 0.9,
                                                                           .beta2 = 0.999,
                                                                           .eps = 1e-8,
                                                                           .weight_decay = 0.0},
                                                        &o->opt))
CALL(optimizer_adamw__struct_size_ends_inside_a_member,
     dp_optimizer_adamw(f->lin,
                        &(dp_adam_options){.struct_size = sizeof(dp_adam_options) - 1,
                                           .lr = 1e-3,
                                           .beta1 = 0.9,
                                           .beta2 = 0.999,
                                           .eps = 1e-8,
                                           .weight_decay = 0.0},
                        &o->opt))
CALL(optimizer_adamw__lr_negative,
     dp_optimizer_adamw(f->lin,
                        &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                           .lr = -0.1,
                                           .beta1 = 0.9,
                                           .beta2 = 0.999,
                                           .eps = 1e-8,
                                           .weight_decay = 0.0},
                        &o->opt))
CALL(optimizer_adamw__weight_decay_negative,
     dp_optimizer_adamw(f->lin,
                        &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                           .lr = 1e-3,
                                           .beta1 = 0.9,
                                           .beta2 = 0.999,
                                           .eps = 1e-8,
                                           .weight_decay = -1.0},
                        &o->opt))
CALL(optimizer_adamw__beta1_1,
     dp_optimizer_adamw(f->lin,
                        &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                           .lr = 1e-3,
                                           .beta1 = 1.0,
                                           .beta2 = 0.999,
                                           .eps = 1e-8,
                                           .weight_decay = 0.0},
                        &o->opt))
CALL(optimizer_adamw__beta2_negative,
     dp_optimizer_adamw(f->lin,
                        &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                           .lr = 1e-3,
                                           .beta1 = 0.9,
                                           .beta2 = -0.5,
                                           .eps = 1e-8,
                                           .weight_decay = 0.0},
                        &o->opt))
CALL(optimizer_adamw__eps_0,
     dp_optimizer_adamw(f->lin,
                        &(dp_adam_options){.struct_size = sizeof(dp_adam_options),
                                           .lr = 1e-3,
                                           .beta1 = 0.9,
                                           .beta2 = 0.999,
                                           .eps = 0.0,
                                           .weight_decay = 0.0},
                        &o->opt))
CALL(optimizer_step__opt_null, dp_optimizer_step(NULL))
CALL(optimizer_step__opt_is_a_module, dp_optimizer_step(AS_O(f->lin)))
CALL(optimizer_step__opt_is_a_data_parallel, dp_optimizer_step(AS_O(f->dpw)))
CALL(optimizer_zero_grad__opt_null, dp_optimizer_zero_grad(NULL))
CALL(optimizer_zero_grad__opt_is_a_module, dp_optimizer_zero_grad(AS_O(f->lin)))
CALL(optimizer_zero_grad__opt_is_a_data_parallel, dp_optimizer_zero_grad(AS_O(f->dpw)))
CALL(optimizer_set_lr__opt_null, dp_optimizer_set_lr(NULL, 0.5))
CALL(optimizer_set_lr__opt_is_a_module, dp_optimizer_set_lr(AS_O(f->lin), 0.5))
CALL(optimizer_set_lr__opt_is_a_data_parallel, dp_optimizer_set_lr(AS_O(f->dpw), 0.5))
CALL(optimizer_set_lr__negative, dp_optimizer_set_lr(f->opt, -1.0))
CALL(optimizer_set_lr__nan, dp_optimizer_set_lr(f->opt, NAN))
CALL(optimizer_set_lr__infinite, dp_optimizer_set_lr(f->opt, INFINITY))
CALL(optimizer_lr__opt_null, dp_optimizer_lr(NULL, &o->dv))
CALL(optimizer_lr__opt_is_a_module, dp_optimizer_lr(AS_O(f->lin), &o->dv))
CALL(optimizer_lr__opt_is_a_data_parallel, dp_optimizer_lr(AS_O(f->dpw), &o->dv))
CALL(optimizer_lr__out_null, dp_optimizer_lr(f->opt, NULL))
CALL(checkpoint_save__m_null, dp_checkpoint_save(NULL, NULL, f->scratch_path, NULL, 0))
CALL(checkpoint_save__m_is_a_tensor, dp_checkpoint_save(AS_M(f->x), NULL, f->scratch_path, NULL, 0))
CALL(checkpoint_save__opt_is_a_module,
     dp_checkpoint_save(f->lin, AS_O(f->lin), f->scratch_path, NULL, 0))
CALL(checkpoint_save__path_null, dp_checkpoint_save(f->lin, f->opt, NULL, NULL, 0))
CALL(checkpoint_save__metadata_null_with_count,
     dp_checkpoint_save(f->lin, f->opt, f->scratch_path, NULL, 2))
CALL(checkpoint_save__metadata_key_null,
     dp_checkpoint_save(f->lin, f->opt, f->scratch_path,
                        (const dp_metadata_entry[]){{"k", "v"}, {NULL, "v"}}, 2))
CALL(checkpoint_save__metadata_value_null,
     dp_checkpoint_save(f->lin, f->opt, f->scratch_path, (const dp_metadata_entry[]){{"k", NULL}},
                        1))
CALL(checkpoint_save__path_in_a_missing_folder,
     dp_checkpoint_save(f->lin, f->opt, kMissingPath, (const dp_metadata_entry[]){{"k", "v"}}, 1))
CALL(checkpoint_load__m_null, dp_checkpoint_load(NULL, NULL, f->path))
CALL(checkpoint_load__m_is_an_optimizer, dp_checkpoint_load(AS_M(f->opt), NULL, f->path))
CALL(checkpoint_load__opt_is_a_tensor, dp_checkpoint_load(f->lin, AS_O(f->x), f->path))
CALL(checkpoint_load__path_null, dp_checkpoint_load(f->lin, NULL, NULL))
CALL(checkpoint_load__missing_file, dp_checkpoint_load(f->lin, f->opt, kMissingPath))
CALL(checkpoint_metadata__path_null,
     dp_checkpoint_metadata(NULL, "epoch", o->buf, sizeof o->buf, &o->z))
CALL(checkpoint_metadata__key_null,
     dp_checkpoint_metadata(f->path, NULL, o->buf, sizeof o->buf, &o->z))
CALL(checkpoint_metadata__buf_null_with_size,
     dp_checkpoint_metadata(f->path, "epoch", NULL, 8, &o->z))
CALL(checkpoint_metadata__absent_key,
     dp_checkpoint_metadata(f->path, "nope", o->buf, sizeof o->buf, &o->z))
CALL(checkpoint_metadata__missing_file,
     dp_checkpoint_metadata(kMissingPath, "epoch", o->buf, sizeof o->buf, &o->z))
CALL(data_parallel_create__module_null,
     dp_data_parallel_create(NULL, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, NULL, &o->dp))
CALL(data_parallel_create__module_is_a_tensor,
     dp_data_parallel_create(AS_M(f->x), (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, NULL,
                             &o->dp))
CALL(data_parallel_create__out_null,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, NULL, NULL))
CALL(data_parallel_create__device_ids_null_with_count,
     dp_data_parallel_create(f->lin3, NULL, 2, NULL, 0, NULL, &o->dp))
CALL(data_parallel_create__device_ids_empty,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 0, NULL, 0, NULL,
                             &o->dp))
CALL(data_parallel_create__device_id_cpu_2,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(2)}, 2, NULL, 0, NULL,
                             &o->dp))
CALL(data_parallel_create__device_id_negative,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(-1)}, 1, NULL, 0, NULL, &o->dp))
CALL(data_parallel_create__device_id_type_5,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), BADTYPE}, 2, NULL, 0, NULL,
                             &o->dp))
CALL(data_parallel_create__device_id_cuda_without_cuda,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CUDA(0)}, 1, NULL, 0, NULL, &o->dp))
CALL(data_parallel_create__device_id_repeated,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(1), CPU(1)}, 2, NULL, 0, NULL,
                             &o->dp))
/* Mixed types are a malformed list on any machine, with or without a CUDA device 0. */
CALL(data_parallel_create__device_ids_mixed_types,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CUDA(0)}, 2, NULL, 0, NULL,
                             &o->dp))
CALL(data_parallel_create__output_device_cpu_2,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2,
                             &(dp_device){DP_DEVICE_CPU, 2}, 0, NULL, &o->dp))
CALL(data_parallel_create__output_device_type_5,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2,
                             &(dp_device){(dp_device_type)5, 0}, 0, NULL, &o->dp))
CALL(data_parallel_create__struct_size_0,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
                             &(dp_data_parallel_options){.struct_size = 0, .alias_cpu = 1}, &o->dp))
CALL(data_parallel_create__struct_size_ends_inside_a_member,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
                             &(dp_data_parallel_options){
                                 .struct_size = sizeof(dp_data_parallel_options) - 1,
                                 .alias_cpu = 1},
                             &o->dp))
CALL(data_parallel_create__chunk_sizes_null_with_count,
     dp_data_parallel_create(
         f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
         &(dp_data_parallel_options){
             .struct_size = sizeof(dp_data_parallel_options), .alias_cpu = 1, .n_chunk_sizes = 2},
         &o->dp))
CALL(data_parallel_create__chunk_sizes_count,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
                             &(dp_data_parallel_options){
                                 .struct_size = sizeof(dp_data_parallel_options),
                                 .alias_cpu = 1,
                                 .chunk_sizes = (const int64_t[]){1, 1, 1},
                                 .n_chunk_sizes = 3},
                             &o->dp))
CALL(data_parallel_create__chunk_size_negative,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
                             &(dp_data_parallel_options){
                                 .struct_size = sizeof(dp_data_parallel_options),
                                 .alias_cpu = 1,
                                 .chunk_sizes = (const int64_t[]){3, -1},
                                 .n_chunk_sizes = 2},
                             &o->dp))
CALL(data_parallel_create__buffer_sync_3,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
                             &(dp_data_parallel_options){
                                 .struct_size = sizeof(dp_data_parallel_options),
                                 .alias_cpu = 1,
                                 .buffer_sync = (dp_buffer_sync)3},
                             &o->dp))
CALL(data_parallel_create__buffer_sync_negative,
     dp_data_parallel_create(f->lin3, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
                             &(dp_data_parallel_options){
                                 .struct_size = sizeof(dp_data_parallel_options),
                                 .alias_cpu = 1,
                                 .buffer_sync = (dp_buffer_sync)-1},
                             &o->dp))
CALL(data_parallel_forward__dp_null,
     dp_data_parallel_forward(NULL, (dp_tensor* const[]){f->x}, NULL, 1, o->ts, 4, &o->z))
CALL(data_parallel_forward__dp_is_a_module,
     dp_data_parallel_forward(AS_W(f->lin), (dp_tensor* const[]){f->x}, NULL, 1, o->ts, 4, &o->z))
CALL(data_parallel_forward__n_outputs_null,
     dp_data_parallel_forward(f->dpw, (dp_tensor* const[]){f->x}, NULL, 1, o->ts, 4, NULL))
CALL(data_parallel_forward__inputs_null_with_count,
     dp_data_parallel_forward(f->dpw, NULL, NULL, 1, o->ts, 4, &o->z))
CALL(data_parallel_forward__inputs_0_null,
     dp_data_parallel_forward(f->dpw, (dp_tensor* const[]){NULL}, NULL, 1, o->ts, 4, &o->z))
CALL(data_parallel_forward__inputs_0_is_a_module,
     dp_data_parallel_forward(f->dpw, (dp_tensor* const[]){AS_T(f->lin)}, NULL, 1, o->ts, 4, &o->z))
CALL(data_parallel_forward__outputs_null,
     dp_data_parallel_forward(f->dpw, (dp_tensor* const[]){f->x}, NULL, 1, NULL, 4, &o->z))
CALL(data_parallel_forward__capacity_0,
     dp_data_parallel_forward(f->dpw, (dp_tensor* const[]){f->x}, NULL, 1, o->ts, 0, &o->z))
CALL(data_parallel_forward__scalar_input,
     dp_data_parallel_forward(f->dpw, (dp_tensor* const[]){f->s}, NULL, 1, o->ts, 4, &o->z))
CALL(data_parallel_forward__wrong_features,
     dp_data_parallel_forward(f->dpw, (dp_tensor* const[]){f->w32}, NULL, 1, o->ts, 4, &o->z))
CALL(data_parallel_module__dp_null, dp_data_parallel_module(NULL, &o->m))
CALL(data_parallel_module__dp_is_a_module, dp_data_parallel_module(AS_W(f->lin), &o->m))
CALL(data_parallel_module__dp_is_a_tensor, dp_data_parallel_module(AS_W(f->x), &o->m))
CALL(data_parallel_module__out_null, dp_data_parallel_module(f->dpw, NULL))
CALL(data_parallel_devices__dp_null, dp_data_parallel_devices(NULL, o->devs, 4, &o->z))
CALL(data_parallel_devices__dp_is_a_module,
     dp_data_parallel_devices(AS_W(f->lin), o->devs, 4, &o->z))
CALL(data_parallel_devices__dp_is_a_tensor, dp_data_parallel_devices(AS_W(f->x), o->devs, 4, &o->z))
CALL(data_parallel_devices__n_null, dp_data_parallel_devices(f->dpw, o->devs, 4, NULL))
CALL(data_parallel_devices__devices_null_with_capacity,
     dp_data_parallel_devices(f->dpw, NULL, 4, &o->z))
CALL(data_parallel_save__dp_null, dp_data_parallel_save(NULL, f->scratch_path))
CALL(data_parallel_save__dp_is_a_module, dp_data_parallel_save(AS_W(f->lin), f->scratch_path))
CALL(data_parallel_save__dp_is_a_tensor, dp_data_parallel_save(AS_W(f->x), f->scratch_path))
CALL(data_parallel_save__path_null, dp_data_parallel_save(f->dpw, NULL))
CALL(data_parallel_save__path_in_a_missing_folder, dp_data_parallel_save(f->dpw, kMissingPath))
CALL(data_parallel_load__dp_null, dp_data_parallel_load(NULL, f->path))
CALL(data_parallel_load__dp_is_a_module, dp_data_parallel_load(AS_W(f->lin), f->path))
CALL(data_parallel_load__dp_is_a_tensor, dp_data_parallel_load(AS_W(f->x), f->path))
CALL(data_parallel_load__path_null, dp_data_parallel_load(f->dpw, NULL))
CALL(data_parallel_load__missing_file, dp_data_parallel_load(f->dpw, kMissingPath))
CALL(data_parallel_stats__dp_null, dp_data_parallel_stats(NULL, &o->pt, &o->pt2, &o->u64))
CALL(data_parallel_stats__dp_is_a_module,
     dp_data_parallel_stats(AS_W(f->lin), &o->pt, &o->pt2, &o->u64))
CALL(data_parallel_stats__dp_is_a_tensor,
     dp_data_parallel_stats(AS_W(f->x), &o->pt, &o->pt2, &o->u64))
CALL(data_parallel_reset_stats__dp_null, dp_data_parallel_reset_stats(NULL))
CALL(data_parallel_reset_stats__dp_is_a_module, dp_data_parallel_reset_stats(AS_W(f->lin)))
CALL(data_parallel_reset_stats__dp_is_a_tensor, dp_data_parallel_reset_stats(AS_W(f->x)))
CALL(scatter__input_null,
     dp_scatter(NULL, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, &o->z))
CALL(scatter__input_is_a_module,
     dp_scatter(AS_T(f->lin), (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, &o->z))
CALL(scatter__outs_null,
     dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, NULL, &o->z))
CALL(scatter__n_out_null,
     dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, NULL))
CALL(scatter__devices_null_with_count, dp_scatter(f->x, NULL, 2, NULL, 0, o->ts, &o->z))
CALL(scatter__no_devices_with_chunk_sizes,
     dp_scatter(f->x, (const dp_device[]){CPU(0)}, 0, (const int64_t[]){2}, 0, o->ts, &o->z))
CALL(scatter__no_devices,
     dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(1)}, 0, NULL, 0, o->ts, &o->z))
CALL(scatter__device_cpu_2,
     dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(2)}, 2, NULL, 0, o->ts, &o->z))
CALL(scatter__device_type_5,
     dp_scatter(f->x, (const dp_device[]){BADTYPE}, 1, NULL, 0, o->ts, &o->z))
CALL(scatter__chunk_size_negative, dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(1)}, 2,
                                              (const int64_t[]){3, -1}, 0, o->ts, &o->z))
CALL(scatter__chunk_sizes_do_not_sum, dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(1)}, 2,
                                                 (const int64_t[]){1, 2}, 0, o->ts, &o->z))
CALL(scatter__dim_2,
     dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 2, o->ts, &o->z))
CALL(scatter__scalar_input,
     dp_scatter(f->s, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, &o->z))
CALL(gather__tensors_null, dp_gather(NULL, 2, CPU(0), 0, &o->t))
CALL(gather__n_0, dp_gather((dp_tensor* const[]){f->x, f->x1}, 0, CPU(0), 0, &o->t))
CALL(gather__tensors_1_null, dp_gather((dp_tensor* const[]){f->x, NULL}, 2, CPU(0), 0, &o->t))
CALL(gather__tensors_0_is_a_module,
     dp_gather((dp_tensor* const[]){AS_T(f->lin), f->x}, 2, CPU(0), 0, &o->t))
CALL(gather__out_null, dp_gather((dp_tensor* const[]){f->x, f->x1}, 2, CPU(0), 0, NULL))
CALL(gather__output_device_cpu_2, dp_gather((dp_tensor* const[]){f->x, f->x1}, 2, CPU(2), 0, &o->t))
CALL(gather__output_device_type_5,
     dp_gather((dp_tensor* const[]){f->x, f->x1}, 2, BADTYPE, 0, &o->t))
CALL(gather__dim_2, dp_gather((dp_tensor* const[]){f->x, f->x1}, 2, CPU(0), 2, &o->t))
CALL(gather__shapes_differ, dp_gather((dp_tensor* const[]){f->x, f->w32}, 2, CPU(0), 0, &o->t))
CALL(gather__float32_with_float64, dp_gather((dp_tensor* const[]){f->x, f->d}, 2, CPU(0), 0, &o->t))
CALL(replicate__module_null, dp_replicate(NULL, (const dp_device[]){CPU(0), CPU(1)}, 2, o->ms))
CALL(replicate__module_is_a_tensor,
     dp_replicate(AS_M(f->x), (const dp_device[]){CPU(0), CPU(1)}, 2, o->ms))
CALL(replicate__replicas_null, dp_replicate(f->lin, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL))
CALL(replicate__devices_null_with_count, dp_replicate(f->lin, NULL, 2, o->ms))
CALL(replicate__no_devices, dp_replicate(f->lin, (const dp_device[]){CPU(0), CPU(1)}, 0, o->ms))
CALL(replicate__device_cpu_2, dp_replicate(f->lin, (const dp_device[]){CPU(0), CPU(2)}, 2, o->ms))
CALL(replicate__device_type_5, dp_replicate(f->lin, (const dp_device[]){CPU(0), BADTYPE}, 2, o->ms))
CALL(replicate__module_not_on_devices_0,
     dp_replicate(f->lin, (const dp_device[]){CPU(1), CPU(0)}, 2, o->ms))
CALL(parallel_apply__replicas_null,
     dp_parallel_apply(NULL, 1, (dp_tensor* const[]){f->x}, 1, (const dp_device[]){CPU(0)}, o->ts))
CALL(parallel_apply__n_0,
     dp_parallel_apply((dp_module* const[]){f->lin}, 0, (dp_tensor* const[]){f->x}, 1,
                       (const dp_device[]){CPU(0)}, o->ts))
CALL(parallel_apply__replicas_0_null,
     dp_parallel_apply((dp_module* const[]){NULL}, 1, (dp_tensor* const[]){f->x}, 1,
                       (const dp_device[]){CPU(0)}, o->ts))
CALL(parallel_apply__replicas_0_is_a_tensor,
     dp_parallel_apply((dp_module* const[]){AS_M(f->x)}, 1, (dp_tensor* const[]){f->x}, 1,
                       (const dp_device[]){CPU(0)}, o->ts))
CALL(parallel_apply__outputs_null,
     dp_parallel_apply((dp_module* const[]){f->lin}, 1, (dp_tensor* const[]){f->x}, 1,
                       (const dp_device[]){CPU(0)}, NULL))
CALL(parallel_apply__inputs_null_with_count,
     dp_parallel_apply((dp_module* const[]){f->lin}, 1, NULL, 1, (const dp_device[]){CPU(0)},
                       o->ts))
CALL(parallel_apply__inputs_0_null,
     dp_parallel_apply((dp_module* const[]){f->lin}, 1, (dp_tensor* const[]){NULL}, 1,
                       (const dp_device[]){CPU(0)}, o->ts))
CALL(parallel_apply__devices_null,
     dp_parallel_apply((dp_module* const[]){f->lin}, 1, (dp_tensor* const[]){f->x}, 1, NULL, o->ts))
CALL(parallel_apply__device_cpu_2,
     dp_parallel_apply((dp_module* const[]){f->lin}, 1, (dp_tensor* const[]){f->x}, 1,
                       (const dp_device[]){CPU(2)}, o->ts))
CALL(parallel_apply__device_type_5,
     dp_parallel_apply((dp_module* const[]){f->lin}, 1, (dp_tensor* const[]){f->x}, 1,
                       (const dp_device[]){BADTYPE}, o->ts))
CALL(parallel_apply__input_count_overflows,
     dp_parallel_apply((dp_module* const[]){f->lin, f->lin}, 2, (dp_tensor* const[]){f->x},
                       (SIZE_MAX / 2 + 1), (const dp_device[]){CPU(0), CPU(0)}, o->ts))
CALL(data_parallel_apply__module_null,
     dp_data_parallel_apply(NULL, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, 4, &o->z))
CALL(data_parallel_apply__module_is_an_optimizer,
     dp_data_parallel_apply(AS_M(f->opt), (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, 4, &o->z))
CALL(data_parallel_apply__n_outputs_null,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, 4, NULL))
CALL(data_parallel_apply__inputs_null_with_count,
     dp_data_parallel_apply(f->lin, NULL, NULL, 1, (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0,
                            o->ts, 4, &o->z))
CALL(data_parallel_apply__inputs_0_is_a_context,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){AS_T(f->ctx)}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, 4, &o->z))
CALL(data_parallel_apply__device_ids_null_with_count,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1, NULL, 2, NULL, 0, o->ts, 4,
                            &o->z))
CALL(data_parallel_apply__device_ids_empty,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 0, NULL, 0, o->ts, 4, &o->z))
CALL(data_parallel_apply__device_id_cpu_2,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(2)}, 2, NULL, 0, o->ts, 4, &o->z))
CALL(data_parallel_apply__device_id_repeated,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(0)}, 2, NULL, 0, o->ts, 4, &o->z))
CALL(data_parallel_apply__output_device_cpu_2,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, &(dp_device){DP_DEVICE_CPU, 2},
                            0, o->ts, 4, &o->z))
CALL(data_parallel_apply__dim_5,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 5, o->ts, 4, &o->z))
CALL(data_parallel_apply__outputs_null,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, NULL, 4, &o->z))
CALL(data_parallel_apply__capacity_0,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, 0, &o->z))
CALL(data_parallel_apply__module_not_on_device_ids_0,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x}, NULL, 1,
                            (const dp_device[]){CPU(1), CPU(0)}, 2, NULL, 0, o->ts, 4, &o->z))
CALL(data_parallel_apply__scalar_input_not_broadcast,
     dp_data_parallel_apply(f->lin, (dp_tensor* const[]){f->x, f->s}, (const int[]){0, 0}, 2,
                            (const dp_device[]){CPU(0), CPU(1)}, 2, NULL, 0, o->ts, 4, &o->z))
CALL(tensor_from_dlpack__ndim_9, dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_NDIM_9], &o->t))
CALL(tensor_from_dlpack__ndim_negative,
     dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_NDIM_NEGATIVE], &o->t))
CALL(tensor_from_dlpack__shape_null, dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_SHAPE_NULL], &o->t))
CALL(tensor_from_dlpack__shape_negative,
     dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_SHAPE_NEGATIVE], &o->t))
CALL(tensor_from_dlpack__float16, dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_FLOAT16], &o->t))
CALL(tensor_from_dlpack__lanes_4, dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_LANES_4], &o->t))
CALL(tensor_from_dlpack__device_type_8,
     dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_DEVICE_TYPE_8], &o->t))
CALL(tensor_from_dlpack__strided, dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_STRIDED], &o->t))
CALL(tensor_from_dlpack__data_null, dp_tensor_from_dlpack(f->ctx, &f->dlv[DLV_DATA_NULL], &o->t))
CALL(op_max_pool2d__padding_2_pow_30, dp_op_max_pool2d(f->img, 2, 2, 2, 2, 1 << 30, 0, &o->t))
CALL(op_avg_pool2d__padding_2_pow_30, dp_op_avg_pool2d(f->img, 2, 2, 2, 2, 1 << 30, 0, &o->t))
CALL(op_flatten__scalar_with_start_dim_5, dp_op_flatten(f->s, 5, 7, &o->t))
CALL(module_linear__weight_past_2_63_elements,
     dp_module_linear(f->ctx, 1LL << 40, 1LL << 40, 1, CPU(0), &o->m))
CALL(module_linear__weight_past_size_max_bytes,
     dp_module_linear(f->ctx, 1LL << 31, 1LL << 31, 1, CPU(0), &o->m))
CALL(module_embedding__weight_past_2_63_elements,
     dp_module_embedding(f->ctx, 1LL << 40, 1LL << 40, CPU(0), &o->m))
CALL(tensor_full__nan_into_int64, dp_tensor_full(f->ctx, DP_INT64, S23, 2, NAN, CPU(0), &o->t))
CALL(scatter__chunk_sizes_sum_overflows_to_the_batch,
     dp_scatter(f->x, (const dp_device[]){CPU(0), CPU(1), CPU(0)}, 3,
                (const int64_t[]){INT64_MAX, INT64_MAX, 4}, 0, o->ts, &o->z))

/* ---------------------------------------------------------------------------------- */
/* The table                                                                         */
/* ---------------------------------------------------------------------------------- */

typedef struct row {
  const char* name;
  row_call call;
  dp_result code;     /* the result the call must return */
  const char* needle; /* dp_last_error() must contain it: the argument and its value */
} row;

#define ROW(id, code, needle) \
  { #id, id, code, needle }

static const row kRows[] = {
    ROW(context_create__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(context_create__struct_size_0, DP_ERR_INVALID_ARGUMENT, "options->struct_size = 0"),
    ROW(context_create__struct_size_8, DP_ERR_INVALID_ARGUMENT, "options->struct_size = 8"),
    ROW(context_create__struct_size_ends_inside_a_member, DP_ERR_INVALID_ARGUMENT,
        "options->struct_size = "),
    ROW(context_create__cpu_devices_negative, DP_ERR_INVALID_ARGUMENT, "cpu_devices = -1"),
    ROW(context_create__log_level_7, DP_ERR_INVALID_ARGUMENT, "options->log_level = 7"),
    ROW(context_create__log_level_negative, DP_ERR_INVALID_ARGUMENT, "options->log_level = -1"),
    ROW(context_create__env_not_a_number, DP_ERR_INVALID_ARGUMENT, "DP_CPU_DEVICES = \"abc\""),
    ROW(context_create__env_zero, DP_ERR_INVALID_ARGUMENT, "DP_CPU_DEVICES = \"0\""),
    ROW(device_count__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(device_count__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(device_count__type_5, DP_ERR_INVALID_ARGUMENT, "type = 5"),
    ROW(device_count__type_negative, DP_ERR_INVALID_ARGUMENT, "type = -1"),
    ROW(device_count__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(device_name__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(device_name__ctx_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(device_name__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(device_name__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(device_name__cuda_0_without_cuda, DP_ERR_OUT_OF_RANGE,
        "device = cuda:0 but only 0 CUDA devices exist"),
    ROW(device_name__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(device_name__buf_null_with_size, DP_ERR_INVALID_ARGUMENT, "buf is NULL but buf_size = 8"),
    ROW(device_memory__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(device_memory__ctx_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(device_memory__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(device_memory__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(device_memory__cuda_0_without_cuda, DP_ERR_OUT_OF_RANGE,
        "device = cuda:0 but only 0 CUDA devices exist"),
    ROW(device_memory__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(device_synchronize__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(device_synchronize__ctx_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(device_synchronize__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(device_synchronize__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(device_synchronize__cuda_0_without_cuda, DP_ERR_OUT_OF_RANGE,
        "device = cuda:0 but only 0 CUDA devices exist"),
    ROW(device_synchronize__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(tensor_zeros__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(tensor_zeros__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(tensor_zeros__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_zeros__shape_null_ndim_2, DP_ERR_INVALID_ARGUMENT, "shape is NULL but ndim = 2"),
    ROW(tensor_zeros__shape_negative, DP_ERR_INVALID_ARGUMENT, "shape[1] = -3 is negative"),
    ROW(tensor_zeros__shape_past_2_63, DP_ERR_OUT_OF_RANGE,
        "shape [4294967296, 4294967296, 4] has more elements than fit in 64 bits"),
    ROW(tensor_zeros__shape_int64_max_by_2, DP_ERR_OUT_OF_RANGE, "shape [9223372036854775807, 2]"),
    ROW(tensor_zeros__ndim_9, DP_ERR_OUT_OF_RANGE, "ndim = 9"),
    ROW(tensor_zeros__dtype_9, DP_ERR_INVALID_ARGUMENT, "dtype = 9"),
    ROW(tensor_zeros__dtype_negative, DP_ERR_INVALID_ARGUMENT, "dtype = -1"),
    ROW(tensor_zeros__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(tensor_zeros__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(tensor_zeros__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(tensor_empty__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(tensor_empty__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(tensor_empty__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_empty__shape_null_ndim_2, DP_ERR_INVALID_ARGUMENT, "shape is NULL but ndim = 2"),
    ROW(tensor_empty__shape_negative, DP_ERR_INVALID_ARGUMENT, "shape[1] = -3 is negative"),
    ROW(tensor_empty__shape_past_2_63, DP_ERR_OUT_OF_RANGE,
        "shape [4294967296, 4294967296, 4] has more elements than fit in 64 bits"),
    ROW(tensor_empty__shape_int64_max_by_2, DP_ERR_OUT_OF_RANGE, "shape [9223372036854775807, 2]"),
    ROW(tensor_empty__ndim_9, DP_ERR_OUT_OF_RANGE, "ndim = 9"),
    ROW(tensor_empty__dtype_9, DP_ERR_INVALID_ARGUMENT, "dtype = 9"),
    ROW(tensor_empty__dtype_negative, DP_ERR_INVALID_ARGUMENT, "dtype = -1"),
    ROW(tensor_empty__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(tensor_empty__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(tensor_empty__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(tensor_full__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(tensor_full__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(tensor_full__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_full__shape_null_ndim_2, DP_ERR_INVALID_ARGUMENT, "shape is NULL but ndim = 2"),
    ROW(tensor_full__shape_negative, DP_ERR_INVALID_ARGUMENT, "shape[1] = -3 is negative"),
    ROW(tensor_full__shape_past_2_63, DP_ERR_OUT_OF_RANGE,
        "shape [4294967296, 4294967296, 4] has more elements than fit in 64 bits"),
    ROW(tensor_full__shape_int64_max_by_2, DP_ERR_OUT_OF_RANGE, "shape [9223372036854775807, 2]"),
    ROW(tensor_full__ndim_9, DP_ERR_OUT_OF_RANGE, "ndim = 9"),
    ROW(tensor_full__dtype_9, DP_ERR_INVALID_ARGUMENT, "dtype = 9"),
    ROW(tensor_full__dtype_negative, DP_ERR_INVALID_ARGUMENT, "dtype = -1"),
    ROW(tensor_full__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(tensor_full__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(tensor_full__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(tensor_from_data__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(tensor_from_data__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(tensor_from_data__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_from_data__shape_null_ndim_2, DP_ERR_INVALID_ARGUMENT, "shape is NULL but ndim = 2"),
    ROW(tensor_from_data__shape_negative, DP_ERR_INVALID_ARGUMENT, "shape[1] = -3 is negative"),
    ROW(tensor_from_data__shape_past_2_63, DP_ERR_OUT_OF_RANGE,
        "shape [4294967296, 4294967296, 4] has more elements than fit in 64 bits"),
    ROW(tensor_from_data__shape_int64_max_by_2, DP_ERR_OUT_OF_RANGE,
        "shape [9223372036854775807, 2]"),
    ROW(tensor_from_data__ndim_9, DP_ERR_OUT_OF_RANGE, "ndim = 9"),
    ROW(tensor_from_data__dtype_9, DP_ERR_INVALID_ARGUMENT, "dtype = 9"),
    ROW(tensor_from_data__dtype_negative, DP_ERR_INVALID_ARGUMENT, "dtype = -1"),
    ROW(tensor_from_data__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(tensor_from_data__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(tensor_from_data__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(tensor_zeros__bytes_past_size_max, DP_ERR_OUT_OF_RANGE,
        "shape [4611686018427387904] needs more bytes than fit in memory"),
    ROW(tensor_empty__bytes_past_size_max, DP_ERR_OUT_OF_RANGE,
        "shape [4611686018427387904] needs more bytes than fit in memory"),
    ROW(tensor_full__bytes_past_size_max, DP_ERR_OUT_OF_RANGE,
        "shape [4611686018427387904] needs more bytes than fit in memory"),
    ROW(tensor_from_data__data_null, DP_ERR_INVALID_ARGUMENT, "data is NULL"),
    ROW(tensor_from_data__nbytes_short, DP_ERR_INVALID_ARGUMENT,
        "nbytes = 20 but shape [2, 3] of float32 needs 24 bytes"),
    ROW(tensor_from_data__nbytes_0, DP_ERR_INVALID_ARGUMENT,
        "nbytes = 0 but shape [2, 3] of float32 needs 24 bytes"),
    ROW(tensor_from_data__bytes_wrap_to_0, DP_ERR_OUT_OF_RANGE, "shape [4611686018427387904]"),
    ROW(tensor_from_borrowed__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(tensor_from_borrowed__ctx_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(tensor_from_borrowed__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_from_borrowed__shape_null_ndim_2, DP_ERR_INVALID_ARGUMENT,
        "shape is NULL but ndim = 2"),
    ROW(tensor_from_borrowed__shape_negative, DP_ERR_INVALID_ARGUMENT, "shape[1] = -3 is negative"),
    ROW(tensor_from_borrowed__shape_past_2_63, DP_ERR_OUT_OF_RANGE,
        "more elements than fit in 64 bits"),
    ROW(tensor_from_borrowed__ndim_9, DP_ERR_OUT_OF_RANGE, "ndim = 9"),
    ROW(tensor_from_borrowed__dtype_9, DP_ERR_INVALID_ARGUMENT, "dtype = 9"),
    ROW(tensor_from_borrowed__data_null, DP_ERR_INVALID_ARGUMENT, "data is NULL"),
    ROW(tensor_from_borrowed__nbytes_wrong, DP_ERR_INVALID_ARGUMENT,
        "nbytes = 16 but shape [2, 3] of float32 needs 24 bytes"),
    ROW(tensor_from_borrowed__misaligned, DP_ERR_INVALID_ARGUMENT, "is not aligned to 4 bytes"),
    ROW(tensor_from_borrowed__cpu_index_2_of_2, DP_ERR_OUT_OF_RANGE,
        "cpu_index = cpu:2 but only 2 CPU devices exist"),
    ROW(tensor_from_borrowed__cpu_index_negative, DP_ERR_OUT_OF_RANGE, "cpu_index = cpu:-1"),
    /* Was a library bug: returns DP_OK: check_nbytes computes numel * dtype_size in size_t, and
       2^62 * 8 wraps to 0, so nbytes = 0 and data = NULL pass; the tensor claims 2^62 int64
       elements over no memory (dp_tensor_nbytes says 0) and dp_op_sum on such a tensor (float64
       [2^61]) segfaults. to_shape checks the element count with elem_size 1 instead of the dtype
       size */
    ROW(tensor_from_borrowed__bytes_wrap_to_0, DP_ERR_OUT_OF_RANGE, "shape [4611686018427387904]"),
    ROW(tensor_from_adopted__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(tensor_from_adopted__ctx_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(tensor_from_adopted__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_from_adopted__shape_null_ndim_2, DP_ERR_INVALID_ARGUMENT,
        "shape is NULL but ndim = 2"),
    ROW(tensor_from_adopted__shape_negative, DP_ERR_INVALID_ARGUMENT, "shape[1] = -3 is negative"),
    ROW(tensor_from_adopted__shape_past_2_63, DP_ERR_OUT_OF_RANGE,
        "more elements than fit in 64 bits"),
    ROW(tensor_from_adopted__ndim_9, DP_ERR_OUT_OF_RANGE, "ndim = 9"),
    ROW(tensor_from_adopted__dtype_9, DP_ERR_INVALID_ARGUMENT, "dtype = 9"),
    ROW(tensor_from_adopted__data_null, DP_ERR_INVALID_ARGUMENT, "data is NULL"),
    ROW(tensor_from_adopted__nbytes_wrong, DP_ERR_INVALID_ARGUMENT,
        "nbytes = 16 but shape [2, 3] of float32 needs 24 bytes"),
    ROW(tensor_from_adopted__misaligned, DP_ERR_INVALID_ARGUMENT, "is not aligned to 4 bytes"),
    ROW(tensor_from_adopted__cpu_index_2_of_2, DP_ERR_OUT_OF_RANGE,
        "cpu_index = cpu:2 but only 2 CPU devices exist"),
    ROW(tensor_from_adopted__cpu_index_negative, DP_ERR_OUT_OF_RANGE, "cpu_index = cpu:-1"),
    /* Was a library bug: returns DP_OK: check_nbytes computes numel * dtype_size in size_t, and
       2^62 * 8 wraps to 0, so nbytes = 0 and data = NULL pass; the tensor claims 2^62 int64
       elements over no memory (dp_tensor_nbytes says 0) and dp_op_sum on such a tensor (float64
       [2^61]) segfaults. to_shape checks the element count with elem_size 1 instead of the dtype
       size */
    ROW(tensor_from_adopted__bytes_wrap_to_0, DP_ERR_OUT_OF_RANGE, "shape [4611686018427387904]"),
    ROW(tensor_dtype__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_dtype__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_dtype__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_dtype__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_ndim__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_ndim__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_ndim__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_ndim__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_shape__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_shape__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_shape__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_shape__shape_null, DP_ERR_INVALID_ARGUMENT, "shape is NULL"),
    ROW(tensor_shape__capacity_1, DP_ERR_OUT_OF_RANGE,
        "capacity = 1 but the tensor has 2 dimensions"),
    ROW(tensor_shape__capacity_0_with_shape_null, DP_ERR_OUT_OF_RANGE, "capacity = 0"),
    ROW(tensor_dim__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_dim__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_dim__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_dim__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_dim__dim_2, DP_ERR_OUT_OF_RANGE, "dim = 2"),
    ROW(tensor_dim__dim_minus_3, DP_ERR_OUT_OF_RANGE, "dim = -3"),
    ROW(tensor_dim__of_a_scalar, DP_ERR_OUT_OF_RANGE, "dim = 0 but the tensor is 0-dimensional"),
    ROW(tensor_numel__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_numel__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_numel__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_numel__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_nbytes__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_nbytes__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_nbytes__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_nbytes__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_context__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_context__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_context__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_device__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_device__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_device__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_device__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_to_host__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_to_host__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_to_host__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_to_host__dst_null, DP_ERR_INVALID_ARGUMENT, "dst is NULL"),
    ROW(tensor_to_host__dst_bytes_short, DP_ERR_INVALID_ARGUMENT,
        "dst_bytes = 20 but the tensor holds 24 bytes"),
    ROW(tensor_to_host__dst_bytes_0, DP_ERR_INVALID_ARGUMENT,
        "dst_bytes = 0 but the tensor holds 24 bytes"),
    ROW(tensor_copy_from_host__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_copy_from_host__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_copy_from_host__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_copy_from_host__src_null, DP_ERR_INVALID_ARGUMENT, "src is NULL"),
    ROW(tensor_copy_from_host__src_bytes_long, DP_ERR_INVALID_ARGUMENT,
        "src_bytes = 28 but the tensor holds 24 bytes"),
    ROW(tensor_to_device__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_to_device__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_to_device__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_to_device__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_to_device__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(tensor_to_device__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(tensor_to_device__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(tensor_to_dtype__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_to_dtype__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_to_dtype__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_to_dtype__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_to_dtype__dtype_9, DP_ERR_INVALID_ARGUMENT, "dtype = 9"),
    ROW(tensor_to_dtype__dtype_negative, DP_ERR_INVALID_ARGUMENT, "dtype = -1"),
    ROW(tensor_data__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_data__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_data__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_data__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_version__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_version__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_version__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_version__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_to_dlpack__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_to_dlpack__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_to_dlpack__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    /* Was a library bug (unsafe): dp_tensor_to_dlpack evaluates *out_ptr(out, "out")
       = dp::to_dlpack(x): since C++17 the right side runs first, so the DLManagedTensor (and the
       reference it holds on the tensor and its context) is allocated before the NULL out is
       detected, and is leaked; the code and message are right, but LeakSanitizer fails the process
     */
    ROW(tensor_to_dlpack__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_from_dlpack__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(tensor_from_dlpack__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(tensor_from_dlpack__src_null, DP_ERR_INVALID_ARGUMENT, "src is NULL"),
    ROW(tensor_from_dlpack__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_set_requires_grad__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_set_requires_grad__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_set_requires_grad__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_set_requires_grad__int64, DP_ERR_DTYPE_MISMATCH,
        "only floating-point tensors can require gradients, not int64"),
    ROW(tensor_set_requires_grad__not_a_leaf, DP_ERR_STATE,
        "requires_grad can only be changed on leaf tensors"),
    ROW(tensor_requires_grad__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_requires_grad__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_requires_grad__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_requires_grad__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_grad__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_grad__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_grad__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_grad__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    /* Was a library bug (unsafe): dp_tensor_grad evaluates *out_ptr(out, "out") =
       wrap(g, t->ctx) right side first (C++17): when a gradient exists, a new handle (holding a
       context reference) is made before the NULL out is detected, and is leaked; the code and
       message are right, but LeakSanitizer fails the process */
    ROW(tensor_grad__out_null_with_a_gradient, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(tensor_zero_grad__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_zero_grad__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_zero_grad__t_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(tensor_detach__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(tensor_detach__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(tensor_detach__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    /* Was a library bug (unsafe): dp_tensor_detach evaluates *out_ptr(out, "out") =
       wrap(x.detach(), t->ctx): the right side runs first (C++17), so a new handle, holding a
       context reference, is allocated before the NULL out is detected, and is leaked; the code and
       message are right, but LeakSanitizer fails the process */
    ROW(tensor_detach__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(backward__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(backward__t_is_a_module, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(backward__t_is_a_context, DP_ERR_INVALID_ARGUMENT, "t is not a live dp_tensor handle"),
    ROW(backward__grad_is_a_module, DP_ERR_INVALID_ARGUMENT, "grad is not a live dp_tensor handle"),
    ROW(backward__not_requiring_grad, DP_ERR_STATE, "does not require grad"),
    ROW(backward__implicit_grad_of_6_elements, DP_ERR_INVALID_ARGUMENT,
        "tensor 0 has shape [2, 3]"),
    ROW(backward__grad_shape, DP_ERR_SHAPE_MISMATCH,
        "gradient 0 has shape [3] but its tensor has shape [2, 3]"),
    ROW(backward__grad_dtype, DP_ERR_DTYPE_MISMATCH,
        "gradient 0 is float64 but its tensor is float32"),
    ROW(op_neg__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_neg__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_neg__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_neg__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_neg__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_relu__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_relu__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_relu__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_relu__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_relu__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_gelu__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_gelu__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_gelu__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_gelu__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_gelu__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_tanh__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_tanh__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_tanh__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_tanh__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_tanh__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_sigmoid__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_sigmoid__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_sigmoid__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_sigmoid__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_sigmoid__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_exp__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_exp__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_exp__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_exp__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_exp__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_log__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_log__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_log__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_log__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_log__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_sum__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_sum__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_sum__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_sum__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_sum__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_mean__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_mean__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_mean__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_mean__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_mean__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_scale__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_scale__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_scale__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_scale__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_scale__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_add_scalar__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_add_scalar__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_add_scalar__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_add_scalar__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_add_scalar__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_sum_dim__x_null, DP_ERR_INVALID_ARGUMENT, "sum_dim: x is NULL"),
    ROW(op_sum_dim__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_sum_dim__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_sum_dim__out_null, DP_ERR_INVALID_ARGUMENT, "sum_dim: out is NULL"),
    ROW(op_sum_dim__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_mean_dim__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_mean_dim__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_mean_dim__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_mean_dim__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_mean_dim__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_argmax__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_argmax__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_argmax__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_argmax__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_argmax__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_softmax__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_softmax__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_softmax__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_softmax__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_softmax__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_log_softmax__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_log_softmax__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_log_softmax__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_log_softmax__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_log_softmax__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_flatten__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_flatten__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_flatten__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_flatten__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_dropout__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_dropout__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_dropout__x_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "x is not a live dp_tensor handle"),
    ROW(op_dropout__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_dropout__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_sum_dim__dim_2, DP_ERR_OUT_OF_RANGE,
        "sum: dim = 2 is out of range for a tensor with 2 dimensions"),
    ROW(op_sum_dim__dim_minus_3, DP_ERR_OUT_OF_RANGE, "dim = -3"),
    ROW(op_mean_dim__dim_2, DP_ERR_OUT_OF_RANGE,
        "dim = 2 is out of range for a tensor with 2 dimensions"),
    ROW(op_mean_dim__dim_minus_3, DP_ERR_OUT_OF_RANGE, "dim = -3"),
    ROW(op_argmax__dim_2, DP_ERR_OUT_OF_RANGE,
        "argmax: dim = 2 is out of range for a tensor with 2 dimensions"),
    ROW(op_argmax__dim_minus_3, DP_ERR_OUT_OF_RANGE, "dim = -3"),
    ROW(op_softmax__dim_2, DP_ERR_OUT_OF_RANGE,
        "softmax: dim = 2 is out of range for a tensor with 2 dimensions"),
    ROW(op_softmax__dim_minus_3, DP_ERR_OUT_OF_RANGE, "dim = -3"),
    ROW(op_log_softmax__dim_2, DP_ERR_OUT_OF_RANGE,
        "dim = 2 is out of range for a tensor with 2 dimensions"),
    ROW(op_log_softmax__dim_minus_3, DP_ERR_OUT_OF_RANGE, "dim = -3"),
    ROW(op_argmax__empty_dim, DP_ERR_SHAPE_MISMATCH, "argmax"),
    ROW(op_flatten__start_dim_2, DP_ERR_OUT_OF_RANGE, "start_dim = 2"),
    ROW(op_flatten__end_dim_minus_3, DP_ERR_OUT_OF_RANGE, "end_dim = -3"),
    ROW(op_flatten__start_after_end, DP_ERR_INVALID_ARGUMENT,
        "start_dim = 1 comes after end_dim = 0"),
    ROW(op_dropout__p_negative, DP_ERR_INVALID_ARGUMENT, "p = -0.1 must be in [0, 1]"),
    ROW(op_dropout__p_1_5, DP_ERR_INVALID_ARGUMENT, "p = 1.5 must be in [0, 1]"),
    ROW(op_dropout__p_nan, DP_ERR_INVALID_ARGUMENT, "p = nan"),
    ROW(op_add__a_null, DP_ERR_INVALID_ARGUMENT, "add: a is NULL"),
    ROW(op_add__b_null, DP_ERR_INVALID_ARGUMENT, "add: b is NULL"),
    ROW(op_add__a_is_a_module, DP_ERR_INVALID_ARGUMENT, "a is not a live dp_tensor handle"),
    ROW(op_add__b_is_an_optimizer, DP_ERR_INVALID_ARGUMENT, "b is not a live dp_tensor handle"),
    ROW(op_add__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_add__float32_with_float64, DP_ERR_DTYPE_MISMATCH, "add: a is float32 but b is float64"),
    ROW(op_add__float32_with_int64, DP_ERR_DTYPE_MISMATCH, "add: a is float32 but b is int64"),
    ROW(op_add__cpu0_with_cpu1, DP_ERR_DEVICE_MISMATCH, "add: a is on cpu:0 but b is on cpu:1"),
    /* Was a library bug: the message is "shapes [2, 3] and [2] cannot be broadcast together
       (dimension 1: 3 vs 2)": it names neither the op nor the arguments a and b */
    ROW(op_add__shapes_do_not_broadcast, DP_ERR_SHAPE_MISMATCH,
        "add: a and b: shapes [2, 3] and [2]"),
    ROW(op_sub__a_null, DP_ERR_INVALID_ARGUMENT, "a is NULL"),
    ROW(op_sub__b_null, DP_ERR_INVALID_ARGUMENT, "b is NULL"),
    ROW(op_sub__a_is_a_module, DP_ERR_INVALID_ARGUMENT, "a is not a live dp_tensor handle"),
    ROW(op_sub__b_is_an_optimizer, DP_ERR_INVALID_ARGUMENT, "b is not a live dp_tensor handle"),
    ROW(op_sub__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_sub__float32_with_float64, DP_ERR_DTYPE_MISMATCH, "sub: a is float32 but b is float64"),
    ROW(op_sub__float32_with_int64, DP_ERR_DTYPE_MISMATCH, "sub: a is float32 but b is int64"),
    ROW(op_sub__cpu0_with_cpu1, DP_ERR_DEVICE_MISMATCH, "sub: a is on cpu:0 but b is on cpu:1"),
    /* Was a library bug: the message is "shapes [2, 3] and [2] cannot be broadcast together
       (dimension 1: 3 vs 2)": it names neither the op nor the arguments a and b */
    ROW(op_sub__shapes_do_not_broadcast, DP_ERR_SHAPE_MISMATCH,
        "sub: a and b: shapes [2, 3] and [2]"),
    ROW(op_mul__a_null, DP_ERR_INVALID_ARGUMENT, "a is NULL"),
    ROW(op_mul__b_null, DP_ERR_INVALID_ARGUMENT, "b is NULL"),
    ROW(op_mul__a_is_a_module, DP_ERR_INVALID_ARGUMENT, "a is not a live dp_tensor handle"),
    ROW(op_mul__b_is_an_optimizer, DP_ERR_INVALID_ARGUMENT, "b is not a live dp_tensor handle"),
    ROW(op_mul__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_mul__float32_with_float64, DP_ERR_DTYPE_MISMATCH, "mul: a is float32 but b is float64"),
    ROW(op_mul__float32_with_int64, DP_ERR_DTYPE_MISMATCH, "mul: a is float32 but b is int64"),
    ROW(op_mul__cpu0_with_cpu1, DP_ERR_DEVICE_MISMATCH, "mul: a is on cpu:0 but b is on cpu:1"),
    /* Was a library bug: the message is "shapes [2, 3] and [2] cannot be broadcast together
       (dimension 1: 3 vs 2)": it names neither the op nor the arguments a and b */
    ROW(op_mul__shapes_do_not_broadcast, DP_ERR_SHAPE_MISMATCH,
        "mul: a and b: shapes [2, 3] and [2]"),
    ROW(op_div__a_null, DP_ERR_INVALID_ARGUMENT, "a is NULL"),
    ROW(op_div__b_null, DP_ERR_INVALID_ARGUMENT, "b is NULL"),
    ROW(op_div__a_is_a_module, DP_ERR_INVALID_ARGUMENT, "a is not a live dp_tensor handle"),
    ROW(op_div__b_is_an_optimizer, DP_ERR_INVALID_ARGUMENT, "b is not a live dp_tensor handle"),
    ROW(op_div__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_div__float32_with_float64, DP_ERR_DTYPE_MISMATCH, "div: a is float32 but b is float64"),
    ROW(op_div__float32_with_int64, DP_ERR_DTYPE_MISMATCH, "div: a is float32 but b is int64"),
    ROW(op_div__cpu0_with_cpu1, DP_ERR_DEVICE_MISMATCH, "div: a is on cpu:0 but b is on cpu:1"),
    /* Was a library bug: the message is "shapes [2, 3] and [2] cannot be broadcast together
       (dimension 1: 3 vs 2)": it names neither the op nor the arguments a and b */
    ROW(op_div__shapes_do_not_broadcast, DP_ERR_SHAPE_MISMATCH,
        "div: a and b: shapes [2, 3] and [2]"),
    ROW(op_matmul__a_null, DP_ERR_INVALID_ARGUMENT, "a is NULL"),
    ROW(op_matmul__b_null, DP_ERR_INVALID_ARGUMENT, "b is NULL"),
    ROW(op_matmul__a_is_a_module, DP_ERR_INVALID_ARGUMENT, "a is not a live dp_tensor handle"),
    ROW(op_matmul__b_is_a_context, DP_ERR_INVALID_ARGUMENT, "b is not a live dp_tensor handle"),
    ROW(op_matmul__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_matmul__int64_a, DP_ERR_DTYPE_MISMATCH,
        "matmul: a must be float32, float64 or bfloat16, got int64"),
    ROW(op_matmul__float32_with_float64, DP_ERR_DTYPE_MISMATCH,
        "matmul: a is float32 but b is float64"),
    ROW(op_matmul__cpu0_with_cpu1, DP_ERR_DEVICE_MISMATCH,
        "matmul: a is on cpu:0 but b is on cpu:1"),
    ROW(op_matmul__inner_sizes_differ, DP_ERR_SHAPE_MISMATCH,
        "matmul: a [2, 3] and b [2, 3] do not chain"),
    ROW(op_matmul__1d, DP_ERR_SHAPE_MISMATCH,
        "matmul: a and b must be 2-D or 3-D, got [3] and [3]"),
    ROW(op_linear__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_linear__weight_null, DP_ERR_INVALID_ARGUMENT, "weight is NULL"),
    ROW(op_linear__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_linear__weight_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "weight is not a live dp_tensor handle"),
    ROW(op_linear__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_linear__bias_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "bias is not a live dp_tensor handle"),
    ROW(op_linear__int64_x, DP_ERR_DTYPE_MISMATCH,
        "linear: x must be float32, float64 or bfloat16, got int64"),
    ROW(op_linear__float64_weight, DP_ERR_DTYPE_MISMATCH,
        "linear: x is float32 but weight is float64"),
    ROW(op_linear__weight_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "linear: x is on cpu:0 but weight is on cpu:1"),
    ROW(op_linear__float64_bias, DP_ERR_DTYPE_MISMATCH, "linear: x is float32 but bias is float64"),
    ROW(op_linear__bias_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "linear: x is on cpu:0 but bias is on cpu:1"),
    ROW(op_linear__1d_weight, DP_ERR_SHAPE_MISMATCH,
        "linear: weight must have 2 dimensions, got shape [3]"),
    ROW(op_linear__in_features_differ, DP_ERR_SHAPE_MISMATCH,
        "linear: x has shape [2, 3] but weight [3, 2] expects 2 input features"),
    ROW(op_linear__bias_size, DP_ERR_SHAPE_MISMATCH,
        "linear: bias has shape [3] but weight has 2 output features"),
    ROW(op_conv2d__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_conv2d__weight_null, DP_ERR_INVALID_ARGUMENT, "weight is NULL"),
    ROW(op_conv2d__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_conv2d__weight_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "weight is not a live dp_tensor handle"),
    ROW(op_conv2d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_conv2d__bias_is_a_tensor_of_the_wrong_kind, DP_ERR_INVALID_ARGUMENT,
        "bias is not a live dp_tensor handle"),
    ROW(op_conv2d__int64_x, DP_ERR_DTYPE_MISMATCH,
        "conv2d: x must be float32, float64 or bfloat16, got int64"),
    ROW(op_conv2d__float64_weight, DP_ERR_DTYPE_MISMATCH,
        "conv2d: x is float32 but weight is float64"),
    ROW(op_conv2d__weight_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "conv2d: x is on cpu:0 but weight is on cpu:1"),
    ROW(op_conv2d__float64_bias, DP_ERR_DTYPE_MISMATCH, "conv2d: x is float32 but bias is float64"),
    ROW(op_conv2d__stride_0, DP_ERR_INVALID_ARGUMENT, "conv2d: stride = (0, 1) must be positive"),
    ROW(op_conv2d__stride_negative, DP_ERR_INVALID_ARGUMENT,
        "conv2d: stride = (1, -2) must be positive"),
    ROW(op_conv2d__padding_negative, DP_ERR_INVALID_ARGUMENT,
        "conv2d: padding = (-1, 0) must not be negative"),
    ROW(op_conv2d__padding_huge, DP_ERR_OUT_OF_RANGE,
        "conv2d: the output of padding (2147483647, 2147483647), of shape"),
    ROW(op_conv2d__2d_x, DP_ERR_SHAPE_MISMATCH,
        "conv2d: x must have 4 dimensions, got shape [2, 3]"),
    ROW(op_conv2d__channels_differ, DP_ERR_SHAPE_MISMATCH,
        "conv2d: x has 2 channels but weight [1, 1, 2, 2] expects 1"),
    ROW(op_conv2d__bias_size, DP_ERR_SHAPE_MISMATCH,
        "conv2d: bias has shape [3] but there are 1 output channels"),
    ROW(op_conv2d__kernel_larger_than_input, DP_ERR_SHAPE_MISMATCH,
        "conv2d: kernel 4x4 does not fit input [1, 1, 2, 2]"),
    ROW(op_max_pool2d__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_max_pool2d__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_max_pool2d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_max_pool2d__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_max_pool2d__2d_x, DP_ERR_SHAPE_MISMATCH, "x must have 4 dimensions, got shape [2, 3]"),
    ROW(op_max_pool2d__kernel_0, DP_ERR_INVALID_ARGUMENT, "kernel = (0, 2) must be positive"),
    ROW(op_max_pool2d__kernel_negative, DP_ERR_INVALID_ARGUMENT,
        "kernel = (2, -1) must be positive"),
    ROW(op_max_pool2d__stride_0, DP_ERR_INVALID_ARGUMENT, "stride = (0, 2) must be positive"),
    ROW(op_max_pool2d__padding_negative, DP_ERR_INVALID_ARGUMENT,
        "padding = (-1, 0) must be between 0 and half the kernel"),
    ROW(op_max_pool2d__padding_past_half_the_kernel, DP_ERR_INVALID_ARGUMENT,
        "padding = (0, 2) must be between 0 and half the kernel"),
    ROW(op_max_pool2d__kernel_larger_than_input, DP_ERR_SHAPE_MISMATCH,
        "kernel 5x5 does not fit input [1, 1, 4, 4]"),
    ROW(op_avg_pool2d__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_avg_pool2d__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_avg_pool2d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_avg_pool2d__int64_x, DP_ERR_DTYPE_MISMATCH,
        "x must be float32, float64 or bfloat16, got int64"),
    ROW(op_avg_pool2d__2d_x, DP_ERR_SHAPE_MISMATCH, "x must have 4 dimensions, got shape [2, 3]"),
    ROW(op_avg_pool2d__kernel_0, DP_ERR_INVALID_ARGUMENT, "kernel = (0, 2) must be positive"),
    ROW(op_avg_pool2d__kernel_negative, DP_ERR_INVALID_ARGUMENT,
        "kernel = (2, -1) must be positive"),
    ROW(op_avg_pool2d__stride_0, DP_ERR_INVALID_ARGUMENT, "stride = (0, 2) must be positive"),
    ROW(op_avg_pool2d__padding_negative, DP_ERR_INVALID_ARGUMENT,
        "padding = (-1, 0) must be between 0 and half the kernel"),
    ROW(op_avg_pool2d__padding_past_half_the_kernel, DP_ERR_INVALID_ARGUMENT,
        "padding = (0, 2) must be between 0 and half the kernel"),
    ROW(op_avg_pool2d__kernel_larger_than_input, DP_ERR_SHAPE_MISMATCH,
        "kernel 5x5 does not fit input [1, 1, 4, 4]"),
    ROW(op_batch_norm__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_batch_norm__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_batch_norm__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_batch_norm__weight_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "weight is not a live dp_tensor handle"),
    ROW(op_batch_norm__bias_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "bias is not a live dp_tensor handle"),
    ROW(op_batch_norm__running_mean_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "running_mean is not a live dp_tensor handle"),
    ROW(op_batch_norm__running_var_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "running_var is not a live dp_tensor handle"),
    ROW(op_batch_norm__int64_x, DP_ERR_DTYPE_MISMATCH,
        "batch_norm: x must be float32, float64 or bfloat16, got int64"),
    ROW(op_batch_norm__float64_weight, DP_ERR_DTYPE_MISMATCH,
        "batch_norm: x is float32 but weight is float64"),
    ROW(op_batch_norm__bias_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "batch_norm: x is on cpu:0 but bias is on cpu:1"),
    ROW(op_batch_norm__running_mean_size, DP_ERR_SHAPE_MISMATCH,
        "batch_norm: running_mean has shape [2] but x has 3 channels"),
    ROW(op_batch_norm__3d_x, DP_ERR_SHAPE_MISMATCH,
        "batch_norm: x must be [N, C] or [N, C, H, W], got [1, 4, 4]"),
    ROW(op_batch_norm__eps_0, DP_ERR_INVALID_ARGUMENT, "batch_norm: eps = 0 must be positive"),
    ROW(op_batch_norm__eps_negative, DP_ERR_INVALID_ARGUMENT,
        "batch_norm: eps = -1e-05 must be positive"),
    ROW(op_batch_norm__momentum_2, DP_ERR_INVALID_ARGUMENT,
        "batch_norm: momentum = 2 must be in [0, 1]"),
    ROW(op_batch_norm__momentum_negative, DP_ERR_INVALID_ARGUMENT,
        "batch_norm: momentum = -0.5 must be in [0, 1]"),
    ROW(op_batch_norm__eval_without_running_stats, DP_ERR_INVALID_ARGUMENT,
        "batch_norm: evaluation mode needs running_mean and running_var"),
    ROW(op_batch_norm__training_on_one_row, DP_ERR_SHAPE_MISMATCH,
        "batch_norm: training needs more than one value per channel, got input [1, 3]"),
    ROW(op_embedding__indices_null, DP_ERR_INVALID_ARGUMENT, "indices is NULL"),
    ROW(op_embedding__weight_null, DP_ERR_INVALID_ARGUMENT, "weight is NULL"),
    ROW(op_embedding__indices_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "indices is not a live dp_tensor handle"),
    ROW(op_embedding__weight_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "weight is not a live dp_tensor handle"),
    ROW(op_embedding__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_embedding__float_indices, DP_ERR_DTYPE_MISMATCH,
        "embedding: indices must be int64, got float32"),
    ROW(op_embedding__int64_weight, DP_ERR_DTYPE_MISMATCH,
        "embedding: weight must be float32, float64 or bfloat16, got int64"),
    ROW(op_embedding__1d_weight, DP_ERR_SHAPE_MISMATCH,
        "embedding: weight must have 2 dimensions, got shape [3]"),
    ROW(op_embedding__weight_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "embedding: indices are on cpu:0 but weight is on cpu:1"),
    ROW(op_embedding__index_past_the_rows, DP_ERR_OUT_OF_RANGE,
        "embedding index[0] = 5 is outside [0, 2)"),
    ROW(op_embedding__negative_index, DP_ERR_OUT_OF_RANGE,
        "embedding index[1] = -1 is outside [0, 2)"),
    ROW(op_cross_entropy__logits_null, DP_ERR_INVALID_ARGUMENT, "logits is NULL"),
    ROW(op_cross_entropy__target_null, DP_ERR_INVALID_ARGUMENT, "target is NULL"),
    ROW(op_cross_entropy__logits_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "logits is not a live dp_tensor handle"),
    ROW(op_cross_entropy__target_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "target is not a live dp_tensor handle"),
    ROW(op_cross_entropy__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_cross_entropy__int64_logits, DP_ERR_DTYPE_MISMATCH,
        "cross_entropy: logits must be float32, float64 or bfloat16, got int64"),
    ROW(op_cross_entropy__1d_logits, DP_ERR_SHAPE_MISMATCH,
        "cross_entropy: logits must have 2 dimensions, got shape [3]"),
    /* Was a library bug: the message says "nll_loss: target must be int64, got float32": it names
       nll_loss, an op the caller did not call */
    ROW(op_cross_entropy__float_target, DP_ERR_DTYPE_MISMATCH,
        "cross_entropy: target must be int64, got float32"),
    /* Was a library bug: the message says "nll_loss: input has 2 rows but target has 3 entries": it
       names nll_loss and "input" instead of cross_entropy and logits */
    ROW(op_cross_entropy__target_rows, DP_ERR_SHAPE_MISMATCH,
        "cross_entropy: logits has 2 rows but target has 3 entries"),
    /* Was a library bug: the message says "nll_loss: input is on cpu:0 but target is on cpu:1": it
       names nll_loss and "input" instead of cross_entropy and logits */
    ROW(op_cross_entropy__target_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "cross_entropy: logits is on cpu:0 but target is on cpu:1"),
    ROW(op_cross_entropy__target_past_the_classes, DP_ERR_OUT_OF_RANGE,
        "target[0] = 5 is not a class index in [0, 3)"),
    ROW(op_nll_loss__log_probs_null, DP_ERR_INVALID_ARGUMENT, "log_probs is NULL"),
    ROW(op_nll_loss__target_null, DP_ERR_INVALID_ARGUMENT, "target is NULL"),
    ROW(op_nll_loss__log_probs_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "log_probs is not a live dp_tensor handle"),
    ROW(op_nll_loss__target_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "target is not a live dp_tensor handle"),
    ROW(op_nll_loss__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    /* Was a library bug: the message says "nll_loss: input must be float32, float64 or bfloat16,
       got int64": the argument is log_probs, not input */
    ROW(op_nll_loss__int64_log_probs, DP_ERR_DTYPE_MISMATCH,
        "nll_loss: log_probs must be float32, float64 or bfloat16, got int64"),
    /* Was a library bug: the message says "nll_loss: input must have 2 dimensions, got shape [3]":
       the argument is log_probs, not input */
    ROW(op_nll_loss__1d_log_probs, DP_ERR_SHAPE_MISMATCH,
        "nll_loss: log_probs must have 2 dimensions, got shape [3]"),
    ROW(op_nll_loss__float_target, DP_ERR_DTYPE_MISMATCH,
        "nll_loss: target must be int64, got float32"),
    ROW(op_nll_loss__2d_target, DP_ERR_SHAPE_MISMATCH,
        "nll_loss: target must have 1 dimensions, got shape [2, 2]"),
    /* Was a library bug: the message says "nll_loss: input is on cpu:0 but target is on cpu:1": the
       argument is log_probs, not input */
    ROW(op_nll_loss__target_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "nll_loss: log_probs is on cpu:0 but target is on cpu:1"),
    ROW(op_nll_loss__target_past_the_classes, DP_ERR_OUT_OF_RANGE,
        "target[0] = 5 is not a class index in [0, 3)"),
    ROW(op_mse_loss__input_null, DP_ERR_INVALID_ARGUMENT, "input is NULL"),
    ROW(op_mse_loss__target_null, DP_ERR_INVALID_ARGUMENT, "target is NULL"),
    ROW(op_mse_loss__input_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "input is not a live dp_tensor handle"),
    ROW(op_mse_loss__target_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "target is not a live dp_tensor handle"),
    ROW(op_mse_loss__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_mse_loss__int64_input, DP_ERR_DTYPE_MISMATCH,
        "mse_loss: input must be float32, float64 or bfloat16, got int64"),
    ROW(op_mse_loss__float32_with_float64, DP_ERR_DTYPE_MISMATCH,
        "mse_loss: input is float32 but target is float64"),
    ROW(op_mse_loss__cpu0_with_cpu1, DP_ERR_DEVICE_MISMATCH,
        "mse_loss: input is on cpu:0 but target is on cpu:1"),
    ROW(op_mse_loss__shapes_differ, DP_ERR_SHAPE_MISMATCH,
        "mse_loss: input has shape [2, 3] but target has [3, 2]"),
    ROW(op_reshape__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_reshape__x_is_a_module, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_reshape__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_reshape__shape_null_ndim_2, DP_ERR_INVALID_ARGUMENT, "shape is NULL but ndim = 2"),
    ROW(op_reshape__ndim_9, DP_ERR_OUT_OF_RANGE, "reshape: ndim = 9"),
    ROW(op_reshape__shape_negative, DP_ERR_INVALID_ARGUMENT, "reshape: shape[1] = -3 is negative"),
    ROW(op_reshape__two_minus_ones, DP_ERR_INVALID_ARGUMENT,
        "reshape: more than one -1 in [-1, -1]"),
    ROW(op_reshape__element_count_differs, DP_ERR_SHAPE_MISMATCH,
        "reshape: shape [4, 2] has 8 elements but x [2, 3] has 6"),
    ROW(op_reshape__minus_one_does_not_divide, DP_ERR_SHAPE_MISMATCH,
        "reshape: cannot infer the -1 in [-1, 4] for 6 elements"),
    /* Was a library bug (unsafe): Undefined behaviour in the library, which aborts
       the process under -fsanitize=undefined (core/ops/shape.cc:101:13: runtime error: signed
       integer overflow: 4294967296 * 4294967296 cannot be represented in type 'long int') */
    ROW(op_reshape__shape_past_2_63, DP_ERR_OUT_OF_RANGE,
        "shape [4294967296, 4294967296, 4] has more elements than fit in 64 bits"),
    ROW(op_cat__tensors_null, DP_ERR_INVALID_ARGUMENT, "tensors is NULL (n = 2)"),
    ROW(op_cat__n_0, DP_ERR_INVALID_ARGUMENT, "tensors is empty (n = 0)"),
    ROW(op_cat__tensors_1_null, DP_ERR_INVALID_ARGUMENT, "tensors[1] is NULL"),
    ROW(op_cat__tensors_1_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "tensors[1] is not a live dp_tensor handle"),
    ROW(op_cat__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(op_cat__float32_with_float64, DP_ERR_DTYPE_MISMATCH,
        "cat: tensors[1] is float64 but tensors[0] is float32"),
    ROW(op_cat__dim_2, DP_ERR_OUT_OF_RANGE, "cat: dim = 2 is out of range"),
    ROW(op_cat__shapes_differ, DP_ERR_SHAPE_MISMATCH,
        "cat: tensors[1] has shape [3, 2] but tensors[0] has [2, 3]"),
    ROW(op_cat__scalar, DP_ERR_SHAPE_MISMATCH, "cat: tensors[0] is 0-dimensional"),
    ROW(op_split__x_null, DP_ERR_INVALID_ARGUMENT, "x is NULL"),
    ROW(op_split__x_is_a_context, DP_ERR_INVALID_ARGUMENT, "x is not a live dp_tensor handle"),
    ROW(op_split__sizes_null, DP_ERR_INVALID_ARGUMENT, "sizes is NULL (n = 2)"),
    ROW(op_split__n_0, DP_ERR_INVALID_ARGUMENT, "sizes is empty (n = 0)"),
    ROW(op_split__outs_null, DP_ERR_INVALID_ARGUMENT, "outs is NULL"),
    ROW(op_split__size_negative, DP_ERR_INVALID_ARGUMENT, "split: sizes[1] = -1 is negative"),
    ROW(op_split__sizes_do_not_sum, DP_ERR_SHAPE_MISMATCH,
        "split: sizes sum to 3 but dim 0 of [2, 3] has size 2"),
    ROW(op_split__dim_2, DP_ERR_OUT_OF_RANGE, "split: dim = 2 is out of range"),
    ROW(op_split__scalar, DP_ERR_SHAPE_MISMATCH, "split: x is 0-dimensional and cannot be split"),
    /* Was a library bug (unsafe): the sum of sizes is accumulated in int64_t without
       an overflow check: INT64_MAX + INT64_MAX + 4 wraps to 2 (signed overflow, undefined
       behaviour), so the sizes check passes; an internal check then returns DP_ERR_OUT_OF_RANGE
       with 'rows [0, 9223372036854775807) of a tensor of shape [2, 3]', which names neither split
       nor sizes; it is also undefined behaviour in the library, which aborts the process under
       -fsanitize=undefined (core/ops/shape.cc:194:11: runtime error: signed integer overflow:
       9223372036854775807 + 9223372036854775807 cannot be represented in type 'long int') */
    ROW(op_split__sizes_sum_overflows_to_the_size, DP_ERR_SHAPE_MISMATCH, "split: sizes"),
    ROW(module_linear__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_linear__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_linear__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_linear__in_features_0, DP_ERR_INVALID_ARGUMENT,
        "Linear: in_features = 0 must be positive"),
    ROW(module_linear__out_features_negative, DP_ERR_INVALID_ARGUMENT,
        "Linear: out_features = -2 must be positive"),
    ROW(module_linear__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(module_linear__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(module_linear__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(module_conv2d__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_conv2d__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_conv2d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_conv2d__in_channels_0, DP_ERR_INVALID_ARGUMENT,
        "Conv2d: in_channels = 0 must be positive"),
    ROW(module_conv2d__out_channels_negative, DP_ERR_INVALID_ARGUMENT,
        "Conv2d: out_channels = -1 must be positive"),
    ROW(module_conv2d__kernel_h_0, DP_ERR_INVALID_ARGUMENT,
        "Conv2d: kernel_h = 0 must be positive"),
    ROW(module_conv2d__kernel_w_negative, DP_ERR_INVALID_ARGUMENT,
        "Conv2d: kernel_w = -2 must be positive"),
    ROW(module_conv2d__stride_h_0, DP_ERR_INVALID_ARGUMENT,
        "Conv2d: stride_h = 0 must be positive"),
    ROW(module_conv2d__stride_w_negative, DP_ERR_INVALID_ARGUMENT,
        "Conv2d: stride_w = -1 must be positive"),
    ROW(module_conv2d__pad_negative, DP_ERR_INVALID_ARGUMENT,
        "Conv2d: padding = (0, -1) must not be negative"),
    ROW(module_conv2d__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(module_conv2d__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(module_conv2d__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(module_relu__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_relu__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_relu__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_gelu__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_gelu__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_gelu__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_tanh__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_tanh__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_tanh__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_sigmoid__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_sigmoid__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_sigmoid__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_sequential__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_sequential__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_sequential__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_dropout__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_dropout__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_dropout__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_dropout__p_negative, DP_ERR_INVALID_ARGUMENT, "Dropout: p = -0.5 must be in [0, 1]"),
    ROW(module_dropout__p_2, DP_ERR_INVALID_ARGUMENT, "Dropout: p = 2 must be in [0, 1]"),
    ROW(module_batchnorm1d__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_batchnorm1d__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_batchnorm1d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_batchnorm1d__num_features_0, DP_ERR_INVALID_ARGUMENT,
        "BatchNorm1d: num_features = 0 must be positive"),
    ROW(module_batchnorm1d__eps_0, DP_ERR_INVALID_ARGUMENT,
        "BatchNorm1d: eps = 0 must be positive"),
    ROW(module_batchnorm1d__momentum_1_5, DP_ERR_INVALID_ARGUMENT,
        "BatchNorm1d: momentum = 1.5 must be in [0, 1]"),
    ROW(module_batchnorm1d__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(module_batchnorm1d__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(module_batchnorm1d__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(module_batchnorm2d__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_batchnorm2d__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_batchnorm2d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_batchnorm2d__num_features_0, DP_ERR_INVALID_ARGUMENT,
        "BatchNorm2d: num_features = 0 must be positive"),
    ROW(module_batchnorm2d__eps_0, DP_ERR_INVALID_ARGUMENT,
        "BatchNorm2d: eps = 0 must be positive"),
    ROW(module_batchnorm2d__momentum_1_5, DP_ERR_INVALID_ARGUMENT,
        "BatchNorm2d: momentum = 1.5 must be in [0, 1]"),
    ROW(module_batchnorm2d__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(module_batchnorm2d__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(module_batchnorm2d__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(module_maxpool2d__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_maxpool2d__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_maxpool2d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_maxpool2d__kernel_h_0, DP_ERR_INVALID_ARGUMENT,
        "MaxPool2d: kernel_h = 0 must be positive"),
    ROW(module_maxpool2d__kernel_w_negative, DP_ERR_INVALID_ARGUMENT,
        "MaxPool2d: kernel_w = -2 must be positive"),
    ROW(module_maxpool2d__stride_h_0, DP_ERR_INVALID_ARGUMENT,
        "MaxPool2d: stride_h = 0 must be positive"),
    ROW(module_maxpool2d__stride_w_negative, DP_ERR_INVALID_ARGUMENT,
        "MaxPool2d: stride_w = -1 must be positive"),
    /* Was a library bug: the constructor checks kernel and stride but not padding: a MaxPool2d with
       padding -1 is created (DP_OK) and fails only at its first forward, unlike Conv2d, which
       rejects negative padding when created */
    ROW(module_maxpool2d__pad_negative, DP_ERR_INVALID_ARGUMENT, "MaxPool2d: pad"),
    /* Was a library bug: padding 3 with kernel 2 is accepted at creation (DP_OK); the op rejects it
       only at forward */
    ROW(module_maxpool2d__pad_past_half_the_kernel, DP_ERR_INVALID_ARGUMENT, "MaxPool2d: pad"),
    ROW(module_avgpool2d__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_avgpool2d__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_avgpool2d__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_avgpool2d__kernel_h_0, DP_ERR_INVALID_ARGUMENT,
        "AvgPool2d: kernel_h = 0 must be positive"),
    ROW(module_avgpool2d__kernel_w_negative, DP_ERR_INVALID_ARGUMENT,
        "AvgPool2d: kernel_w = -2 must be positive"),
    ROW(module_avgpool2d__stride_h_0, DP_ERR_INVALID_ARGUMENT,
        "AvgPool2d: stride_h = 0 must be positive"),
    ROW(module_avgpool2d__stride_w_negative, DP_ERR_INVALID_ARGUMENT,
        "AvgPool2d: stride_w = -1 must be positive"),
    /* Was a library bug: the constructor checks kernel and stride but not padding: a AvgPool2d with
       padding -1 is created (DP_OK) and fails only at its first forward, unlike Conv2d, which
       rejects negative padding when created */
    ROW(module_avgpool2d__pad_negative, DP_ERR_INVALID_ARGUMENT, "AvgPool2d: pad"),
    /* Was a library bug: padding 3 with kernel 2 is accepted at creation (DP_OK); the op rejects it
       only at forward */
    ROW(module_avgpool2d__pad_past_half_the_kernel, DP_ERR_INVALID_ARGUMENT, "AvgPool2d: pad"),
    ROW(module_flatten__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_flatten__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_flatten__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_embedding__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_embedding__ctx_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_embedding__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_embedding__num_embeddings_0, DP_ERR_INVALID_ARGUMENT,
        "Embedding: num_embeddings = 0 must be positive"),
    ROW(module_embedding__embedding_dim_negative, DP_ERR_INVALID_ARGUMENT,
        "Embedding: embedding_dim = -2 must be positive"),
    ROW(module_embedding__cpu_2_of_2, DP_ERR_OUT_OF_RANGE,
        "device = cpu:2 but only 2 CPU devices exist"),
    ROW(module_embedding__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(module_embedding__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(module_append__sequential_null, DP_ERR_INVALID_ARGUMENT, "sequential is NULL"),
    ROW(module_append__child_null, DP_ERR_INVALID_ARGUMENT, "child is NULL"),
    ROW(module_append__sequential_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "sequential is not a live dp_module handle"),
    ROW(module_append__child_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "child is not a live dp_module handle"),
    ROW(module_append__to_a_linear, DP_ERR_INVALID_ARGUMENT,
        "sequential is a Linear, not a Sequential"),
    ROW(module_append__to_itself, DP_ERR_INVALID_ARGUMENT, "a module cannot be its own child"),
    ROW(module_custom__ctx_null, DP_ERR_INVALID_ARGUMENT, "ctx is NULL"),
    ROW(module_custom__ctx_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "ctx is not a live dp_context handle"),
    ROW(module_custom__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_custom__desc_null, DP_ERR_INVALID_ARGUMENT, "desc is NULL"),
    ROW(module_custom__struct_size_0, DP_ERR_INVALID_ARGUMENT, "desc->struct_size = 0"),
    ROW(module_custom__struct_size_ends_inside_a_member, DP_ERR_INVALID_ARGUMENT,
        "desc->struct_size = "),
    ROW(module_custom__forward_null, DP_ERR_INVALID_ARGUMENT, "desc->forward is NULL"),
    ROW(module_register_parameter__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_register_parameter__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_register_parameter__name_null, DP_ERR_INVALID_ARGUMENT, "name is NULL"),
    ROW(module_register_parameter__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(module_register_parameter__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(module_register_parameter__name_empty, DP_ERR_INVALID_ARGUMENT,
        "parameter name \"\" must be non-empty"),
    ROW(module_register_parameter__name_with_a_dot, DP_ERR_INVALID_ARGUMENT,
        "parameter name \"a.b\" must be non-empty and contain no '.' or '/'"),
    ROW(module_register_parameter__name_with_a_slash, DP_ERR_INVALID_ARGUMENT,
        "parameter name \"a/b\""),
    ROW(module_register_parameter__name_taken, DP_ERR_INVALID_ARGUMENT,
        "parameter \"taken\" cannot be registered: a parameter of that name already is"),
    ROW(module_register_parameter__name_of_a_buffer, DP_ERR_INVALID_ARGUMENT,
        "parameter \"held\" cannot be registered: a buffer of that name already is"),
    ROW(module_register_buffer__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_register_buffer__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_register_buffer__name_null, DP_ERR_INVALID_ARGUMENT, "name is NULL"),
    ROW(module_register_buffer__t_null, DP_ERR_INVALID_ARGUMENT, "t is NULL"),
    ROW(module_register_buffer__t_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "t is not a live dp_tensor handle"),
    ROW(module_register_buffer__name_empty, DP_ERR_INVALID_ARGUMENT,
        "buffer name \"\" must be non-empty"),
    ROW(module_register_buffer__name_with_a_dot, DP_ERR_INVALID_ARGUMENT,
        "buffer name \"a.b\" must be non-empty and contain no '.' or '/'"),
    ROW(module_register_buffer__name_with_a_slash, DP_ERR_INVALID_ARGUMENT, "buffer name \"a/b\""),
    ROW(module_register_buffer__name_taken, DP_ERR_INVALID_ARGUMENT,
        "buffer \"held\" cannot be registered: a buffer of that name already is"),
    ROW(module_register_buffer__name_of_a_parameter, DP_ERR_INVALID_ARGUMENT,
        "buffer \"taken\" cannot be registered: a parameter of that name already is"),
    ROW(module_register_parameter__int64, DP_ERR_DTYPE_MISMATCH,
        "parameter \"p\" must be float32 or float64, got int64"),
    ROW(module_register_child__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_register_child__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_register_child__name_null, DP_ERR_INVALID_ARGUMENT, "name is NULL"),
    ROW(module_register_child__child_null, DP_ERR_INVALID_ARGUMENT, "child is NULL"),
    ROW(module_register_child__child_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "child is not a live dp_module handle"),
    ROW(module_register_child__name_with_a_dot, DP_ERR_INVALID_ARGUMENT,
        "child name \"c.d\" must be non-empty"),
    ROW(module_register_child__itself, DP_ERR_INVALID_ARGUMENT, "a module cannot be its own child"),
    ROW(module_register_child__name_of_a_parameter, DP_ERR_INVALID_ARGUMENT,
        "child \"taken\" cannot be registered: a parameter of that name already is"),
    ROW(module_forward__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_forward__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_forward__inputs_null, DP_ERR_INVALID_ARGUMENT, "inputs is NULL but n_inputs = 1"),
    ROW(module_forward__n_outputs_null, DP_ERR_INVALID_ARGUMENT, "n_outputs is NULL"),
    ROW(module_forward__outputs_null, DP_ERR_INVALID_ARGUMENT, "outputs is NULL but capacity = 4"),
    ROW(module_forward__inputs_0_null, DP_ERR_INVALID_ARGUMENT, "inputs[0] is NULL"),
    ROW(module_forward__inputs_0_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "inputs[0] is not a live dp_tensor handle"),
    ROW(module_forward__capacity_0, DP_ERR_OUT_OF_RANGE,
        "the module returned 1 outputs but capacity = 0"),
    ROW(module_forward__two_inputs_to_linear, DP_ERR_INVALID_ARGUMENT,
        "Linear takes exactly one input tensor, got 2"),
    ROW(module_forward__wrong_features, DP_ERR_SHAPE_MISMATCH,
        "linear: x has shape [3, 2] but weight [2, 3] expects 3 input features"),
    ROW(module_forward__int64_input, DP_ERR_DTYPE_MISMATCH,
        "linear: x must be float32, float64 or bfloat16, got int64"),
    ROW(module_forward__input_on_cpu1, DP_ERR_DEVICE_MISMATCH,
        "linear: x is on cpu:1 but weight is on cpu:0"),
    ROW(module_forward1__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_forward1__m_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_forward1__input_null, DP_ERR_INVALID_ARGUMENT, "input is NULL"),
    ROW(module_forward1__input_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "input is not a live dp_tensor handle"),
    ROW(module_forward1__output_null, DP_ERR_INVALID_ARGUMENT, "output is NULL"),
    ROW(module_forward1__float64_input, DP_ERR_DTYPE_MISMATCH,
        "linear: x is float64 but weight is float32"),
    ROW(module_type_name__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_type_name__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_type_name__m_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_type_name__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_train__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_train__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_train__m_is_a_context, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_is_training__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_is_training__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_is_training__m_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_is_training__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_to__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_to__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_to__m_is_a_context, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_to__cpu_2_of_2, DP_ERR_OUT_OF_RANGE, "device = cpu:2 but only 2 CPU devices exist"),
    ROW(module_to__cpu_negative, DP_ERR_OUT_OF_RANGE, "device = cpu:-1"),
    ROW(module_to__device_type_5, DP_ERR_INVALID_ARGUMENT, "device has device type 5"),
    ROW(module_zero_grad__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_zero_grad__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_zero_grad__m_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_parameter_count__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_parameter_count__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_parameter_count__m_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_parameter_count__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_buffer_count__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_buffer_count__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_buffer_count__m_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_buffer_count__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(module_parameter__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_parameter__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_parameter__m_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(module_parameter__index_2_of_2, DP_ERR_OUT_OF_RANGE,
        "index = 2 but the module has 2 parameters"),
    ROW(module_parameter__index_size_max, DP_ERR_OUT_OF_RANGE, "index = 18446744073709551615"),
    ROW(module_buffer__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_buffer__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_buffer__m_is_a_context, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_buffer__index_0_of_0, DP_ERR_OUT_OF_RANGE, "index = 0 but the module has 0 buffers"),
    ROW(module_get__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_get__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_get__m_is_a_context, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_get__name_null, DP_ERR_INVALID_ARGUMENT, "name is NULL"),
    ROW(module_get__tensor_null, DP_ERR_INVALID_ARGUMENT, "tensor is NULL"),
    ROW(module_get__absent_name, DP_ERR_OUT_OF_RANGE,
        "the Linear has no parameter or buffer named \"nope\""),
    ROW(module_save__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_save__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_save__m_is_a_context, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_save__path_null, DP_ERR_INVALID_ARGUMENT, "path is NULL"),
    ROW(module_save__path_in_a_missing_folder, DP_ERR_IO,
        "/nonexistent-dp-test-dir/model.safetensors"),
    ROW(module_load__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(module_load__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_load__m_is_a_context, DP_ERR_INVALID_ARGUMENT, "m is not a live dp_module handle"),
    ROW(module_load__path_null, DP_ERR_INVALID_ARGUMENT, "path is NULL"),
    ROW(module_load__missing_file, DP_ERR_IO, "/nonexistent-dp-test-dir/model.safetensors"),
    ROW(optimizer_sgd__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(optimizer_sgd__m_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(optimizer_sgd__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(optimizer_sgd__struct_size_0, DP_ERR_INVALID_ARGUMENT, "options->struct_size = 0"),
    ROW(optimizer_sgd__struct_size_ends_inside_a_member, DP_ERR_INVALID_ARGUMENT,
        "options->struct_size = "),
    ROW(optimizer_sgd__lr_negative, DP_ERR_INVALID_ARGUMENT,
        "SGD: lr = -0.1 must be a finite number >= 0"),
    ROW(optimizer_sgd__weight_decay_negative, DP_ERR_INVALID_ARGUMENT,
        "SGD: weight_decay = -1 must be a number >= 0"),
    ROW(optimizer_sgd__momentum_negative, DP_ERR_INVALID_ARGUMENT,
        "SGD: momentum = -0.9 must be a number >= 0"),
    ROW(optimizer_sgd__nesterov_without_momentum, DP_ERR_INVALID_ARGUMENT,
        "SGD: nesterov needs momentum > 0 and dampening = 0 (momentum = 0, dampening = 0)"),
    ROW(optimizer_sgd__lr_nan, DP_ERR_INVALID_ARGUMENT, "SGD: lr = nan"),
    ROW(optimizer_adam__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(optimizer_adam__m_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(optimizer_adam__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(optimizer_adam__struct_size_0, DP_ERR_INVALID_ARGUMENT, "options->struct_size = 0"),
    ROW(optimizer_adam__struct_size_ends_inside_a_member, DP_ERR_INVALID_ARGUMENT,
        "options->struct_size = "),
    ROW(optimizer_adam__lr_negative, DP_ERR_INVALID_ARGUMENT,
        "Adam: lr = -0.1 must be a finite number >= 0"),
    ROW(optimizer_adam__weight_decay_negative, DP_ERR_INVALID_ARGUMENT,
        "Adam: weight_decay = -1 must be a number >= 0"),
    ROW(optimizer_adam__beta1_1, DP_ERR_INVALID_ARGUMENT, "Adam: beta1 = 1 must be in [0, 1)"),
    ROW(optimizer_adam__beta2_negative, DP_ERR_INVALID_ARGUMENT,
        "Adam: beta2 = -0.5 must be in [0, 1)"),
    ROW(optimizer_adam__eps_0, DP_ERR_INVALID_ARGUMENT, "Adam: eps = 0 must be positive"),
    ROW(optimizer_adamw__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(optimizer_adamw__m_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(optimizer_adamw__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(optimizer_adamw__struct_size_0, DP_ERR_INVALID_ARGUMENT, "options->struct_size = 0"),
    ROW(optimizer_adamw__struct_size_ends_inside_a_member, DP_ERR_INVALID_ARGUMENT,
        "options->struct_size = "),
    ROW(optimizer_adamw__lr_negative, DP_ERR_INVALID_ARGUMENT,
        "AdamW: lr = -0.1 must be a finite number >= 0"),
    ROW(optimizer_adamw__weight_decay_negative, DP_ERR_INVALID_ARGUMENT,
        "AdamW: weight_decay = -1 must be a number >= 0"),
    ROW(optimizer_adamw__beta1_1, DP_ERR_INVALID_ARGUMENT, "AdamW: beta1 = 1 must be in [0, 1)"),
    ROW(optimizer_adamw__beta2_negative, DP_ERR_INVALID_ARGUMENT,
        "AdamW: beta2 = -0.5 must be in [0, 1)"),
    ROW(optimizer_adamw__eps_0, DP_ERR_INVALID_ARGUMENT, "AdamW: eps = 0 must be positive"),
    ROW(optimizer_step__opt_null, DP_ERR_INVALID_ARGUMENT, "opt is NULL"),
    ROW(optimizer_step__opt_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_step__opt_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_zero_grad__opt_null, DP_ERR_INVALID_ARGUMENT, "opt is NULL"),
    ROW(optimizer_zero_grad__opt_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_zero_grad__opt_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_set_lr__opt_null, DP_ERR_INVALID_ARGUMENT, "opt is NULL"),
    ROW(optimizer_set_lr__opt_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_set_lr__opt_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_set_lr__negative, DP_ERR_INVALID_ARGUMENT,
        "lr = -1 must be a finite number >= 0"),
    ROW(optimizer_set_lr__nan, DP_ERR_INVALID_ARGUMENT, "lr = nan"),
    ROW(optimizer_set_lr__infinite, DP_ERR_INVALID_ARGUMENT,
        "lr = inf must be a finite number >= 0"),
    ROW(optimizer_lr__opt_null, DP_ERR_INVALID_ARGUMENT, "opt is NULL"),
    ROW(optimizer_lr__opt_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_lr__opt_is_a_data_parallel, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(optimizer_lr__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(checkpoint_save__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(checkpoint_save__m_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(checkpoint_save__opt_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(checkpoint_save__path_null, DP_ERR_INVALID_ARGUMENT, "path is NULL"),
    ROW(checkpoint_save__metadata_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "metadata is NULL but n_metadata = 2"),
    ROW(checkpoint_save__metadata_key_null, DP_ERR_INVALID_ARGUMENT, "metadata[1].key is NULL"),
    ROW(checkpoint_save__metadata_value_null, DP_ERR_INVALID_ARGUMENT, "metadata[0].value is NULL"),
    ROW(checkpoint_save__path_in_a_missing_folder, DP_ERR_IO,
        "/nonexistent-dp-test-dir/model.safetensors"),
    ROW(checkpoint_load__m_null, DP_ERR_INVALID_ARGUMENT, "m is NULL"),
    ROW(checkpoint_load__m_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "m is not a live dp_module handle"),
    ROW(checkpoint_load__opt_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "opt is not a live dp_optimizer handle"),
    ROW(checkpoint_load__path_null, DP_ERR_INVALID_ARGUMENT, "path is NULL"),
    ROW(checkpoint_load__missing_file, DP_ERR_IO, "/nonexistent-dp-test-dir/model.safetensors"),
    ROW(checkpoint_metadata__path_null, DP_ERR_INVALID_ARGUMENT, "path is NULL"),
    ROW(checkpoint_metadata__key_null, DP_ERR_INVALID_ARGUMENT, "key is NULL"),
    ROW(checkpoint_metadata__buf_null_with_size, DP_ERR_INVALID_ARGUMENT,
        "buf is NULL but buf_size = 8"),
    ROW(checkpoint_metadata__absent_key, DP_ERR_OUT_OF_RANGE, "has no metadata \"nope\""),
    ROW(checkpoint_metadata__missing_file, DP_ERR_IO, "/nonexistent-dp-test-dir/model.safetensors"),
    ROW(data_parallel_create__module_null, DP_ERR_INVALID_ARGUMENT, "module is NULL"),
    ROW(data_parallel_create__module_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "module is not a live dp_module handle"),
    ROW(data_parallel_create__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(data_parallel_create__device_ids_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "device_ids is NULL but its count is 2"),
    ROW(data_parallel_create__device_ids_empty, DP_ERR_INVALID_ARGUMENT,
        "device_ids is empty (n_devices = 0)"),
    ROW(data_parallel_create__device_id_cpu_2, DP_ERR_OUT_OF_RANGE,
        "device_ids[1] = cpu:2 but only 2 CPU devices exist"),
    ROW(data_parallel_create__device_id_negative, DP_ERR_OUT_OF_RANGE, "device_ids[0] = cpu:-1"),
    ROW(data_parallel_create__device_id_type_5, DP_ERR_INVALID_ARGUMENT,
        "device_ids[1] has device type 5"),
    ROW(data_parallel_create__device_id_cuda_without_cuda, DP_ERR_OUT_OF_RANGE,
        "device_ids[0] = cuda:0 but only 0 CUDA devices exist"),
    ROW(data_parallel_create__device_id_repeated, DP_ERR_INVALID_ARGUMENT,
        "device_ids[1] = cpu:1 repeats device_ids[0]"),
    ROW(data_parallel_create__device_ids_mixed_types, DP_ERR_INVALID_ARGUMENT,
        "device_ids[1] = cuda:0 is not of the same type as device_ids[0] = cpu:0"),
    ROW(data_parallel_create__output_device_cpu_2, DP_ERR_OUT_OF_RANGE,
        "output_device = cpu:2 but only 2 CPU devices exist"),
    ROW(data_parallel_create__output_device_type_5, DP_ERR_INVALID_ARGUMENT,
        "output_device has device type 5"),
    ROW(data_parallel_create__struct_size_0, DP_ERR_INVALID_ARGUMENT, "options->struct_size = 0"),
    ROW(data_parallel_create__struct_size_ends_inside_a_member, DP_ERR_INVALID_ARGUMENT,
        "options->struct_size = "),
    ROW(data_parallel_create__chunk_sizes_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "options->chunk_sizes is NULL but n_chunk_sizes = 2"),
    ROW(data_parallel_create__chunk_sizes_count, DP_ERR_INVALID_ARGUMENT,
        "chunk_sizes has 3 entries but there are 2 devices"),
    ROW(data_parallel_create__chunk_size_negative, DP_ERR_INVALID_ARGUMENT,
        "chunk_sizes[1] = -1 is negative"),
    ROW(data_parallel_create__buffer_sync_3, DP_ERR_INVALID_ARGUMENT, "options->buffer_sync = 3"),
    ROW(data_parallel_create__buffer_sync_negative, DP_ERR_INVALID_ARGUMENT,
        "options->buffer_sync = -1"),
    ROW(data_parallel_forward__dp_null, DP_ERR_INVALID_ARGUMENT, "dp is NULL"),
    ROW(data_parallel_forward__dp_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_forward__n_outputs_null, DP_ERR_INVALID_ARGUMENT, "n_outputs is NULL"),
    ROW(data_parallel_forward__inputs_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "inputs is NULL but its count is 1"),
    ROW(data_parallel_forward__inputs_0_null, DP_ERR_INVALID_ARGUMENT, "inputs[0] is NULL"),
    ROW(data_parallel_forward__inputs_0_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "inputs[0] is not a live dp_tensor handle"),
    ROW(data_parallel_forward__outputs_null, DP_ERR_INVALID_ARGUMENT,
        "outputs is NULL but capacity = 4"),
    ROW(data_parallel_forward__capacity_0, DP_ERR_OUT_OF_RANGE,
        "there are 1 outputs but capacity = 0"),
    ROW(data_parallel_forward__scalar_input, DP_ERR_SHAPE_MISMATCH,
        "inputs[0] is a 0-dim tensor, which cannot be scattered"),
    ROW(data_parallel_forward__wrong_features, DP_ERR_SHAPE_MISMATCH, "linear: x has shape"),
    ROW(data_parallel_module__dp_null, DP_ERR_INVALID_ARGUMENT, "dp is NULL"),
    ROW(data_parallel_module__dp_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_module__dp_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    /* Was a library bug (unsafe): dp_data_parallel_module evaluates *out_ptr(out,
       "out") = dp_module_retain(...) right side first (C++17): the module gains a reference before
       the NULL out is detected, and it is never dropped (the module and its context are leaked);
       the code and message are right, but LeakSanitizer fails the process */
    ROW(data_parallel_module__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(data_parallel_devices__dp_null, DP_ERR_INVALID_ARGUMENT, "dp is NULL"),
    ROW(data_parallel_devices__dp_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_devices__dp_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_devices__n_null, DP_ERR_INVALID_ARGUMENT, "n is NULL"),
    ROW(data_parallel_devices__devices_null_with_capacity, DP_ERR_INVALID_ARGUMENT,
        "devices is NULL but capacity = 4"),
    ROW(data_parallel_save__dp_null, DP_ERR_INVALID_ARGUMENT, "dp is NULL"),
    ROW(data_parallel_save__dp_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_save__dp_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_save__path_null, DP_ERR_INVALID_ARGUMENT, "path is NULL"),
    ROW(data_parallel_save__path_in_a_missing_folder, DP_ERR_IO,
        "/nonexistent-dp-test-dir/model.safetensors"),
    ROW(data_parallel_load__dp_null, DP_ERR_INVALID_ARGUMENT, "dp is NULL"),
    ROW(data_parallel_load__dp_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_load__dp_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_load__path_null, DP_ERR_INVALID_ARGUMENT, "path is NULL"),
    ROW(data_parallel_load__missing_file, DP_ERR_IO, "/nonexistent-dp-test-dir/model.safetensors"),
    ROW(data_parallel_stats__dp_null, DP_ERR_INVALID_ARGUMENT, "dp is NULL"),
    ROW(data_parallel_stats__dp_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_stats__dp_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_reset_stats__dp_null, DP_ERR_INVALID_ARGUMENT, "dp is NULL"),
    ROW(data_parallel_reset_stats__dp_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(data_parallel_reset_stats__dp_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "dp is not a live dp_data_parallel handle"),
    ROW(scatter__input_null, DP_ERR_INVALID_ARGUMENT, "input is NULL"),
    ROW(scatter__input_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "input is not a live dp_tensor handle"),
    ROW(scatter__outs_null, DP_ERR_INVALID_ARGUMENT, "outs is NULL"),
    ROW(scatter__n_out_null, DP_ERR_INVALID_ARGUMENT, "n_out is NULL"),
    ROW(scatter__devices_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "devices is NULL but its count is 2"),
    ROW(scatter__no_devices, DP_ERR_INVALID_ARGUMENT, "no devices"),
    ROW(scatter__no_devices_with_chunk_sizes, DP_ERR_INVALID_ARGUMENT, "no devices"),
    ROW(scatter__device_cpu_2, DP_ERR_OUT_OF_RANGE,
        "devices[1] = cpu:2 but only 2 CPU devices exist"),
    ROW(scatter__device_type_5, DP_ERR_INVALID_ARGUMENT, "devices[0] has device type 5"),
    ROW(scatter__chunk_size_negative, DP_ERR_INVALID_ARGUMENT, "chunk_sizes[1] = -1 is negative"),
    ROW(scatter__chunk_sizes_do_not_sum, DP_ERR_INVALID_ARGUMENT,
        "chunk_sizes sum to 3 but input has size 2 along dim 0"),
    ROW(scatter__dim_2, DP_ERR_OUT_OF_RANGE, "dim = 2"),
    ROW(scatter__scalar_input, DP_ERR_SHAPE_MISMATCH,
        "input is a 0-dim tensor, which cannot be scattered"),
    /* Was a library bug: the message is "tensors is empty (n = 2)": a NULL array with a count of 2
       is reported as empty */
    ROW(gather__tensors_null, DP_ERR_INVALID_ARGUMENT, "tensors is NULL"),
    ROW(gather__n_0, DP_ERR_INVALID_ARGUMENT, "tensors is empty (n = 0)"),
    ROW(gather__tensors_1_null, DP_ERR_INVALID_ARGUMENT, "tensors[1] is NULL"),
    ROW(gather__tensors_0_is_a_module, DP_ERR_INVALID_ARGUMENT,
        "tensors[0] is not a live dp_tensor handle"),
    ROW(gather__out_null, DP_ERR_INVALID_ARGUMENT, "out is NULL"),
    ROW(gather__output_device_cpu_2, DP_ERR_OUT_OF_RANGE,
        "output_device = cpu:2 but only 2 CPU devices exist"),
    ROW(gather__output_device_type_5, DP_ERR_INVALID_ARGUMENT, "output_device has device type 5"),
    ROW(gather__dim_2, DP_ERR_OUT_OF_RANGE, "dim = 2"),
    ROW(gather__shapes_differ, DP_ERR_SHAPE_MISMATCH,
        "gather: replica 1 output 0 has shape [3, 2] but replica 0's has shape [2, 3]"),
    ROW(gather__float32_with_float64, DP_ERR_DTYPE_MISMATCH, "float64"),
    ROW(replicate__module_null, DP_ERR_INVALID_ARGUMENT, "module is NULL"),
    ROW(replicate__module_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "module is not a live dp_module handle"),
    ROW(replicate__replicas_null, DP_ERR_INVALID_ARGUMENT, "replicas is NULL"),
    ROW(replicate__devices_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "devices is NULL but its count is 2"),
    ROW(replicate__no_devices, DP_ERR_INVALID_ARGUMENT, "devices is empty"),
    ROW(replicate__device_cpu_2, DP_ERR_OUT_OF_RANGE,
        "devices[1] = cpu:2 but only 2 CPU devices exist"),
    ROW(replicate__device_type_5, DP_ERR_INVALID_ARGUMENT, "devices[1] has device type 5"),
    ROW(replicate__module_not_on_devices_0, DP_ERR_DEVICE_MISMATCH,
        "replicate: parameter \"weight\" is on cpu:0 but the module must be on the first "
        "device, cpu:1"),
    /* Was a library bug: the message is "replicas is empty (n = 1)": a NULL array with a count of 1
       is reported as empty */
    ROW(parallel_apply__replicas_null, DP_ERR_INVALID_ARGUMENT, "replicas is NULL"),
    ROW(parallel_apply__n_0, DP_ERR_INVALID_ARGUMENT, "replicas is empty (n = 0)"),
    ROW(parallel_apply__replicas_0_null, DP_ERR_INVALID_ARGUMENT, "replicas[0] is NULL"),
    ROW(parallel_apply__replicas_0_is_a_tensor, DP_ERR_INVALID_ARGUMENT,
        "replicas[0] is not a live dp_module handle"),
    ROW(parallel_apply__outputs_null, DP_ERR_INVALID_ARGUMENT, "outputs is NULL"),
    ROW(parallel_apply__inputs_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "inputs is NULL but its count is 1"),
    ROW(parallel_apply__inputs_0_null, DP_ERR_INVALID_ARGUMENT, "inputs[0] is NULL"),
    ROW(parallel_apply__devices_null, DP_ERR_INVALID_ARGUMENT,
        "devices is NULL but its count is 1"),
    ROW(parallel_apply__device_cpu_2, DP_ERR_OUT_OF_RANGE,
        "devices[0] = cpu:2 but only 2 CPU devices exist"),
    ROW(parallel_apply__device_type_5, DP_ERR_INVALID_ARGUMENT, "devices[0] has device type 5"),
    /* Was a library bug: n * inputs_per_replica is computed in size_t without an overflow check: 2
       * (SIZE_MAX / 2 + 1) wraps to 0, so no input is read and the per-replica slices are taken at
       flat.begin() + i * inputs_per_replica, outside the empty vector (undefined pointer
       arithmetic, which here wraps back to begin(): every replica gets no inputs); it ends with 'in
       replica 0 on device cpu:0: Linear takes exactly one input tensor, got 0', which names neither
       inputs_per_replica nor its value */
    ROW(parallel_apply__input_count_overflows, DP_ERR_INVALID_ARGUMENT, "inputs_per_replica"),
    ROW(data_parallel_apply__module_null, DP_ERR_INVALID_ARGUMENT, "module is NULL"),
    ROW(data_parallel_apply__module_is_an_optimizer, DP_ERR_INVALID_ARGUMENT,
        "module is not a live dp_module handle"),
    ROW(data_parallel_apply__n_outputs_null, DP_ERR_INVALID_ARGUMENT, "n_outputs is NULL"),
    ROW(data_parallel_apply__inputs_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "inputs is NULL but its count is 1"),
    ROW(data_parallel_apply__inputs_0_is_a_context, DP_ERR_INVALID_ARGUMENT,
        "inputs[0] is not a live dp_tensor handle"),
    ROW(data_parallel_apply__device_ids_null_with_count, DP_ERR_INVALID_ARGUMENT,
        "device_ids is NULL but its count is 2"),
    ROW(data_parallel_apply__device_ids_empty, DP_ERR_INVALID_ARGUMENT,
        "device_ids is empty (n_devices = 0)"),
    ROW(data_parallel_apply__device_id_cpu_2, DP_ERR_OUT_OF_RANGE,
        "device_ids[1] = cpu:2 but only 2 CPU devices exist"),
    ROW(data_parallel_apply__device_id_repeated, DP_ERR_INVALID_ARGUMENT,
        "device_ids[1] = cpu:0 repeats device_ids[0]"),
    /* A missing device is out of range, in every function (the rule beside dp_result) */
    ROW(data_parallel_apply__output_device_cpu_2, DP_ERR_OUT_OF_RANGE,
        "output_device = cpu:2 but only 2 CPU devices exist"),
    ROW(data_parallel_apply__dim_5, DP_ERR_OUT_OF_RANGE,
        "dim (scattering inputs[0]) = 5 is out of range for a tensor with 2 dimensions"),
    ROW(data_parallel_apply__outputs_null, DP_ERR_INVALID_ARGUMENT,
        "outputs is NULL but capacity = 4"),
    ROW(data_parallel_apply__capacity_0, DP_ERR_OUT_OF_RANGE,
        "there are 1 outputs but capacity = 0"),
    ROW(data_parallel_apply__module_not_on_device_ids_0, DP_ERR_DEVICE_MISMATCH,
        "module must have its parameters and buffers on device cpu:1 (device_ids[0]) but found "
        "\"weight\" on cpu:0"),
    ROW(data_parallel_apply__scalar_input_not_broadcast, DP_ERR_SHAPE_MISMATCH,
        "inputs[1] is a 0-dim tensor, which cannot be scattered"),
    ROW(tensor_from_dlpack__ndim_9, DP_ERR_OUT_OF_RANGE, "DLPack tensor has ndim = 9"),
    ROW(tensor_from_dlpack__ndim_negative, DP_ERR_OUT_OF_RANGE, "DLPack tensor has ndim = -1"),
    ROW(tensor_from_dlpack__shape_null, DP_ERR_INVALID_ARGUMENT, "DLPack tensor has no shape"),
    ROW(tensor_from_dlpack__shape_negative, DP_ERR_INVALID_ARGUMENT,
        "DLPack shape[0] = -4 is negative"),
    ROW(tensor_from_dlpack__float16, DP_ERR_DTYPE_MISMATCH,
        "DLPack dtype (code 2, 16 bits) is not float32, float64, int64 or bfloat16"),
    ROW(tensor_from_dlpack__lanes_4, DP_ERR_DTYPE_MISMATCH, "DLPack tensor has 4 lanes"),
    ROW(tensor_from_dlpack__device_type_8, DP_ERR_NOT_SUPPORTED,
        "DLPack device type 8 is not supported"),
    ROW(tensor_from_dlpack__strided, DP_ERR_NOT_SUPPORTED, "strides[1] = 2, expected 1"),
    /* Was a library bug: returns DP_OK: a DLManagedTensor whose data is NULL but whose shape [8]
       has 8 elements is imported as a tensor over address 0 (the only check on data is its
       alignment, and NULL is aligned); reading it crashes */
    ROW(tensor_from_dlpack__data_null, DP_ERR_INVALID_ARGUMENT, "data"),
    /* Was a library bug (unsafe): returns DP_ERR_SHAPE_MISMATCH 'kernel 2x2 does not
       fit input [1, 1, 4, 4]': 2 * pad_h is computed in int and overflows (undefined behaviour) to
       a negative number, so the padding check 2 * pad_h <= kernel_h passes; it is also undefined
       behaviour in the library, which aborts the process under -fsanitize=undefined
       (core/ops/pool.cc:44:3: runtime error: signed integer overflow: 1073741824 * 2 cannot be
       represented in type 'int') */
    ROW(op_max_pool2d__padding_2_pow_30, DP_ERR_INVALID_ARGUMENT,
        "padding = (1073741824, 0) must be between 0 and half the kernel"),
    /* Was a library bug (unsafe): returns DP_ERR_SHAPE_MISMATCH 'kernel 2x2 does not
       fit input [1, 1, 4, 4]': 2 * pad_h is computed in int and overflows (undefined behaviour) to
       a negative number, so the padding check 2 * pad_h <= kernel_h passes; it is also undefined
       behaviour in the library, which aborts the process under -fsanitize=undefined
       (core/ops/pool.cc:44:3: runtime error: signed integer overflow: 1073741824 * 2 cannot be
       represented in type 'int') */
    ROW(op_avg_pool2d__padding_2_pow_30, DP_ERR_INVALID_ARGUMENT,
        "padding = (1073741824, 0) must be between 0 and half the kernel"),
    /* Was a library bug: returns DP_OK: flatten of a 0-dim tensor returns reshape(x, {1}) before
       start_dim and end_dim are checked, so any dims are accepted (PyTorch rejects dim 5 for a
       0-dim tensor) */
    ROW(op_flatten__scalar_with_start_dim_5, DP_ERR_OUT_OF_RANGE, "start_dim = 5"),
    ROW(module_linear__weight_past_2_63_elements, DP_ERR_OUT_OF_RANGE,
        "[1099511627776, 1099511627776] has more elements than fit in 64 bits"),
    ROW(module_linear__weight_past_size_max_bytes, DP_ERR_OUT_OF_RANGE,
        "[2147483648, 2147483648] needs more bytes than fit in memory"),
    ROW(module_embedding__weight_past_2_63_elements, DP_ERR_OUT_OF_RANGE,
        "[1099511627776, 1099511627776] has more elements than fit in 64 bits"),
    /* Was a library bug: returns DP_OK: NaN is converted to int64 by a cast, which is undefined
       behaviour in C++ (the header promises no UB for any input); PyTorch's torch.full raises
       'value cannot be converted to type int64_t without overflow' */
    ROW(tensor_full__nan_into_int64, DP_ERR_INVALID_ARGUMENT, "value = nan"),
    /* Was a library bug (unsafe): the chunk sizes are summed in int64_t without an
       overflow check: INT64_MAX + INT64_MAX + 4 wraps to 2 (signed overflow, undefined behaviour),
       so 'chunk_sizes sum to ...' passes; an internal check then returns DP_ERR_OUT_OF_RANGE 'rows
       [0, 9223372036854775807) of a tensor of shape [2, 3]', which names neither scatter nor
       chunk_sizes; it is also undefined behaviour in the library, which aborts the process under
       -fsanitize=undefined (core/parallel/scatter_gather.cc:28:11: runtime error: signed integer
       overflow: 9223372036854775807 + 9223372036854775807 cannot be represented in type 'long int')
     */
    ROW(scatter__chunk_sizes_sum_overflows_to_the_batch, DP_ERR_INVALID_ARGUMENT, "chunk_sizes"),
};

#define N_ROWS (sizeof kRows / sizeof kRows[0])

/* ---------------------------------------------------------------------------------- */
/* Fixture                                                                           */
/* ---------------------------------------------------------------------------------- */

static dp_tensor* tensor_of(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                            double value, int32_t cpu) {
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_full(ctx, dtype, shape, ndim, value, cpu_dev(cpu), &t));
  return t;
}

static dp_tensor* i64_of(dp_context* ctx, const int64_t* values, size_t n, int32_t cpu) {
  const int64_t shape[1] = {(int64_t)n};
  dp_tensor* t = NULL;
  ASSERT_OK(
      dp_tensor_from_data(ctx, DP_INT64, shape, 1, values, n * sizeof(int64_t), cpu_dev(cpu), &t));
  return t;
}

static int setup(void** state) {
  fixture* f = calloc(1, sizeof *f);
  assert_non_null(f);
  dp_context* c = make_context(2);
  f->ctx = c;
  const int64_t s2[1] = {2}, s3[1] = {3}, s1[1] = {1}, s13[2] = {1, 3}, s20[2] = {2, 0};
  const int64_t s22[2] = {2, 2}, s32[2] = {3, 2}, s1144[4] = {1, 1, 4, 4};
  const int64_t s1244[4] = {1, 2, 4, 4}, s144[3] = {1, 4, 4}, s1122[4] = {1, 1, 2, 2};
  f->x = make_f32(c, kData, S23, 2, cpu_dev(0));
  f->x1 = make_f32(c, kData, S23, 2, cpu_dev(1));
  f->d = tensor_of(c, DP_FLOAT64, S23, 2, 1.0, 0);
  f->w23 = tensor_of(c, DP_FLOAT32, S23, 2, 0.5, 0);
  f->w32 = tensor_of(c, DP_FLOAT32, s32, 2, 0.5, 0);
  f->s = tensor_of(c, DP_FLOAT32, NULL, 0, 1.0, 0);
  f->row = tensor_of(c, DP_FLOAT32, s13, 2, 1.0, 0);
  f->empty = tensor_of(c, DP_FLOAT32, s20, 2, 1.0, 0);
  f->v2 = tensor_of(c, DP_FLOAT32, s2, 1, 1.0, 0);
  f->v2_1 = tensor_of(c, DP_FLOAT32, s2, 1, 1.0, 1);
  f->v2_64 = tensor_of(c, DP_FLOAT64, s2, 1, 1.0, 0);
  f->v3 = tensor_of(c, DP_FLOAT32, s3, 1, 1.0, 0);
  f->v3_1 = tensor_of(c, DP_FLOAT32, s3, 1, 1.0, 1);
  f->v3_64 = tensor_of(c, DP_FLOAT64, s3, 1, 1.0, 0);
  f->one64 = tensor_of(c, DP_FLOAT64, s1, 1, 1.0, 0);
  const int64_t i01[2] = {0, 1}, i50[2] = {5, 0}, ineg[2] = {0, -1}, i012[3] = {0, 1, 2};
  f->i = i64_of(c, i01, 2, 0);
  f->i_1 = i64_of(c, i01, 2, 1);
  f->i3 = i64_of(c, i012, 3, 0);
  f->i5 = i64_of(c, i50, 2, 0);
  f->ineg = i64_of(c, ineg, 2, 0);
  f->i2 = tensor_of(c, DP_INT64, S23, 2, 1.0, 0);
  f->i22 = tensor_of(c, DP_INT64, s22, 2, 0.0, 0);
  f->img = tensor_of(c, DP_FLOAT32, s1144, 4, 1.0, 0);
  f->img2c = tensor_of(c, DP_FLOAT32, s1244, 4, 1.0, 0);
  f->img3 = tensor_of(c, DP_FLOAT32, s144, 3, 1.0, 0);
  f->ker = tensor_of(c, DP_FLOAT32, s1122, 4, 1.0, 0);
  f->ker1 = tensor_of(c, DP_FLOAT32, s1122, 4, 1.0, 1);
  f->ker64 = tensor_of(c, DP_FLOAT64, s1122, 4, 1.0, 0);
  f->p = tensor_of(c, DP_FLOAT32, s2, 1, 1.0, 0);
  f->rg = make_f32(c, kData, S23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(f->rg, 1));
  ASSERT_OK(dp_op_scale(f->rg, 2.0, &f->y));
  f->gleaf = tensor_of(c, DP_FLOAT32, s2, 1, 1.0, 0);
  ASSERT_OK(dp_tensor_set_requires_grad(f->gleaf, 1));
  dp_tensor* gsum = NULL;
  ASSERT_OK(dp_op_sum(f->gleaf, &gsum));
  ASSERT_OK(dp_backward(gsum, NULL, 0));
  dp_tensor_release(gsum);

  ASSERT_OK(dp_module_linear(c, 3, 2, 1, cpu_dev(0), &f->lin));
  ASSERT_OK(dp_module_linear(c, 3, 2, 1, cpu_dev(0), &f->lin2));
  ASSERT_OK(dp_module_linear(c, 3, 2, 1, cpu_dev(0), &f->lin3));
  ASSERT_OK(dp_module_sequential(c, &f->seq));
  ASSERT_OK(dp_module_relu(c, &f->relu));
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = identity_forward;
  ASSERT_OK(dp_module_custom(c, &desc, &f->custom));
  dp_tensor* taken_p = tensor_of(c, DP_FLOAT32, s2, 1, 0.0, 0);
  dp_tensor* taken_b = tensor_of(c, DP_FLOAT32, s2, 1, 0.0, 0);
  ASSERT_OK(dp_module_register_parameter(f->custom, "taken", taken_p));
  ASSERT_OK(dp_module_register_buffer(f->custom, "held", taken_b));
  dp_tensor_release(taken_p);
  dp_tensor_release(taken_b);
  ASSERT_OK(dp_optimizer_sgd(f->lin, NULL, &f->opt));
  const dp_device both[2] = {cpu_dev(0), cpu_dev(1)};
  ASSERT_OK(dp_data_parallel_create(f->lin2, both, 2, NULL, 0, NULL, &f->dpw));

  f->dl_shape[0] = 8;
  f->dl.dl_tensor.data = f->mem;
  f->dl.dl_tensor.device.device_type = kDLCPU;
  f->dl.dl_tensor.ndim = 1;
  f->dl.dl_tensor.dtype.code = kDLFloat;
  f->dl.dl_tensor.dtype.bits = 32;
  f->dl.dl_tensor.dtype.lanes = 1;
  f->dl.dl_tensor.shape = f->dl_shape;
  for (int k = 0; k < DLV_COUNT; ++k) f->dlv[k] = f->dl;
  for (int k = 0; k < 9; ++k) f->dl_ones[k] = 1;
  f->dlv[DLV_NDIM_9].dl_tensor.ndim = 9;
  f->dlv[DLV_NDIM_9].dl_tensor.shape = f->dl_ones;
  f->dlv[DLV_NDIM_NEGATIVE].dl_tensor.ndim = -1;
  f->dlv[DLV_SHAPE_NULL].dl_tensor.shape = NULL;
  f->dl_neg[0] = -4;
  f->dlv[DLV_SHAPE_NEGATIVE].dl_tensor.shape = f->dl_neg;
  f->dlv[DLV_FLOAT16].dl_tensor.dtype.bits = 16;
  f->dlv[DLV_LANES_4].dl_tensor.dtype.lanes = 4;
  f->dlv[DLV_DEVICE_TYPE_8].dl_tensor.device.device_type = (DLDeviceType)8;
  f->dl_2x4[0] = 2;
  f->dl_2x4[1] = 4;
  f->dl_strides[0] = 1; /* column-major: not supported */
  f->dl_strides[1] = 2;
  f->dlv[DLV_STRIDED].dl_tensor.ndim = 2;
  f->dlv[DLV_STRIDED].dl_tensor.shape = f->dl_2x4;
  f->dlv[DLV_STRIDED].dl_tensor.strides = f->dl_strides;
  f->dlv[DLV_DATA_NULL].dl_tensor.data = NULL;

  snprintf(f->path, sizeof f->path, "/tmp/dp_test_bad_input_%ld.safetensors", (long)getpid());
  snprintf(f->scratch_path, sizeof f->scratch_path, "/tmp/dp_test_bad_input_%ld_unused",
           (long)getpid());
  const dp_metadata_entry meta[1] = {{"epoch", "3"}};
  ASSERT_OK(dp_checkpoint_save(f->lin, f->opt, f->path, meta, 1));
  *state = f;
  return 0;
}

static int teardown(void** state) {
  fixture* f = (fixture*)*state;
  dp_tensor* tensors[] = {f->x,     f->x1,  f->d,     f->w23,   f->w32, f->s,    f->row,
                          f->empty, f->v2,  f->v2_1,  f->v2_64, f->v3,  f->v3_1, f->v3_64,
                          f->one64, f->i,   f->i_1,   f->i2,    f->i3,  f->i22,  f->i5,
                          f->ineg,  f->img, f->img2c, f->img3,  f->ker, f->ker1, f->ker64,
                          f->p,     f->rg,  f->y,     f->gleaf};
  for (size_t k = 0; k < sizeof tensors / sizeof tensors[0]; ++k) dp_tensor_release(tensors[k]);
  dp_data_parallel_release(f->dpw);
  dp_optimizer_release(f->opt);
  dp_module_release(f->lin);
  dp_module_release(f->lin2);
  dp_module_release(f->lin3);
  dp_module_release(f->seq);
  dp_module_release(f->relu);
  dp_module_release(f->custom);
  dp_context_release(f->ctx);
  remove(f->path);
  remove(f->scratch_path);
  free(f);
  return 0;
}

/* ---------------------------------------------------------------------------------- */
/* The runner                                                                        */
/* ---------------------------------------------------------------------------------- */

/* Whether a failed call wrote any output; releases whatever handle it handed out anyway. */
static int outputs_written(scratch* o) {
  scratch pattern;
  memset(&pattern, PATTERN, sizeof pattern);
  if (memcmp(o, &pattern, sizeof pattern) == 0) return 0;
  /* Handles that differ from the pattern were written: give them back. */
  if (o->ctx != pattern.ctx && o->ctx) dp_context_release(o->ctx);
  if (o->t != pattern.t && o->t) dp_tensor_release(o->t);
  if (o->m != pattern.m && o->m) dp_module_release(o->m);
  if (o->opt != pattern.opt && o->opt) dp_optimizer_release(o->opt);
  if (o->dp != pattern.dp && o->dp) dp_data_parallel_release(o->dp);
  if (o->dl != pattern.dl && o->dl && o->dl->deleter) o->dl->deleter(o->dl);
  for (int k = 0; k < 4; ++k) {
    if (o->ts[k] != pattern.ts[k] && o->ts[k]) dp_tensor_release(o->ts[k]);
    if (o->ms[k] != pattern.ms[k] && o->ms[k]) dp_module_release(o->ms[k]);
  }
  return 1;
}

/* Runs one row; returns whether it behaved as the table says, describing it in `why`. */
static int run_row(fixture* f, const row* r, char* why, size_t why_size) {
  scratch o;
  memset(&o, PATTERN, sizeof o);
  dp_set_error(DP_OK, ""); /* a stale message must not satisfy the needle */
  const dp_result got = r->call(f, &o);
  const char* msg = dp_last_error();
  const int wrote = outputs_written(&o);
  if (got != r->code) {
    snprintf(why, why_size, "returned %s (%d), expected %s; message \"%s\"", dp_result_string(got),
             (int)got, dp_result_string(r->code), msg);
    return 0;
  }
  if (strstr(msg, r->needle) == NULL) {
    snprintf(why, why_size, "message \"%s\" does not contain \"%s\"", msg, r->needle);
    return 0;
  }
  if (wrote) {
    snprintf(why, why_size, "failed as expected but wrote an output");
    return 0;
  }
  return 1;
}

static void every_row_fails_with_its_code_and_names_the_argument(void** state) {
  fixture* f = (fixture*)*state;
  const int verbose = getenv("DP_BAD_INPUT_VERBOSE") != NULL;
  const char* only = getenv("DP_BAD_INPUT_ONLY"); /* one row's name: run just that row */
  size_t failed = 0;
  for (size_t k = 0; k < N_ROWS; ++k) {
    const row* r = &kRows[k];
    char why[1024];
    if (only != NULL && strcmp(only, r->name) != 0) continue;
    if (verbose) print_message("  running %s\n", r->name);
    if (!run_row(f, r, why, sizeof why)) {
      print_error("row %s: %s\n", r->name, why);
      ++failed;
    }
  }
  print_message("bad-input table: %zu rows, %zu failed\n", (size_t)N_ROWS, failed);
  assert_int_equal(failed, 0);
}

/* Every failed adopt above called the deleter exactly once (and no borrow did). */
static void adopt_rows_call_the_deleter_once_each(void** state) {
  fixture* f = (fixture*)*state;
  size_t adopt_rows = 0;
  for (size_t k = 0; k < N_ROWS; ++k) {
    if (strncmp(kRows[k].name, "tensor_from_adopted__", 21) == 0) ++adopt_rows;
  }
  assert_true(adopt_rows > 0);
  f->freed = 0;
  for (size_t k = 0; k < N_ROWS; ++k) {
    if (strncmp(kRows[k].name, "tensor_from_adopted__", 21) != 0) continue;
    const int before = f->freed;
    char why[1024];
    (void)run_row(f, &kRows[k], why, sizeof why);
    if (f->freed != before + 1)
      fail_msg("%s: the deleter ran %d times", kRows[k].name, f->freed - before);
  }
}

/* ---------------------------------------------------------------------------------- */
/* Functions without a dp_result                                                     */
/* ---------------------------------------------------------------------------------- */

static void release_functions_accept_null_and_retain_returns_it(void** state) {
  (void)state;
  dp_context_release(NULL);
  dp_tensor_release(NULL);
  dp_module_release(NULL);
  dp_optimizer_release(NULL);
  dp_data_parallel_release(NULL);
  assert_null(dp_tensor_retain(NULL));
  assert_null(dp_module_retain(NULL));
}

static void result_string_describes_known_codes_and_flags_others(void** state) {
  (void)state;
  for (int c = DP_OK; c <= DP_ERR_INTERNAL; ++c) {
    const char* s = dp_result_string((dp_result)c);
    assert_non_null(s);
    assert_true(strlen(s) > 0);
    assert_string_not_equal(s, "unknown result code");
    for (int other = DP_OK; other < c; ++other)
      assert_string_not_equal(s, dp_result_string((dp_result)other));
  }
  const int unknown[] = {DP_ERR_INTERNAL + 1, -1, INT32_MIN, INT32_MAX};
  for (size_t k = 0; k < sizeof unknown / sizeof unknown[0]; ++k)
    assert_string_equal(dp_result_string((dp_result)unknown[k]), "unknown result code");
}

static void versions_match_the_header(void** state) {
  (void)state;
  assert_int_equal(dp_version_number(), DP_VERSION_NUMBER);
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", DP_VERSION_MAJOR, DP_VERSION_MINOR, DP_VERSION_PATCH);
  assert_non_null(dp_version_string());
  assert_string_equal(dp_version_string(), expect);
}

static void dtype_size_is_zero_for_unknown_dtypes(void** state) {
  (void)state;
  assert_int_equal(dp_dtype_size(DP_FLOAT32), 4);
  assert_int_equal(dp_dtype_size(DP_FLOAT64), 8);
  assert_int_equal(dp_dtype_size(DP_INT64), 8);
  assert_int_equal(dp_dtype_size(DP_BFLOAT16), 2);
  assert_int_equal(dp_dtype_size((dp_dtype)4), 0);
  assert_int_equal(dp_dtype_size((dp_dtype)9), 0);
  assert_int_equal(dp_dtype_size((dp_dtype)-1), 0);
  assert_int_equal(dp_dtype_size((dp_dtype)INT32_MAX), 0);
}

static void grad_mode_treats_any_non_zero_as_on_and_returns_the_previous_setting(void** state) {
  (void)state;
  assert_int_equal(dp_is_grad_enabled(), 1);
  assert_int_equal(dp_set_grad_enabled(0), 1);
  assert_int_equal(dp_is_grad_enabled(), 0);
  assert_int_equal(dp_set_grad_enabled(-7), 0);
  assert_int_equal(dp_is_grad_enabled(), 1);
  assert_int_equal(dp_set_grad_enabled(1), 1);
  assert_int_equal(dp_is_grad_enabled(), 1);
}

static void set_error_returns_its_code_and_accepts_a_null_message(void** state) {
  (void)state;
  assert_int_equal(dp_set_error(DP_ERR_CALLBACK, "weights not loaded"), DP_ERR_CALLBACK);
  assert_string_equal(dp_last_error(), "weights not loaded");
  assert_int_equal(dp_set_error(DP_ERR_STATE, NULL), DP_ERR_STATE);
  assert_non_null(dp_last_error());
  assert_string_equal(dp_last_error(), "");
  assert_int_equal(dp_set_error((dp_result)12345, "odd code"), 12345);
  assert_string_equal(dp_last_error(), "odd code");
}

static void get_api_is_null_for_versions_it_does_not_have(void** state) {
  (void)state;
  assert_null(dp_get_api(0));
  assert_null(dp_get_api(DP_API_VERSION + 1));
  assert_null(dp_get_api(UINT32_MAX));
  const dp_api* api = dp_get_api(DP_API_VERSION);
  assert_non_null(api);
  assert_int_equal(api->version, DP_API_VERSION);
  assert_int_equal(api->struct_size, sizeof(dp_api));
  assert_ptr_equal(api->op_add, dp_op_add);
}

/* Too-small capacities that are not errors: strings are truncated, lists report their full
   length. */
static void short_buffers_truncate_and_report_the_full_length(void** state) {
  fixture* f = (fixture*)*state;
  char buf[4] = "xyz";
  size_t needed = 0;
  ASSERT_OK(dp_device_name(f->ctx, cpu_dev(1), buf, sizeof buf, &needed));
  assert_string_equal(buf, "cpu");
  assert_true(needed > sizeof buf);
  size_t needed0 = 0;
  ASSERT_OK(dp_device_name(f->ctx, cpu_dev(1), NULL, 0, &needed0));
  assert_int_equal(needed0, needed);
  char full[256];
  ASSERT_OK(dp_device_name(f->ctx, cpu_dev(1), full, sizeof full, NULL));
  assert_int_equal(strlen(full) + 1, needed);
  assert_true(strncmp(full, "cpu:1", 5) == 0);

  char one[1] = {'x'};
  ASSERT_OK(dp_checkpoint_metadata(f->path, "epoch", one, sizeof one, &needed));
  assert_int_equal(one[0], '\0');
  assert_int_equal(needed, 2);
  char two[2];
  ASSERT_OK(dp_checkpoint_metadata(f->path, "epoch", two, sizeof two, NULL));
  assert_string_equal(two, "3");

  dp_device devs[1] = {{DP_DEVICE_CUDA, 99}};
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_devices(f->dpw, devs, 1, &n));
  assert_int_equal(n, 2);
  assert_int_equal(devs[0].type, DP_DEVICE_CPU);
  assert_int_equal(devs[0].index, 0);
  ASSERT_OK(dp_data_parallel_devices(f->dpw, NULL, 0, &n));
  assert_int_equal(n, 2);
}

static void last_error_is_never_null(void** state) {
  (void)state;
  assert_non_null(dp_last_error());
  dp_tensor* t = NULL;
  assert_int_equal(dp_tensor_zeros(NULL, DP_FLOAT32, NULL, 0, cpu_dev(0), &t),
                   DP_ERR_INVALID_ARGUMENT);
  assert_non_null(dp_last_error());
  assert_true(strlen(dp_last_error()) > 0);
  assert_null(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_row_fails_with_its_code_and_names_the_argument),
      cmocka_unit_test(adopt_rows_call_the_deleter_once_each),
      cmocka_unit_test(release_functions_accept_null_and_retain_returns_it),
      cmocka_unit_test(result_string_describes_known_codes_and_flags_others),
      cmocka_unit_test(versions_match_the_header),
      cmocka_unit_test(dtype_size_is_zero_for_unknown_dtypes),
      cmocka_unit_test(grad_mode_treats_any_non_zero_as_on_and_returns_the_previous_setting),
      cmocka_unit_test(set_error_returns_its_code_and_accepts_a_null_message),
      cmocka_unit_test(get_api_is_null_for_versions_it_does_not_have),
      cmocka_unit_test(short_buffers_truncate_and_report_the_full_length),
      cmocka_unit_test(last_error_is_never_null),
  };
  return cmocka_run_group_tests_name("bad_input", tests, setup, teardown);
}
