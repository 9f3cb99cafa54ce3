/* Process-group collectives on CUDA tensors, under mpirun (tests/cuda.cmake):
 *   DP_TEST_EXPECT_ROUTE=nccl     the collectives must run on NCCL (one GPU per rank),
 *   DP_TEST_EXPECT_ROUTE=staging  they must go through host memory and MPI, and the log
 *                                 must say why, containing DP_TEST_EXPECT_REASON when set
 *                                 (two ranks on one GPU: "share one GPU").
 * Each rank works on cuda:(local rank mod the CUDA devices), fills its tensors from its
 * rank, runs allreduce (sum, average, max, min; bfloat16 sum and average on the NCCL
 * route), broadcast and allgather, and compares every element with the value computed
 * here from the ranks' inputs. Exit status 0 when
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

/* The process group's messages about its route for CUDA tensors. */
static pthread_mutex_t g_log_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_route_log[4096];

static void on_log(void* user_data, dp_log_level level, const char* message) {
  (void)user_data;
  (void)level;
  if (!strstr(message, "collectives on cuda:")) return;
  pthread_mutex_lock(&g_log_mu);
  const size_t used = strlen(g_route_log);
  if (used + 2 < sizeof g_route_log) {
    strncat(g_route_log, message, sizeof g_route_log - used - 2);
    strcat(g_route_log, "\n");
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

/* Compares n values read back from t with expected; reports the first difference. */
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
    if (!(fabs(got - expected[i]) <= tolerance)) {
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
   significant bits) and every average a multiple of 1/8 below 13, all bfloat16 values, so
   each result is exact whatever order the ranks' values are added in. */
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
  expect_values("allreduce_average_of_bfloat16", b, mean, n, DP_BFLOAT16, 0);
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
    the_log_names_the_expected_route();
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
