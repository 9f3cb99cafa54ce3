#include "device/cpu/cpu_allocator.h"

#include <cstdlib>
#include <iterator>

namespace dp {

size_t cpu_cache_limit_bytes() {
  if (const char* env = std::getenv("DP_CPU_CACHE_MB"); env && *env) {
    const long mb = std::atol(env);
    return mb > 0 ? static_cast<size_t>(mb) << 20 : 0;
  }
  return size_t{1024} << 20;
}

size_t CpuBlockCache::round_up(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  const size_t quantum = nbytes <= (64u << 10) ? 64 : 4096;
  return (nbytes + quantum - 1) / quantum * quantum;
}

CpuBlockCache::~CpuBlockCache() {
  trim();
}

void* CpuBlockCache::allocate(size_t nbytes) {
  const size_t size = round_up(nbytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();  // an emptied size class stays, for the block's return
      cached_ -= size;
      return p;
    }
  }
  return std::aligned_alloc(64, size);
}

void CpuBlockCache::deallocate(void* p, size_t nbytes) noexcept {
  if (!p) return;
  const size_t size = round_up(nbytes);
  std::vector<void*> evicted;  // freed after the lock is released
  bool kept = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    try {
      if (size <= limit_) {
        // The block just freed is the likeliest to be asked for again (the same step of
        // a loop): make room for it by giving back cached blocks, largest first.
        while (cached_ + size > limit_) {
          auto largest = std::prev(free_.end());
          if (largest->second.empty()) {
            free_.erase(largest);
            continue;
          }
          evicted.push_back(largest->second.back());
          largest->second.pop_back();
          cached_ -= largest->first;
          if (largest->second.empty()) free_.erase(largest);
        }
        free_[size].push_back(p);
        cached_ += size;
        kept = true;
      }
    } catch (...) {
      // No memory for the bookkeeping: give the block back instead.
    }
  }
  for (void* e : evicted) std::free(e);
  if (!kept) std::free(p);
}

void CpuBlockCache::trim() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, blocks] : free_) {
    for (void* p : blocks) std::free(p);
  }
  free_.clear();
  cached_ = 0;
}

size_t CpuBlockCache::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

}  // namespace dp
