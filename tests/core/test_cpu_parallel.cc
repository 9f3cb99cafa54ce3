// cpu_parallel_for: slices of one kernel shared between the CPU devices' workers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "device/context.h"
#include "device/cpu_parallel.h"
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

// Runs cpu_parallel_for from CPU device `self`'s worker and returns the slices it ran.
// With wait_for_others, the caller's slice lasts until that many other slices started
// (so idle workers surely take theirs; 2 s at most).
std::vector<Slice> slices_of(Context& ctx, int self, int64_t n, int64_t min_slice, int64_t align,
                             int wait_for_others = 0) {
  std::mutex mu;
  std::vector<Slice> out;
  std::atomic<int> others{0};
  ctx.worker(Device{DeviceType::kCpu, self}).run_on_thread([&] {
    cpu_parallel_for(ctx, self, n, min_slice, align, [&](int64_t b, int64_t e, int device) {
      if (b != 0) others.fetch_add(1);
      {
        std::lock_guard<std::mutex> lock(mu);
        out.push_back({b, e, device, std::this_thread::get_id()});
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (b == 0 && others.load() < wait_for_others &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
    });
  });
  std::sort(out.begin(), out.end(),
            [](const Slice& x, const Slice& y) { return x.begin < y.begin; });
  return out;
}

TEST(CpuParallelFor, SlicesCoverTheRangeOnceOnDistinctDevicesAndAligned) {
  auto ctx = make_ctx(3);
  const auto s = slices_of(*ctx, 1, 100003, 1000, 16, /*wait_for_others=*/2);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].begin, 0);
  for (size_t k = 0; k + 1 < s.size(); ++k) {
    EXPECT_EQ(s[k].end, s[k + 1].begin);
    EXPECT_EQ(s[k + 1].begin % 16, 0);
  }
  EXPECT_EQ(s.back().end, 100003);
  std::set<int> devices;
  for (const Slice& x : s) devices.insert(x.device);
  EXPECT_EQ(devices.size(), 3u);
  // The caller's own device ran the first slice.
  EXPECT_EQ(s[0].device, 1);
}

TEST(CpuParallelFor, SmallRangesStayOnTheCaller) {
  auto ctx = make_ctx(2);
  const auto s = slices_of(*ctx, 0, 1500, 1000, 16);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].begin, 0);
  EXPECT_EQ(s[0].end, 1500);
  EXPECT_EQ(s[0].device, 0);
}

TEST(CpuParallelFor, ASliceABusyWorkerHasNotStartedRunsOnTheCaller) {
  auto ctx = make_ctx(2);
  Worker& busy = ctx->worker(Device{DeviceType::kCpu, 1});
  std::atomic<bool> release{false};
  busy.post([&] {
    while (!release.load()) std::this_thread::yield();
  });
  // cpu:1 is stuck: cpu:0 must finish both slices itself, without waiting for it.
  const auto s = slices_of(*ctx, 0, 10000, 1000, 16);
  release.store(true);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].device, 0);
  EXPECT_EQ(s[1].device, 0);  // taken back, and run with the caller's device
  EXPECT_EQ(s[0].thread, s[1].thread);
  busy.run_on_thread([] {});  // the leftover offer finds its slice claimed and does nothing
}

TEST(CpuParallelFor, RethrowsASliceErrorAfterEverySliceFinished) {
  auto ctx = make_ctx(2);
  std::atomic<int> finished{0};
  try {
    ctx->worker(Device{DeviceType::kCpu, 0}).run_on_thread([&] {
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
    EXPECT_STREQ(e.what(), "slice at 2000 failed");
  }
  EXPECT_EQ(finished.load(), 2);
}

}  // namespace
}  // namespace dp
