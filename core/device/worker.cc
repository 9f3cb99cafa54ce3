#include "device/worker.h"

namespace dp {

Worker::Worker(std::string name, std::function<void()> on_start, std::function<void()> on_stop)
    : name_(std::move(name)) {
  Latch started(1);
  thread_ = std::thread(
      [this, &started, on_start = std::move(on_start), on_stop = std::move(on_stop)]() mutable {
        thread_id_ = std::this_thread::get_id();
        started.count_down();
        loop(std::move(on_start), std::move(on_stop));
      });
  started.wait();
}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Worker::post(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void Worker::loop(std::function<void()> on_start, std::function<void()> on_stop) {
  if (on_start) on_start();
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) break;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
  if (on_stop) on_stop();
}

void TaskGroup::submit(size_t i, Worker& w, std::function<void()> f) {
  const ThreadState state = ThreadState::current();
  w.post([this, i, state, f = std::move(f)] {
    try {
      ThreadStateScope scope(state);
      f();
    } catch (...) {
      errors_[i] = std::current_exception();
    }
    latch_.count_down();
  });
}

const std::vector<std::exception_ptr>& TaskGroup::wait() {
  latch_.wait();
  return errors_;
}

}  // namespace dp
