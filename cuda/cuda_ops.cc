// The backend's kernel entry points (all but convolution): dtype checks, then a launch on
// the device's compute stream (kernels/), or a product on cuBLASLt (cuda_blas.cc).
#include <string>

#include "cuda_backend.h"
#include "cuda_errors.h"
#include "float32_copies.h"
#include "kernels/kernels.h"

namespace dp::cuda_plugin {

void CudaBackend::launched(const CudaDevice& d, cudaError_t err, const char* op) {
  check_cuda(host_, d.where, err, std::string(op) + " kernel");
}

void CudaBackend::need_float(const CudaDevice& d, const KView& v, const char* op) {
  if (v.dtype == DType::kFloat32 || v.dtype == DType::kFloat64) return;
  raise(host_, Code::kDtypeMismatch, d.where,
        std::string(op) + " needs float32 or float64, got " + dtype_name(v.dtype));
}

void CudaBackend::need_dtype(const CudaDevice& d, DType dtype,
                             std::initializer_list<NamedView> views, const char* op) {
  for (const auto& [name, v] : views) {
    if (v && v->dtype != dtype) {
      raise(host_, Code::kDtypeMismatch, d.where,
            std::string(op) + " in " + dtype_name(dtype) + ": " + name + " is " +
                dtype_name(v->dtype) + ", not " + dtype_name(dtype));
    }
  }
}

void CudaBackend::fill(int dev, const KView& out, double value) {
  CudaDevice& d = worker_device(dev);
  if (out.numel() == 0) return;
  launched(d, kernels::fill(d.compute, out, value), "fill");
}

void CudaBackend::cast(int dev, const KView& x, const KView& out) {
  CudaDevice& d = worker_device(dev);
  if (out.numel() == 0) return;
  launched(d, kernels::cast(d.compute, x, out), "cast");
}

void CudaBackend::binary(int dev, BinaryOp op, const KView& a, const KView& b, const KView& out) {
  CudaDevice& d = worker_device(dev);
  if (out.dtype == DType::kUInt8) {
    raise(host_, Code::kNotSupported, d.where, "binary op on uint8 is not supported");
  }
  if (out.numel() == 0) return;
  launched(d, kernels::binary(d.compute, op, a, b, out), "binary op");
}

void CudaBackend::affine(int dev, const KView& x, const KView& out, double alpha, double beta) {
  CudaDevice& d = worker_device(dev);
  need_float(d, out, "affine");
  if (out.numel() == 0) return;
  launched(d, kernels::affine(d.compute, x, out, alpha, beta), "affine");
}

void CudaBackend::unary(int dev, UnaryOp op, const KView& x, const KView& out) {
  CudaDevice& d = worker_device(dev);
  need_float(d, out, "unary op");
  if (out.numel() == 0) return;
  launched(d, kernels::unary(d.compute, op, x, out), "unary op");
}

void CudaBackend::unary_backward(int dev, UnaryOp op, const KView& gy, const KView& saved,
                                 const KView& gx) {
  CudaDevice& d = worker_device(dev);
  need_float(d, gx, "unary backward");
  if (gx.numel() == 0) return;
  launched(d, kernels::unary_backward(d.compute, op, gy, saved, gx), "unary backward");
}

void CudaBackend::reduce_sum(int dev, const KView& x, const KView& out) {
  CudaDevice& d = worker_device(dev);
  if (out.dtype == DType::kUInt8) {
    raise(host_, Code::kNotSupported, d.where, "sum of uint8 is not supported");
  }
  launched(d, kernels::reduce_sum(d.compute, d.pool, x, out), "sum");
}

void CudaBackend::argmax(int dev, const KView& x, int dim, const KView& out) {
  CudaDevice& d = worker_device(dev);
  need_float(d, x, "argmax");
  if (out.numel() == 0 || x.numel() == 0) return;
  launched(d, kernels::argmax(d.compute, x, dim, out), "argmax");
}

namespace {

// The row-major GEMM of a matmul call (backend.h's rules for 2-D and batched 3-D views).
GemmArgs matmul_gemm(const KView& a, const KView& b, const KView* bias, const KView& out,
                     const MatmulParams& p) {
  const bool batched = out.ndim == 3;
  const int64_t B = batched ? out.shape[0] : 1;
  const int64_t M = out.shape[out.ndim - 2], N = out.shape[out.ndim - 1];
  const int64_t K = p.trans_a ? a.shape[a.ndim - 2] : a.shape[a.ndim - 1];
  GemmArgs g;
  g.dtype = out.dtype;
  g.trans_a = p.trans_a;
  g.trans_b = p.trans_b;
  g.m = M;
  g.n = N;
  g.k = K;
  g.a = a.data;
  g.lda = p.trans_a ? M : K;
  g.stride_a = batched && a.ndim == 3 ? M * K : 0;
  g.b = b.data;
  g.ldb = p.trans_b ? K : N;
  g.stride_b = batched && b.ndim == 3 ? K * N : 0;
  g.c = out.data;
  g.ldc = N;
  g.stride_c = M * N;
  g.batch = B;
  g.bias = bias ? bias->data : nullptr;
  g.relu = p.relu;
  g.accumulate = p.accumulate;
  if (batched && a.ndim == 3 && b.ndim == 2 && !p.trans_a) {
    // [B, M, K] @ [K, N] is one product over B * M rows.
    g.m = B * M;
    g.batch = 1;
    g.stride_a = g.stride_c = 0;
  }
  return g;
}

}  // namespace

void CudaBackend::matmul(int dev, const KView& a, const KView& b, const KView* bias,
                         const KView& out, const MatmulParams& p) {
  CudaDevice& d = worker_device(dev);
  if (out.dtype == DType::kBFloat16) return matmul_bf16(d, dev, a, b, bias, out, p);
  need_float(d, out, "matmul");
  // One dtype for every view: bfloat16 a and b into a float32 out are
  // Bf16Kernel::kMatmulIntoFloat32, which the plugin does not claim (the core stages them).
  need_dtype(d, out.dtype, {{"a", &a}, {"b", &b}, {"bias", bias}}, "matmul");
  d.blas->gemm(matmul_gemm(a, b, bias, out, p));
}

// cuBLASLt in bfloat16 with float32 accumulation; a shape it has no algorithm for runs in
// float32 on widened copies, rounded once.
void CudaBackend::matmul_bf16(CudaDevice& d, int dev, const KView& a, const KView& b,
                              const KView* bias, const KView& out, const MatmulParams& p) {
  need_bf16(d, {{"a", &a}, {"b", &b}, {"bias", bias}, {"out", &out}}, "matmul");
  if (d.blas->try_gemm(matmul_gemm(a, b, bias, out, p))) return;
  Float32Copies f32(host_, d);
  const KView a32 = f32.in(a), b32 = f32.in(b);
  KView bias32;
  if (bias) bias32 = f32.in(*bias);
  const KView out32 = f32.out(out, p.accumulate);
  matmul(dev, a32, b32, bias ? &bias32 : nullptr, out32, p);
  f32.finish();
}

void CudaBackend::softmax(int dev, const KView& x, int dim, bool log, const KView& out) {
  CudaDevice& d = worker_device(dev);
  need_float(d, out, "softmax");
  if (out.numel() == 0) return;
  launched(d, kernels::softmax(d.compute, x, dim, log, out), "softmax");
}

void CudaBackend::softmax_backward(int dev, const KView& gy, const KView& y, int dim, bool log,
                                   const KView& gx) {
  CudaDevice& d = worker_device(dev);
  need_float(d, gx, "softmax backward");
  if (gx.numel() == 0) return;
  launched(d, kernels::softmax_backward(d.compute, gy, y, dim, log, gx), "softmax backward");
}

size_t CudaBackend::pool2d_workspace_bytes(int, const KView&, const KView& y,
                                           const Pool2dParams& p) {
  return kernels::pool2d_workspace_bytes(y, p);
}

void CudaBackend::pool2d(int dev, const KView& x, const KView& y, void* workspace,
                         const Pool2dParams& p) {
  CudaDevice& d = worker_device(dev);
  need_float(d, y, "pool2d");
  if (y.numel() == 0) return;
  launched(d, kernels::pool2d(d.compute, x, y, workspace, p), "pool2d");
}

void CudaBackend::pool2d_backward(int dev, const KView& gy, const KView&, const void* workspace,
                                  const KView& gx, const Pool2dParams& p) {
  CudaDevice& d = worker_device(dev);
  need_float(d, gx, "pool2d backward");
  if (gx.numel() == 0) return;
  if (p.kind == PoolKind::kMax && workspace == nullptr) {
    raise(host_, Code::kInternal, d.where, "max pool2d backward without the forward's workspace");
  }
  launched(d, kernels::pool2d_backward(d.compute, gy, workspace, gx, p), "pool2d backward");
}

void CudaBackend::batch_norm(int dev, const KView& x, const KView& gamma, const KView& beta,
                             const KView& mean, const KView& var, const KView& y, double eps,
                             bool training) {
  CudaDevice& d = worker_device(dev);
  need_float(d, y, "batch_norm");
  if (x.numel() == 0) return;
  launched(d, kernels::batch_norm(d.compute, d.pool, x, gamma, beta, mean, var, y, eps, training),
           "batch_norm");
}

void CudaBackend::batch_norm_backward(int dev, const KView& gy, const KView& x, const KView& gamma,
                                      const KView& mean, const KView& var, const KView& gx,
                                      const KView& ggamma, const KView& gbeta, double eps) {
  CudaDevice& d = worker_device(dev);
  need_float(d, gx, "batch_norm backward");
  if (x.numel() == 0) return;
  launched(d,
           kernels::batch_norm_backward(d.compute, d.pool, gy, x, gamma, mean, var, gx, ggamma,
                                        gbeta, eps),
           "batch_norm backward");
}

void CudaBackend::dropout_mask(int dev, const KView& mask, double p, uint64_t seed) {
  CudaDevice& d = worker_device(dev);
  need_float(d, mask, "dropout");
  if (mask.numel() == 0) return;
  launched(d, kernels::dropout_mask(d.compute, mask, p, seed), "dropout");
}

// Index errors are found by the kernel and reported at the next synchronisation (see
// check_data_errors): checking here would cost a device-to-host round trip per call.
void CudaBackend::embedding(int dev, const KView& idx, const KView& weight, const KView& out) {
  CudaDevice& d = worker_device(dev);
  if (weight.dtype != DType::kBFloat16) need_float(d, weight, "embedding");  // a row copy
  launched(d, kernels::embedding(d.compute, idx, weight, out, d.error_sink()), "embedding");
}

void CudaBackend::embedding_backward(int dev, const KView& idx, const KView& gy, const KView& gw) {
  CudaDevice& d = worker_device(dev);
  need_float(d, gw, "embedding backward");
  launched(d, kernels::embedding_backward(d.compute, idx, gy, gw), "embedding backward");
}

void CudaBackend::nll_loss(int dev, const KView& logp, const KView& target, const KView& out) {
  CudaDevice& d = worker_device(dev);
  need_float(d, out, "cross_entropy");
  launched(d, kernels::nll_loss(d.compute, logp, target, out, d.error_sink()), "nll_loss");
}

void CudaBackend::nll_loss_backward(int dev, const KView& grad_out, const KView& target,
                                    const KView& grad_logp) {
  CudaDevice& d = worker_device(dev);
  need_float(d, grad_logp, "cross_entropy backward");
  if (grad_logp.numel() == 0) return;
  launched(d, kernels::nll_loss_backward(d.compute, grad_out, target, grad_logp),
           "nll_loss backward");
}

void CudaBackend::sgd_step(int dev, const KView& param, const KView& grad, const KView* buf,
                           const SgdParams& p) {
  CudaDevice& d = worker_device(dev);
  need_float(d, param, "sgd");
  if (param.numel() == 0) return;
  launched(d, kernels::sgd_step(d.compute, param, grad, buf, p), "sgd");
}

void CudaBackend::adam_step(int dev, const KView& param, const KView& grad, const KView& m,
                            const KView& v, const AdamParams& p) {
  CudaDevice& d = worker_device(dev);
  need_float(d, param, "adam");
  if (param.numel() == 0) return;
  launched(d, kernels::adam_step(d.compute, param, grad, m, v, p), "adam");
}

}  // namespace dp::cuda_plugin
