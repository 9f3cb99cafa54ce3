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

class PhaseStats {
 public:
  using Clock = std::chrono::steady_clock;

  // A forward starts: the last call's times are cleared.
  void begin_call();
  void add(Phase phase, double seconds);
  // Gather's backward marks when backward reached the wrapper; the reduce then charges
  // the time since to the backward phase.
  void mark_backward_start();
  void backward_reached_reduce();

  void read(PhaseTimes* last, PhaseTimes* total, uint64_t* calls) const;
  void reset();

 private:
  static double& slot(PhaseTimes& t, Phase p);
  mutable std::mutex mu_;
  PhaseTimes last_, total_;
  uint64_t calls_ = 0;
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
