#include "cuda_blas.h"

#include <cstdint>

#include "cuda_errors.h"
#include "kernels/kernels.h"

namespace dp::cuda_plugin {

namespace {

// cuBLAS recommends 32 MiB of workspace on Hopper; smaller parts use less of it.
constexpr size_t kWorkspaceBytes = size_t{32} << 20;

// The largest power of two (at most 256) that divides the address: cuBLASLt picks kernels
// by the alignment it is promised, and views into a tensor may be only 4-byte aligned.
uint32_t alignment_of(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && v % a != 0) a /= 2;
  return a;
}

std::string shape_text(const GemmArgs& g) {
  return std::to_string(g.batch) + " x [" + std::to_string(g.m) + ", " + std::to_string(g.k) +
         "] @ [" + std::to_string(g.k) + ", " + std::to_string(g.n) + "] " + dtype_name(g.dtype) +
         (g.trans_a ? " (a transposed)" : "") + (g.trans_b ? " (b transposed)" : "");
}

}  // namespace

// A cuBLASLt description of one product shape with the algorithm the heuristic chose.
// cuBLASLt is column-major: row-major C = A @ B is column-major C^T = B^T @ A^T, so
// cuBLASLt's A is our B and its B is our A, and the bias (one value per row of C^T) is
// the per-column bias of the row-major C.
struct Blas::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t lt_a = nullptr, lt_b = nullptr, lt_c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool found = false;           // false: cuBLASLt offered no algorithm for the shape
  bool fused_epilogue = false;  // else bias and ReLU run as a kernel after the product
  ~Plan() {
    if (lt_c) cublasLtMatrixLayoutDestroy(lt_c);
    if (lt_b) cublasLtMatrixLayoutDestroy(lt_b);
    if (lt_a) cublasLtMatrixLayoutDestroy(lt_a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

Blas::Blas(const BackendHost& host, std::string where, cudaStream_t stream, bool allow_tf32)
    : host_(host), where_(std::move(where)), stream_(stream), allow_tf32_(allow_tf32) {
  check_cublas(host_, where_, cublasLtCreate(&lt_), "cublasLtCreate");
  const cudaError_t err = cudaMalloc(&workspace_, kWorkspaceBytes);
  if (err != cudaSuccess) {
    cublasLtDestroy(lt_);
    lt_ = nullptr;
    check_cuda(host_, where_, err,
               "cudaMalloc of the " + std::to_string(kWorkspaceBytes) + "-byte cuBLASLt workspace");
  }
  workspace_bytes_ = kWorkspaceBytes;
}

Blas::~Blas() {
  plans_.clear();
  if (workspace_) cudaFree(workspace_);
  if (lt_) cublasLtDestroy(lt_);
}

Blas::Plan& Blas::plan_for(const GemmArgs& g) {
  std::string key;
  for (int64_t v : {static_cast<int64_t>(g.dtype),
                    int64_t{g.trans_a},
                    int64_t{g.trans_b},
                    g.m,
                    g.n,
                    g.k,
                    g.lda,
                    g.ldb,
                    g.ldc,
                    g.stride_a,
                    g.stride_b,
                    g.stride_c,
                    g.batch,
                    int64_t{g.bias != nullptr},
                    int64_t{g.relu},
                    int64_t{g.accumulate},
                    int64_t{alignment_of(g.a)},
                    int64_t{alignment_of(g.b)},
                    int64_t{alignment_of(g.c)},
                    int64_t{alignment_of(g.bias)}}) {
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;

  auto plan = std::make_unique<Plan>();
  const bool f64 = g.dtype == DType::kFloat64;
  const bool bf16 = g.dtype == DType::kBFloat16;
  const cudaDataType_t type = f64 ? CUDA_R_64F : bf16 ? CUDA_R_16BF : CUDA_R_32F;
  // bfloat16: float32 accumulation and float alpha/beta (TF32 concerns float32 inputs only).
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F
          : (allow_tf32_ && !bf16 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
  const cudaDataType_t scale = f64 ? CUDA_R_64F : CUDA_R_32F;
  auto check = [&](cublasStatus_t s, const char* call) { check_cublas(host_, where_, s, call); };
  check(cublasLtMatmulDescCreate(&plan->desc, compute, scale), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_a = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
        "cublasLtMatmulDescSetAttribute(TRANSA)");
  check(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
        "cublasLtMatmulDescSetAttribute(TRANSB)");

  // Stored (column-major) shapes: our B is [n, k] column-major, or [k, n] when trans_b.
  check(cublasLtMatrixLayoutCreate(&plan->lt_a, type, g.trans_b ? g.k : g.n, g.trans_b ? g.n : g.k,
                                   g.ldb),
        "cublasLtMatrixLayoutCreate(A)");
  check(cublasLtMatrixLayoutCreate(&plan->lt_b, type, g.trans_a ? g.m : g.k, g.trans_a ? g.k : g.m,
                                   g.lda),
        "cublasLtMatrixLayoutCreate(B)");
  check(cublasLtMatrixLayoutCreate(&plan->lt_c, type, g.n, g.m, g.ldc),
        "cublasLtMatrixLayoutCreate(C)");
  if (g.batch > 1) {
    const int32_t count = static_cast<int32_t>(g.batch);
    const int64_t strides[3] = {g.stride_b, g.stride_a, g.stride_c};
    cublasLtMatrixLayout_t layouts[3] = {plan->lt_a, plan->lt_b, plan->lt_c};
    for (int i = 0; i < 3; ++i) {
      check(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof count),
            "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
      check(
          cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                           &strides[i], sizeof strides[i]),
          "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
    }
  }

  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  struct PrefGuard {
    cublasLtMatmulPreference_t p;
    ~PrefGuard() { cublasLtMatmulPreferenceDestroy(p); }
  } pref_guard{pref};
  const uint64_t ws = workspace_bytes_;
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                             sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  const uint32_t align[4] = {alignment_of(g.b), alignment_of(g.a), alignment_of(g.c),
                             alignment_of(g.c)};
  const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i) {
    check(cublasLtMatmulPreferenceSetAttribute(pref, align_attr[i], &align[i], sizeof align[i]),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
  }

  // Bias and ReLU in cuBLASLt's epilogue when some algorithm supports it for this shape;
  // otherwise the plain product and a kernel after it. A bias not 16-byte aligned (a view
  // at an odd offset) takes the kernel: the heuristic sees the bias pointer, but Marian's
  // cuBLASLt code (src/tensors/gpu/prod.cpp) reports fused biases below that alignment
  // failing at run time on an A100, after the plan is made, where this has no fallback.
  auto choose = [&](cublasLtEpilogue_t epilogue) {
    if (cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof epilogue) != CUBLAS_STATUS_SUCCESS) {
      return false;
    }
    if (g.bias && cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                 &g.bias, sizeof g.bias) != CUBLAS_STATUS_SUCCESS) {
      return false;
    }
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(
        lt_, plan->desc, plan->lt_a, plan->lt_b, plan->lt_c, plan->lt_c, pref, 1, &result, &found);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0) return false;
    plan->algo = result.algo;
    return true;
  };
  cublasLtEpilogue_t fused = CUBLASLT_EPILOGUE_DEFAULT;
  if (g.bias) fused = g.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  if (!g.bias && g.relu) fused = CUBLASLT_EPILOGUE_RELU;
  const bool bias_aligned = !g.bias || alignment_of(g.bias) >= 16;
  if (fused != CUBLASLT_EPILOGUE_DEFAULT && bias_aligned && choose(fused)) {
    plan->found = plan->fused_epilogue = true;
  } else {
    plan->found = choose(CUBLASLT_EPILOGUE_DEFAULT);
  }
  if (!plan->found && host_.log) {
    const std::string msg = where_ + ": cuBLASLt has no algorithm for " + shape_text(g);
    host_.log(host_.log_state, 1 /* DP_LOG_INFO */, msg.c_str());
  }
  return *plans_.emplace(std::move(key), std::move(plan)).first->second;
}

void Blas::gemm(const GemmArgs& g) {
  if (!try_gemm(g)) {
    raise(host_, Code::kNotSupported, where_, "cuBLASLt has no algorithm for " + shape_text(g));
  }
}

bool Blas::try_gemm(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return true;
  if (g.k == 0) {  // an empty sum: C = (C or 0) + bias, then ReLU
    check_cuda(host_, where_,
               kernels::bias_relu(stream_, g.dtype, g.c, g.batch * g.m, g.n, g.bias, g.relu,
                                  !g.accumulate),
               "matmul epilogue kernel");
    return true;
  }
  Plan& plan = plan_for(g);
  if (!plan.found) return false;
  run(g, plan);
  return true;
}

void Blas::run(const GemmArgs& g, Plan& plan) {
  const bool has_epilogue = g.bias != nullptr || g.relu;
  if (plan.fused_epilogue && g.bias) {
    check_cublas(host_, where_,
                 cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                &g.bias, sizeof g.bias),
                 "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
  const float alpha_f = 1.f, beta_f = g.accumulate ? 1.f : 0.f;
  const double alpha_d = 1.0, beta_d = g.accumulate ? 1.0 : 0.0;
  const bool f64 = g.dtype == DType::kFloat64;
  const void* alpha = f64 ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = f64 ? static_cast<const void*>(&beta_d) : &beta_f;
  check_cublas(
      host_, where_,
      cublasLtMatmul(lt_, plan.desc, alpha, g.b, plan.lt_a, g.a, plan.lt_b, beta, g.c, plan.lt_c,
                     g.c, plan.lt_c, &plan.algo, workspace_, workspace_bytes_, stream_),
      "cublasLtMatmul of " + shape_text(g));
  if (has_epilogue && !plan.fused_epilogue) {
    check_cuda(host_, where_,
               kernels::bias_relu(stream_, g.dtype, g.c, g.batch * g.m, g.n, g.bias, g.relu, false),
               "matmul epilogue kernel");
  }
}

}  // namespace dp::cuda_plugin
