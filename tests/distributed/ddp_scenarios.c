/* Multi-process scenarios whose outcome is the whole job's, checked from outside by
   tests/distributed/test_scenarios.py (exit codes, messages, timing, traces):
     mismatch  rank 1's model differs from rank 0's: every rank must fail at creation
               with the same message, naming the first difference
     kill      rank 1 kills itself (SIGKILL) between forward and backward of step 4
     kill-barrier  rank 1 kills itself before a barrier, which rank 0 runs on its own
               thread (no communication thread in between): the timeout must still end it
     stall-barrier  right after the group's start, rank 1 sleeps 60 s outside MPI instead
               of joining a barrier: rank 0's timeout must end the whole job, rank 1 with
               it
     stall-backward, stall-buffers, stall-order, stall-count, stall-join
               one rank sleeps 60 s outside MPI at a point of a step, alive, so that the
               other surely waits in the step's next collective until its timeout ends the
               job, and names that collective and the step (DDP's steps, from 1):
                 stall-backward  rank 1, between forward and backward of step 4: rank 0
                                 waits for the gradient allreduce of bucket 0
                 stall-buffers   rank 0, before the forward of step 4, with a BatchNorm
                                 whose buffers rank 0 broadcasts each forward: rank 1
                                 waits for the first buffer's broadcast (the root of a
                                 broadcast may finish before the others start, so the
                                 root is the one that sleeps)
                 stall-order     rank 0, before the forward of step 2: rank 1 waits for
                                 the broadcast of rank 0's bucket order
                 stall-count     uneven inputs on; rank 0, before the forward of step 4:
                                 rank 1 waits for the count of ranks still training
                 stall-join      uneven inputs on; rank 1 has 3 batches and joins, rank 0
                                 sleeps before the forward of step 5: rank 1, in join,
                                 waits for that step's count
     late      rank 1 (by the launcher's rank variable: Open MPI's OMPI_COMM_WORLD_RANK,
               MPICH's PMI_RANK, or PMIX_RANK, which srun --mpi=pmix sets) comes 60 s late
               to the group: rank 0's start must end the job after the timeout
     trace     a few training steps of a wider MLP whose first bucket holds the last
               layer alone, for the overlap test (DP_TRACE set per rank by the launcher);
               batch 1024, so that the rest of backward (about 20 ms) outlasts the wait
               of a woken communication thread for a core on a loaded machine (at batch
               256 it lasted 2.5 ms and the thread started up to 3 ms late)
   Usage: ddp_scenarios MODE. Exit 0 when the mode ran to its end, 1 when DDP creation
   failed (mismatch prints "rank R: <result>: <message>"), 3 when a call failed. */
#include <signal.h>
#include <unistd.h>

#include "ddp_util.h"

/* Where a rank stops taking part, and how: `rank` (-1: none) halts in step `step` (DDP's
   numbering, from 1), before its forward or between forward and backward, by SIGKILL or
   by sleeping 60 s outside MPI. */
typedef struct halt {
  int32_t rank;
  int step;
  int before_backward;
  int die;
} halt;

static void halt_if_due(const halt* h, int32_t rank, int step, int before_backward) {
  if (h->rank != rank || h->step != step || h->before_backward != before_backward) return;
  const char* where = before_backward ? "before the backward" : "before the forward";
  fprintf(stderr, "rank %d: %s %s of step %d\n", rank, h->die ? "killing itself" : "sleeping 60 s",
          where, step);
  fflush(stderr);
  if (h->die) raise(SIGKILL);
  sleep(60);
}

/* The halt of the modes kill and stall-* (see the top); 0 for other modes. */
static int halt_of(const char* mode, halt* h) {
  if (strcmp(mode, "kill") == 0) {
    *h = (halt){.rank = 1, .step = 4, .before_backward = 1, .die = 1};
  } else if (strcmp(mode, "stall-backward") == 0) {
    *h = (halt){.rank = 1, .step = 4, .before_backward = 1, .die = 0};
  } else if (strcmp(mode, "stall-buffers") == 0 || strcmp(mode, "stall-count") == 0) {
    *h = (halt){.rank = 0, .step = 4, .before_backward = 0, .die = 0};
  } else if (strcmp(mode, "stall-order") == 0) {
    *h = (halt){.rank = 0, .step = 2, .before_backward = 0, .die = 0};
  } else if (strcmp(mode, "stall-join") == 0) {
    *h = (halt){.rank = 0, .step = 5, .before_backward = 0, .die = 0};
  } else {
    return 0;
  }
  return 1;
}

/* `steps` steps of SGD on this rank's rows of `batch`; then, with uneven inputs on, join. */
static void train(dp_context* ctx, dp_ddp* ddp, dp_module* model, int steps, int64_t batch,
                  int32_t rank, const halt* h, int uneven) {
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  dp_optimizer* opt = NULL;
  MUST(dp_optimizer_sgd(model, &so, &opt));
  for (int s = 0; s < steps; ++s) {
    dp_tensor *x, *y, *out = NULL;
    size_t n = 0;
    make_batch(ctx, s, rank * batch, batch, 0, &x, &y);
    halt_if_due(h, rank, s + 1, 0);
    MUST(dp_ddp_forward(ddp, &x, NULL, 1, &out, 1, &n));
    halt_if_due(h, rank, s + 1, 1);
    dp_tensor* loss = loss_of(out, y, 1.0);
    MUST(dp_backward(loss, NULL, 0));
    MUST(dp_optimizer_step(opt));
    MUST(dp_optimizer_zero_grad(opt));
    dp_tensor_release(x);
    dp_tensor_release(y);
    dp_tensor_release(out);
    dp_tensor_release(loss);
  }
  if (uneven) MUST(dp_ddp_join(ddp));
  dp_optimizer_release(opt);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr,
            "usage: %s mismatch|kill|kill-barrier|stall-barrier|stall-backward|stall-buffers|"
            "stall-order|stall-count|stall-join|late|trace\n",
            argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const char* launcher_rank = getenv("OMPI_COMM_WORLD_RANK");
  if (!launcher_rank) launcher_rank = getenv("PMI_RANK");
  if (!launcher_rank) launcher_rank = getenv("PMIX_RANK");
  if (strcmp(mode, "late") == 0 && launcher_rank && strcmp(launcher_rank, "1") == 0) sleep(60);
  dp_context* ctx = ddp_context(1, 1);
  dp_process_group* group = NULL;
  MUST(dp_process_group_from_mpi(ctx, NULL, &group));
  int32_t rank = 0;
  MUST(dp_process_group_rank(group, &rank));
  if (strcmp(mode, "stall-barrier") == 0) {
    if (rank == 1) sleep(60);
    MUST(dp_process_group_barrier(group));
  }
  int64_t hidden = 64;
  if (strcmp(mode, "mismatch") == 0 && rank == 1) hidden = 48;
  if (strcmp(mode, "trace") == 0) hidden = 1024;
  dp_module* model = make_mlp(ctx, hidden);
  if (strcmp(mode, "stall-buffers") == 0) { /* buffers '5.running_mean', '5.running_var' ... */
    dp_module* bn = NULL;
    MUST(dp_module_batchnorm1d(ctx, 10, 1e-5, 0.1, (dp_device){DP_DEVICE_CPU, 0}, &bn));
    append(model, bn);
  }
  dp_ddp_options o = DP_DDP_OPTIONS_INIT;
  o.first_bucket_bytes = 16; /* the last layer's bias alone */
  dp_ddp* ddp = NULL;
  const dp_result r = dp_ddp_create(model, group, NULL, 0, NULL, 0, &o, &ddp);
  int code = 0;
  halt h;
  if (r != DP_OK) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, dp_result_string(r), dp_last_error());
    code = 1;
  } else if (strcmp(mode, "kill-barrier") == 0) {
    if (rank == 1) raise(SIGKILL);
    MUST(dp_process_group_barrier(group));
  } else if (strcmp(mode, "mismatch") == 0 || strcmp(mode, "late") == 0 ||
             strcmp(mode, "stall-barrier") == 0) {
    fprintf(stderr, "rank %d: the models were accepted\n", rank);
  } else if (strcmp(mode, "trace") == 0) {
    const halt none = {-1, 0, 0, 0};
    train(ctx, ddp, model, 6, 1024, rank, &none, 0);
  } else if (halt_of(mode, &h)) {
    const int uneven = strcmp(mode, "stall-count") == 0 || strcmp(mode, "stall-join") == 0;
    if (uneven) MUST(dp_ddp_set_uneven_inputs(ddp, 1));
    train(ctx, ddp, model, strcmp(mode, "stall-join") == 0 && rank == 1 ? 3 : 6, 16, rank, &h,
          uneven);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    code = 2;
  }
  dp_ddp_release(ddp);
  dp_module_release(model);
  dp_process_group_release(group);
  dp_context_release(ctx);
  return code;
}
