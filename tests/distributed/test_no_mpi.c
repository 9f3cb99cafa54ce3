/* Without MPI: the process group fails with one clear error naming what is missing, and
   single-process training is unaffected. Run without mpirun, one process per case (the
   plugin is loaded once per process):
     test_distributed_no_mpi plugin-missing   (DP_MPI_PLUGIN names a file that is not there)
     test_distributed_no_mpi not-initialised  (a caller's communicator, MPI never started)
     test_distributed_no_mpi bad-timeout      (timeouts outside [1 ms, a year], as options
                                               and as DP_DISTRIBUTED_TIMEOUT, are refused
                                               before MPI is touched) */
#include "ddp_util.h"

static int train_one_step(dp_context* ctx) {
  dp_module* model = make_mlp(ctx, 16);
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  dp_optimizer* opt = NULL;
  MUST(dp_optimizer_sgd(model, &so, &opt));
  dp_tensor *x, *y, *out;
  make_batch(ctx, 0, 0, 4, 0, &x, &y);
  MUST(dp_module_forward1(model, x, &out));
  dp_tensor* loss = loss_of(out, y, 1.0);
  MUST(dp_backward(loss, NULL, 0));
  MUST(dp_optimizer_step(opt));
  float value = 0;
  MUST(dp_tensor_to_host(loss, &value, sizeof value));
  dp_tensor_release(x);
  dp_tensor_release(y);
  dp_tensor_release(out);
  dp_tensor_release(loss);
  dp_optimizer_release(opt);
  dp_module_release(model);
  /* Ten classes, small weights: the first loss is near log(10). */
  return fabsf(value - logf(10.0f)) < 0.5f ? 0 : 1;
}

static int expect(dp_result got, dp_result want, const char* needle) {
  if (got != want || strstr(dp_last_error(), needle) == NULL) {
    fprintf(stderr, "got %s (%s), expected %s mentioning \"%s\"\n", dp_result_string(got),
            dp_last_error(), dp_result_string(want), needle);
    return 1;
  }
  printf("%s: %s\n", dp_result_string(got), dp_last_error());
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  dp_context* ctx = ddp_context(1, 1);
  dp_process_group* group = NULL;
  int failed = 0;
  if (strcmp(argv[1], "plugin-missing") == 0) {
    const char* path = getenv("DP_MPI_PLUGIN");
    failed |= expect(dp_process_group_from_mpi(ctx, NULL, &group), DP_ERR_NOT_SUPPORTED,
                     path ? path : "DP_MPI_PLUGIN is not set");
    /* Asked again: the same answer, not a crash. */
    failed |=
        expect(dp_process_group_from_mpi(ctx, NULL, &group), DP_ERR_NOT_SUPPORTED, "MPI plugin");
  } else if (strcmp(argv[1], "not-initialised") == 0) {
    failed |= expect(dp_process_group_from_mpi_comm(ctx, 0, NULL, &group), DP_ERR_BACKEND,
                     "MPI is not initialised");
  } else if (strcmp(argv[1], "bad-timeout") == 0) {
    /* A year and more would overflow the steady clock's deadline far past it; under a
       millisecond the watch would spin. Neither reaches MPI (no plugin is needed). */
    const double bad[] = {1e10, 3.2e7, 1e-4, -1, NAN, INFINITY};
    const char* named[] = {"timeout_seconds = 1e+10",  "timeout_seconds = 3.2e+07",
                           "timeout_seconds = 0.0001", "timeout_seconds = -1",
                           "timeout_seconds = nan",    "timeout_seconds = inf"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
      dp_process_group_options o = DP_PROCESS_GROUP_OPTIONS_INIT;
      o.timeout_seconds = bad[i];
      failed |=
          expect(dp_process_group_from_mpi(ctx, &o, &group), DP_ERR_INVALID_ARGUMENT, named[i]);
      failed |= expect(dp_process_group_from_mpi(ctx, &o, &group), DP_ERR_INVALID_ARGUMENT,
                       "[0.001, 31536000]");
    }
    setenv("DP_DISTRIBUTED_TIMEOUT", "1e12", 1);
    failed |= expect(dp_process_group_from_mpi(ctx, NULL, &group), DP_ERR_INVALID_ARGUMENT,
                     "DP_DISTRIBUTED_TIMEOUT = \"1e12\"");
    unsetenv("DP_DISTRIBUTED_TIMEOUT");
  } else {
    return 2;
  }
  failed |= group != NULL;
  failed |= train_one_step(ctx);
  dp_context_release(ctx);
  return failed;
}
