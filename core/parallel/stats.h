// Per-phase timing of the DataParallel pipeline, for the last call and accumulated.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

#include "device/trace.h"

namespace dp {

struct PhaseTimes {
  double scatter = 0, replicate = 0, apply = 0, gather = 0, backward = 0, reduce = 0;
};

// stats.cc names the phases and maps them to PhaseTimes in this order.
enum class Phase { kScatter, kReplicate, kApply, kGather, kBackward, kReduce };

// Seconds of a call repeated step after step, by part (a double member of Times), for the
// last call and accumulated since creation or reset. Thread-safe.
template <class Times>
class StepTimes {
 public:
  // A call starts: the last call's times are cleared.
  void begin_call() {
    std::lock_guard<std::mutex> lock(mu_);
    last_ = Times{};
    ++calls_;
  }
  void add(double Times::*part, double seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    last_.*part += seconds;
    total_.*part += seconds;
  }
  void read(Times* last, Times* total, uint64_t* calls) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (last) *last = last_;
    if (total) *total = total_;
    if (calls) *calls = calls_;
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mu_);
    last_ = total_ = Times{};
    calls_ = 0;
  }

 private:
  mutable std::mutex mu_;
  Times last_{}, total_{};
  uint64_t calls_ = 0;
};

class PhaseStats {
 public:
  using Clock = std::chrono::steady_clock;

  // A forward starts: the last call's times are cleared.
  void begin_call() { times_.begin_call(); }
  void add(Phase phase, double seconds);
  // Gather's backward marks when backward reached the wrapper; the reduce then charges
  // the time since to the backward phase.
  void mark_backward_start();
  void backward_reached_reduce();

  void read(PhaseTimes* last, PhaseTimes* total, uint64_t* calls) const {
    times_.read(last, total, calls);
  }
  void reset();

 private:
  StepTimes<PhaseTimes> times_;
  std::mutex mu_;  // the backward's start
  Clock::time_point backward_start_{};
  bool backward_started_ = false;
};

// The phase's name in a trace ("scatter", ...).
const char* phase_name(Phase phase);

// Adds the time from construction to destruction to a phase (stats may be null), and
// records it as a span when tracing (see device/trace.h).
class PhaseTimer {
 public:
  PhaseTimer(PhaseStats* stats, Phase phase)
      : stats_(stats), phase_(phase), start_(PhaseStats::Clock::now()), span_(phase_name(phase)) {}
  ~PhaseTimer() {
    if (stats_) {
      stats_->add(phase_, std::chrono::duration<double>(PhaseStats::Clock::now() - start_).count());
    }
  }

 private:
  PhaseStats* stats_;
  Phase phase_;
  PhaseStats::Clock::time_point start_;
  trace::Span span_;
};

}  // namespace dp
