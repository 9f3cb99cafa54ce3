// Workers: the persistent per-device threads and the task helpers on top of them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "device/worker.h"
#include "error.h"

namespace dp {
namespace {

TEST(Worker, RunReturnsTheResultFromTheWorkerThread) {
  Worker w("test", nullptr, nullptr);
  const auto caller = std::this_thread::get_id();
  const auto id = w.run([] { return std::this_thread::get_id(); });
  EXPECT_NE(id, caller);
  EXPECT_EQ(w.run([] { return 41 + 1; }), 42);
}

TEST(Worker, RunIsInlineWhenCalledFromTheWorkerItself) {
  Worker w("test", nullptr, nullptr);
  const bool nested_inline = w.run([&] {
    const auto outer = std::this_thread::get_id();
    return w.run([&] { return std::this_thread::get_id() == outer; });
  });
  EXPECT_TRUE(nested_inline);
}

TEST(Worker, RunRethrowsTheTaskExceptionInTheCaller) {
  Worker w("test", nullptr, nullptr);
  try {
    w.run([]() -> int { DP_THROW(kOutOfRange, "index 7 too large"); });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOutOfRange);
    EXPECT_STREQ(e.what(), "index 7 too large");
  }
  EXPECT_EQ(w.run([] { return 1; }), 1);  // still usable
}

TEST(Worker, StartAndStopHooksRunOnTheWorkerThread) {
  std::thread::id start_id, stop_id;
  std::thread::id worker_id;
  {
    Worker w(
        "test", [&] { start_id = std::this_thread::get_id(); },
        [&] { stop_id = std::this_thread::get_id(); });
    worker_id = w.run([] { return std::this_thread::get_id(); });
  }
  EXPECT_EQ(start_id, worker_id);
  EXPECT_EQ(stop_id, worker_id);
}

TEST(Worker, DestructorRunsTasksAlreadyQueued) {
  std::atomic<int> done{0};
  {
    Worker w("test", nullptr, nullptr);
    for (int i = 0; i < 100; ++i) w.post([&] { done.fetch_add(1); });
  }
  EXPECT_EQ(done.load(), 100);
}

TEST(Worker, ThreadStateFollowsTheTaskOntoTheWorker) {
  Worker w("test", nullptr, nullptr);
  ThreadState::current().grad_enabled = false;
  EXPECT_FALSE(w.run([] { return ThreadState::current().grad_enabled; }));
  ThreadState::current().grad_enabled = true;
  EXPECT_TRUE(w.run([] { return ThreadState::current().grad_enabled; }));
}

TEST(TaskGroup, JoinsEveryTaskAndReportsErrorsByIndex) {
  Worker a("a", nullptr, nullptr), b("b", nullptr, nullptr), c("c", nullptr, nullptr);
  std::atomic<int> finished{0};
  TaskGroup group(3);
  group.submit(0, a, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the slow one
    finished.fetch_add(1);
  });
  group.submit(1, b, [&] {
    finished.fetch_add(1);
    DP_THROW(kCallback, "replica failed");
  });
  group.submit(2, c, [&] { finished.fetch_add(1); });
  const auto& errors = group.wait();
  EXPECT_EQ(finished.load(), 3);  // the slow task was waited for
  EXPECT_FALSE(errors[0]);
  ASSERT_TRUE(errors[1]);
  EXPECT_FALSE(errors[2]);
  EXPECT_THROW(std::rethrow_exception(errors[1]), Error);
}

}  // namespace
}  // namespace dp
