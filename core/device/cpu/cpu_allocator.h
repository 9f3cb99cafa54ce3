// The CPU devices' memory: aligned blocks from the C library, with freed blocks kept per
// size for reuse. A training step allocates the same sizes every time; reusing blocks
// saves the page faults that fresh large allocations cost (each big malloc is a new
// mmap, touched page by page), which made elementwise ops on large activations several
// times slower than their memory traffic.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

namespace dp {

class CpuBlockCache {
 public:
  // limit_bytes: the most memory kept in freed blocks. A freed block that would pass it
  // makes room by returning cached blocks to the C library, largest first; a block
  // larger than the limit goes back itself.
  explicit CpuBlockCache(size_t limit_bytes) : limit_(limit_bytes) {}
  ~CpuBlockCache();
  CpuBlockCache(const CpuBlockCache&) = delete;
  CpuBlockCache& operator=(const CpuBlockCache&) = delete;

  // 64-byte aligned; nullptr when the system has no memory left.
  void* allocate(size_t nbytes);
  void deallocate(void* p, size_t nbytes) noexcept;
  // Returns every cached block to the C library.
  void trim() noexcept;
  size_t cached_bytes() const;

  // The size class a request is served from: 64-byte multiples up to 64 KiB, then
  // 4 KiB multiples (so batches of slightly different sizes still reuse blocks).
  static size_t round_up(size_t nbytes);

 private:
  const size_t limit_;
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
};

// The per-device cache limit: DP_CPU_CACHE_MB if set, else 1024 MiB.
size_t cpu_cache_limit_bytes();

}  // namespace dp
