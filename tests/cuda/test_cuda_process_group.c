/* Process-group collectives on CUDA tensors, under mpirun (tests/cuda.cmake):
 *   DP_TEST_EXPECT_ROUTE=nccl     the collectives must run on NCCL (one GPU per rank),
 *   DP_TEST_EXPECT_ROUTE=staging  they must go through host memory and MPI, and the log
 *                                 must say why, containing DP_TEST_EXPECT_REASON when set
 *                                 (two ranks on one GPU: "share one GPU").
 * Each rank works on cuda:(local rank mod the CUDA devices), fills its tensors from its
 * rank, runs allreduce (sum, average, max, min; bfloat16 sum and average on the NCCL
 * route), broadcast and allgather, and compares every element with the value computed
 * here from the ranks' inputs; then DistributedDataParallel over a model on that device,
 * whose gradient buckets must live on the device on the NCCL route and in host memory
 * otherwise, with float32 and bfloat16 allreduces. Exit status 0 when
 * every check passed, 77 (skip) without a CUDA device or with fewer GPUs than
 * DP_TEST_MIN_GPUS, 1 on a failed check. DP_TEST_EXPECT_INVALID_ENV=1 runs one check
 * instead: the first CUDA collective fails naming DP_DISTRIBUTED_CUDA (set it wrong).
 * tests/cuda/fake_cuda_plugin.cc stands in for the CUDA plugin on machines without a GPU. */
#include <dataparallel/dataparallel.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../distributed/ddp_util.h"

static int g_rank, g_size, g_failures, g_checks;
static dp_device g_dev;

/* The process group's messages about its route for CUDA tensors, and DDP's about where
   its gradient buckets live. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_route_log[4096];
static char g_bucket_log[1024];

static void append_line(char* log, size_t size, const char* message) {
  const size_t used = strlen(log);
  if (used + 2 < size) {
    strncat(log, message, size - used - 2);
    strcat(log, "\n");
  }
}

static void on_log(void* user_data, dp_log_level level, const char* message) {
  (void)user_data;
  (void)level;
  pthread_mutex_lock(&g_log_mu);
  if (strstr(message, "collectives on cuda:")) {
    append_line(g_route_log, sizeof g_route_log, message);
  } else if (strstr(message, "gradient buckets")) {
    append_line(g_bucket_log, sizeof g_bucket_log, message);
  }
  pthread_mutex_unlock(&g_log_mu);
}

static void check(int ok, const char* test, const char* what) {
  ++g_checks;
  if (ok) return;
  ++g_failures;
  fprintf(stderr, "rank %d: FAILED %s: %s\n", g_rank, test, what);
}

/* bfloat16 bits <-> value, for values a bfloat16 holds exactly (float32's upper half). */
static double bf16_value(uint16_t bits) {
  const uint32_t u = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint16_t bf16_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (u & 0xffffu) {
    fprintf(stderr, "test_cuda_process_group: %g is not a bfloat16 value\n", (double)f);
    abort();
  }
  return (uint16_t)(u >> 16);
}

/* Compares n values read back from t with expected, each within tolerance of itself
   (absolute below 1); reports the first difference. */
static void expect_values(const char* test, dp_tensor* t, const double* expected, int64_t n,
                          dp_dtype dtype, double tolerance) {
  int64_t numel = 0;
  MUST(dp_tensor_numel(t, &numel));
  if (numel != n) {
    char text[128];
    snprintf(text, sizeof text, "%lld elements, expected %lld", (long long)numel, (long long)n);
    check(0, test, text);
    return;
  }
  dp_device where;
  MUST(dp_tensor_device(t, &where));
  check(where.type == g_dev.type && where.index == g_dev.index, test,
        "the result is not on the rank's CUDA device");
  const size_t size = dtype == DP_FLOAT32 ? 4 : dtype == DP_BFLOAT16 ? 2 : 8;
  void* host = malloc((size_t)n * size);
  MUST(dp_tensor_to_host(t, host, (size_t)n * size));
  for (int64_t i = 0; i < n; ++i) {
    double got = 0;
    if (dtype == DP_FLOAT32) got = ((const float*)host)[i];
    if (dtype == DP_FLOAT64) got = ((const double*)host)[i];
    if (dtype == DP_INT64) got = (double)((const int64_t*)host)[i];
    if (dtype == DP_BFLOAT16) got = bf16_value(((const uint16_t*)host)[i]);
    if (!(fabs(got - expected[i]) <= tolerance * fmax(1.0, fabs(expected[i])))) {
      char text[160];
      snprintf(text, sizeof text, "element %lld is %.17g, expected %.17g", (long long)i, got,
               expected[i]);
      check(0, test, text);
      free(host);
      return;
    }
  }
  check(1, test, "");
  free(host);
}

static dp_tensor* cuda_tensor(dp_context* ctx, dp_dtype dtype, const int64_t* shape, size_t ndim,
                              const void* data, size_t nbytes) {
  dp_tensor* t = NULL;
  MUST(dp_tensor_from_data(ctx, dtype, shape, ndim, data, nbytes, g_dev, &t));
  return t;
}

/* The input is a kernel's output (x * 2 on the GPU), queued just before the allreduce:
   the collective must see it. */
static void allreduce_sum_sees_the_kernel_queued_before_it(dp_context* ctx, dp_process_group* g) {
  const int64_t n = 3000;
  float* x = malloc((size_t)n * sizeof *x);
  double* expected = malloc((size_t)n * sizeof *expected);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = (float)((g_rank + 1) * (i % 97 + 1));
    expected[i] = 2.0 * (double)(i % 97 + 1) * g_size * (g_size + 1) / 2;
  }
  dp_tensor* t = cuda_tensor(ctx, DP_FLOAT32, &n, 1, x, (size_t)n * sizeof *x);
  dp_tensor* doubled = NULL;
  MUST(dp_op_scale(t, 2.0, &doubled));
  MUST(dp_process_group_allreduce(g, doubled, DP_REDUCE_SUM));
  expect_values(__func__, doubled, expected, n, DP_FLOAT32, 0);
  dp_tensor_release(doubled);
  dp_tensor_release(t);
  free(x);
  free(expected);
}

/* 4 MiB: NCCL splits it into many chunks. Sums stay below 2^24: exact in float32. */
static void allreduce_sum_of_four_mebibytes(dp_context* ctx, dp_process_group* g) {
  const int64_t n = (int64_t)1 << 20;
  float* x = malloc((size_t)n * sizeof *x);
  double* expected = malloc((size_t)n * sizeof *expected);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = (float)(g_rank + (i & 255));
    expected[i] = (double)g_size * (g_size - 1) / 2 + (double)g_size * (double)(i & 255);
  }
  dp_tensor* t = cuda_tensor(ctx, DP_FLOAT32, &n, 1, x, (size_t)n * sizeof *x);
  MUST(dp_process_group_allreduce(g, t, DP_REDUCE_SUM));
  expect_values(__func__, t, expected, n, DP_FLOAT32, 0);
  dp_tensor_release(t);
  free(x);
  free(expected);
}

static void allreduce_average_of_float64_is_the_mean_over_ranks(dp_context* ctx,
                                                                dp_process_group* g) {
  const int64_t shape[2] = {5, 7};
  double x[35], expected[35];
  for (int i = 0; i < 35; ++i) {
    x[i] = g_rank * 3.0 + i * 0.25;
    expected[i] = 3.0 * (g_size - 1) / 2.0 + i * 0.25;
  }
  dp_tensor* t = cuda_tensor(ctx, DP_FLOAT64, shape, 2, x, sizeof x);
  MUST(dp_process_group_allreduce(g, t, DP_REDUCE_AVERAGE));
  expect_values(__func__, t, expected, 35, DP_FLOAT64, 1e-12);
  dp_tensor_release(t);
}

/* NCCL reduces bfloat16 in place (ncclBfloat16). Inputs are quarters k / 4 (k <= 13)
   times rank + 1: with up to 4 ranks every partial sum is m * k / 4 with m * k < 256 (8
   significant bits), all bfloat16 values, so each sum is exact whatever order the ranks'
   values are added in. NCCL averages bfloat16 by multiplying each input by 1 / ranks
   rounded to bfloat16 before the sum (its ncclAvg is a pre-multiplied sum): exact for 1, 2
   and 4 ranks; with 3, 1/3 is rounded, each product and partial sum rounds, and the result
   depends on the order, so there each average is held to (ranks + 2) bfloat16 roundings of
   itself instead. */
static void allreduce_sum_and_average_of_bfloat16(dp_context* ctx, dp_process_group* g) {
  const int64_t n = 1000;
  uint16_t x[1000];
  double sum[1000], mean[1000];
  for (int i = 0; i < n; ++i) {
    const double q = (i % 13 + 1) * 0.25;
    x[i] = bf16_bits((float)((g_rank + 1) * q));
    sum[i] = q * g_size * (g_size + 1) / 2;
    mean[i] = sum[i] / g_size;
  }
  dp_tensor* a = cuda_tensor(ctx, DP_BFLOAT16, &n, 1, x, sizeof x);
  dp_tensor* b = cuda_tensor(ctx, DP_BFLOAT16, &n, 1, x, sizeof x);
  MUST(dp_process_group_allreduce(g, a, DP_REDUCE_SUM));
  MUST(dp_process_group_allreduce(g, b, DP_REDUCE_AVERAGE));
  expect_values("allreduce_sum_of_bfloat16", a, sum, n, DP_BFLOAT16, 0);
  const int power_of_two = (g_size & (g_size - 1)) == 0;
  expect_values("allreduce_average_of_bfloat16", b, mean, n, DP_BFLOAT16,
                power_of_two ? 0 : (g_size + 2) * ldexp(1, -8));
  dp_tensor_release(a);
  dp_tensor_release(b);
}

static int64_t spread(int r, int i) {
  return (int64_t)((r * 7 + i * 3) % 11) - 5;
}

static void allreduce_max_and_min_of_int64(dp_context* ctx, dp_process_group* g) {
  const int64_t n = 64;
  int64_t x[64];
  double most[64], least[64];
  for (int i = 0; i < n; ++i) {
    x[i] = spread(g_rank, i);
    most[i] = least[i] = (double)spread(0, i);
    for (int r = 1; r < g_size; ++r) {
      most[i] = fmax(most[i], (double)spread(r, i));
      least[i] = fmin(least[i], (double)spread(r, i));
    }
  }
  dp_tensor* a = cuda_tensor(ctx, DP_INT64, &n, 1, x, sizeof x);
  dp_tensor* b = cuda_tensor(ctx, DP_INT64, &n, 1, x, sizeof x);
  MUST(dp_process_group_allreduce(g, a, DP_REDUCE_MAX));
  MUST(dp_process_group_allreduce(g, b, DP_REDUCE_MIN));
  expect_values("allreduce_max_of_int64", a, most, n, DP_INT64, 0);
  expect_values("allreduce_min_of_int64", b, least, n, DP_INT64, 0);
  dp_tensor_release(a);
  dp_tensor_release(b);
}

static void broadcast_gives_every_rank_the_last_ranks_tensor(dp_context* ctx, dp_process_group* g) {
  const int64_t shape[2] = {3, 100};
  float x[300];
  double expected[300];
  for (int i = 0; i < 300; ++i) {
    x[i] = (float)(g_rank * 1000 + i);
    expected[i] = (double)((g_size - 1) * 1000 + i);
  }
  dp_tensor* t = cuda_tensor(ctx, DP_FLOAT32, shape, 2, x, sizeof x);
  MUST(dp_process_group_broadcast(g, t, g_size - 1));
  expect_values(__func__, t, expected, 300, DP_FLOAT32, 0);
  dp_tensor_release(t);
}

static void allgather_concatenates_in_rank_order_on_the_device(dp_context* ctx,
                                                               dp_process_group* g) {
  const int64_t shape[2] = {2, 3};
  float x[6];
  for (int k = 0; k < 6; ++k) x[k] = (float)(g_rank * 10 + k);
  double* expected = malloc((size_t)g_size * 6 * sizeof *expected);
  for (int r = 0; r < g_size; ++r) {
    for (int k = 0; k < 6; ++k) expected[r * 6 + k] = r * 10 + k;
  }
  dp_tensor* t = cuda_tensor(ctx, DP_FLOAT32, shape, 2, x, sizeof x);
  dp_tensor* all = NULL;
  MUST(dp_process_group_allgather(g, t, &all));
  int64_t got[2] = {0, 0};
  MUST(dp_tensor_shape(all, got, 2));
  check(got[0] == 2 * g_size && got[1] == 3, __func__, "the result is not [2 * ranks, 3]");
  expect_values(__func__, all, expected, (int64_t)g_size * 6, DP_FLOAT32, 0);
  dp_tensor_release(all);
  dp_tensor_release(t);
  free(expected);
}

/* CUDA and CPU collectives interleaved keep their issue order on every rank. */
static void cpu_and_cuda_collectives_interleave_in_issue_order(dp_context* ctx,
                                                               dp_process_group* g) {
  const int64_t n = 4;
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  double values[4] = {1, 2, 3, 4}, expected[4];
  for (int i = 0; i < 4; ++i) expected[i] = values[i] * g_size;
  dp_tensor *c = NULL, *d = NULL, *e = NULL;
  MUST(dp_tensor_from_data(ctx, DP_FLOAT64, &n, 1, values, sizeof values, cpu0, &c));
  d = cuda_tensor(ctx, DP_FLOAT64, &n, 1, values, sizeof values);
  e = cuda_tensor(ctx, DP_FLOAT64, &n, 1, values, sizeof values);
  MUST(dp_process_group_allreduce(g, d, DP_REDUCE_SUM));
  MUST(dp_process_group_allreduce(g, c, DP_REDUCE_SUM));
  MUST(dp_process_group_allreduce(g, e, DP_REDUCE_SUM));
  MUST(dp_process_group_barrier(g));
  expect_values(__func__, d, expected, n, DP_FLOAT64, 0);
  expect_values(__func__, e, expected, n, DP_FLOAT64, 0);
  double host[4];
  MUST(dp_tensor_to_host(c, host, sizeof host));
  check(memcmp(host, expected, sizeof host) == 0, __func__, "the CPU tensor's sum is wrong");
  dp_tensor_release(c);
  dp_tensor_release(d);
  dp_tensor_release(e);
}

/* --- DistributedDataParallel on the device ----------------------------------------------- */

enum { kDdpN = 100 };

/* y = x * a + x * b; c is a parameter the forward never uses. */
static dp_result ddp_forward(void* user_data, dp_module* self, dp_tensor* const* inputs,
                             size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                             size_t* n_outputs) {
  (void)user_data;
  (void)n_inputs;
  (void)max_outputs;
  dp_tensor *a = NULL, *b = NULL, *xa = NULL, *xb = NULL;
  dp_module_get(self, "a", &a);
  dp_module_get(self, "b", &b);
  dp_result r = dp_op_mul(inputs[0], a, &xa);
  if (r == DP_OK) r = dp_op_mul(inputs[0], b, &xb);
  if (r == DP_OK) r = dp_op_add(xa, xb, &outputs[0]);
  dp_tensor_release(a);
  dp_tensor_release(b);
  dp_tensor_release(xa);
  dp_tensor_release(xb);
  *n_outputs = r == DP_OK ? 1 : 0;
  return r;
}

/* x of rank r: (r + 1) * q_i with q_i = (i mod 13 + 1) / 4. Each gradient of a and b is
   x (the output's gradient is ones), the average over the ranks q_i * (ranks + 1) / 2;
   every value and partial sum is a multiple of 1/8 below 2^8 (for up to 4 ranks): exact in
   float32 and in bfloat16, so the check is exact on either dtype of the allreduce. */
static double ddp_q(int i) {
  return (i % 13 + 1) * 0.25;
}

/* Where the process group runs this device's collectives on its communicator, DDP's buckets
   live on the device and the communicator allreduces them; through host memory, they are
   host buffers. Either way: two steps without zero_grad give twice the average on every
   rank, on the parameters' device, and the unused parameter a zero gradient. */
static void ddp_averages_gradients_on_the_devices_route(dp_context* ctx, dp_process_group* g,
                                                        dp_dtype wire) {
  char test[96];
  snprintf(test, sizeof test, "%s (%s allreduce)", __func__,
           wire == DP_BFLOAT16 ? "bfloat16" : "float32");
  const int64_t n = kDdpN;
  float zeros[kDdpN] = {0}, x[kDdpN];
  double once[kDdpN], twice[kDdpN], none[kDdpN] = {0};
  for (int i = 0; i < n; ++i) {
    x[i] = (float)((g_rank + 1) * ddp_q(i));
    once[i] = ddp_q(i) * (g_size + 1) / 2.0;
    twice[i] = 2 * once[i];
  }
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = ddp_forward;
  dp_module* model = NULL;
  MUST(dp_module_custom(ctx, &desc, &model));
  const char* names[3] = {"a", "b", "c"};
  for (int k = 0; k < 3; ++k) {
    dp_tensor* p = cuda_tensor(ctx, DP_FLOAT32, &n, 1, zeros, sizeof zeros);
    MUST(dp_tensor_set_requires_grad(p, 1));
    MUST(dp_module_register_parameter(model, names[k], p));
    dp_tensor_release(p);
  }
  dp_ddp_options o = DP_DDP_OPTIONS_INIT;
  o.first_bucket_bytes = 64; /* a bucket per parameter */
  o.bucket_bytes = 64;
  o.allreduce_dtype = wire;
  dp_ddp* ddp = NULL;
  MUST(dp_ddp_create(model, g, &g_dev, 1, NULL, 0, &o, &ddp));
  size_t buckets = 0;
  MUST(dp_ddp_bucket_count(ddp, &buckets));
  check(buckets == 3, test, "not one bucket per parameter");
  dp_tensor* input = cuda_tensor(ctx, DP_FLOAT32, &n, 1, x, sizeof x);
  float ones_v[kDdpN];
  for (int i = 0; i < n; ++i) ones_v[i] = 1.0f;
  dp_tensor* ones = cuda_tensor(ctx, DP_FLOAT32, &n, 1, ones_v, sizeof ones_v);
  for (int step = 0; step < 2; ++step) {
    dp_tensor* y = NULL;
    size_t outs = 0;
    MUST(dp_ddp_forward(ddp, &input, NULL, 1, &y, 1, &outs));
    MUST(dp_backward(y, ones, 0));
    dp_tensor_release(y);
  }
  for (int k = 0; k < 3; ++k) {
    dp_tensor *p = NULL, *grad = NULL;
    MUST(dp_module_get(model, names[k], &p));
    MUST(dp_tensor_grad(p, &grad));
    check(grad != NULL, test, "a parameter has no gradient");
    if (grad) expect_values(test, grad, k < 2 ? twice : none, n, DP_FLOAT32, 0);
    dp_tensor_release(grad);
    dp_tensor_release(p);
  }
  dp_tensor_release(ones);
  dp_tensor_release(input);
  dp_ddp_release(ddp);
  dp_module_release(model);
}

/* Without device_ids a rank takes the GPU of its local rank, cuda:(local rank % GPUs)
   (docs/distributed.md), where the model's parameters already are. */
static void ddp_without_device_ids_takes_the_gpu_of_its_local_rank(dp_context* ctx,
                                                                   dp_process_group* g) {
  const int64_t n = 4;
  const float v[4] = {1, 2, 3, 4};
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = ddp_forward;
  dp_module* model = NULL;
  MUST(dp_module_custom(ctx, &desc, &model));
  const char* names[2] = {"a", "b"};
  for (int k = 0; k < 2; ++k) {
    dp_tensor* p = cuda_tensor(ctx, DP_FLOAT32, &n, 1, v, sizeof v);
    MUST(dp_tensor_set_requires_grad(p, 1));
    MUST(dp_module_register_parameter(model, names[k], p));
    dp_tensor_release(p);
  }
  dp_ddp* ddp = NULL;
  MUST(dp_ddp_create(model, g, NULL, 0, NULL, 0, NULL, &ddp));
  dp_device devices[4];
  size_t count = 0;
  MUST(dp_ddp_devices(ddp, devices, 4, &count));
  char text[128];
  snprintf(text, sizeof text, "%zu devices, the first %s:%d; expected cuda:%d alone", count,
           count && devices[0].type == DP_DEVICE_CUDA ? "cuda" : "cpu",
           count ? devices[0].index : -1, g_dev.index);
  check(count == 1 && devices[0].type == DP_DEVICE_CUDA && devices[0].index == g_dev.index,
        __func__, text);
  dp_ddp_release(ddp);
  dp_module_release(model);
}

/* DDP over `devices` of a model whose parameters live on `where` (one each): creation must
   fail on every rank with DP_ERR_INVALID_ARGUMENT, its message holding `want_a` and
   `want_b` (rank 0's entry and another rank's). */
static void ddp_creation_fails_naming(dp_context* ctx, dp_process_group* g, const dp_device* where,
                                      int nparams, const dp_device* devices, int ndevices,
                                      const char* want_a, const char* want_b, const char* test) {
  const int64_t n = 4;
  const float v[4] = {1, 2, 3, 4};
  const char* names[3] = {"a", "b", "c"};
  dp_module* model = NULL;
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = ddp_forward;
  MUST(dp_module_custom(ctx, &desc, &model));
  for (int i = 0; i < nparams && i < 3; ++i) {
    dp_tensor* p = NULL;
    MUST(dp_tensor_from_data(ctx, DP_FLOAT32, &n, 1, v, sizeof v, where[i], &p));
    MUST(dp_module_register_parameter(model, names[i], p));
    dp_tensor_release(p);
  }
  dp_ddp* ddp = NULL;
  const dp_result r = dp_ddp_create(model, g, devices, ndevices, NULL, 0, NULL, &ddp);
  char text[512];
  snprintf(text, sizeof text, "%s: %s", dp_result_string(r), r == DP_OK ? "" : dp_last_error());
  check(r == DP_ERR_INVALID_ARGUMENT && strstr(text, want_a) && strstr(text, want_b), test, text);
  if (r == DP_OK) dp_ddp_release(ddp);
  dp_module_release(model);
}

/* Rank 0's parameters on its CUDA device, the others' on the CPU: their collectives would
   take different routes, so creation fails on every rank naming the device type. */
static void ddp_with_cuda_and_cpu_ranks_fails_on_every_rank(dp_context* ctx, dp_process_group* g) {
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  const dp_device here = g_rank == 0 ? g_dev : cpu0;
  ddp_creation_fails_naming(ctx, g, &here, 1, &here, 1, "option 'device type' (cuda)",
                            "option 'device type' (cpu)", __func__);
}

/* Two devices per rank (DataParallel then leaves the module where it is): every parameter
   on the rank's first device, except rank 1's second one, on the CPU. The ranks' buckets
   would differ (and rank 1's first forward would fail alone), so creation fails on every
   rank naming where each parameter lives. */
static void ddp_with_a_parameter_on_another_device_fails_on_every_rank(dp_context* ctx,
                                                                       dp_process_group* g) {
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  const dp_device where[3] = {g_dev, g_rank == 1 ? cpu0 : g_dev, g_dev};
  const dp_device devices[2] = {g_dev, {DP_DEVICE_CUDA, (g_dev.index + 1) % 2}};
  ddp_creation_fails_naming(ctx, g, where, 3, devices, 2, "option 'device type' (cuda)",
                            "option 'device type' (cuda for parameters 0, cpu for 1, cuda for 2)",
                            __func__);
}

static void ddp_buckets_live_where_the_route_says(void) {
  const char* route = getenv("DP_TEST_EXPECT_ROUTE");
  if (!route) return;
  pthread_mutex_lock(&g_log_mu);
  char seen[sizeof g_bucket_log];
  memcpy(seen, g_bucket_log, sizeof seen);
  pthread_mutex_unlock(&g_log_mu);
  char device[96];
  snprintf(device, sizeof device, "on cuda:%d, allreduced by its communicator", g_dev.index);
  const int nccl = strcmp(route, "nccl") == 0;
  const int ok = nccl ? strstr(seen, device) && !strstr(seen, "host memory")
                      : strstr(seen, "in host memory") && !strstr(seen, "on cuda:");
  char text[sizeof seen + 64];
  snprintf(text, sizeof text, "expected buckets %s; the log said:\n%s",
           nccl ? device : "in host memory", seen[0] ? seen : "(nothing)");
  check(ok, __func__, text);
}

/* DP_DISTRIBUTED_CUDA set to neither nccl nor mpi: the first CUDA collective says so. */
static void an_unknown_dp_distributed_cuda_is_an_invalid_argument(dp_context* ctx,
                                                                  dp_process_group* g) {
  const int64_t n = 4;
  const float x[4] = {1, 2, 3, 4};
  dp_tensor* t = cuda_tensor(ctx, DP_FLOAT32, &n, 1, x, sizeof x);
  const dp_result r = dp_process_group_allreduce(g, t, DP_REDUCE_SUM);
  char text[512];
  snprintf(text, sizeof text, "%s: %s", dp_result_string(r), r == DP_OK ? "" : dp_last_error());
  check(r == DP_ERR_INVALID_ARGUMENT && strstr(text, "DP_DISTRIBUTED_CUDA") != NULL, __func__,
        text);
  dp_tensor_release(t);
}

static void the_log_names_the_expected_route(void) {
  const char* route = getenv("DP_TEST_EXPECT_ROUTE");
  const char* reason = getenv("DP_TEST_EXPECT_REASON");
  if (!route || !*route) return;
  pthread_mutex_lock(&g_log_mu);
  char seen[sizeof g_route_log];
  memcpy(seen, g_route_log, sizeof seen);
  pthread_mutex_unlock(&g_log_mu);
  int ok = 0;
  if (strcmp(route, "nccl") == 0) ok = strstr(seen, "run on NCCL") && !strstr(seen, "host memory");
  if (strcmp(route, "staging") == 0) {
    ok = strstr(seen, "go through host memory and MPI") && !strstr(seen, "run on NCCL") &&
         (!reason || strstr(seen, reason));
  }
  char text[sizeof seen + 128];
  snprintf(text, sizeof text, "expected route %s%s%s; the log said:\n%s", route,
           reason ? ", reason " : "", reason ? reason : "", seen[0] ? seen : "(nothing)");
  check(ok, __func__, text);
}

int main(void) {
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 1;
  o.load_cuda = 1;
  o.log_level = DP_LOG_INFO;
  o.log_fn = on_log;
  dp_context* ctx = NULL;
  MUST(dp_context_create(&o, &ctx));
  int32_t gpus = 0;
  MUST(dp_device_count(ctx, DP_DEVICE_CUDA, &gpus));
  const char* min_env = getenv("DP_TEST_MIN_GPUS");
  const int min_gpus = min_env ? atoi(min_env) : 1;
  if (gpus < (min_gpus > 1 ? min_gpus : 1)) {
    printf("test_cuda_process_group: SKIPPED: %d CUDA devices, %d needed\n", (int)gpus,
           min_gpus > 1 ? min_gpus : 1);
    dp_context_release(ctx);
    return 77;
  }
  dp_process_group* g = NULL;
  MUST(dp_process_group_from_mpi(ctx, NULL, &g));
  int32_t rank = 0, size = 0, local = 0;
  MUST(dp_process_group_rank(g, &rank));
  MUST(dp_process_group_size(g, &size));
  MUST(dp_process_group_local_rank(g, &local));
  g_rank = rank;
  g_size = size;
  g_dev.type = DP_DEVICE_CUDA;
  g_dev.index = local % gpus;

  const char* invalid_env = getenv("DP_TEST_EXPECT_INVALID_ENV");
  if (invalid_env && strcmp(invalid_env, "1") == 0) {
    an_unknown_dp_distributed_cuda_is_an_invalid_argument(ctx, g);
  } else {
    allreduce_sum_sees_the_kernel_queued_before_it(ctx, g);
    allreduce_sum_of_four_mebibytes(ctx, g);
    allreduce_average_of_float64_is_the_mean_over_ranks(ctx, g);
    allreduce_max_and_min_of_int64(ctx, g);
    /* Through host memory the bytes go over MPI, which has no bfloat16 type: only the
       NCCL route (and the fake plugin's stand-in for it) is held to bfloat16 here. */
    const char* route = getenv("DP_TEST_EXPECT_ROUTE");
    if (route && strcmp(route, "nccl") == 0) allreduce_sum_and_average_of_bfloat16(ctx, g);
    broadcast_gives_every_rank_the_last_ranks_tensor(ctx, g);
    allgather_concatenates_in_rank_order_on_the_device(ctx, g);
    cpu_and_cuda_collectives_interleave_in_issue_order(ctx, g);
    ddp_averages_gradients_on_the_devices_route(ctx, g, DP_FLOAT32);
    ddp_averages_gradients_on_the_devices_route(ctx, g, DP_BFLOAT16);
    ddp_without_device_ids_takes_the_gpu_of_its_local_rank(ctx, g);
    if (g_size > 1) ddp_with_cuda_and_cpu_ranks_fails_on_every_rank(ctx, g);
    if (g_size > 1 && gpus >= 2) ddp_with_a_parameter_on_another_device_fails_on_every_rank(ctx, g);
    the_log_names_the_expected_route();
    ddp_buckets_live_where_the_route_says();
  }

  dp_process_group_release(g);
  dp_context_release(ctx);
  pthread_mutex_lock(&g_log_mu);
  printf("test_cuda_process_group: rank %d of %d on cuda:%d: %d of %d checks passed; %s", rank,
         size, g_dev.index, g_checks - g_failures, g_checks,
         g_route_log[0] ? g_route_log : "(no route logged)\n");
  pthread_mutex_unlock(&g_log_mu);
  return g_failures == 0 ? 0 : 1;
}
