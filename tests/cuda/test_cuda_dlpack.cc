// DLPack import of CUDA memory that another library is still writing on a stream of its
// own: the import waits for it, so the library never reads the memory half written.
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "cuda_test_util.h"
#include "io/dlpack.h"

namespace dp {
namespace {

void CUDART_CB sleep_a_while(void*) {
  usleep(300 * 1000);
}

struct Foreign {
  DLManagedTensor managed{};
  int64_t shape[1] = {0};
};

void free_foreign(DLManagedTensor* t) {
  cudaFree(t->dl_tensor.data);
  delete static_cast<Foreign*>(t->manager_ctx);
}

TEST(CudaDlpack, ImportWaitsForTheProducersStream) {
  auto ctx = cuda_test::make_context(nullptr);
  DP_SKIP_WITHOUT_CUDA(ctx, 1);
  const int gpu = ctx->backend(DeviceType::kCuda).physical_index(0);
  ASSERT_EQ(cudaSetDevice(gpu), cudaSuccess);
  const int64_t n = 1 << 20;
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemset(p, 0, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaStream_t producer = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  // The producer's stream is busy for 300 ms, then fills the memory with bytes 0x40 (each
  // float 3.00392...): what a kernel of the producer's, still queued, would write.
  ASSERT_EQ(cudaLaunchHostFunc(producer, sleep_a_while, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(p, 0x40, n * sizeof(float), producer), cudaSuccess);

  auto* f = new Foreign;
  f->shape[0] = n;
  DLTensor& dl = f->managed.dl_tensor;
  dl.data = p;
  dl.device = {kDLCUDA, gpu};
  dl.ndim = 1;
  dl.dtype = {kDLFloat, 32, 1};
  dl.shape = f->shape;
  f->managed.manager_ctx = f;
  f->managed.deleter = free_foreign;
  const Tensor t = from_dlpack(ctx, &f->managed);
  std::vector<float> got(static_cast<size_t>(n));
  ops::to_host(t, got.data());
  float want = 0;
  const uint32_t bits = 0x40404040u;
  std::memcpy(&want, &bits, sizeof want);
  size_t wrong = 0;
  for (float v : got) wrong += v != want;
  EXPECT_EQ(wrong, 0u) << "of " << n << " values read before the producer wrote them";
  EXPECT_EQ(cudaStreamDestroy(producer), cudaSuccess);
}

}  // namespace
}  // namespace dp
