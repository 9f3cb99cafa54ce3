#include "cuda_cudnn.h"

#include <array>
#include <climits>
#include <optional>
#include <vector>

#include "cuda_backend.h"
#include "cuda_errors.h"

namespace dp::cuda_plugin {

namespace {

constexpr int kMaxAlgorithms = 16;  // more than any direction has (8, 6 and 7 in cuDNN 9)

const char* direction_name(int dir) {
  static const char* const names[] = {"conv2d forward", "conv2d backward data",
                                      "conv2d backward weights"};
  return names[dir];
}

// cuDNN's names of its algorithms (the enums cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t).
std::string algorithm_name(int dir, int algo) {
  static const std::vector<std::vector<const char*>> names = {
      {"implicit GEMM", "implicit precomputed GEMM", "GEMM", "direct", "FFT", "tiled FFT",
       "Winograd", "non-fused Winograd"},
      {"algorithm 0", "algorithm 1", "FFT", "tiled FFT", "Winograd", "non-fused Winograd"},
      {"algorithm 0", "algorithm 1", "FFT", "algorithm 3", "Winograd", "non-fused Winograd",
       "tiled FFT"}};
  const auto& list = names[dir];
  return algo >= 0 && algo < static_cast<int>(list.size()) ? list[algo]
                                                           : "algorithm " + std::to_string(algo);
}

std::string shape_text(const ConvShape& g) {
  return "x [" + std::to_string(g.N) + ", " + std::to_string(g.C) + ", " + std::to_string(g.H) +
         ", " + std::to_string(g.W) + "], w [" + std::to_string(g.O) + ", " + std::to_string(g.C) +
         ", " + std::to_string(g.KH) + ", " + std::to_string(g.KW) + "], stride (" +
         std::to_string(g.stride_h) + ", " + std::to_string(g.stride_w) + "), padding (" +
         std::to_string(g.pad_h) + ", " + std::to_string(g.pad_w) + ")";
}

// cuDNN's 4-D descriptors take int sizes and compute int strides.
bool fits_int(const ConvShape& g) {
  for (int64_t n : {g.N * g.C * g.H * g.W, g.N * g.O * g.OH * g.OW, g.O * g.C * g.KH * g.KW}) {
    if (n <= 0 || n > INT_MAX) return false;
  }
  return true;
}

// The kind of a status: cuDNN 9 splits each into detailed codes (2003: a bad parameter, a
// misaligned pointer), grouped by thousands.
cudnnStatus_t category(cudnnStatus_t s) {
#ifdef CUDNN_STATUS_CATEGORY
  return static_cast<cudnnStatus_t>(CUDNN_STATUS_CATEGORY(static_cast<int>(s)));
#else
  return s;
#endif
}

// Tensor-op math is what bfloat16 is for (its products are exact in the float32
// accumulator); for float32 it means TF32, allowed only when the context allows it. The
// math type that converts inputs down to half precision is never allowed.
bool math_allowed(cudnnMathType_t m, bool tensor_ops) {
  if (m == CUDNN_FMA_MATH) return true;  // plain fused multiply-adds in the compute type
  return tensor_ops && (m == CUDNN_DEFAULT_MATH || m == CUDNN_TENSOR_OP_MATH);
}

const char* engine_instead(DType dtype) {
  return dtype == DType::kBFloat16 ? "the float32 path" : "im2col";
}

// The process's cuDNN; raises (the constructor's failure) when it cannot be opened.
const CudnnLibrary& library_or_raise(const BackendHost& host, const CudaDevice& d) {
  std::string why;
  const CudnnLibrary* lib = cudnn_library(&why);
  if (!lib) raise(host, Code::kNotSupported, d.where, "cuDNN could not be opened: " + why);
  return *lib;
}

}  // namespace

struct Cudnn::Plan {
  const CudnnLibrary& dnn;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;  // input and output images
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  bool usable = false;  // false: im2col runs this shape
  int algo = 0;         // a cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
  size_t workspace = 0;
  std::string why_not;  // when not usable
  bool told_out_of_memory = false;
  explicit Plan(const CudnnLibrary& library) : dnn(library) {}
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (conv) dnn.cudnnDestroyConvolutionDescriptor(conv);
    if (w) dnn.cudnnDestroyFilterDescriptor(w);
    if (y) dnn.cudnnDestroyTensorDescriptor(y);
    if (x) dnn.cudnnDestroyTensorDescriptor(x);
  }
};

Cudnn::Cudnn(const BackendHost& host, CudaDevice& d, bool allow_tf32, CudnnAlgoChoice choice,
             size_t workspace_limit)
    : host_(host),
      d_(d),
      dnn_(library_or_raise(host, d)),
      allow_tf32_(allow_tf32),
      choice_(choice),
      workspace_limit_(workspace_limit) {
  check(dnn_.cudnnCreate(&handle_), "cudnnCreate");
  const cudnnStatus_t s = dnn_.cudnnSetStream(handle_, d.compute);
  if (s != CUDNN_STATUS_SUCCESS) {
    dnn_.cudnnDestroy(handle_);
    handle_ = nullptr;
    check(s, "cudnnSetStream");
  }
}

Cudnn::~Cudnn() {
  plans_.clear();
  if (handle_) dnn_.cudnnDestroy(handle_);
}

void Cudnn::check(cudnnStatus_t status, const std::string& call) const {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = "";
#if CUDNN_MAJOR >= 9
  dnn_.cudnnGetLastErrorString(detail, sizeof detail);
#endif
  std::string what = call + " failed: " + dnn_.cudnnGetErrorString(status);
  if (detail[0] != '\0') what += std::string(" (") + detail + ")";
  Code code = category(status) == CUDNN_STATUS_NOT_SUPPORTED ? Code::kNotSupported : Code::kBackend;
#if CUDNN_MAJOR >= 9
  if (status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED) {
    code = Code::kOutOfMemory;
  }
#else
  if (status == CUDNN_STATUS_ALLOC_FAILED) code = Code::kOutOfMemory;
#endif
  raise(host_, code, d_.where, what);
}

Cudnn::Plan& Cudnn::plan_for(Direction dir, const ConvShape& g, DType dtype, const void* a,
                             const void* b, void* out) {
  std::string key = std::to_string(static_cast<int>(dir)) + ',' + dtype_name(dtype);
  for (int64_t v : {g.N, g.C, g.H, g.W, g.O, g.KH, g.KW, g.OH, g.OW, int64_t{g.stride_h},
                    int64_t{g.stride_w}, int64_t{g.pad_h}, int64_t{g.pad_w}}) {
    key += ',' + std::to_string(v);
  }
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  auto plan = std::make_unique<Plan>(dnn_);
  choose(dir, *plan, g, dtype, a, b, out);
  if (!plan->usable) {
    log_fallback(dir, g, dtype, plan->why_not);
  } else if (host_.log) {
    const std::string msg = d_.where + ": cuDNN " + direction_name(static_cast<int>(dir)) + " of " +
                            shape_text(g) + " in " + dtype_name(dtype) + ": " +
                            algorithm_name(static_cast<int>(dir), plan->algo) + ", " +
                            std::to_string(plan->workspace) + " bytes of workspace";
    host_.log(host_.log_state, 1 /* DP_LOG_INFO */, msg.c_str());
  }
  return *plans_.emplace(std::move(key), std::move(plan)).first->second;
}

// Fills p's descriptors and picks its algorithm; leaves p.usable false (with the reason)
// when cuDNN rejects the shape or offers no algorithm that meets the rules of the header.
void Cudnn::choose(Direction dir, Plan& p, const ConvShape& g, DType dtype, const void* a,
                   const void* b, void* out) {
  if (!fits_int(g)) {
    p.why_not = "a tensor is empty or has more than INT_MAX elements";
    return;
  }
  // bfloat16 tensors with a float32 convolution descriptor: products accumulate in float32
  // and each output is rounded to bfloat16 once.
  const bool bf16 = dtype == DType::kBFloat16;
  const cudnnDataType_t data = bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  const bool tensor_ops = bf16 || allow_tf32_;
  const cudnnMathType_t math =
      bf16 ? CUDNN_TENSOR_OP_MATH : (allow_tf32_ ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
  auto failed = [&](cudnnStatus_t s, const char* call) {
    if (s == CUDNN_STATUS_SUCCESS) return false;
    p.why_not = std::string(call) + ": " + dnn_.cudnnGetErrorString(s);
    return true;
  };
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  if (failed(dnn_.cudnnCreateTensorDescriptor(&p.x), "cudnnCreateTensorDescriptor") ||
      failed(dnn_.cudnnCreateTensorDescriptor(&p.y), "cudnnCreateTensorDescriptor") ||
      failed(dnn_.cudnnCreateFilterDescriptor(&p.w), "cudnnCreateFilterDescriptor") ||
      failed(dnn_.cudnnCreateConvolutionDescriptor(&p.conv), "cudnnCreateConvolutionDescriptor") ||
      failed(dnn_.cudnnSetTensor4dDescriptor(p.x, CUDNN_TENSOR_NCHW, data, i(g.N), i(g.C), i(g.H),
                                             i(g.W)),
             "cudnnSetTensor4dDescriptor") ||
      failed(dnn_.cudnnSetTensor4dDescriptor(p.y, CUDNN_TENSOR_NCHW, data, i(g.N), i(g.O), i(g.OH),
                                             i(g.OW)),
             "cudnnSetTensor4dDescriptor") ||
      failed(dnn_.cudnnSetFilter4dDescriptor(p.w, data, CUDNN_TENSOR_NCHW, i(g.O), i(g.C), i(g.KH),
                                             i(g.KW)),
             "cudnnSetFilter4dDescriptor") ||
      failed(dnn_.cudnnSetConvolution2dDescriptor(p.conv, g.pad_h, g.pad_w, g.stride_h, g.stride_w,
                                                  1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "cudnnSetConvolution2dDescriptor") ||
      failed(dnn_.cudnnSetConvolutionMathType(p.conv, math), "cudnnSetConvolutionMathType")) {
    return;
  }

  // The measured choice times each algorithm with a workspace of the budget's size (less
  // when the pool cannot give that much: cuDNN then skips the algorithms that need more).
  std::optional<ScratchBuffer> search;
  void* ws = nullptr;
  size_t ws_bytes = 0;
  if (choice_ == CudnnAlgoChoice::kMeasured) {
    for (size_t bytes = workspace_limit_; bytes >= (size_t{1} << 20) && !ws; bytes /= 4) {
      search.emplace(d_, bytes, std::nothrow);
      ws = search->get();
      if (ws) ws_bytes = bytes;
    }
  }
  struct Candidate {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
  };
  std::array<Candidate, kMaxAlgorithms> c{};
  int n = 0;
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  const bool measured = choice_ == CudnnAlgoChoice::kMeasured;
  // Copies cuDNN's per-direction results into the common candidate list.
  auto take = [&](const auto& perf) {
    for (int k = 0; k < n; ++k) {
      c[k] = {static_cast<int>(perf[k].algo), perf[k].status, perf[k].memory, perf[k].determinism,
              perf[k].mathType};
    }
  };
  const char* call = "";
  switch (dir) {
    case Direction::kForward: {
      std::array<cudnnConvolutionFwdAlgoPerf_t, kMaxAlgorithms> perf{};
      call = measured ? "cudnnFindConvolutionForwardAlgorithmEx"
                      : "cudnnGetConvolutionForwardAlgorithm_v7";
      s = measured ? dnn_.cudnnFindConvolutionForwardAlgorithmEx(handle_, p.x, a, p.w, b, p.conv,
                                                                 p.y, out, kMaxAlgorithms, &n,
                                                                 perf.data(), ws, ws_bytes)
                   : dnn_.cudnnGetConvolutionForwardAlgorithm_v7(handle_, p.x, p.w, p.conv, p.y,
                                                                 kMaxAlgorithms, &n, perf.data());
      take(perf);
      break;
    }
    case Direction::kBackwardData: {
      std::array<cudnnConvolutionBwdDataAlgoPerf_t, kMaxAlgorithms> perf{};
      call = measured ? "cudnnFindConvolutionBackwardDataAlgorithmEx"
                      : "cudnnGetConvolutionBackwardDataAlgorithm_v7";
      s = measured ? dnn_.cudnnFindConvolutionBackwardDataAlgorithmEx(
                         handle_, p.w, b, p.y, a, p.conv, p.x, out, kMaxAlgorithms, &n, perf.data(),
                         ws, ws_bytes)
                   : dnn_.cudnnGetConvolutionBackwardDataAlgorithm_v7(
                         handle_, p.w, p.y, p.conv, p.x, kMaxAlgorithms, &n, perf.data());
      take(perf);
      break;
    }
    case Direction::kBackwardWeights: {
      std::array<cudnnConvolutionBwdFilterAlgoPerf_t, kMaxAlgorithms> perf{};
      call = measured ? "cudnnFindConvolutionBackwardFilterAlgorithmEx"
                      : "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
      s = measured ? dnn_.cudnnFindConvolutionBackwardFilterAlgorithmEx(
                         handle_, p.x, a, p.y, b, p.conv, p.w, out, kMaxAlgorithms, &n, perf.data(),
                         ws, ws_bytes)
                   : dnn_.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                         handle_, p.x, p.y, p.conv, p.w, kMaxAlgorithms, &n, perf.data());
      take(perf);
      break;
    }
  }
  if (ws) {
    // The search's workspace (the whole limit) goes back to the GPU instead of staying
    // reserved in the pool for good.
    search.reset();
    cudaStreamSynchronize(d_.compute);
    cudaMemPoolTrimTo(d_.pool, 0);
    (void)cudaGetLastError();
  }
  if (failed(s, call)) return;

  // The first candidate that meets the rules, with its workspace as cuDNN reports it for
  // the math type it was ranked with.
  for (int k = 0; k < n; ++k) {
    const Candidate& cand = c[k];
    if (cand.status != CUDNN_STATUS_SUCCESS || cand.determinism != CUDNN_DETERMINISTIC ||
        !math_allowed(cand.math, tensor_ops) || cand.memory > workspace_limit_) {
      continue;
    }
    if (dnn_.cudnnSetConvolutionMathType(p.conv, cand.math) != CUDNN_STATUS_SUCCESS) continue;
    size_t bytes = 0;
    switch (dir) {
      case Direction::kForward:
        s = dnn_.cudnnGetConvolutionForwardWorkspaceSize(
            handle_, p.x, p.w, p.conv, p.y, static_cast<cudnnConvolutionFwdAlgo_t>(cand.algo),
            &bytes);
        break;
      case Direction::kBackwardData:
        s = dnn_.cudnnGetConvolutionBackwardDataWorkspaceSize(
            handle_, p.w, p.y, p.conv, p.x, static_cast<cudnnConvolutionBwdDataAlgo_t>(cand.algo),
            &bytes);
        break;
      case Direction::kBackwardWeights:
        s = dnn_.cudnnGetConvolutionBackwardFilterWorkspaceSize(
            handle_, p.x, p.y, p.conv, p.w, static_cast<cudnnConvolutionBwdFilterAlgo_t>(cand.algo),
            &bytes);
        break;
    }
    if (s != CUDNN_STATUS_SUCCESS || bytes > workspace_limit_) continue;
    p.usable = true;
    p.algo = cand.algo;
    p.workspace = bytes;
    return;
  }
  p.why_not = "none of the " + std::to_string(n) + " algorithms offered is deterministic, " +
              (tensor_ops ? "" : "free of TF32, ") + "and fits in " +
              std::to_string(workspace_limit_) + " bytes of workspace";
}

bool Cudnn::forward(const ConvShape& g, DType dtype, const void* x, const void* w, void* y) {
  return run(Direction::kForward, g, dtype, x, w, y);
}

bool Cudnn::backward_data(const ConvShape& g, DType dtype, const void* gy, const void* w,
                          void* gx) {
  return run(Direction::kBackwardData, g, dtype, gy, w, gx);
}

bool Cudnn::backward_weights(const ConvShape& g, DType dtype, const void* x, const void* gy,
                             void* gw) {
  return run(Direction::kBackwardWeights, g, dtype, x, gy, gw);
}

bool Cudnn::run(Direction dir, const ConvShape& g, DType dtype, const void* a, const void* b,
                void* out) {
  Plan& p = plan_for(dir, g, dtype, a, b, out);
  if (!p.usable) return false;
  // The workspace, from the device's pool in the order of its stream. When the pool cannot
  // give it (the limit does not look at what is free), im2col, which needs less, runs
  // this call (bfloat16: the float32 path).
  ScratchBuffer ws(d_, p.workspace, std::nothrow);  // freed in stream order after the call
  if (p.workspace > 0 && !ws.get()) {
    if (!p.told_out_of_memory) {
      p.told_out_of_memory = true;
      log_fallback(dir, g, dtype,
                   "no memory for its " + std::to_string(p.workspace) +
                       " bytes of workspace now; later calls try again");
    }
    return false;
  }
  void* const work = ws.get();
  const float one = 1.f, zero = 0.f;  // float for float32 and bfloat16 tensors alike
  cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
  const char* call = "";
  switch (dir) {
    case Direction::kForward:  // a = x, b = w, out = y
      call = "cudnnConvolutionForward";
      s = dnn_.cudnnConvolutionForward(handle_, &one, p.x, a, p.w, b, p.conv,
                                       static_cast<cudnnConvolutionFwdAlgo_t>(p.algo), work,
                                       p.workspace, &zero, p.y, out);
      break;
    case Direction::kBackwardData:  // a = gy, b = w, out = gx
      call = "cudnnConvolutionBackwardData";
      s = dnn_.cudnnConvolutionBackwardData(handle_, &one, p.w, b, p.y, a, p.conv,
                                            static_cast<cudnnConvolutionBwdDataAlgo_t>(p.algo),
                                            work, p.workspace, &zero, p.x, out);
      break;
    case Direction::kBackwardWeights:  // a = x, b = gy, out = gw
      call = "cudnnConvolutionBackwardFilter";
      s = dnn_.cudnnConvolutionBackwardFilter(handle_, &one, p.x, a, p.y, b, p.conv,
                                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(p.algo),
                                              work, p.workspace, &zero, p.w, out);
      break;
  }
  if (category(s) == CUDNN_STATUS_NOT_SUPPORTED || category(s) == CUDNN_STATUS_BAD_PARAM) {
    // Rejected before anything ran (an algorithm may need aligned addresses, which the
    // heuristic cannot know): this and later calls of the shape run elsewhere.
    p.usable = false;
    p.why_not = std::string(call) + " refused the tensors: " + dnn_.cudnnGetErrorString(s);
    log_fallback(dir, g, dtype, p.why_not);
    return false;
  }
  check(s, std::string(call) + " of " + shape_text(g));
  return true;
}

void Cudnn::log_fallback(Direction dir, const ConvShape& g, DType dtype,
                         const std::string& why) const {
  if (!host_.log) return;
  const std::string msg = d_.where + ": cuDNN runs no " + direction_name(static_cast<int>(dir)) +
                          " of " + shape_text(g) + " in " + dtype_name(dtype) + " (" + why + "); " +
                          engine_instead(dtype) + " runs it";
  host_.log(host_.log_state, 1 /* DP_LOG_INFO */, msg.c_str());
}

}  // namespace dp::cuda_plugin
