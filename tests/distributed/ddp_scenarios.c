/* Multi-process scenarios whose outcome is the whole job's, checked from outside by
   tests/distributed/test_scenarios.py (exit codes, messages, timing, traces):
     mismatch  rank 1's model differs from rank 0's: every rank must fail at creation
               with the same message, naming the first difference
     kill      rank 1 kills itself (SIGKILL) between forward and backward of step 3
     kill-barrier  rank 1 kills itself before a barrier, which rank 0 runs on its own
               thread (no communication thread in between): the timeout must still end it
     stall-barrier  right after the group's start, rank 1 sleeps 60 s outside MPI instead
               of joining a barrier: rank 0's timeout must end the whole job, rank 1 with
               it (MPICH ends a rank that calls MPI_Abort on a duplicate of the world only
               once the others make progress: 60 s, as the ranks have not talked yet)
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

static void train(dp_context* ctx, dp_ddp* ddp, dp_module* model, int steps, int64_t batch,
                  int32_t rank, int kill_step) {
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  dp_optimizer* opt = NULL;
  MUST(dp_optimizer_sgd(model, &so, &opt));
  for (int s = 0; s < steps; ++s) {
    dp_tensor *x, *y, *out = NULL;
    size_t n = 0;
    make_batch(ctx, s, rank * batch, batch, 0, &x, &y);
    MUST(dp_ddp_forward(ddp, &x, NULL, 1, &out, 1, &n));
    if (s == kill_step && rank == 1) {
      fprintf(stderr, "rank 1: killing itself in step %d\n", s);
      fflush(stderr);
      raise(SIGKILL);
    }
    dp_tensor* loss = loss_of(out, y, 1.0);
    MUST(dp_backward(loss, NULL, 0));
    MUST(dp_optimizer_step(opt));
    MUST(dp_optimizer_zero_grad(opt));
    dp_tensor_release(x);
    dp_tensor_release(y);
    dp_tensor_release(out);
    dp_tensor_release(loss);
  }
  dp_optimizer_release(opt);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s mismatch|kill|kill-barrier|stall-barrier|late|trace\n", argv[0]);
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
  dp_ddp_options o = DP_DDP_OPTIONS_INIT;
  o.first_bucket_bytes = 16; /* the last layer's bias alone */
  dp_ddp* ddp = NULL;
  const dp_result r = dp_ddp_create(model, group, NULL, 0, NULL, 0, &o, &ddp);
  int code = 0;
  if (r != DP_OK) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, dp_result_string(r), dp_last_error());
    code = 1;
  } else if (strcmp(mode, "kill-barrier") == 0) {
    if (rank == 1) raise(SIGKILL);
    MUST(dp_process_group_barrier(group));
  } else if (strcmp(mode, "kill") == 0) {
    train(ctx, ddp, model, 6, 16, rank, 3);
  } else if (strcmp(mode, "trace") == 0) {
    train(ctx, ddp, model, 6, 1024, rank, -1);
  } else if (strcmp(mode, "mismatch") == 0 || strcmp(mode, "late") == 0 ||
             strcmp(mode, "stall-barrier") == 0) {
    fprintf(stderr, "rank %d: the models were accepted\n", rank);
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
