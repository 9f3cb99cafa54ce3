// Helpers of the core's tests: a context of CPU devices only, and a tensor's elements on
// the host.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "context/context.h"
#include "ops/ops.h"

namespace dp::testing_util {

inline std::shared_ptr<Context> cpu_context(int devices, uint64_t seed = 0) {
  ContextOptions o;
  o.cpu_devices = devices;
  o.load_cuda = false;
  o.seed = seed;
  return Context::create(o);
}

// t's elements copied to the host as T, which must be t's element type (uint16_t for the
// bits of bfloat16).
template <class T>
std::vector<T> host_values(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  ops::to_host(t, v.data());
  return v;
}

}  // namespace dp::testing_util
