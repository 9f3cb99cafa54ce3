// Launchers of the CUDA backend's own kernels (everything cuBLAS does not do). Each one
// enqueues its work on `stream` and returns the launch status; the caller (cuda_ops.cc,
// cuda_conv.cc) has already checked dtypes and shapes and turns a failed status into the
// backend's error. Views live on the stream's device. Float kernels exist for float32
// and float64; the dtype of the named view selects the instantiation. bfloat16 views reach
// only the kernels that say so (the core stages the others through float32); those compute
// in float and round each result once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device/device.h"
#include "device/dtype.h"

// nvcc's front end rejects the [[noreturn]] that backend.h puts on the BackendHost::raise
// function pointer (GCC accepts it; the kernels never call it). Spelled out to nothing for
// this one include, after every standard header it needs, which use __noreturn__.
#if defined(__CUDACC__)
#define noreturn
#include "device/backend.h"
#undef noreturn
#else
#include "device/backend.h"
#endif

namespace dp::cuda_plugin {

// A failure a kernel finds in the data (an index out of range), which the CPU backend
// reports at once. Kernels run asynchronously, so the first kernel to find one records
// it, and the host reads it at its next synchronisation with the GPU (see
// CudaBackend::check_data_errors). The record lives in mapped page-locked host memory,
// so the host reads it without a copy; `claim` (device memory) elects the one thread
// that writes it, because atomics on host memory are not atomic over PCIe.
struct DataError {
  int code;  // 0: nothing recorded; written last, after the fields
  int op;    // DataErrorOp
  int64_t position, value, bound;
};
enum DataErrorOp : int { kEmbeddingIndex = 1, kNllTarget = 2 };
struct DataErrorSink {
  int* claim;         // device memory, 0 until a thread claims the record
  DataError* record;  // the device's address of the mapped host record
};

// Geometry of a 2-D convolution (dilation 1, groups 1).
struct ConvShape {
  int64_t N, C, H, W, O, KH, KW, OH, OW;
  int stride_h, stride_w, pad_h, pad_w;
  int64_t patch() const { return C * KH * KW; }  // rows of the im2col matrix
  int64_t pixels() const { return OH * OW; }     // output positions per image
};

namespace kernels {

// ---- elementwise.cu ----
// Every dtype, bfloat16 included (cast: from and to every dtype).
cudaError_t fill(cudaStream_t s, const KView& out, double value);
cudaError_t cast(cudaStream_t s, const KView& x, const KView& out);
// float32, float64 and int64.
cudaError_t binary(cudaStream_t s, BinaryOp op, const KView& a, const KView& b, const KView& out);
cudaError_t affine(cudaStream_t s, const KView& x, const KView& out, double alpha, double beta);
cudaError_t unary(cudaStream_t s, UnaryOp op, const KView& x, const KView& out);
cudaError_t unary_backward(cudaStream_t s, UnaryOp op, const KView& gy, const KView& saved,
                           const KView& gx);
// c[r, j] = relu?((zero_first ? 0 : c[r, j]) + bias[j]) over rows x cols; bias may be null.
// The epilogue of products whose cuBLASLt plan could not fuse it. bfloat16 too.
cudaError_t bias_relu(cudaStream_t s, DType dtype, void* c, int64_t rows, int64_t cols,
                      const void* bias, bool relu, bool zero_first);
cudaError_t dropout_mask(cudaStream_t s, const KView& mask, double p, uint64_t seed);
// A row copy: bfloat16 weights too.
cudaError_t embedding(cudaStream_t s, const KView& idx, const KView& weight, const KView& out,
                      DataErrorSink error);
cudaError_t embedding_backward(cudaStream_t s, const KView& idx, const KView& gy, const KView& gw);
cudaError_t sgd_step(cudaStream_t s, const KView& param, const KView& grad,
                     const KView* momentum_buf, const SgdParams& p);
cudaError_t adam_step(cudaStream_t s, const KView& param, const KView& grad, const KView& m,
                      const KView& v, const AdamParams& p);

// ---- reduce.cu (temporaries come from `pool`, stream-ordered) ----
// float32, float64, int64 and bfloat16 (x and out of one dtype).
cudaError_t reduce_sum(cudaStream_t s, cudaMemPool_t pool, const KView& x, const KView& out);
cudaError_t argmax(cudaStream_t s, const KView& x, int dim, const KView& out);
cudaError_t softmax(cudaStream_t s, const KView& x, int dim, bool log, const KView& out);
cudaError_t softmax_backward(cudaStream_t s, const KView& gy, const KView& y, int dim, bool log,
                             const KView& gx);
cudaError_t nll_loss(cudaStream_t s, const KView& logp, const KView& target, const KView& out,
                     DataErrorSink error);
cudaError_t nll_loss_backward(cudaStream_t s, const KView& grad_out, const KView& target,
                              const KView& grad_logp);
cudaError_t batch_norm(cudaStream_t s, cudaMemPool_t pool, const KView& x, const KView& gamma,
                       const KView& beta, const KView& mean, const KView& var, const KView& y,
                       double eps, bool training);
cudaError_t batch_norm_backward(cudaStream_t s, cudaMemPool_t pool, const KView& gy, const KView& x,
                                const KView& gamma, const KView& mean, const KView& var,
                                const KView& gx, const KView& ggamma, const KView& gbeta,
                                double eps);

// ---- conv.cu ----
// Images [n0, n0 + nb) of x as the matrix col [patch, nb * pixels]: column n * pixels + p
// holds the input window of output position p of image n0 + n (zeros in the padding).
cudaError_t im2col(cudaStream_t s, DType dtype, const void* x, void* col, const ConvShape& g,
                   int64_t n0, int64_t nb);
// The adjoint of im2col: gx of images [n0, n0 + nb) = the sum of every column entry that
// read each input element. Overwrites those images of gx.
cudaError_t col2im(cudaStream_t s, DType dtype, const void* col, void* gx, const ConvShape& g,
                   int64_t n0, int64_t nb);
// rows [O, nb * pixels] -> images [n0, n0 + nb) of y [N, O, OH, OW], adding bias[o] (may be
// null) and applying ReLU when asked.
cudaError_t rows_to_images(cudaStream_t s, DType dtype, const void* rows, void* y,
                           const ConvShape& g, int64_t n0, int64_t nb, const void* bias, bool relu);
// y [N, O, OH, OW] in place: adds bias[o] (may be null), then applies ReLU when asked.
// bfloat16 too (cuDNN's bfloat16 convolutions).
cudaError_t channel_bias_relu(cudaStream_t s, DType dtype, void* y, const ConvShape& g,
                              const void* bias, bool relu);
// The inverse layout change, without bias: images [n0, n0 + nb) of gy -> rows.
cudaError_t images_to_rows(cudaStream_t s, DType dtype, const void* gy, void* rows,
                           const ConvShape& g, int64_t n0, int64_t nb);
// Max pooling's workspace: one int32 per output element (the window's argmax as ih * W +
// iw within its plane). Average pooling needs none.
size_t pool2d_workspace_bytes(const KView& y, const Pool2dParams& p);
cudaError_t pool2d(cudaStream_t s, const KView& x, const KView& y, void* workspace,
                   const Pool2dParams& p);
cudaError_t pool2d_backward(cudaStream_t s, const KView& gy, const void* workspace, const KView& gx,
                            const Pool2dParams& p);

}  // namespace kernels
}  // namespace dp::cuda_plugin
