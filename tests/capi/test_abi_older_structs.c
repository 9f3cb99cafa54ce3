/* Option structs by struct_size: a caller built against an older header passes a shorter
 * struct, and the library takes the members it has and defaults the others; one built
 * against a newer header passes a longer struct, accepted while the bytes this library
 * does not know are zero. Each "older" struct below is declared here as an older header
 * would declare it. It sits inside a wrapper whose next members lie exactly where the
 * current struct's missing members are, filled with values other than the defaults: a
 * library reading past struct_size would see them. */
#include "torch_compare.h"

/* ---- dp_context_options ----------------------------------------------------------- */

/* The first version: every member up to seed, without log_user_data_free. */
typedef struct older_context_options {
  size_t struct_size;
  int32_t cpu_devices;
  int32_t load_cuda;
  int32_t allow_tf32;
  dp_log_level log_level;
  dp_log_fn log_fn;
  void* log_user_data;
  uint64_t seed;
} older_context_options;

typedef struct {
  older_context_options o;
  void (*not_log_user_data_free)(void*);
} context_options_then_poison;

static int poison_calls;
static void count_poison_call(void* user_data) {
  (void)user_data;
  ++poison_calls;
}
static void quiet_log(void* user_data, dp_log_level level, const char* message) {
  (void)user_data, (void)level, (void)message;
}

/* The weight of a Linear(2, 2) made first in a context (drawn from its seed). */
static void first_linear_weight(dp_context* ctx, float out[4]) {
  dp_module* m = NULL;
  dp_tensor* w = NULL;
  ASSERT_OK(dp_module_linear(ctx, 2, 2, 0, cpu_dev(0), &m));
  ASSERT_OK(dp_module_get(m, "weight", &w));
  read_f32(w, out, 4);
  dp_tensor_release(w);
  dp_module_release(m);
}

static void context_takes_the_first_versions_members_and_leaves_the_free_function_unset(
    void** state) {
  (void)state;
  context_options_then_poison s;
  memset(&s, 0, sizeof s);
  s.o.struct_size = sizeof(older_context_options);
  s.o.cpu_devices = 3;
  s.o.load_cuda = 0;
  s.o.log_level = DP_LOG_ERROR;
  s.o.log_fn = quiet_log;
  s.o.log_user_data = &poison_calls;
  s.o.seed = 1234;
  s.not_log_user_data_free = count_poison_call;
  poison_calls = 0;
  dp_context* ctx = NULL;
  ASSERT_OK(dp_context_create((const dp_context_options*)&s.o, &ctx));
  int32_t n = 0;
  ASSERT_OK(dp_device_count(ctx, DP_DEVICE_CPU, &n));
  assert_int_equal(n, 3);
  float older[4];
  first_linear_weight(ctx, older);
  dp_context_release(ctx);
  assert_int_equal(poison_calls, 0); /* log_user_data_free stayed NULL */

  dp_context_options current = DP_CONTEXT_OPTIONS_INIT;
  current.cpu_devices = 3;
  current.load_cuda = 0;
  current.seed = 1234;
  ASSERT_OK(dp_context_create(&current, &ctx));
  float expected[4];
  first_linear_weight(ctx, expected);
  dp_context_release(ctx);
  assert_memory_equal(older, expected, sizeof older); /* the seed was taken */
}

/* ---- dp_sgd_options ---------------------------------------------------------------- */

/* The struct as it has always been, cut after momentum: no dampening, weight_decay,
   nesterov. */
typedef struct older_sgd_options {
  size_t struct_size;
  double lr;
  double momentum;
} older_sgd_options;

typedef struct {
  older_sgd_options o;
  double not_dampening;
  double not_weight_decay;
  int not_nesterov;
} sgd_options_then_poison;

/* Linear(1, 1) without bias, its weight 1: the optimizer's one parameter. */
static dp_module* one_weight(dp_context* ctx) {
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 1, 1, 0, cpu_dev(0), &m));
  dp_tensor* w = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &w));
  void* data = NULL;
  ASSERT_OK(dp_tensor_data(w, &data));
  *(float*)data = 1.0f;
  dp_tensor_release(w);
  return m;
}

/* Steps `opt` over m's weight with the gradients 1 then 2 and returns the weight. */
static float weight_after_two_steps(dp_context* ctx, dp_module* m, dp_optimizer* opt) {
  static const int64_t shape[2] = {1, 1};
  dp_tensor* w = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &w));
  for (int k = 1; k <= 2; ++k) {
    const float g = (float)k;
    ASSERT_OK(dp_optimizer_zero_grad(opt));
    backward_weighted_sum(ctx, w, &g, shape, 2);
    ASSERT_OK(dp_optimizer_step(opt));
  }
  float value = 0;
  read_f32(w, &value, 1);
  dp_tensor_release(w);
  return value;
}

static void sgd_takes_lr_and_momentum_and_defaults_the_rest(void** state) {
  dp_context* ctx = (dp_context*)*state;
  sgd_options_then_poison s;
  memset(&s, 0, sizeof s);
  s.o.struct_size = sizeof(older_sgd_options);
  s.o.lr = 0.1;
  s.o.momentum = 0.9;
  s.not_dampening = 0.5;
  s.not_weight_decay = 10.0;
  s.not_nesterov = 1;
  dp_module* m = one_weight(ctx);
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_sgd(m, (const dp_sgd_options*)&s.o, &opt));
  /* buf = 1, w = 1 - 0.1 * 1 = 0.9; buf = 0.9 * 1 + 2 = 2.9, w = 0.9 - 0.1 * 2.9 = 0.61
     (torch.optim.SGD(lr=0.1, momentum=0.9) gives 0.61 too). */
  assert_float_equal(weight_after_two_steps(ctx, m, opt), 0.61, 1e-6);
  dp_optimizer_release(opt);
  dp_module_release(m);
}

static void sgd_with_struct_size_alone_takes_every_default(void** state) {
  dp_context* ctx = (dp_context*)*state;
  sgd_options_then_poison s;
  memset(&s, 0, sizeof s);
  s.o.struct_size = sizeof(size_t);
  s.o.lr = 0.5; /* past struct_size: not read */
  s.o.momentum = 0.9;
  s.not_weight_decay = 10.0;
  dp_module* m = one_weight(ctx);
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_sgd(m, (const dp_sgd_options*)&s.o, &opt));
  double lr = 0;
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_float_equal(lr, 0.01, 0);
  /* w = 1 - 0.01 * 1 - 0.01 * 2 = 0.97 */
  assert_float_equal(weight_after_two_steps(ctx, m, opt), 0.97, 1e-6);
  dp_optimizer_release(opt);
  dp_module_release(m);
}

/* ---- dp_adam_options --------------------------------------------------------------- */

/* Cut after beta2: no eps, no weight_decay. */
typedef struct older_adam_options {
  size_t struct_size;
  double lr;
  double beta1;
  double beta2;
} older_adam_options;

typedef struct {
  older_adam_options o;
  double not_eps;
  double not_weight_decay;
} adam_options_then_poison;

static float adam_after_two_steps(dp_context* ctx, int decoupled) {
  adam_options_then_poison s;
  memset(&s, 0, sizeof s);
  s.o.struct_size = sizeof(older_adam_options);
  s.o.lr = 0.1;
  s.o.beta1 = 0.5;
  s.o.beta2 = 0.75;
  s.not_eps = 1.0;
  s.not_weight_decay = 0.5;
  dp_module* m = one_weight(ctx);
  dp_optimizer* opt = NULL;
  const dp_adam_options* o = (const dp_adam_options*)&s.o;
  ASSERT_OK(decoupled ? dp_optimizer_adamw(m, o, &opt) : dp_optimizer_adam(m, o, &opt));
  const float w = weight_after_two_steps(ctx, m, opt);
  dp_optimizer_release(opt);
  dp_module_release(m);
  return w;
}

/* Adam (eps 1e-8, weight decay 0 by default), lr 0.1, betas 0.5 and 0.75, gradients 1, 2:
   step 1: m = 0.5, v = 0.25, m^ = v^ = 1, w = 1 - 0.1 = 0.9;
   step 2: m = 1.25, v = 1.1875, m^ = 1.25 / 0.75, v^ = 1.1875 / 0.4375,
           w = 0.9 - 0.1 * m^ / sqrt(v^) = 0.798837 (torch.optim.Adam: 0.7988372).
   AdamW defaults its weight decay to 0.01: each step first scales w by 1 - 0.1 * 0.01:
   w = 0.999 - 0.1 = 0.899, then 0.899 * 0.999 - 0.101163 = 0.796938 (AdamW: 0.7969382). */
static void adam_and_adamw_take_lr_and_betas_and_default_eps_and_weight_decay(void** state) {
  dp_context* ctx = (dp_context*)*state;
  assert_float_equal(adam_after_two_steps(ctx, 0), 0.798837, 2e-6);
  assert_float_equal(adam_after_two_steps(ctx, 1), 0.796938, 2e-6);
}

/* ---- dp_custom_module_desc --------------------------------------------------------- */

/* Cut after user_data: no destroy. */
typedef struct older_custom_module_desc {
  size_t struct_size;
  const char* type_name;
  dp_forward_fn forward;
  void* user_data;
} older_custom_module_desc;

typedef struct {
  older_custom_module_desc d;
  void (*not_destroy)(void*);
} custom_module_desc_then_poison;

/* Rows each device's forward saw, by device index. */
typedef struct rows_seen {
  int64_t rows[4];
} rows_seen;

/* Identity; records the rows of its input under its device's index. */
static dp_result identity_recording_rows(void* user_data, dp_module* self, dp_tensor* const* inputs,
                                         size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                                         size_t* n_outputs) {
  (void)self, (void)n_inputs, (void)max_outputs;
  dp_device device;
  int64_t shape[2];
  if (dp_tensor_device(inputs[0], &device) != DP_OK) return DP_ERR_INTERNAL;
  if (dp_tensor_shape(inputs[0], shape, 2) != DP_OK) return DP_ERR_INTERNAL;
  ((rows_seen*)user_data)->rows[device.index] = shape[0];
  outputs[0] = dp_tensor_retain(inputs[0]);
  *n_outputs = 1;
  return DP_OK;
}

static dp_module* older_custom_module(dp_context* ctx, rows_seen* seen) {
  custom_module_desc_then_poison s;
  memset(&s, 0, sizeof s);
  s.d.struct_size = sizeof(older_custom_module_desc);
  s.d.type_name = "Older";
  s.d.forward = identity_recording_rows;
  s.d.user_data = seen;
  s.not_destroy = count_poison_call;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_custom(ctx, (const dp_custom_module_desc*)&s.d, &m));
  return m;
}

static void custom_module_takes_name_forward_and_data_and_has_no_destroy(void** state) {
  dp_context* ctx = (dp_context*)*state;
  rows_seen seen = {{0}};
  poison_calls = 0;
  dp_module* m = older_custom_module(ctx, &seen);
  const char* type = NULL;
  ASSERT_OK(dp_module_type_name(m, &type));
  assert_string_equal(type, "Older");
  const float x[6] = {1, 2, 3, 4, 5, 6};
  const int64_t shape[2] = {3, 2};
  dp_tensor* in = make_f32(ctx, x, shape, 2, cpu_dev(0));
  dp_tensor* out = NULL;
  ASSERT_OK(dp_module_forward1(m, in, &out));
  assert_int_equal(seen.rows[0], 3);
  dp_tensor_release(out);
  dp_tensor_release(in);
  dp_module_release(m);
  assert_int_equal(poison_calls, 0); /* destroy stayed NULL */
}

/* ---- dp_data_parallel_options ------------------------------------------------------ */

/* Cut after n_chunk_sizes: no no_gather, cache_replicas, buffer_sync, alias_cpu,
   bucket_bytes. (One cut after alias_cpu would leave only bucket_bytes, which nothing
   the API returns shows.) */
typedef struct older_data_parallel_options {
  size_t struct_size;
  const int64_t* chunk_sizes;
  size_t n_chunk_sizes;
} older_data_parallel_options;

typedef struct {
  older_data_parallel_options o;
  int not_no_gather;
  int not_cache_replicas;
  int not_buffer_sync; /* not a dp_buffer_sync: refused if read */
  int not_alias_cpu;
  size_t not_bucket_bytes;
} data_parallel_options_then_poison;

static void data_parallel_takes_chunk_sizes_and_gathers_by_default(void** state) {
  dp_context* ctx = (dp_context*)*state;
  rows_seen seen = {{0}};
  dp_module* m = older_custom_module(ctx, &seen);
  static const int64_t chunks[2] = {1, 3};
  data_parallel_options_then_poison s;
  memset(&s, 0, sizeof s);
  s.o.struct_size = sizeof(older_data_parallel_options);
  s.o.chunk_sizes = chunks;
  s.o.n_chunk_sizes = 2;
  s.not_no_gather = 1;
  s.not_cache_replicas = 1;
  s.not_buffer_sync = 7;
  s.not_bucket_bytes = 1;
  const dp_device devices[2] = {cpu_dev(0), cpu_dev(1)};
  dp_data_parallel* dp = NULL;
  ASSERT_OK(
      dp_data_parallel_create(m, devices, 2, NULL, 0, (const dp_data_parallel_options*)&s.o, &dp));
  const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int64_t shape[2] = {4, 2};
  dp_tensor* in = make_f32(ctx, x, shape, 2, cpu_dev(0));
  dp_tensor* outs[2] = {NULL, NULL};
  size_t n = 0;
  ASSERT_OK(dp_data_parallel_forward(dp, &in, NULL, 1, outs, 2, &n));
  assert_int_equal(seen.rows[0], 1); /* chunk_sizes taken */
  assert_int_equal(seen.rows[1], 3);
  assert_int_equal(n, 1); /* no_gather 0: one gathered output */
  float y[8];
  read_f32(outs[0], y, 8);
  assert_memory_equal(y, x, sizeof x);
  dp_tensor_release(outs[0]);
  dp_tensor_release(in);
  dp_data_parallel_release(dp);
  dp_module_release(m);
}

/* ---- struct_size out of bounds, and newer structs ---------------------------------- */

static void a_struct_size_no_version_has_is_refused_naming_the_struct_and_value(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = one_weight(ctx);
  dp_optimizer* opt = NULL;
  dp_context* other = NULL;

  dp_context_options c = DP_CONTEXT_OPTIONS_INIT;
  c.struct_size = offsetof(dp_context_options, seed); /* before the first version's end */
  ASSERT_ERROR(dp_context_create(&c, &other), DP_ERR_INVALID_ARGUMENT,
               "options->struct_size = 40 is not the size of a dp_context_options");

  dp_sgd_options sgd = DP_SGD_OPTIONS_INIT;
  sgd.struct_size = 4;
  ASSERT_ERROR(dp_optimizer_sgd(m, &sgd, &opt), DP_ERR_INVALID_ARGUMENT,
               "options->struct_size = 4 is not the size of a dp_sgd_options");
  sgd.struct_size = 20; /* ends inside lr */
  ASSERT_ERROR(dp_optimizer_sgd(m, &sgd, &opt), DP_ERR_INVALID_ARGUMENT,
               "options->struct_size = 20 is not the size of a dp_sgd_options");
  sgd.struct_size = 8192; /* an uninitialised struct_size is not read as a size */
  ASSERT_ERROR(dp_optimizer_sgd(m, &sgd, &opt), DP_ERR_INVALID_ARGUMENT,
               "options->struct_size = 8192 is not the size of a dp_sgd_options");

  dp_adam_options adam = DP_ADAM_OPTIONS_INIT;
  adam.struct_size = 0;
  ASSERT_ERROR(dp_optimizer_adamw(m, &adam, &opt), DP_ERR_INVALID_ARGUMENT,
               "options->struct_size = 0 is not the size of a dp_adam_options");

  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = identity_recording_rows;
  desc.struct_size = 1;
  dp_module* custom = NULL;
  ASSERT_ERROR(dp_module_custom(ctx, &desc, &custom), DP_ERR_INVALID_ARGUMENT,
               "desc->struct_size = 1 is not the size of a dp_custom_module_desc");

  dp_data_parallel_options dpo = DP_DATA_PARALLEL_OPTIONS_INIT;
  dpo.struct_size = 7;
  dp_data_parallel* dp = NULL;
  ASSERT_ERROR(dp_data_parallel_create(m, NULL, 0, NULL, 0, &dpo, &dp), DP_ERR_INVALID_ARGUMENT,
               "options->struct_size = 7 is not the size of a dp_data_parallel_options");
  assert_null(other);
  assert_null(opt);
  assert_null(custom);
  assert_null(dp);
  dp_module_release(m);
}

/* A newer header's struct: this one plus a member the library does not know. */
typedef struct {
  dp_sgd_options o;
  uint64_t newer;
} newer_sgd_options;

typedef struct {
  dp_context_options o;
  uint64_t newer;
} newer_context_options;

typedef struct {
  dp_data_parallel_options o;
  uint64_t newer;
} newer_data_parallel_options;

static void a_newer_struct_is_taken_while_its_unknown_members_are_zero(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = one_weight(ctx);

  newer_sgd_options sgd;
  memset(&sgd, 0, sizeof sgd);
  sgd.o = (dp_sgd_options)DP_SGD_OPTIONS_INIT;
  sgd.o.struct_size = sizeof sgd;
  sgd.o.lr = 0.25;
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_sgd(m, &sgd.o, &opt));
  double lr = 0;
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_float_equal(lr, 0.25, 0);
  dp_optimizer_release(opt);
  opt = NULL;
  sgd.newer = 1;
  char needle[128];
  snprintf(needle, sizeof needle,
           "options->struct_size = %zu is larger than this library's dp_sgd_options (%zu bytes) "
           "and byte %zu is not zero",
           sizeof sgd, sizeof(dp_sgd_options), offsetof(newer_sgd_options, newer));
  ASSERT_ERROR(dp_optimizer_sgd(m, &sgd.o, &opt), DP_ERR_NOT_SUPPORTED, needle);
  assert_null(opt);

  newer_context_options c;
  memset(&c, 0, sizeof c);
  c.o = (dp_context_options)DP_CONTEXT_OPTIONS_INIT;
  c.o.struct_size = sizeof c;
  c.o.cpu_devices = 1;
  c.o.load_cuda = 0;
  dp_context* other = NULL;
  ASSERT_OK(dp_context_create(&c.o, &other));
  dp_context_release(other);
  other = NULL;
  c.newer = UINT64_C(1) << 63;
  ASSERT_ERROR(dp_context_create(&c.o, &other), DP_ERR_NOT_SUPPORTED, "dp_context_options");
  assert_null(other);

  newer_data_parallel_options dpo;
  memset(&dpo, 0, sizeof dpo);
  dpo.o = (dp_data_parallel_options)DP_DATA_PARALLEL_OPTIONS_INIT;
  dpo.o.struct_size = sizeof dpo;
  dp_data_parallel* dp = NULL;
  ASSERT_OK(dp_data_parallel_create(m, NULL, 0, NULL, 0, &dpo.o, &dp));
  dp_data_parallel_release(dp);
  dp = NULL;
  dpo.newer = 3;
  ASSERT_ERROR(dp_data_parallel_create(m, NULL, 0, NULL, 0, &dpo.o, &dp), DP_ERR_NOT_SUPPORTED,
               "dp_data_parallel_options");
  assert_null(dp);
  dp_module_release(m);
}

static int setup(void** state) {
  *state = make_context(2);
  return 0;
}

static int teardown(void** state) {
  dp_context_release((dp_context*)*state);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(context_takes_the_first_versions_members_and_leaves_the_free_function_unset),
      cmocka_unit_test(sgd_takes_lr_and_momentum_and_defaults_the_rest),
      cmocka_unit_test(sgd_with_struct_size_alone_takes_every_default),
      cmocka_unit_test(adam_and_adamw_take_lr_and_betas_and_default_eps_and_weight_decay),
      cmocka_unit_test(custom_module_takes_name_forward_and_data_and_has_no_destroy),
      cmocka_unit_test(data_parallel_takes_chunk_sizes_and_gathers_by_default),
      cmocka_unit_test(a_struct_size_no_version_has_is_refused_naming_the_struct_and_value),
      cmocka_unit_test(a_newer_struct_is_taken_while_its_unknown_members_are_zero),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
