// The helpers that dp-bench's benches share (dp_bench_common.h).
#include "dp_bench_common.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace dp_bench {
namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "dp-bench: %s: %s\n", what, dp_last_error());
  std::exit(1);
}

}  // namespace

void ok(dp_result r, const char* what) {
  if (r != DP_OK) die(what);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void time_calls(const std::function<void()>& f, int n, std::vector<double>* t) {
  for (int i = 0; i < n; ++i) {
    const double t0 = now();
    f();
    t->push_back(now() - t0);
  }
}

double median_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double median_seconds(const std::function<void()>& f, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  time_calls(f, reps, &t);
  return median_of(std::move(t));
}

dp_context* make_context(int cpus) {
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = cpus;
  o.load_cuda = 0;
  dp_context* ctx = nullptr;
  ok(dp_context_create(&o, &ctx), "context");
  return ctx;
}

dp_device cpu(int i) {
  return dp_device{DP_DEVICE_CPU, i};
}

dp_tensor* random_tensor(dp_context* ctx, std::vector<int64_t> shape, dp_device d, unsigned seed) {
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i * 2654435761u + seed) % 1000) / 1000.0 - 0.5);
  dp_tensor* t = nullptr;
  ok(dp_tensor_from_data(ctx, DP_FLOAT32, shape.data(), shape.size(), v.data(), n * 4, d, &t),
     "tensor");
  return t;
}

}  // namespace dp_bench
