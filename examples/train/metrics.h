/* --metrics: one CSV row per epoch, which a resumed run reads back and continues. */
#ifndef DP_TRAIN_METRICS_H_
#define DP_TRAIN_METRICS_H_

#include <dataparallel/dataparallel.h>
#include <stddef.h>

/* One epoch's figures: a row of the CSV, a point of the plot. */
/* With --distributed: this rank's seconds in the ranks' synchronisation (dp_ddp_stats);
   not in the --metrics file. */
typedef struct sync_times {
  double allreduce, sync_wait, buffer_broadcast;
} sync_times;

typedef struct epoch_record {
  int epoch;
  double train_loss, test_loss, test_accuracy, samples_per_s, seconds;
  dp_phase_times phases;
  double optimizer_s;
  sync_times sync;
} epoch_record;

/* Writes the n records as the CSV at path (exit EXIT_BAD_INPUT, errors.h, if it cannot). */
void write_metrics(const char* path, const epoch_record* r, size_t n);

/* The rows of an earlier run's --metrics file for epochs before `before` (a resumed run
   continues its history): at most before - 1 of them, one per epoch in increasing order;
   0 when the file does not exist. A row that does not parse, or that repeats or goes back
   to an epoch, ends the history there, with a warning. */
size_t read_metrics(const char* path, int before, epoch_record* r);

#endif /* DP_TRAIN_METRICS_H_ */
