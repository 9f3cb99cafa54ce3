// Hand-written float32 loops for the hot work oneDNN has no fast primitive for (column
// and row sums, the optimizer updates). Compiled for several instruction sets and picked
// at load time for the CPU it runs on (GCC's target_clones), so a generic x86-64 build
// still runs AVX-512 code where the machine has it.
#pragma once

#include <cstdint>

#include "device/backend.h"

namespace dp::cpu_loops {

// out[o, i] = sum over m of x[o, m, i], x seen as [outer, mid, inner].
void sum_middle(const float* x, float* out, int64_t outer, int64_t mid, int64_t inner);

// out[i] = a[i] op b[i] for i < n, where out is a, b, or an array overlapping neither
// (the caller checks). oneDNN's binary primitive costs ~2 us a call to set up, which is
// the whole cost for the small gradient sums of a backward pass.
void binary_same_shape(BinaryOp op, const float* a, const float* b, float* out, int64_t n);

// e^x in float32 within 2 ulp of the exact value (ref: std::exp in double), in plain
// arithmetic that the compiler vectorises: e^x = 2^n * e^r, n = round(x / ln 2), |r| <=
// ln(2)/2, e^r by its Taylor series to r^7 (the first term left out is under 1e-8 of
// the sum). 0 below -87.33 (where the result would leave float32's normal range), inf
// above 88.72, NaN for NaN.
float exp_f32(float x);

// log_softmax along the last dimension of x seen as [rows, cols], and its backward
// (gx = gy - exp(y) * sum over the row of gy, y being log_softmax's output). The C
// library's exp and log are correctly rounded or nearly, but called one element at a
// time they cost ~3 ns each; with exp_f32 the exponentials of all rows run vectorised.
void log_softmax_rows(const float* x, float* out, int64_t rows, int64_t cols);
void log_softmax_backward_rows(const float* gy, const float* y, float* gx, int64_t rows,
                               int64_t cols);

// Max pooling without padding of float32 laid out with `block` channels innermost: x as
// [outer][h][w][block] into y as [outer][oh][ow][block], outer being N times the channel
// blocks (oneDNN's aBcd8b / aBcd16b layouts; padded channels are pooled like the others).
// With groups > 0 the layout is NHWC instead (oneDNN's acdb, which its AMX convolutions
// pick) with groups * block channels: outer is N times the groups, and each group's
// `block` lanes sit groups * block elements from one pixel to the next.
// Windows of kh x kw at strides sh, sw; oh = (h - kh) / sh + 1, ow likewise. oneDNN 2.6's
// max pooling with a workspace (for training) ran 5.6x slower than without on this
// machine's AVX-512 (8.8 ms against 1.6 ms for [256, 32, 28, 28]); these loops store the
// argmax at the speed of the pooling itself.
struct BlockedPool {
  int64_t outer, h, w, oh, ow;
  int kh, kw, sh, sw;
  int block;  // 8 or 16
  // Pooling a ReLU's output: an output whose maximum is not above 0 gets argmax
  // kNoGradient, so that the backward passes it no gradient, as the ReLU's mask would.
  bool relu_mask = false;
  int64_t groups = 0;  // 0: channel-blocked; > 0: NHWC with groups * block channels
};
constexpr uint8_t kNoGradient = 255;
// argmax (may be null: inference) receives each output's position in its window, row by
// row (kh * kw < 255): the first maximum, or the last NaN, as PyTorch's CPU kernel picks.
void max_pool_blocked(const float* x, float* y, uint8_t* argmax, const BlockedPool& g);
// The same of bfloat16 x (bits), into float32 y (exact: y holds values of x).
void max_pool_blocked(const uint16_t* x, float* y, uint8_t* argmax, const BlockedPool& g);
// gx (x's layout) = the gradient of max_pool_blocked: gy at each window's argmax, 0
// elsewhere; summed where windows overlap.
void max_pool_blocked_backward(const float* gy, const uint8_t* argmax, float* gx,
                               const BlockedPool& g);

// The weight and bias gradients of a convolution with one input channel (the first layer
// on grayscale images), gy in oneDNN's channel-blocked layout: x as [n][h][w] (NCHW with
// C = 1), gy as [n][channel blocks][oh][ow][block], into gw as [channels][kh][kw] (OIHW
// with I = 1) and gb as [channels] (may be null). Output (i, j) reads x at (i * sh - ph +
// r, j * sw - pw + c) for kernel offset (r, c); taps outside x read 0. oneDNN 2.6's
// backward-weights kernel pads the one input channel to a block of 8 (AVX2) or 16: for
// the CNN's first layer on [256, 1, 28, 28] it took 18 ms a step on an AVX2 EPYC. Each
// image's sum is float32, the sum over images float64.
struct SingleChannelConv {
  int64_t n, h, w, channels, oh, ow;
  int kh, kw, sh, sw, ph, pw;
  int block;  // 8 or 16
};
void conv_single_channel_backward_weights(const float* x, const float* gy, float* gw, float* gb,
                                          const SingleChannelConv& g);

// float32 <-> bfloat16 of n elements, with device/bfloat16.h's rounding (nearest, ties to
// even; NaN stays NaN), written so that the compiler vectorises them.
void bf16_to_float(const uint16_t* in, float* out, int64_t n);
void float_to_bf16(const float* in, uint16_t* out, int64_t n);
// Each of x[0..n) rounded to the nearest bfloat16 value, kept as float32.
void round_to_bf16(float* x, int64_t n);
// gx = gy * (x <= 0 ? 0 : 1) of bfloat16 bits (elem::unary_derivative's ReLU: a NaN x
// passes the gradient; a NaN or infinite gy where x <= 0 gives NaN, as the product does).
void relu_backward_bf16(const uint16_t* gy, const uint16_t* x, uint16_t* gx, int64_t n);

// In-place SGD and Adam updates with PyTorch's rules (see ref::sgd_step, ref::adam_step).
void sgd(float* w, const float* g, float* buf, int64_t n, const SgdParams& p);
void adam(float* w, const float* g, float* m, float* v, int64_t n, const AdamParams& p);

}  // namespace dp::cpu_loops
