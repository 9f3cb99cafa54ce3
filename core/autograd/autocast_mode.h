// Autocast mode (mixed precision): the dtype that the lower-precision ops compute in, per
// thread and carried onto the workers with each task (ThreadState), as grad mode is.
// kFloat32 means off. The policy itself, which op casts what, is in ops/autocast.h. The
// backward engine runs with it off: each backward op computes in its forward's dtypes.
#pragma once

#include "device/worker.h"

namespace dp {

struct AutocastMode {
  static DType dtype() { return ThreadState::current().autocast; }
  static bool enabled() { return dtype() != DType::kFloat32; }
  static void set(DType dtype) { ThreadState::current().autocast = dtype; }
};

class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype) : previous_(AutocastMode::dtype()) {
    AutocastMode::set(dtype);
  }
  ~AutocastGuard() { AutocastMode::set(previous_); }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DType previous_;
};

}  // namespace dp
