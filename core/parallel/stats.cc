#include "parallel/stats.h"

namespace dp {

namespace {

// Each phase's name (in a trace) and its field of PhaseTimes, in the order of Phase.
struct PhaseInfo {
  const char* name;
  double PhaseTimes::*field;
};
constexpr PhaseInfo kPhases[] = {
    {"scatter", &PhaseTimes::scatter},   {"replicate", &PhaseTimes::replicate},
    {"apply", &PhaseTimes::apply},       {"gather", &PhaseTimes::gather},
    {"backward", &PhaseTimes::backward}, {"reduce", &PhaseTimes::reduce},
};
static_assert(sizeof kPhases / sizeof kPhases[0] == static_cast<size_t>(Phase::kReduce) + 1,
              "one entry per Phase");

}  // namespace

const char* phase_name(Phase phase) {
  return kPhases[static_cast<size_t>(phase)].name;
}

void PhaseStats::add(Phase phase, double seconds) {
  times_.add(kPhases[static_cast<size_t>(phase)].field, seconds);
}

void PhaseStats::mark_backward_start() {
  std::lock_guard<std::mutex> lock(mu_);
  backward_start_ = Clock::now();
  backward_started_ = true;
}

void PhaseStats::backward_reached_reduce() {
  double seconds = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!backward_started_) return;
    seconds = std::chrono::duration<double>(Clock::now() - backward_start_).count();
    backward_started_ = false;
  }
  times_.add(&PhaseTimes::backward, seconds);
}

void PhaseStats::reset() {
  times_.reset();
  std::lock_guard<std::mutex> lock(mu_);
  backward_started_ = false;
}

}  // namespace dp
