/* Not cuDNN: a library that exports every function the CUDA plugin looks up in cuDNN
   (DP_CUDNN_FUNCTIONS in cuda/cudnn_library.h) and reports version 8.9.7, for the test
   that the plugin refuses a cuDNN of another major version than it was built for. */
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))
#define STUB(name)       \
  EXPORT int name(void); \
  int name(void) {       \
    return 0;            \
  }

/* cuDNN 8 numbers its versions major * 1000 + minor * 100 + patch. */
EXPORT size_t cudnnGetVersion(void);
size_t cudnnGetVersion(void) {
  return 8907;
}

STUB(cudnnGetErrorString)
STUB(cudnnGetLastErrorString)
STUB(cudnnCreate)
STUB(cudnnDestroy)
STUB(cudnnSetStream)
STUB(cudnnCreateTensorDescriptor)
STUB(cudnnSetTensor4dDescriptor)
STUB(cudnnDestroyTensorDescriptor)
STUB(cudnnCreateFilterDescriptor)
STUB(cudnnSetFilter4dDescriptor)
STUB(cudnnDestroyFilterDescriptor)
STUB(cudnnCreateConvolutionDescriptor)
STUB(cudnnSetConvolution2dDescriptor)
STUB(cudnnSetConvolutionMathType)
STUB(cudnnDestroyConvolutionDescriptor)
STUB(cudnnGetConvolutionForwardAlgorithm_v7)
STUB(cudnnGetConvolutionBackwardDataAlgorithm_v7)
STUB(cudnnGetConvolutionBackwardFilterAlgorithm_v7)
STUB(cudnnFindConvolutionForwardAlgorithmEx)
STUB(cudnnFindConvolutionBackwardDataAlgorithmEx)
STUB(cudnnFindConvolutionBackwardFilterAlgorithmEx)
STUB(cudnnGetConvolutionForwardWorkspaceSize)
STUB(cudnnGetConvolutionBackwardDataWorkspaceSize)
STUB(cudnnGetConvolutionBackwardFilterWorkspaceSize)
STUB(cudnnConvolutionForward)
STUB(cudnnConvolutionBackwardData)
STUB(cudnnConvolutionBackwardFilter)
