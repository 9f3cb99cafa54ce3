// cuDNN opened at run time (cuda/cudnn_library.h): needs cuDNN installed, not a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "cudnn_library.h"

namespace dp::cuda_plugin {
namespace {

TEST(CudnnLibrary, OpensTheCudnnOfTheHeadersWithEveryFunction) {
  std::string why;
  const CudnnLibrary* lib = cudnn_library(&why);
  ASSERT_NE(lib, nullptr) << why;
#define DP_EXPECT_FOUND(name) EXPECT_NE(lib->name, nullptr) << #name;
  DP_CUDNN_FUNCTIONS(DP_EXPECT_FOUND)
#undef DP_EXPECT_FOUND
  // Calls that need no GPU: the version and a status's name.
  const std::string version = cudnn_version_text(*lib);
  EXPECT_TRUE(std::regex_match(version, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) << version;
  EXPECT_EQ(version.substr(0, version.find('.')), std::to_string(CUDNN_MAJOR)) << version;
  EXPECT_STREQ(lib->cudnnGetErrorString(CUDNN_STATUS_SUCCESS), "CUDNN_STATUS_SUCCESS");
  // Opened once for the process.
  EXPECT_EQ(cudnn_library(nullptr), lib);
}

// Descriptors are host-side: making them needs cuDNN's sub-libraries (libcudnn.so.9 opens
// them by name beside itself), not a GPU. So this checks that the opened library works,
// not only that its symbols are there.
TEST(CudnnLibrary, DescribesATensorAndAConvolutionWithoutAGpu) {
  std::string why;
  const CudnnLibrary* lib = cudnn_library(&why);
  ASSERT_NE(lib, nullptr) << why;
  cudnnTensorDescriptor_t x = nullptr;
  ASSERT_EQ(lib->cudnnCreateTensorDescriptor(&x), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(lib->cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 28, 28),
            CUDNN_STATUS_SUCCESS);
  // A negative size is refused: the call reached cuDNN's checks.
  EXPECT_NE(lib->cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, -3, 28, 28),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(lib->cudnnDestroyTensorDescriptor(x), CUDNN_STATUS_SUCCESS);
  cudnnConvolutionDescriptor_t conv = nullptr;
  ASSERT_EQ(lib->cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(lib->cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                 CUDNN_DATA_FLOAT),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(lib->cudnnDestroyConvolutionDescriptor(conv), CUDNN_STATUS_SUCCESS);
}

TEST(CudnnLibrary, AFileThatIsNotThereIsNamedInTheReason) {
  std::string why;
  EXPECT_EQ(open_cudnn("/nonexistent/libcudnn.so.9", &why), nullptr);
  EXPECT_NE(why.find("/nonexistent/libcudnn.so.9"), std::string::npos) << why;
}

TEST(CudnnLibrary, ALibraryWithoutCudnnsFunctionsIsRefusedNamingTheFirstMissing) {
  std::string why;
  EXPECT_EQ(open_cudnn("libm.so.6", &why), nullptr);
  EXPECT_EQ(why,
            "libm.so.6 has no cudnnGetVersion (not a cuDNN " + std::to_string(CUDNN_MAJOR) + ")");
}

TEST(CudnnLibrary, ACudnnOfAnotherMajorVersionIsRefusedNamingBoth) {
  if (CUDNN_MAJOR == 8) GTEST_SKIP() << "the stand-in reports cuDNN 8, as this build's headers";
  std::string why;
  EXPECT_EQ(open_cudnn(DP_FAKE_CUDNN_PATH, &why), nullptr);
  EXPECT_EQ(why, std::string(DP_FAKE_CUDNN_PATH) +
                     " is cuDNN 8.9.7, but the plugin was built for cuDNN " +
                     std::to_string(CUDNN_MAJOR));
}

// Run by ctest a second time with DP_CUDNN_LIBRARY set to a missing file
// (cuda_cudnn_library_env): only that file is tried, and the reason names it.
TEST(CudnnLibrary, DpCudnnLibraryIsTheOnlyFileTried) {
  const char* env = std::getenv("DP_CUDNN_LIBRARY");
  if (!env || std::string(env) != "/nonexistent/libcudnn.so.9") {
    GTEST_SKIP() << "runs with DP_CUDNN_LIBRARY=/nonexistent/libcudnn.so.9";
  }
  std::string why;
  EXPECT_EQ(cudnn_library(&why), nullptr);
  EXPECT_NE(why.find("/nonexistent/libcudnn.so.9"), std::string::npos) << why;
  EXPECT_EQ(why.find(';'), std::string::npos) << "more than one file was tried: " << why;
}

}  // namespace
}  // namespace dp::cuda_plugin
