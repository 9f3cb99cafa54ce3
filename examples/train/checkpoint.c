#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

/* Metadata `key` of the checkpoint at path into buf; 0 when it has none (a checkpoint
   of an earlier dp-train, or a file the loader rejects later with its own message). */
static int checkpoint_setting(const char* path, const char* key, char* buf, size_t size) {
  size_t needed = 0;
  return dp_checkpoint_metadata(path, key, buf, size, &needed) == DP_OK && needed <= size;
}

/* v as the shortest text that reads back as exactly v ("0.05", not
   "0.050000000000000003"). */
static void format_double(double v, char* buf, size_t size) {
  for (int digits = 1; digits <= 17; ++digits) {
    snprintf(buf, size, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) return;
  }
}

/* Whether a run takes over the setting `name` (an option, "--lr") the checkpoint records
   as `recorded`: yes when the command line did not give the option. A run that gave
   another value (`differs`; `mine` is it as text) keeps its own, with a warning, since it
   no longer continues the checkpoint's run exactly. */
static int takes_over(const options* o, unsigned given, const char* name, const char* recorded,
                      int differs, const char* mine) {
  if (!(o->given & given)) return 1;
  if (differs && o->rank == 0) {
    fprintf(stderr,
            "dp-train: warning: the checkpoint was trained with %s %s, this run continues "
            "with %s %s\n",
            name, recorded, name, mine);
  }
  return 0;
}

/* A recorded number option (as parse_double takes: finite, >= 0) into *value unless
   given; returns whether it was taken over. */
static int adopt_double(const options* o, unsigned given, const char* name, const char* recorded,
                        double* value) {
  char* end = NULL;
  const double v = strtod(recorded, &end);
  if (!*recorded || *end || !(v >= 0) || !isfinite(v)) return 0;
  char mine[32];
  format_double(*value, mine, sizeof mine);
  if (!takes_over(o, given, name, recorded, v != *value, mine)) return 0;
  *value = v;
  return 1;
}

/* As adopt_double, for an integer option whose values lie in lo..hi. */
static int adopt_int(const options* o, unsigned given, const char* name, const char* recorded,
                     int64_t lo, int64_t hi, int64_t* value) {
  char* end = NULL;
  errno = 0;
  const long long v = strtoll(recorded, &end, 10);
  if (errno || !*recorded || *end || v < lo || v > hi) return 0;
  char mine[32];
  snprintf(mine, sizeof mine, "%lld", (long long)*value);
  if (!takes_over(o, given, name, recorded, v != *value, mine)) return 0;
  *value = v;
  return 1;
}

/* Why a model or optimizer given must match: the weights and the optimizer's state fit only
   their own. A different lr, momentum, batch, seed or limit fine-tunes from the checkpoint.
   Checkpoints of an earlier dp-train record no lr, momentum, batch or limit: those keep their
   defaults. */
void adopt_checkpoint_settings(options* o) {
  const char* path = o->resume ? o->resume : o->eval_only;
  const char* option = o->resume ? "--resume" : "--eval-only";
  if (!path) return;
  char v[64];
  /* A model given that the checkpoint contradicts would fail on the first mismatched
     shape, a message that does not say what is wrong: this one does. */
  if (checkpoint_setting(path, "model", v, sizeof v)) {
    if (o->given & GIVEN_MODEL) {
      if (strcmp(v, o->model) != 0) {
        bad_input("%s %s: the checkpoint is of model %s, not %s", option, path, v, o->model);
      }
    } else if (strcmp(v, "mlp") == 0 || strcmp(v, "cnn") == 0) {
      o->model = strcmp(v, "mlp") == 0 ? "mlp" : "cnn";
    } else {
      bad_input("%s %s: the checkpoint is of model %s, which dp-train does not build", option, path,
                v);
    }
  }
  if (!o->resume) return;
  if (checkpoint_setting(path, "optimizer", v, sizeof v)) {
    if (o->given & GIVEN_OPTIMIZER) {
      if (strcmp(v, o->optimizer) != 0) {
        bad_input("--resume %s: the checkpoint holds the state of optimizer %s, not %s", path, v,
                  o->optimizer);
      }
    } else if (strcmp(v, "sgd") == 0 || strcmp(v, "adam") == 0) {
      o->optimizer = strcmp(v, "sgd") == 0 ? "sgd" : "adam";
    }
  }
  if (checkpoint_setting(path, "lr", v, sizeof v)) adopt_double(o, GIVEN_LR, "--lr", v, &o->lr);
  if (strcmp(o->optimizer, "sgd") == 0 && checkpoint_setting(path, "momentum", v, sizeof v)) {
    adopt_double(o, GIVEN_MOMENTUM, "--momentum", v, &o->momentum);
  }
  if (checkpoint_setting(path, "batch", v, sizeof v)) {
    o->batch_from_checkpoint =
        adopt_int(o, GIVEN_BATCH, "--batch", v, 1, INT64_MAX / 1024, &o->batch);
  }
  if (checkpoint_setting(path, "seed", v, sizeof v)) {
    int64_t seed = (int64_t)o->seed; /* --seed takes 0 .. INT64_MAX */
    adopt_int(o, GIVEN_SEED, "--seed", v, 0, INT64_MAX, &seed);
    o->seed = (uint64_t)seed;
  }
  /* The training samples: "all", or the N of --limit N (the epochs' shuffles depend on
     it, so a run on other samples does not continue this one). */
  if (checkpoint_setting(path, "limit", v, sizeof v)) {
    char* end = NULL;
    errno = 0;
    const long long recorded = strcmp(v, "all") == 0 ? 0 : strtoll(v, &end, 10);
    if (recorded == 0 ? strcmp(v, "all") == 0 : (!errno && *v && !*end && recorded > 0)) {
      char mine[32] = "all";
      if (o->limit) snprintf(mine, sizeof mine, "%lld", (long long)o->limit);
      if (takes_over(o, GIVEN_LIMIT, "--limit", v, recorded != o->limit, mine)) {
        o->limit = recorded;
      }
    }
  }
}

int resume_checkpoint(const options* o, dp_module* model, dp_optimizer* opt) {
  if (dp_checkpoint_load(model, opt, o->resume) != DP_OK) {
    bad_input("cannot resume from %s: %s", o->resume, dp_last_error());
  }
  /* The load put back the rate the optimizer had; an --lr given now wins over it. */
  if (o->given & GIVEN_LR) check(dp_optimizer_set_lr(opt, o->lr), "setting --lr");
  char meta[64];
  if (dp_checkpoint_metadata(o->resume, "epoch", meta, sizeof meta, NULL) != DP_OK) {
    bad_input("--resume %s: the checkpoint records no epoch", o->resume);
  }
  const int first_epoch = (int)parse_int(meta, "checkpoint epoch", 0, 1000000) + 1;
  if (!o->quiet && o->rank == 0) {
    fprintf(stderr, "dp-train: resuming after epoch %d from %s\n", first_epoch - 1, o->resume);
  }
  if (first_epoch > o->epochs && o->rank == 0) {
    fprintf(stderr,
            "dp-train: warning: %s is at epoch %d and --epochs is %d, which counts from the "
            "first run's start: no epoch to train\n",
            o->resume, first_epoch - 1, o->epochs);
  }
  return first_epoch;
}

void save_checkpoint(const options* o, dp_module* model, dp_optimizer* opt, int epoch) {
  char epoch_str[32], seed_str[32], lr_str[32], momentum_str[32], batch_str[32],
      limit_str[32] = "all";
  snprintf(epoch_str, sizeof epoch_str, "%d", epoch);
  snprintf(seed_str, sizeof seed_str, "%llu", (unsigned long long)o->seed);
  format_double(o->lr, lr_str, sizeof lr_str);
  format_double(o->momentum, momentum_str, sizeof momentum_str);
  snprintf(batch_str, sizeof batch_str, "%lld", (long long)o->batch);
  if (o->limit) snprintf(limit_str, sizeof limit_str, "%lld", (long long)o->limit);
  const int sgd = strcmp(o->optimizer, "sgd") == 0;
  /* Momentum last: an Adam run records none. */
  const dp_metadata_entry meta[8] = {{"model", o->model},         {"epoch", epoch_str},
                                     {"seed", seed_str},          {"limit", limit_str},
                                     {"optimizer", o->optimizer}, {"lr", lr_str},
                                     {"batch", batch_str},        {"momentum", momentum_str}};
  check(dp_checkpoint_save(model, opt, o->checkpoint, meta, sgd ? 8 : 7), "saving the checkpoint");
}
