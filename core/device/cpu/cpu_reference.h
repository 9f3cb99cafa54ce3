// Plain-loop kernels, templated on the element type. They are the float64 reference the
// tests compare the fast path against, and the float32 implementation of what oneDNN
// does not have (argmax, embedding, the losses' gather, optimizers, dropout masks).
// Clarity first: these are not the fast path for float32 work that oneDNN covers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "device/backend.h"
#include "device/element_math.h"

namespace dp::ref {

template <class T>
void binary(BinaryOp op, const KView& a, const KView& b, const KView& out) {
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  T* po = out.as<T>();
  const int64_t n = out.numel();
  if (a.numel() == n && b.numel() == n) {
    for (int64_t i = 0; i < n; ++i) po[i] = elem::apply_binary(op, pa[i], pb[i]);
    return;
  }
  if (out.ndim == 0) {
    po[0] = elem::apply_binary(op, pa[0], pb[0]);
    return;
  }
  int64_t sa[kMaxDims], sb[kMaxDims], idx[kMaxDims] = {};
  elem::broadcast_strides(a, out, sa);
  elem::broadcast_strides(b, out, sb);
  const int last = out.ndim - 1;
  const int64_t inner = out.shape[last];
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < n; o += inner) {
    for (int64_t j = 0; j < inner; ++j) {
      po[o + j] = elem::apply_binary(op, pa[oa + j * sa[last]], pb[ob + j * sb[last]]);
    }
    // advance the multi-index over all but the last dimension
    for (int d = last - 1; d >= 0; --d) {
      oa += sa[d];
      ob += sb[d];
      if (++idx[d] < out.shape[d]) break;
      oa -= sa[d] * out.shape[d];
      ob -= sb[d] * out.shape[d];
      idx[d] = 0;
    }
  }
}

template <class T>
void affine(const KView& x, const KView& out, double alpha, double beta) {
  const T* px = x.as<T>();
  T* po = out.as<T>();
  const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
  for (int64_t i = 0, n = out.numel(); i < n; ++i) po[i] = a * px[i] + b;
}

template <class T>
void unary(UnaryOp op, const KView& x, const KView& out) {
  const T* px = x.as<T>();
  T* po = out.as<T>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) po[i] = elem::unary_value(op, px[i]);
}

// `saved` is what elem::unary_derivative takes: x or y = f(x) depending on the op.
template <class T>
void unary_backward(UnaryOp op, const KView& gy, const KView& saved, const KView& gx) {
  const T* pg = gy.as<T>();
  const T* ps = saved.as<T>();
  T* po = gx.as<T>();
  for (int64_t i = 0, n = gx.numel(); i < n; ++i) po[i] = pg[i] * elem::unary_derivative(op, ps[i]);
}

// out has x's ndim with 1 in each reduced dimension.
template <class T>
void reduce_sum(const KView& x, const KView& out) {
  const T* px = x.as<T>();
  T* po = out.as<T>();
  const int64_t nout = out.numel();
  std::fill(po, po + nout, T(0));
  if (x.ndim == 0) {
    po[0] = px[0];
    return;
  }
  int64_t so[kMaxDims];
  elem::broadcast_strides(out, x, so);  // out broadcast to x's shape: stride 0 on reduced dims
  int64_t idx[kMaxDims] = {};
  int64_t oo = 0;
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    po[oo] += px[i];
    for (int d = x.ndim - 1; d >= 0; --d) {
      oo += so[d];
      if (++idx[d] < x.shape[d]) break;
      oo -= so[d] * x.shape[d];
      idx[d] = 0;
    }
  }
}

// Splits x into [outer, size(dim), inner].
template <class T>
void argmax(const KView& x, int dim, const KView& out) {
  int64_t outer, mid, inner;
  elem::split_at(x, dim, &outer, &mid, &inner);
  const T* px = x.as<T>();
  int64_t* po = out.as<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      int64_t best = 0;
      T bv = px[o * mid * inner + j];
      for (int64_t m = 1; m < mid; ++m) {
        const T v = px[(o * mid + m) * inner + j];
        if (v > bv || (std::isnan(v) && !std::isnan(bv))) {
          bv = v;
          best = m;
        }
      }
      po[o * inner + j] = best;
    }
  }
}

template <class T>
void matmul(const KView& a, const KView& b, const KView* bias, const KView& out,
            const MatmulParams& p) {
  const bool batched = out.ndim == 3;
  const int64_t B = batched ? out.shape[0] : 1;
  const int64_t M = out.shape[out.ndim - 2], N = out.shape[out.ndim - 1];
  const int64_t K = p.trans_a ? a.shape[a.ndim - 2] : a.shape[a.ndim - 1];
  const T* pbias = bias ? bias->as<T>() : nullptr;
  for (int64_t bi = 0; bi < B; ++bi) {
    const T* pa = a.as<T>() + (batched && a.ndim == 3 ? bi * M * K : 0);
    const T* pb = b.as<T>() + (batched && b.ndim == 3 ? bi * K * N : 0);
    T* po = out.as<T>() + bi * M * N;
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        T acc = T(0);
        for (int64_t k = 0; k < K; ++k) {
          const T av = p.trans_a ? pa[k * M + i] : pa[i * K + k];
          const T bv = p.trans_b ? pb[j * K + k] : pb[k * N + j];
          acc += av * bv;
        }
        if (pbias) acc += pbias[j];
        if (p.accumulate) acc += po[i * N + j];
        if (p.relu && acc < T(0)) acc = T(0);
        po[i * N + j] = acc;
      }
    }
  }
}

template <class T>
void softmax(const KView& x, int dim, bool log, const KView& out) {
  int64_t outer, mid, inner;
  elem::split_at(x, dim, &outer, &mid, &inner);
  const T* px = x.as<T>();
  T* po = out.as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * mid * inner + j;
      T mx = -std::numeric_limits<T>::infinity();
      for (int64_t m = 0; m < mid; ++m) mx = std::max(mx, px[base + m * inner]);
      T sum = T(0);
      for (int64_t m = 0; m < mid; ++m) sum += std::exp(px[base + m * inner] - mx);
      // Once per row: the compiler cannot hoist a call that may set errno.
      const T log_sum = log ? std::log(sum) : T(0);
      for (int64_t m = 0; m < mid; ++m) {
        const T v = px[base + m * inner] - mx;
        po[base + m * inner] = log ? v - log_sum : std::exp(v) / sum;
      }
    }
  }
}

template <class T>
void softmax_backward(const KView& gy, const KView& y, int dim, bool log, const KView& gx) {
  int64_t outer, mid, inner;
  elem::split_at(y, dim, &outer, &mid, &inner);
  const T* pg = gy.as<T>();
  const T* py = y.as<T>();
  T* po = gx.as<T>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t base = o * mid * inner + j;
      T dot = T(0);
      for (int64_t m = 0; m < mid; ++m) {
        const int64_t k = base + m * inner;
        dot += elem::softmax_dot_term(pg[k], py[k], log);
      }
      for (int64_t m = 0; m < mid; ++m) {
        const int64_t k = base + m * inner;
        po[k] = elem::softmax_grad(pg[k], py[k], dot, log);
      }
    }
  }
}

struct ConvDims {
  int64_t N, C, H, W, O, KH, KW, OH, OW;
};

inline ConvDims conv_dims(const KView& x, const KView& w, const KView& y) {
  return {x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0],
          w.shape[2], w.shape[3], y.shape[2], y.shape[3]};
}

template <class T>
void conv2d(const KView& x, const KView& w, const KView* bias, const KView& y,
            const Conv2dParams& p) {
  const ConvDims d = conv_dims(x, w, y);
  const T* px = x.as<T>();
  const T* pw = w.as<T>();
  T* py = y.as<T>();
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t o = 0; o < d.O; ++o)
      for (int64_t oh = 0; oh < d.OH; ++oh)
        for (int64_t ow = 0; ow < d.OW; ++ow) {
          T acc = bias ? bias->as<T>()[o] : T(0);
          for (int64_t c = 0; c < d.C; ++c)
            for (int64_t kh = 0; kh < d.KH; ++kh) {
              const int64_t ih = oh * p.stride_h - p.pad_h + kh;
              if (ih < 0 || ih >= d.H) continue;
              for (int64_t kw = 0; kw < d.KW; ++kw) {
                const int64_t iw = ow * p.stride_w - p.pad_w + kw;
                if (iw < 0 || iw >= d.W) continue;
                acc += px[((n * d.C + c) * d.H + ih) * d.W + iw] *
                       pw[((o * d.C + c) * d.KH + kh) * d.KW + kw];
              }
            }
          py[((n * d.O + o) * d.OH + oh) * d.OW + ow] = p.relu && acc < T(0) ? T(0) : acc;
        }
}

template <class T>
void conv2d_backward_data(const KView& gy, const KView& w, const KView& gx, const Conv2dParams& p) {
  const ConvDims d = conv_dims(gx, w, gy);
  const T* pg = gy.as<T>();
  const T* pw = w.as<T>();
  T* po = gx.as<T>();
  std::fill(po, po + gx.numel(), T(0));
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t o = 0; o < d.O; ++o)
      for (int64_t oh = 0; oh < d.OH; ++oh)
        for (int64_t ow = 0; ow < d.OW; ++ow) {
          const T g = pg[((n * d.O + o) * d.OH + oh) * d.OW + ow];
          for (int64_t c = 0; c < d.C; ++c)
            for (int64_t kh = 0; kh < d.KH; ++kh) {
              const int64_t ih = oh * p.stride_h - p.pad_h + kh;
              if (ih < 0 || ih >= d.H) continue;
              for (int64_t kw = 0; kw < d.KW; ++kw) {
                const int64_t iw = ow * p.stride_w - p.pad_w + kw;
                if (iw < 0 || iw >= d.W) continue;
                po[((n * d.C + c) * d.H + ih) * d.W + iw] +=
                    g * pw[((o * d.C + c) * d.KH + kh) * d.KW + kw];
              }
            }
        }
}

template <class T>
void conv2d_backward_weights(const KView& x, const KView& gy, const KView& gw, const KView* gbias,
                             const Conv2dParams& p) {
  const ConvDims d = conv_dims(x, gw, gy);
  const T* px = x.as<T>();
  const T* pg = gy.as<T>();
  T* pw = gw.as<T>();
  std::fill(pw, pw + gw.numel(), T(0));
  if (gbias) std::fill(gbias->as<T>(), gbias->as<T>() + d.O, T(0));
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t o = 0; o < d.O; ++o)
      for (int64_t oh = 0; oh < d.OH; ++oh)
        for (int64_t ow = 0; ow < d.OW; ++ow) {
          const T g = pg[((n * d.O + o) * d.OH + oh) * d.OW + ow];
          if (gbias) gbias->as<T>()[o] += g;
          for (int64_t c = 0; c < d.C; ++c)
            for (int64_t kh = 0; kh < d.KH; ++kh) {
              const int64_t ih = oh * p.stride_h - p.pad_h + kh;
              if (ih < 0 || ih >= d.H) continue;
              for (int64_t kw = 0; kw < d.KW; ++kw) {
                const int64_t iw = ow * p.stride_w - p.pad_w + kw;
                if (iw < 0 || iw >= d.W) continue;
                pw[((o * d.C + c) * d.KH + kh) * d.KW + kw] +=
                    g * px[((n * d.C + c) * d.H + ih) * d.W + iw];
              }
            }
        }
}

// Max pooling records, per output element, the flat input index of its maximum (int64)
// in `workspace`; padding never wins (it counts as -infinity).
template <class T>
void pool2d(const KView& x, const KView& y, int64_t* workspace, const Pool2dParams& p) {
  const int64_t NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = y.shape[2], OW = y.shape[3];
  const T* px = x.as<T>();
  T* py = y.as<T>();
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t best = -1;
        const int64_t o = (nc * OH + oh) * OW + ow;
        py[o] = elem::pool_window(px + nc * H * W, H, W, oh, ow, p, &best);
        if (workspace) workspace[o] = best < 0 ? -1 : nc * H * W + best;
      }
}

template <class T>
void pool2d_backward(const KView& gy, const KView& gx, const int64_t* workspace,
                     const Pool2dParams& p) {
  const int64_t NC = gx.shape[0] * gx.shape[1], H = gx.shape[2], W = gx.shape[3];
  const int64_t OH = gy.shape[2], OW = gy.shape[3];
  const T* pg = gy.as<T>();
  T* po = gx.as<T>();
  std::fill(po, po + gx.numel(), T(0));
  const T divisor = static_cast<T>(int64_t{p.kernel_h} * p.kernel_w);
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t o = (nc * OH + oh) * OW + ow;
        if (p.kind == PoolKind::kMax) {
          if (workspace[o] >= 0) po[workspace[o]] += pg[o];
          continue;
        }
        elem::for_each_in_window(H, W, oh, ow, p, [&](int64_t ih, int64_t iw) {
          po[(nc * H + ih) * W + iw] += pg[o] / divisor;
        });
      }
}

// Batch norm over [N, C, S] (S = spatial size, 1 for 2-D input).
inline void bn_dims(const KView& x, int64_t* N, int64_t* C, int64_t* S) {
  *N = x.shape[0];
  *C = x.shape[1];
  *S = 1;
  for (int i = 2; i < x.ndim; ++i) *S *= x.shape[i];
}

template <class T>
void batch_norm(const KView& x, const KView& gamma, const KView& beta, const KView& mean,
                const KView& var, const KView& y, double eps, bool training) {
  int64_t N, C, S;
  bn_dims(x, &N, &C, &S);
  const T* px = x.as<T>();
  T* py = y.as<T>();
  T* pm = mean.as<T>();
  T* pv = var.as<T>();
  const T count = static_cast<T>(N * S);
  for (int64_t c = 0; c < C; ++c) {
    if (training) {
      T sum = T(0);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) sum += px[(n * C + c) * S + s];
      const T m = sum / count;
      T sq = T(0);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t s = 0; s < S; ++s) {
          const T d = px[(n * C + c) * S + s] - m;
          sq += d * d;
        }
      pm[c] = m;
      pv[c] = sq / count;
    }
    const T inv = T(1) / std::sqrt(pv[c] + static_cast<T>(eps));
    const T g = gamma.as<T>()[c], b = beta.as<T>()[c];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t k = (n * C + c) * S + s;
        py[k] = (px[k] - pm[c]) * inv * g + b;
      }
  }
}

template <class T>
void batch_norm_backward(const KView& gy, const KView& x, const KView& gamma, const KView& mean,
                         const KView& var, const KView& gx, const KView& ggamma, const KView& gbeta,
                         double eps) {
  int64_t N, C, S;
  bn_dims(x, &N, &C, &S);
  const T* pg = gy.as<T>();
  const T* px = x.as<T>();
  T* po = gx.as<T>();
  const T count = static_cast<T>(N * S);
  for (int64_t c = 0; c < C; ++c) {
    const T m = mean.as<T>()[c];
    const T inv = T(1) / std::sqrt(var.as<T>()[c] + static_cast<T>(eps));
    T sum_g = T(0), sum_gx = T(0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t k = (n * C + c) * S + s;
        sum_g += pg[k];
        sum_gx += pg[k] * (px[k] - m) * inv;
      }
    ggamma.as<T>()[c] = sum_gx;
    gbeta.as<T>()[c] = sum_g;
    const T g = gamma.as<T>()[c];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t k = (n * C + c) * S + s;
        const T xhat = (px[k] - m) * inv;
        po[k] = g * inv / count * (count * pg[k] - sum_g - xhat * sum_gx);
      }
  }
}

template <class T>
void dropout_mask(const KView& mask, double p, uint64_t seed) {
  T* pm = mask.as<T>();
  const T keep = static_cast<T>(1.0 / (1.0 - p));
  for (int64_t i = 0, n = mask.numel(); i < n; ++i) {
    pm[i] = elem::uniform01(seed, static_cast<uint64_t>(i)) < p ? T(0) : keep;
  }
}

template <class T>
void sgd_step(const KView& param, const KView& grad, const KView* buf, const SgdParams& p) {
  T* w = param.as<T>();
  const T* g = grad.as<T>();
  T* b = buf ? buf->as<T>() : nullptr;
  const elem::SgdScalars<T> s = elem::sgd_scalars<T>(p);
  for (int64_t i = 0, n = param.numel(); i < n; ++i)
    elem::sgd_update(w[i], g[i], b ? b + i : nullptr, s);
}

template <class T>
void adam_step(const KView& param, const KView& grad, const KView& m, const KView& v,
               const AdamParams& p) {
  T* w = param.as<T>();
  const T* g = grad.as<T>();
  T* pm = m.as<T>();
  T* pv = v.as<T>();
  const elem::AdamScalars<T> a = elem::adam_scalars<T>(p);
  for (int64_t i = 0, n = param.numel(); i < n; ++i) elem::adam_update(w[i], g[i], pm[i], pv[i], a);
}

}  // namespace dp::ref
