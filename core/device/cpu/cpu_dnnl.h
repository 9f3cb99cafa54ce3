// Kernels of the CPU backend on oneDNN primitives. One DnnlDevice per CPU device:
// its own engine, stream, primitive cache (keyed by operation and shape) and scratchpad,
// used only from that device's worker thread, which runs oneDNN with one OpenMP thread.
#pragma once

#include <memory>

#include "device/backend.h"

namespace dp::dnnl_cpu {

struct DnnlDevice;

// Creates the state on the calling (worker) thread and limits that thread's OpenMP team
// to one thread.
std::unique_ptr<DnnlDevice, void (*)(DnnlDevice*)> make_device();
// For running a device's work inline on another thread: limits the calling thread's
// OpenMP team to one thread and returns the previous limit, which the second restores.
int enter_single_thread();
void leave_single_thread(int previous);
// Number of cached primitives (for tests of the cache).
size_t cache_size(const DnnlDevice& d);

// Whether this CPU runs oneDNN's bfloat16 primitives natively (AVX512-BF16 or AMX, as
// oneDNN detects it), unless the environment sets DP_CPU_BF16=fp32. matmul, the
// convolutions and the conv + ReLU + pool block then take bfloat16 views
// (Backend::runs_bf16); every other kernel stays float32.
bool bf16_native();
// Whether the environment sets DP_CPU_BF16=fp32 (bf16_native is then false on any CPU).
bool bf16_forced_fp32();

// Each returns false when oneDNN has no primitive for the request (the caller then uses
// the reference loops); throws dp::Error(kBackend) when oneDNN fails.
bool binary(DnnlDevice& d, BinaryOp op, const KView& a, const KView& b, const KView& out);
bool affine(DnnlDevice& d, const KView& x, const KView& out, double alpha, double beta);
bool unary(DnnlDevice& d, UnaryOp op, const KView& x, const KView& out);
bool unary_backward(DnnlDevice& d, UnaryOp op, const KView& gy, const KView& saved,
                    const KView& gx);
bool reduce_sum(DnnlDevice& d, const KView& x, const KView& out);
bool matmul(DnnlDevice& d, const KView& a, const KView& b, const KView* bias, const KView& out,
            const MatmulParams& p);
bool softmax(DnnlDevice& d, const KView& x, int dim, bool log, const KView& out);
bool softmax_backward(DnnlDevice& d, const KView& gy, const KView& y, int dim, bool log,
                      const KView& gx);
bool conv2d(DnnlDevice& d, const KView& x, const KView& w, const KView* bias, const KView& y,
            const Conv2dParams& p);
bool conv2d_backward_data(DnnlDevice& d, const KView& gy, const KView& w, const KView& gx,
                          const Conv2dParams& p);
bool conv2d_backward_weights(DnnlDevice& d, const KView& x, const KView& gy, const KView& gw,
                             const KView* gbias, const Conv2dParams& p);
// pool(relu(conv(x, w) + bias)) with the conv output y (shape only; its data is unused)
// kept in oneDNN's blocked layout. state (state_bytes, or null for inference) keeps y and
// the pooling workspace for the backward. state_bytes is 0 when unsupported.
size_t conv_relu_pool_state_bytes(DnnlDevice& d, const KView& x, const KView& w, bool bias,
                                  const KView& y, const KView& z, const Conv2dParams& cp,
                                  const Pool2dParams& pp);
bool conv_relu_pool(DnnlDevice& d, const KView& x, const KView& w, const KView* bias,
                    const KView& y, const KView& z, void* state, const Conv2dParams& cp,
                    const Pool2dParams& pp);
// gx may be null (not needed); gw is always written; gbias when not null.
// z is the forward's output (max pooling takes the ReLU's mask from it).
bool conv_relu_pool_backward(DnnlDevice& d, const KView& gz, const KView& x, const KView& w,
                             const KView& y, const KView& z, const void* state, const KView* gx,
                             const KView& gw, const KView* gbias, const Conv2dParams& cp,
                             const Pool2dParams& pp);
// Workspace bytes oneDNN's max pooling needs (0 for average pooling).
size_t pool2d_workspace_bytes(DnnlDevice& d, const KView& x, const KView& y, const Pool2dParams& p);
bool pool2d(DnnlDevice& d, const KView& x, const KView& y, void* workspace, const Pool2dParams& p);
bool pool2d_backward(DnnlDevice& d, const KView& gy, const KView& x, const void* workspace,
                     const KView& gx, const Pool2dParams& p);
bool batch_norm(DnnlDevice& d, const KView& x, const KView& gamma, const KView& beta,
                const KView& mean, const KView& var, const KView& y, double eps, bool training);
bool batch_norm_backward(DnnlDevice& d, const KView& gy, const KView& x, const KView& gamma,
                         const KView& mean, const KView& var, const KView& gx, const KView& ggamma,
                         const KView& gbeta, double eps);

}  // namespace dp::dnnl_cpu
