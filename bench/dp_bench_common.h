// What dp-bench's benches share: the check of a call's result, timing, and contexts and
// float32 tensors on CPU devices (dp_bench_common.cc).
#pragma once

#include <dataparallel/dataparallel.h>

#include <cstdint>
#include <functional>
#include <vector>

extern "C" void omp_set_num_threads(int);  // GNU OpenMP, oneDNN's threads

namespace dp_bench {

// Exits with `what` and dp_last_error() unless r is DP_OK.
void ok(dp_result r, const char* what);

// Seconds on the steady clock.
double now();

// Appends the seconds of each of n calls of f to *t.
void time_calls(const std::function<void()>& f, int n, std::vector<double>* t);

// The median of t (of an even count, the upper of the middle two).
double median_of(std::vector<double> t);

// Median seconds per call of f over `reps` calls after `warmup` calls.
double median_seconds(const std::function<void()>& f, int warmup, int reps);

// A context of `cpus` CPU devices, without the CUDA plugin.
dp_context* make_context(int cpus);

// CPU device i.
dp_device cpu(int i);

// A float32 tensor of `shape` on d, a fixed pattern in [-0.5, 0.5) that `seed` shifts.
dp_tensor* random_tensor(dp_context* ctx, std::vector<int64_t> shape, dp_device d, unsigned seed);

}  // namespace dp_bench
