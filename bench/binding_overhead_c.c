/* The C baseline of bench/binding_overhead.py: the time of one forward of the tiny model
   (Linear 8x8, batch 8, one CPU device, grad mode off) called straight through the C API.
   The Python and Java measurements time the same call through their bindings; the
   difference is what a binding adds per call.

     dp-binding-overhead-c [--calls N] [--repeats R]

   Prints one JSON line per call kind, the median over R runs of N calls:
     {"impl": "c", "call": "module_forward", "us_per_call": 1.23}
   "module_forward" is dp_module_forward1 on the Linear; "data_parallel_forward" is
   dp_data_parallel_forward of a DataParallel over that one device. Each includes
   releasing the output, as a binding's garbage collection does. */
#define _POSIX_C_SOURCE 200809L

#include <dataparallel/dataparallel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_REPEATS 101

static void check(dp_result r, const char* what) {
  if (r == DP_OK) return;
  fprintf(stderr, "dp-binding-overhead-c: %s: %s\n", what, dp_last_error());
  exit(1);
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* One forward of the chosen kind; the output is released at once. */
static void forward(dp_module* linear, dp_data_parallel* dpw, dp_tensor* x) {
  dp_tensor* y = NULL;
  if (dpw) {
    size_t n = 0;
    check(dp_data_parallel_forward(dpw, &x, NULL, 1, &y, 1, &n), "DataParallel forward");
  } else {
    check(dp_module_forward1(linear, x, &y), "forward");
  }
  dp_tensor_release(y);
}

/* Median over `repeats` runs of `calls` forwards, in microseconds per call. */
static double measure(dp_module* linear, dp_data_parallel* dpw, dp_tensor* x, long calls,
                      int repeats) {
  double runs[MAX_REPEATS];
  for (long i = 0; i < calls / 10 + 100; ++i) forward(linear, dpw, x); /* warm up */
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now_us();
    for (long i = 0; i < calls; ++i) forward(linear, dpw, x);
    runs[r] = (now_us() - t0) / (double)calls;
  }
  qsort(runs, (size_t)repeats, sizeof runs[0], compare_doubles);
  return runs[repeats / 2];
}

int main(int argc, char** argv) {
  long calls = 20000;
  int repeats = 7;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
      calls = strtol(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = (int)strtol(argv[++i], NULL, 10);
    } else {
      fprintf(stderr, "usage: dp-binding-overhead-c [--calls N] [--repeats R]\n");
      return 2;
    }
  }
  if (calls < 1 || repeats < 1 || repeats > MAX_REPEATS) {
    fprintf(stderr, "dp-binding-overhead-c: --calls must be >= 1, --repeats in 1..%d\n",
            MAX_REPEATS);
    return 2;
  }

  dp_context_options options = DP_CONTEXT_OPTIONS_INIT;
  options.cpu_devices = 1;
  options.load_cuda = 0;
  dp_context* ctx = NULL;
  check(dp_context_create(&options, &ctx), "context");
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  dp_module* linear = NULL;
  check(dp_module_linear(ctx, 8, 8, 1, cpu0, &linear), "Linear(8, 8)");
  dp_data_parallel* dpw = NULL;
  check(dp_data_parallel_create(linear, &cpu0, 1, NULL, 0, NULL, &dpw), "DataParallel");
  const int64_t shape[2] = {8, 8};
  dp_tensor* x = NULL;
  check(dp_tensor_full(ctx, DP_FLOAT32, shape, 2, 0.5, cpu0, &x), "input");

  const int previous = dp_set_grad_enabled(0);
  printf("{\"impl\": \"c\", \"call\": \"module_forward\", \"us_per_call\": %.3f}\n",
         measure(linear, NULL, x, calls, repeats));
  printf("{\"impl\": \"c\", \"call\": \"data_parallel_forward\", \"us_per_call\": %.3f}\n",
         measure(NULL, dpw, x, calls, repeats));
  dp_set_grad_enabled(previous);

  dp_tensor_release(x);
  dp_data_parallel_release(dpw);
  dp_module_release(linear);
  dp_context_release(ctx);
  return 0;
}
