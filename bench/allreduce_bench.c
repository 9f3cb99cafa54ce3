/* dp-bench-allreduce: the bandwidth of dp_process_group_allreduce beside a plain
   MPI_Allreduce, in the same run.

     mpirun -np 2 dp-bench-allreduce [--min-bytes B] [--max-bytes B] [--reps R]
         [--same-buffer]

   For float32 buffers of min-bytes .. max-bytes (default 1 KiB .. 256 MiB, powers of 4),
   every rank times two sides, in interleaved rounds (the order swaps every round, after a
   warm-up of each): the library's allreduce (sum) of a CPU tensor, and
   MPI_Allreduce(MPI_IN_PLACE, MPI_SUM) of a malloc'ed buffer of the same size on
   MPI_COMM_WORLD. A round times a block of calls (many for small sizes, one for the
   largest) between barriers; its time per call is the slowest rank's. Rank 0 prints the
   median over the rounds: time per call, algorithm bandwidth (bytes / time) and bus
   bandwidth (2 (n - 1) / n * bytes / time, NCCL's measure of what each link carries in a
   ring allreduce of n ranks), and the ratio group / plain of the bandwidths.

   Both sides run the same MPI_Allreduce on the same MPI: the library calls it on its
   communication thread, on its own duplicate of the communicator. What the ratio measures
   is what the library adds to a call: handing the job to that thread and waking the
   caller when it is done, and the call's own bookkeeping. The line after the table gives
   that cost per call (the difference of the times at the smallest size).

   --same-buffer: the plain side works on the tensor's memory instead of its own buffer,
   so that the two differ in nothing but the call (the buffers' placement in memory moves
   the largest sizes by a few per cent either way).

   The program initialises MPI itself (MPI_THREAD_MULTIPLE) and makes the group over
   MPI_COMM_WORLD with dp_process_group_from_mpi_comm, so both sides share one process. */
#define _POSIX_C_SOURCE 200809L

#include <dataparallel/dataparallel.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"

#define MAX_REPS 101

static int g_rank;

static void check(dp_result r, const char* what) {
  if (r == DP_OK) return;
  fprintf(stderr, "dp-bench-allreduce (rank %d): %s: %s\n", g_rank, what, dp_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_mpi(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  fprintf(stderr, "dp-bench-allreduce (rank %d): %s failed (MPI error %d)\n", g_rank, what, code);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void usage_error(const char* text, const char* value) {
  if (g_rank == 0) {
    fprintf(stderr,
            "dp-bench-allreduce: %s%s\n"
            "usage: mpirun -np N dp-bench-allreduce [--min-bytes B] [--max-bytes B] "
            "[--reps R] [--same-buffer]\n"
            "  B: bytes, a multiple of 4 up to 1 GiB; the sizes go from min to max in steps of"
            " x4 (default 1024 .. 268435456)\n  R: 3..%d rounds (default 9)\n",
            text, value, MAX_REPS);
  }
  MPI_Finalize();
  exit(2);
}

static long long parse_bytes(const char* flag, const char* s) {
  char* end = NULL;
  const long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || v < 4 || v > (1LL << 30) || v % 4 != 0) {
    char text[128];
    snprintf(text, sizeof text, "%s wants bytes, a multiple of 4 in 4 .. 1073741824, not ", flag);
    usage_error(text, s);
  }
  return v;
}

typedef struct side {
  dp_process_group* group; /* the library's side when set, else plain MPI on buf */
  dp_tensor* tensor;
  float* buf;
  int count;
} side;

/* Seconds per call of `iters` allreduces, the slowest rank's (the same on every rank). */
static double time_block(const side* s, int iters) {
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  const double t0 = bench_now_seconds();
  for (int i = 0; i < iters; ++i) {
    if (s->group) {
      check(dp_process_group_allreduce(s->group, s->tensor, DP_REDUCE_SUM), "group allreduce");
    } else {
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, s->buf, s->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
                "MPI_Allreduce");
    }
  }
  const double mine = (bench_now_seconds() - t0) / iters;
  double slowest = 0;
  check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
            "MPI_Allreduce (timing)");
  return slowest;
}

/* Each side's values, the sum of rank + 1 over the ranks, checked once per size before
   timing: the two sides must compute the same thing. The timed calls then run on zeros
   (values that stay finite however many sums follow). */
static void check_sum(const side* s, int size) {
  const float want = (float)size * (float)(size + 1) / 2;
  for (int i = 0; i < s->count; ++i) s->buf[i] = (float)(g_rank + 1);
  time_block(s, 1);
  for (int i = 0; i < s->count; i += s->count / 7 + 1) {
    if (s->buf[i] != want) {
      fprintf(stderr, "dp-bench-allreduce (rank %d): %s allreduce gave %g at %d, want %g\n", g_rank,
              s->group ? "the group's" : "MPI's", s->buf[i], i, want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  memset(s->buf, 0, (size_t)s->count * sizeof(float));
}

static void human_bytes(long long b, char* out, size_t n) {
  if (b >= (1LL << 20)) {
    snprintf(out, n, "%lld MiB", b >> 20);
  } else if (b >= 1024) {
    snprintf(out, n, "%lld KiB", b >> 10);
  } else {
    snprintf(out, n, "%lld B", b);
  }
}

int main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "dp-bench-allreduce: MPI_Init_thread failed\n");
    return 1;
  }
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long long min_bytes = 1024, max_bytes = 256LL << 20;
  int reps = 9, same_buffer = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--same-buffer") == 0) {
      same_buffer = 1;
      continue;
    }
    if (i + 1 >= argc) usage_error("missing value after ", argv[i]);
    if (strcmp(argv[i], "--min-bytes") == 0) {
      min_bytes = parse_bytes("--min-bytes", argv[++i]);
    } else if (strcmp(argv[i], "--max-bytes") == 0) {
      max_bytes = parse_bytes("--max-bytes", argv[++i]);
    } else if (strcmp(argv[i], "--reps") == 0) {
      char* end = NULL;
      const long v = strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end != '\0' || v < 3 || v > MAX_REPS)
        usage_error("--reps wants 3..101, not ", argv[i]);
      reps = (int)v;
    } else {
      usage_error("unknown argument ", argv[i]);
    }
  }
  if (min_bytes > max_bytes) usage_error("--min-bytes is larger than --max-bytes", "");
  if (provided < MPI_THREAD_MULTIPLE && g_rank == 0) {
    fprintf(stderr, "dp-bench-allreduce: MPI gave thread level %d, not MULTIPLE\n", provided);
  }

  dp_context_options co = DP_CONTEXT_OPTIONS_INIT;
  co.cpu_devices = 1; /* the tensors' device; its worker stays idle */
  dp_context* ctx = NULL;
  check(dp_context_create(&co, &ctx), "context");
  dp_process_group* group = NULL;
  check(dp_process_group_from_mpi_comm(ctx, (int64_t)MPI_Comm_c2f(MPI_COMM_WORLD), NULL, &group),
        "process group");

  const double bus_factor = 2.0 * (size - 1) / size;
  if (g_rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    printf("allreduce (sum, float32) over %d ranks, %s; median of %d rounds, the slowest rank\n",
           size, lib, reps);
    printf(
        "group: dp_process_group_allreduce of a CPU tensor; plain: MPI_Allreduce(MPI_IN_PLACE)"
        " on MPI_COMM_WORLD, %s\n",
        same_buffer ? "on the tensor's memory" : "on a buffer of its own");
    printf("algbw = bytes / time; busbw = algbw * 2(n-1)/n = algbw * %.2f; GB/s = 1e9 B/s\n",
           bus_factor);
    printf("%9s %8s | %10s %8s %8s | %10s %8s %8s | %11s\n", "size", "calls", "group us", "algbw",
           "busbw", "plain us", "algbw", "busbw", "group/plain");
  }

  double first_group_us = 0, first_plain_us = 0;
  long long first_bytes = 0;
  double worst_ratio = 1e9;
  long long worst_bytes = 0;
  for (long long bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    const int count = (int)(bytes / 4);
    const int64_t shape = count;
    /* Enough calls per round that a round lasts about 10 ms or more. */
    long long iters = (16LL << 20) / bytes;
    if (iters < 1) iters = 1;
    if (iters > 2000) iters = 2000;

    side group_side = {group, NULL, NULL, count};
    check(dp_tensor_zeros(ctx, DP_FLOAT32, &shape, 1, (dp_device){DP_DEVICE_CPU, 0},
                          &group_side.tensor),
          "tensor");
    void* data = NULL;
    check(dp_tensor_data(group_side.tensor, &data), "tensor data");
    group_side.buf = (float*)data;
    side plain_side = {NULL, NULL,
                       same_buffer ? group_side.buf : (float*)calloc((size_t)count, sizeof(float)),
                       count};
    if (!plain_side.buf) {
      fprintf(stderr, "dp-bench-allreduce (rank %d): out of memory for %lld bytes\n", g_rank,
              bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check_sum(&group_side, size);
    check_sum(&plain_side, size);
    time_block(&group_side, (int)iters); /* warm-up */
    time_block(&plain_side, (int)iters);

    double group_s[MAX_REPS], plain_s[MAX_REPS];
    for (int r = 0; r < reps; ++r) {
      if (r % 2 == 0) {
        group_s[r] = time_block(&group_side, (int)iters);
        plain_s[r] = time_block(&plain_side, (int)iters);
      } else {
        plain_s[r] = time_block(&plain_side, (int)iters);
        group_s[r] = time_block(&group_side, (int)iters);
      }
    }
    const double g = bench_median(group_s, reps), p = bench_median(plain_s, reps);
    if (g_rank == 0) {
      char label[32];
      human_bytes(bytes, label, sizeof label);
      const double galg = (double)bytes / g / 1e9, palg = (double)bytes / p / 1e9;
      printf("%9s %8lld | %10.2f %8.3f %8.3f | %10.2f %8.3f %8.3f | %10.3fx\n", label, iters,
             g * 1e6, galg, galg * bus_factor, p * 1e6, palg, palg * bus_factor, p / g);
      fflush(stdout);
    }
    if (bytes == min_bytes) {
      first_bytes = bytes;
      first_group_us = g * 1e6;
      first_plain_us = p * 1e6;
    }
    if (p / g < worst_ratio) {
      worst_ratio = p / g;
      worst_bytes = bytes;
    }
    dp_tensor_release(group_side.tensor);
    if (!same_buffer) free(plain_side.buf);
  }
  if (g_rank == 0) {
    char label[32];
    human_bytes(first_bytes, label, sizeof label);
    printf("hand-off cost at %s: %.2f us per call (group %.2f us - plain %.2f us)\n", label,
           first_group_us - first_plain_us, first_group_us, first_plain_us);
    human_bytes(worst_bytes, label, sizeof label);
    printf("lowest ratio: %.3fx at %s (target >= 0.9x)\n", worst_ratio, label);
  }
  dp_process_group_release(group);
  dp_context_release(ctx);
  MPI_Finalize();
  return 0;
}
