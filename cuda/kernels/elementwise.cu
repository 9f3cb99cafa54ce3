// Elementwise kernels: fill, cast, broadcasting arithmetic, activations, dropout masks,
// embedding lookup and the optimizer updates. The per-element formulas are the ones the
// CPU backend evaluates too (core/device/element_math.h), in the same precision.
#include <cmath>

#include "device/bfloat16.h"
#include "device/convert.h"
#include "kernels/launch.cuh"

namespace dp::cuda_plugin::kernels {

namespace {

// ---- fill and cast ----

template <class T>
__global__ void fill_kernel(T* out, int64_t n, T value) {
  DP_FOR_EACH(i, n) out[i] = value;
}

template <class T>
cudaError_t launch_fill(cudaStream_t s, void* out, int64_t n, T value) {
  fill_kernel<T><<<grid_for(n), kThreads, 0, s>>>(static_cast<T*>(out), n, value);
  return cudaGetLastError();
}

template <class From, class To>
__global__ void cast_kernel(const From* x, To* out, int64_t n) {
  DP_FOR_EACH(i, n) out[i] = convert_element<To>(x[i]);
}

template <class To>
cudaError_t cast_to(cudaStream_t s, const KView& x, To* out) {
  const int64_t n = x.numel();
  switch (x.dtype) {
    case DType::kFloat32:
      cast_kernel<<<grid_for(n), kThreads, 0, s>>>(x.as<float>(), out, n);
      break;
    case DType::kFloat64:
      cast_kernel<<<grid_for(n), kThreads, 0, s>>>(x.as<double>(), out, n);
      break;
    case DType::kInt64:
      cast_kernel<<<grid_for(n), kThreads, 0, s>>>(x.as<int64_t>(), out, n);
      break;
    case DType::kBFloat16:
      cast_kernel<<<grid_for(n), kThreads, 0, s>>>(x.as<BFloat16>(), out, n);
      break;
    case DType::kUInt8:
      cast_kernel<<<grid_for(n), kThreads, 0, s>>>(x.as<uint8_t>(), out, n);
      break;
  }
  return cudaGetLastError();
}

// ---- binary arithmetic with NumPy broadcasting ----

// Strides of a and b over out's dimensions (0 where broadcast), for the general path.
struct Broadcast {
  int ndim;
  int64_t shape[kMaxDims];
  int64_t stride_a[kMaxDims];
  int64_t stride_b[kMaxDims];
};

template <class T>
__global__ void binary_same_kernel(BinaryOp op, const T* a, const T* b, T* out, int64_t n) {
  DP_FOR_EACH(i, n) out[i] = elem::apply_binary(op, a[i], b[i]);
}

template <class T>
__global__ void binary_broadcast_kernel(BinaryOp op, const T* a, const T* b, T* out, int64_t n,
                                        Broadcast bc) {
  DP_FOR_EACH(i, n) {
    int64_t rest = i, oa = 0, ob = 0;
    for (int d = bc.ndim - 1; d >= 0; --d) {
      const int64_t k = rest % bc.shape[d];
      rest /= bc.shape[d];
      oa += k * bc.stride_a[d];
      ob += k * bc.stride_b[d];
    }
    out[i] = elem::apply_binary(op, a[oa], b[ob]);
  }
}

template <class T>
cudaError_t launch_binary(cudaStream_t s, BinaryOp op, const KView& a, const KView& b,
                          const KView& out) {
  const int64_t n = out.numel();
  if (a.numel() == n && b.numel() == n) {
    binary_same_kernel<T>
        <<<grid_for(n), kThreads, 0, s>>>(op, a.as<T>(), b.as<T>(), out.as<T>(), n);
  } else {
    Broadcast bc{};
    bc.ndim = out.ndim;
    for (int i = 0; i < out.ndim; ++i) bc.shape[i] = out.shape[i];
    elem::broadcast_strides(a, out, bc.stride_a);
    elem::broadcast_strides(b, out, bc.stride_b);
    binary_broadcast_kernel<T>
        <<<grid_for(n), kThreads, 0, s>>>(op, a.as<T>(), b.as<T>(), out.as<T>(), n, bc);
  }
  return cudaGetLastError();
}

// ---- affine, activations and their derivatives ----

template <class T>
__global__ void affine_kernel(const T* x, T* out, int64_t n, T alpha, T beta) {
  DP_FOR_EACH(i, n) out[i] = alpha * x[i] + beta;
}

template <class T>
__global__ void unary_kernel(UnaryOp op, const T* x, T* out, int64_t n) {
  DP_FOR_EACH(i, n) out[i] = elem::unary_value(op, x[i]);
}

template <class T>
__global__ void unary_backward_kernel(UnaryOp op, const T* gy, const T* saved, T* gx, int64_t n) {
  DP_FOR_EACH(i, n) gx[i] = gy[i] * elem::unary_derivative(op, saved[i]);
}

template <class T>
__global__ void bias_relu_kernel(T* c, int64_t n, int64_t cols, const T* bias, bool relu,
                                 bool zero_first) {
  using C = typename Compute<T>::type;
  DP_FOR_EACH(i, n) {
    C v = zero_first ? C(0) : load_as<C>(c[i]);
    if (bias) v += load_as<C>(bias[i % cols]);
    if (relu && v < C(0)) v = C(0);
    c[i] = T(v);
  }
}

// ---- dropout: the draw of every backend ----

template <class T>
__global__ void dropout_kernel(T* mask, int64_t n, double p, T keep, uint64_t seed) {
  DP_FOR_EACH(i, n) mask[i] = elem::uniform01(seed, static_cast<uint64_t>(i)) < p ? T(0) : keep;
}

// ---- embedding ----

template <class T>
__global__ void embedding_kernel(const int64_t* idx, const T* weight, T* out, int64_t n,
                                 int64_t rows, int64_t dim, DataErrorSink error) {
  DP_FOR_EACH(i, n) {
    const int64_t r = i / dim, j = i % dim;
    const int64_t k = idx[r];
    if (k < 0 || k >= rows) {
      if (j == 0) record_data_error(error, kEmbeddingIndex, r, k, rows);
      out[i] = T(0);
    } else {
      out[i] = weight[k * dim + j];
    }
  }
}

template <class T>
__global__ void embedding_backward_kernel(const int64_t* idx, const T* gy, T* gw, int64_t n,
                                          int64_t rows, int64_t dim) {
  DP_FOR_EACH(i, n) {
    const int64_t r = i / dim, j = i % dim;
    const int64_t k = idx[r];
    if (k >= 0 && k < rows) atomicAdd(gw + k * dim + j, gy[i]);  // the forward reported others
  }
}

// ---- optimizers (PyTorch's update rules) ----

template <class T>
__global__ void sgd_kernel(T* w, const T* g, T* buf, int64_t n, elem::SgdScalars<T> sc) {
  DP_FOR_EACH(i, n) elem::sgd_update(w[i], g[i], buf ? buf + i : nullptr, sc);
}

template <class T>
cudaError_t launch_sgd(cudaStream_t s, const KView& param, const KView& grad, const KView* buf,
                       const SgdParams& p) {
  const int64_t n = param.numel();
  sgd_kernel<T><<<grid_for(n), kThreads, 0, s>>>(
      param.as<T>(), grad.as<T>(), buf ? buf->as<T>() : nullptr, n, elem::sgd_scalars<T>(p));
  return cudaGetLastError();
}

template <class T>
__global__ void adam_kernel(T* w, const T* g, T* m, T* v, int64_t n, elem::AdamScalars<T> a) {
  DP_FOR_EACH(i, n) elem::adam_update(w[i], g[i], m[i], v[i], a);
}

template <class T>
cudaError_t launch_adam(cudaStream_t s, const KView& param, const KView& grad, const KView& m,
                        const KView& v, const AdamParams& p) {
  const int64_t n = param.numel();
  adam_kernel<T><<<grid_for(n), kThreads, 0, s>>>(param.as<T>(), grad.as<T>(), m.as<T>(), v.as<T>(),
                                                  n, elem::adam_scalars<T>(p));
  return cudaGetLastError();
}

}  // namespace

cudaError_t fill(cudaStream_t s, const KView& out, double value) {
  const int64_t n = out.numel();
  switch (out.dtype) {
    case DType::kFloat32:
      return launch_fill(s, out.data, n, static_cast<float>(value));
    case DType::kFloat64:
      return launch_fill(s, out.data, n, value);
    case DType::kInt64:
      return launch_fill(s, out.data, n, static_cast<int64_t>(value));
    case DType::kBFloat16:
      return launch_fill(s, out.data, n, BFloat16(static_cast<float>(value)));
    case DType::kUInt8:  // as the CPU backend's memset
      return launch_fill(s, out.data, n, static_cast<uint8_t>(static_cast<int>(value)));
  }
  return cudaErrorInvalidValue;
}

cudaError_t cast(cudaStream_t s, const KView& x, const KView& out) {
  switch (out.dtype) {
    case DType::kFloat32:
      return cast_to(s, x, out.as<float>());
    case DType::kFloat64:
      return cast_to(s, x, out.as<double>());
    case DType::kInt64:
      return cast_to(s, x, out.as<int64_t>());
    case DType::kBFloat16:
      return cast_to(s, x, out.as<BFloat16>());
    case DType::kUInt8:
      return cast_to(s, x, out.as<uint8_t>());
  }
  return cudaErrorInvalidValue;
}

cudaError_t binary(cudaStream_t s, BinaryOp op, const KView& a, const KView& b, const KView& out) {
  switch (out.dtype) {
    case DType::kFloat32:
      return launch_binary<float>(s, op, a, b, out);
    case DType::kFloat64:
      return launch_binary<double>(s, op, a, b, out);
    case DType::kInt64:
      return launch_binary<int64_t>(s, op, a, b, out);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t affine(cudaStream_t s, const KView& x, const KView& out, double alpha, double beta) {
  const int64_t n = out.numel();
  if (out.dtype == DType::kFloat32) {
    affine_kernel<float><<<grid_for(n), kThreads, 0, s>>>(
        x.as<float>(), out.as<float>(), n, static_cast<float>(alpha), static_cast<float>(beta));
  } else {
    affine_kernel<double>
        <<<grid_for(n), kThreads, 0, s>>>(x.as<double>(), out.as<double>(), n, alpha, beta);
  }
  return cudaGetLastError();
}

cudaError_t unary(cudaStream_t s, UnaryOp op, const KView& x, const KView& out) {
  const int64_t n = out.numel();
  if (out.dtype == DType::kFloat32) {
    unary_kernel<float><<<grid_for(n), kThreads, 0, s>>>(op, x.as<float>(), out.as<float>(), n);
  } else {
    unary_kernel<double><<<grid_for(n), kThreads, 0, s>>>(op, x.as<double>(), out.as<double>(), n);
  }
  return cudaGetLastError();
}

cudaError_t unary_backward(cudaStream_t s, UnaryOp op, const KView& gy, const KView& saved,
                           const KView& gx) {
  const int64_t n = gx.numel();
  if (gx.dtype == DType::kFloat32) {
    unary_backward_kernel<float>
        <<<grid_for(n), kThreads, 0, s>>>(op, gy.as<float>(), saved.as<float>(), gx.as<float>(), n);
  } else {
    unary_backward_kernel<double><<<grid_for(n), kThreads, 0, s>>>(
        op, gy.as<double>(), saved.as<double>(), gx.as<double>(), n);
  }
  return cudaGetLastError();
}

cudaError_t bias_relu(cudaStream_t s, DType dtype, void* c, int64_t rows, int64_t cols,
                      const void* bias, bool relu, bool zero_first) {
  const int64_t n = rows * cols;
  if (n == 0) return cudaSuccess;
  if (dtype == DType::kFloat32) {
    bias_relu_kernel<float><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<float*>(c), n, cols, static_cast<const float*>(bias), relu, zero_first);
  } else if (dtype == DType::kBFloat16) {
    bias_relu_kernel<BFloat16><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<BFloat16*>(c), n, cols, static_cast<const BFloat16*>(bias), relu, zero_first);
  } else {
    bias_relu_kernel<double><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<double*>(c), n, cols, static_cast<const double*>(bias), relu, zero_first);
  }
  return cudaGetLastError();
}

cudaError_t dropout_mask(cudaStream_t s, const KView& mask, double p, uint64_t seed) {
  const int64_t n = mask.numel();
  const double keep = 1.0 / (1.0 - p);
  if (mask.dtype == DType::kFloat32) {
    dropout_kernel<float>
        <<<grid_for(n), kThreads, 0, s>>>(mask.as<float>(), n, p, static_cast<float>(keep), seed);
  } else {
    dropout_kernel<double><<<grid_for(n), kThreads, 0, s>>>(mask.as<double>(), n, p, keep, seed);
  }
  return cudaGetLastError();
}

cudaError_t embedding(cudaStream_t s, const KView& idx, const KView& weight, const KView& out,
                      DataErrorSink error) {
  const int64_t rows = weight.shape[0], dim = weight.shape[1];
  const int64_t n = idx.numel() * dim;
  if (n == 0) return cudaSuccess;
  if (weight.dtype == DType::kFloat32) {
    embedding_kernel<float><<<grid_for(n), kThreads, 0, s>>>(idx.as<int64_t>(), weight.as<float>(),
                                                             out.as<float>(), n, rows, dim, error);
  } else if (weight.dtype == DType::kBFloat16) {  // a row copy, as for the other dtypes
    embedding_kernel<BFloat16><<<grid_for(n), kThreads, 0, s>>>(
        idx.as<int64_t>(), weight.as<BFloat16>(), out.as<BFloat16>(), n, rows, dim, error);
  } else {
    embedding_kernel<double><<<grid_for(n), kThreads, 0, s>>>(
        idx.as<int64_t>(), weight.as<double>(), out.as<double>(), n, rows, dim, error);
  }
  return cudaGetLastError();
}

cudaError_t embedding_backward(cudaStream_t s, const KView& idx, const KView& gy, const KView& gw) {
  const int64_t rows = gw.shape[0], dim = gw.shape[1];
  const int64_t n = idx.numel() * dim;
  if (n == 0) return cudaSuccess;
  if (gw.dtype == DType::kFloat32) {
    embedding_backward_kernel<float><<<grid_for(n), kThreads, 0, s>>>(
        idx.as<int64_t>(), gy.as<float>(), gw.as<float>(), n, rows, dim);
  } else {
    embedding_backward_kernel<double><<<grid_for(n), kThreads, 0, s>>>(
        idx.as<int64_t>(), gy.as<double>(), gw.as<double>(), n, rows, dim);
  }
  return cudaGetLastError();
}

cudaError_t sgd_step(cudaStream_t s, const KView& param, const KView& grad,
                     const KView* momentum_buf, const SgdParams& p) {
  if (param.dtype == DType::kFloat32) return launch_sgd<float>(s, param, grad, momentum_buf, p);
  return launch_sgd<double>(s, param, grad, momentum_buf, p);
}

cudaError_t adam_step(cudaStream_t s, const KView& param, const KView& grad, const KView& m,
                      const KView& v, const AdamParams& p) {
  if (param.dtype == DType::kFloat32) return launch_adam<float>(s, param, grad, m, v, p);
  return launch_adam<double>(s, param, grad, m, v, p);
}

}  // namespace dp::cuda_plugin::kernels
