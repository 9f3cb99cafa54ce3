/* What dp-train prints: progress on stderr (a bar on a terminal, plain lines otherwise),
   a summary line per epoch and the final JSON line on stdout. With --distributed, rank 0
   alone prints them. */
#ifndef DP_TRAIN_REPORT_H_
#define DP_TRAIN_REPORT_H_

#include <dataparallel/dataparallel.h>
#include <stddef.h>

#include "devices.h"
#include "metrics.h"
#include "options.h"

/* Batch `done` of `total` in `epoch`, with the running loss and rate; nothing with
   --quiet. */
void report_progress(const options* o, int tty, int epoch, size_t done, size_t total, double loss,
                     double rate, double elapsed);

/* The epoch's summary line; nothing with --quiet --json. */
void report_epoch(const options* o, const epoch_record* r);

/* --json's line of a training run: the last evaluation, the training loop's rate, the
   run's seconds and the phases summed over its epochs; with --distributed, rank 0's
   devices and the number of ranks. bf16_native: whether those devices compute bfloat16
   in hardware (devices_bf16_native), the line's "bf16_native". sync (with --distributed,
   else NULL): rank 0's synchronisation, summed, added to the phases. */
void report_json(const options* o, const device_setup* d, int bf16_native, double test_accuracy,
                 double test_loss, double samples_per_s, double seconds,
                 const dp_phase_times* phases, double optimizer_s, const sync_times* sync);

/* --eval-only's results: a line, and with --json the training run's keys (no rate or
   phases: nothing was trained). */
void report_evaluation(const options* o, const device_setup* d, int bf16_native, size_t n_test,
                       double test_loss, double test_accuracy, double seconds);

/* What Ctrl-C left behind: `when` is "in" (the epoch was cut short) or "after". */
void report_interrupt(const options* o, const char* when, int epoch, int checkpoint_epoch);

#endif /* DP_TRAIN_REPORT_H_ */
