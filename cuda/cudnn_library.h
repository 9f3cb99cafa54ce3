// cuDNN, opened at run time instead of linked. The plugin then loads on a machine without
// cuDNN (its convolutions run on im2col there, and the start-up line says why), and
// DP_CUDNN_LIBRARY can point it at a copy outside the loader's search path, such as the
// libcudnn.so.9 of NVIDIA's nvidia-cudnn wheel that PyTorch installs.
#pragma once

#include <cudnn.h>

#include <memory>
#include <string>

namespace dp::cuda_plugin {

#if CUDNN_MAJOR >= 9
#define DP_CUDNN_FUNCTIONS_9(X) X(cudnnGetLastErrorString)
#else
#define DP_CUDNN_FUNCTIONS_9(X)
#endif

// Every cuDNN function the plugin calls.
#define DP_CUDNN_FUNCTIONS(X)                       \
  X(cudnnGetVersion)                                \
  X(cudnnGetErrorString)                            \
  DP_CUDNN_FUNCTIONS_9(X)                           \
  X(cudnnCreate)                                    \
  X(cudnnDestroy)                                   \
  X(cudnnSetStream)                                 \
  X(cudnnCreateTensorDescriptor)                    \
  X(cudnnSetTensor4dDescriptor)                     \
  X(cudnnDestroyTensorDescriptor)                   \
  X(cudnnCreateFilterDescriptor)                    \
  X(cudnnSetFilter4dDescriptor)                     \
  X(cudnnDestroyFilterDescriptor)                   \
  X(cudnnCreateConvolutionDescriptor)               \
  X(cudnnSetConvolution2dDescriptor)                \
  X(cudnnSetConvolutionMathType)                    \
  X(cudnnDestroyConvolutionDescriptor)              \
  X(cudnnGetConvolutionForwardAlgorithm_v7)         \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)    \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)  \
  X(cudnnFindConvolutionForwardAlgorithmEx)         \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)    \
  X(cudnnFindConvolutionBackwardFilterAlgorithmEx)  \
  X(cudnnGetConvolutionForwardWorkspaceSize)        \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)   \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) \
  X(cudnnConvolutionForward)                        \
  X(cudnnConvolutionBackwardData)                   \
  X(cudnnConvolutionBackwardFilter)

// An opened cuDNN: one pointer per function, of the type its declaration in cudnn.h has,
// so that every call is checked against the headers the plugin was built with.
struct CudnnLibrary {
#define DP_CUDNN_POINTER(name) decltype(&::name) name = nullptr;
  DP_CUDNN_FUNCTIONS(DP_CUDNN_POINTER)
#undef DP_CUDNN_POINTER
  void* handle = nullptr;  // dlopen's; dlclose'd by the destructor

  CudnnLibrary() = default;
  ~CudnnLibrary();
  CudnnLibrary(const CudnnLibrary&) = delete;
  CudnnLibrary& operator=(const CudnnLibrary&) = delete;
};

// Opens the cuDNN at `path` (a file, or a name the dynamic loader looks for in its search
// path) and finds every function. nullptr, with *why naming the path and what failed (the
// loader's message, or the first function missing), when either fails.
std::unique_ptr<CudnnLibrary> open_cudnn(const std::string& path, std::string* why);

// The cuDNN the plugin uses, opened on the first call and kept for the process:
// DP_CUDNN_LIBRARY when set (only that), else libcudnn.so.<CUDNN_MAJOR> from the loader's
// search path, else from the directory the build found cuDNN in. nullptr when none opens,
// with *why saying what each attempt gave. Safe to call from several threads.
const CudnnLibrary* cudnn_library(std::string* why);

// "9.19.0": the version of an opened cuDNN (not that of the headers).
std::string cudnn_version_text(const CudnnLibrary& lib);

}  // namespace dp::cuda_plugin
