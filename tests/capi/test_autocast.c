/* bfloat16 and autocast through the C API: the conversion's rounding, the op lists of
   docs/autocast.md (which dtype each op computes and returns in), every bfloat16 product
   against float64 within the bound bfloat16's 8-bit mantissa gives, NaN and infinity,
   and DataParallel under autocast.

   The bound. A bfloat16 rounding has a relative error of at most u = 2^-8 (8 significant bits). A
   product of float32 inputs a and b under autocast rounds each input once, sums in float32 and
   rounds the result once, so |computed - exact| <= 3u * sum_k |a_k| |b_k| (+ float32's sum error,
   K * 2^-24 * sum_k |a_k b_k|, far below). A backward product whose incoming gradient is
   already bfloat16 (exact) rounds one input and its result: 2u. */
#include <dlpack/dlpack.h>
#include <float.h>
#include <stdlib.h>

#include "test_util.h"

#define U (1.0 / 256.0) /* 2^-8 */

static int setup(void** state) {
  *state = make_context(2);
  return 0;
}

static int teardown(void** state) {
  dp_set_autocast(DP_FLOAT32, NULL);
  dp_context_release((dp_context*)*state);
  return 0;
}

/* float32 -> bfloat16 bits, rounded to nearest even: the reference for the library's. */
static uint16_t ref_bf16_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  const uint32_t lower = u & 0xffffu, upper = u >> 16;
  if (lower > 0x8000u || (lower == 0x8000u && (upper & 1u))) return (uint16_t)(upper + 1u);
  return (uint16_t)upper;
}

static float bf16_bits_to_float(uint16_t b) {
  const uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static float round_bf16(float f) {
  return bf16_bits_to_float(ref_bf16_bits(f));
}

/* n values in [-1, 1) from a fixed sequence (a 32-bit LCG). */
static void fill_random(float* v, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)((double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0);
  }
}

static dp_dtype dtype_of(const dp_tensor* t) {
  dp_dtype d = DP_INT64;
  ASSERT_OK(dp_tensor_dtype(t, &d));
  return d;
}

/* A bfloat16 tensor of `values` rounded. */
static dp_tensor* make_bf16(dp_context* ctx, const float* values, const int64_t* shape,
                            size_t ndim) {
  dp_tensor* f = make_f32(ctx, values, shape, ndim, cpu_dev(0));
  dp_tensor* b = NULL;
  ASSERT_OK(dp_tensor_to_dtype(f, DP_BFLOAT16, &b));
  dp_tensor_release(f);
  return b;
}

/* Any floating tensor's values as float32 (bfloat16 widens exactly). */
static void read_values(const dp_tensor* t, float* out, size_t n) {
  dp_tensor* f = NULL;
  ASSERT_OK(dp_tensor_to_dtype(t, DP_FLOAT32, &f));
  read_f32(f, out, n);
  dp_tensor_release(f);
}

/* |got[i] - exact[i]| <= factor * U * scale[i] for every i. */
static void assert_within(const char* what, const float* got, const double* exact,
                          const double* scale, size_t n, double factor) {
  for (size_t i = 0; i < n; ++i) {
    const double err = fabs((double)got[i] - exact[i]);
    const double bound = factor * U * scale[i] + 1e-6 * scale[i];
    if (!(err <= bound)) {
      fail_msg("%s[%zu] = %.9g, float64 %.9g: error %.3g above the bound %.3g", what, i,
               (double)got[i], exact[i], err, bound);
    }
  }
}

static void conversion_rounds_to_nearest_even_and_keeps_nan_and_infinities(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const uint32_t bits[] = {
      0x3f800000u, /* 1 */
      0x3f808000u, /* 1 + 2^-8: a tie, to the even 1 */
      0x3f818000u, /* 1 + 3 * 2^-8: a tie, to the even 1 + 2^-6 */
      0x3f808001u, /* just above the tie: up */
      0x3f807fffu, /* just below: down */
      0xc0200000u, /* -2.5 */
      0x7f800000u, /* inf */
      0xff800000u, /* -inf */
      0x7fc00000u, /* NaN */
      0xffa00001u, /* a signalling NaN with a sign: stays NaN */
      0x7f7fffffu, /* FLT_MAX: past the largest bfloat16, rounds to inf */
      0x00000001u, /* the smallest denormal: to +0 */
      0x80000000u, /* -0 */
  };
  const uint16_t expected[] = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x3f80, 0xc020, 0x7f80,
                               0xff80, 0x7fc0, 0xffe0, 0x7f80, 0x0000, 0x8000};
  enum { N = sizeof bits / sizeof bits[0] };
  float values[N];
  memcpy(values, bits, sizeof values);
  const int64_t shape[] = {N};
  dp_tensor* b = make_bf16(ctx, values, shape, 1);
  assert_int_equal(dtype_of(b), DP_BFLOAT16);
  uint16_t got[N];
  ASSERT_OK(dp_tensor_to_host(b, got, sizeof got));
  for (size_t i = 0; i < N; ++i) {
    if (got[i] != expected[i] || got[i] != ref_bf16_bits(values[i]))
      fail_msg("0x%08x -> 0x%04x, expected 0x%04x", bits[i], got[i], expected[i]);
  }
  /* Back to float32: exact. */
  float back[N];
  read_values(b, back, N);
  for (size_t i = 0; i < N; ++i) {
    const float want = bf16_bits_to_float(expected[i]);
    if (memcmp(&back[i], &want, sizeof want) != 0)
      fail_msg("element %zu widened to %g, expected %g", i, (double)back[i], (double)want);
  }
  assert_int_equal(dp_dtype_size(DP_BFLOAT16), 2);
  dp_tensor_release(b);
}

static void set_autocast_returns_the_previous_setting_and_refuses_other_dtypes(void** state) {
  (void)state;
  assert_int_equal(dp_autocast_dtype(), DP_FLOAT32);
  dp_dtype previous = DP_INT64;
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, &previous));
  assert_int_equal(previous, DP_FLOAT32);
  assert_int_equal(dp_autocast_dtype(), DP_BFLOAT16);
  ASSERT_ERROR(dp_set_autocast(DP_FLOAT64, NULL), DP_ERR_INVALID_ARGUMENT,
               "dtype = 1 is not an autocast dtype");
  ASSERT_ERROR(dp_set_autocast((dp_dtype)77, NULL), DP_ERR_INVALID_ARGUMENT, "dtype = 77");
  assert_int_equal(dp_autocast_dtype(), DP_BFLOAT16); /* a refused call changes nothing */
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, &previous));
  assert_int_equal(previous, DP_BFLOAT16);
  assert_int_equal(dp_autocast_dtype(), DP_FLOAT32);
}

static void the_device_query_says_whether_bf16_is_native(void** state) {
  dp_context* ctx = (dp_context*)*state;
  int native = -1;
  ASSERT_OK(dp_device_bf16_native(ctx, cpu_dev(0), &native));
  assert_true(native == 0 || native == 1);
  ASSERT_ERROR(dp_device_bf16_native(ctx, cpu_dev(5), &native), DP_ERR_OUT_OF_RANGE, "cpu:5");
  ASSERT_ERROR(dp_device_bf16_native(ctx, cpu_dev(0), NULL), DP_ERR_INVALID_ARGUMENT, "out");
}

/* Random x [N, K], w [O, K], b [O] and a bfloat16 output gradient g [N, O], from seeds
   seed to seed + 3. */
static void linear_operands(int N, int K, int O, uint32_t seed, float* x, float* w, float* b,
                            float* g) {
  fill_random(x, (size_t)(N * K), seed);
  fill_random(w, (size_t)(O * K), seed + 1);
  fill_random(b, (size_t)O, seed + 2);
  fill_random(g, (size_t)(N * O), seed + 3);
  for (int i = 0; i < N * O; ++i) g[i] = round_bf16(g[i]); /* the gradient is bfloat16 */
}

/* The bias gradient of g [N, O] in float64 (its column sums) and the sums of the
   magnitudes (the error bound's scale). */
static void bias_gradient(const float* g, int N, int O, double* exact, double* scale) {
  for (int o = 0; o < O; ++o) {
    exact[o] = scale[o] = 0;
    for (int n = 0; n < N; ++n) {
      exact[o] += g[n * O + o];
      scale[o] += fabs((double)g[n * O + o]);
    }
  }
}

/* The float64 product of a [M, K] and b [K, N], element (i, k) of a read at
   a[i * a_row + k * a_col] and (k, j) of b at b[k * b_row + j * b_col] (strides that
   give transposed operands), plus bias[j] unless bias is NULL: exact[i * N + j], and the
   sum of its terms' magnitudes (the error bound's scale) in scale[i * N + j]. */
static void float64_product(const float* a, int a_row, int a_col, const float* b, int b_row,
                            int b_col, const float* bias, int M, int K, int N, double* exact,
                            double* scale) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double s = bias ? bias[j] : 0, m = bias ? fabs((double)bias[j]) : 0;
      for (int k = 0; k < K; ++k) {
        const double term = (double)a[i * a_row + k * a_col] * b[k * b_row + j * b_col];
        s += term;
        m += fabs(term);
      }
      exact[i * N + j] = s;
      scale[i * N + j] = m;
    }
  }
}

/* x [N, K], w [O, K], b [O]: linear under autocast, forward and backward, against float64. */
static void linear_computes_in_bf16_within_the_bound_forward_and_backward(void** state) {
  dp_context* ctx = (dp_context*)*state;
  enum { N = 6, K = 40, O = 5 };
  float x[N * K], w[O * K], b[O], g[N * O];
  linear_operands(N, K, O, 1, x, w, b, g);
  const int64_t xs[] = {N, K}, ws[] = {O, K}, bs[] = {O}, ys[] = {N, O};
  dp_tensor* tx = make_f32(ctx, x, xs, 2, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, ws, 2, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, bs, 1, cpu_dev(0));
  for (dp_tensor **t = (dp_tensor*[]){tx, tw, tb}, **end = t + 3; t < end; ++t)
    ASSERT_OK(dp_tensor_set_requires_grad(*t, 1));
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_linear(tx, tw, tb, &y));
  assert_int_equal(dtype_of(y), DP_BFLOAT16);
  float got[N * O];
  double exact[N * O], scale[N * O];
  read_values(y, got, N * O);
  float64_product(x, K, 1, w, 1, K, b, N, K, O, exact, scale); /* x w^T + b */
  assert_within("linear", got, exact, scale, N * O, 3);

  dp_tensor* tg = make_bf16(ctx, g, ys, 2);
  ASSERT_OK(dp_backward(y, tg, 0));
  dp_tensor *gx = NULL, *gw = NULL, *gb = NULL;
  ASSERT_OK(dp_tensor_grad(tx, &gx));
  ASSERT_OK(dp_tensor_grad(tw, &gw));
  ASSERT_OK(dp_tensor_grad(tb, &gb));
  /* Gradients reach the float32 leaves in float32. */
  assert_int_equal(dtype_of(gx), DP_FLOAT32);
  assert_int_equal(dtype_of(gw), DP_FLOAT32);
  assert_int_equal(dtype_of(gb), DP_FLOAT32);
  float gxv[N * K], gwv[O * K], gbv[O], x16[N * K];
  double ex[N * K], sx[N * K], ew[O * K], sw[O * K], eb[O], sb[O];
  read_f32(gx, gxv, N * K);
  read_f32(gw, gwv, O * K);
  read_f32(gb, gbv, O);
  float64_product(g, O, 1, w, K, 1, NULL, N, O, K, ex, sx); /* g w */
  bias_gradient(g, N, O, eb, sb);
  /* Of x's bfloat16 values: the products are exact in float32. */
  for (int i = 0; i < N * K; ++i) x16[i] = round_bf16(x[i]);
  float64_product(g, 1, O, x16, K, 1, NULL, O, N, K, ew, sw); /* g^T x */
  assert_within("grad x", gxv, ex, sx, N * K, 2);
  /* The float32 weight and bias get the float32 sums of the bfloat16 products, not
     rounded to bfloat16 (docs/autocast.md): within float32 summation error (the 1e-6 term),
     where a bfloat16 rounding would be off by up to 2^-9 of the value. */
  assert_within("grad weight", gwv, ew, sw, O * K, 0);
  assert_within("grad bias", gbv, eb, sb, O, 0);
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  dp_tensor* all[] = {tx, tw, tb, y, tg, gx, gw, gb};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) dp_tensor_release(all[i]);
}

/* Linear decides for the weight and the bias apart: a trainable float32 bias beside a
   frozen weight still gets the float32 sum of the bfloat16 output gradient, not rounded
   (within float32 summation error, where a bfloat16 rounding is off by up to 2^-9 of the
   value), and the weight gets no gradient. */
static void a_trainable_bias_beside_a_frozen_weight_gets_its_float32_gradient(void** state) {
  dp_context* ctx = (dp_context*)*state;
  enum { N = 9, K = 12, O = 7 };
  float x[N * K], w[O * K], b[O], g[N * O];
  linear_operands(N, K, O, 5, x, w, b, g);
  const int64_t xs[] = {N, K}, ws[] = {O, K}, bs[] = {O}, ys[] = {N, O};
  dp_tensor* tx = make_f32(ctx, x, xs, 2, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, ws, 2, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, bs, 1, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(tb, 1));
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_tensor *y = NULL, *tg = make_bf16(ctx, g, ys, 2);
  ASSERT_OK(dp_op_linear(tx, tw, tb, &y));
  ASSERT_OK(dp_backward(y, tg, 0));
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  dp_tensor *gw = NULL, *gb = NULL;
  ASSERT_OK(dp_tensor_grad(tw, &gw));
  assert_null(gw);
  ASSERT_OK(dp_tensor_grad(tb, &gb));
  assert_int_equal(dtype_of(gb), DP_FLOAT32);
  float gbv[O];
  double eb[O], sb[O];
  read_f32(gb, gbv, O);
  bias_gradient(g, N, O, eb, sb);
  assert_within("grad bias", gbv, eb, sb, O, 0);
  dp_tensor* all[] = {tx, tw, tb, y, tg, gb};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) dp_tensor_release(all[i]);
}

/* a [M, K] x b [K, N] under autocast (a, b float32 tensors holding av and bv) is a
   bfloat16 tensor within the bound of the float64 product. */
static void assert_autocast_matmul(const dp_tensor* a, const dp_tensor* b, const float* av,
                                   const float* bv, int M, int K, int N, const char* what) {
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_matmul(a, b, &y));
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  assert_int_equal(dtype_of(y), DP_BFLOAT16);
  float* got = malloc(sizeof(float) * (size_t)(M * N));
  double* exact = malloc(sizeof(double) * (size_t)(M * N));
  double* scale = malloc(sizeof(double) * (size_t)(M * N));
  assert_non_null(got);
  assert_non_null(exact);
  assert_non_null(scale);
  read_values(y, got, (size_t)(M * N));
  float64_product(av, K, 1, bv, N, 1, NULL, M, K, N, exact, scale);
  assert_within(what, got, exact, scale, (size_t)(M * N), 3);
  free(got);
  free(exact);
  free(scale);
  dp_tensor_release(y);
}

static void matmul_computes_in_bf16_within_the_bound(void** state) {
  dp_context* ctx = (dp_context*)*state;
  enum { M = 7, K = 33, N = 4 };
  float a[M * K], b[K * N];
  fill_random(a, M * K, 5);
  fill_random(b, K * N, 6);
  const int64_t as[] = {M, K}, bs[] = {K, N};
  dp_tensor* ta = make_f32(ctx, a, as, 2, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, bs, 2, cpu_dev(0));
  assert_autocast_matmul(ta, tb, a, b, M, K, N, "matmul");
  dp_tensor_release(ta);
  dp_tensor_release(tb);
}

/* matmul's backward under autocast: a [M, K] x b [K, N] with a bfloat16 output gradient g:
   grad a = g b^T and grad b = a^T g, each a product that rounds its float32 operand once
   and (at most) its result once: 2u of the float64 product's magnitudes. They reach the
   float32 leaves in float32. */
static void matmul_backward_in_bf16_is_within_the_bound_of_float64(void** state) {
  dp_context* ctx = (dp_context*)*state;
  enum { M = 6, K = 21, N = 5 };
  float a[M * K], b[K * N], g[M * N];
  fill_random(a, M * K, 11);
  fill_random(b, K * N, 12);
  fill_random(g, M * N, 13);
  for (int i = 0; i < M * N; ++i) g[i] = round_bf16(g[i]);
  const int64_t as[] = {M, K}, bs[] = {K, N}, gs[] = {M, N};
  dp_tensor* ta = make_f32(ctx, a, as, 2, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, bs, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(ta, 1));
  ASSERT_OK(dp_tensor_set_requires_grad(tb, 1));
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_tensor *y = NULL, *tg = make_bf16(ctx, g, gs, 2);
  ASSERT_OK(dp_op_matmul(ta, tb, &y));
  ASSERT_OK(dp_backward(y, tg, 0));
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  dp_tensor *ga = NULL, *gb = NULL;
  ASSERT_OK(dp_tensor_grad(ta, &ga));
  ASSERT_OK(dp_tensor_grad(tb, &gb));
  assert_int_equal(dtype_of(ga), DP_FLOAT32);
  assert_int_equal(dtype_of(gb), DP_FLOAT32);
  float gav[M * K], gbv[K * N];
  double ea[M * K], sa[M * K], eb[K * N], sb[K * N];
  read_f32(ga, gav, M * K);
  read_f32(gb, gbv, K * N);
  float64_product(g, N, 1, b, 1, N, NULL, M, N, K, ea, sa); /* g b^T */
  float64_product(a, 1, K, g, N, 1, NULL, K, M, N, eb, sb); /* a^T g */
  assert_within("matmul grad a", gav, ea, sa, M * K, 2);
  assert_within("matmul grad b", gbv, eb, sb, K * N, 2);
  dp_tensor* all[] = {ta, tb, y, tg, ga, gb};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) dp_tensor_release(all[i]);
}

/* Autocast keeps a parameter's bfloat16 cast while its version counter is unchanged
   (docs/autocast.md). Memory written behind the counter must never be served from such a
   copy: a weight written through dp_tensor_data's address, through a DLPack export (both
   after a first product made a kept cast) or in caller memory a tensor borrows, reaches
   the next product under autocast, checked against float64 with the new values. */
enum { KM = 5, KK = 24, KN = 6 };

static void weights_written_behind_the_version_counter_reach_the_next_autocast_product(
    void** state) {
  dp_context* ctx = (dp_context*)*state;
  static float xv[KM * KK], wv[KK * KN], next[KK * KN];
  fill_random(xv, KM * KK, 21);
  fill_random(wv, KK * KN, 22);
  fill_random(next, KK * KN, 23);
  const int64_t xs[] = {KM, KK}, ws[] = {KK, KN};
  dp_tensor* x = make_f32(ctx, xv, xs, 2, cpu_dev(0));
  for (int route = 0; route < 3; ++route) {
    static const char* const kRoute[] = {"dp_tensor_data", "DLPack export", "borrowed memory"};
    static float borrowed[KK * KN];
    dp_tensor* w = NULL;
    if (route == 2) {
      memcpy(borrowed, wv, sizeof borrowed);
      ASSERT_OK(dp_tensor_from_borrowed(ctx, DP_FLOAT32, ws, 2, borrowed, sizeof borrowed, 0, &w));
    } else {
      w = make_f32(ctx, wv, ws, 2, cpu_dev(0));
    }
    ASSERT_OK(dp_tensor_set_requires_grad(w, 1)); /* a parameter: its cast may be kept */
    assert_autocast_matmul(x, w, xv, wv, KM, KK, KN, kRoute[route]);
    DLManagedTensor* exported = NULL;
    float* memory = borrowed;
    if (route == 0) {
      void* p = NULL;
      ASSERT_OK(dp_tensor_data(w, &p));
      memory = (float*)p;
    } else if (route == 1) {
      ASSERT_OK(dp_tensor_to_dlpack(w, &exported));
      memory = (float*)exported->dl_tensor.data;
    }
    uint64_t version = 0, after = 0;
    ASSERT_OK(dp_tensor_version(w, &version));
    memcpy(memory, next, sizeof next);
    ASSERT_OK(dp_tensor_version(w, &after));
    assert_int_equal(after, version); /* the write went past the counter */
    assert_autocast_matmul(x, w, xv, next, KM, KK, KN, kRoute[route]);
    if (exported) exported->deleter(exported);
    dp_tensor_release(w);
  }
  dp_tensor_release(x);
}

/* conv2d, stride 1, padding 1: forward and the three gradients against float64. */
static void conv2d_computes_in_bf16_within_the_bound_forward_and_backward(void** state) {
  dp_context* ctx = (dp_context*)*state;
  enum { N = 2, C = 3, H = 5, W = 5, O = 4, R = 3 };
  float x[N * C * H * W], w[O * C * R * R], b[O], g[N * O * H * W];
  fill_random(x, N * C * H * W, 7);
  fill_random(w, O * C * R * R, 8);
  fill_random(b, O, 9);
  fill_random(g, N * O * H * W, 10);
  for (size_t i = 0; i < N * O * H * W; ++i) g[i] = round_bf16(g[i]);
  const int64_t xs[] = {N, C, H, W}, ws[] = {O, C, R, R}, bs[] = {O}, ys[] = {N, O, H, W};
  dp_tensor* tx = make_f32(ctx, x, xs, 4, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, ws, 4, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, bs, 1, cpu_dev(0));
  for (dp_tensor **t = (dp_tensor*[]){tx, tw, tb}, **end = t + 3; t < end; ++t)
    ASSERT_OK(dp_tensor_set_requires_grad(*t, 1));
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_conv2d(tx, tw, tb, 1, 1, 1, 1, &y));
  assert_int_equal(dtype_of(y), DP_BFLOAT16);
  static float got[N * O * H * W];
  static double ey[N * O * H * W], sy[N * O * H * W];
  static double ex[N * C * H * W], sx[N * C * H * W], ew[O * C * R * R], sw[O * C * R * R];
  double eb[O], sb[O];
  memset(ex, 0, sizeof ex);
  memset(sx, 0, sizeof sx);
  memset(ew, 0, sizeof ew);
  memset(sw, 0, sizeof sw);
  for (int o = 0; o < O; ++o) eb[o] = sb[o] = 0;
  for (int n = 0; n < N; ++n) {
    for (int o = 0; o < O; ++o) {
      for (int i = 0; i < H; ++i) {
        for (int j = 0; j < W; ++j) {
          const int yi = ((n * O + o) * H + i) * W + j;
          double s = b[o], m = fabs((double)b[o]);
          const double gy = g[yi];
          eb[o] += gy;
          sb[o] += fabs(gy);
          for (int c = 0; c < C; ++c) {
            for (int r = 0; r < R; ++r) {
              for (int q = 0; q < R; ++q) {
                const int ii = i + r - 1, jj = j + q - 1;
                if (ii < 0 || ii >= H || jj < 0 || jj >= W) continue;
                const int xi = ((n * C + c) * H + ii) * W + jj;
                const int wi = ((o * C + c) * R + r) * R + q;
                s += (double)x[xi] * w[wi];
                m += fabs((double)x[xi] * w[wi]);
                ex[xi] += gy * w[wi];
                sx[xi] += fabs(gy * w[wi]);
                ew[wi] += gy * x[xi];
                sw[wi] += fabs(gy * x[xi]);
              }
            }
          }
          ey[yi] = s;
          sy[yi] = m;
        }
      }
    }
  }
  read_values(y, got, N * O * H * W);
  assert_within("conv2d", got, ey, sy, N * O * H * W, 3);
  dp_tensor* tg = make_bf16(ctx, g, ys, 4);
  ASSERT_OK(dp_backward(y, tg, 0));
  dp_tensor *gx = NULL, *gw = NULL, *gb = NULL;
  ASSERT_OK(dp_tensor_grad(tx, &gx));
  ASSERT_OK(dp_tensor_grad(tw, &gw));
  ASSERT_OK(dp_tensor_grad(tb, &gb));
  assert_int_equal(dtype_of(gw), DP_FLOAT32);
  static float gxv[N * C * H * W], gwv[O * C * R * R];
  float gbv[O];
  read_f32(gx, gxv, N * C * H * W);
  read_f32(gw, gwv, O * C * R * R);
  read_f32(gb, gbv, O);
  assert_within("conv2d grad x", gxv, ex, sx, N * C * H * W, 2);
  assert_within("conv2d grad weight", gwv, ew, sw, O * C * R * R, 2);
  assert_within("conv2d grad bias", gbv, eb, sb, O, 1);
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  dp_tensor* all[] = {tx, tw, tb, y, tg, gx, gw, gb};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) dp_tensor_release(all[i]);
}

/* The float32 list: each op given bfloat16 under autocast returns float32, equal bit for
   bit to the op on the widened input without autocast (a bfloat16 computation would have
   rounded its result). */
enum {
  FP32_SOFTMAX,
  FP32_LOG_SOFTMAX,
  FP32_SUM,
  FP32_MEAN,
  FP32_CROSS_ENTROPY,
  FP32_NLL,
  FP32_MSE,
  FP32_BATCH_NORM,
  FP32_OPS
};
static const char* const kFp32Names[FP32_OPS] = {
    "softmax", "log_softmax", "sum", "mean", "cross_entropy", "nll_loss", "mse_loss", "batch_norm"};

static dp_result run_fp32_op(int op, dp_tensor* x, dp_tensor* x2, dp_tensor* target,
                             dp_tensor** out) {
  switch (op) {
    case FP32_SOFTMAX:
      return dp_op_softmax(x, 1, out);
    case FP32_LOG_SOFTMAX:
      return dp_op_log_softmax(x, 1, out);
    case FP32_SUM:
      return dp_op_sum(x, out);
    case FP32_MEAN:
      return dp_op_mean(x, out);
    case FP32_CROSS_ENTROPY:
      return dp_op_cross_entropy(x, target, out);
    case FP32_NLL:
      return dp_op_nll_loss(x, target, out);
    case FP32_MSE:
      return dp_op_mse_loss(x, x2, out);
    default:
      return dp_op_batch_norm(x, NULL, NULL, NULL, NULL, 1, 0.1, 1e-5, out);
  }
}

static void float32_list_ops_compute_and_return_float32_for_bf16_inputs(void** state) {
  dp_context* ctx = (dp_context*)*state;
  enum { N = 4, C = 9 };
  float v[N * C], v2[N * C];
  fill_random(v, N * C, 11);
  fill_random(v2, N * C, 12);
  for (size_t i = 0; i < N * C; ++i) {
    v[i] = round_bf16(v[i] * 4);
    v2[i] = round_bf16(v2[i]);
  }
  const int64_t shape[] = {N, C}, ts[] = {N}, target_values[] = {0, 8, 3, 3};
  dp_tensor* xb = make_bf16(ctx, v, shape, 2);
  dp_tensor* x2b = make_bf16(ctx, v2, shape, 2);
  dp_tensor* xf = make_f32(ctx, v, shape, 2, cpu_dev(0));
  dp_tensor* x2f = make_f32(ctx, v2, shape, 2, cpu_dev(0));
  dp_tensor* target = NULL;
  ASSERT_OK(dp_tensor_from_data(ctx, DP_INT64, ts, 1, target_values, sizeof target_values,
                                cpu_dev(0), &target));
  for (int op = 0; op < FP32_OPS; ++op) {
    dp_tensor *ours = NULL, *want = NULL;
    ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
    if (run_fp32_op(op, xb, x2b, target, &ours) != DP_OK)
      fail_msg("%s on bfloat16 under autocast: %s", kFp32Names[op], dp_last_error());
    ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
    ASSERT_OK(run_fp32_op(op, xf, x2f, target, &want));
    if (dtype_of(ours) != DP_FLOAT32)
      fail_msg("%s returned dtype %d", kFp32Names[op], dtype_of(ours));
    int64_t n = 0;
    ASSERT_OK(dp_tensor_numel(want, &n));
    float a[N * C], b[N * C];
    read_f32(ours, a, (size_t)n);
    read_f32(want, b, (size_t)n);
    if (memcmp(a, b, (size_t)n * sizeof(float)) != 0)
      fail_msg("%s under autocast differs from float32 on the same values", kFp32Names[op]);
    dp_tensor_release(ours);
    dp_tensor_release(want);
  }
  dp_tensor* all[] = {xb, x2b, xf, x2f, target};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) dp_tensor_release(all[i]);
}

static void arithmetic_promotes_bf16_with_float32_under_autocast_and_refuses_the_mix_without(
    void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float a[] = {1.5f, -2.25f, 3.0f}, b[] = {0.1f, 0.2f, -0.3f};
  const int64_t shape[] = {3};
  dp_tensor* ab = make_bf16(ctx, a, shape, 1);
  dp_tensor* bf = make_f32(ctx, b, shape, 1, cpu_dev(0));
  dp_tensor* out = NULL;
  ASSERT_ERROR(dp_op_add(ab, bf, &out), DP_ERR_DTYPE_MISMATCH,
               "add: a is bfloat16 but b is float32");
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_result (*ops[])(const dp_tensor*, const dp_tensor*, dp_tensor**) = {dp_op_add, dp_op_sub,
                                                                         dp_op_mul, dp_op_div};
  for (int op = 0; op < 4; ++op) {
    ASSERT_OK(ops[op](bf, ab, &out)); /* either side */
    assert_int_equal(dtype_of(out), DP_FLOAT32);
    float got[3];
    read_f32(out, got, 3);
    for (int i = 0; i < 3; ++i) {
      const float x = b[i], y = a[i]; /* a's values are exact in bfloat16 */
      const float want = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : x / y;
      if (got[i] != want) fail_msg("op %d element %d: %g, expected %g", op, i, got[i], want);
    }
    dp_tensor_release(out);
  }
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  dp_tensor_release(ab);
  dp_tensor_release(bf);
}

static void ops_outside_the_lists_keep_bf16(void** state) {
  dp_context* ctx = (dp_context*)*state;
  float v[16];
  fill_random(v, 16, 13);
  const int64_t shape[] = {1, 1, 4, 4};
  dp_tensor* x = make_bf16(ctx, v, shape, 4);
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_tensor *r = NULL, *p = NULL;
  ASSERT_OK(dp_op_relu(x, &r));
  ASSERT_OK(dp_op_max_pool2d(x, 2, 2, 2, 2, 0, 0, &p));
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  assert_int_equal(dtype_of(r), DP_BFLOAT16);
  assert_int_equal(dtype_of(p), DP_BFLOAT16);
  float got[16], pooled[4];
  read_values(r, got, 16);
  read_values(p, pooled, 4);
  for (int i = 0; i < 16; ++i) {
    const float want = round_bf16(v[i]) > 0 ? round_bf16(v[i]) : 0.0f;
    if (got[i] != want) fail_msg("relu[%d] = %g, expected %g", i, got[i], want);
  }
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      float m = -INFINITY;
      for (int r2 = 0; r2 < 2; ++r2)
        for (int q = 0; q < 2; ++q) m = fmaxf(m, round_bf16(v[(2 * i + r2) * 4 + 2 * j + q]));
      if (pooled[i * 2 + j] != m)
        fail_msg("max_pool2d[%d, %d] = %g, expected %g", i, j, pooled[i * 2 + j], m);
    }
  }
  dp_tensor_release(x);
  dp_tensor_release(r);
  dp_tensor_release(p);
}

static void nan_and_infinity_propagate_through_bf16_products(void** state) {
  dp_context* ctx = (dp_context*)*state;
  enum { K = 4, O = 3 };
  float x[2 * K] = {NAN, 1, 2, 3, INFINITY, 1, 1, 1};
  float w[O * K], b[O] = {0, 0, 0};
  fill_random(w, O * K, 14);
  const int64_t xs[] = {2, K}, ws[] = {O, K}, bs[] = {O};
  dp_tensor* tx = make_f32(ctx, x, xs, 2, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, ws, 2, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, bs, 1, cpu_dev(0));
  ASSERT_OK(dp_set_autocast(DP_BFLOAT16, NULL));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_linear(tx, tw, tb, &y));
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  float got[2 * O];
  read_values(y, got, 2 * O);
  for (int o = 0; o < O; ++o) {
    if (!isnan(got[o])) fail_msg("row with a NaN: y[0, %d] = %g", o, got[o]);
    /* inf times the weight: the sign of the weight's bfloat16 rounding. */
    const float want = round_bf16(w[o * K]) > 0 ? INFINITY : -INFINITY;
    if (got[O + o] != want)
      fail_msg("row with +inf: y[1, %d] = %g, expected %g", o, got[O + o], want);
  }
  dp_tensor* all[] = {tx, tw, tb, y};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) dp_tensor_release(all[i]);
}

/* An MLP's weight gradients after one forward and backward (under autocast when
   `autocast`) through DataParallel over `n` CPU devices (grad_reduce_dtype as given), into
   grads[]. */
enum { MLP_IN = 24, MLP_HIDDEN = 16, MLP_OUT = 5, MLP_BATCH = 8 };
enum { MLP_GRADS = MLP_HIDDEN * MLP_IN + MLP_HIDDEN + MLP_OUT * MLP_HIDDEN + MLP_OUT };

static void mlp_gradients(dp_context* ctx, dp_module* model, int n, int autocast, dp_dtype reduce,
                          float* grads) {
  const dp_device devs[] = {cpu_dev(0), cpu_dev(1)};
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.grad_reduce_dtype = reduce;
  dp_data_parallel* dpw = NULL;
  ASSERT_OK(dp_data_parallel_create(model, devs, (size_t)n, NULL, 0, &o, &dpw));
  float x[MLP_BATCH * MLP_IN];
  fill_random(x, MLP_BATCH * MLP_IN, 15);
  const int64_t xs[] = {MLP_BATCH, MLP_IN}, ts[] = {MLP_BATCH};
  const int64_t target_values[MLP_BATCH] = {0, 1, 2, 3, 4, 0, 1, 2};
  dp_tensor* tx = make_f32(ctx, x, xs, 2, cpu_dev(0));
  dp_tensor *target = NULL, *logits = NULL, *loss = NULL;
  ASSERT_OK(dp_tensor_from_data(ctx, DP_INT64, ts, 1, target_values, sizeof target_values,
                                cpu_dev(0), &target));
  ASSERT_OK(dp_module_zero_grad(model));
  ASSERT_OK(dp_set_autocast(autocast ? DP_BFLOAT16 : DP_FLOAT32, NULL));
  size_t n_out = 0;
  ASSERT_OK(dp_data_parallel_forward(dpw, &tx, NULL, 1, &logits, 1, &n_out));
  /* What gather moved is what the replicas' last linear produced: bfloat16 under autocast. */
  assert_int_equal(dtype_of(logits), autocast ? DP_BFLOAT16 : DP_FLOAT32);
  ASSERT_OK(dp_op_cross_entropy(logits, target, &loss));
  assert_int_equal(dtype_of(loss), DP_FLOAT32);
  ASSERT_OK(dp_backward(loss, NULL, 0));
  ASSERT_OK(dp_set_autocast(DP_FLOAT32, NULL));
  size_t count = 0, at = 0;
  ASSERT_OK(dp_module_parameter_count(model, &count));
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    dp_tensor *p = NULL, *g = NULL;
    ASSERT_OK(dp_module_parameter(model, i, &name, &p));
    ASSERT_OK(dp_tensor_grad(p, &g));
    assert_int_equal(dtype_of(g), DP_FLOAT32);
    int64_t numel = 0;
    ASSERT_OK(dp_tensor_numel(g, &numel));
    assert_true(at + (size_t)numel <= MLP_GRADS);
    read_f32(g, grads + at, (size_t)numel);
    at += (size_t)numel;
    dp_tensor_release(p);
    dp_tensor_release(g);
  }
  assert_int_equal(at, MLP_GRADS);
  dp_tensor_release(tx);
  dp_tensor_release(target);
  dp_tensor_release(logits);
  dp_tensor_release(loss);
  dp_data_parallel_release(dpw);
}

static void data_parallel_under_autocast_on_two_devices_equals_one_within_bf16_rounding(
    void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module *model = NULL, *l1 = NULL, *relu = NULL, *l2 = NULL;
  ASSERT_OK(dp_module_sequential(ctx, &model));
  ASSERT_OK(dp_module_linear(ctx, MLP_IN, MLP_HIDDEN, 1, cpu_dev(0), &l1));
  ASSERT_OK(dp_module_relu(ctx, &relu));
  ASSERT_OK(dp_module_linear(ctx, MLP_HIDDEN, MLP_OUT, 1, cpu_dev(0), &l2));
  ASSERT_OK(dp_module_append(model, l1));
  ASSERT_OK(dp_module_append(model, relu));
  ASSERT_OK(dp_module_append(model, l2));
  static float one[MLP_GRADS], two[MLP_GRADS], two_bf16[MLP_GRADS];
  static float fp32_one[MLP_GRADS], fp32_bf16[MLP_GRADS];
  mlp_gradients(ctx, model, 1, 1, DP_FLOAT32, one);
  mlp_gradients(ctx, model, 2, 1, DP_FLOAT32, two);
  mlp_gradients(ctx, model, 2, 1, DP_BFLOAT16, two_bf16);
  mlp_gradients(ctx, model, 1, 0, DP_FLOAT32, fp32_one);
  mlp_gradients(ctx, model, 2, 0, DP_BFLOAT16, fp32_bf16);
  /* Each replica rounds its own products (4 rows each instead of 8): every gradient
     element stays within 4 roundings (4 * 2^-8) of its tensor's largest magnitude. A lost
     replica's gradient is far outside (half of them change by ~50%). A bfloat16 reduce of
     2 devices rounds replica 1's gradients once: within 2^-8 of the largest magnitude, and
     not equal to the float32 reduce's, in a float32 run and under autocast alike: on CPU
     devices linear gives a float32 parameter its gradient as the float32 sums of the
     bfloat16 products, not rounded to bfloat16 (docs/autocast.md). */
  const size_t sizes[] = {MLP_HIDDEN * MLP_IN, MLP_HIDDEN, MLP_OUT * MLP_HIDDEN, MLP_OUT};
  size_t at = 0;
  int bf16_reduce_changed_something = 0, autocast_reduce_changed_something = 0;
  for (size_t t = 0; t < 4; ++t) {
    double largest = 0;
    for (size_t i = at; i < at + sizes[t]; ++i) largest = fmax(largest, fabs((double)one[i]));
    assert_true(largest > 0);
    for (size_t i = at; i < at + sizes[t]; ++i) {
      const double bound = 4 * U * largest;
      if (fabs((double)two[i] - one[i]) > bound)
        fail_msg("tensor %zu element %zu: 2 devices %g, 1 device %g", t, i - at, two[i], one[i]);
      if (fabs((double)two_bf16[i] - two[i]) > U * largest)
        fail_msg("tensor %zu element %zu: autocast, bf16 reduce %g, float32 reduce %g", t, i - at,
                 two_bf16[i], two[i]);
      autocast_reduce_changed_something |= two_bf16[i] != two[i];
      if (fabs((double)fp32_bf16[i] - fp32_one[i]) > U * largest)
        fail_msg("tensor %zu element %zu: float32 run, bf16 reduce %g, 1 device %g", t, i - at,
                 fp32_bf16[i], fp32_one[i]);
      bf16_reduce_changed_something |= fp32_bf16[i] != fp32_one[i];
    }
    at += sizes[t];
  }
  assert_true(autocast_reduce_changed_something);
  assert_true(bf16_reduce_changed_something);
  dp_module* all[] = {model, l1, relu, l2};
  for (size_t i = 0; i < 4; ++i) dp_module_release(all[i]);
}

static void a_bad_grad_reduce_dtype_is_refused_by_name(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* l = NULL;
  ASSERT_OK(dp_module_linear(ctx, 2, 2, 1, cpu_dev(0), &l));
  const dp_device devs[] = {cpu_dev(0), cpu_dev(1)};
  dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
  o.grad_reduce_dtype = DP_INT64;
  dp_data_parallel* dpw = NULL;
  ASSERT_ERROR(dp_data_parallel_create(l, devs, 2, NULL, 0, &o, &dpw), DP_ERR_INVALID_ARGUMENT,
               "grad_reduce_dtype = 2 is neither DP_FLOAT32 (0) nor DP_BFLOAT16 (3)");
  dp_module_release(l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(conversion_rounds_to_nearest_even_and_keeps_nan_and_infinities),
      cmocka_unit_test(set_autocast_returns_the_previous_setting_and_refuses_other_dtypes),
      cmocka_unit_test(the_device_query_says_whether_bf16_is_native),
      cmocka_unit_test(linear_computes_in_bf16_within_the_bound_forward_and_backward),
      cmocka_unit_test(a_trainable_bias_beside_a_frozen_weight_gets_its_float32_gradient),
      cmocka_unit_test(matmul_computes_in_bf16_within_the_bound),
      cmocka_unit_test(matmul_backward_in_bf16_is_within_the_bound_of_float64),
      cmocka_unit_test(weights_written_behind_the_version_counter_reach_the_next_autocast_product),
      cmocka_unit_test(conv2d_computes_in_bf16_within_the_bound_forward_and_backward),
      cmocka_unit_test(float32_list_ops_compute_and_return_float32_for_bf16_inputs),
      cmocka_unit_test(
          arithmetic_promotes_bf16_with_float32_under_autocast_and_refuses_the_mix_without),
      cmocka_unit_test(ops_outside_the_lists_keep_bf16),
      cmocka_unit_test(nan_and_infinity_propagate_through_bf16_products),
      cmocka_unit_test(data_parallel_under_autocast_on_two_devices_equals_one_within_bf16_rounding),
      cmocka_unit_test(a_bad_grad_reduce_dtype_is_refused_by_name),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
