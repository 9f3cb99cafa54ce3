/* dp-train: data-parallel training on Fashion-MNIST from C, through the public header
   only. Run `dp-train --help` for the options and exit codes; docs/dp-train.md has the
   whole story. The stages, each in its own file:
     options.c      the command line, --help, the checks that need no device
     checkpoint.c   a checkpoint's settings taken over, resuming, saving
     output_file.c  output paths checked at start, files written whole or not at all
     devices.c      --devices, --output-device, --chunk-sizes against the context's
     data.c         the data files, each epoch's order, the batch loader thread
     training.c     model, DataParallel, optimizer; the epochs; evaluation
     report.c, metrics.c, plot.c   progress and results, --metrics, --plot
     errors.c       the exit codes and the one-line failures */
#include <dataparallel/dataparallel.h>
#include <stdio.h>
#include <unistd.h>

#include "checkpoint.h"
#include "data.h"
#include "devices.h"
#include "errors.h"
#include "options.h"
#include "output_file.h"
#include "training.h"

/* The library's warnings and errors (the context's default log level), --quiet or not. */
static void on_log(void* user, dp_log_level level, const char* message) {
  (void)user;
  fprintf(stderr, "dp-train: %s: %s\n", level >= DP_LOG_WARNING ? "warning" : "note", message);
}

int main(int argc, char** argv) {
  options o;
  parse_options(argc, argv, &o);
  adopt_checkpoint_settings(&o);
  settle_options(&o);
  check_output_paths(&o);

  dp_context_options co = DP_CONTEXT_OPTIONS_INIT;
  co.seed = o.seed;
  co.log_fn = on_log;
  dp_context* ctx = NULL;
  check(dp_context_create(&co, &ctx), "creating the devices");
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
  trainer_setup(&t);
  const int exit_code = o.eval_only ? evaluate_only(&t) : train(&t);
  trainer_release(&t);
  dp_context_release(ctx);
  fashion_mnist_free(&data);
  return exit_code;
}
