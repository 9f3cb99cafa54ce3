// NcclOrder (cuda/nccl_order.h): on a GPU that a communicator between processes uses,
// the process's own NCCL calls and the calls between processes wait for the other kind
// queued before them, whatever stream each is on; other GPUs are left alone. A kernel that spins
// until the test releases it stands in for a NCCL call waiting for its peers. Skips without a GPU,
// except the argument check.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../core/finishes_within.h"
#include "nccl_order.h"
#include "spin_kernel.h"

namespace dp::cuda_plugin {
namespace {

[[noreturn]] void throw_message(int /*code*/, const char* message) {
  throw std::runtime_error(message);
}

const BackendHost kHost{throw_message, nullptr, nullptr};

class NcclOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      GTEST_SKIP() << "no CUDA device: "
                   << (e != cudaSuccess ? cudaGetErrorString(e) : "the runtime reports 0");
    }
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&a_, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&b_, cudaStreamNonBlocking), cudaSuccess);
    void* host = nullptr;
    ASSERT_EQ(cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped), cudaSuccess);
    flag_ = static_cast<volatile int*>(host);
    *flag_ = 0;
    void* device = nullptr;
    ASSERT_EQ(cudaHostGetDevicePointer(&device, host, 0), cudaSuccess);
    device_flag_ = static_cast<const volatile int*>(device);
    ASSERT_EQ(cudaMalloc(&buffer_, 64), cudaSuccess);
  }

  void TearDown() override {
    release();  // a failed check must not leave the kernel spinning
    if (a_) cudaStreamSynchronize(a_);
    if (b_) cudaStreamSynchronize(b_);
    if (buffer_) cudaFree(buffer_);
    if (flag_) cudaFreeHost(const_cast<int*>(flag_));
    if (a_) cudaStreamDestroy(a_);
    if (b_) cudaStreamDestroy(b_);
  }

  void release() {
    if (flag_) *flag_ = 1;
  }

  // Queues the spinning kernel on a_ as a launch of `first` (NcclOrder::kInProcess or a
  // communicator's id), then a small memset on b_ as a launch of `second`.
  void spin_on_a_then_memset_on_b(NcclOrder& order, int first, int second) {
    {
      NcclOrder::Launch launch(order, kHost, {0}, {a_}, first);
      ASSERT_EQ(launch_spin_until_set(device_flag_, a_), cudaSuccess);
    }
    {
      NcclOrder::Launch launch(order, kHost, {0}, {b_}, second);
      ASSERT_EQ(cudaMemsetAsync(buffer_, 7, 64, b_), cudaSuccess);
    }
  }

  // Whether the memset waits for the spinning kernel: it takes microseconds, so on its
  // own it is done long before `wait`. Releases the kernel before returning.
  bool memset_waits_for_the_kernel(std::chrono::milliseconds wait) {
    const bool waited = !stream_done_within(b_, wait);
    const bool kernel_was_spinning = cudaStreamQuery(a_) == cudaErrorNotReady;
    release();
    EXPECT_TRUE(kernel_was_spinning);
    EXPECT_TRUE(stream_done_within(b_, std::chrono::seconds(10)));
    return waited;
  }

  // Whether `s` finishes within `limit`.
  static bool stream_done_within(cudaStream_t s, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      const cudaError_t state = cudaStreamQuery(s);
      if (state == cudaSuccess) return true;
      if (state != cudaErrorNotReady) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  cudaStream_t a_ = nullptr;
  cudaStream_t b_ = nullptr;
  volatile int* flag_ = nullptr;
  const volatile int* device_flag_ = nullptr;
  void* buffer_ = nullptr;
};

constexpr auto kLong = std::chrono::milliseconds(300);

TEST_F(NcclOrderTest, ACallInsideTheProcessWaitsForACallBetweenProcessesQueuedBeforeIt) {
  NcclOrder order;
  const int comm = order.join(kHost, 0);
  spin_on_a_then_memset_on_b(order, comm, NcclOrder::kInProcess);
  EXPECT_TRUE(memset_waits_for_the_kernel(kLong));
  order.leave(0, comm);
}

TEST_F(NcclOrderTest, ACallBetweenProcessesWaitsForACallInsideTheProcessQueuedBeforeIt) {
  NcclOrder order;
  const int comm = order.join(kHost, 0);
  spin_on_a_then_memset_on_b(order, NcclOrder::kInProcess, comm);
  EXPECT_TRUE(memset_waits_for_the_kernel(kLong));
  order.leave(0, comm);
}

// Logical devices that share a GPU have compute streams of their own.
TEST_F(NcclOrderTest, ACallInsideTheProcessWaitsForTheLastOneOnAnotherStream) {
  NcclOrder order;
  const int comm = order.join(kHost, 0);
  spin_on_a_then_memset_on_b(order, NcclOrder::kInProcess, NcclOrder::kInProcess);
  EXPECT_TRUE(memset_waits_for_the_kernel(kLong));
  order.leave(0, comm);
}

TEST_F(NcclOrderTest, ASecondCommunicatorBetweenProcessesIsWarnedAbout) {
  struct Lines {
    std::vector<std::string> warnings;
  } lines;
  const BackendHost host{throw_message,
                         [](void* state, int level, const char* message) {
                           if (level == 2) static_cast<Lines*>(state)->warnings.push_back(message);
                         },
                         &lines};
  NcclOrder order;
  const int one = order.join(host, 0);
  EXPECT_TRUE(lines.warnings.empty());
  const int two = order.join(host, 0);
  ASSERT_EQ(lines.warnings.size(), 1u);
  EXPECT_NE(lines.warnings[0].find("GPU 0: 2 NCCL communicators between processes"),
            std::string::npos)
      << lines.warnings[0];
  order.leave(0, one);
  order.leave(0, two);
  const int again = order.join(host, 0);  // alone again: no warning
  EXPECT_EQ(lines.warnings.size(), 1u);
  order.leave(0, again);
}

// Two process groups' communication threads queue independently: chaining them could
// put them in different orders on different ranks, so they are left alone.
TEST_F(NcclOrderTest, TwoCommunicatorsBetweenProcessesDoNotWaitForEachOther) {
  NcclOrder order;
  const int one = order.join(kHost, 0);
  const int two = order.join(kHost, 0);
  EXPECT_NE(one, two);
  spin_on_a_then_memset_on_b(order, one, two);
  EXPECT_FALSE(memset_waits_for_the_kernel(std::chrono::seconds(10)));
  order.leave(0, one);
  order.leave(0, two);
}

TEST_F(NcclOrderTest, AGpuThatNoCommunicatorJoinedIsNotChained) {
  NcclOrder order;
  spin_on_a_then_memset_on_b(order, NcclOrder::kInProcess, NcclOrder::kInProcess);
  EXPECT_FALSE(memset_waits_for_the_kernel(std::chrono::seconds(10)));
}

TEST_F(NcclOrderTest, TheChainLastsUntilTheLastCommunicatorLeaves) {
  NcclOrder order;
  EXPECT_FALSE(order.chained(0));
  const int one = order.join(kHost, 0);
  const int two = order.join(kHost, 0);
  order.leave(0, one);
  EXPECT_TRUE(order.chained(0));
  order.leave(0, one);  // a second leave of the same id changes nothing
  EXPECT_TRUE(order.chained(0));
  // The one left still orders.
  spin_on_a_then_memset_on_b(order, two, NcclOrder::kInProcess);
  EXPECT_TRUE(memset_waits_for_the_kernel(kLong));
  order.leave(0, two);
  EXPECT_FALSE(order.chained(0));
}

// On the host: while a call between processes is being queued (it may wait in NCCL for
// its peers), the process's own launches on its GPU wait, and another communicator's do
// not (its peers could be waiting for it).
class NcclOrderHostTest : public NcclOrderTest {
 protected:
  // Whether a launch of `second`, begun on another thread while a launch of `first` is
  // being queued, gets through within `wait`; the first launch then ends, and the second
  // must get through within 10 s.
  bool gets_through_while_the_other_queues(NcclOrder& order, int first, int second,
                                           std::chrono::milliseconds wait) {
    bool early = false;
    // A second launch still stuck 10 s after the first ended is a hang: reported, and the
    // process ends (the stuck thread could never be joined).
    const int limit = static_cast<int>((wait.count() + 999) / 1000) + 10;
    testing_util::finishes_within(limit, "the second launch", [&] {
      std::atomic<bool> through{false};
      std::thread other;
      {
        NcclOrder::Launch queueing(order, kHost, {0}, {a_}, first);
        other = std::thread([&] {
          NcclOrder::Launch launch(order, kHost, {0}, {b_}, second);
          through = true;
        });
        const auto end = std::chrono::steady_clock::now() + wait;
        while (!through && std::chrono::steady_clock::now() < end) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        early = through;
      }
      other.join();
    });
    return early;
  }
};

TEST_F(NcclOrderHostTest, TheProcesssOwnLaunchWaitsWhileACallBetweenProcessesIsQueued) {
  NcclOrder order;
  const int comm = order.join(kHost, 0);
  EXPECT_FALSE(gets_through_while_the_other_queues(order, comm, NcclOrder::kInProcess, kLong));
  EXPECT_FALSE(gets_through_while_the_other_queues(order, NcclOrder::kInProcess, comm, kLong));
  order.leave(0, comm);
}

TEST_F(NcclOrderHostTest, AnotherCommunicatorBetweenProcessesDoesNotWait) {
  NcclOrder order;
  const int one = order.join(kHost, 0);
  const int two = order.join(kHost, 0);
  EXPECT_TRUE(gets_through_while_the_other_queues(order, one, two, std::chrono::seconds(10)));
  order.leave(0, one);
  order.leave(0, two);
}

// Needs no GPU: the check comes before any CUDA call.
TEST(NcclOrder, ALaunchGivenOtherCountsOfGpusAndStreamsIsRefused) {
  NcclOrder order;
  cudaStream_t none = nullptr;
  try {
    NcclOrder::Launch launch(order, kHost, {0}, {none, none});
    FAIL() << "accepted 1 GPU with 2 streams";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("1 GPUs but 2 streams"), std::string::npos) << e.what();
  }
  try {
    NcclOrder::Launch launch(order, kHost, {0, 1}, {none, none}, 0);
    FAIL() << "accepted a communicator between processes on 2 GPUs";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("on one GPU, not 2"), std::string::npos) << e.what();
  }
  // The refused launches let go of the order: the next one gets it (a GPU that is not
  // chained needs no CUDA call).
  NcclOrder::Launch next(order, kHost, {0}, {none});
}

}  // namespace
}  // namespace dp::cuda_plugin
