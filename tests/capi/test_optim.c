/* Optimizers through the C API: SGD (plain, momentum, dampening, Nesterov, weight decay),
 * Adam and AdamW against torch.optim trajectories (tests/fixtures), skipped parameters,
 * learning-rate changes and argument errors. */
#include "torch_compare.h"

enum { kSteps = 4, kParamNumel = OPT_P0_NUMEL };

static int setup(void** state) {
  *state = make_context(2);
  return 0;
}

static int teardown(void** state) {
  dp_context_release((dp_context*)*state);
  return 0;
}

/* A module whose one parameter ("weight", [2, 3], no bias) holds OPT_P0. */
static dp_module* make_param_module(dp_context* ctx, int bias) {
  dp_module* m = NULL;
  ASSERT_OK(dp_module_linear(ctx, OPT_P0_SHAPE[1], OPT_P0_SHAPE[0], bias, cpu_dev(0), &m));
  load_fixture(m, "weight", FIXTURE(OPT_P0));
  return m;
}

/* Makes p.grad == g by backpropagating sum(p * g). */
static void set_grad_by_backward(dp_context* ctx, dp_tensor* p, const float* g) {
  backward_weighted_sum(ctx, p, g, OPT_P0_SHAPE, OPT_P0_NDIM);
  assert_grad_near("gradient set by backward", p, g, OPT_P0_SHAPE, OPT_P0_NDIM, 0, 0);
}

/* Runs the four fixture gradients through `opt` and compares the parameter after each
   step with PyTorch's. */
static void assert_follows_trajectory(dp_context* ctx, dp_module* m, dp_optimizer* opt,
                                      const float* trajectory) {
  dp_tensor* p = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &p));
  for (int k = 0; k < kSteps; ++k) {
    ASSERT_OK(dp_optimizer_zero_grad(opt));
    dp_tensor* g = NULL;
    ASSERT_OK(dp_tensor_grad(p, &g));
    assert_null(g);
    set_grad_by_backward(ctx, p, OPT_GRADS + k * kParamNumel);
    ASSERT_OK(dp_optimizer_step(opt));
    char what[64];
    snprintf(what, sizeof what, "parameter after step %d", k + 1);
    assert_tensor_matches(what, p, trajectory + k * kParamNumel, OPT_P0_SHAPE, OPT_P0_NDIM);
  }
  dp_tensor_release(p);
}

static void check_sgd(dp_context* ctx, const dp_sgd_options* o, const float* trajectory) {
  dp_module* m = make_param_module(ctx, 0);
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_sgd(m, o, &opt));
  assert_follows_trajectory(ctx, m, opt, trajectory);
  dp_optimizer_release(opt);
  dp_module_release(m);
}

static void check_adam(dp_context* ctx, const dp_adam_options* o, int decoupled,
                       const float* trajectory) {
  dp_module* m = make_param_module(ctx, 0);
  dp_optimizer* opt = NULL;
  if (decoupled) {
    ASSERT_OK(dp_optimizer_adamw(m, o, &opt));
  } else {
    ASSERT_OK(dp_optimizer_adam(m, o, &opt));
  }
  assert_follows_trajectory(ctx, m, opt, trajectory);
  dp_optimizer_release(opt);
  dp_module_release(m);
}

static void sgd_matches_pytorch_for_four_steps(void** state) {
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  o.lr = 0.1;
  check_sgd((dp_context*)*state, &o, OPT_SGD);
}

static void sgd_with_momentum_matches_pytorch_for_four_steps(void** state) {
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  o.lr = 0.1;
  o.momentum = 0.9;
  check_sgd((dp_context*)*state, &o, OPT_SGD_MOMENTUM);
}

static void sgd_with_momentum_and_dampening_matches_pytorch_for_four_steps(void** state) {
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.dampening = 0.1;
  check_sgd((dp_context*)*state, &o, OPT_SGD_DAMPENING);
}

static void sgd_with_nesterov_momentum_matches_pytorch_for_four_steps(void** state) {
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.nesterov = 1;
  check_sgd((dp_context*)*state, &o, OPT_SGD_NESTEROV);
}

static void sgd_with_weight_decay_matches_pytorch_for_four_steps(void** state) {
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  o.lr = 0.1;
  o.weight_decay = 0.01;
  check_sgd((dp_context*)*state, &o, OPT_SGD_WEIGHT_DECAY);
}

static void sgd_with_momentum_and_weight_decay_matches_pytorch_for_four_steps(void** state) {
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.weight_decay = 0.01;
  check_sgd((dp_context*)*state, &o, OPT_SGD_MOMENTUM_WEIGHT_DECAY);
}

static void adam_matches_pytorch_for_four_steps(void** state) {
  dp_adam_options o = DP_ADAM_OPTIONS_INIT;
  o.lr = 0.01;
  check_adam((dp_context*)*state, &o, 0, OPT_ADAM);
}

static void adam_with_l2_weight_decay_matches_pytorch_for_four_steps(void** state) {
  dp_adam_options o = DP_ADAM_OPTIONS_INIT;
  o.lr = 0.01;
  o.weight_decay = 0.1;
  check_adam((dp_context*)*state, &o, 0, OPT_ADAM_WEIGHT_DECAY);
}

static void adamw_with_its_default_decay_matches_pytorch_for_four_steps(void** state) {
  dp_adam_options o = DP_ADAMW_OPTIONS_INIT; /* weight_decay 0.01, as torch.optim.AdamW */
  o.lr = 0.01;
  check_adam((dp_context*)*state, &o, 1, OPT_ADAMW);
}

static void null_options_mean_the_documented_defaults(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 0);
  dp_optimizer* opt = NULL;
  double lr = 0;
  ASSERT_OK(dp_optimizer_sgd(m, NULL, &opt));
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 0.01);
  dp_optimizer_release(opt);
  ASSERT_OK(dp_optimizer_adam(m, NULL, &opt));
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 1e-3);
  dp_optimizer_release(opt);
  ASSERT_OK(dp_optimizer_adamw(m, NULL, &opt));
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 1e-3);
  dp_optimizer_release(opt);
  dp_module_release(m);
}

/* SGD over m with lr 0.1 and momentum 0.9 (the OPT_SGD_MOMENTUM trajectory's). */
static dp_optimizer* sgd_with_momentum(const dp_module* m) {
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  o.lr = 0.1;
  o.momentum = 0.9;
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_sgd(m, &o, &opt));
  return opt;
}

static void parameters_without_gradient_are_skipped_by_sgd(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 1);
  dp_tensor* w = NULL;
  dp_tensor* b = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &w));
  ASSERT_OK(dp_module_get(m, "bias", &b));
  float b0[2], b1[2];
  read_f32(b, b0, 2);
  dp_optimizer* opt = sgd_with_momentum(m);
  set_grad_by_backward(ctx, w, OPT_GRADS); /* the bias gets no gradient */
  dp_tensor* bg = NULL;
  ASSERT_OK(dp_tensor_grad(b, &bg));
  assert_null(bg);
  ASSERT_OK(dp_optimizer_step(opt));
  assert_tensor_matches("weight after step 1", w, OPT_SGD_MOMENTUM, OPT_P0_SHAPE, OPT_P0_NDIM);
  read_f32(b, b1, 2);
  assert_memory_equal(b1, b0, sizeof b0);
  dp_optimizer_release(opt);
  dp_tensor_release(b);
  dp_tensor_release(w);
  dp_module_release(m);
}

/* A frozen parameter (requires_grad off before the optimizer exists) is kept, as
   torch.optim keeps it, and skipped while it has no gradient; trained again, it steps. */
static void a_frozen_parameter_is_kept_and_skipped_until_it_trains(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 1);
  dp_tensor *w = NULL, *b = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &w));
  ASSERT_OK(dp_module_get(m, "bias", &b));
  ASSERT_OK(dp_tensor_set_requires_grad(b, 0));
  float b0[2], b1[2];
  read_f32(b, b0, 2);
  dp_optimizer* opt = sgd_with_momentum(m);
  set_grad_by_backward(ctx, w, OPT_GRADS);
  ASSERT_OK(dp_optimizer_step(opt));
  assert_tensor_matches("weight after step 1", w, OPT_SGD_MOMENTUM, OPT_P0_SHAPE, OPT_P0_NDIM);
  read_f32(b, b1, 2);
  assert_memory_equal(b1, b0, sizeof b0);
  /* Trained again: its gradient of ones takes a first momentum step, b - 0.1. */
  ASSERT_OK(dp_tensor_set_requires_grad(b, 1));
  const float ones[2] = {1, 1};
  const int64_t shape[1] = {2};
  backward_weighted_sum(ctx, b, ones, shape, 1);
  ASSERT_OK(dp_optimizer_step(opt));
  read_f32(b, b1, 2);
  for (int i = 0; i < 2; ++i) assert_float_equal(b1[i], b0[i] - 0.1f, 1e-6);
  dp_optimizer_release(opt);
  dp_tensor_release(b);
  dp_tensor_release(w);
  dp_module_release(m);
}

/* PyTorch keeps Adam's step count per parameter, starting at a parameter's first
   gradient: a parameter skipped for two steps then takes a first step, whose size is
   lr * g / (|g| + eps) (the bias corrections cancel exactly). */
static void adam_counts_steps_per_parameter_from_its_first_gradient(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 1);
  dp_tensor* w = NULL;
  dp_tensor* b = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &w));
  ASSERT_OK(dp_module_get(m, "bias", &b));
  const float b0[2] = {0.25f, -0.5f};
  const float gb[2] = {0.3f, -2.0f};
  const int64_t bshape[1] = {2};
  ASSERT_OK(dp_tensor_copy_from_host(b, b0, sizeof b0));
  dp_adam_options o = DP_ADAM_OPTIONS_INIT;
  o.lr = 0.01;
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_adam(m, &o, &opt));
  for (int k = 0; k < 2; ++k) {
    ASSERT_OK(dp_optimizer_zero_grad(opt));
    set_grad_by_backward(ctx, w, OPT_GRADS + k * kParamNumel);
    ASSERT_OK(dp_optimizer_step(opt));
    float got[2];
    read_f32(b, got, 2);
    assert_memory_equal(got, b0, sizeof b0);
  }
  assert_tensor_matches("weight after step 2", w, OPT_ADAM + kParamNumel, OPT_P0_SHAPE,
                        OPT_P0_NDIM);
  ASSERT_OK(dp_optimizer_zero_grad(opt));
  set_grad_by_backward(ctx, w, OPT_GRADS + 2 * kParamNumel);
  backward_weighted_sum(ctx, b, gb, bshape, 1);
  ASSERT_OK(dp_optimizer_step(opt));
  assert_tensor_matches("weight after step 3", w, OPT_ADAM + 2 * kParamNumel, OPT_P0_SHAPE,
                        OPT_P0_NDIM);
  float expected[2];
  for (int i = 0; i < 2; ++i) {
    expected[i] = (float)(b0[i] - o.lr * gb[i] / (fabs((double)gb[i]) + o.eps));
  }
  assert_tensor_matches("bias after its first step", b, expected, bshape, 1);
  dp_optimizer_release(opt);
  dp_tensor_release(b);
  dp_tensor_release(w);
  dp_module_release(m);
}

static void set_lr_changes_the_next_steps(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 0);
  dp_tensor* w = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &w));
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_sgd(m, NULL, &opt));
  ASSERT_OK(dp_optimizer_set_lr(opt, 0.5));
  double lr = 0;
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 0.5);
  set_grad_by_backward(ctx, w, OPT_GRADS);
  ASSERT_OK(dp_optimizer_step(opt));
  float expected[kParamNumel];
  for (int i = 0; i < kParamNumel; ++i) expected[i] = OPT_P0[i] - 0.5f * OPT_GRADS[i];
  assert_tensor_matches("weight after one step at lr 0.5", w, expected, OPT_P0_SHAPE, OPT_P0_NDIM);
  ASSERT_ERROR(dp_optimizer_set_lr(opt, -1.0), DP_ERR_INVALID_ARGUMENT, "lr = -1");
  ASSERT_OK(dp_optimizer_lr(opt, &lr));
  assert_true(lr == 0.5);
  dp_optimizer_release(opt);
  dp_tensor_release(w);
  dp_module_release(m);
}

static void zero_grad_drops_every_gradient(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 0);
  dp_tensor* w = NULL;
  ASSERT_OK(dp_module_get(m, "weight", &w));
  dp_optimizer* opt = NULL;
  ASSERT_OK(dp_optimizer_sgd(m, NULL, &opt));
  set_grad_by_backward(ctx, w, OPT_GRADS);
  ASSERT_OK(dp_optimizer_zero_grad(opt));
  dp_tensor* g = NULL;
  ASSERT_OK(dp_tensor_grad(w, &g));
  assert_null(g);
  /* a step with no gradient anywhere changes nothing */
  ASSERT_OK(dp_optimizer_step(opt));
  assert_tensor_near("weight", w, FIXTURE(OPT_P0), 0, 0);
  dp_optimizer_release(opt);
  dp_tensor_release(w);
  dp_module_release(m);
}

static void sgd_rejects_bad_arguments_naming_the_value(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 0);
  dp_optimizer* opt = NULL;
  dp_sgd_options o = DP_SGD_OPTIONS_INIT;
  ASSERT_ERROR(dp_optimizer_sgd(NULL, &o, &opt), DP_ERR_INVALID_ARGUMENT, "m is NULL");
  ASSERT_ERROR(dp_optimizer_sgd(m, &o, NULL), DP_ERR_INVALID_ARGUMENT, "out is NULL");
  o.struct_size = sizeof(size_t) / 2; /* shorter than struct_size itself */
  ASSERT_ERROR(dp_optimizer_sgd(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "struct_size");
  o = (dp_sgd_options)DP_SGD_OPTIONS_INIT;
  o.lr = -0.1;
  ASSERT_ERROR(dp_optimizer_sgd(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "lr = -0.1");
  o = (dp_sgd_options)DP_SGD_OPTIONS_INIT;
  o.momentum = -0.5;
  ASSERT_ERROR(dp_optimizer_sgd(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "momentum = -0.5");
  o = (dp_sgd_options)DP_SGD_OPTIONS_INIT;
  o.weight_decay = -0.01;
  ASSERT_ERROR(dp_optimizer_sgd(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "weight_decay = -0.01");
  o = (dp_sgd_options)DP_SGD_OPTIONS_INIT;
  o.nesterov = 1; /* without momentum, as torch.optim.SGD refuses */
  ASSERT_ERROR(dp_optimizer_sgd(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "nesterov");
  o.momentum = 0.9;
  o.dampening = 0.1; /* nor with dampening */
  ASSERT_ERROR(dp_optimizer_sgd(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "dampening = 0.1");
  assert_null(opt);
  dp_module_release(m);
}

static void adam_rejects_bad_arguments_naming_the_value(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_module* m = make_param_module(ctx, 0);
  dp_optimizer* opt = NULL;
  dp_adam_options o = DP_ADAM_OPTIONS_INIT;
  ASSERT_ERROR(dp_optimizer_adam(NULL, &o, &opt), DP_ERR_INVALID_ARGUMENT, "m is NULL");
  ASSERT_ERROR(dp_optimizer_adamw(m, &o, NULL), DP_ERR_INVALID_ARGUMENT, "out is NULL");
  o.struct_size = sizeof(size_t) / 2; /* shorter than struct_size itself */
  ASSERT_ERROR(dp_optimizer_adam(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "struct_size");
  ASSERT_ERROR(dp_optimizer_adamw(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "struct_size");
  o = (dp_adam_options)DP_ADAM_OPTIONS_INIT;
  o.lr = -0.001;
  ASSERT_ERROR(dp_optimizer_adam(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "lr = -0.001");
  o = (dp_adam_options)DP_ADAM_OPTIONS_INIT;
  o.beta1 = 1.0;
  ASSERT_ERROR(dp_optimizer_adam(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "beta1 = 1");
  o = (dp_adam_options)DP_ADAM_OPTIONS_INIT;
  o.beta2 = -0.1;
  ASSERT_ERROR(dp_optimizer_adamw(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "beta2 = -0.1");
  o = (dp_adam_options)DP_ADAM_OPTIONS_INIT;
  o.eps = 0.0;
  ASSERT_ERROR(dp_optimizer_adam(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "eps = 0");
  o = (dp_adam_options)DP_ADAM_OPTIONS_INIT;
  o.weight_decay = -1.0;
  ASSERT_ERROR(dp_optimizer_adamw(m, &o, &opt), DP_ERR_INVALID_ARGUMENT, "weight_decay = -1");
  assert_null(opt);
  dp_module_release(m);
}

static void optimizer_calls_reject_null_and_release_accepts_it(void** state) {
  (void)state;
  double lr = 0;
  ASSERT_ERROR(dp_optimizer_step(NULL), DP_ERR_INVALID_ARGUMENT, "opt is NULL");
  ASSERT_ERROR(dp_optimizer_zero_grad(NULL), DP_ERR_INVALID_ARGUMENT, "opt is NULL");
  ASSERT_ERROR(dp_optimizer_set_lr(NULL, 0.1), DP_ERR_INVALID_ARGUMENT, "opt is NULL");
  ASSERT_ERROR(dp_optimizer_lr(NULL, &lr), DP_ERR_INVALID_ARGUMENT, "opt is NULL");
  dp_optimizer_release(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sgd_matches_pytorch_for_four_steps),
      cmocka_unit_test(sgd_with_momentum_matches_pytorch_for_four_steps),
      cmocka_unit_test(sgd_with_momentum_and_dampening_matches_pytorch_for_four_steps),
      cmocka_unit_test(sgd_with_nesterov_momentum_matches_pytorch_for_four_steps),
      cmocka_unit_test(sgd_with_weight_decay_matches_pytorch_for_four_steps),
      cmocka_unit_test(sgd_with_momentum_and_weight_decay_matches_pytorch_for_four_steps),
      cmocka_unit_test(adam_matches_pytorch_for_four_steps),
      cmocka_unit_test(adam_with_l2_weight_decay_matches_pytorch_for_four_steps),
      cmocka_unit_test(adamw_with_its_default_decay_matches_pytorch_for_four_steps),
      cmocka_unit_test(null_options_mean_the_documented_defaults),
      cmocka_unit_test(parameters_without_gradient_are_skipped_by_sgd),
      cmocka_unit_test(a_frozen_parameter_is_kept_and_skipped_until_it_trains),
      cmocka_unit_test(adam_counts_steps_per_parameter_from_its_first_gradient),
      cmocka_unit_test(set_lr_changes_the_next_steps),
      cmocka_unit_test(zero_grad_drops_every_gradient),
      cmocka_unit_test(sgd_rejects_bad_arguments_naming_the_value),
      cmocka_unit_test(adam_rejects_bad_arguments_naming_the_value),
      cmocka_unit_test(optimizer_calls_reject_null_and_release_accepts_it),
  };
  return cmocka_run_group_tests_name("optim", tests, setup, teardown);
}
