// A timeline of where a program's time goes, for reading in a trace viewer: with the
// environment variable DP_TRACE=FILE set, every thread that does library work (the
// caller's, each device's worker) records spans (the DataParallel phases on the caller;
// replica forwards, autograd nodes, gradient sums, optimizer updates and autocast's casts
// on the workers), and the process writes them to FILE at exit in the Chrome trace format
// (JSON; open it in https://ui.perfetto.dev or chrome://tracing; bench/trace_summary.py
// sums it up).
// Without DP_TRACE a span costs one relaxed atomic load. A CUDA device's work is
// asynchronous: its worker's spans show when the work was issued, not when the GPU ran it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace dp::trace {

namespace detail {
extern std::atomic<bool> g_on;
double now_us();
void record(const char* name, int64_t arg, double begin_us, double end_us);
}  // namespace detail

// True while spans are being recorded.
inline bool enabled() {
  return detail::g_on.load(std::memory_order_relaxed);
}

// Records from now on and writes the trace to `path` at process exit (or at stop()).
// Called once with DP_TRACE's value when the first context is created; tests call it
// directly. A second start while recording changes only the path.
void start(const std::string& path);
// Stops recording, writes what was recorded to the path given to start() and forgets it.
// Returns false (and writes nothing) when nothing was being recorded or the file could
// not be written.
bool stop();

// Names the calling thread in the trace: each device's worker names its own ("cpu:0");
// every other thread is a "caller" of the library.
void name_thread(const std::string& name);

// The time from construction to destruction on the calling thread, as one span. `name`
// must outlive the trace (a string literal, or a node's static name); `arg` >= 0 is shown
// as the span's argument (a replica index).
class Span {
 public:
  explicit Span(const char* name, int64_t arg = -1)
      : name_(enabled() ? name : nullptr), arg_(arg), begin_(name_ ? detail::now_us() : 0) {}
  ~Span() {
    if (name_) detail::record(name_, arg_, begin_, detail::now_us());
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  const char* name_;
  int64_t arg_;
  double begin_;
};

}  // namespace dp::trace
