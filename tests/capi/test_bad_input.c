/* Bad input through every public function of the C API, driven by one table
   (bad_input_rows.h): each row makes one call with one bad argument and names the dp_result
   it must return and a substring of dp_last_error() that names the argument and its value. The
   runner also checks that a failing call leaves every output untouched (the header's convention).

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
/* The table                                                                         */
/* ---------------------------------------------------------------------------------- */

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

/* Each row's call, a function named as the row. */
#define BAD(id, call, code, needle)             \
  static dp_result id(fixture* f, scratch* o) { \
    (void)f;                                    \
    (void)o;                                    \
    return (call);                              \
  }
#include "bad_input_rows.h"
#undef BAD

typedef struct row {
  const char* name;
  dp_result (*call)(fixture* f, scratch* o);
  dp_result code;     /* the result the call must return */
  const char* needle; /* dp_last_error() must contain it: the argument and its value */
} row;

static const row kRows[] = {
#define BAD(id, call, code, needle) {#id, id, code, needle},
#include "bad_input_rows.h"
#undef BAD
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
