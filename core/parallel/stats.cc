#include "parallel/stats.h"

namespace dp {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kScatter:
      return "scatter";
    case Phase::kReplicate:
      return "replicate";
    case Phase::kApply:
      return "apply";
    case Phase::kGather:
      return "gather";
    case Phase::kBackward:
      return "backward";
    case Phase::kReduce:
      return "reduce";
  }
  return "phase";
}

double& PhaseStats::slot(PhaseTimes& t, Phase p) {
  switch (p) {
    case Phase::kScatter:
      return t.scatter;
    case Phase::kReplicate:
      return t.replicate;
    case Phase::kApply:
      return t.apply;
    case Phase::kGather:
      return t.gather;
    case Phase::kBackward:
      return t.backward;
    case Phase::kReduce:
      return t.reduce;
  }
  return t.scatter;
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
