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

double& PhaseStats::slot(PhaseTimes& t, Phase p) {
  return t.*kPhases[static_cast<size_t>(p)].field;
}

void PhaseStats::begin_call() {
  std::lock_guard<std::mutex> lock(mu_);
  last_ = PhaseTimes{};
  ++calls_;
}

void PhaseStats::add(Phase phase, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  slot(last_, phase) += seconds;
  slot(total_, phase) += seconds;
}

void PhaseStats::mark_backward_start() {
  std::lock_guard<std::mutex> lock(mu_);
  backward_start_ = Clock::now();
  backward_started_ = true;
}

void PhaseStats::backward_reached_reduce() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!backward_started_) return;
  const double s = std::chrono::duration<double>(Clock::now() - backward_start_).count();
  last_.backward += s;
  total_.backward += s;
  backward_started_ = false;
}

void PhaseStats::read(PhaseTimes* last, PhaseTimes* total, uint64_t* calls) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (last) *last = last_;
  if (total) *total = total_;
  if (calls) *calls = calls_;
}

void PhaseStats::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  last_ = total_ = PhaseTimes{};
  calls_ = 0;
  backward_started_ = false;
}

}  // namespace dp
