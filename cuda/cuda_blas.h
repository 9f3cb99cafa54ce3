// Matrix products on cuBLASLt: one handle, one workspace and a plan cache per device,
// used only from the device's worker thread. Every product of the backend (matmul,
// linear, the convolution GEMMs) goes through Blas::gemm, in row-major terms.
//
// Types: float64 computes in float64; float32 in float32 (CUBLAS_COMPUTE_32F_FAST_TF32
// when the context allows TF32); bfloat16 (A, B, C, D and the bias) multiplies on the
// tensor cores and accumulates in float32 (CUBLAS_COMPUTE_32F, float alpha and beta),
// rounding D once, in the epilogue: as PyTorch's bfloat16 matmul on CUDA.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "device/backend.h"

namespace dp::cuda_plugin {

// Row-major C[m, n] (+)= op(A)[m, k] @ op(B)[k, n] (+ bias[n] on every row) (then ReLU),
// for `batch` independent products `stride_*` elements apart (stride 0: the same matrix
// for every product). A is stored [m, k] with row stride lda, or [k, m] when trans_a
// (likewise B: [k, n], or [n, k] when trans_b). C is contiguous: ldc == n and, for
// batch > 1, stride_c == m * n.
struct GemmArgs {
  DType dtype = DType::kFloat32;
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  int64_t batch = 1;
  const void* bias = nullptr;
  bool relu = false;
  bool accumulate = false;  // C += ..., else C = ...
};

class Blas {
 public:
  // On the device's worker, with the device current. `where` names the device in errors.
  Blas(const BackendHost& host, std::string where, cudaStream_t stream, bool allow_tf32);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;

  // Raises kNotSupported when cuBLASLt has no algorithm for the product.
  void gemm(const GemmArgs& g);
  // As gemm, but returns false (nothing queued) when cuBLASLt has no algorithm for the
  // product: for bfloat16, whose callers then run it in float32 (the first such shape
  // is logged).
  bool try_gemm(const GemmArgs& g);

 private:
  struct Plan;
  // The shape's plan, made on its first call; its `found` is false when cuBLASLt offered
  // no algorithm.
  Plan& plan_for(const GemmArgs& g);
  void run(const GemmArgs& g, Plan& plan);

  const BackendHost& host_;
  std::string where_;
  cudaStream_t stream_;
  bool allow_tf32_;
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  std::unordered_map<std::string, std::unique_ptr<Plan>> plans_;
};

}  // namespace dp::cuda_plugin
