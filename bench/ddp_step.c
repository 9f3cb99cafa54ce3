/* dp-bench-ddp: DistributedDataParallel training steps on synthetic data: the
   throughput of N ranks, what the gradient sync costs a step, and a DP_TRACE timeline of
   the gradient allreduces.

     [DP_TRACE=t.json] mpirun -np N dp-bench-ddp [--model mlp|cnn] [--steps S] [--batch B]
         [--warmup W] [--devices D] [--bucket-kib K] [--first-bucket-kib K] [--baseline 0|1]
         [--lr X]

   Each rank trains dp-train's model (--model mlp: 784-512-256-10; cnn: two convolutions
   and two linear layers; examples/common/models.h) wrapped in DDP over its D CPU devices
   (default 1), SGD with momentum 0.9, on one fixed batch of B samples (default 128) of
   its own: uniform pixels in [0, 1) and uniform labels, from a seed that differs per
   rank. W warm-up steps (default 3) run before the S timed ones (default 20). Rank 0
   prints each rank's step time (median, and the mean split into forward + loss, backward
   and optimizer) and samples/s (B / mean step time), then the job's samples/s (N * B /
   the slowest rank's mean step time). --bucket-kib and --first-bucket-kib set the
   gradient buckets (dp_ddp_options; 0: the library's 25 MiB and 1 MiB).

   With --baseline 1 (the default), every block of 5 timed steps is followed by 5 under
   no_sync (dp_ddp_set_grad_sync 0: the same step without the allreduces), and at the end
   the gradients' bytes are allreduced alone (dp_process_group_allreduce, median of 21).
   The gradient sync's cost per step is the median step with it less the median without
   it, printed beside the allreduce alone: a ratio below 1 means part of the allreduce hid
   behind backward. The cost holds everything the sync adds: the allreduces not hidden,
   the copies into and out of the buckets, waiting for the slower rank, and the
   communication thread's use of a core while backward runs (Open MPI polls as it waits).

   DP_TRACE: the library reads it once, when the process's first context is created, and
   each process writes its own timeline to that path at exit; under mpirun the ranks
   would all write the same file. So this program starts MPI itself (MPI_Init_thread,
   MPI_THREAD_MULTIPLE, before any context), takes its rank from MPI_COMM_WORLD and, when
   DP_TRACE is set, changes it to the rank's own file before it creates its context:
   t.json becomes t.rank0.json, t.rank1.json, ... (a path without ".json" gets ".rank0"
   appended). The rank comes from MPI rather than from a launcher's environment variable
   (OMPI_COMM_WORLD_RANK, PMI_RANK, ...), which differ between launchers. The group is then
   made over MPI_COMM_WORLD with dp_process_group_from_mpi_comm. bench/ddp_overlap.py reads
   the files (the no_sync steps' backwards have no allreduce; it leaves them out). */
#define _POSIX_C_SOURCE 200809L

#include <dataparallel/dataparallel.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_timing.h"

#include "models.h"

#define MAX_DEVICES 64
#define MAX_STEPS 100000

static int g_rank;

static void check(dp_result r, const char* what) {
  if (r == DP_OK) return;
  fprintf(stderr, "dp-bench-ddp (rank %d): %s: %s\n", g_rank, what, dp_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

typedef struct options {
  const char* model;
  long steps, warmup, batch, devices, bucket_kib, first_bucket_kib, baseline;
  double lr;
} options;

static void usage_error(const char* text, const char* value) {
  if (g_rank == 0) {
    fprintf(stderr,
            "dp-bench-ddp: %s%s\n"
            "usage: [DP_TRACE=t.json] mpirun -np N dp-bench-ddp [--model mlp|cnn] [--steps S]\n"
            "         [--batch B] [--warmup W] [--devices D] [--bucket-kib K]\n"
            "         [--first-bucket-kib K] [--baseline 0|1] [--lr X]\n"
            "  S: timed steps, 1..%d (default 20); B: samples per rank per step, 1..65536\n"
            "  (default 128); W: untimed steps first, 0..1000 (default 3); D: CPU devices per\n"
            "  rank, 1..%d (default 1); K: KiB, 0 = the library's default; X: SGD learning\n"
            "  rate > 0 (default 0.01); --baseline 1 (default): also time the steps under\n"
            "  no_sync. With DP_TRACE=t.json, rank r writes t.rank<r>.json.\n",
            text, value, MAX_STEPS, MAX_DEVICES);
  }
  MPI_Finalize();
  exit(2);
}

static long parse_long(const char* flag, const char* s, long lo, long hi) {
  char* end = NULL;
  const long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo || v > hi) {
    char text[160];
    snprintf(text, sizeof text, "%s wants an integer in %ld..%ld, not ", flag, lo, hi);
    usage_error(text, s);
  }
  return v;
}

static options parse_options(int argc, char** argv) {
  options o = {"mlp", 20, 3, 128, 1, 0, 0, 1, 0.01};
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (i + 1 >= argc) usage_error("missing value after ", flag);
    const char* v = argv[++i];
    if (strcmp(flag, "--model") == 0) {
      if (strcmp(v, "mlp") != 0 && strcmp(v, "cnn") != 0)
        usage_error("--model wants mlp or cnn, not ", v);
      o.model = v;
    } else if (strcmp(flag, "--steps") == 0) {
      o.steps = parse_long(flag, v, 1, MAX_STEPS);
    } else if (strcmp(flag, "--warmup") == 0) {
      o.warmup = parse_long(flag, v, 0, 1000);
    } else if (strcmp(flag, "--batch") == 0) {
      o.batch = parse_long(flag, v, 1, 65536);
    } else if (strcmp(flag, "--devices") == 0) {
      o.devices = parse_long(flag, v, 1, MAX_DEVICES);
    } else if (strcmp(flag, "--bucket-kib") == 0) {
      o.bucket_kib = parse_long(flag, v, 0, 1L << 22);
    } else if (strcmp(flag, "--first-bucket-kib") == 0) {
      o.first_bucket_kib = parse_long(flag, v, 0, 1L << 22);
    } else if (strcmp(flag, "--baseline") == 0) {
      o.baseline = parse_long(flag, v, 0, 1);
    } else if (strcmp(flag, "--lr") == 0) {
      char* end = NULL;
      o.lr = strtod(v, &end);
      if (end == v || *end != '\0' || !(o.lr > 0) || !isfinite(o.lr))
        usage_error("--lr wants a finite number > 0, not ", v);
    } else {
      usage_error("unknown argument ", flag);
    }
  }
  return o;
}

/* DP_TRACE=path becomes this rank's own path (see the top of the file). Before the first
   context: the library reads DP_TRACE then, once. */
static void trace_path_per_rank(void) {
  const char* path = getenv("DP_TRACE");
  if (!path || !*path) return;
  const size_t n = strlen(path);
  char* mine = (char*)malloc(n + 32);
  if (!mine) {
    fprintf(stderr, "dp-bench-ddp (rank %d): out of memory\n", g_rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (n > 5 && strcmp(path + n - 5, ".json") == 0) {
    snprintf(mine, n + 32, "%.*s.rank%d.json", (int)(n - 5), path, g_rank);
  } else {
    snprintf(mine, n + 32, "%s.rank%d", path, g_rank);
  }
  if (setenv("DP_TRACE", mine, 1) != 0) {
    fprintf(stderr, "dp-bench-ddp (rank %d): setenv DP_TRACE failed\n", g_rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(mine);
}

/* This rank's batch: pixels uniform in [0, 1) and labels uniform in 0..9, from a small
   generator seeded by the rank (xorshift64*: the values need only differ per rank). */
static void make_batch(dp_context* ctx, const options* o, dp_device device, dp_tensor** x,
                       dp_tensor** y) {
  const size_t pixels = (size_t)o->batch * 784;
  float* xs = (float*)malloc(pixels * sizeof(float));
  int64_t* ys = (int64_t*)malloc((size_t)o->batch * sizeof(int64_t));
  if (!xs || !ys) {
    fprintf(stderr, "dp-bench-ddp (rank %d): out of memory for the batch\n", g_rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(g_rank + 1);
  for (size_t i = 0; i < pixels + (size_t)o->batch; ++i) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    const uint64_t r = s * 0x2545F4914F6CDD1Dull;
    if (i < pixels) {
      xs[i] = (float)(r >> 40) / (float)(1 << 24);
    } else {
      ys[i - pixels] = (int64_t)((r >> 33) % 10);
    }
  }
  int64_t shape[4];
  const size_t nd = model_input_shape(o->model, o->batch, shape);
  check(dp_tensor_from_data(ctx, DP_FLOAT32, shape, nd, xs, pixels * sizeof(float), device, x),
        "input batch");
  check(dp_tensor_from_data(ctx, DP_INT64, &shape[0], 1, ys, (size_t)o->batch * sizeof(int64_t),
                            device, y),
        "labels");
  free(xs);
  free(ys);
}

/* Seconds of one step: the whole, and its phases. */
typedef struct step_time {
  double total, forward, backward, optimizer;
} step_time;

static float train_step(dp_ddp* ddp, dp_optimizer* opt, dp_tensor* x, dp_tensor* y, step_time* t) {
  dp_tensor *logits = NULL, *loss = NULL;
  size_t n_out = 0;
  const double t0 = bench_now_seconds();
  check(dp_ddp_forward(ddp, &x, NULL, 1, &logits, 1, &n_out), "forward");
  check(dp_op_cross_entropy(logits, y, &loss), "loss");
  const double t1 = bench_now_seconds();
  check(dp_backward(loss, NULL, 0), "backward");
  const double t2 = bench_now_seconds();
  check(dp_optimizer_step(opt), "optimizer step");
  check(dp_optimizer_zero_grad(opt), "zero_grad");
  const double t3 = bench_now_seconds();
  float l = 0;
  check(dp_tensor_to_host(loss, &l, sizeof l), "loss value");
  dp_tensor_release(logits);
  dp_tensor_release(loss);
  t->total = bench_now_seconds() - t0;
  t->forward = t1 - t0;
  t->backward = t2 - t1;
  t->optimizer = t3 - t2;
  return l;
}

/* The bytes of the module's parameters: what each step's buckets allreduce. */
static size_t parameter_bytes(const dp_module* model) {
  size_t n = 0, total = 0;
  check(dp_module_parameter_count(model, &n), "parameter count");
  for (size_t i = 0; i < n; ++i) {
    dp_tensor* p = NULL;
    size_t bytes = 0;
    check(dp_module_parameter(model, i, NULL, &p), "parameter");
    check(dp_tensor_nbytes(p, &bytes), "parameter bytes");
    total += bytes;
    dp_tensor_release(p);
  }
  return total;
}

/* Median seconds of one dp_process_group_allreduce of `bytes` (float32) alone, over 21
   calls after 3: what the gradients' allreduce would cost a step if nothing hid it. */
static double allreduce_alone(dp_context* ctx, dp_process_group* group, size_t bytes) {
  const int64_t n = (int64_t)(bytes / sizeof(float));
  dp_tensor* t = NULL;
  check(dp_tensor_zeros(ctx, DP_FLOAT32, &n, 1, (dp_device){DP_DEVICE_CPU, 0}, &t), "buffer");
  double times[21];
  for (int i = -3; i < 21; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = bench_now_seconds();
    check(dp_process_group_allreduce(group, t, DP_REDUCE_AVERAGE), "allreduce");
    if (i >= 0) times[i] = bench_now_seconds() - t0;
  }
  dp_tensor_release(t);
  return bench_median(times, 21);
}

/* One rank's figures, gathered on rank 0 (a run of doubles for MPI_Gather). */
typedef struct rank_summary {
  double median_step, mean_step, forward, backward, optimizer, median_no_sync, allreduce;
} rank_summary;
#define SUMMARY_DOUBLES (sizeof(rank_summary) / sizeof(double))

int main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "dp-bench-ddp: MPI_Init_thread failed\n");
    return 1;
  }
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const options o = parse_options(argc, argv);
  trace_path_per_rank();

  dp_context_options co = DP_CONTEXT_OPTIONS_INIT;
  co.cpu_devices = (int32_t)o.devices;
  dp_context* ctx = NULL;
  check(dp_context_create(&co, &ctx), "context");
  dp_process_group* group = NULL;
  check(dp_process_group_from_mpi_comm(ctx, (int64_t)MPI_Comm_c2f(MPI_COMM_WORLD), NULL, &group),
        "process group");

  dp_device devices[MAX_DEVICES];
  for (long d = 0; d < o.devices; ++d) devices[d] = (dp_device){DP_DEVICE_CPU, (int32_t)d};
  dp_module* model = NULL;
  check(build_model(ctx, o.model, devices[0], &model), "model");
  dp_ddp_options ddpo = DP_DDP_OPTIONS_INIT;
  ddpo.bucket_bytes = (size_t)o.bucket_kib << 10;
  ddpo.first_bucket_bytes = (size_t)o.first_bucket_kib << 10;
  dp_ddp* ddp = NULL;
  check(dp_ddp_create(model, group, devices, (size_t)o.devices, NULL, 0, &ddpo, &ddp), "DDP");
  size_t buckets = 0;
  check(dp_ddp_bucket_count(ddp, &buckets), "bucket count");
  const size_t grad_bytes = parameter_bytes(model);
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  so.lr = o.lr;
  so.momentum = 0.9;
  dp_optimizer* opt = NULL;
  check(dp_optimizer_sgd(model, &so, &opt), "optimizer");
  dp_tensor *x = NULL, *y = NULL;
  make_batch(ctx, &o, devices[0], &x, &y);

  step_time t;
  float first_loss = 0, last_loss = 0;
  for (long s = 0; s < o.warmup; ++s) {
    const float l = train_step(ddp, opt, x, y, &t);
    if (s == 0) first_loss = l;
  }
  double* synced = (double*)malloc((size_t)o.steps * sizeof(double));
  double* unsynced = (double*)malloc((size_t)o.steps * sizeof(double));
  if (!synced || !unsynced) {
    fprintf(stderr, "dp-bench-ddp (rank %d): out of memory\n", g_rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* Blocks of kBlock synced steps, each followed (with the baseline) by as many under
     no_sync, so that both see the same conditions. The optimizer steps in both. */
  enum { kBlock = 5 };
  rank_summary mine = {0, 0, 0, 0, 0, 0, 0};
  MPI_Barrier(MPI_COMM_WORLD);
  for (long done = 0; done < o.steps;) {
    const long n = o.steps - done < kBlock ? o.steps - done : kBlock;
    for (long s = done; s < done + n; ++s) {
      last_loss = train_step(ddp, opt, x, y, &t);
      if (o.warmup == 0 && s == 0) first_loss = last_loss;
      synced[s] = t.total;
      mine.mean_step += t.total;
      mine.forward += t.forward;
      mine.backward += t.backward;
      mine.optimizer += t.optimizer;
    }
    if (o.baseline) {
      check(dp_ddp_set_grad_sync(ddp, 0), "no_sync");
      for (long s = done; s < done + n; ++s) {
        train_step(ddp, opt, x, y, &t);
        unsynced[s] = t.total;
      }
      check(dp_ddp_set_grad_sync(ddp, 1), "grad sync");
    }
    done += n;
  }
  mine.median_step = bench_median(synced, o.steps);
  mine.mean_step /= (double)o.steps;
  mine.forward /= (double)o.steps;
  mine.backward /= (double)o.steps;
  mine.optimizer /= (double)o.steps;
  if (o.baseline) {
    mine.median_no_sync = bench_median(unsynced, o.steps);
    mine.allreduce = allreduce_alone(ctx, group, grad_bytes);
  }
  free(synced);
  free(unsynced);

  rank_summary* all = g_rank == 0 ? (rank_summary*)malloc((size_t)size * sizeof *all) : NULL;
  if (g_rank == 0 && !all) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(&mine, (int)SUMMARY_DOUBLES, MPI_DOUBLE, all, (int)SUMMARY_DOUBLES, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  if (g_rank == 0) {
    char device_name[128] = "";
    check(dp_device_name(ctx, devices[0], device_name, sizeof device_name, NULL), "device name");
    printf(
        "dp-bench-ddp: %s, %d ranks x %ld CPU device(s) (%s), batch %ld per rank, %zu "
        "gradient bucket(s) of %.2f MiB in all, %ld timed steps after %ld warm-up\n",
        o.model, size, o.devices, device_name, o.batch, buckets, (double)grad_bytes / (1 << 20),
        o.steps, o.warmup);
    printf("%4s %10s %10s %10s %10s %10s %11s", "rank", "median ms", "mean ms", "fwd+loss",
           "backward", "optimizer", "samples/s");
    if (o.baseline) printf(" %12s %12s", "no_sync ms", "allreduce ms");
    printf("\n");
    double slowest = 0, cost = 0, alone = 0;
    for (int r = 0; r < size; ++r) {
      const rank_summary* a = &all[r];
      printf("%4d %10.2f %10.2f %10.2f %10.2f %10.2f %11.0f", r, a->median_step * 1e3,
             a->mean_step * 1e3, a->forward * 1e3, a->backward * 1e3, a->optimizer * 1e3,
             (double)o.batch / a->mean_step);
      if (o.baseline) printf(" %12.2f %12.3f", a->median_no_sync * 1e3, a->allreduce * 1e3);
      printf("\n");
      if (a->mean_step > slowest) slowest = a->mean_step;
      cost += (a->median_step - a->median_no_sync) / size;
      alone += a->allreduce / size;
    }
    printf("job: %.0f samples/s (%d x %ld samples per %.2f ms step); loss %.4f -> %.4f\n",
           (double)size * (double)o.batch / slowest, size, o.batch, slowest * 1e3, first_loss,
           last_loss);
    if (o.baseline) {
      printf(
          "gradient sync: %.3f ms per step (the median step with it less without it,"
          " no_sync; mean over the ranks), against %.3f ms for the allreduce of the %.2f MiB"
          " alone: %.2fx (below 1: partly hidden behind backward)\n",
          cost * 1e3, alone * 1e3, (double)grad_bytes / (1 << 20), alone > 0 ? cost / alone : 0.0);
    }
    free(all);
  }

  dp_tensor_release(x);
  dp_tensor_release(y);
  dp_optimizer_release(opt);
  dp_ddp_release(ddp);
  dp_module_release(model);
  dp_process_group_release(group);
  dp_context_release(ctx);
  MPI_Finalize();
  return 0;
}
