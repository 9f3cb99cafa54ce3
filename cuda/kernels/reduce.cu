// Kernels that reduce: sums over any set of dimensions, argmax, softmax and its backward,
// the negative log-likelihood and batch normalisation's per-channel statistics. Sums of
// floats (bfloat16 too) accumulate in double, so they are at least as accurate as the CPU
// backend's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/launch.cuh"

namespace dp::cuda_plugin::kernels {

namespace {

__host__ __device__ inline int64_t imin(int64_t a, int64_t b) {
  return a < b ? a : b;
}
inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Device memory from the pool for one launch sequence, freed in stream order.
class Temp {
 public:
  explicit Temp(cudaStream_t s) : s_(s) {}
  ~Temp() { release(); }
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
  cudaError_t reset(cudaMemPool_t pool, size_t bytes) {
    release();
    return cudaMallocFromPoolAsync(&p_, bytes > 0 ? bytes : 1, pool, s_);
  }
  void* get() const { return p_; }

 private:
  void release() {
    if (p_) cudaFreeAsync(p_, s_);
    p_ = nullptr;
  }
  cudaStream_t s_;
  void* p_ = nullptr;
};

template <class T>
__device__ inline T warp_all_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <class T>
__device__ inline T warp_all_max(T v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const T o = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v < o ? o : v;  // std::max, as the CPU reference
  }
  return v;
}

// Loop over warps in a grid of warps; `w` is uniform within a warp.
#define DP_FOR_EACH_WARP(w, n)                                                                  \
  for (int64_t w = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32; w < (n); \
       w += static_cast<int64_t>(gridDim.x) * blockDim.x / 32)

inline unsigned grid_for_warps(int64_t warps) {
  return grid_for(warps * 32);
}

// ---- sums ----

// y[r * splits + s] = sum of segment s (seg elements) of row r of x [rows, len].
template <class In, class Out, class A>
__global__ void sum_rows_kernel(const In* x, Out* y, int64_t rows, int64_t len, int64_t splits,
                                int64_t seg) {
  const int lane = threadIdx.x % 32;
  DP_FOR_EACH_WARP(w, rows * splits) {
    const int64_t r = w / splits, part = w % splits;
    const int64_t begin = part * seg, end = imin(len, begin + seg);
    const In* row = x + r * len;
    A acc = A(0);
    for (int64_t k = begin + lane; k < end; k += 32) acc += load_as<A>(row[k]);
    acc = warp_sum(acc);
    if (lane == 0) y[w] = static_cast<Out>(acc);
  }
}

// y [outer, splits, inner] = sums of x [outer, mid, inner] over segments of mid.
template <class In, class Out, class A>
__global__ void sum_cols_kernel(const In* x, Out* y, int64_t outer, int64_t mid, int64_t inner,
                                int64_t splits, int64_t seg) {
  DP_FOR_EACH(t, outer * splits * inner) {
    const int64_t i = t % inner, rest = t / inner;
    const int64_t part = rest % splits, o = rest / splits;
    const int64_t begin = part * seg, end = imin(mid, begin + seg);
    const In* base = x + o * mid * inner + i;
    A acc = A(0);
    for (int64_t m = begin; m < end; ++m) acc += load_as<A>(base[m * inner]);
    y[t] = static_cast<Out>(acc);
  }
}

// y [outer, inner] = x [outer, mid, inner] summed over mid. Short outputs over long sums
// split the sum into segments (partials in A) so that the whole GPU works on it.
template <class In, class Out, class A>
cudaError_t sum_middle(cudaStream_t s, cudaMemPool_t pool, const In* x, Out* y, int64_t outer,
                       int64_t mid, int64_t inner) {
  Temp partial(s);
  if (inner == 1) {
    int64_t splits = 1;
    if (outer < 2048 && mid > 4096) splits = imin(ceil_div(mid, 2048), ceil_div(8192, outer));
    if (splits <= 1) {
      sum_rows_kernel<In, Out, A>
          <<<grid_for_warps(outer), kThreads, 0, s>>>(x, y, outer, mid, 1, mid);
      return cudaGetLastError();
    }
    const int64_t seg = ceil_div(mid, splits);
    splits = ceil_div(mid, seg);
    if (cudaError_t e = partial.reset(pool, outer * splits * sizeof(A)); e != cudaSuccess) return e;
    A* p = static_cast<A*>(partial.get());
    sum_rows_kernel<In, A, A>
        <<<grid_for_warps(outer * splits), kThreads, 0, s>>>(x, p, outer, mid, splits, seg);
    sum_rows_kernel<A, Out, A>
        <<<grid_for_warps(outer), kThreads, 0, s>>>(p, y, outer, splits, 1, splits);
    return cudaGetLastError();
  }
  const int64_t cols = outer * inner;
  int64_t splits = 1;
  if (cols < 65536 && mid > 64) splits = imin(ceil_div(mid, 32), ceil_div(262144, cols));
  if (splits <= 1) {
    sum_cols_kernel<In, Out, A>
        <<<grid_for(cols), kThreads, 0, s>>>(x, y, outer, mid, inner, 1, mid);
    return cudaGetLastError();
  }
  const int64_t seg = ceil_div(mid, splits);
  splits = ceil_div(mid, seg);
  if (cudaError_t e = partial.reset(pool, cols * splits * sizeof(A)); e != cudaSuccess) return e;
  A* p = static_cast<A*>(partial.get());
  sum_cols_kernel<In, A, A>
      <<<grid_for(cols * splits), kThreads, 0, s>>>(x, p, outer, mid, inner, splits, seg);
  sum_cols_kernel<A, Out, A>
      <<<grid_for(cols), kThreads, 0, s>>>(p, y, outer, splits, inner, 1, splits);
  return cudaGetLastError();
}

// Sums x down to out's shape (size 1 in every reduced dimension). The dimensions are
// merged into runs of kept and reduced ones; each pass sums away the innermost reduced
// run, so [2, 3, 4] -> [1, 3, 1] is [6, 4] -> [6] then [2, 3] -> [3].
template <class T>
cudaError_t reduce_typed(cudaStream_t s, cudaMemPool_t pool, const KView& x, const KView& out) {
  using A = typename Accumulator<T>::type;
  struct Run {
    int64_t size;
    bool reduced;
  };
  std::vector<Run> runs;
  for (int i = 0; i < x.ndim; ++i) {
    if (x.shape[i] == 1) continue;
    const bool reduced = out.shape[i] == 1;
    if (!runs.empty() && runs.back().reduced == reduced) {
      runs.back().size *= x.shape[i];
    } else {
      runs.push_back({x.shape[i], reduced});
    }
  }
  int remaining = 0;
  for (const Run& r : runs) remaining += r.reduced ? 1 : 0;
  if (remaining == 0) {
    return cudaMemcpyAsync(out.data, x.data, x.numel() * sizeof(T), cudaMemcpyDeviceToDevice, s);
  }
  Temp buffers[2] = {Temp(s), Temp(s)};
  const void* cur = x.data;
  bool cur_is_t = true;
  for (int pass = 0; remaining > 0; ++pass, --remaining) {
    size_t j = runs.size();
    while (!runs[--j].reduced) {
    }
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < j; ++i) outer *= runs[i].size;
    for (size_t i = j + 1; i < runs.size(); ++i) inner *= runs[i].size;
    const int64_t mid = runs[j].size;
    const bool last = remaining == 1;
    void* dst = out.data;
    if (!last) {
      Temp& t = buffers[pass % 2];
      if (cudaError_t e = t.reset(pool, outer * inner * sizeof(A)); e != cudaSuccess) return e;
      dst = t.get();
    }
    cudaError_t e;
    if (cur_is_t && last) {
      e = sum_middle<T, T, A>(s, pool, static_cast<const T*>(cur), static_cast<T*>(dst), outer, mid,
                              inner);
    } else if (cur_is_t) {
      e = sum_middle<T, A, A>(s, pool, static_cast<const T*>(cur), static_cast<A*>(dst), outer, mid,
                              inner);
    } else if (last) {
      e = sum_middle<A, T, A>(s, pool, static_cast<const A*>(cur), static_cast<T*>(dst), outer, mid,
                              inner);
    } else {
      e = sum_middle<A, A, A>(s, pool, static_cast<const A*>(cur), static_cast<A*>(dst), outer, mid,
                              inner);
    }
    if (e != cudaSuccess) return e;
    cur = dst;
    cur_is_t = false;
    // Drop the summed run; its neighbours (both kept) become one run.
    runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(j));
    if (j > 0 && j < runs.size()) {
      runs[j - 1].size *= runs[j].size;
      runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(j));
    }
  }
  return cudaSuccess;
}

// ---- argmax ----

template <class T>
__global__ void argmax_kernel(const T* x, int64_t* out, int64_t outer, int64_t mid, int64_t inner) {
  DP_FOR_EACH(t, outer * inner) {
    const int64_t o = t / inner, i = t % inner;
    const T* base = x + o * mid * inner + i;
    int64_t best = 0;
    T bv = base[0];
    for (int64_t m = 1; m < mid; ++m) {
      const T v = base[m * inner];
      if (v > bv || (isnan(v) && !isnan(bv))) {
        bv = v;
        best = m;
      }
    }
    out[t] = best;
  }
}

// ---- softmax ----

// One warp per row of a softmax over the last dimension.
template <class T>
__global__ void softmax_rows_kernel(const T* x, T* y, int64_t rows, int64_t len, bool log) {
  const int lane = threadIdx.x % 32;
  DP_FOR_EACH_WARP(r, rows) {
    const T* xr = x + r * len;
    T* yr = y + r * len;
    T mx = -std::numeric_limits<T>::infinity();
    for (int64_t k = lane; k < len; k += 32) mx = mx < xr[k] ? xr[k] : mx;
    mx = warp_all_max(mx);
    T sum = T(0);
    for (int64_t k = lane; k < len; k += 32) sum += elem::exp(xr[k] - mx);
    sum = warp_all_sum(sum);
    const T log_sum = elem::log(sum);
    for (int64_t k = lane; k < len; k += 32) {
      const T v = xr[k] - mx;
      yr[k] = log ? v - log_sum : elem::exp(v) / sum;
    }
  }
}

// One thread per softmax along a dimension that is not the last.
template <class T>
__global__ void softmax_cols_kernel(const T* x, T* y, int64_t outer, int64_t mid, int64_t inner,
                                    bool log) {
  DP_FOR_EACH(t, outer * inner) {
    const int64_t base = (t / inner) * mid * inner + t % inner;
    T mx = -std::numeric_limits<T>::infinity();
    for (int64_t m = 0; m < mid; ++m) mx = mx < x[base + m * inner] ? x[base + m * inner] : mx;
    T sum = T(0);
    for (int64_t m = 0; m < mid; ++m) sum += elem::exp(x[base + m * inner] - mx);
    const T log_sum = elem::log(sum);
    for (int64_t m = 0; m < mid; ++m) {
      const T v = x[base + m * inner] - mx;
      y[base + m * inner] = log ? v - log_sum : elem::exp(v) / sum;
    }
  }
}

template <class T>
__global__ void softmax_backward_rows_kernel(const T* gy, const T* y, T* gx, int64_t rows,
                                             int64_t len, bool log) {
  const int lane = threadIdx.x % 32;
  DP_FOR_EACH_WARP(r, rows) {
    const int64_t base = r * len;
    T dot = T(0);
    for (int64_t k = lane; k < len; k += 32)
      dot += elem::softmax_dot_term(gy[base + k], y[base + k], log);
    dot = warp_all_sum(dot);
    for (int64_t k = lane; k < len; k += 32) {
      const int64_t i = base + k;
      gx[i] = elem::softmax_grad(gy[i], y[i], dot, log);
    }
  }
}

template <class T>
__global__ void softmax_backward_cols_kernel(const T* gy, const T* y, T* gx, int64_t outer,
                                             int64_t mid, int64_t inner, bool log) {
  DP_FOR_EACH(t, outer * inner) {
    const int64_t base = (t / inner) * mid * inner + t % inner;
    T dot = T(0);
    for (int64_t m = 0; m < mid; ++m) {
      const int64_t i = base + m * inner;
      dot += elem::softmax_dot_term(gy[i], y[i], log);
    }
    for (int64_t m = 0; m < mid; ++m) {
      const int64_t i = base + m * inner;
      gx[i] = elem::softmax_grad(gy[i], y[i], dot, log);
    }
  }
}

template <class T>
cudaError_t launch_softmax(cudaStream_t s, const KView& x, int dim, bool log, const KView& out) {
  int64_t outer, mid, inner;
  elem::split_at(x, dim, &outer, &mid, &inner);
  if (inner == 1) {
    softmax_rows_kernel<T>
        <<<grid_for_warps(outer), kThreads, 0, s>>>(x.as<T>(), out.as<T>(), outer, mid, log);
  } else {
    softmax_cols_kernel<T><<<grid_for(outer * inner), kThreads, 0, s>>>(x.as<T>(), out.as<T>(),
                                                                        outer, mid, inner, log);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_softmax_backward(cudaStream_t s, const KView& gy, const KView& y, int dim,
                                    bool log, const KView& gx) {
  int64_t outer, mid, inner;
  elem::split_at(y, dim, &outer, &mid, &inner);
  if (inner == 1) {
    softmax_backward_rows_kernel<T><<<grid_for_warps(outer), kThreads, 0, s>>>(
        gy.as<T>(), y.as<T>(), gx.as<T>(), outer, mid, log);
  } else {
    softmax_backward_cols_kernel<T><<<grid_for(outer * inner), kThreads, 0, s>>>(
        gy.as<T>(), y.as<T>(), gx.as<T>(), outer, mid, inner, log);
  }
  return cudaGetLastError();
}

// ---- negative log-likelihood ----

// One block: out = -mean(logp[i, target[i]]); NaN for an empty batch (as the CPU).
template <class T>
__global__ void nll_kernel(const T* logp, const int64_t* target, T* out, int64_t N, int64_t C,
                           DataErrorSink error) {
  double acc = 0;
  for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
    const int64_t k = target[i];
    if (k < 0 || k >= C) {
      record_data_error(error, kNllTarget, i, k, C);
    } else {
      acc += static_cast<double>(logp[i * C + k]);
    }
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) {
    out[0] =
        N > 0 ? static_cast<T>(-acc / static_cast<double>(N)) : std::numeric_limits<T>::quiet_NaN();
  }
}

template <class T>
__global__ void nll_backward_kernel(const T* grad_out, const int64_t* target, T* g, int64_t N,
                                    int64_t C) {
  DP_FOR_EACH(t, N * C) {
    const T v = -grad_out[0] / static_cast<T>(N);
    g[t] = target[t / C] == t % C ? v : T(0);
  }
}

// ---- batch normalisation over x [N, C, S] ----

enum class ChannelSum : int { kValues, kSquaredDeviations, kGradients };

// gridDim.y's limit: more channels than this loop over the grid's rows.
constexpr int64_t kMaxGridY = 65535;

// Block (g, y) sums segment g of channels y, y + gridDim.y, ...; partial [C, G, 2] in
// double. The channel loop is uniform across the block, so block_sum's barriers hold.
template <class T>
__global__ void channel_sums_kernel(ChannelSum what, const T* x, const T* gy, const T* mean,
                                    const T* var, T eps, int64_t N, int64_t C, int64_t S,
                                    int64_t seg, double* partial) {
  const int64_t g = blockIdx.x, G = gridDim.x;
  const int64_t count = N * S;
  const int64_t begin = g * seg, end = imin(count, begin + seg);
  for (int64_t c = blockIdx.y; c < C; c += gridDim.y) {
    const T m = what == ChannelSum::kValues ? T(0) : mean[c];
    const T inv = what == ChannelSum::kGradients ? T(1) / elem::sqrt(var[c] + eps) : T(1);
    double a0 = 0, a1 = 0;
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
      const int64_t n = j / S;
      const int64_t k = (n * C + c) * S + (j - n * S);
      if (what == ChannelSum::kValues) {
        a0 += static_cast<double>(x[k]);
      } else if (what == ChannelSum::kSquaredDeviations) {
        const double d = static_cast<double>(x[k] - m);
        a0 += d * d;
      } else {
        a0 += static_cast<double>(gy[k]);
        a1 += static_cast<double>(gy[k]) * static_cast<double>((x[k] - m) * inv);
      }
    }
    a0 = block_sum(a0);
    a1 = block_sum(a1);
    if (threadIdx.x == 0) {
      partial[(c * G + g) * 2] = a0;
      partial[(c * G + g) * 2 + 1] = a1;
    }
  }
}

// kValues: out0 = mean; kSquaredDeviations: out0 = biased variance; kGradients: out0 =
// sum(gy * xhat) (the gamma gradient), out1 = sum(gy) (the beta gradient).
template <class T>
__global__ void channel_finish_kernel(ChannelSum what, const double* partial, int64_t G, int64_t C,
                                      double count, T* out0, T* out1) {
  DP_FOR_EACH(c, C) {
    double s0 = 0, s1 = 0;
    for (int64_t g = 0; g < G; ++g) {
      s0 += partial[(c * G + g) * 2];
      s1 += partial[(c * G + g) * 2 + 1];
    }
    if (what == ChannelSum::kGradients) {
      out0[c] = static_cast<T>(s1);
      out1[c] = static_cast<T>(s0);
    } else {
      out0[c] = static_cast<T>(s0 / count);
    }
  }
}

template <class T>
__global__ void bn_normalize_kernel(const T* x, T* y, const T* mean, const T* var, const T* gamma,
                                    const T* beta, T eps, int64_t n, int64_t C, int64_t S) {
  DP_FOR_EACH(k, n) {
    const int64_t c = (k / S) % C;
    const T inv = T(1) / elem::sqrt(var[c] + eps);
    y[k] = (x[k] - mean[c]) * inv * gamma[c] + beta[c];
  }
}

template <class T>
__global__ void bn_backward_input_kernel(const T* gy, const T* x, const T* mean, const T* var,
                                         const T* gamma, const T* sum_gxhat, const T* sum_g, T* gx,
                                         T eps, int64_t n, int64_t C, int64_t S, T count) {
  DP_FOR_EACH(k, n) {
    const int64_t c = (k / S) % C;
    const T inv = T(1) / elem::sqrt(var[c] + eps);
    const T xhat = (x[k] - mean[c]) * inv;
    gx[k] = gamma[c] * inv / count * (count * gy[k] - sum_g[c] - xhat * sum_gxhat[c]);
  }
}

struct BnDims {
  int64_t N, C, S;
};

BnDims bn_dims(const KView& x) {
  BnDims d{x.shape[0], x.shape[1], 1};
  for (int i = 2; i < x.ndim; ++i) d.S *= x.shape[i];
  return d;
}

// One channel statistic: partial sums over (G, C) blocks, then the per-channel finish.
template <class T>
cudaError_t channel_statistic(cudaStream_t s, cudaMemPool_t pool, ChannelSum what, const BnDims& d,
                              const T* x, const T* gy, const T* mean, const T* var, T eps, T* out0,
                              T* out1) {
  const int64_t count = d.N * d.S;
  const int64_t G = std::max<int64_t>(1, std::min<int64_t>(1024, ceil_div(count, 8192)));
  const int64_t seg = ceil_div(count, G);
  Temp partial(s);
  if (cudaError_t e = partial.reset(pool, d.C * G * 2 * sizeof(double)); e != cudaSuccess) return e;
  double* p = static_cast<double*>(partial.get());
  const int64_t rows = std::max<int64_t>(1, std::min(d.C, kMaxGridY));
  channel_sums_kernel<T>
      <<<dim3(static_cast<unsigned>(G), static_cast<unsigned>(rows)), kThreads, 0, s>>>(
          what, x, gy, mean, var, eps, d.N, d.C, d.S, seg, p);
  channel_finish_kernel<T>
      <<<grid_for(d.C), kThreads, 0, s>>>(what, p, G, d.C, static_cast<double>(count), out0, out1);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_batch_norm(cudaStream_t s, cudaMemPool_t pool, const KView& x,
                              const KView& gamma, const KView& beta, const KView& mean,
                              const KView& var, const KView& y, double eps, bool training) {
  const BnDims d = bn_dims(x);
  const T e = static_cast<T>(eps);
  if (training) {
    if (cudaError_t err = channel_statistic<T>(s, pool, ChannelSum::kValues, d, x.as<T>(), nullptr,
                                               nullptr, nullptr, e, mean.as<T>(), nullptr);
        err != cudaSuccess) {
      return err;
    }
    if (cudaError_t err =
            channel_statistic<T>(s, pool, ChannelSum::kSquaredDeviations, d, x.as<T>(), nullptr,
                                 mean.as<T>(), nullptr, e, var.as<T>(), nullptr);
        err != cudaSuccess) {
      return err;
    }
  }
  const int64_t n = x.numel();
  bn_normalize_kernel<T><<<grid_for(n), kThreads, 0, s>>>(
      x.as<T>(), y.as<T>(), mean.as<T>(), var.as<T>(), gamma.as<T>(), beta.as<T>(), e, n, d.C, d.S);
  return cudaGetLastError();
}

template <class T>
cudaError_t launch_batch_norm_backward(cudaStream_t s, cudaMemPool_t pool, const KView& gy,
                                       const KView& x, const KView& gamma, const KView& mean,
                                       const KView& var, const KView& gx, const KView& ggamma,
                                       const KView& gbeta, double eps) {
  const BnDims d = bn_dims(x);
  const T e = static_cast<T>(eps);
  if (cudaError_t err =
          channel_statistic<T>(s, pool, ChannelSum::kGradients, d, x.as<T>(), gy.as<T>(),
                               mean.as<T>(), var.as<T>(), e, ggamma.as<T>(), gbeta.as<T>());
      err != cudaSuccess) {
    return err;
  }
  const int64_t n = x.numel();
  bn_backward_input_kernel<T><<<grid_for(n), kThreads, 0, s>>>(
      gy.as<T>(), x.as<T>(), mean.as<T>(), var.as<T>(), gamma.as<T>(), ggamma.as<T>(),
      gbeta.as<T>(), gx.as<T>(), e, n, d.C, d.S, static_cast<T>(d.N * d.S));
  return cudaGetLastError();
}

}  // namespace

cudaError_t reduce_sum(cudaStream_t s, cudaMemPool_t pool, const KView& x, const KView& out) {
  if (out.numel() == 0) return cudaSuccess;
  if (x.numel() == 0) return fill(s, out, 0.0);
  switch (out.dtype) {
    case DType::kFloat32:
      return reduce_typed<float>(s, pool, x, out);
    case DType::kFloat64:
      return reduce_typed<double>(s, pool, x, out);
    case DType::kInt64:
      return reduce_typed<int64_t>(s, pool, x, out);
    case DType::kBFloat16:  // the conv bias gradient: accumulated in double, then narrowed
      // through float32 as PyTorch narrows a double (two roundings, relative error <= 2^-8 + 2^-24)
      return reduce_typed<BFloat16>(s, pool, x, out);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t argmax(cudaStream_t s, const KView& x, int dim, const KView& out) {
  int64_t outer, mid, inner;
  elem::split_at(x, dim, &outer, &mid, &inner);
  if (x.dtype == DType::kFloat32) {
    argmax_kernel<float><<<grid_for(outer * inner), kThreads, 0, s>>>(
        x.as<float>(), out.as<int64_t>(), outer, mid, inner);
  } else {
    argmax_kernel<double><<<grid_for(outer * inner), kThreads, 0, s>>>(
        x.as<double>(), out.as<int64_t>(), outer, mid, inner);
  }
  return cudaGetLastError();
}

cudaError_t softmax(cudaStream_t s, const KView& x, int dim, bool log, const KView& out) {
  if (out.dtype == DType::kFloat32) return launch_softmax<float>(s, x, dim, log, out);
  return launch_softmax<double>(s, x, dim, log, out);
}

cudaError_t softmax_backward(cudaStream_t s, const KView& gy, const KView& y, int dim, bool log,
                             const KView& gx) {
  if (gx.dtype == DType::kFloat32) return launch_softmax_backward<float>(s, gy, y, dim, log, gx);
  return launch_softmax_backward<double>(s, gy, y, dim, log, gx);
}

cudaError_t nll_loss(cudaStream_t s, const KView& logp, const KView& target, const KView& out,
                     DataErrorSink error) {
  const int64_t N = logp.shape[0], C = logp.shape[1];
  if (out.dtype == DType::kFloat32) {
    nll_kernel<float><<<1, kThreads, 0, s>>>(logp.as<float>(), target.as<int64_t>(),
                                             out.as<float>(), N, C, error);
  } else {
    nll_kernel<double><<<1, kThreads, 0, s>>>(logp.as<double>(), target.as<int64_t>(),
                                              out.as<double>(), N, C, error);
  }
  return cudaGetLastError();
}

cudaError_t nll_loss_backward(cudaStream_t s, const KView& grad_out, const KView& target,
                              const KView& grad_logp) {
  const int64_t N = grad_logp.shape[0], C = grad_logp.shape[1];
  if (grad_logp.dtype == DType::kFloat32) {
    nll_backward_kernel<float><<<grid_for(N * C), kThreads, 0, s>>>(
        grad_out.as<float>(), target.as<int64_t>(), grad_logp.as<float>(), N, C);
  } else {
    nll_backward_kernel<double><<<grid_for(N * C), kThreads, 0, s>>>(
        grad_out.as<double>(), target.as<int64_t>(), grad_logp.as<double>(), N, C);
  }
  return cudaGetLastError();
}

cudaError_t batch_norm(cudaStream_t s, cudaMemPool_t pool, const KView& x, const KView& gamma,
                       const KView& beta, const KView& mean, const KView& var, const KView& y,
                       double eps, bool training) {
  if (x.dtype == DType::kFloat32) {
    return launch_batch_norm<float>(s, pool, x, gamma, beta, mean, var, y, eps, training);
  }
  return launch_batch_norm<double>(s, pool, x, gamma, beta, mean, var, y, eps, training);
}

cudaError_t batch_norm_backward(cudaStream_t s, cudaMemPool_t pool, const KView& gy, const KView& x,
                                const KView& gamma, const KView& mean, const KView& var,
                                const KView& gx, const KView& ggamma, const KView& gbeta,
                                double eps) {
  if (x.dtype == DType::kFloat32) {
    return launch_batch_norm_backward<float>(s, pool, gy, x, gamma, mean, var, gx, ggamma, gbeta,
                                             eps);
  }
  return launch_batch_norm_backward<double>(s, pool, gy, x, gamma, mean, var, gx, ggamma, gbeta,
                                            eps);
}

}  // namespace dp::cuda_plugin::kernels
