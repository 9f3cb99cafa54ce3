// Convolutions on cuDNN (its convolution API of cuDNN 7-9: cudnnConvolutionForward and the
// two backward functions, called through the library cudnn_library opened), in float32, or
// in bfloat16 with float32 compute (CUDNN_DATA_BFLOAT16 tensors, a CUDNN_DATA_FLOAT
// convolution descriptor, tensor-op math: PyTorch's configuration).
// One Cudnn per logical device, made on the device's worker at the first convolution and
// bound to the device's compute stream, so cuDNN's kernels are ordered with every other
// kernel of the device. Used only from that worker thread.
//
// Per (direction, shape) a plan holds the descriptors and the algorithm, chosen once:
//   - only deterministic algorithms (the same inputs give the same bits, as im2col does;
//     with kMeasured the algorithm itself may differ from run to run, as timings do);
//   - float32 with TF32 off: only CUDNN_FMA_MATH (plain float32 arithmetic); float32 with
//     TF32 allowed, and bfloat16: any math type except the one that converts to half
//     precision;
//   - workspace at most the limit given (CudaBackend::cudnn_workspace_limit);
//   - the first such algorithm in cuDNN's heuristic order, or (kMeasured) in the order of
//     the times cuDNN measured trying each on the call's own tensors.
// A shape with no such algorithm, or that cuDNN rejects, runs on im2col instead (bfloat16:
// on the float32 path): the call returns false and the log names the shape, once. So does
// a call whose workspace the device's pool cannot give at that moment (later calls try
// cuDNN again).
#pragma once

#include <cudnn.h>

#include <memory>
#include <string>
#include <unordered_map>

#include "cudnn_library.h"
#include "device/backend.h"
#include "kernels/kernels.h"

namespace dp::cuda_plugin {

struct CudaDevice;

enum class CudnnAlgoChoice {
  kHeuristic,  // cuDNN's ranking without running anything (PyTorch's cudnn.benchmark off)
  kMeasured,   // cudnnFind*AlgorithmEx on the first call of a shape (cudnn.benchmark on)
};

class Cudnn {
 public:
  // On the device's worker, with its GPU current. Raises when cuDNN cannot be opened
  // (cudnn_library) or cannot start.
  Cudnn(const BackendHost& host, CudaDevice& d, bool allow_tf32, CudnnAlgoChoice choice,
        size_t workspace_limit);
  ~Cudnn();
  Cudnn(const Cudnn&) = delete;
  Cudnn& operator=(const Cudnn&) = delete;

  // Contiguous NCHW tensors and [O, C, KH, KW] weights, all of `dtype` (float32 or
  // bfloat16). Each overwrites its output and returns true, or returns false without the
  // product (no usable algorithm, the tensors refused, no memory for the workspace): the
  // caller then runs another path, which overwrites the output (the timing of kMeasured
  // may have written it). Raises when cuDNN fails on a shape it accepted.
  bool forward(const ConvShape& g, DType dtype, const void* x, const void* w, void* y);
  bool backward_data(const ConvShape& g, DType dtype, const void* gy, const void* w, void* gx);
  bool backward_weights(const ConvShape& g, DType dtype, const void* x, const void* gy, void* gw);

 private:
  enum class Direction { kForward, kBackwardData, kBackwardWeights };
  struct Plan;
  // The plan of a shape, made on its first call (kMeasured times the algorithms on these
  // tensors: a, b the inputs, out the output, which the timing overwrites).
  Plan& plan_for(Direction dir, const ConvShape& g, DType dtype, const void* a, const void* b,
                 void* out);
  void choose(Direction dir, Plan& p, const ConvShape& g, DType dtype, const void* a, const void* b,
              void* out);
  // Queues the product on the plan's algorithm; false when there is none or cuDNN refuses
  // the call's tensors (nothing queued; the plan then sends the shape elsewhere).
  bool run(Direction dir, const ConvShape& g, DType dtype, const void* a, const void* b, void* out);
  // Logs that another path runs calls of this shape instead, and why (callers log each
  // cause once).
  void log_fallback(Direction dir, const ConvShape& g, DType dtype, const std::string& why) const;
  // Raises "<where>: <call> failed: <cuDNN's status and last error>" unless status is success.
  void check(cudnnStatus_t status, const std::string& call) const;

  const BackendHost& host_;
  CudaDevice& d_;
  const CudnnLibrary& dnn_;  // the process's (cudnn_library), open until it ends
  bool allow_tf32_;
  CudnnAlgoChoice choice_;
  size_t workspace_limit_;
  cudnnHandle_t handle_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Plan>> plans_;
};

}  // namespace dp::cuda_plugin
