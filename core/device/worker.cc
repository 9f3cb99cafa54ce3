#include "device/worker.h"

#include "device/trace.h"
#include "error.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#define DP_CPU_RELAX() _mm_pause()
#else
#define DP_CPU_RELAX() ((void)0)
#endif

namespace dp {

int spin_microseconds() {
  static const int us = [] {
    const char* env = std::getenv("DP_SPIN_US");
    if (!env || !*env) return 1000;
    const int v = std::atoi(env);
    return v < 0 ? 0 : v;
  }();
  return us;
}

namespace {

// What the calling thread is to the workers, in one thread-local: a function that reads
// several of these looks the thread's storage up once (a call each, in a shared library).
struct ThreadRole {
  bool on_worker = false;          // set on every worker's thread
  Worker* own_worker = nullptr;    // the worker whose thread this is
  Worker* inline_owner = nullptr;  // the worker whose work this thread runs inline
};
thread_local ThreadRole tl_role;

// Spins until ready() or the spin budget is spent; true if ready.
template <class Ready>
bool spin_until_ready(Ready&& ready) {
  const int budget = spin_microseconds();
  if (budget == 0) return ready();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(budget);
  // Pausing only for the first iterations (a few microseconds), then yielding: with more
  // threads than cores (the caller and one worker per core), a spinning thread must give
  // its core to a thread that has work.
  for (int i = 0;; ++i) {
    if (ready()) return true;
    DP_CPU_RELAX();
    if (i >= 256 && (i & 7) == 7) {
      sched_yield();
      if (std::chrono::steady_clock::now() > deadline) return ready();
    }
  }
}

}  // namespace

bool spin_until(const std::function<bool()>& ready) {
  return spin_until_ready(ready);
}

void Latch::count_down() {
  if (count_.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
      sleeping_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }
  finished_.fetch_add(1, std::memory_order_release);  // the last touch of *this
}

void Latch::wait() {
  if (!spin_until_ready([this] { return count_.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(mu_);
    sleeping_.store(true, std::memory_order_seq_cst);
    cv_.wait(lock, [this] { return count_.load(std::memory_order_acquire) == 0; });
  }
  // Every counter must be done with the latch before the caller may destroy it. That is
  // a few instructions away, but the counter may have been preempted right there (by this
  // very thread, woken onto its core): yield, or wait out the scheduler's time slice.
  for (int i = 0; finished_.load(std::memory_order_acquire) != total_; ++i) {
    DP_CPU_RELAX();
    if (i >= 64) sched_yield();
  }
}

bool Worker::on_a_worker() {
  return tl_role.on_worker;
}

Worker*& Worker::inline_owner() {
  return tl_role.inline_owner;
}

Worker* Worker::own_worker_running_its_task() {
  const ThreadRole& role = tl_role;
  return role.inline_owner ? nullptr : role.own_worker;
}

bool Worker::run_one_queued() noexcept {
  if (queued_.load(std::memory_order_acquire) == 0) return false;
  Task task;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it =
        std::find_if(tasks_.begin(), tasks_.end(), [](const Queued& q) { return q.from_a_worker; });
    if (it == tasks_.end()) return false;
    task = std::move(it->task);
    tasks_.erase(it);
    queued_.fetch_sub(1, std::memory_order_release);
  }
  // As at the top of the loop: the waiting task's flags are not the queued one's (tasks
  // from run_on_thread and TaskGroup set their submitter's own).
  ThreadStateScope fresh{ThreadState{}};
  task();  // a task does not throw (post); if one did, noexcept ends the process here
  return true;
}

void Worker::wait_helping(Latch& done) {
  Worker* self = own_worker_running_its_task();
  if (!self) {
    done.wait();
    return;
  }
  // Progress is the latch opening or a task run (the predicate runs it). Spins as
  // Latch::wait does while there is progress; once a spin passes with none, polls at
  // growing intervals of up to 200 us: there is no one condition variable for both the
  // latch and the queue, and a worker waiting on another worker's thread is rare (a custom
  // forward calling into another device while that device is busy).
  auto progress = [&] { return done.ready() || self->run_one_queued(); };
  while (!done.ready()) {
    if (spin_until_ready(progress)) continue;
    for (int nap_us = 1; !progress(); nap_us = std::min(nap_us * 2, 200)) {
      std::this_thread::sleep_for(std::chrono::microseconds(nap_us));
    }
  }
  done.wait();  // returns at once; waits out the counter's last touch of the latch
}

Worker::InlineScope::InlineScope(Worker& w)
    : w_(w), saved_owner_(tl_role.inline_owner), saved_on_worker_(tl_role.on_worker) {
  ThreadRole& role = tl_role;
  role.inline_owner = &w;
  role.on_worker = true;
  if (w_.inline_hooks_->enter) w_.inline_hooks_->enter();
}

Worker::InlineScope::~InlineScope() {
  if (w_.inline_hooks_->leave) w_.inline_hooks_->leave();
  ThreadRole& role = tl_role;
  role.on_worker = saved_on_worker_;
  role.inline_owner = saved_owner_;
}

Worker::Worker(std::string name, std::function<void()> on_start, std::function<void()> on_stop,
               std::optional<InlineHooks> inline_hooks)
    : name_(std::move(name)), inline_hooks_(std::move(inline_hooks)) {
  // The constructor returns after on_start has run on the new thread, so what on_start
  // sets up (a device's state) is visible to every later task and caller.
  Latch started(1);
  std::exception_ptr start_error;
  thread_ = std::thread([this, &started, &start_error, on_start = std::move(on_start),
                         on_stop = std::move(on_stop)]() mutable {
    thread_id_ = std::this_thread::get_id();
    tl_role.on_worker = true;
    trace::name_thread(name_);
    try {
      if (on_start) on_start();
    } catch (...) {
      start_error = std::current_exception();
    }
    const bool failed = start_error != nullptr;
    started.count_down();
    if (!failed) loop(std::move(on_stop));
  });
  started.wait();
  if (start_error) {
    thread_.join();
    std::rethrow_exception(start_error);
  }
}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queued_.fetch_add(1, std::memory_order_release);  // ends a spin at once
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Worker::post(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(Queued{std::move(task), tl_role.on_worker});
    queued_.fetch_add(1, std::memory_order_release);
  }
  // Set under the lock by the worker before it waits, so this read cannot miss a sleep
  // that began before our push.
  if (sleeping_.load(std::memory_order_seq_cst)) cv_.notify_one();
}

void Worker::loop(std::function<void()> on_stop) {
  tl_role.own_worker = this;  // from here on, code on this thread runs in a task (holding exec_mu_)
  for (;;) {
    spin_until_ready([this] { return queued_.load(std::memory_order_acquire) > 0; });
    // Execution lock first (an inline caller may hold it), then the queue.
    std::unique_lock<std::mutex> exec(exec_mu_);
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (tasks_.empty() && !stopping_) {
        // Sleep without the execution lock, so callers can run inline meanwhile.
        exec.unlock();
        sleeping_.store(true, std::memory_order_seq_cst);
        cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        sleeping_.store(false, std::memory_order_relaxed);
        continue;  // take the locks again in order
      }
      if (tasks_.empty()) break;  // stopping, and nothing left to run
      task = std::move(tasks_.front().task);
      tasks_.pop_front();
      queued_.fetch_sub(1, std::memory_order_release);
    }
    task();
  }
  tl_role.own_worker = nullptr;
  if (on_stop) on_stop();
}

std::exception_ptr thread_ended_error() {
  return std::make_exception_ptr(
      Error(Code::kInternal,
            "the thread running this task was ended (pthread_exit) before it "
            "finished: is the process exiting?"));
}

void TaskGroup::submit(size_t i, Worker& w, std::function<void()> f) {
  const ThreadState state = ThreadState::current();
  w.post([this, i, state, f = std::move(f)] {
    try {
      ThreadStateScope scope(state);
      f();
    } catch (abi::__forced_unwind&) {  // see thread_ended_error
      errors_[i] = thread_ended_error();
      latch_.count_down();
      throw;
    } catch (...) {
      errors_[i] = std::current_exception();
    }
    latch_.count_down();
  });
}

void TaskGroup::run(size_t i, Worker& w, const std::function<void()>& f) {
  try {
    w.run(f);
  } catch (abi::__forced_unwind&) {
    // The caller's frame, which the other tasks use, goes with the unwinding: they
    // finish first.
    errors_[i] = thread_ended_error();
    latch_.count_down();
    latch_.wait();
    throw;
  } catch (...) {
    errors_[i] = std::current_exception();
  }
  latch_.count_down();
}

const std::vector<std::exception_ptr>& TaskGroup::wait() {
  Worker::wait_helping(latch_);
  return errors_;
}

}  // namespace dp
