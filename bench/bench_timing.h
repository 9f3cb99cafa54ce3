/* Timing helpers of the C benchmarks: a monotonic clock and the median of samples. */
#ifndef DP_BENCH_BENCH_TIMING_H_
#define DP_BENCH_BENCH_TIMING_H_

#include <stdlib.h>
#include <time.h>

static inline double bench_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (n > 0); sorts v. */
static inline double bench_median(double* v, long n) {
  qsort(v, (size_t)n, sizeof *v, bench_compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* DP_BENCH_BENCH_TIMING_H_ */
