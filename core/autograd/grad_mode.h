// Grad mode: whether ops record graph nodes. Per thread, and carried onto the workers
// with each task (ThreadState), so a replica's forward sees its caller's mode.
#pragma once

#include "device/worker.h"

namespace dp {

struct GradMode {
  static bool enabled() { return ThreadState::current().grad_enabled; }
  static void set(bool enabled) { ThreadState::current().grad_enabled = enabled; }
};

class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(GradMode::enabled()) { GradMode::set(enabled); }
  ~GradModeGuard() { GradMode::set(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace dp
