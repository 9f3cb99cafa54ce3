// cpu_parallel_for: chunks of one kernel shared between the CPU devices' workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "context/context.h"
#include "context/cpu_parallel.h"
#include "error.h"
#include "test_context.h"

namespace dp {
namespace {

std::shared_ptr<Context> make_ctx(int devices) {
  return testing_util::cpu_context(devices);
}

struct Slice {
  int64_t begin, end;
  int device;
  std::thread::id thread;
};

// Runs cpu_parallel_for from CPU device `self`'s worker and returns the chunks it ran.
// With wait_for_threads, every chunk lasts until that many threads have started one (so
// idle workers surely take part; 2 s at most).
std::vector<Slice> slices_of(Context& ctx, int self, int64_t n, int64_t min_slice, int64_t align,
                             size_t wait_for_threads = 0) {
  std::mutex mu;
  std::vector<Slice> out;
  std::set<std::thread::id> threads;
  ctx.worker(Device{DeviceType::kCpu, self}).run_on_thread([&] {
    cpu_parallel_for(ctx, self, n, min_slice, align, [&](int64_t b, int64_t e, int device) {
      {
        std::lock_guard<std::mutex> lock(mu);
        out.push_back({b, e, device, std::this_thread::get_id()});
        threads.insert(std::this_thread::get_id());
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      for (;;) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (threads.size() >= wait_for_threads) break;
        }
        if (std::chrono::steady_clock::now() > deadline) break;
        std::this_thread::yield();
      }
    });
  });
  std::sort(out.begin(), out.end(),
            [](const Slice& x, const Slice& y) { return x.begin < y.begin; });
  return out;
}

// Chunks are contiguous, start on multiples of `align` and cover [0, n).
void expect_cover(const std::vector<Slice>& s, int64_t n, int64_t align) {
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].begin, 0);
  for (size_t k = 0; k + 1 < s.size(); ++k) {
    EXPECT_EQ(s[k].end, s[k + 1].begin);
    EXPECT_EQ(s[k + 1].begin % align, 0);
  }
  EXPECT_EQ(s.back().end, n);
}

TEST(CpuParallelFor, ChunksCoverTheRangeOnceAlignedAndEveryIdleWorkerTakesPart) {
  auto ctx = make_ctx(3);
  const auto s = slices_of(*ctx, 1, 100003, 1000, 16, /*wait_for_threads=*/3);
  ASSERT_EQ(s.size(), 12u);  // four per CPU device
  expect_cover(s, 100003, 16);
  // Each thread ran its chunks as one device; three threads, three devices.
  std::map<std::thread::id, std::set<int>> devices_of;
  std::set<int> devices;
  for (const Slice& x : s) {
    devices_of[x.thread].insert(x.device);
    devices.insert(x.device);
  }
  EXPECT_EQ(devices_of.size(), 3u);
  for (const auto& [thread, d] : devices_of) EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(devices.size(), 3u);
  // The caller's own device ran the first chunk.
  EXPECT_EQ(s[0].device, 1);
}

TEST(CpuParallelFor, ChunksAreAtLeastTheMinimumSize) {
  auto ctx = make_ctx(2);
  const auto s = slices_of(*ctx, 0, 5000, 1000, 16);
  ASSERT_EQ(s.size(), 5u);  // 5000 / 1000, under the 4 per device allowed
  expect_cover(s, 5000, 16);
}

TEST(CpuParallelFor, SmallRangesStayOnTheCaller) {
  auto ctx = make_ctx(2);
  const auto s = slices_of(*ctx, 0, 1500, 1000, 16);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].begin, 0);
  EXPECT_EQ(s[0].end, 1500);
  EXPECT_EQ(s[0].device, 0);
}

TEST(CpuParallelFor, FromOutsideTheWorkersEveryChunkRunsOnAWorker) {
  auto ctx = make_ctx(2);
  std::mutex mu;
  std::vector<Slice> s;
  cpu_parallel_for(*ctx, kNotOnACpuWorker, 9000, 1000, 16, [&](int64_t b, int64_t e, int device) {
    std::lock_guard<std::mutex> lock(mu);
    s.push_back({b, e, device, std::this_thread::get_id()});
  });
  std::sort(s.begin(), s.end(), [](const Slice& x, const Slice& y) { return x.begin < y.begin; });
  ASSERT_EQ(s.size(), 8u);
  expect_cover(s, 9000, 16);
  std::map<std::thread::id, std::set<int>> devices_of;
  for (const Slice& x : s) {
    EXPECT_NE(x.thread, std::this_thread::get_id());
    devices_of[x.thread].insert(x.device);
  }
  for (const auto& [thread, d] : devices_of) EXPECT_EQ(d.size(), 1u);
  // A single chunk too goes to a worker.
  std::thread::id ran_on;
  cpu_parallel_for(*ctx, kNotOnACpuWorker, 10, 1000, 16,
                   [&](int64_t, int64_t, int) { ran_on = std::this_thread::get_id(); });
  EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(CpuParallelFor, ChunksABusyWorkerHasNotStartedRunOnTheCaller) {
  auto ctx = make_ctx(2);
  Worker& busy = ctx->worker(Device{DeviceType::kCpu, 1});
  std::atomic<bool> release{false};
  busy.post([&] {
    while (!release.load()) std::this_thread::yield();
  });
  // cpu:1 is stuck: cpu:0 must run every chunk itself, without waiting for it.
  const auto s = slices_of(*ctx, 0, 10000, 1000, 16);
  release.store(true);
  ASSERT_EQ(s.size(), 8u);
  expect_cover(s, 10000, 16);
  for (const Slice& x : s) {
    EXPECT_EQ(x.device, 0);  // run with the caller's device, on the caller's thread
    EXPECT_EQ(x.thread, s[0].thread);
  }
  busy.run_on_thread([] {});  // the leftover offer finds no chunk left and does nothing
}

TEST(CpuParallelFor, RethrowsTheLowestFailedChunksErrorAfterEveryChunkFinished) {
  auto ctx = make_ctx(2);
  std::atomic<int> finished{0};
  try {
    ctx->worker(Device{DeviceType::kCpu, 0}).run_on_thread([&] {
      // Four chunks: [0, 992), [992, 2000), [2000, 2992), [2992, 4000).
      cpu_parallel_for(*ctx, 0, 4000, 1000, 16, [&](int64_t b, int64_t, int) {
        if (b > 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          finished.fetch_add(1);
          DP_THROW(kBackend, "slice at " << b << " failed");
        }
        finished.fetch_add(1);
      });
    });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kBackend);
    EXPECT_STREQ(e.what(), "slice at 992 failed");
  }
  EXPECT_EQ(finished.load(), 4);
}

}  // namespace
}  // namespace dp
