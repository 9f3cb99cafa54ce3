#include "device/cpu/fault.h"

#ifdef DP_FAULT_INJECTION
#include <atomic>

namespace dp::fault {

namespace {
std::atomic<int64_t> armed{0};
std::atomic<int64_t> seen{0};
}  // namespace

void fail_allocation(int64_t n) {
  seen = 0;
  armed = n;
}

int64_t allocations() {
  return seen.load();
}

bool allocation_fails() {
  const int64_t k = seen.fetch_add(1) + 1;
  const int64_t n = armed.load();
  return n > 0 && k == n;
}

}  // namespace dp::fault
#endif
