// Shared by the CUDA suites: a context that loads the plugin built beside the tests, the
// skip rule for machines without a GPU, and comparisons relative to a tensor's scale.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "context/context.h"
#include "ops/ops.h"

namespace dp::cuda_test {

// Messages the context logged, for tests that check them.
struct LogRecord {
  std::mutex mu;
  std::vector<std::string> lines;

  // Whether some line satisfies `match`.
  template <class Match>
  bool any(Match&& match) {
    std::lock_guard<std::mutex> lock(mu);
    return std::any_of(lines.begin(), lines.end(), match);
  }
};

// A context with `cpu_devices` CPU devices and the CUDA plugin of this build.
// device_map: DP_CUDA_DEVICES for this context ("0,0": two logical devices on GPU 0), or
// null for one logical device per GPU. The variable is read when the plugin starts, so
// it is set just before and cleared after.
inline std::shared_ptr<Context> make_context(const char* device_map, int cpu_devices = 2,
                                             std::shared_ptr<LogRecord> log = nullptr) {
#ifdef DP_CUDA_PLUGIN_PATH
  setenv("DP_CUDA_PLUGIN", DP_CUDA_PLUGIN_PATH, 1);
#endif
  if (device_map) {
    setenv("DP_CUDA_DEVICES", device_map, 1);
  } else {
    unsetenv("DP_CUDA_DEVICES");
  }
  ContextOptions o;
  o.cpu_devices = cpu_devices;
  o.load_cuda = true;
  o.allow_tf32 = false;
  o.seed = 7;
  if (log) {
    o.log_level = kLogDebug;
    o.log_fn = [log](int, const char* message) {
      std::lock_guard<std::mutex> lock(log->mu);
      log->lines.push_back(message);
    };
  }
  auto ctx = Context::create(o);
  unsetenv("DP_CUDA_DEVICES");
  return ctx;
}

// make_context with the environment variable `name` set to `value` while the plugin
// starts (it reads its settings then), and cleared after.
inline std::shared_ptr<Context> make_context_with(const char* name, const char* value,
                                                  const char* device_map, int cpu_devices = 2,
                                                  std::shared_ptr<LogRecord> log = nullptr) {
  setenv(name, value, 1);
  auto ctx = make_context(device_map, cpu_devices, std::move(log));
  unsetenv(name);
  return ctx;
}

inline bool plugin_built() {
#ifdef DP_CUDA_PLUGIN_PATH
  return true;
#else
  return false;
#endif
}

// Skips the test unless the context has at least `n` CUDA devices.
#define DP_SKIP_WITHOUT_CUDA(ctx, n)                                                     \
  do {                                                                                   \
    if (!::dp::cuda_test::plugin_built()) {                                              \
      GTEST_SKIP() << "no CUDA device: the CUDA plugin was not built (no CUDA toolkit)"; \
    }                                                                                    \
    if ((ctx)->device_count(::dp::DeviceType::kCuda) < (n)) {                            \
      GTEST_SKIP() << "no CUDA device: " << (ctx)->cuda_status();                        \
    }                                                                                    \
  } while (0)

inline std::vector<double> values(const Tensor& t) {
  const Tensor d = t.dtype() == DType::kFloat64 ? t : ops::to_dtype(t.detach(), DType::kFloat64);
  std::vector<double> v(static_cast<size_t>(d.numel()));
  ops::to_host(d, v.data());
  return v;
}

inline std::vector<float> floats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  ops::to_host(t, v.data());
  return v;
}

// max |got - want| <= rtol * max |want|: float32 sums in another order differ by rounding
// relative to the tensor's scale, not to each element.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<T>& want, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (T w : want) scale = std::max(scale, std::abs(static_cast<double>(w)));
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    if (d > worst || std::isnan(d)) {
      worst = std::isnan(d) ? INFINITY : d;
      at = i;
    }
  }
  EXPECT_LE(worst, rtol * scale + 1e-30)
      << what << ": element " << at << " is " << got[at] << " on CUDA and " << want[at]
      << " on the CPU (tensor scale " << scale << ", " << got.size() << " elements)";
}

}  // namespace dp::cuda_test
