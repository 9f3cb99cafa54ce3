// Test-only fault injection (CMake option DP_FAULT_INJECTION): the N-th tensor allocation
// after arming fails as if memory ran out, so tests can walk every allocation of a
// training step and check each failure's error, cleanup and recovery. Process-wide
// state, compiled out of normal builds.
#pragma once

#include <cstdint>

namespace dp::fault {

#ifdef DP_FAULT_INJECTION
// The n-th allocation from now (1-based) fails; 0 disarms.
void fail_allocation(int64_t n);
// Allocations seen since the last fail_allocation call.
int64_t allocations();
// Counts an allocation; true when it is the one to fail.
bool allocation_fails();
#else
inline bool allocation_fails() {
  return false;
}
#endif

}  // namespace dp::fault
