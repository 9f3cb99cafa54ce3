// Seconds a DistributedDataParallel step spends on its ranks' synchronisation, beside the
// phases of the DataParallel inside the rank (parallel/stats.h): for the last step and
// accumulated (dp_ddp_stats).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace dp {

struct SyncTimes {
  double buffer_broadcast = 0;  // rank 0's buffers to every rank, before the forward
  double allreduce = 0;         // the gradient buckets' allreduce, summed over the buckets
  double sync_wait = 0;         // backward's end waiting for those allreduces
};

// Thread-safe: the allreduce times arrive from the process group's communication thread.
class SyncStats {
 public:
  enum class Part { kBufferBroadcast, kAllreduce, kSyncWait };

  // A forward starts: the last step's times are cleared.
  void begin_call();
  void add(Part part, double seconds);
  void read(SyncTimes* last, SyncTimes* total, uint64_t* calls) const;
  void reset();

 private:
  mutable std::mutex mu_;
  SyncTimes last_, total_;
  uint64_t calls_ = 0;
};

// Seconds since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace dp
