// Differentiable ops. Each checks its arguments on the calling thread, then runs on the
// worker of its tensors' device (inline when already there), calls the device's backend,
// and, when grad mode is on and an input requires grad, records a graph node whose
// backward is written beside the forward in the same file.
//
// All tensors of one op must be on the same device unless the op says otherwise
// (to_device, cat, the parallel stages). Shapes are row-major; `dim` may be negative.
#pragma once

#include <memory>
#include <vector>

#include "tensor/tensor.h"

namespace dp {
class Context;
}

namespace dp::ops {

// ---- creation and copies (creation.cc, copy.cc) ----
Tensor empty(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device);
Tensor full(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device,
            double value);
Tensor zeros(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device);
Tensor zeros_like(const Tensor& t);
// Copies numel * element_size bytes from host memory.
Tensor from_host(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype,
                 Device device, const void* data);
// Uniform in [low, high) or normal(mean, std), drawn on the host from the context's
// stream for initialisation, as PyTorch's uniform_ and normal_ draw from its CPU
// generator (device/torch_generator.h).
Tensor uniform(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device,
               double low, double high);
Tensor normal(const std::shared_ptr<Context>& ctx, const Shape& shape, DType dtype, Device device,
              double mean, double std);
void to_host(const Tensor& t, void* dst);
void copy_from_host(const Tensor& t, const void* src);  // in place
void fill_(const Tensor& t, double value);              // in place
void copy_(const Tensor& dst, const Tensor& src);       // in place, any devices, no grad
Tensor to_device(const Tensor& t, Device device);       // differentiable
Tensor to_dtype(const Tensor& t, DType dtype);          // differentiable between floats
// to_dtype's result when the conversion is already made: `converted` holds t's values in
// another floating dtype (same shape and device, no history). A new tensor on converted's
// memory, read-only, whose gradient flows back to t as to_dtype's does.
Tensor to_dtype_from(const Tensor& t, const Tensor& converted);
// dst = src converted to dst's dtype (same element count and device); in place, no grad.
void cast_into(const Tensor& dst, const Tensor& src);
Tensor clone(const Tensor& t);  // differentiable

// ---- elementwise (elementwise.cc) ----
Tensor add(const Tensor& a, const Tensor& b);  // NumPy broadcasting
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& x);
Tensor scale(const Tensor& x, double factor);                         // x * factor
Tensor add_scalar(const Tensor& x, double value);                     // x + value
void add_(const Tensor& dst, const Tensor& src, double alpha = 1.0);  // dst += alpha*src
void scale_(const Tensor& t, double factor);                          // in place
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x);  // exact (erf) form, as torch.nn.GELU()
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);

// ---- reductions (reduce.cc) ----
Tensor sum(const Tensor& x);  // 0-dim
Tensor sum(const Tensor& x, int64_t dim, bool keepdim);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, int64_t dim, bool keepdim);
// Sums x down to `shape` (the inverse of broadcasting); not recorded.
Tensor sum_to(const Tensor& x, const Shape& shape);
// The same sum in `dtype`: x's own, or float32 for bfloat16 x (a float32 sum, not rounded).
Tensor sum_to(const Tensor& x, const Shape& shape, DType dtype);
Tensor argmax(const Tensor& x, int64_t dim);  // int64, dim removed; not differentiable

// ---- linear algebra (matmul.cc) ----
// [M, K] @ [K, N], or batched [B, M, K] @ [B, K, N] (either side may be 2-D).
Tensor matmul(const Tensor& a, const Tensor& b);
// x [N, in] (or [..., in]), weight [out, in], bias [out] or undefined; relu fuses a ReLU.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, bool relu = false);

// ---- softmax (softmax.cc) ----
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// ---- convolution and pooling (conv.cc, pool.cc) ----
// x [N, C, H, W], weight [O, C, KH, KW], bias [O] or undefined; relu fuses a ReLU.
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, int stride_h, int stride_w,
              int pad_h, int pad_w, bool relu = false);
Tensor max_pool2d(const Tensor& x, int kernel_h, int kernel_w, int stride_h, int stride_w,
                  int pad_h, int pad_w);
// pool2d(relu(conv2d(x, weight, bias))) as one block where the backend has one (oneDNN on
// CPU devices: the ReLU output stays in its blocked layout), else composed of the three;
// same values and gradients either way.
Tensor conv2d_relu_pool2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
                          Conv2dParams cp, const Pool2dParams& pp);
// The output shapes, after the checks conv2d and the pooling ops make (errors name `name`).
Shape conv2d_output_shape(const Tensor& x, const Tensor& weight, const Tensor& bias,
                          const Conv2dParams& p);
Shape pool2d_output_shape(const Shape& x, const Pool2dParams& p, const char* name);
Tensor avg_pool2d(const Tensor& x, int kernel_h, int kernel_w, int stride_h, int stride_w,
                  int pad_h, int pad_w);

// ---- normalisation and regularisation (batch_norm.cc, dropout.cc) ----
// x [N, C] or [N, C, H, W]. training: normalise with batch statistics and update the
// running ones in place (running = (1 - momentum) * running + momentum * batch, with the
// unbiased variance), as torch.nn.functional.batch_norm. Else use the running ones.
Tensor batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  const Tensor& running_mean, const Tensor& running_var, bool training,
                  double momentum, double eps);
// Zeroes each element with probability p and scales the rest by 1/(1-p) when training;
// identity otherwise. The mask is drawn from `seed`.
Tensor dropout(const Tensor& x, double p, bool training, uint64_t seed);

// ---- lookup and losses (embedding.cc, loss.cc) ----
Tensor embedding(const Tensor& indices, const Tensor& weight);  // indices int64
// logits [N, C], target [N] int64: mean over N of -log_softmax(logits)[i, target[i]].
Tensor cross_entropy(const Tensor& logits, const Tensor& target);
Tensor nll_loss(const Tensor& log_probs, const Tensor& target);
Tensor mse_loss(const Tensor& input, const Tensor& target);  // mean of squared differences

// ---- shapes (shape.cc) ----
Tensor reshape(const Tensor& x, const Shape& shape);  // one entry may be -1
Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim);
// Concatenates along dim; every tensor on the device of the first unless `device` given.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, Device device);
// Splits along dim into pieces of `sizes` (summing to the size of dim). Pieces along
// dim 0 are views; along other dims, copies.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
// For the backward of a split (or a scatter) of a tensor of shape `whole` into `sizes`
// along dim: gives each undefined piece gradient (a piece nobody used) zeros of its shape
// on `device`. The defined ones give the dtype; at least one must be defined.
void fill_unused_pieces(std::vector<Tensor>& grads, const Shape& whole, int64_t dim,
                        const std::vector<int64_t>& sizes, Device device);

}  // namespace dp::ops
