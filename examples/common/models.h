/* The two models of bench/torch_reference.py, built through the C API:
   mlp: Linear(784, 512) ReLU Linear(512, 256) ReLU Linear(256, 10)
   cnn: Conv2d(1, 32, 3, pad 1) ReLU MaxPool2d(2) Conv2d(32, 64, 3, pad 1) ReLU
        MaxPool2d(2) Flatten Linear(3136, 128) ReLU Linear(128, 10) */
#ifndef DP_EXAMPLES_MODELS_H_
#define DP_EXAMPLES_MODELS_H_

#include <dataparallel/dataparallel.h>

#ifdef __cplusplus
extern "C" {
#endif

/* name: "mlp" or "cnn". DP_ERR_INVALID_ARGUMENT for another name. */
dp_result build_model(dp_context* ctx, const char* name, dp_device device, dp_module** out);

/* The input shape of one sample batch: [batch, 784] (mlp) or [batch, 1, 28, 28] (cnn).
   Returns the number of dimensions written to shape (up to 4). */
size_t model_input_shape(const char* name, int64_t batch, int64_t* shape);

#ifdef __cplusplus
}
#endif

#endif /* DP_EXAMPLES_MODELS_H_ */
