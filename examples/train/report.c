#include "report.h"

#include <stdio.h>

void report_progress(const options* o, int tty, int epoch, size_t done, size_t total, double loss,
                     double rate, double elapsed) {
  if (o->quiet || o->rank != 0) return;
  if (tty) {
    const int width = 30;
    const int filled = total ? (int)((double)done / (double)total * width) : width;
    const double eta = rate > 0 ? (double)(total - done) * o->batch / rate : 0;
    fprintf(stderr, "\r  epoch %d/%d [", epoch, o->epochs);
    for (int i = 0; i < width; ++i) fputc(i < filled ? '=' : (i == filled ? '>' : ' '), stderr);
    fprintf(stderr, "] %zu/%zu  loss %.4f  %.1fk samples/s  ETA %.0fs  ", done, total, loss,
            rate / 1000, eta);
    if (done == total) fputc('\n', stderr);
  } else {
    fprintf(stderr, "  epoch %d/%d: %zu/%zu batches, loss %.4f, %.1fk samples/s, %.1fs\n", epoch,
            o->epochs, done, total, loss, rate / 1000, elapsed);
  }
  fflush(stderr);
}

void report_epoch(const options* o, const epoch_record* r) {
  if ((o->quiet && o->json) || o->rank != 0) return;
  const dp_phase_times* p = &r->phases;
  char sync[96] = "";
  if (o->distributed) {
    snprintf(sync, sizeof sync, " allreduce %.2fs (waited %.2fs) buffers %.2fs", r->sync.allreduce,
             r->sync.sync_wait, r->sync.buffer_broadcast);
  }
  printf(
      "epoch %d/%d  train loss %.4f  test loss %.4f  test accuracy %.2f%%  %.1fk samples/s  "
      "%.1fs  [scatter %.2fs replicate %.2fs apply %.2fs gather %.2fs backward %.2fs reduce "
      "%.2fs optimizer %.2fs%s]\n",
      r->epoch, o->epochs, r->train_loss, r->test_loss, r->test_accuracy * 100,
      r->samples_per_s / 1000, r->seconds, p->scatter, p->replicate, p->apply, p->gather,
      p->backward, p->reduce, r->optimizer_s, sync);
  fflush(stdout);
}

void report_json(const options* o, const device_setup* d, int bf16_native, double test_accuracy,
                 double test_loss, double samples_per_s, double seconds,
                 const dp_phase_times* phases, double optimizer_s, const sync_times* sync) {
  if (o->rank != 0) return;
  char ranks[64] = "";
  if (o->distributed) {
    snprintf(ranks, sizeof ranks, "\"ranks\": %d, \"allreduce_dtype\": \"%s\", ", o->ranks,
             o->allreduce);
  }
  char sync_keys[128] = "";
  if (sync) {
    snprintf(sync_keys, sizeof sync_keys,
             ", \"allreduce\": %.4f, \"sync_wait\": %.4f, \"buffer_broadcast\": %.4f",
             sync->allreduce, sync->sync_wait, sync->buffer_broadcast);
  }
  printf(
      "{\"model\": \"%s\", \"devices\": [%s], %s\"precision\": \"%s\", \"bf16_native\": %s, "
      "\"epochs\": %d, \"batch\": %lld, \"test_accuracy\": %.4f, \"test_loss\": %.4f, "
      "\"samples_per_s\": %.1f, "
      "\"seconds\": %.3f, \"phases\": {\"scatter\": %.4f, \"replicate\": %.4f, \"apply\": "
      "%.4f, \"gather\": %.4f, \"backward\": %.4f, \"reduce\": %.4f, \"optimizer\": %.4f%s}}\n",
      o->model, d->json_names, ranks, o->precision, bf16_native ? "true" : "false", o->epochs,
      (long long)o->batch, test_accuracy, test_loss, samples_per_s, seconds, phases->scatter,
      phases->replicate, phases->apply, phases->gather, phases->backward, phases->reduce,
      optimizer_s, sync_keys);
}

void report_evaluation(const options* o, const device_setup* d, int bf16_native, size_t n_test,
                       double test_loss, double test_accuracy, double seconds) {
  if (o->rank != 0) return;
  if (!o->quiet || !o->json) {
    printf("evaluated %s on %zu test images over %s: test loss %.4f, test accuracy %.2f%%\n",
           o->eval_only, n_test, d->where, test_loss, test_accuracy * 100);
  }
  if (o->json) {
    char ranks[32] = "";
    if (o->distributed) snprintf(ranks, sizeof ranks, "\"ranks\": %d, ", o->ranks);
    printf(
        "{\"model\": \"%s\", \"devices\": [%s], %s\"precision\": \"%s\", \"bf16_native\": %s, "
        "\"epochs\": 0, \"batch\": %lld, "
        "\"test_accuracy\": %.4f, \"test_loss\": %.4f, \"samples_per_s\": null, "
        "\"seconds\": %.3f, \"phases\": null}\n",
        o->model, d->json_names, ranks, o->precision, bf16_native ? "true" : "false",
        (long long)o->batch, test_accuracy, test_loss, seconds);
  }
}

void report_interrupt(const options* o, const char* when, int epoch, int checkpoint_epoch) {
  if (o->rank != 0) return;
  if (!o->checkpoint) {
    fprintf(stderr, "\ndp-train: interrupted %s epoch %d; no checkpoint was asked for\n", when,
            epoch);
  } else if (checkpoint_epoch > 0) {
    fprintf(stderr, "\ndp-train: interrupted %s epoch %d; %s holds epoch %d, intact\n", when, epoch,
            o->checkpoint, checkpoint_epoch);
  } else {
    fprintf(stderr, "\ndp-train: interrupted %s epoch %d; no checkpoint was written yet\n", when,
            epoch);
  }
}
