// Convolution's layout kernels (im2col and its adjoint, and the moves between NCHW images
// and the [O, images * pixels] rows that the GEMMs produce) and 2-D pooling. The GEMMs
// themselves run on cuBLAS (cuda_conv.cc).
#include "kernels/launch.cuh"

namespace dp::cuda_plugin::kernels {

namespace {

template <class T>
__global__ void im2col_kernel(const T* x, T* col, ConvShape g, int64_t n0, int64_t nb) {
  const int64_t P = g.OH * g.OW, cols = nb * P;
  DP_FOR_EACH(t, g.C * g.KH * g.KW * cols) {
    const int64_t k = t / cols, r = t % cols;
    const int64_t n = r / P, p = r % P;
    const int64_t oh = p / g.OW, ow = p % g.OW;
    const int64_t kw = k % g.KW, kh = (k / g.KW) % g.KH, c = k / (g.KW * g.KH);
    const int64_t ih = oh * g.stride_h - g.pad_h + kh, iw = ow * g.stride_w - g.pad_w + kw;
    col[t] = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W
                 ? x[(((n0 + n) * g.C + c) * g.H + ih) * g.W + iw]
                 : T(0);
  }
}

// First output index o with o * stride - pad + k >= i for some k < K: the windows that
// can contain input position i start there.
__device__ inline int64_t first_window(int64_t i, int64_t pad, int64_t K, int stride) {
  const int64_t a = i + pad - K + 1;
  return a > 0 ? (a + stride - 1) / stride : 0;
}

// One thread per input element gathers every column entry that read it (no atomics, so
// the result does not depend on scheduling).
template <class T>
__global__ void col2im_kernel(const T* col, T* gx, ConvShape g, int64_t n0, int64_t nb) {
  const int64_t P = g.OH * g.OW, cols = nb * P;
  DP_FOR_EACH(t, nb * g.C * g.H * g.W) {
    const int64_t iw = t % g.W, ih = (t / g.W) % g.H;
    const int64_t c = (t / (g.W * g.H)) % g.C, n = t / (g.W * g.H * g.C);
    T acc = T(0);
    const int64_t oh_end = (ih + g.pad_h) / g.stride_h, ow_end = (iw + g.pad_w) / g.stride_w;
    for (int64_t oh = first_window(ih, g.pad_h, g.KH, g.stride_h); oh <= oh_end && oh < g.OH;
         ++oh) {
      const int64_t kh = ih + g.pad_h - oh * g.stride_h;
      for (int64_t ow = first_window(iw, g.pad_w, g.KW, g.stride_w); ow <= ow_end && ow < g.OW;
           ++ow) {
        const int64_t kw = iw + g.pad_w - ow * g.stride_w;
        acc += col[((c * g.KH + kh) * g.KW + kw) * cols + n * P + oh * g.OW + ow];
      }
    }
    gx[n0 * g.C * g.H * g.W + t] = acc;
  }
}

template <class T>
__global__ void rows_to_images_kernel(const T* rows, T* y, ConvShape g, int64_t n0, int64_t nb,
                                      const T* bias, bool relu) {
  const int64_t P = g.OH * g.OW;
  DP_FOR_EACH(t, nb * g.O * P) {
    const int64_t p = t % P, o = (t / P) % g.O, n = t / (P * g.O);
    T v = rows[o * nb * P + n * P + p];
    if (bias) v += bias[o];
    if (relu && v < T(0)) v = T(0);
    y[n0 * g.O * P + t] = v;
  }
}

template <class T>
__global__ void channel_bias_relu_kernel(T* y, const T* bias, int64_t channels, int64_t pixels,
                                         int64_t n, bool relu) {
  using C = typename Compute<T>::type;
  DP_FOR_EACH(t, n) {
    C v = load_as<C>(y[t]);
    if (bias) v += load_as<C>(bias[(t / pixels) % channels]);
    if (relu && v < C(0)) v = C(0);  // NaN stays NaN
    y[t] = T(v);
  }
}

template <class T>
__global__ void images_to_rows_kernel(const T* gy, T* rows, ConvShape g, int64_t n0, int64_t nb) {
  const int64_t P = g.OH * g.OW;
  DP_FOR_EACH(t, nb * g.O * P) {
    const int64_t p = t % P, o = (t / P) % g.O, n = t / (P * g.O);
    rows[o * nb * P + n * P + p] = gy[n0 * g.O * P + t];
  }
}

template <class T>
__global__ void pool_kernel(const T* x, T* y, int32_t* ws, int64_t planes, int64_t H, int64_t W,
                            int64_t OH, int64_t OW, Pool2dParams p) {
  DP_FOR_EACH(t, planes * OH * OW) {
    const int64_t ow = t % OW, oh = (t / OW) % OH, plane = t / (OW * OH);
    int64_t best = -1;
    y[t] = elem::pool_window(x + plane * H * W, H, W, oh, ow, p, &best);
    if (ws) ws[t] = static_cast<int32_t>(best);
  }
}

// One thread per input element sums the gradients of the windows that used it.
template <class T>
__global__ void pool_backward_kernel(const T* gy, const int32_t* ws, T* gx, int64_t planes,
                                     int64_t H, int64_t W, int64_t OH, int64_t OW, Pool2dParams p) {
  const bool max = p.kind == PoolKind::kMax;
  const T divisor = static_cast<T>(int64_t{p.kernel_h} * p.kernel_w);
  DP_FOR_EACH(t, planes * H * W) {
    const int64_t iw = t % W, ih = (t / W) % H, plane = t / (W * H);
    const int32_t here = static_cast<int32_t>(ih * W + iw);
    const int64_t oh_end = (ih + p.pad_h) / p.stride_h, ow_end = (iw + p.pad_w) / p.stride_w;
    T acc = T(0);
    for (int64_t oh = first_window(ih, p.pad_h, p.kernel_h, p.stride_h); oh <= oh_end && oh < OH;
         ++oh) {
      for (int64_t ow = first_window(iw, p.pad_w, p.kernel_w, p.stride_w); ow <= ow_end && ow < OW;
           ++ow) {
        const int64_t o = (plane * OH + oh) * OW + ow;
        if (!max) {
          acc += gy[o] / divisor;
        } else if (ws[o] == here) {
          acc += gy[o];
        }
      }
    }
    gx[t] = acc;
  }
}

// Windows that do not overlap (stride >= kernel both ways) hold each input element at
// most once, so one thread per window writes its gradient into gx (zeroed before) without
// a race, and without the gather's search of every window near each input element.
template <class T>
__global__ void pool_backward_disjoint_kernel(const T* gy, const int32_t* ws, T* gx, int64_t planes,
                                              int64_t H, int64_t W, int64_t OH, int64_t OW,
                                              Pool2dParams p) {
  DP_FOR_EACH(t, planes * OH * OW) {
    T* plane = gx + t / (OW * OH) * H * W;
    if (p.kind == PoolKind::kMax) {
      if (ws[t] >= 0) plane[ws[t]] = gy[t];  // -1: the window held only padding
    } else {
      const T v = gy[t] / static_cast<T>(int64_t{p.kernel_h} * p.kernel_w);
      elem::for_each_in_window(H, W, (t / OW) % OH, t % OW, p,
                               [&](int64_t ih, int64_t iw) { plane[ih * W + iw] = v; });
    }
  }
}

}  // namespace

cudaError_t im2col(cudaStream_t s, DType dtype, const void* x, void* col, const ConvShape& g,
                   int64_t n0, int64_t nb) {
  const int64_t n = g.patch() * nb * g.pixels();
  if (n == 0) return cudaSuccess;
  if (dtype == DType::kFloat32) {
    im2col_kernel<float><<<grid_for(n), kThreads, 0, s>>>(static_cast<const float*>(x),
                                                          static_cast<float*>(col), g, n0, nb);
  } else {
    im2col_kernel<double><<<grid_for(n), kThreads, 0, s>>>(static_cast<const double*>(x),
                                                           static_cast<double*>(col), g, n0, nb);
  }
  return cudaGetLastError();
}

cudaError_t col2im(cudaStream_t s, DType dtype, const void* col, void* gx, const ConvShape& g,
                   int64_t n0, int64_t nb) {
  const int64_t n = nb * g.C * g.H * g.W;
  if (n == 0) return cudaSuccess;
  if (dtype == DType::kFloat32) {
    col2im_kernel<float><<<grid_for(n), kThreads, 0, s>>>(static_cast<const float*>(col),
                                                          static_cast<float*>(gx), g, n0, nb);
  } else {
    col2im_kernel<double><<<grid_for(n), kThreads, 0, s>>>(static_cast<const double*>(col),
                                                           static_cast<double*>(gx), g, n0, nb);
  }
  return cudaGetLastError();
}

cudaError_t rows_to_images(cudaStream_t s, DType dtype, const void* rows, void* y,
                           const ConvShape& g, int64_t n0, int64_t nb, const void* bias,
                           bool relu) {
  const int64_t n = nb * g.O * g.pixels();
  if (n == 0) return cudaSuccess;
  if (dtype == DType::kFloat32) {
    rows_to_images_kernel<float>
        <<<grid_for(n), kThreads, 0, s>>>(static_cast<const float*>(rows), static_cast<float*>(y),
                                          g, n0, nb, static_cast<const float*>(bias), relu);
  } else {
    rows_to_images_kernel<double>
        <<<grid_for(n), kThreads, 0, s>>>(static_cast<const double*>(rows), static_cast<double*>(y),
                                          g, n0, nb, static_cast<const double*>(bias), relu);
  }
  return cudaGetLastError();
}

cudaError_t channel_bias_relu(cudaStream_t s, DType dtype, void* y, const ConvShape& g,
                              const void* bias, bool relu) {
  const int64_t n = g.N * g.O * g.pixels();
  if (n == 0 || (!bias && !relu)) return cudaSuccess;
  if (dtype == DType::kFloat32) {
    channel_bias_relu_kernel<float><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<float*>(y), static_cast<const float*>(bias), g.O, g.pixels(), n, relu);
  } else if (dtype == DType::kBFloat16) {
    channel_bias_relu_kernel<BFloat16><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<BFloat16*>(y), static_cast<const BFloat16*>(bias), g.O, g.pixels(), n, relu);
  } else {
    channel_bias_relu_kernel<double><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<double*>(y), static_cast<const double*>(bias), g.O, g.pixels(), n, relu);
  }
  return cudaGetLastError();
}

cudaError_t images_to_rows(cudaStream_t s, DType dtype, const void* gy, void* rows,
                           const ConvShape& g, int64_t n0, int64_t nb) {
  const int64_t n = nb * g.O * g.pixels();
  if (n == 0) return cudaSuccess;
  if (dtype == DType::kFloat32) {
    images_to_rows_kernel<float><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<const float*>(gy), static_cast<float*>(rows), g, n0, nb);
  } else {
    images_to_rows_kernel<double><<<grid_for(n), kThreads, 0, s>>>(
        static_cast<const double*>(gy), static_cast<double*>(rows), g, n0, nb);
  }
  return cudaGetLastError();
}

size_t pool2d_workspace_bytes(const KView& y, const Pool2dParams& p) {
  return p.kind == PoolKind::kMax ? static_cast<size_t>(y.numel()) * sizeof(int32_t) : 0;
}

cudaError_t pool2d(cudaStream_t s, const KView& x, const KView& y, void* workspace,
                   const Pool2dParams& p) {
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t n = y.numel();
  int32_t* ws = p.kind == PoolKind::kMax ? static_cast<int32_t*>(workspace) : nullptr;
  if (y.dtype == DType::kFloat32) {
    pool_kernel<float><<<grid_for(n), kThreads, 0, s>>>(x.as<float>(), y.as<float>(), ws, planes,
                                                        x.shape[2], x.shape[3], y.shape[2],
                                                        y.shape[3], p);
  } else {
    pool_kernel<double><<<grid_for(n), kThreads, 0, s>>>(x.as<double>(), y.as<double>(), ws, planes,
                                                         x.shape[2], x.shape[3], y.shape[2],
                                                         y.shape[3], p);
  }
  return cudaGetLastError();
}

cudaError_t pool2d_backward(cudaStream_t s, const KView& gy, const void* workspace, const KView& gx,
                            const Pool2dParams& p) {
  const int64_t planes = gx.shape[0] * gx.shape[1];
  const int64_t n = gx.numel();
  const int32_t* ws = static_cast<const int32_t*>(workspace);
  if (p.stride_h >= p.kernel_h && p.stride_w >= p.kernel_w) {
    const int64_t windows = gy.numel();
    const cudaError_t err =
        cudaMemsetAsync(gx.data, 0, static_cast<size_t>(n) * dtype_size(gx.dtype), s);
    if (err != cudaSuccess || windows == 0) return err;
    if (gx.dtype == DType::kFloat32) {
      pool_backward_disjoint_kernel<float><<<grid_for(windows), kThreads, 0, s>>>(
          gy.as<float>(), ws, gx.as<float>(), planes, gx.shape[2], gx.shape[3], gy.shape[2],
          gy.shape[3], p);
    } else {
      pool_backward_disjoint_kernel<double><<<grid_for(windows), kThreads, 0, s>>>(
          gy.as<double>(), ws, gx.as<double>(), planes, gx.shape[2], gx.shape[3], gy.shape[2],
          gy.shape[3], p);
    }
    return cudaGetLastError();
  }
  if (gx.dtype == DType::kFloat32) {
    pool_backward_kernel<float><<<grid_for(n), kThreads, 0, s>>>(gy.as<float>(), ws, gx.as<float>(),
                                                                 planes, gx.shape[2], gx.shape[3],
                                                                 gy.shape[2], gy.shape[3], p);
  } else {
    pool_backward_kernel<double>
        <<<grid_for(n), kThreads, 0, s>>>(gy.as<double>(), ws, gx.as<double>(), planes, gx.shape[2],
                                          gx.shape[3], gy.shape[2], gy.shape[3], p);
  }
  return cudaGetLastError();
}

}  // namespace dp::cuda_plugin::kernels
