/* The C side of TrainingEquivalenceTest: a small problem trained through the C API
   alone. The Java test trains the same problem (same formulas for weights, data and
   labels; same model, optimizer, devices and steps) through the binding and compares
   what this program prints:
     loss <step> <value>
     param <name> <v0> <v1> ...
   MLP 6 -> 8 (ReLU) -> 3, batch 12, cross-entropy, SGD (lr 0.1, momentum 0.9), 4 steps,
   DataParallel over cpu:0 and cpu:1. */
#include <dataparallel/dataparallel.h>
#include <stdio.h>
#include <stdlib.h>

#define BATCH 12
#define IN 6
#define HIDDEN 8
#define OUT 3
#define STEPS 4

static void check(dp_result r, const char* what) {
  if (r == DP_OK) return;
  fprintf(stderr, "train_equivalence: %s: %s\n", what, dp_last_error());
  exit(1);
}

/* Deterministic values in [-0.25, 0.25): the same arithmetic in Java gives the same floats. */
static float weight_value(long i, long salt) {
  return (float)(((double)((i * 37 + 11 + salt) % 101) / 101.0 - 0.5) * 0.5);
}

static float input_value(long i) {
  return (float)((double)((i * 53 + 7) % 97) / 97.0 - 0.5);
}

static void set_parameter(dp_module* m, const char* name, long count, long salt) {
  dp_tensor* t = NULL;
  check(dp_module_get(m, name, &t), name);
  float* v = malloc((size_t)count * sizeof(float));
  for (long i = 0; i < count; ++i) v[i] = weight_value(i, salt);
  check(dp_tensor_copy_from_host(t, v, (size_t)count * sizeof(float)), name);
  free(v);
  dp_tensor_release(t);
}

/* Appends a layer made by `made` (the result of its constructor) and drops our reference. */
static void append(dp_module* model, dp_result made, dp_module* layer, const char* what) {
  check(made, what);
  check(dp_module_append(model, layer), "append");
  dp_module_release(layer);
}

int main(void) {
  dp_context_options options = DP_CONTEXT_OPTIONS_INIT;
  options.cpu_devices = 2;
  options.load_cuda = 0;
  dp_context* ctx = NULL;
  check(dp_context_create(&options, &ctx), "context");
  const dp_device cpu0 = {DP_DEVICE_CPU, 0}, devices[2] = {{DP_DEVICE_CPU, 0}, {DP_DEVICE_CPU, 1}};

  dp_module *model = NULL, *l = NULL;
  check(dp_module_sequential(ctx, &model), "Sequential");
  dp_result r = dp_module_linear(ctx, IN, HIDDEN, 1, cpu0, &l);
  append(model, r, l, "Linear");
  r = dp_module_relu(ctx, &l);
  append(model, r, l, "ReLU");
  r = dp_module_linear(ctx, HIDDEN, OUT, 1, cpu0, &l);
  append(model, r, l, "Linear");
  set_parameter(model, "0.weight", HIDDEN * IN, 0);
  set_parameter(model, "0.bias", HIDDEN, 1);
  set_parameter(model, "2.weight", OUT * HIDDEN, 2);
  set_parameter(model, "2.bias", OUT, 3);

  dp_data_parallel* dpw = NULL;
  check(dp_data_parallel_create(model, devices, 2, NULL, 0, NULL, &dpw), "DataParallel");
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  so.lr = 0.1;
  so.momentum = 0.9;
  dp_optimizer* opt = NULL;
  check(dp_optimizer_sgd(model, &so, &opt), "SGD");

  float x[BATCH * IN];
  int64_t y[BATCH];
  for (long i = 0; i < BATCH * IN; ++i) x[i] = input_value(i);
  for (long n = 0; n < BATCH; ++n) y[n] = (n * 7 + 3) % OUT;
  const int64_t x_shape[2] = {BATCH, IN}, y_shape[1] = {BATCH};
  dp_tensor *xt = NULL, *yt = NULL;
  check(dp_tensor_from_data(ctx, DP_FLOAT32, x_shape, 2, x, sizeof x, cpu0, &xt), "x");
  check(dp_tensor_from_data(ctx, DP_INT64, y_shape, 1, y, sizeof y, cpu0, &yt), "y");

  for (int step = 0; step < STEPS; ++step) {
    dp_tensor *logits = NULL, *loss = NULL;
    size_t n_out = 0;
    check(dp_optimizer_zero_grad(opt), "zero_grad");
    check(dp_data_parallel_forward(dpw, &xt, NULL, 1, &logits, 1, &n_out), "forward");
    check(dp_op_cross_entropy(logits, yt, &loss), "loss");
    check(dp_backward(loss, NULL, 0), "backward");
    check(dp_optimizer_step(opt), "step");
    float value = 0;
    check(dp_tensor_to_host(loss, &value, sizeof value), "loss value");
    printf("loss %d %.9g\n", step, value);
    dp_tensor_release(logits);
    dp_tensor_release(loss);
  }

  size_t count = 0;
  check(dp_module_parameter_count(model, &count), "parameters");
  for (size_t i = 0; i < count; ++i) {
    const char* name = NULL;
    dp_tensor* t = NULL;
    int64_t numel = 0;
    check(dp_module_parameter(model, i, &name, &t), "parameter");
    check(dp_tensor_numel(t, &numel), "numel");
    float* v = malloc((size_t)numel * sizeof(float));
    check(dp_tensor_to_host(t, v, (size_t)numel * sizeof(float)), "parameter value");
    printf("param %s", name);
    for (int64_t k = 0; k < numel; ++k) printf(" %.9g", v[k]);
    printf("\n");
    free(v);
    dp_tensor_release(t);
  }

  dp_tensor_release(xt);
  dp_tensor_release(yt);
  dp_optimizer_release(opt);
  dp_data_parallel_release(dpw);
  dp_module_release(model);
  dp_context_release(ctx);
  return 0;
}
