// Workers: the persistent per-device threads and the task helpers on top of them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "device/worker.h"
#include "error.h"
#include "finishes_within.h"

namespace dp {
namespace {

using testing_util::finishes_within;

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

// A worker whose work may run inline, counting how often its hooks ran.
struct InlineWorker {
  std::atomic<int> entered{0}, left{0};
  Worker w{"inline", nullptr, nullptr,
           InlineHooks{[this] { entered.fetch_add(1); }, [this] { left.fetch_add(1); }}};
};

TEST(Worker, RunOnAnIdleInlineWorkerUsesTheCallersThreadAsTheWorker) {
  InlineWorker iw;
  const auto caller = std::this_thread::get_id();
  bool current = false, on_a_worker = false;
  const auto id = iw.w.run([&] {
    current = iw.w.is_current();
    on_a_worker = Worker::on_a_worker();
    return std::this_thread::get_id();
  });
  EXPECT_EQ(id, caller);
  EXPECT_TRUE(current);
  EXPECT_TRUE(on_a_worker);
  EXPECT_EQ(iw.entered.load(), 1);
  EXPECT_EQ(iw.left.load(), 1);
  EXPECT_FALSE(iw.w.is_current());  // only for the call's duration
  EXPECT_FALSE(Worker::on_a_worker());
}

TEST(Worker, RunOnThreadAlwaysUsesTheWorkerThread) {
  InlineWorker iw;
  const auto caller = std::this_thread::get_id();
  EXPECT_NE(iw.w.run_on_thread([] { return std::this_thread::get_id(); }), caller);
  EXPECT_EQ(iw.entered.load(), 0);
}

TEST(Worker, RunDoesNotOvertakeQueuedWorkAndNeverOverlapsIt) {
  InlineWorker iw;
  std::atomic<bool> release{false};
  std::atomic<int> running{0}, overlaps{0};
  std::vector<int> order;  // written only by whoever holds the worker
  auto step = [&](int k) {
    if (running.fetch_add(1) != 0) overlaps.fetch_add(1);
    order.push_back(k);
    running.fetch_sub(1);
  };
  // The worker is busy with a blocked task and has one more queued: a run() now must wait
  // behind both instead of running inline.
  iw.w.post([&] {
    while (!release.load()) std::this_thread::yield();
    step(0);
  });
  iw.w.post([&] { step(1); });
  std::thread other([&] { iw.w.run([&] { step(2); }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  release.store(true);
  other.join();
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], 0);
  EXPECT_EQ(order[1], 1);
  EXPECT_EQ(order[2], 2);
  // Many threads at once, with posted tasks mixed in: one execution at a time.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        if (i % 10 == 0) iw.w.post([&] { step(3); });
        iw.w.run([&] { step(4 + t); });
      }
    });
  }
  for (auto& t : threads) t.join();
  iw.w.run_on_thread([] {});  // drains the posts
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(order.size(), 3u + 4 * 500 + 4 * 50);
  EXPECT_GT(iw.entered.load(), 0);  // some ran inline
  EXPECT_EQ(iw.entered.load(), iw.left.load());
}

TEST(Worker, NestedRunOnTheSameWorkerStaysInlineOnTheCaller) {
  InlineWorker iw;
  const auto caller = std::this_thread::get_id();
  const auto inner = iw.w.run([&] { return iw.w.run([] { return std::this_thread::get_id(); }); });
  EXPECT_EQ(inner, caller);
  EXPECT_EQ(iw.entered.load(), 1);  // the nested call did not enter again
}

TEST(Worker, TwoWorkersEachWaitingForTheOthersWorkBothFinish) {
  // A task on a runs work on b while b's task runs work on a: each worker's thread is busy
  // waiting, so it runs what is queued on its own worker meanwhile (the other's request).
  Worker a("a", nullptr, nullptr), b("b", nullptr, nullptr);
  finishes_within(30, "two workers waiting on each other", [&] {
    for (int round = 0; round < 50; ++round) {
      std::atomic<int> arrived{0};
      auto meet = [&] {
        arrived.fetch_add(1);
        while (arrived.load() < 2) std::this_thread::yield();
      };
      std::thread::id ran_a, ran_b;
      int from_b = 0, from_a = 0;
      std::thread ta([&] {
        from_b = a.run_on_thread([&] {
          meet();  // both tasks are running before either asks the other worker
          return b.run_on_thread([&] {
            ran_b = std::this_thread::get_id();
            return 2;
          });
        });
      });
      std::thread tb([&] {
        from_a = b.run_on_thread([&] {
          meet();
          return a.run_on_thread([&] {
            ran_a = std::this_thread::get_id();
            return 1;
          });
        });
      });
      ta.join();
      tb.join();
      ASSERT_EQ(from_b, 2);
      ASSERT_EQ(from_a, 1);
      // Each request ran on the thread of the worker it was for.
      EXPECT_EQ(ran_a, a.run_on_thread([] { return std::this_thread::get_id(); }));
      EXPECT_EQ(ran_b, b.run_on_thread([] { return std::this_thread::get_id(); }));
    }
  });
}

TEST(Worker, WhileItsTaskWaitsAWorkerRunsNoTaskQueuedFromAnotherThread) {
  // Only work other workers queued can be part of a wait cycle; a task from a plain thread
  // still waits for the running task to end.
  Worker a("a", nullptr, nullptr), b("b", nullptr, nullptr);
  finishes_within(30, "a task from a plain thread", [&] {
    std::atomic<bool> waiting{false}, outer_done{false}, plain_ran_early{false};
    std::thread outer([&] {
      a.run_on_thread([&] {
        b.run_on_thread([&] {
          waiting.store(true);  // a's task now waits for this one
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        });
        outer_done.store(true);
      });
    });
    while (!waiting.load()) std::this_thread::yield();
    a.run_on_thread([&] { plain_ran_early.store(!outer_done.load()); });
    outer.join();
    EXPECT_FALSE(plain_ran_early.load());
  });
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
