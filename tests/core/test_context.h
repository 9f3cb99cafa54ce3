// A context of CPU devices only, for the core's tests.
#pragma once

#include <cstdint>
#include <memory>

#include "context/context.h"

namespace dp::testing_util {

inline std::shared_ptr<Context> cpu_context(int devices, uint64_t seed = 0) {
  ContextOptions o;
  o.cpu_devices = devices;
  o.load_cuda = false;
  o.seed = seed;
  return Context::create(o);
}

}  // namespace dp::testing_util
