// Seconds a DistributedDataParallel step spends on its ranks' synchronisation, beside the
// phases of the DataParallel inside the rank (parallel/stats.h): for the last step and
// accumulated (dp_ddp_stats).
#pragma once

#include <chrono>

#include "parallel/stats.h"

namespace dp {

struct SyncTimes {
  double buffer_broadcast = 0;  // rank 0's buffers to every rank, before the forward
  double allreduce = 0;         // the gradient buckets' allreduce, summed over the buckets
  double sync_wait = 0;         // backward's end waiting for those allreduces
};

// The allreduce times arrive from the process group's communication thread.
using SyncStats = StepTimes<SyncTimes>;

// Seconds since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace dp
