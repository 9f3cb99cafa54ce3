// The per-element formulas that every backend evaluates: arithmetic, activations and
// their derivatives, softmax's backward, the dropout draw, one pooling window, the
// optimizers' updates. The CPU reference (cpu/cpu_reference.h), the float32 CPU loops
// (cpu/cpu_loops.cc) and the CUDA kernels (cuda/kernels/*.cu) all call these, so the backends
// compute the same expression and a formula is fixed in one place. Under nvcc the
// functions are __host__ __device__.
//
// The CUDA kernels get it through kernels/launch.cuh, which first includes device/backend.h
// the way nvcc accepts it.
#pragma once

#include <math.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "device/backend.h"

#if defined(__CUDACC__)
#define DP_HOST_DEVICE __host__ __device__
#else
#define DP_HOST_DEVICE
#endif

namespace dp::elem {

// ---- math functions that pick the float or the double version, on host and device ----

DP_HOST_DEVICE inline float exp(float v) {
  return ::expf(v);
}
DP_HOST_DEVICE inline double exp(double v) {
  return ::exp(v);
}
DP_HOST_DEVICE inline float log(float v) {
  return ::logf(v);
}
DP_HOST_DEVICE inline double log(double v) {
  return ::log(v);
}
DP_HOST_DEVICE inline float tanh(float v) {
  return ::tanhf(v);
}
DP_HOST_DEVICE inline double tanh(double v) {
  return ::tanh(v);
}
DP_HOST_DEVICE inline float erf(float v) {
  return ::erff(v);
}
DP_HOST_DEVICE inline double erf(double v) {
  return ::erf(v);
}
DP_HOST_DEVICE inline float sqrt(float v) {
  return ::sqrtf(v);
}
DP_HOST_DEVICE inline double sqrt(double v) {
  return ::sqrt(v);
}

// ---- shapes (host code) ----

// Strides of a contiguous row-major view, right-aligned to out's dimensions, with 0 for
// broadcast dimensions (size 1 where out is larger).
inline void broadcast_strides(const KView& v, const KView& out, int64_t* strides) {
  int64_t s = 1;
  for (int i = out.ndim - 1; i >= 0; --i) {
    const int vi = i - (out.ndim - v.ndim);
    if (vi < 0) {
      strides[i] = 0;
      continue;
    }
    strides[i] = v.shape[vi] == 1 && out.shape[i] != 1 ? 0 : s;
    s *= v.shape[vi];
  }
}

// Splits x at `dim` into [outer, size(dim), inner].
inline void split_at(const KView& x, int dim, int64_t* outer, int64_t* mid, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int i = 0; i < dim; ++i) *outer *= x.shape[i];
  for (int i = dim + 1; i < x.ndim; ++i) *inner *= x.shape[i];
  *mid = x.ndim == 0 ? 1 : x.shape[dim];
}

// ---- arithmetic and activations ----

template <class T>
DP_HOST_DEVICE inline T apply_binary(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
  }
  return T(0);
}

// The standard normal CDF, for the exact (erf) GELU.
template <class T>
DP_HOST_DEVICE inline T normal_cdf(T x) {
  return T(0.5) * (T(1) + erf(x * T(0.70710678118654752440)));  // 1/sqrt(2)
}

template <class T>
DP_HOST_DEVICE inline T unary_value(UnaryOp op, T v) {
  switch (op) {
    case UnaryOp::kRelu:
      return v < T(0) ? T(0) : v;  // NaN stays NaN, as in PyTorch
    case UnaryOp::kGelu:
      return v * normal_cdf(v);
    case UnaryOp::kTanh:
      return tanh(v);
    case UnaryOp::kSigmoid:
      return T(1) / (T(1) + exp(-v));
    case UnaryOp::kExp:
      return exp(v);
    case UnaryOp::kLog:
      return log(v);
  }
  return v;
}

// f' from the value the forward saved: the input x for kRelu, kGelu and kLog, the output
// y = f(x) for kTanh, kSigmoid and kExp.
template <class T>
DP_HOST_DEVICE inline T unary_derivative(UnaryOp op, T s) {
  switch (op) {
    case UnaryOp::kRelu:  // as PyTorch's threshold_backward: a NaN input passes the gradient
      return s <= T(0) ? T(0) : T(1);
    case UnaryOp::kGelu:  // cdf(x) + x pdf(x)
      return normal_cdf(s) + s * exp(T(-0.5) * s * s) * T(0.39894228040143267794);
    case UnaryOp::kTanh:
      return T(1) - s * s;
    case UnaryOp::kSigmoid:
      return s * (T(1) - s);
    case UnaryOp::kExp:
      return s;
    case UnaryOp::kLog:
      return T(1) / s;
  }
  return T(0);
}

// ---- softmax backward along one dimension ----
// From the forward's output y (softmax, or log_softmax when `log`): first
// dot = sum over the dimension of softmax_dot_term(gy, y), then each gx = softmax_grad.
template <class T>
DP_HOST_DEVICE inline T softmax_dot_term(T gy, T y, bool log) {
  return log ? gy : gy * y;
}

template <class T>
DP_HOST_DEVICE inline T softmax_grad(T gy, T y, T dot, bool log) {
  return log ? gy - exp(y) * dot : y * (gy - dot);
}

// ---- dropout ----

// A counter-based draw in [0, 1): splitmix64 of (seed, i). Same on every backend, so a
// seeded mask does not depend on where it is drawn.
DP_HOST_DEVICE inline double uniform01(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

// ---- pooling ----

// Calls f(ih, iw) for each input position of the pooling window of output (oh, ow) that
// lies inside the [H, W] plane (padding is skipped), row by row.
template <class F>
DP_HOST_DEVICE inline void for_each_in_window(int64_t H, int64_t W, int64_t oh, int64_t ow,
                                              const Pool2dParams& p, F&& f) {
  // The window clipped to the input: a kernel far larger than the input (valid, when the
  // padding makes up the difference) costs the input's size, not the kernel's.
  const int64_t top = oh * p.stride_h - p.pad_h, left = ow * p.stride_w - p.pad_w;
  const int64_t ih0 = top < 0 ? 0 : top, iw0 = left < 0 ? 0 : left;
  const int64_t ih1 = top + p.kernel_h < H ? top + p.kernel_h : H;
  const int64_t iw1 = left + p.kernel_w < W ? left + p.kernel_w : W;
  for (int64_t ih = ih0; ih < ih1; ++ih) {
    for (int64_t iw = iw0; iw < iw1; ++iw) f(ih, iw);
  }
}

// One output element (oh, ow) of 2-D pooling over one [H, W] plane. Returns the maximum
// or the average (divided by the full window, padding included, as PyTorch's default);
// for max pooling *best is the plane index of the first maximum (padding never wins; -1
// when the window holds no input).
template <class T>
DP_HOST_DEVICE inline T pool_window(const T* plane, int64_t H, int64_t W, int64_t oh, int64_t ow,
                                    const Pool2dParams& p, int64_t* best) {
  const bool max = p.kind == PoolKind::kMax;
  T acc = max ? -std::numeric_limits<T>::infinity() : T(0);
  int64_t at = -1;
  for_each_in_window(H, W, oh, ow, p, [&](int64_t ih, int64_t iw) {
    const T v = plane[ih * W + iw];
    if (!max) {
      acc += v;
    } else if (at < 0 || v > acc || v != v) {  // a NaN wins and stays, as in PyTorch
      acc = v;
      at = ih * W + iw;
    }
  });
  *best = at;
  return max ? acc : acc / static_cast<T>(int64_t{p.kernel_h} * p.kernel_w);
}

// ---- optimizers (PyTorch's update rules) ----

template <class T>
struct SgdScalars {
  T lr, wd, mom, damp;  // damp = 1 - dampening
  bool nesterov, first_step;
};

template <class T>
inline SgdScalars<T> sgd_scalars(const SgdParams& p) {
  return {static_cast<T>(p.lr),
          static_cast<T>(p.weight_decay),
          static_cast<T>(p.momentum),
          static_cast<T>(1.0 - p.dampening),
          p.nesterov,
          p.first_step};
}

// One parameter: w -= lr * d, d the (decayed) gradient or its momentum form. buf is the
// element's momentum buffer, or null without momentum.
template <class T>
DP_HOST_DEVICE inline void sgd_update(T& w, T g, T* buf, const SgdScalars<T>& s) {
  T d = g + s.wd * w;
  if (buf) {
    const T b = s.first_step ? d : s.mom * *buf + s.damp * d;
    *buf = b;
    d = s.nesterov ? d + s.mom * b : b;
  }
  w -= s.lr * d;
}

template <class T>
struct AdamScalars {
  // 1 - beta is taken in double, then rounded: 1 - float(0.999) would be off by 1.3e-5
  // relative, a bias of every update in one direction (PyTorch also passes it in double).
  T step_size, inv_sqrt_bc2, b1, b2, one_minus_b1, one_minus_b2, eps, wd, decay;
  bool decoupled;  // AdamW: decay the parameter, not the gradient
};

// The bias corrections of step p.step, computed in double once per update.
template <class T>
inline AdamScalars<T> adam_scalars(const AdamParams& p) {
  const double bc1 = 1.0 - std::pow(p.beta1, static_cast<double>(p.step));
  const double bc2 = 1.0 - std::pow(p.beta2, static_cast<double>(p.step));
  AdamScalars<T> a;
  a.step_size = static_cast<T>(p.lr / bc1);
  a.inv_sqrt_bc2 = static_cast<T>(1.0 / std::sqrt(bc2));
  a.b1 = static_cast<T>(p.beta1);
  a.b2 = static_cast<T>(p.beta2);
  a.one_minus_b1 = static_cast<T>(1.0 - p.beta1);
  a.one_minus_b2 = static_cast<T>(1.0 - p.beta2);
  a.eps = static_cast<T>(p.eps);
  a.wd = static_cast<T>(p.weight_decay);
  a.decay = static_cast<T>(1.0 - p.lr * p.weight_decay);
  a.decoupled = p.decoupled;
  return a;
}

// One parameter with its first and second moments m and v.
template <class T>
DP_HOST_DEVICE inline void adam_update(T& w, T g, T& m, T& v, const AdamScalars<T>& a) {
  T wi = w;
  if (a.decoupled) {
    wi *= a.decay;
  } else {
    g += a.wd * wi;
  }
  const T mi = a.b1 * m + a.one_minus_b1 * g;
  const T vi = a.b2 * v + a.one_minus_b2 * g * g;
  m = mi;
  v = vi;
  w = wi - a.step_size * mi / (sqrt(vi) * a.inv_sqrt_bc2 + a.eps);
}

}  // namespace dp::elem
