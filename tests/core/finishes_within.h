// A guard for tests of code that used to hang: the body runs on a thread of its own, and a
// body still running after `seconds` is reported as a hang and ends the process (its
// threads, stuck, could never be joined), so ctest sees a failure instead of a timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace dp::testing_util {

template <class F>
void finishes_within(int seconds, const char* what, F&& body) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    body();
    done.store(true);
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!done.load()) {
    std::fprintf(stderr, "%s: still running after %d s (a hang)\n", what, seconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
  t.join();
}

}  // namespace dp::testing_util
