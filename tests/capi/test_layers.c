/* Layers, losses and models through the C API against PyTorch (tests/fixtures): outputs,
 * the gradients of sum(y * W) for every parameter and the input, BatchNorm's running
 * statistics, parameter names and counts, default initialisation, custom modules. */
#include <stdlib.h>

#include "torch_compare.h"

static int setup(void** state) {
  *state = make_context(2);
  return 0;
}

static int teardown(void** state) {
  dp_context_release((dp_context*)*state);
  return 0;
}

/* y = m(x) matches PyTorch; then backpropagates sum(y * w). */
static void forward_and_backprop(dp_context* ctx, dp_module* m, dp_tensor* x, const float* y,
                                 const int64_t* y_shape, size_t y_ndim, const float* w) {
  dp_tensor* out = NULL;
  ASSERT_OK(dp_module_forward1(m, x, &out));
  assert_tensor_matches("output", out, y, y_shape, y_ndim);
  backward_weighted_sum(ctx, out, w, y_shape, y_ndim);
  dp_tensor_release(out);
}

/* The module's parameters are exactly `names`, in that order. */
static void assert_parameter_names(const dp_module* m, const char* const* names, size_t count) {
  size_t n = 0;
  ASSERT_OK(dp_module_parameter_count(m, &n));
  assert_int_equal(n, count);
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    ASSERT_OK(dp_module_parameter(m, i, &name, NULL));
    assert_string_equal(name, names[i]);
  }
}

static int64_t read_int64_state(const dp_module* m, const char* name) {
  dp_tensor* t = NULL;
  int64_t v = -1;
  ASSERT_OK(dp_module_get(m, name, &t));
  ASSERT_OK(dp_tensor_to_host(t, &v, sizeof v));
  dp_tensor_release(t);
  return v;
}

/* ---------------------------------------------------------------------------------- */
/* Linear and Conv2d                                                                  */
/* ---------------------------------------------------------------------------------- */

static void linear_forward_and_gradients_match_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 5, 3, 1, cpu_dev(0), &m));
  assert_parameter_names(m, LINEAR_PARAMETER_NAMES, LINEAR_PARAMETER_NAMES_COUNT);
  load_fixture(m, "weight", FIXTURE(LINEAR_WEIGHT));
  load_fixture(m, "bias", FIXTURE(LINEAR_BIAS));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(LINEAR_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(LINEAR_Y), LINEAR_W);
  assert_param_grad_matches(m, "weight", FIXTURE(LINEAR_DWEIGHT));
  assert_param_grad_matches(m, "bias", FIXTURE(LINEAR_DBIAS));
  assert_grad_matches("grad of x", x, FIXTURE(LINEAR_DX));
  dp_tensor_release(x);
  dp_module_release(m);
}

static void linear_without_bias_has_only_a_weight_and_treats_leading_dims_as_batch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 6, 4, 0, cpu_dev(0), &m));
  const char* const names[1] = {"weight"};
  assert_parameter_names(m, names, 1);
  dp_tensor* bias = NULL;
  ASSERT_ERROR(dp_module_get(m, "bias", &bias), DP_ERR_OUT_OF_RANGE, "\"bias\"");
  load_fixture(m, "weight", FIXTURE(LINEAR_NOBIAS_WEIGHT));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(LINEAR_NOBIAS_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(LINEAR_NOBIAS_Y), LINEAR_NOBIAS_W);
  assert_param_grad_matches(m, "weight", FIXTURE(LINEAR_NOBIAS_DWEIGHT));
  assert_grad_matches("grad of x", x, FIXTURE(LINEAR_NOBIAS_DX));
  dp_tensor_release(x);
  dp_module_release(m);
}

static void conv2d_with_stride_2_and_padding_1_on_odd_sizes_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_conv2d(ctx, 3, 4, 3, 3, 2, 2, 1, 1, 1, cpu_dev(0), &m));
  assert_parameter_names(m, LINEAR_PARAMETER_NAMES, LINEAR_PARAMETER_NAMES_COUNT);
  load_fixture(m, "weight", FIXTURE(CONV_WEIGHT));
  load_fixture(m, "bias", FIXTURE(CONV_BIAS));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(CONV_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(CONV_Y), CONV_W);
  assert_param_grad_matches(m, "weight", FIXTURE(CONV_DWEIGHT));
  assert_param_grad_matches(m, "bias", FIXTURE(CONV_DBIAS));
  assert_grad_matches("grad of x", x, FIXTURE(CONV_DX));
  dp_tensor_release(x);
  dp_module_release(m);
}

static void conv2d_with_rectangular_kernel_stride_and_padding_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_conv2d(ctx, 2, 3, 3, 2, 2, 1, 1, 0, 0, cpu_dev(0), &m));
  size_t n = 0;
  ASSERT_OK(dp_module_parameter_count(m, &n));
  assert_int_equal(n, 1);
  load_fixture(m, "weight", FIXTURE(CONV_ASYM_WEIGHT));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(CONV_ASYM_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(CONV_ASYM_Y), CONV_ASYM_W);
  assert_param_grad_matches(m, "weight", FIXTURE(CONV_ASYM_DWEIGHT));
  assert_grad_matches("grad of x", x, FIXTURE(CONV_ASYM_DX));
  dp_tensor_release(x);
  dp_module_release(m);
}

/* Every element within [-bound, bound], and the values spread over the range (a uniform
   draw, not a constant). */
static void assert_uniform_within(const dp_module* m, const char* name, double bound,
                                  int check_spread) {
  dp_tensor* t = NULL;
  int64_t n = 0;
  ASSERT_OK(dp_module_get(m, name, &t));
  ASSERT_OK(dp_tensor_numel(t, &n));
  float* v = (float*)malloc((size_t)n * sizeof(float));
  read_f32(t, v, (size_t)n);
  float lo = v[0], hi = v[0];
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!(fabs((double)v[i]) <= bound))
      fail_msg("%s[%lld] = %g is outside +-%g", name, (long long)i, (double)v[i], bound);
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
    sum += v[i];
  }
  free(v);
  dp_tensor_release(t);
  if (!(hi > lo)) fail_msg("%s: all %lld values equal %g", name, (long long)n, (double)lo);
  if (check_spread) {
    /* thousands of draws: the extremes come close to the bounds, the mean close to 0
       (its standard deviation is bound / sqrt(3 n), far below the 0.05 bound allowed) */
    assert_true(hi > 0.9 * bound);
    assert_true(lo < -0.9 * bound);
    assert_true(fabs(sum / (double)n) < 0.05 * bound);
  }
}

static void linear_default_init_is_uniform_within_one_over_sqrt_fan_in(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, 400, 30, 1, cpu_dev(0), &m));
  assert_uniform_within(m, "weight", 1.0 / sqrt(400.0), 1);
  assert_uniform_within(m, "bias", 1.0 / sqrt(400.0), 0);
  dp_module_release(m);
}

static void conv2d_default_init_is_uniform_within_one_over_sqrt_fan_in(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  /* fan_in = in_channels * kernel_h * kernel_w = 16 * 3 * 5 */
  ASSERT_OK(dp_module_conv2d(ctx, 16, 8, 3, 5, 1, 1, 0, 0, 1, cpu_dev(0), &m));
  assert_uniform_within(m, "weight", 1.0 / sqrt(240.0), 1);
  assert_uniform_within(m, "bias", 1.0 / sqrt(240.0), 0);
  dp_module_release(m);
}

static void embedding_default_init_is_standard_normal(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_embedding(ctx, 1000, 50, cpu_dev(0), &m));
  dp_tensor* t = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &t));
  const size_t n = 50000;
  float* v = (float*)malloc(n * sizeof(float));
  read_f32(t, v, n);
  double sum = 0, sq = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += v[i];
    sq += (double)v[i] * v[i];
  }
  free(v);
  const double mean = sum / n, var = sq / n - mean * mean;
  /* standard errors: 1/sqrt(n) = 0.0045 for the mean, sqrt(2/n) = 0.0063 for the variance */
  assert_true(fabs(mean) < 0.03);
  assert_true(fabs(var - 1.0) < 0.04);
  dp_tensor_release(t);
  dp_module_release(m);
}

/* ---------------------------------------------------------------------------------- */
/* Activations and Dropout                                                            */
/* ---------------------------------------------------------------------------------- */

static void check_parameterless(dp_context* ctx, dp_module* m, const float* x,
                                const int64_t* x_shape, size_t x_ndim, const float* y,
                                const int64_t* y_shape, size_t y_ndim, const float* w,
                                const float* dx) {
  size_t n = 1;
  ASSERT_OK(dp_module_parameter_count(m, &n));
  assert_int_equal(n, 0);
  dp_tensor* xt = fixture_tensor(ctx, x, x_shape, x_ndim, 1);
  forward_and_backprop(ctx, m, xt, y, y_shape, y_ndim, w);
  assert_grad_matches("grad of x", xt, dx, x_shape, x_ndim);
  dp_tensor_release(xt);
  dp_module_release(m);
}

/* Sizes whose parameters no device can hold: out of memory, naming the bytes. (A 2^60
   Linear used to fail with an internal error, from a host buffer for its initial values
   larger than a std::vector may be.) The module pointer is left alone. */
static void layers_too_large_for_memory_are_out_of_memory_naming_the_bytes(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_ERROR(dp_module_linear(ctx, INT64_C(1) << 60, 1, 0, cpu_dev(0), &m), DP_ERR_OUT_OF_MEMORY,
               "could not allocate 4611686018427387904 bytes");
  ASSERT_ERROR(dp_module_embedding(ctx, INT64_C(1) << 59, 2, cpu_dev(0), &m), DP_ERR_OUT_OF_MEMORY,
               "could not allocate 4611686018427387904 bytes");
  ASSERT_ERROR(dp_module_conv2d(ctx, 1 << 30, 1 << 30, 1, 1, 1, 1, 0, 0, 0, cpu_dev(0), &m),
               DP_ERR_OUT_OF_MEMORY, "could not allocate 4611686018427387904 bytes");
  assert_null(m);
}

static void relu_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_relu(ctx, &m));
  check_parameterless(ctx, m, FIXTURE(RELU_X), FIXTURE(RELU_Y), RELU_W, RELU_DX);
}

static void gelu_is_the_exact_erf_form_of_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_gelu(ctx, &m));
  check_parameterless(ctx, m, FIXTURE(GELU_X), FIXTURE(GELU_Y), GELU_W, GELU_DX);
}

static void tanh_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_tanh(ctx, &m));
  check_parameterless(ctx, m, FIXTURE(TANH_X), FIXTURE(TANH_Y), TANH_W, TANH_DX);
}

static void sigmoid_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_sigmoid(ctx, &m));
  check_parameterless(ctx, m, FIXTURE(SIGMOID_X), FIXTURE(SIGMOID_Y), SIGMOID_W, SIGMOID_DX);
}

static void dropout_in_eval_mode_is_the_identity_like_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_dropout(ctx, 0.5, &m));
  ASSERT_OK(dp_module_train(m, 0));
  int training = 1;
  ASSERT_OK(dp_module_is_training(m, &training));
  assert_int_equal(training, 0);
  check_parameterless(ctx, m, FIXTURE(DROPOUT_EVAL_X), FIXTURE(DROPOUT_EVAL_Y), DROPOUT_EVAL_W,
                      DROPOUT_EVAL_DX);
}

static void dropout_in_train_mode_zeroes_or_doubles_each_element_at_p_one_half(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_dropout(ctx, 0.5, &m));
  int training = 0;
  ASSERT_OK(dp_module_is_training(m, &training));
  assert_int_equal(training, 1); /* modules start in train mode, as in PyTorch */
  enum { kN = 4000 };
  const int64_t shape[1] = {kN};
  float* x = (float*)malloc(kN * sizeof(float));
  float* y = (float*)malloc(kN * sizeof(float));
  for (int i = 0; i < kN; ++i) x[i] = 1.0f + (float)i / kN;
  dp_tensor* xt = make_f32(ctx, x, shape, 1, cpu_dev(0));
  dp_tensor* yt = NULL;
  ASSERT_OK(dp_module_forward1(m, xt, &yt));
  read_f32(yt, y, kN);
  int zeros = 0;
  for (int i = 0; i < kN; ++i) {
    if (y[i] == 0.0f) {
      ++zeros;
    } else if (fabsf(y[i] - 2.0f * x[i]) > 1e-6f * x[i]) {
      fail_msg("y[%d] = %g is neither 0 nor 2 * %g", i, (double)y[i], (double)x[i]);
    }
  }
  /* binomial(4000, 0.5): standard deviation 32 */
  assert_in_range(zeros, kN / 2 - 200, kN / 2 + 200);
  free(x);
  free(y);
  dp_tensor_release(yt);
  dp_tensor_release(xt);
  dp_module_release(m);
}

/* ---------------------------------------------------------------------------------- */
/* BatchNorm                                                                          */
/* ---------------------------------------------------------------------------------- */

static void batchnorm_has_pytorchs_parameters_buffers_and_initial_state(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_batchnorm2d(ctx, 3, 1e-5, 0.1, cpu_dev(0), &m));
  assert_parameter_names(m, BN_PARAMETER_NAMES, BN_PARAMETER_NAMES_COUNT);
  size_t n = 0;
  ASSERT_OK(dp_module_buffer_count(m, &n));
  assert_int_equal(n, BN_BUFFER_NAMES_COUNT);
  for (size_t i = 0; i < n; ++i) {
    const char* name = NULL;
    dp_tensor* t = NULL;
    ASSERT_OK(dp_module_buffer(m, i, &name, &t));
    assert_string_equal(name, BN_BUFFER_NAMES[i]);
    dp_dtype dtype;
    ASSERT_OK(dp_tensor_dtype(t, &dtype));
    /* num_batches_tracked is an int64 scalar, as PyTorch's */
    assert_int_equal(dtype, strcmp(name, "num_batches_tracked") == 0 ? DP_INT64 : DP_FLOAT32);
    dp_tensor_release(t);
  }
  const float ones[3] = {1, 1, 1}, zeros[3] = {0, 0, 0};
  const int64_t shape[1] = {3};
  assert_state_matches(m, "weight", ones, shape, 1);
  assert_state_matches(m, "bias", zeros, shape, 1);
  assert_state_matches(m, "running_mean", zeros, shape, 1);
  assert_state_matches(m, "running_var", ones, shape, 1);
  assert_int_equal(read_int64_state(m, "num_batches_tracked"), 0);
  dp_module_release(m);
}

static void batchnorm1d_train_matches_pytorch_output_gradients_and_running_stats(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_batchnorm1d(ctx, 4, 1e-5, 0.1, cpu_dev(0), &m));
  load_fixture(m, "weight", FIXTURE(BN1D_TRAIN_WEIGHT));
  load_fixture(m, "bias", FIXTURE(BN1D_TRAIN_BIAS));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(BN1D_TRAIN_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(BN1D_TRAIN_Y), BN1D_TRAIN_W);
  assert_param_grad_matches(m, "weight", FIXTURE(BN1D_TRAIN_DWEIGHT));
  assert_param_grad_matches(m, "bias", FIXTURE(BN1D_TRAIN_DBIAS));
  assert_grad_matches("grad of x", x, FIXTURE(BN1D_TRAIN_DX));
  assert_state_matches(m, "running_mean", FIXTURE(BN1D_TRAIN_RUNNING_MEAN));
  assert_state_matches(m, "running_var", FIXTURE(BN1D_TRAIN_RUNNING_VAR));
  assert_int_equal(read_int64_state(m, "num_batches_tracked"), BN1D_TRAIN_NUM_BATCHES_TRACKED[0]);
  dp_tensor_release(x);
  dp_module_release(m);
}

static void batchnorm1d_train_on_n_c_l_input_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_batchnorm1d(ctx, 3, 1e-3, 0.3, cpu_dev(0), &m));
  load_fixture(m, "weight", FIXTURE(BN1D_NCL_TRAIN_WEIGHT));
  load_fixture(m, "bias", FIXTURE(BN1D_NCL_TRAIN_BIAS));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(BN1D_NCL_TRAIN_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(BN1D_NCL_TRAIN_Y), BN1D_NCL_TRAIN_W);
  assert_param_grad_matches(m, "weight", FIXTURE(BN1D_NCL_TRAIN_DWEIGHT));
  assert_param_grad_matches(m, "bias", FIXTURE(BN1D_NCL_TRAIN_DBIAS));
  assert_grad_matches("grad of x", x, FIXTURE(BN1D_NCL_TRAIN_DX));
  assert_state_matches(m, "running_mean", FIXTURE(BN1D_NCL_TRAIN_RUNNING_MEAN));
  assert_state_matches(m, "running_var", FIXTURE(BN1D_NCL_TRAIN_RUNNING_VAR));
  dp_tensor_release(x);
  dp_module_release(m);
}

static void batchnorm1d_eval_normalises_with_the_running_stats_like_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_batchnorm1d(ctx, 4, 1e-5, 0.1, cpu_dev(0), &m));
  load_fixture(m, "weight", FIXTURE(BN1D_EVAL_WEIGHT));
  load_fixture(m, "bias", FIXTURE(BN1D_EVAL_BIAS));
  load_fixture(m, "running_mean", FIXTURE(BN1D_EVAL_RUNNING_MEAN));
  load_fixture(m, "running_var", FIXTURE(BN1D_EVAL_RUNNING_VAR));
  ASSERT_OK(dp_module_train(m, 0));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(BN1D_EVAL_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(BN1D_EVAL_Y), BN1D_EVAL_W);
  assert_param_grad_matches(m, "weight", FIXTURE(BN1D_EVAL_DWEIGHT));
  assert_param_grad_matches(m, "bias", FIXTURE(BN1D_EVAL_DBIAS));
  assert_grad_matches("grad of x", x, FIXTURE(BN1D_EVAL_DX));
  /* evaluation leaves the running statistics alone */
  assert_state_matches(m, "running_mean", FIXTURE(BN1D_EVAL_RUNNING_MEAN));
  assert_state_matches(m, "running_var", FIXTURE(BN1D_EVAL_RUNNING_VAR));
  assert_int_equal(read_int64_state(m, "num_batches_tracked"), 0);
  dp_tensor_release(x);
  dp_module_release(m);
}

static void batchnorm2d_train_matches_pytorch_output_gradients_and_running_stats(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_batchnorm2d(ctx, 3, 1e-3, 0.2, cpu_dev(0), &m));
  load_fixture(m, "weight", FIXTURE(BN2D_TRAIN_WEIGHT));
  load_fixture(m, "bias", FIXTURE(BN2D_TRAIN_BIAS));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(BN2D_TRAIN_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(BN2D_TRAIN_Y), BN2D_TRAIN_W);
  assert_param_grad_matches(m, "weight", FIXTURE(BN2D_TRAIN_DWEIGHT));
  assert_param_grad_matches(m, "bias", FIXTURE(BN2D_TRAIN_DBIAS));
  assert_grad_matches("grad of x", x, FIXTURE(BN2D_TRAIN_DX));
  assert_state_matches(m, "running_mean", FIXTURE(BN2D_TRAIN_RUNNING_MEAN));
  assert_state_matches(m, "running_var", FIXTURE(BN2D_TRAIN_RUNNING_VAR));
  assert_int_equal(read_int64_state(m, "num_batches_tracked"), BN2D_TRAIN_NUM_BATCHES_TRACKED[0]);
  dp_tensor_release(x);
  dp_module_release(m);
}

static void batchnorm2d_eval_normalises_with_the_running_stats_like_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_batchnorm2d(ctx, 3, 1e-5, 0.1, cpu_dev(0), &m));
  load_fixture(m, "weight", FIXTURE(BN2D_EVAL_WEIGHT));
  load_fixture(m, "bias", FIXTURE(BN2D_EVAL_BIAS));
  load_fixture(m, "running_mean", FIXTURE(BN2D_EVAL_RUNNING_MEAN));
  load_fixture(m, "running_var", FIXTURE(BN2D_EVAL_RUNNING_VAR));
  ASSERT_OK(dp_module_train(m, 0));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(BN2D_EVAL_X), 1);
  forward_and_backprop(ctx, m, x, FIXTURE(BN2D_EVAL_Y), BN2D_EVAL_W);
  assert_param_grad_matches(m, "weight", FIXTURE(BN2D_EVAL_DWEIGHT));
  assert_param_grad_matches(m, "bias", FIXTURE(BN2D_EVAL_DBIAS));
  assert_grad_matches("grad of x", x, FIXTURE(BN2D_EVAL_DX));
  assert_state_matches(m, "running_mean", FIXTURE(BN2D_EVAL_RUNNING_MEAN));
  assert_state_matches(m, "running_var", FIXTURE(BN2D_EVAL_RUNNING_VAR));
  dp_tensor_release(x);
  dp_module_release(m);
}

static void batchnorm_counts_batches_in_train_mode_only(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_batchnorm1d(ctx, 4, 1e-5, 0.1, cpu_dev(0), &m));
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(BN1D_TRAIN_X), 0);
  dp_tensor* y = NULL;
  for (int64_t k = 1; k <= 2; ++k) {
    ASSERT_OK(dp_module_forward1(m, x, &y));
    dp_tensor_release(y);
    assert_int_equal(read_int64_state(m, "num_batches_tracked"), k);
  }
  /* the second forward moved the running mean again: mean_2 = 0.9 mean_1 + 0.1 batch
     mean, where mean_1 = 0.1 batch mean, so mean_2 = 0.19 batch mean = 1.9 mean_1 */
  float mean2[4];
  dp_tensor* rm = NULL;
  ASSERT_OK(dp_module_get(m, "running_mean", &rm));
  read_f32(rm, mean2, 4);
  float expected[4];
  for (int i = 0; i < 4; ++i) expected[i] = 1.9f * BN1D_TRAIN_RUNNING_MEAN[i];
  assert_close_f32(mean2, expected, 4, 1e-5, 1e-6);
  ASSERT_OK(dp_module_train(m, 0));
  ASSERT_OK(dp_module_forward1(m, x, &y));
  dp_tensor_release(y);
  assert_int_equal(read_int64_state(m, "num_batches_tracked"), 2);
  float after_eval[4];
  read_f32(rm, after_eval, 4);
  assert_memory_equal(after_eval, mean2, sizeof mean2);
  dp_tensor_release(rm);
  dp_tensor_release(x);
  dp_module_release(m);
}

/* ---------------------------------------------------------------------------------- */
/* Pooling, Flatten, Embedding                                                        */
/* ---------------------------------------------------------------------------------- */

static void maxpool2d_with_stride_and_padding_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_maxpool2d(ctx, 3, 3, 2, 2, 1, 1, &m));
  check_parameterless(ctx, m, FIXTURE(MAXPOOL_X), FIXTURE(MAXPOOL_Y), MAXPOOL_W, MAXPOOL_DX);
}

static void avgpool2d_with_stride_and_padding_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_avgpool2d(ctx, 3, 3, 2, 2, 1, 1, &m));
  check_parameterless(ctx, m, FIXTURE(AVGPOOL_SQUARE_X), FIXTURE(AVGPOOL_SQUARE_Y),
                      AVGPOOL_SQUARE_W, AVGPOOL_SQUARE_DX);
}

static void avgpool2d_with_rectangular_window_counts_padding_like_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_avgpool2d(ctx, 3, 2, 2, 1, 1, 1, &m));
  check_parameterless(ctx, m, FIXTURE(AVGPOOL_X), FIXTURE(AVGPOOL_Y), AVGPOOL_W, AVGPOOL_DX);
}

static void flatten_defaults_and_a_dim_range_match_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_flatten(ctx, 1, -1, &m));
  check_parameterless(ctx, m, FIXTURE(FLATTEN_X), FIXTURE(FLATTEN_Y), FLATTEN_W, FLATTEN_DX);
  ASSERT_OK(dp_module_flatten(ctx, 1, 2, &m));
  check_parameterless(ctx, m, FIXTURE(FLATTEN_1_2_X), FIXTURE(FLATTEN_1_2_Y), FLATTEN_1_2_W,
                      FLATTEN_1_2_DX);
}

static void embedding_matches_pytorch_and_adds_the_gradients_of_repeated_indices(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_embedding(ctx, 10, 4, cpu_dev(0), &m));
  assert_parameter_names(m, LINEAR_PARAMETER_NAMES, 1); /* "weight" */
  load_fixture(m, "weight", FIXTURE(EMBEDDING_WEIGHT));
  dp_tensor* idx = fixture_int64(ctx, FIXTURE(EMBEDDING_X));
  forward_and_backprop(ctx, m, idx, FIXTURE(EMBEDDING_Y), EMBEDDING_W);
  assert_param_grad_matches(m, "weight", FIXTURE(EMBEDDING_DWEIGHT));
  dp_tensor_release(idx);
  dp_module_release(m);
}

/* ---------------------------------------------------------------------------------- */
/* Losses and softmax                                                                 */
/* ---------------------------------------------------------------------------------- */

static void cross_entropy_mean_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* logits = fixture_tensor(ctx, FIXTURE(CE_LOGITS), 1);
  dp_tensor* target = fixture_int64(ctx, FIXTURE(CE_TARGET));
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_cross_entropy(logits, target, &loss));
  assert_tensor_matches("cross entropy", loss, FIXTURE(CE_LOSS));
  backward_weighted_sum(ctx, loss, FIXTURE(CE_W));
  assert_grad_matches("grad of logits", logits, FIXTURE(CE_DLOGITS));
  dp_tensor_release(loss);
  dp_tensor_release(target);
  dp_tensor_release(logits);
}

static void nll_loss_of_log_softmax_matches_pytorch(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* logits = fixture_tensor(ctx, FIXTURE(CE_LOGITS), 1);
  dp_tensor* target = fixture_int64(ctx, FIXTURE(CE_TARGET));
  dp_tensor* lsm = NULL;
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_log_softmax(logits, 1, &lsm));
  ASSERT_OK(dp_op_nll_loss(lsm, target, &loss));
  assert_tensor_matches("nll loss", loss, FIXTURE(NLL_LOSS));
  backward_weighted_sum(ctx, loss, FIXTURE(NLL_W));
  assert_grad_matches("grad of logits", logits, FIXTURE(NLL_DLOGITS));
  dp_tensor_release(loss);
  dp_tensor_release(lsm);
  dp_tensor_release(target);
  dp_tensor_release(logits);
}

static void mse_loss_matches_pytorch_for_input_and_target_gradients(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* input = fixture_tensor(ctx, FIXTURE(MSE_INPUT), 1);
  dp_tensor* target = fixture_tensor(ctx, FIXTURE(MSE_TARGET), 1);
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_mse_loss(input, target, &loss));
  assert_tensor_matches("mse", loss, FIXTURE(MSE_LOSS));
  backward_weighted_sum(ctx, loss, FIXTURE(MSE_W));
  assert_grad_matches("grad of input", input, FIXTURE(MSE_DINPUT));
  assert_grad_matches("grad of target", target, FIXTURE(MSE_DTARGET));
  dp_tensor_release(loss);
  dp_tensor_release(target);
  dp_tensor_release(input);
}

typedef dp_result (*softmax_fn)(const dp_tensor*, int32_t, dp_tensor**);

static void check_softmax(dp_context* ctx, softmax_fn fn, int32_t dim, const float* y,
                          const int64_t* shape, size_t ndim, const float* w, const float* dx) {
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(SOFTMAX_X), 1);
  dp_tensor* out = NULL;
  ASSERT_OK(fn(x, dim, &out));
  assert_tensor_matches("softmax output", out, y, shape, ndim);
  backward_weighted_sum(ctx, out, w, shape, ndim);
  assert_grad_matches("grad of x", x, dx, shape, ndim);
  dp_tensor_release(out);
  dp_tensor_release(x);
}

static void softmax_and_log_softmax_match_pytorch_along_either_dim(void** state) {
  dp_context* ctx = (dp_context*)*state;
  check_softmax(ctx, dp_op_softmax, 1, FIXTURE(SOFTMAX_DIM1_Y), SOFTMAX_DIM1_W, SOFTMAX_DIM1_DX);
  check_softmax(ctx, dp_op_softmax, 0, FIXTURE(SOFTMAX_DIM0_Y), SOFTMAX_DIM0_W, SOFTMAX_DIM0_DX);
  check_softmax(ctx, dp_op_log_softmax, 1, FIXTURE(LOG_SOFTMAX_DIM1_Y), LOG_SOFTMAX_DIM1_W,
                LOG_SOFTMAX_DIM1_DX);
  check_softmax(ctx, dp_op_log_softmax, -2, FIXTURE(LOG_SOFTMAX_DIM0_Y), LOG_SOFTMAX_DIM0_W,
                LOG_SOFTMAX_DIM0_DX);
}

/* ---------------------------------------------------------------------------------- */
/* Models                                                                             */
/* ---------------------------------------------------------------------------------- */

static void mlp_sequential_matches_pytorch_names_values_and_gradients(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* mlp = build_mlp(ctx, cpu_dev(0));
  assert_parameter_names(mlp, MLP_PARAMETER_NAMES, MLP_PARAMETER_NAMES_COUNT);
  assert_int_equal(MLP_FIXTURE_PARAMETERS, MLP_PARAMETER_NAMES_COUNT);
  for (size_t i = 0; i < MLP_FIXTURE_PARAMETERS; ++i) {
    const named_fixture* p = &kMlpParameters[i];
    load_fixture(mlp, p->name, p->values, p->shape, p->ndim);
  }
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(MLP_X), 1);
  forward_and_backprop(ctx, mlp, x, FIXTURE(MLP_Y), MLP_W);
  for (size_t i = 0; i < MLP_FIXTURE_PARAMETERS; ++i) {
    const named_fixture* p = &kMlpParameters[i];
    assert_param_grad_matches(mlp, p->name, p->grad, p->shape, p->ndim);
  }
  assert_grad_matches("grad of x", x, FIXTURE(MLP_DX));
  dp_tensor_release(x);
  dp_module_release(mlp);
}

static void cnn_sequential_on_cpu_1_matches_pytorch_names_values_and_gradients(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const dp_device dev = cpu_dev(1);
  dp_module* cnn = NULL;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_sequential(ctx, &cnn));
  ASSERT_OK(dp_module_conv2d(ctx, 1, 4, 3, 3, 1, 1, 1, 1, 1, dev, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_relu(ctx, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_maxpool2d(ctx, 2, 2, 2, 2, 0, 0, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_conv2d(ctx, 4, 8, 3, 3, 1, 1, 1, 1, 1, dev, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_relu(ctx, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_maxpool2d(ctx, 2, 2, 2, 2, 0, 0, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_flatten(ctx, 1, -1, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_linear(ctx, 72, 16, 1, dev, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_relu(ctx, &m));
  append_child(cnn, m);
  ASSERT_OK(dp_module_linear(ctx, 16, 10, 1, dev, &m));
  append_child(cnn, m);
  assert_parameter_names(cnn, CNN_PARAMETER_NAMES, CNN_PARAMETER_NAMES_COUNT);

  const named_fixture params[] = {
      {"0.weight", FIXTURE(CNN_0_WEIGHT), CNN_D0_WEIGHT},
      {"0.bias", FIXTURE(CNN_0_BIAS), CNN_D0_BIAS},
      {"3.weight", FIXTURE(CNN_3_WEIGHT), CNN_D3_WEIGHT},
      {"3.bias", FIXTURE(CNN_3_BIAS), CNN_D3_BIAS},
      {"7.weight", FIXTURE(CNN_7_WEIGHT), CNN_D7_WEIGHT},
      {"7.bias", FIXTURE(CNN_7_BIAS), CNN_D7_BIAS},
      {"9.weight", FIXTURE(CNN_9_WEIGHT), CNN_D9_WEIGHT},
      {"9.bias", FIXTURE(CNN_9_BIAS), CNN_D9_BIAS},
  };
  const size_t n = sizeof params / sizeof params[0];
  assert_int_equal(n, CNN_PARAMETER_NAMES_COUNT);
  for (size_t i = 0; i < n; ++i) {
    load_fixture(cnn, params[i].name, params[i].values, params[i].shape, params[i].ndim);
  }
  dp_tensor* x = fixture_tensor_on(ctx, dev, FIXTURE(CNN_X), 1);
  forward_and_backprop(ctx, cnn, x, FIXTURE(CNN_Y), CNN_W);
  for (size_t i = 0; i < n; ++i) {
    assert_param_grad_matches(cnn, params[i].name, params[i].grad, params[i].shape, params[i].ndim);
  }
  assert_grad_matches("grad of x", x, FIXTURE(CNN_DX));
  dp_tensor_release(x);
  dp_module_release(cnn);
}

/* ---------------------------------------------------------------------------------- */
/* Custom modules                                                                     */
/* ---------------------------------------------------------------------------------- */

typedef struct custom_state {
  int forward_calls;
  int destroy_calls;
} custom_state;

static void count_destroy(void* user_data) {
  ((custom_state*)user_data)->destroy_calls++;
}

/* y = tanh(x @ W^T) + b, reading W and b through `self`. */
static dp_result tanh_linear_forward(void* user_data, dp_module* self, dp_tensor* const* inputs,
                                     size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                                     size_t* n_outputs) {
  ((custom_state*)user_data)->forward_calls++;
  if (n_inputs != 1 || max_outputs < 1)
    return dp_set_error(DP_ERR_INVALID_ARGUMENT, "TanhLinear takes one input");
  dp_tensor *w = NULL, *b = NULL, *h = NULL, *t = NULL, *y = NULL;
  dp_result r = dp_module_get(self, "W", &w);
  if (r == DP_OK) r = dp_module_get(self, "b", &b);
  if (r == DP_OK) r = dp_op_linear(inputs[0], w, NULL, &h);
  if (r == DP_OK) r = dp_op_tanh(h, &t);
  if (r == DP_OK) r = dp_op_add(t, b, &y);
  dp_tensor_release(t);
  dp_tensor_release(h);
  dp_tensor_release(b);
  dp_tensor_release(w);
  if (r != DP_OK) return r;
  outputs[0] = y;
  *n_outputs = 1;
  return DP_OK;
}

static dp_module* make_tanh_linear(dp_context* ctx, custom_state* s) {
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.type_name = "TanhLinear";
  desc.forward = tanh_linear_forward;
  desc.user_data = s;
  desc.destroy = count_destroy;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_custom(ctx, &desc, &m));
  return m;
}

static void custom_module_forward_equals_the_same_ops_called_directly(void** state) {
  dp_context* ctx = (dp_context*)*state;
  custom_state s = {0, 0};
  dp_module* m = make_tanh_linear(ctx, &s);
  dp_tensor* w = fixture_tensor(ctx, FIXTURE(LINEAR_WEIGHT), 0);
  dp_tensor* b = fixture_tensor(ctx, FIXTURE(LINEAR_BIAS), 0);
  ASSERT_OK(dp_module_register_parameter(m, "W", w));
  ASSERT_OK(dp_module_register_parameter(m, "b", b));
  dp_tensor_release(w); /* the module keeps its own references */
  dp_tensor_release(b);
  const char* const names[2] = {"W", "b"};
  assert_parameter_names(m, names, 2);
  const char* type = NULL;
  ASSERT_OK(dp_module_type_name(m, &type));
  assert_string_equal(type, "TanhLinear");

  dp_tensor* x = fixture_tensor(ctx, FIXTURE(LINEAR_X), 1);
  dp_tensor* y = NULL;
  ASSERT_OK(dp_module_forward1(m, x, &y));
  assert_int_equal(s.forward_calls, 1);

  /* The same math on separate leaves, with the ops called here. */
  dp_tensor* w2 = fixture_tensor(ctx, FIXTURE(LINEAR_WEIGHT), 1);
  dp_tensor* b2 = fixture_tensor(ctx, FIXTURE(LINEAR_BIAS), 1);
  dp_tensor* x2 = fixture_tensor(ctx, FIXTURE(LINEAR_X), 1);
  dp_tensor *h = NULL, *t = NULL, *y2 = NULL;
  ASSERT_OK(dp_op_linear(x2, w2, NULL, &h));
  ASSERT_OK(dp_op_tanh(h, &t));
  ASSERT_OK(dp_op_add(t, b2, &y2));

  /* Same kernels on the same data: the same bits. */
  float got[LINEAR_Y_NUMEL], want[LINEAR_Y_NUMEL];
  assert_shape("custom output", y, LINEAR_Y_SHAPE, LINEAR_Y_NDIM);
  read_f32(y, got, LINEAR_Y_NUMEL);
  read_f32(y2, want, LINEAR_Y_NUMEL);
  assert_close_f32(got, want, LINEAR_Y_NUMEL, 0, 0);

  backward_weighted_sum(ctx, y, FIXTURE(LINEAR_W));
  backward_weighted_sum(ctx, y2, FIXTURE(LINEAR_W));
  dp_tensor* pairs[3][2] = {{NULL, w2}, {NULL, b2}, {x, x2}};
  ASSERT_OK(dp_module_get(m, "W", &pairs[0][0]));
  ASSERT_OK(dp_module_get(m, "b", &pairs[1][0]));
  for (int i = 0; i < 3; ++i) {
    dp_tensor *g = NULL, *g2 = NULL;
    int64_t n = 0;
    ASSERT_OK(dp_tensor_grad(pairs[i][0], &g));
    ASSERT_OK(dp_tensor_grad(pairs[i][1], &g2));
    assert_non_null(g);
    assert_non_null(g2);
    ASSERT_OK(dp_tensor_numel(g, &n));
    float ga[LINEAR_X_NUMEL], gb[LINEAR_X_NUMEL];
    assert_true(n <= LINEAR_X_NUMEL);
    read_f32(g, ga, (size_t)n);
    read_f32(g2, gb, (size_t)n);
    assert_close_f32(ga, gb, (size_t)n, 0, 0);
    dp_tensor_release(g);
    dp_tensor_release(g2);
  }
  dp_tensor_release(pairs[0][0]);
  dp_tensor_release(pairs[1][0]);
  dp_tensor_release(y2);
  dp_tensor_release(t);
  dp_tensor_release(h);
  dp_tensor_release(x2);
  dp_tensor_release(b2);
  dp_tensor_release(w2);
  dp_tensor_release(y);
  dp_tensor_release(x);
  assert_int_equal(s.destroy_calls, 0);
  dp_module_release(m);
  assert_int_equal(s.destroy_calls, 1);
}

static void custom_module_destroy_runs_once_when_the_last_reference_goes(void** state) {
  dp_context* ctx = (dp_context*)*state;
  custom_state s = {0, 0};
  dp_module* m = make_tanh_linear(ctx, &s);
  assert_ptr_equal(dp_module_retain(m), m);
  dp_module_release(m);
  assert_int_equal(s.destroy_calls, 0);

  /* a Sequential holding it keeps it alive after the caller's last handle goes */
  dp_module* seq = NULL;
  ASSERT_OK(dp_module_sequential(ctx, &seq));
  ASSERT_OK(dp_module_append(seq, m));
  dp_module_release(m);
  assert_int_equal(s.destroy_calls, 0);
  dp_module_release(seq);
  assert_int_equal(s.destroy_calls, 1);

  /* a failed creation never calls destroy */
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.user_data = &s;
  desc.destroy = count_destroy; /* forward left NULL */
  dp_module* bad = NULL;
  ASSERT_ERROR(dp_module_custom(ctx, &desc, &bad), DP_ERR_INVALID_ARGUMENT, "forward");
  assert_null(bad);
  assert_int_equal(s.destroy_calls, 1);
}

static dp_result failing_forward(void* user_data, dp_module* self, dp_tensor* const* inputs,
                                 size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                                 size_t* n_outputs) {
  (void)self;
  (void)inputs;
  (void)n_inputs;
  (void)outputs;
  (void)max_outputs;
  (void)n_outputs;
  const dp_result code = *(const dp_result*)user_data;
  return dp_set_error(code, "weights not loaded");
}

/* A custom module of `forward` and `user_data` (no type name, no destroy). */
static dp_module* make_custom(dp_context* ctx, dp_forward_fn forward, void* user_data) {
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = forward;
  desc.user_data = user_data;
  dp_module* m = NULL;
  ASSERT_OK(dp_module_custom(ctx, &desc, &m));
  return m;
}

static void custom_module_forward_error_fails_forward_with_its_code_and_message(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const dp_result codes[2] = {DP_ERR_CALLBACK, DP_ERR_SHAPE_MISMATCH};
  for (int i = 0; i < 2; ++i) {
    dp_result code = codes[i];
    dp_module* m = make_custom(ctx, failing_forward, &code);
    dp_tensor* x = fixture_tensor(ctx, FIXTURE(LINEAR_X), 0);
    dp_tensor* y = NULL;
    ASSERT_ERROR(dp_module_forward1(m, x, &y), code, "Custom forward failed: weights not loaded");
    assert_null(y);
    dp_tensor_release(x);
    dp_module_release(m);
  }
}

/* Returns its input; its first call also makes a failing call of its own and handles it. */
static dp_result identity_forward(void* user_data, dp_module* self, dp_tensor* const* inputs,
                                  size_t n_inputs, dp_tensor** outputs, size_t max_outputs,
                                  size_t* n_outputs) {
  (void)self;
  (void)n_inputs;
  (void)max_outputs;
  int* calls = (int*)user_data;
  if (calls && (*calls)++ > 0) return DP_ERR_CALLBACK; /* later calls fail, without a message */
  if (calls) {
    dp_tensor* unused = NULL;
    if (dp_op_add(NULL, NULL, &unused) == DP_OK) return dp_set_error(DP_ERR_INTERNAL, "add(NULL)");
  }
  outputs[0] = dp_tensor_retain(inputs[0]);
  *n_outputs = 1;
  return DP_OK;
}

static void custom_module_outlives_the_users_handles_of_its_context(void** state) {
  (void)state;
  dp_context* other = make_context(1);
  dp_module* custom = make_custom(other, identity_forward, NULL);
  dp_module* seq = NULL;
  ASSERT_OK(dp_module_sequential(other, &seq));
  ASSERT_OK(dp_module_append(seq, custom));
  dp_tensor* x = fixture_tensor(other, FIXTURE(LINEAR_X), 0);
  /* The Sequential holds the module; the user lets go of it and of the context. */
  dp_module_release(custom);
  dp_context_release(other);
  dp_tensor* y = NULL;
  ASSERT_OK(dp_module_forward1(seq, x, &y));
  float got[64], want[64];
  int64_t n = 0;
  ASSERT_OK(dp_tensor_numel(x, &n));
  assert_true(n > 0 && n <= 64);
  read_f32(y, got, (size_t)n);
  read_f32(x, want, (size_t)n);
  assert_memory_equal(got, want, (size_t)n * sizeof(float));
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_module_release(seq);
}

static void custom_module_error_without_a_message_does_not_report_an_older_one(void** state) {
  dp_context* ctx = (dp_context*)*state;
  int calls = 0;
  dp_module* m = make_custom(ctx, identity_forward, &calls);
  dp_tensor* x = fixture_tensor(ctx, FIXTURE(LINEAR_X), 0);
  dp_tensor* y = NULL;
  /* Its first forward fails a call inside and succeeds. */
  ASSERT_OK(dp_module_forward1(m, x, &y));
  dp_tensor_release(y);
  y = NULL;
  /* A failure of this thread's own, then the forward that fails without a message. */
  ASSERT_ERROR(dp_module_train(NULL, 1), DP_ERR_INVALID_ARGUMENT, "m is NULL");
  ASSERT_ERROR(dp_module_forward1(m, x, &y), DP_ERR_CALLBACK, "Custom forward returned");
  assert_null(strstr(dp_last_error(), "is NULL"));
  assert_null(y);
  assert_int_equal(calls, 2);
  dp_tensor_release(x);
  dp_module_release(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(linear_forward_and_gradients_match_pytorch),
      cmocka_unit_test(linear_without_bias_has_only_a_weight_and_treats_leading_dims_as_batch),
      cmocka_unit_test(conv2d_with_stride_2_and_padding_1_on_odd_sizes_matches_pytorch),
      cmocka_unit_test(conv2d_with_rectangular_kernel_stride_and_padding_matches_pytorch),
      cmocka_unit_test(linear_default_init_is_uniform_within_one_over_sqrt_fan_in),
      cmocka_unit_test(conv2d_default_init_is_uniform_within_one_over_sqrt_fan_in),
      cmocka_unit_test(embedding_default_init_is_standard_normal),
      cmocka_unit_test(layers_too_large_for_memory_are_out_of_memory_naming_the_bytes),
      cmocka_unit_test(relu_matches_pytorch),
      cmocka_unit_test(gelu_is_the_exact_erf_form_of_pytorch),
      cmocka_unit_test(tanh_matches_pytorch),
      cmocka_unit_test(sigmoid_matches_pytorch),
      cmocka_unit_test(dropout_in_eval_mode_is_the_identity_like_pytorch),
      cmocka_unit_test(dropout_in_train_mode_zeroes_or_doubles_each_element_at_p_one_half),
      cmocka_unit_test(batchnorm_has_pytorchs_parameters_buffers_and_initial_state),
      cmocka_unit_test(batchnorm1d_train_matches_pytorch_output_gradients_and_running_stats),
      cmocka_unit_test(batchnorm1d_train_on_n_c_l_input_matches_pytorch),
      cmocka_unit_test(batchnorm1d_eval_normalises_with_the_running_stats_like_pytorch),
      cmocka_unit_test(batchnorm2d_train_matches_pytorch_output_gradients_and_running_stats),
      cmocka_unit_test(batchnorm2d_eval_normalises_with_the_running_stats_like_pytorch),
      cmocka_unit_test(batchnorm_counts_batches_in_train_mode_only),
      cmocka_unit_test(maxpool2d_with_stride_and_padding_matches_pytorch),
      cmocka_unit_test(avgpool2d_with_stride_and_padding_matches_pytorch),
      cmocka_unit_test(avgpool2d_with_rectangular_window_counts_padding_like_pytorch),
      cmocka_unit_test(flatten_defaults_and_a_dim_range_match_pytorch),
      cmocka_unit_test(embedding_matches_pytorch_and_adds_the_gradients_of_repeated_indices),
      cmocka_unit_test(cross_entropy_mean_matches_pytorch),
      cmocka_unit_test(nll_loss_of_log_softmax_matches_pytorch),
      cmocka_unit_test(mse_loss_matches_pytorch_for_input_and_target_gradients),
      cmocka_unit_test(softmax_and_log_softmax_match_pytorch_along_either_dim),
      cmocka_unit_test(mlp_sequential_matches_pytorch_names_values_and_gradients),
      cmocka_unit_test(cnn_sequential_on_cpu_1_matches_pytorch_names_values_and_gradients),
      cmocka_unit_test(custom_module_forward_equals_the_same_ops_called_directly),
      cmocka_unit_test(custom_module_destroy_runs_once_when_the_last_reference_goes),
      cmocka_unit_test(custom_module_forward_error_fails_forward_with_its_code_and_message),
      cmocka_unit_test(custom_module_outlives_the_users_handles_of_its_context),
      cmocka_unit_test(custom_module_error_without_a_message_does_not_report_an_older_one),
  };
  return cmocka_run_group_tests_name("layers", tests, setup, teardown);
}
