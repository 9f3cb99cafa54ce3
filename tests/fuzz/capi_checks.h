// Checks of the C API's error discipline shared by the C-API fuzz targets.
#pragma once

#include <initializer_list>
#include <string>

#include "dataparallel/dataparallel.h"
#include "fuzz_input.h"

namespace fuzz {

inline bool is_documented_error(dp_result r) {
  // DP_ERR_INTERNAL is documented as "a bug in the library": a fuzz input must not reach it.
  return r >= DP_ERR_INVALID_ARGUMENT && r < DP_ERR_INTERNAL;
}

// A failed call: a documented code (one of `allowed` when given) and a message.
inline void check_failure(dp_result r, const char* call, std::initializer_list<dp_result> allowed) {
  std::string detail = std::string(call) + " returned " + std::to_string(static_cast<int>(r)) +
                       " (" + dp_result_string(r) + "): \"" + dp_last_error() + "\"";
  FUZZ_CHECK(is_documented_error(r), "a documented error code", detail.c_str());
  FUZZ_CHECK(dp_last_error()[0] != '\0', "a non-empty dp_last_error()", detail.c_str());
  if (allowed.size() == 0) return;
  bool ok = false;
  for (dp_result a : allowed) ok = ok || a == r;
  FUZZ_CHECK(ok, "an error code the header documents for this call", detail.c_str());
}

// With DP_FUZZ_TRACE set, every checked call is printed (to see what an input does).
inline bool tracing() {
  static const bool on = std::getenv("DP_FUZZ_TRACE") != nullptr;
  return on;
}

// Any result: DP_OK, or a failure as above. Returns whether the call succeeded.
inline bool check_result(dp_result r, const char* call,
                         std::initializer_list<dp_result> allowed = {}) {
  if (tracing()) {
    std::fprintf(stderr, "  %s -> %s%s%s\n", call, dp_result_string(r), r ? ": " : "",
                 r ? dp_last_error() : "");
  }
  if (r == DP_OK) return true;
  check_failure(r, call, allowed);
  return false;
}

// A context with `cpu_devices` CPU devices and no CUDA, silent. The block cache is off so
// that AddressSanitizer sees every free.
inline dp_context* make_context(int cpu_devices, uint64_t seed = 1) {
  setenv("DP_CPU_CACHE_MB", "0", 0);
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = cpu_devices;
  o.load_cuda = 0;
  o.seed = seed;
  dp_context* ctx = nullptr;
  const dp_result r = dp_context_create(&o, &ctx);
  FUZZ_CHECK(r == DP_OK && ctx != nullptr, "dp_context_create succeeds", dp_last_error());
  return ctx;
}

}  // namespace fuzz
