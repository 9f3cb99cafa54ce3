/* Every dp_op_* through the C API on small inputs whose results are worked out by hand, and
   the autograd entry points (backward, grad, detach, grad mode) on a few of them. */
#include "test_util.h"

static int setup(void** state) {
  *state = make_context(2);
  return 0;
}

static int teardown(void** state) {
  dp_context_release((dp_context*)*state);
  return 0;
}

/* The tensor has exactly this shape. */
static void expect_shape(const dp_tensor* t, const int64_t* shape, size_t ndim) {
  size_t got_ndim = 99;
  int64_t got[DP_MAX_DIMS];
  ASSERT_OK(dp_tensor_ndim(t, &got_ndim));
  assert_int_equal(got_ndim, ndim);
  ASSERT_OK(dp_tensor_shape(t, got, DP_MAX_DIMS));
  for (size_t i = 0; i < ndim; ++i) {
    if (got[i] != shape[i])
      fail_msg("dim %zu: size %lld, expected %lld", i, (long long)got[i], (long long)shape[i]);
  }
}

/* The float32 tensor has this shape and these values (to float rounding). */
static void expect_f32(const dp_tensor* t, const int64_t* shape, size_t ndim,
                       const float* expected) {
  dp_dtype dt;
  ASSERT_OK(dp_tensor_dtype(t, &dt));
  assert_int_equal(dt, DP_FLOAT32);
  expect_shape(t, shape, ndim);
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  float got[64];
  assert_true(n <= 64);
  read_f32(t, got, n);
  assert_close_f32(got, expected, n, 1e-5, 1e-6);
}

/* The int64 tensor has this shape and these values. */
static void expect_i64(const dp_tensor* t, const int64_t* shape, size_t ndim,
                       const int64_t* expected) {
  dp_dtype dt;
  ASSERT_OK(dp_tensor_dtype(t, &dt));
  assert_int_equal(dt, DP_INT64);
  expect_shape(t, shape, ndim);
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  int64_t got[64];
  assert_true(n <= 64);
  ASSERT_OK(dp_tensor_to_host(t, got, n * sizeof(int64_t)));
  for (size_t i = 0; i < n; ++i) assert_int_equal(got[i], expected[i]);
}

static dp_tensor* make_i64(dp_context* ctx, const int64_t* values, const int64_t* shape,
                           size_t ndim) {
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= (size_t)shape[i];
  dp_tensor* t = NULL;
  ASSERT_OK(
      dp_tensor_from_data(ctx, DP_INT64, shape, ndim, values, n * sizeof(int64_t), cpu_dev(0), &t));
  return t;
}

static int requires_grad(const dp_tensor* t) {
  int r = -1;
  ASSERT_OK(dp_tensor_requires_grad(t, &r));
  return r;
}

static const int64_t kS23[2] = {2, 3};
static const float kX23[6] = {1, 2, 3, 4, 5, 6};

/* ---------------------------------------------------------------------------------- */
/* Elementwise                                                                       */
/* ---------------------------------------------------------------------------------- */

static void add_and_sub_broadcast_a_row_over_every_row(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s3[1] = {3};
  const float row[3] = {10, 20, 30};
  dp_tensor* a = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* b = make_f32(ctx, row, s3, 1, cpu_dev(0));
  dp_tensor *sum = NULL, *diff = NULL, *rdiff = NULL;
  ASSERT_OK(dp_op_add(a, b, &sum));
  ASSERT_OK(dp_op_sub(a, b, &diff));
  ASSERT_OK(dp_op_sub(b, a, &rdiff));
  const float e_sum[6] = {11, 22, 33, 14, 25, 36};
  const float e_diff[6] = {-9, -18, -27, -6, -15, -24};
  const float e_rdiff[6] = {9, 18, 27, 6, 15, 24};
  expect_f32(sum, kS23, 2, e_sum);
  expect_f32(diff, kS23, 2, e_diff);
  expect_f32(rdiff, kS23, 2, e_rdiff);
  dp_tensor_release(a);
  dp_tensor_release(b);
  dp_tensor_release(sum);
  dp_tensor_release(diff);
  dp_tensor_release(rdiff);
}

static void mul_broadcasts_a_column_and_div_a_leading_one(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s21[2] = {2, 1}, s13[2] = {1, 3};
  const float col[2] = {2, 3};
  const float den[3] = {1, 2, 4};
  dp_tensor* a = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* c = make_f32(ctx, col, s21, 2, cpu_dev(0));
  dp_tensor* d = make_f32(ctx, den, s13, 2, cpu_dev(0));
  dp_tensor *prod = NULL, *quot = NULL, *outer = NULL;
  ASSERT_OK(dp_op_mul(a, c, &prod));
  ASSERT_OK(dp_op_div(a, d, &quot));
  /* [2, 1] + [1, 3] broadcasts both ways to [2, 3]. */
  ASSERT_OK(dp_op_add(c, d, &outer));
  const float e_prod[6] = {2, 4, 6, 12, 15, 18};
  const float e_quot[6] = {1, 1, 0.75f, 4, 2.5f, 1.5f};
  const float e_outer[6] = {3, 4, 6, 4, 5, 7};
  expect_f32(prod, kS23, 2, e_prod);
  expect_f32(quot, kS23, 2, e_quot);
  expect_f32(outer, kS23, 2, e_outer);
  dp_tensor_release(a);
  dp_tensor_release(c);
  dp_tensor_release(d);
  dp_tensor_release(prod);
  dp_tensor_release(quot);
  dp_tensor_release(outer);
}

static void neg_scale_and_add_scalar_map_each_element(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* a = make_f32(ctx, kX23, kS23, 2, cpu_dev(1));
  dp_tensor *n = NULL, *s = NULL, *p = NULL;
  ASSERT_OK(dp_op_neg(a, &n));
  ASSERT_OK(dp_op_scale(a, -0.5, &s));
  ASSERT_OK(dp_op_add_scalar(a, 1.25, &p));
  const float e_n[6] = {-1, -2, -3, -4, -5, -6};
  const float e_s[6] = {-0.5f, -1, -1.5f, -2, -2.5f, -3};
  const float e_p[6] = {2.25f, 3.25f, 4.25f, 5.25f, 6.25f, 7.25f};
  expect_f32(n, kS23, 2, e_n);
  expect_f32(s, kS23, 2, e_s);
  expect_f32(p, kS23, 2, e_p);
  dp_device dev;
  ASSERT_OK(dp_tensor_device(s, &dev));
  assert_int_equal(dev.index, 1);
  dp_tensor_release(a);
  dp_tensor_release(n);
  dp_tensor_release(s);
  dp_tensor_release(p);
}

static void relu_and_exact_gelu_match_their_formulas(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float x[6] = {-2, -0.5f, 0, 0.5f, 1, 3};
  dp_tensor* t = make_f32(ctx, x, kS23, 2, cpu_dev(0));
  dp_tensor *r = NULL, *g = NULL;
  ASSERT_OK(dp_op_relu(t, &r));
  ASSERT_OK(dp_op_gelu(t, &g));
  const float e_r[6] = {0, 0, 0, 0.5f, 1, 3};
  float e_g[6];
  for (int i = 0; i < 6; ++i) e_g[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0))));
  expect_f32(r, kS23, 2, e_r);
  expect_f32(g, kS23, 2, e_g);
  /* Spot values that tell the erf GELU from the tanh approximation at 1e-5. */
  float gv[6];
  read_f32(g, gv, 6);
  assert_true(fabs(gv[4] - 0.8413447) < 1e-6);
  assert_true(fabs(gv[0] + 0.0455003) < 1e-6);
  dp_tensor_release(t);
  dp_tensor_release(r);
  dp_tensor_release(g);
}

static void tanh_sigmoid_exp_and_log_match_libm(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float x[6] = {-2, -0.5f, 0, 0.5f, 1, 3};
  const float pos[6] = {1, 2.718281828f, 0.5f, 10, 100, 0.125f};
  dp_tensor* t = make_f32(ctx, x, kS23, 2, cpu_dev(0));
  dp_tensor* p = make_f32(ctx, pos, kS23, 2, cpu_dev(0));
  dp_tensor *th = NULL, *sg = NULL, *ex = NULL, *lg = NULL;
  ASSERT_OK(dp_op_tanh(t, &th));
  ASSERT_OK(dp_op_sigmoid(t, &sg));
  ASSERT_OK(dp_op_exp(t, &ex));
  ASSERT_OK(dp_op_log(p, &lg));
  float e_th[6], e_sg[6], e_ex[6], e_lg[6];
  for (int i = 0; i < 6; ++i) {
    e_th[i] = (float)tanh(x[i]);
    e_sg[i] = (float)(1.0 / (1.0 + exp(-x[i])));
    e_ex[i] = (float)exp(x[i]);
    e_lg[i] = (float)log(pos[i]);
  }
  expect_f32(th, kS23, 2, e_th);
  expect_f32(sg, kS23, 2, e_sg);
  expect_f32(ex, kS23, 2, e_ex);
  /* oneDNN's vectorised log is accurate to a few 1e-6 absolute near 1 (log(1) comes out
     as -1.4e-6), so log gets an absolute tolerance of its own. */
  float got_lg[6];
  read_f32(lg, got_lg, 6);
  assert_close_f32(got_lg, e_lg, 6, 1e-5, 5e-6);
  /* By hand: sigmoid(0) = 0.5, exp(0) = 1, log(1) = 0, log(e) = 1. */
  float v[6];
  read_f32(sg, v, 6);
  assert_true(v[2] == 0.5f);
  read_f32(ex, v, 6);
  assert_true(v[2] == 1.0f);
  assert_true(fabs(got_lg[0]) < 5e-6);
  assert_true(fabs(got_lg[1] - 1.0) < 5e-6);
  dp_tensor_release(t);
  dp_tensor_release(p);
  dp_tensor_release(th);
  dp_tensor_release(sg);
  dp_tensor_release(ex);
  dp_tensor_release(lg);
}

/* ---------------------------------------------------------------------------------- */
/* Reductions                                                                        */
/* ---------------------------------------------------------------------------------- */

static void sum_and_mean_reduce_everything_to_a_scalar(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* a = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor *s = NULL, *m = NULL;
  ASSERT_OK(dp_op_sum(a, &s));
  ASSERT_OK(dp_op_mean(a, &m));
  const float e_s[1] = {21}, e_m[1] = {3.5f};
  expect_f32(s, NULL, 0, e_s);
  expect_f32(m, NULL, 0, e_m);
  dp_tensor_release(a);
  dp_tensor_release(s);
  dp_tensor_release(m);
}

static void sum_dim_and_mean_dim_keep_or_drop_the_dim(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* a = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor *s0 = NULL, *s1k = NULL, *m1 = NULL, *m0k = NULL;
  ASSERT_OK(dp_op_sum_dim(a, 0, 0, &s0));
  ASSERT_OK(dp_op_sum_dim(a, -1, 1, &s1k));
  ASSERT_OK(dp_op_mean_dim(a, 1, 0, &m1));
  ASSERT_OK(dp_op_mean_dim(a, -2, 1, &m0k));
  const int64_t sh3[1] = {3}, sh21[2] = {2, 1}, sh2[1] = {2}, sh13[2] = {1, 3};
  const float e_s0[3] = {5, 7, 9};
  const float e_s1k[2] = {6, 15};
  const float e_m1[2] = {2, 5};
  const float e_m0k[3] = {2.5f, 3.5f, 4.5f};
  expect_f32(s0, sh3, 1, e_s0);
  expect_f32(s1k, sh21, 2, e_s1k);
  expect_f32(m1, sh2, 1, e_m1);
  expect_f32(m0k, sh13, 2, e_m0k);
  dp_tensor_release(a);
  dp_tensor_release(s0);
  dp_tensor_release(s1k);
  dp_tensor_release(m1);
  dp_tensor_release(m0k);
}

static void argmax_returns_int64_indices_and_ties_pick_the_first(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float x[6] = {1, 3, 3, 5, 5, 2};
  dp_tensor* t = make_f32(ctx, x, kS23, 2, cpu_dev(0));
  dp_tensor *r = NULL, *c = NULL;
  ASSERT_OK(dp_op_argmax(t, 1, &r));
  ASSERT_OK(dp_op_argmax(t, 0, &c));
  const int64_t sh2[1] = {2}, sh3[1] = {3};
  const int64_t e_r[2] = {1, 0};
  const int64_t e_c[3] = {1, 1, 0};
  expect_i64(r, sh2, 1, e_r);
  expect_i64(c, sh3, 1, e_c);
  dp_tensor_release(t);
  dp_tensor_release(r);
  dp_tensor_release(c);
}

/* ---------------------------------------------------------------------------------- */
/* Matmul, linear, softmax                                                           */
/* ---------------------------------------------------------------------------------- */

static void matmul_multiplies_2x3_by_3x2(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s32[2] = {3, 2}, s22[2] = {2, 2};
  const float b[6] = {7, 8, 9, 10, 11, 12};
  dp_tensor* ta = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, s32, 2, cpu_dev(0));
  dp_tensor* c = NULL;
  ASSERT_OK(dp_op_matmul(ta, tb, &c));
  const float e[4] = {58, 64, 139, 154};
  expect_f32(c, s22, 2, e);
  dp_tensor_release(ta);
  dp_tensor_release(tb);
  dp_tensor_release(c);
}

static void matmul_batches_3d_by_3d_and_3d_by_2d(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s222[3] = {2, 2, 2}, s21[2] = {2, 1}, s221[3] = {2, 2, 1};
  const float a[8] = {1, 2, 3, 4, 1, 1, 1, 1};
  const float b[8] = {1, 0, 0, 1, 1, 2, 3, 4};
  const float v[2] = {1, -1};
  dp_tensor* ta = make_f32(ctx, a, s222, 3, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, s222, 3, cpu_dev(0));
  dp_tensor* tv = make_f32(ctx, v, s21, 2, cpu_dev(0));
  dp_tensor *c = NULL, *d = NULL;
  ASSERT_OK(dp_op_matmul(ta, tb, &c));
  ASSERT_OK(dp_op_matmul(ta, tv, &d));
  /* Batch 0: a0 @ I = a0; batch 1: ones @ [[1, 2], [3, 4]] = [[4, 6], [4, 6]]. */
  const float e_c[8] = {1, 2, 3, 4, 4, 6, 4, 6};
  const float e_d[4] = {-1, -1, 0, 0};
  expect_f32(c, s222, 3, e_c);
  expect_f32(d, s221, 3, e_d);
  dp_tensor_release(ta);
  dp_tensor_release(tb);
  dp_tensor_release(tv);
  dp_tensor_release(c);
  dp_tensor_release(d);
}

static void linear_is_x_times_weight_transposed_plus_bias(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s2[1] = {2}, s22[2] = {2, 2};
  const float w[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f};
  const float bias[2] = {10, -10};
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, kS23, 2, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, bias, s2, 1, cpu_dev(0));
  dp_tensor *with = NULL, *without = NULL;
  ASSERT_OK(dp_op_linear(x, tw, tb, &with));
  ASSERT_OK(dp_op_linear(x, tw, NULL, &without));
  const float e_without[4] = {-2, 3, -2, 7.5f};
  const float e_with[4] = {8, -7, 8, -2.5f};
  expect_f32(without, s22, 2, e_without);
  expect_f32(with, s22, 2, e_with);
  dp_tensor_release(x);
  dp_tensor_release(tw);
  dp_tensor_release(tb);
  dp_tensor_release(with);
  dp_tensor_release(without);
}

static void softmax_and_log_softmax_normalise_along_the_dim(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float x[6] = {0, 0, 0, 1, 2, 3};
  dp_tensor* t = make_f32(ctx, x, kS23, 2, cpu_dev(0));
  dp_tensor *sm = NULL, *lsm = NULL, *sm0 = NULL;
  ASSERT_OK(dp_op_softmax(t, 1, &sm));
  ASSERT_OK(dp_op_log_softmax(t, -1, &lsm));
  ASSERT_OK(dp_op_softmax(t, 0, &sm0));
  const double z = exp(1.0) + exp(2.0) + exp(3.0);
  const float third = (float)(1.0 / 3.0);
  const float e_sm[6] = {
      third, third, third, (float)(exp(1.0) / z), (float)(exp(2.0) / z), (float)(exp(3.0) / z)};
  const float e_lsm[6] = {(float)-log(3.0),    (float)-log(3.0),    (float)-log(3.0),
                          (float)(1 - log(z)), (float)(2 - log(z)), (float)(3 - log(z))};
  /* Along dim 0, column j holds {0, j + 1}: softmax = {1, e^(j+1)} / (1 + e^(j+1)). */
  float e_sm0[6];
  for (int j = 0; j < 3; ++j) {
    e_sm0[j] = (float)(1.0 / (1.0 + exp(j + 1.0)));
    e_sm0[3 + j] = (float)(exp(j + 1.0) / (1.0 + exp(j + 1.0)));
  }
  expect_f32(sm, kS23, 2, e_sm);
  expect_f32(lsm, kS23, 2, e_lsm);
  expect_f32(sm0, kS23, 2, e_sm0);
  dp_tensor_release(t);
  dp_tensor_release(sm);
  dp_tensor_release(lsm);
  dp_tensor_release(sm0);
}

/* ---------------------------------------------------------------------------------- */
/* Convolution, pooling, normalisation, dropout, embedding                           */
/* ---------------------------------------------------------------------------------- */

static const int64_t kS1133[4] = {1, 1, 3, 3};
static const float kX3x3[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};

static void conv2d_one_channel_without_padding(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t sw[4] = {1, 1, 2, 2}, so[4] = {1, 1, 2, 2};
  const float w[4] = {1, 2, 3, 4};
  dp_tensor* x = make_f32(ctx, kX3x3, kS1133, 4, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, sw, 4, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_conv2d(x, tw, NULL, 1, 1, 0, 0, &y));
  /* Cross-correlation (no kernel flip): y[0][0] = 1*1 + 2*2 + 3*4 + 4*5 = 37. */
  const float e[4] = {37, 47, 67, 77};
  expect_f32(y, so, 4, e);
  dp_tensor_release(x);
  dp_tensor_release(tw);
  dp_tensor_release(y);
}

static void conv2d_one_channel_with_stride_2_padding_1_and_bias(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t sw[4] = {1, 1, 2, 2}, s1[1] = {1}, so[4] = {1, 1, 2, 2};
  const float w[4] = {1, 2, 3, 4};
  const float b[1] = {0.5f};
  dp_tensor* x = make_f32(ctx, kX3x3, kS1133, 4, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, sw, 4, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, s1, 1, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_conv2d(x, tw, tb, 2, 2, 1, 1, &y));
  /* Padded input is 5x5 with x in the middle; windows start at padded (0,0), (0,2),
     (2,0), (2,2): 4*1 = 4; 3*2 + 4*3 = 18; 2*4 + 4*7 = 36; 5 + 2*6 + 3*8 + 4*9 = 77. */
  const float e[4] = {4.5f, 18.5f, 36.5f, 77.5f};
  expect_f32(y, so, 4, e);
  dp_tensor_release(x);
  dp_tensor_release(tw);
  dp_tensor_release(tb);
  dp_tensor_release(y);
}

static const int64_t kS1144[4] = {1, 1, 4, 4};
static const int64_t kS1133Out[4] = {1, 1, 3, 3};

static void max_pool2d_with_padding_never_picks_the_padding(void** state) {
  dp_context* ctx = (dp_context*)*state;
  float x[16];
  for (int i = 0; i < 16; ++i) x[i] = -(float)(i + 1);
  dp_tensor* t = make_f32(ctx, x, kS1144, 4, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_max_pool2d(t, 2, 2, 2, 2, 1, 1, &y));
  /* Windows cover rows {0}, {1, 2}, {3} and the same columns; all values are negative,
     so a padding zero would win if it were counted: the maxima are the top-left cells. */
  const float e[9] = {-1, -2, -4, -5, -6, -8, -13, -14, -16};
  expect_f32(y, kS1133Out, 4, e);
  dp_tensor_release(t);
  dp_tensor_release(y);
}

static void max_pool2d_without_padding_takes_each_window_max(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float x[16] = {1, 9, 2, 0, 3, 4, 8, 7, 5, 5, 1, 1, 6, 2, 0, 3};
  const int64_t so[4] = {1, 1, 2, 2};
  dp_tensor* t = make_f32(ctx, x, kS1144, 4, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_max_pool2d(t, 2, 2, 2, 2, 0, 0, &y));
  const float e[4] = {9, 8, 6, 3};
  expect_f32(y, so, 4, e);
  dp_tensor_release(t);
  dp_tensor_release(y);
}

static void avg_pool2d_with_padding_divides_by_the_full_window(void** state) {
  dp_context* ctx = (dp_context*)*state;
  float x[16];
  for (int i = 0; i < 16; ++i) x[i] = (float)(i + 1);
  dp_tensor* t = make_f32(ctx, x, kS1144, 4, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_avg_pool2d(t, 2, 2, 2, 2, 1, 1, &y));
  /* Window sums over 4 (padding counted): 1/4, (2+3)/4, 4/4, (5+9)/4, (6+7+10+11)/4,
     (8+12)/4, 13/4, (14+15)/4, 16/4. */
  const float e[9] = {0.25f, 1.25f, 1, 3.5f, 8.5f, 5, 3.25f, 7.25f, 4};
  expect_f32(y, kS1133Out, 4, e);
  dp_tensor_release(t);
  dp_tensor_release(y);
}

static void batch_norm_training_normalises_and_updates_running_stats(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s42[2] = {4, 2}, s2[1] = {2};
  /* Channel 0: {1, 2, 3, 4} (mean 2.5, biased var 1.25, unbiased 5/3);
     channel 1: {0, 0, 4, 4} (mean 2, biased var 4, unbiased 16/3). */
  const float x[8] = {1, 0, 2, 0, 3, 4, 4, 4};
  const float w[2] = {2, 1}, b[2] = {0, 1}, rm0[2] = {0, 0}, rv0[2] = {1, 1};
  const double eps = 1e-5;
  dp_tensor* tx = make_f32(ctx, x, s42, 2, cpu_dev(0));
  dp_tensor* tw = make_f32(ctx, w, s2, 1, cpu_dev(0));
  dp_tensor* tb = make_f32(ctx, b, s2, 1, cpu_dev(0));
  dp_tensor* rm = make_f32(ctx, rm0, s2, 1, cpu_dev(0));
  dp_tensor* rv = make_f32(ctx, rv0, s2, 1, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_batch_norm(tx, tw, tb, rm, rv, 1, 0.1, eps, &y));
  float e[8];
  const double mean[2] = {2.5, 2.0}, var[2] = {1.25, 4.0};
  for (int i = 0; i < 8; ++i) {
    const int c = i % 2;
    e[i] = (float)(w[c] * (x[i] - mean[c]) / sqrt(var[c] + eps) + b[c]);
  }
  expect_f32(y, s42, 2, e);
  /* running = 0.9 * running + 0.1 * batch statistic (the variance unbiased). */
  const float e_rm[2] = {0.25f, 0.2f};
  const float e_rv[2] = {(float)(0.9 + 0.1 * 5.0 / 3.0), (float)(0.9 + 0.1 * 16.0 / 3.0)};
  expect_f32(rm, s2, 1, e_rm);
  expect_f32(rv, s2, 1, e_rv);
  dp_tensor_release(tx);
  dp_tensor_release(tw);
  dp_tensor_release(tb);
  dp_tensor_release(rm);
  dp_tensor_release(rv);
  dp_tensor_release(y);
}

static void batch_norm_eval_uses_the_running_stats_and_leaves_them(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s42[2] = {4, 2}, s2[1] = {2};
  const float x[8] = {1, 0, 2, 0, 3, 4, 4, 4};
  const float rm0[2] = {1, 2}, rv0[2] = {4, 1};
  const double eps = 1e-5;
  dp_tensor* tx = make_f32(ctx, x, s42, 2, cpu_dev(0));
  dp_tensor* rm = make_f32(ctx, rm0, s2, 1, cpu_dev(0));
  dp_tensor* rv = make_f32(ctx, rv0, s2, 1, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_batch_norm(tx, NULL, NULL, rm, rv, 0, 0.1, eps, &y));
  float e[8];
  for (int i = 0; i < 8; ++i) {
    const int c = i % 2;
    e[i] = (float)((x[i] - rm0[c]) / sqrt(rv0[c] + eps));
  }
  expect_f32(y, s42, 2, e);
  expect_f32(rm, s2, 1, rm0);
  expect_f32(rv, s2, 1, rv0);
  dp_tensor_release(tx);
  dp_tensor_release(rm);
  dp_tensor_release(rv);
  dp_tensor_release(y);
}

#define DROP_N 64

static void dropout_is_the_identity_for_p_0_or_when_not_training(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s[1] = {DROP_N};
  float x[DROP_N];
  for (int i = 0; i < DROP_N; ++i) x[i] = (float)i - 10.5f;
  dp_tensor* t = make_f32(ctx, x, s, 1, cpu_dev(0));
  dp_tensor *p0 = NULL, *eval = NULL;
  ASSERT_OK(dp_op_dropout(t, 0.0, 1, 7, &p0));
  ASSERT_OK(dp_op_dropout(t, 0.5, 0, 7, &eval));
  expect_f32(p0, s, 1, x);
  expect_f32(eval, s, 1, x);
  dp_tensor_release(t);
  dp_tensor_release(p0);
  dp_tensor_release(eval);
}

static void dropout_with_p_1_zeroes_everything(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s[1] = {DROP_N};
  float x[DROP_N], zeros[DROP_N];
  for (int i = 0; i < DROP_N; ++i) {
    x[i] = (float)i + 1;
    zeros[i] = 0;
  }
  dp_tensor* t = make_f32(ctx, x, s, 1, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_dropout(t, 1.0, 1, 3, &y));
  expect_f32(y, s, 1, zeros);
  dp_tensor_release(t);
  dp_tensor_release(y);
}

static void dropout_keeps_x_over_1_minus_p_and_repeats_its_mask_per_seed(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s[1] = {DROP_N};
  float x[DROP_N];
  for (int i = 0; i < DROP_N; ++i) x[i] = (float)i + 1;
  dp_tensor* t = make_f32(ctx, x, s, 1, cpu_dev(0));
  dp_tensor *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(dp_op_dropout(t, 0.25, 1, 42, &a));
  ASSERT_OK(dp_op_dropout(t, 0.25, 1, 42, &b));
  ASSERT_OK(dp_op_dropout(t, 0.25, 1, 43, &c));
  float va[DROP_N], vb[DROP_N], vc[DROP_N];
  read_f32(a, va, DROP_N);
  read_f32(b, vb, DROP_N);
  read_f32(c, vc, DROP_N);
  int zeros = 0, differ = 0;
  for (int i = 0; i < DROP_N; ++i) {
    if (va[i] == 0.0f) {
      ++zeros;
    } else if (fabs(va[i] - x[i] / 0.75) > 1e-5 * x[i]) {
      fail_msg("element %d: %g is neither 0 nor x / (1 - p) = %g", i, va[i], x[i] / 0.75);
    }
    if (va[i] != vb[i]) fail_msg("element %d differs for the same seed", i);
    if ((va[i] == 0.0f) != (vc[i] == 0.0f)) ++differ;
  }
  /* 64 draws at p = 0.25: all kept or all dropped has probability < 1e-7. */
  assert_true(zeros > 0 && zeros < DROP_N);
  assert_true(differ > 0);
  dp_tensor_release(t);
  dp_tensor_release(a);
  dp_tensor_release(b);
  dp_tensor_release(c);
}

static void embedding_gathers_rows_for_any_index_shape(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t sw[2] = {3, 2}, si[2] = {2, 2}, so[3] = {2, 2, 2};
  const float w[6] = {0, 1, 10, 11, 20, 21};
  const int64_t idx[4] = {2, 0, 1, 2};
  dp_tensor* tw = make_f32(ctx, w, sw, 2, cpu_dev(0));
  dp_tensor* ti = make_i64(ctx, idx, si, 2);
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_embedding(ti, tw, &y));
  const float e[8] = {20, 21, 0, 1, 10, 11, 20, 21};
  expect_f32(y, so, 3, e);
  dp_tensor_release(tw);
  dp_tensor_release(ti);
  dp_tensor_release(y);
}

/* ---------------------------------------------------------------------------------- */
/* Losses                                                                            */
/* ---------------------------------------------------------------------------------- */

static void cross_entropy_is_the_mean_negative_log_softmax_at_the_target(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s2[1] = {2};
  const float logits[6] = {0, 0, 0, 1, 2, 3};
  const int64_t target[2] = {1, 2};
  dp_tensor* tl = make_f32(ctx, logits, kS23, 2, cpu_dev(0));
  dp_tensor* tt = make_i64(ctx, target, s2, 1);
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_cross_entropy(tl, tt, &loss));
  /* Row 0: log 3; row 1: log(e + e^2 + e^3) - 3. */
  const float e[1] = {(float)((log(3.0) + log(exp(1.0) + exp(2.0) + exp(3.0)) - 3.0) / 2.0)};
  expect_f32(loss, NULL, 0, e);
  dp_tensor_release(tl);
  dp_tensor_release(tt);
  dp_tensor_release(loss);
}

static void nll_loss_averages_minus_the_picked_log_probs(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s2[1] = {2};
  const float lp[6] = {-1, -2, -3, -4, -5, -6};
  const int64_t target[2] = {2, 0};
  dp_tensor* tl = make_f32(ctx, lp, kS23, 2, cpu_dev(0));
  dp_tensor* tt = make_i64(ctx, target, s2, 1);
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_nll_loss(tl, tt, &loss));
  const float e[1] = {3.5f};
  expect_f32(loss, NULL, 0, e);
  dp_tensor_release(tl);
  dp_tensor_release(tt);
  dp_tensor_release(loss);
}

static void mse_loss_averages_the_squared_differences(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s22[2] = {2, 2};
  const float in[4] = {1, 2, 3, 4}, tg[4] = {0, 2, 5, 4};
  dp_tensor* ti = make_f32(ctx, in, s22, 2, cpu_dev(0));
  dp_tensor* tt = make_f32(ctx, tg, s22, 2, cpu_dev(0));
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_mse_loss(ti, tt, &loss));
  const float e[1] = {1.25f};
  expect_f32(loss, NULL, 0, e);
  dp_tensor_release(ti);
  dp_tensor_release(tt);
  dp_tensor_release(loss);
}

/* ---------------------------------------------------------------------------------- */
/* Shapes                                                                            */
/* ---------------------------------------------------------------------------------- */

static void reshape_infers_minus_one_and_shares_memory(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t want[2] = {3, -1}, s32[2] = {3, 2};
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* y = NULL;
  ASSERT_OK(dp_op_reshape(x, want, 2, &y));
  expect_f32(y, s32, 2, kX23);
  void *px = NULL, *py = NULL;
  ASSERT_OK(dp_tensor_data(x, &px));
  ASSERT_OK(dp_tensor_data(y, &py));
  assert_non_null(px);
  assert_ptr_equal(px, py);
  dp_tensor_release(x);
  dp_tensor_release(y);
}

static void flatten_merges_the_dims_from_start_to_end(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s234[3] = {2, 3, 4}, s2_12[2] = {2, 12}, s24[1] = {24}, s6_4[2] = {6, 4};
  float v[24];
  for (int i = 0; i < 24; ++i) v[i] = (float)i;
  dp_tensor* x = make_f32(ctx, v, s234, 3, cpu_dev(0));
  dp_tensor *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(dp_op_flatten(x, 1, 2, &a));
  ASSERT_OK(dp_op_flatten(x, 0, -1, &b));
  ASSERT_OK(dp_op_flatten(x, 0, 1, &c));
  float got[24];
  expect_shape(a, s2_12, 2);
  expect_shape(b, s24, 1);
  expect_shape(c, s6_4, 2);
  ASSERT_OK(dp_tensor_to_host(b, got, sizeof got));
  assert_memory_equal(got, v, sizeof v);
  dp_tensor_release(x);
  dp_tensor_release(a);
  dp_tensor_release(b);
  dp_tensor_release(c);
}

static void cat_joins_along_dim_0_and_dim_1(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s13[2] = {1, 3}, s33[2] = {3, 3}, s21[2] = {2, 1}, s22[2] = {2, 2};
  const float r[3] = {-1, -2, -3};
  const float c[2] = {7, 8};
  const float m[4] = {1, 2, 3, 4};
  dp_tensor* tr = make_f32(ctx, r, s13, 2, cpu_dev(0));
  dp_tensor* ta = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* tc = make_f32(ctx, c, s21, 2, cpu_dev(0));
  dp_tensor* tm = make_f32(ctx, m, s22, 2, cpu_dev(0));
  const dp_tensor* rows[2] = {tr, ta};
  const dp_tensor* cols[2] = {tc, tm};
  dp_tensor *y0 = NULL, *y1 = NULL;
  ASSERT_OK(dp_op_cat(rows, 2, 0, &y0));
  ASSERT_OK(dp_op_cat(cols, 2, -1, &y1));
  const float e0[9] = {-1, -2, -3, 1, 2, 3, 4, 5, 6};
  const float e1[6] = {7, 1, 2, 8, 3, 4};
  expect_f32(y0, s33, 2, e0);
  expect_f32(y1, kS23, 2, e1);
  dp_tensor_release(tr);
  dp_tensor_release(ta);
  dp_tensor_release(tc);
  dp_tensor_release(tm);
  dp_tensor_release(y0);
  dp_tensor_release(y1);
}

static void split_along_dim_0_gives_views(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s32[2] = {3, 2}, s12[2] = {1, 2}, s22[2] = {2, 2};
  const int64_t sizes[2] = {1, 2};
  dp_tensor* x = make_f32(ctx, kX23, s32, 2, cpu_dev(0));
  dp_tensor* parts[2] = {NULL, NULL};
  ASSERT_OK(dp_op_split(x, sizes, 2, 0, parts));
  const float e0[2] = {1, 2}, e1[4] = {3, 4, 5, 6};
  expect_f32(parts[0], s12, 2, e0);
  expect_f32(parts[1], s22, 2, e1);
  void *px = NULL, *p0 = NULL, *p1 = NULL;
  ASSERT_OK(dp_tensor_data(x, &px));
  ASSERT_OK(dp_tensor_data(parts[0], &p0));
  ASSERT_OK(dp_tensor_data(parts[1], &p1));
  assert_ptr_equal(p0, px);
  assert_ptr_equal(p1, (float*)px + 2);
  dp_tensor_release(x);
  dp_tensor_release(parts[0]);
  dp_tensor_release(parts[1]);
}

static void split_along_dim_1_gives_copies_of_the_columns(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s22[2] = {2, 2}, s21[2] = {2, 1};
  const int64_t sizes[2] = {2, 1};
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* parts[2] = {NULL, NULL};
  ASSERT_OK(dp_op_split(x, sizes, 2, 1, parts));
  const float e0[4] = {1, 2, 4, 5}, e1[2] = {3, 6};
  expect_f32(parts[0], s22, 2, e0);
  expect_f32(parts[1], s21, 2, e1);
  dp_tensor_release(x);
  dp_tensor_release(parts[0]);
  dp_tensor_release(parts[1]);
}

/* ---------------------------------------------------------------------------------- */
/* Autograd                                                                          */
/* ---------------------------------------------------------------------------------- */

static void grad_is_null_before_any_backward(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  dp_tensor* g = (dp_tensor*)x; /* must be overwritten with NULL */
  ASSERT_OK(dp_tensor_grad(x, &g));
  assert_null(g);
  dp_tensor_release(x);
}

static void backward_of_sum_x_times_x_gives_2x(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  assert_int_equal(requires_grad(x), 1);
  dp_tensor *sq = NULL, *loss = NULL, *g = NULL;
  ASSERT_OK(dp_op_mul(x, x, &sq));
  ASSERT_OK(dp_op_sum(sq, &loss));
  assert_int_equal(requires_grad(loss), 1);
  ASSERT_OK(dp_backward(loss, NULL, 0));
  ASSERT_OK(dp_tensor_grad(x, &g));
  assert_non_null(g);
  const float e[6] = {2, 4, 6, 8, 10, 12};
  expect_f32(g, kS23, 2, e);
  /* zero_grad drops it again. */
  dp_tensor_release(g);
  ASSERT_OK(dp_tensor_zero_grad(x));
  g = (dp_tensor*)x;
  ASSERT_OK(dp_tensor_grad(x, &g));
  assert_null(g);
  dp_tensor_release(x);
  dp_tensor_release(sq);
  dp_tensor_release(loss);
}

static void backward_of_mean_gives_one_over_n(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  dp_tensor *m = NULL, *g = NULL;
  ASSERT_OK(dp_op_mean(x, &m));
  ASSERT_OK(dp_backward(m, NULL, 0));
  ASSERT_OK(dp_tensor_grad(x, &g));
  const float s = 1.0f / 6.0f;
  const float e[6] = {s, s, s, s, s, s};
  expect_f32(g, kS23, 2, e);
  dp_tensor_release(x);
  dp_tensor_release(m);
  dp_tensor_release(g);
}

static void broadcast_add_gradient_is_summed_over_the_broadcast_dim(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s3[1] = {3};
  const float bv[3] = {0.5f, -1, 2};
  const float wv[6] = {1, 2, 3, 4, 5, 6};
  dp_tensor* a = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* b = make_f32(ctx, bv, s3, 1, cpu_dev(0));
  dp_tensor* w = make_f32(ctx, wv, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(a, 1));
  ASSERT_OK(dp_tensor_set_requires_grad(b, 1));
  dp_tensor *s = NULL, *p = NULL, *loss = NULL, *ga = NULL, *gb = NULL;
  ASSERT_OK(dp_op_add(a, b, &s));
  ASSERT_OK(dp_op_mul(s, w, &p));
  ASSERT_OK(dp_op_sum(p, &loss));
  ASSERT_OK(dp_backward(loss, NULL, 0));
  ASSERT_OK(dp_tensor_grad(a, &ga));
  ASSERT_OK(dp_tensor_grad(b, &gb));
  /* d loss / d a = w; d loss / d b[j] = sum over rows of w[:, j]. */
  const float e_gb[3] = {5, 7, 9};
  expect_f32(ga, kS23, 2, wv);
  expect_f32(gb, s3, 1, e_gb);
  dp_tensor_release(a);
  dp_tensor_release(b);
  dp_tensor_release(w);
  dp_tensor_release(s);
  dp_tensor_release(p);
  dp_tensor_release(loss);
  dp_tensor_release(ga);
  dp_tensor_release(gb);
}

static void backward_with_an_explicit_gradient_and_retain_graph_accumulates(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const float gv[6] = {1, 0, -1, 2, 0.5f, 0};
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* seed = make_f32(ctx, gv, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  dp_tensor *y = NULL, *g = NULL;
  ASSERT_OK(dp_op_scale(x, 3.0, &y));
  ASSERT_OK(dp_backward(y, seed, 1));
  ASSERT_OK(dp_backward(y, seed, 0));
  ASSERT_OK(dp_tensor_grad(x, &g));
  /* Two backwards of 3 * seed accumulate to 6 * seed. */
  const float e[6] = {6, 0, -6, 12, 3, 0};
  expect_f32(g, kS23, 2, e);
  dp_tensor_release(x);
  dp_tensor_release(seed);
  dp_tensor_release(y);
  dp_tensor_release(g);
}

static void detach_shares_memory_outside_the_graph(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  dp_tensor *y = NULL, *d = NULL, *z = NULL;
  ASSERT_OK(dp_op_scale(x, 2.0, &y));
  ASSERT_OK(dp_tensor_detach(y, &d));
  assert_int_equal(requires_grad(y), 1);
  assert_int_equal(requires_grad(d), 0);
  void *py = NULL, *pd = NULL;
  ASSERT_OK(dp_tensor_data(y, &py));
  ASSERT_OK(dp_tensor_data(d, &pd));
  assert_ptr_equal(py, pd);
  const float e[6] = {2, 4, 6, 8, 10, 12};
  expect_f32(d, kS23, 2, e);
  ASSERT_OK(dp_op_mul(d, d, &z));
  assert_int_equal(requires_grad(z), 0);
  ASSERT_ERROR(dp_backward(z, NULL, 0), DP_ERR_STATE, "does not require grad");
  dp_tensor_release(x);
  dp_tensor_release(y);
  dp_tensor_release(d);
  dp_tensor_release(z);
}

static void ops_under_grad_off_do_not_require_grad(void** state) {
  dp_context* ctx = (dp_context*)*state;
  assert_int_equal(dp_is_grad_enabled(), 1);
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  assert_int_equal(dp_set_grad_enabled(0), 1);
  assert_int_equal(dp_is_grad_enabled(), 0);
  dp_tensor *off = NULL, *on = NULL;
  ASSERT_OK(dp_op_mul(x, x, &off));
  assert_int_equal(dp_set_grad_enabled(1), 0);
  assert_int_equal(dp_is_grad_enabled(), 1);
  ASSERT_OK(dp_op_mul(x, x, &on));
  assert_int_equal(requires_grad(off), 0);
  assert_int_equal(requires_grad(on), 1);
  const float e[6] = {1, 4, 9, 16, 25, 36};
  expect_f32(off, kS23, 2, e);
  dp_tensor_release(x);
  dp_tensor_release(off);
  dp_tensor_release(on);
}

static void requires_grad_on_an_int64_tensor_is_rejected(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s2[1] = {2};
  const int64_t v[2] = {1, 2};
  dp_tensor* t = make_i64(ctx, v, s2, 1);
  ASSERT_ERROR(dp_tensor_set_requires_grad(t, 1), DP_ERR_DTYPE_MISMATCH, "int64");
  assert_int_equal(requires_grad(t), 0);
  /* Turning it off is harmless. */
  ASSERT_OK(dp_tensor_set_requires_grad(t, 0));
  dp_tensor_release(t);
}

static void a_second_backward_without_retain_graph_fails(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  dp_tensor *sq = NULL, *loss = NULL;
  ASSERT_OK(dp_op_mul(x, x, &sq));
  ASSERT_OK(dp_op_sum(sq, &loss));
  ASSERT_OK(dp_backward(loss, NULL, 0));
  ASSERT_ERROR(dp_backward(loss, NULL, 0), DP_ERR_STATE, "a second time");
  dp_tensor_release(x);
  dp_tensor_release(sq);
  dp_tensor_release(loss);
}

static void modifying_a_saved_tensor_in_place_fails_backward_naming_the_op(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t s32[2] = {3, 2};
  const float wv[6] = {1, 0, 0, 1, 1, 1};
  const float fresh[6] = {0, 0, 0, 0, 0, 0};
  dp_tensor* x = make_f32(ctx, kX23, kS23, 2, cpu_dev(0));
  dp_tensor* w = make_f32(ctx, wv, s32, 2, cpu_dev(0));
  ASSERT_OK(dp_tensor_set_requires_grad(x, 1));
  dp_tensor *y = NULL, *loss = NULL;
  /* matmul saves w to compute x's gradient. */
  ASSERT_OK(dp_op_matmul(x, w, &y));
  ASSERT_OK(dp_op_sum(y, &loss));
  uint64_t v0 = 0, v1 = 0;
  ASSERT_OK(dp_tensor_version(w, &v0));
  ASSERT_OK(dp_tensor_copy_from_host(w, fresh, sizeof fresh));
  ASSERT_OK(dp_tensor_version(w, &v1));
  assert_true(v1 > v0);
  ASSERT_ERROR(dp_backward(loss, NULL, 0), DP_ERR_STATE, "MatmulBackward");
  assert_true(strstr(dp_last_error(), "modified in place") != NULL);
  dp_tensor_release(x);
  dp_tensor_release(w);
  dp_tensor_release(y);
  dp_tensor_release(loss);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_and_sub_broadcast_a_row_over_every_row),
      cmocka_unit_test(mul_broadcasts_a_column_and_div_a_leading_one),
      cmocka_unit_test(neg_scale_and_add_scalar_map_each_element),
      cmocka_unit_test(relu_and_exact_gelu_match_their_formulas),
      cmocka_unit_test(tanh_sigmoid_exp_and_log_match_libm),
      cmocka_unit_test(sum_and_mean_reduce_everything_to_a_scalar),
      cmocka_unit_test(sum_dim_and_mean_dim_keep_or_drop_the_dim),
      cmocka_unit_test(argmax_returns_int64_indices_and_ties_pick_the_first),
      cmocka_unit_test(matmul_multiplies_2x3_by_3x2),
      cmocka_unit_test(matmul_batches_3d_by_3d_and_3d_by_2d),
      cmocka_unit_test(linear_is_x_times_weight_transposed_plus_bias),
      cmocka_unit_test(softmax_and_log_softmax_normalise_along_the_dim),
      cmocka_unit_test(conv2d_one_channel_without_padding),
      cmocka_unit_test(conv2d_one_channel_with_stride_2_padding_1_and_bias),
      cmocka_unit_test(max_pool2d_with_padding_never_picks_the_padding),
      cmocka_unit_test(max_pool2d_without_padding_takes_each_window_max),
      cmocka_unit_test(avg_pool2d_with_padding_divides_by_the_full_window),
      cmocka_unit_test(batch_norm_training_normalises_and_updates_running_stats),
      cmocka_unit_test(batch_norm_eval_uses_the_running_stats_and_leaves_them),
      cmocka_unit_test(dropout_is_the_identity_for_p_0_or_when_not_training),
      cmocka_unit_test(dropout_with_p_1_zeroes_everything),
      cmocka_unit_test(dropout_keeps_x_over_1_minus_p_and_repeats_its_mask_per_seed),
      cmocka_unit_test(embedding_gathers_rows_for_any_index_shape),
      cmocka_unit_test(cross_entropy_is_the_mean_negative_log_softmax_at_the_target),
      cmocka_unit_test(nll_loss_averages_minus_the_picked_log_probs),
      cmocka_unit_test(mse_loss_averages_the_squared_differences),
      cmocka_unit_test(reshape_infers_minus_one_and_shares_memory),
      cmocka_unit_test(flatten_merges_the_dims_from_start_to_end),
      cmocka_unit_test(cat_joins_along_dim_0_and_dim_1),
      cmocka_unit_test(split_along_dim_0_gives_views),
      cmocka_unit_test(split_along_dim_1_gives_copies_of_the_columns),
      cmocka_unit_test(grad_is_null_before_any_backward),
      cmocka_unit_test(backward_of_sum_x_times_x_gives_2x),
      cmocka_unit_test(backward_of_mean_gives_one_over_n),
      cmocka_unit_test(broadcast_add_gradient_is_summed_over_the_broadcast_dim),
      cmocka_unit_test(backward_with_an_explicit_gradient_and_retain_graph_accumulates),
      cmocka_unit_test(detach_shares_memory_outside_the_graph),
      cmocka_unit_test(ops_under_grad_off_do_not_require_grad),
      cmocka_unit_test(requires_grad_on_an_int64_tensor_is_rejected),
      cmocka_unit_test(a_second_backward_without_retain_graph_fails),
      cmocka_unit_test(modifying_a_saved_tensor_in_place_fails_backward_naming_the_op),
  };
  return cmocka_run_group_tests_name("ops", tests, setup, teardown);
}
