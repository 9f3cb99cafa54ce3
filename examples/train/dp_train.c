/* dp-train: data-parallel training on Fashion-MNIST from C, through the public header
   only. Run `dp-train --help` for the options and exit codes; docs/dp-train.md has the
   whole story. The stages, each in its own file:
     options.c      the command line, --help, the checks that need no device
     checkpoint.c   a checkpoint's settings taken over, resuming, saving
     output_file.c  output paths checked at start, files written whole or not at all
     devices.c      --devices, --output-device, --chunk-sizes against the context's
     data.c         the data files, each epoch's order, the batch loader thread (a rank's
                    share of each batch with --distributed)
     training.c     model, DataParallel or DistributedDataParallel, optimizer; the epochs;
                    evaluation (split over the ranks and summed)
     report.c, metrics.c, plot.c   progress and results, --metrics, --plot
     errors.c       the exit codes and the one-line failures */
#include <dataparallel/dataparallel.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "data.h"
#include "devices.h"
#include "errors.h"
#include "options.h"
#include "output_file.h"
#include "training.h"

/* The library's warnings and errors (the context's default log level), --quiet or not;
   its notes too with --verbose. */
static void on_log(void* user, dp_log_level level, const char* message) {
  (void)user;
  fprintf(stderr, "dp-train: %s: %s\n", level >= DP_LOG_WARNING ? "warning" : "note", message);
}

static dp_context* create_context(const options* o) {
  dp_context_options co = DP_CONTEXT_OPTIONS_INIT;
  co.seed = o->seed;
  co.log_fn = on_log;
  if (o->verbose) co.log_level = DP_LOG_INFO;
  dp_context* ctx = NULL;
  check(dp_context_create(&co, &ctx), "creating the devices");
  return ctx;
}

/* --distributed: the group of every rank mpirun started, which sets o's rank and ranks.
   Exits 1 with the library's message when its MPI plugin cannot be loaded. */
static dp_process_group* join_ranks(dp_context* ctx, options* o) {
  dp_process_group* group = NULL;
  check(dp_process_group_from_mpi(ctx, NULL, &group), "--distributed");
  int32_t rank = 0, ranks = 1;
  check(dp_process_group_rank(group, &rank), "--distributed");
  check(dp_process_group_size(group, &ranks), "--distributed");
  o->rank = rank;
  o->ranks = ranks;
  return group;
}

int main(int argc, char** argv) {
  options o;
  parse_options(argc, argv, &o);
  dp_context* ctx = NULL;
  dp_process_group* group = NULL;
  if (o.distributed) {
    /* The ranks first, so that rank 0 alone warns about a checkpoint's settings. The
       context's seed is then the command line's, not a resumed checkpoint's: it only draws
       the initial weights, which the checkpoint's replace (and DistributedDataParallel
       gives every rank rank 0's); the epochs' shuffles follow the checkpoint's seed. */
    ctx = create_context(&o);
    group = join_ranks(ctx, &o);
  }
  adopt_checkpoint_settings(&o);
  settle_options(&o);
  if (o.rank == 0) check_output_paths(&o); /* only rank 0 writes them */
  if (!ctx) ctx = create_context(&o);
  /* Autocast is per thread and follows this thread's calls onto the device workers: set
     once here, it covers training and evaluation. */
  if (strcmp(o.precision, "bf16") == 0) check(dp_set_autocast(DP_BFLOAT16, NULL), "--precision");
  device_setup devices;
  choose_devices(ctx, &o, &devices);
  fashion_mnist data;
  load_data(&o, &data);

  trainer t = {0};
  t.ctx = ctx;
  t.o = &o;
  t.d = &devices;
  t.data = &data;
  t.tty = isatty(STDERR_FILENO);
  t.group = group;
  trainer_setup(&t);
  const int exit_code = o.eval_only ? evaluate_only(&t) : train(&t);
  trainer_release(&t);
  /* The last reference to the group: MPI is finalised here, on every rank alike (each
     returns the same code). An error exits without it, and mpirun ends the others. */
  dp_process_group_release(group);
  dp_context_release(ctx);
  fashion_mnist_free(&data);
  /* What was printed (the --json line, the report) must have reached stdout: a full disk
     or a closed pipe is an output that cannot be written. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    bad_input("cannot write the standard output: %s", strerror(errno));
  }
  return exit_code;
}
