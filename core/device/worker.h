// Worker: one persistent thread per device that runs the device's work, one task at a
// time in the order queued, except that a worker's thread waiting for another worker runs
// work other workers queued for it meanwhile (see run_on_thread). Callers hand it tasks
// and either wait (run) or join a TaskGroup; a task that throws hands its exception to
// whoever waits. The caller's ThreadState (grad mode) is carried into every task, so a
// task sees the same mode as the thread that submitted it.
#pragma once

#include <cxxabi.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "device/dtype.h"

namespace dp {

// Per-thread flags that follow work onto workers.
struct ThreadState {
  bool grad_enabled = true;
  // Inside a replica of a DataParallel over several devices, or work one asked for
  // (parallel_apply refuses to nest another such DataParallel there).
  bool in_replica = false;
  // Autocast's dtype (ops/autocast.h): kBFloat16 when on, kFloat32 when off.
  DType autocast = DType::kFloat32;
  static ThreadState& current() {
    thread_local ThreadState state;
    return state;
  }
};

// Lets a worker's work run on a caller's thread (see Worker::run): enter() prepares the
// thread as the worker's own is prepared (for a CPU device: it may use the device's
// kernels, with one OpenMP thread) and leave() undoes that. Calls nest strictly.
struct InlineHooks {
  std::function<void()> enter;
  std::function<void()> leave;
};

class Latch;

class Worker {
 public:
  using Task = std::function<void()>;

  // on_start/on_stop run on the new thread before the first and after the last task; the
  // constructor returns once on_start has run (rethrowing its exception, if any).
  // With `inline_hooks` set, run() may execute on the caller's thread (see run).
  Worker(std::string name, std::function<void()> on_start, std::function<void()> on_stop,
         std::optional<InlineHooks> inline_hooks = std::nullopt);
  ~Worker();  // runs the tasks already queued, then joins
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // True on this worker's own thread, and on a thread running its work inline.
  bool is_current() const {
    return std::this_thread::get_id() == thread_id_ || inline_owner() == this;
  }
  // True while the worker's thread sleeps (it spun for DP_SPIN_US with nothing to do).
  // Handing it work then costs a wake-up (tens of microseconds on a virtual machine), so
  // long work is better run through run() on the caller's thread. While it spins, a
  // hand-off costs about a microsecond, and long work the caller ran itself would leave
  // that thread spinning beside it, taking a core the other workers may need.
  bool asleep() const { return sleeping_.load(std::memory_order_relaxed); }
  // True on any worker's thread, and on a thread running a worker's work inline.
  static bool on_a_worker();
  // Waits for done. On a worker's own thread running one of its tasks, it runs meanwhile
  // the tasks other workers' threads queued on that worker: no other thread can (this one
  // holds the worker), and the work waited for may be waiting for them. Two workers whose
  // tasks each wait for work on the other then both finish, every task on the thread of
  // the worker it was queued on. Such a task runs inside the waiting one, which is
  // suspended in a library call meanwhile (a custom forward may so run inside another).
  // Tasks queued from other threads (yours) wait until the running task ends, as before.
  static void wait_helping(Latch& done);
  const std::string& name() const { return name_; }

  // Queues a task. The task must not throw (wrap it; see TaskGroup and run).
  void post(Task task);

  // Runs f on this worker and returns its result, rethrowing its exception. Runs inline
  // when called from this worker's own thread. A worker with inline hooks that is idle
  // (nothing queued, no task running) also runs f on the caller's thread, holding the
  // worker's execution lock, which saves two thread hand-offs on a small operation;
  // meanwhile the thread counts as the worker (is_current, on_a_worker).
  template <class F>
  auto run(F&& f) -> std::invoke_result_t<F&>;
  // As run, but never on the caller's thread unless it is this worker's own: for user
  // callbacks (a custom module's forward), documented to run on the device's worker.
  // Called from another worker's own thread (running a task of its own worker, not work
  // inline for a third), it waits as wait_helping does.
  template <class F>
  auto run_on_thread(F&& f) -> std::invoke_result_t<F&>;

 private:
  void loop(std::function<void()> on_stop);
  static Worker*& inline_owner();  // the worker whose work this thread runs inline
  // The worker whose thread this is, while it runs that worker's own task (not work inline
  // for another worker); else nullptr.
  static Worker* own_worker_running_its_task();
  // Runs the oldest task queued from a worker's thread, if any, on this (the worker's own)
  // thread, which holds exec_mu_.
  bool run_one_queued() noexcept;

  // Marks the calling thread as running this worker's work for its lifetime.
  class InlineScope {
   public:
    explicit InlineScope(Worker& w);
    ~InlineScope();
    InlineScope(const InlineScope&) = delete;
    InlineScope& operator=(const InlineScope&) = delete;

   private:
    Worker& w_;
    Worker* saved_owner_;
    bool saved_on_worker_;
  };

  std::string name_;
  std::optional<InlineHooks> inline_hooks_;
  // Held by whoever executes this worker's work: the worker thread for each task, or a
  // caller running inline. Taken before mu_ when both are held.
  std::mutex exec_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  struct Queued {
    Task task;
    bool from_a_worker;  // queued from a worker's thread: wait_helping may run it
  };
  std::deque<Queued> tasks_;
  std::atomic<size_t> queued_{0};      // tasks_.size(), readable without the lock
  std::atomic<bool> sleeping_{false};  // the thread waits on cv_: posters must notify
  bool stopping_ = false;
  std::thread thread_;
  std::thread::id thread_id_;
};

// A countdown a thread waits on. The waiter spins for a short while before it sleeps, and
// a counter wakes it only if it sleeps: hand-offs between busy threads then cost no system
// call. wait() returns only after every count_down() has stopped touching the latch, so
// a latch on the waiter's stack is safe.
class Latch {
 public:
  explicit Latch(int count) : count_(count), total_(count) {}
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;
  void count_down();
  void wait();
  // True once every count_down() has been called (wait() would not block).
  bool ready() const { return count_.load(std::memory_order_acquire) == 0; }

 private:
  std::atomic<int> count_;
  std::atomic<bool> sleeping_{false};
  std::atomic<int> finished_{0};
  const int total_;
  std::mutex mu_;
  std::condition_variable cv_;
};

// How long a waiting or idle thread spins before it sleeps (microseconds): DP_SPIN_US,
// default 1000. Spinning keeps hand-offs at a few hundred nanoseconds while work flows
// (a futex wake costs tens of microseconds on a virtual machine, and a training step has
// serial gaps of ~100 us between parallel phases); spinners yield their core after the
// first few microseconds. 0 makes every wait sleep at once.
int spin_microseconds();

// Spins like a waiting Latch (yielding the core after the first few microseconds) until
// ready() or the DP_SPIN_US budget is spent; returns ready(). For a waiter that sleeps
// afterwards.
bool spin_until(const std::function<bool()>& ready);

// Runs tasks on several workers at once and waits for all of them. Every task is joined
// even when some fail; wait() returns the exceptions by task index.
class TaskGroup {
 public:
  explicit TaskGroup(size_t n) : latch_(static_cast<int>(n)), errors_(n) {}
  // Task i on worker w. Exactly n tasks must be submitted before wait().
  void submit(size_t i, Worker& w, std::function<void()> f);
  // Task i through w.run, now: on the calling thread while w is idle, else on w's thread
  // with this call waiting for it. Submit the other tasks first, so they run meanwhile.
  void run(size_t i, Worker& w, const std::function<void()>& f);
  // Waits for every task; errors()[i] is task i's exception or null.
  const std::vector<std::exception_ptr>& wait();

 private:
  Latch latch_;
  std::vector<std::exception_ptr> errors_;
};

// Carries `state` into a task for its duration.
class ThreadStateScope {
 public:
  explicit ThreadStateScope(const ThreadState& state) : saved_(ThreadState::current()) {
    ThreadState::current() = state;
  }
  ~ThreadStateScope() { ThreadState::current() = saved_; }

 private:
  ThreadState saved_;
};

template <class F>
auto Worker::run(F&& f) -> std::invoke_result_t<F&> {
  if (is_current()) return f();
  if (inline_hooks_ && queued_.load(std::memory_order_acquire) == 0 && exec_mu_.try_lock()) {
    std::unique_lock<std::mutex> exec(exec_mu_, std::adopt_lock);
    // The worker pops a task only while it holds exec_mu_, so with the lock held an empty
    // queue means nothing submitted before this call is waiting or running.
    if (queued_.load(std::memory_order_acquire) == 0) {
      InlineScope scope(*this);
      return f();
    }
  }
  return run_on_thread(std::forward<F>(f));
}

// A thread ended by pthread_exit while it runs a task (an embedding runtime ending its
// threads, such as Python at exit ending one that waits for its lock) unwinds with
// abi::__forced_unwind, which no catch may swallow (glibc aborts the process). The task's
// waiter gets this error instead of its result, and the unwinding goes on.
std::exception_ptr thread_ended_error();

template <class F>
auto Worker::run_on_thread(F&& f) -> std::invoke_result_t<F&> {
  using R = std::invoke_result_t<F&>;
  if (std::this_thread::get_id() == thread_id_) return f();
  const ThreadState state = ThreadState::current();
  Latch done(1);
  std::exception_ptr error;
  if constexpr (std::is_void_v<R>) {
    post([&] {
      try {
        ThreadStateScope scope(state);
        f();
      } catch (abi::__forced_unwind&) {
        error = thread_ended_error();
        done.count_down();
        throw;
      } catch (...) {
        error = std::current_exception();
      }
      done.count_down();
    });
    wait_helping(done);
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<R> result;
    post([&] {
      try {
        ThreadStateScope scope(state);
        result.emplace(f());
      } catch (abi::__forced_unwind&) {
        error = thread_ended_error();
        done.count_down();
        throw;
      } catch (...) {
        error = std::current_exception();
      }
      done.count_down();
    });
    wait_helping(done);
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
}

}  // namespace dp
