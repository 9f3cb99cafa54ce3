#include "models.h"

#include <string.h>

/* Appends a freshly made layer (or returns the first error). */
#define APPEND(seq, call)                   \
  do {                                      \
    dp_module* layer_ = NULL;               \
    dp_result r_ = (call);                  \
    if (r_ == DP_OK) {                      \
      r_ = dp_module_append((seq), layer_); \
      dp_module_release(layer_);            \
    }                                       \
    if (r_ != DP_OK) {                      \
      dp_module_release(seq);               \
      return r_;                            \
    }                                       \
  } while (0)

dp_result build_model(dp_context* ctx, const char* name, dp_device d, dp_module** out) {
  dp_module* s = NULL;
  dp_result r = dp_module_sequential(ctx, &s);
  if (r != DP_OK) return r;
  if (strcmp(name, "mlp") == 0) {
    APPEND(s, dp_module_linear(ctx, 784, 512, 1, d, &layer_));
    APPEND(s, dp_module_relu(ctx, &layer_));
    APPEND(s, dp_module_linear(ctx, 512, 256, 1, d, &layer_));
    APPEND(s, dp_module_relu(ctx, &layer_));
    APPEND(s, dp_module_linear(ctx, 256, 10, 1, d, &layer_));
  } else if (strcmp(name, "cnn") == 0) {
    APPEND(s, dp_module_conv2d(ctx, 1, 32, 3, 3, 1, 1, 1, 1, 1, d, &layer_));
    APPEND(s, dp_module_relu(ctx, &layer_));
    APPEND(s, dp_module_maxpool2d(ctx, 2, 2, 2, 2, 0, 0, &layer_));
    APPEND(s, dp_module_conv2d(ctx, 32, 64, 3, 3, 1, 1, 1, 1, 1, d, &layer_));
    APPEND(s, dp_module_relu(ctx, &layer_));
    APPEND(s, dp_module_maxpool2d(ctx, 2, 2, 2, 2, 0, 0, &layer_));
    APPEND(s, dp_module_flatten(ctx, 1, -1, &layer_));
    APPEND(s, dp_module_linear(ctx, 3136, 128, 1, d, &layer_));
    APPEND(s, dp_module_relu(ctx, &layer_));
    APPEND(s, dp_module_linear(ctx, 128, 10, 1, d, &layer_));
  } else {
    dp_module_release(s);
    return dp_set_error(DP_ERR_INVALID_ARGUMENT, "unknown model (expected mlp or cnn)");
  }
  *out = s;
  return DP_OK;
}

size_t model_input_shape(const char* name, int64_t batch, int64_t* shape) {
  shape[0] = batch;
  if (strcmp(name, "cnn") == 0) {
    shape[1] = 1;
    shape[2] = 28;
    shape[3] = 28;
    return 4;
  }
  shape[1] = 784;
  return 2;
}
