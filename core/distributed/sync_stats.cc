#include "distributed/sync_stats.h"

namespace dp {

namespace {

double& slot(SyncTimes& t, SyncStats::Part part) {
  switch (part) {
    case SyncStats::Part::kBufferBroadcast:
      return t.buffer_broadcast;
    case SyncStats::Part::kAllreduce:
      return t.allreduce;
    case SyncStats::Part::kSyncWait:
      break;
  }
  return t.sync_wait;
}

}  // namespace

void SyncStats::begin_call() {
  std::lock_guard<std::mutex> lock(mu_);
  last_ = SyncTimes{};
  ++calls_;
}

void SyncStats::add(Part part, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  slot(last_, part) += seconds;
  slot(total_, part) += seconds;
}

void SyncStats::read(SyncTimes* last, SyncTimes* total, uint64_t* calls) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (last) *last = last_;
  if (total) *total = total_;
  if (calls) *calls = calls_;
}

void SyncStats::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  last_ = total_ = SyncTimes{};
  calls_ = 0;
}

}  // namespace dp
