/* dp-train: data-parallel training on Fashion-MNIST from C, through the public header
   only. Run `dp-train --help` for the options. Exit codes: 0 done, 2 bad input (options,
   data, devices, checkpoints), 1 another failure, 130 interrupted (Ctrl-C). */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */

#include <dataparallel/dataparallel.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fashion_mnist.h"
#include "models.h"
#include "torch_randperm.h"

#define EXIT_BAD_INPUT 2
#define EXIT_INTERRUPTED 130
#define MAX_DEVICES 64

/* ---------------------------------------------------------------------------------- */
/* Options                                                                           */

typedef struct options {
  const char* model;
  int epochs;
  int64_t batch;
  double lr;
  double momentum;
  const char* optimizer;
  uint64_t seed;
  const char* devices;
  const char* output_device;
  const char* chunk_sizes;
  int64_t limit;
  const char* data;
  const char* checkpoint;
  const char* resume;
  const char* eval_only;
  const char* metrics;
  const char* plot;
  int json;
  int quiet;
  unsigned given;            /* GIVEN_* bits: the options the command line set */
  int batch_from_checkpoint; /* --batch came from --resume's checkpoint */
} options;

/* The options a checkpoint records; a resumed run takes them over unless given. */
enum {
  GIVEN_MODEL = 1u << 0,
  GIVEN_BATCH = 1u << 1,
  GIVEN_LR = 1u << 2,
  GIVEN_MOMENTUM = 1u << 3,
  GIVEN_OPTIMIZER = 1u << 4,
  GIVEN_SEED = 1u << 5,
  GIVEN_LIMIT = 1u << 6,
};

static void usage(FILE* f) {
  fprintf(f,
          "usage: dp-train [options]\n"
          "Trains a model on Fashion-MNIST with DataParallel over the chosen devices.\n\n"
          "  --model mlp|cnn         the models of torch_reference.py (default mlp)\n"
          "  --epochs N              passes over the training set (default 5)\n"
          "  --batch N               global batch, split over the devices (default 256)\n"
          "  --lr X                  learning rate (default 0.1 for SGD, 0.001 for Adam)\n"
          "  --momentum X            SGD momentum (default 0.9)\n"
          "  --optimizer sgd|adam    (default sgd)\n"
          "  --seed N                weights and shuffling, as torch_reference.py's (default 0;\n"
          "                          as torch.manual_seed, only N's low 32 bits count)\n"
          "  --devices LIST          cpu:0,cpu:1 or cuda:0,cuda:1 or all (default all:\n"
          "                          every GPU, else every CPU device)\n"
          "  --output-device DEV     where outputs are gathered (default the first device)\n"
          "  --chunk-sizes LIST      rows per device of a training batch, summing to --batch\n"
          "                          (default even; the test set is always split evenly)\n"
          "  --limit N               train on the first N samples only\n"
          "  --data DIR              IDX files (default " FASHION_MNIST_DEFAULT_DIR
          ")\n"
          "  --checkpoint FILE       save model and optimizer (safetensors) after each epoch\n"
          "  --resume FILE           continue from a checkpoint written by --checkpoint\n"
          "                          (with its model, optimizer, lr, momentum, batch,\n"
          "                          seed and limit unless given here)\n"
          "  --eval-only FILE        evaluate the model in FILE on the test set and exit\n"
          "  --metrics FILE          per-epoch CSV\n"
          "  --plot FILE             per-epoch loss and accuracy as an SVG\n"
          "  --json                  a final JSON line with the results\n"
          "  --quiet                 no progress output (warnings and errors still show)\n"
          "  --help                  this text\n");
}

/* One-line error, exit 2. */
static void bad_input(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void bad_input(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("dp-train: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_BAD_INPUT);
}

/* strtoll and strtod skip leading blanks and take a '+', which no option's number needs:
   it starts with a digit, '-' or '.'. */
static int number_start(const char* s) {
  return *s != '\0' && strchr("0123456789-.", *s) != NULL;
}

static int64_t parse_int(const char* s, const char* what, int64_t lo, int64_t hi) {
  char* end = NULL;
  errno = 0;
  const long long v = strtoll(s, &end, 10);
  if (errno || !number_start(s) || *end || v < lo || v > hi) {
    bad_input("%s = \"%s\" is not an integer between %lld and %lld", what, s, (long long)lo,
              (long long)hi);
  }
  return v;
}

static double parse_double(const char* s, const char* what, double lo) {
  char* end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  if (errno || !number_start(s) || *end || !(v >= lo) || !isfinite(v)) {
    bad_input("%s = \"%s\" is not a number >= %g", what, s, lo);
  }
  return v;
}

static void parse_options(int argc, char** argv, options* o) {
  enum {
    OPT_OUTPUT = 1000,
    OPT_CHUNKS,
    OPT_RESUME,
    OPT_EVAL,
    OPT_METRICS,
    OPT_PLOT,
    OPT_JSON,
    OPT_QUIET,
    OPT_OPTIMIZER,
    OPT_MOMENTUM,
    OPT_LIMIT,
    OPT_DATA,
    OPT_CHECKPOINT
  };
  static const struct option longopts[] = {{"model", required_argument, NULL, 'm'},
                                           {"epochs", required_argument, NULL, 'e'},
                                           {"batch", required_argument, NULL, 'b'},
                                           {"lr", required_argument, NULL, 'l'},
                                           {"momentum", required_argument, NULL, OPT_MOMENTUM},
                                           {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
                                           {"seed", required_argument, NULL, 's'},
                                           {"devices", required_argument, NULL, 'd'},
                                           {"output-device", required_argument, NULL, OPT_OUTPUT},
                                           {"chunk-sizes", required_argument, NULL, OPT_CHUNKS},
                                           {"limit", required_argument, NULL, OPT_LIMIT},
                                           {"data", required_argument, NULL, OPT_DATA},
                                           {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
                                           {"resume", required_argument, NULL, OPT_RESUME},
                                           {"eval-only", required_argument, NULL, OPT_EVAL},
                                           {"metrics", required_argument, NULL, OPT_METRICS},
                                           {"plot", required_argument, NULL, OPT_PLOT},
                                           {"json", no_argument, NULL, OPT_JSON},
                                           {"quiet", no_argument, NULL, OPT_QUIET},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->model = "mlp";
  o->epochs = 5;
  o->batch = 256;
  o->lr = -1;
  o->momentum = 0.9;
  o->optimizer = "sgd";
  o->devices = "all";
  o->data = FASHION_MNIST_DEFAULT_DIR;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
    switch (c) {
      case 'm':
        o->model = optarg;
        o->given |= GIVEN_MODEL;
        break;
      case 'e':
        o->epochs = (int)parse_int(optarg, "--epochs", 0, 100000);
        break;
      case 'b':
        o->batch = parse_int(optarg, "--batch", 1, INT64_MAX / 1024);
        o->given |= GIVEN_BATCH;
        break;
      case 'l':
        o->lr = parse_double(optarg, "--lr", 0);
        o->given |= GIVEN_LR;
        break;
      case OPT_MOMENTUM:
        o->momentum = parse_double(optarg, "--momentum", 0);
        o->given |= GIVEN_MOMENTUM;
        break;
      case OPT_OPTIMIZER:
        o->optimizer = optarg;
        o->given |= GIVEN_OPTIMIZER;
        break;
      case 's':
        o->seed = (uint64_t)parse_int(optarg, "--seed", 0, INT64_MAX);
        o->given |= GIVEN_SEED;
        break;
      case 'd':
        o->devices = optarg;
        break;
      case OPT_OUTPUT:
        o->output_device = optarg;
        break;
      case OPT_CHUNKS:
        o->chunk_sizes = optarg;
        break;
      case OPT_LIMIT:
        o->limit = parse_int(optarg, "--limit", 1, INT64_MAX);
        o->given |= GIVEN_LIMIT;
        break;
      case OPT_DATA:
        o->data = optarg;
        break;
      case OPT_CHECKPOINT:
        o->checkpoint = optarg;
        break;
      case OPT_RESUME:
        o->resume = optarg;
        break;
      case OPT_EVAL:
        o->eval_only = optarg;
        break;
      case OPT_METRICS:
        o->metrics = optarg;
        break;
      case OPT_PLOT:
        o->plot = optarg;
        break;
      case OPT_JSON:
        o->json = 1;
        break;
      case OPT_QUIET:
        o->quiet = 1;
        break;
      case 'h':
        usage(stdout);
        exit(0);
      case ':':
        bad_input("option %s needs a value (see --help)", argv[optind - 1]);
      default:
        /* In a bundle of short options ("-qx") argv[optind - 1] may be the argument
           before; getopt names the letter in optopt (0 for an unknown long option). */
        if (optopt > 0 && optopt < 128) bad_input("unknown option \"-%c\" (see --help)", optopt);
        bad_input("unknown option \"%s\" (see --help)", argv[optind - 1]);
    }
  }
  if (optind < argc) bad_input("unexpected argument \"%s\" (see --help)", argv[optind]);
  if (o->resume && o->eval_only) {
    bad_input("--resume and --eval-only exclude each other: --eval-only trains nothing");
  }
  if (o->eval_only && (o->checkpoint || o->metrics || o->plot)) {
    bad_input("%s and --eval-only exclude each other: --eval-only writes no file",
              o->checkpoint ? "--checkpoint"
              : o->metrics  ? "--metrics"
                            : "--plot");
  }
  if (strcmp(o->model, "mlp") != 0 && strcmp(o->model, "cnn") != 0) {
    bad_input("--model = \"%s\": expected mlp or cnn", o->model);
  }
  if (strcmp(o->optimizer, "sgd") != 0 && strcmp(o->optimizer, "adam") != 0) {
    bad_input("--optimizer = \"%s\": expected sgd or adam", o->optimizer);
  }
}

/* "cpu:3" -> device; 0 on success. */
static int parse_device(const char* s, dp_device* d) {
  const char* colon = strchr(s, ':');
  if (!colon || !colon[1]) return -1;
  const size_t kind = (size_t)(colon - s);
  if (kind == 3 && strncmp(s, "cpu", 3) == 0) {
    d->type = DP_DEVICE_CPU;
  } else if (kind == 4 && strncmp(s, "cuda", 4) == 0) {
    d->type = DP_DEVICE_CUDA;
  } else {
    return -1;
  }
  /* Digits only: strtol alone would take " 1" and "+1" (and "cpu:0, cpu:1" was refused
     for its space while "cpu: 1" passed). */
  if (strspn(colon + 1, "0123456789") != strlen(colon + 1)) return -1;
  char* end = NULL;
  const long v = strtol(colon + 1, &end, 10);
  if (*end || v < 0 || v > 1 << 20) return -1;
  d->index = (int32_t)v;
  return 0;
}

/* A comma-separated list into items (copied); returns the count. */
static size_t split_list(const char* s, char items[][64], size_t max, const char* what) {
  size_t n = 0;
  const char* p = s;
  while (*p) {
    const char* comma = strchr(p, ',');
    const size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0 || len >= 64) bad_input("%s = \"%s\" has an empty or overlong entry", what, s);
    if (n == max) bad_input("%s = \"%s\" has more than %zu entries", what, s, max);
    memcpy(items[n], p, len);
    items[n][len] = '\0';
    ++n;
    p += len + (comma ? 1 : 0);
    if (comma && !*p) bad_input("%s = \"%s\" ends with a comma", what, s);
  }
  if (n == 0) bad_input("%s is empty", what);
  return n;
}

/* ---------------------------------------------------------------------------------- */
/* Small helpers                                                                     */

static volatile sig_atomic_t interrupted = 0;
static void on_sigint(int sig) {
  (void)sig;
  interrupted = 1;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Any library failure past option checking: the message, exit 1 (2 for bad input). */
static void check(dp_result r, const char* what) {
  if (r == DP_OK) return;
  fprintf(stderr, "dp-train: %s: %s\n", what, dp_last_error());
  exit(r == DP_ERR_INVALID_ARGUMENT || r == DP_ERR_OUT_OF_RANGE || r == DP_ERR_FORMAT ||
               r == DP_ERR_IO
           ? EXIT_BAD_INPUT
           : 1);
}

/* The library's warnings and errors (the context's default log level), --quiet or not. */
static void on_log(void* user, dp_log_level level, const char* message) {
  (void)user;
  fprintf(stderr, "dp-train: %s: %s\n", level >= DP_LOG_WARNING ? "warning" : "note", message);
}

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
  if (differs) {
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

/* A run that resumes a checkpoint continues the run that wrote it: the model, optimizer,
   lr, momentum, batch, seed and limit it records are taken over unless the command line gives
   them. A model or optimizer given must match (the weights and the optimizer's state fit
   only their own); an lr, momentum, batch, seed or limit given may differ (to fine-tune
   from a checkpoint), with a warning. --eval-only takes over the model only. Checkpoints
   of an earlier dp-train record no lr, momentum, batch or limit: those keep their
   defaults. */
static void adopt_checkpoint_settings(options* o) {
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

/* Moves *t (a reference the caller owns) to the device of `like`, if it is elsewhere. The
   labels go where the logits are: on the output device when DataParallel gathered them
   (always, with several devices), on the device itself when a single device ran the
   module alone. */
static void move_to_device_of(dp_tensor** t, const dp_tensor* like) {
  dp_device want, have;
  check(dp_tensor_device(like, &want), "device");
  check(dp_tensor_device(*t, &have), "device");
  if (want.type == have.type && want.index == have.index) return;
  dp_tensor* moved = NULL;
  check(dp_tensor_to_device(*t, want, &moved), "labels");
  dp_tensor_release(*t);
  *t = moved;
}

/* The epoch's order (epochs count from 1): torch_reference.py's, torch.randperm after
   manual_seed(seed + epoch - 1). It depends only on (seed, epoch), so a resumed run
   shuffles exactly as the uninterrupted one. */
static void permutation(size_t* perm, size_t n, uint64_t seed, int epoch) {
  torch_randperm(perm, n, seed + (uint64_t)(epoch - 1));
}

/* Writes the model input of sample rows[i] to dst row i (pixel / 255). The rows are
   random, so each one is prefetched a few rows ahead: the conversion then overlaps the
   memory latency instead of waiting on it. Runs on the loader thread, which gives its
   core back every 128 rows (~20 us; see batch_loader). */
static void gather_rows(float* dst, const uint8_t* pixels, const size_t* rows, size_t n) {
  const size_t ahead = 4;
  for (size_t i = 0; i < n; ++i) {
    if (i + ahead < n) {
      const uint8_t* next = pixels + rows[i + ahead] * FASHION_PIXELS;
      for (size_t off = 0; off < FASHION_PIXELS; off += 64) __builtin_prefetch(next + off);
    }
    fashion_pixels_to_float(dst + i * FASHION_PIXELS, pixels + rows[i] * FASHION_PIXELS,
                            FASHION_PIXELS);
    if (i % 128 == 127) sched_yield();
  }
}

/* ---------------------------------------------------------------------------------- */
/* The training batches of one epoch, assembled one ahead on a thread of their own: the
   rows of batch b+1 are gathered while batch b trains, so the copy leaves the step's
   critical path (the main thread would otherwise gather while the devices wait).
   Every core is busy while the devices train, so the loader must not hold one for long:
   it yields every 128 rows (twice a batch of 256, ~20 us of its ~45 us of CPU), so a
   device's thread gets its core back soon. Gathering a batch in one go, it held a core for
   ~90 us (perf sched timehist) and the replicas finished ~80 us apart. Yielding every 32
   rows was best while three threads (the caller and both workers) spun over two cores;
   since the caller works as the first device (docs/threading.md), two threads are busy,
   each yield costs the loader's core a switch back and forth, and every 128 rows was the
   fastest of 32, 64, 128 and 256: two devices train 1.029x as fast as with every 32 rows
   (median of 12 paired runs of one epoch, each at least 1.00x), 1.015x as with 64 and
   1.008x as with 256 (8 pairs each); one device within 1% of all. It is also woken after
   the lock is released. */

enum { LOADER_SLOTS = 2 };

typedef struct batch_loader {
  dp_context* ctx;
  const fashion_split* train;
  const size_t* perm;
  const char* model;
  int64_t batch;
  size_t n_batches;
  dp_device input_device, label_device;
  float* staging;  /* batch rows for a device that is not a CPU (copied from here) */
  int64_t* labels; /* batch labels */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t changed;
  dp_tensor* x[LOADER_SLOTS];
  dp_tensor* y[LOADER_SLOTS];
  size_t produced, consumed; /* batches handed over so far, and taken */
  int stop;
} batch_loader;

static void make_batch(const batch_loader* l, size_t b, dp_tensor** x, dp_tensor** y) {
  int64_t shape[4];
  const size_t nd = model_input_shape(l->model, l->batch, shape);
  const size_t* rows = l->perm + b * (size_t)l->batch;
  const size_t n = (size_t)l->batch;
  if (l->input_device.type == DP_DEVICE_CPU) {
    /* Rows go straight into the batch tensor: one copy, as torch's x[idx]. */
    void* dst = NULL;
    check(dp_tensor_empty(l->ctx, DP_FLOAT32, shape, nd, l->input_device, x), "batch");
    check(dp_tensor_data(*x, &dst), "batch");
    gather_rows((float*)dst, l->train->pixels, rows, n);
  } else {
    gather_rows(l->staging, l->train->pixels, rows, n);
    check(dp_tensor_from_data(l->ctx, DP_FLOAT32, shape, nd, l->staging,
                              n * FASHION_PIXELS * sizeof(float), l->input_device, x),
          "batch");
  }
  for (size_t i = 0; i < n; ++i) l->labels[i] = l->train->labels[rows[i]];
  check(dp_tensor_from_data(l->ctx, DP_INT64, shape, 1, l->labels, n * sizeof(int64_t),
                            l->label_device, y),
        "labels");
}

static void* loader_main(void* arg) {
  batch_loader* l = (batch_loader*)arg;
  for (size_t b = 0; b < l->n_batches; ++b) {
    pthread_mutex_lock(&l->mu);
    while (!l->stop && l->produced - l->consumed == LOADER_SLOTS)
      pthread_cond_wait(&l->changed, &l->mu);
    const int stop = l->stop;
    pthread_mutex_unlock(&l->mu);
    if (stop) break;
    dp_tensor *x = NULL, *y = NULL;
    make_batch(l, b, &x, &y);
    pthread_mutex_lock(&l->mu);
    l->x[b % LOADER_SLOTS] = x;
    l->y[b % LOADER_SLOTS] = y;
    l->produced = b + 1;
    pthread_mutex_unlock(&l->mu);
    pthread_cond_broadcast(&l->changed);
  }
  return NULL;
}

static void loader_start(batch_loader* l) {
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->changed, NULL);
  l->produced = l->consumed = 0;
  l->stop = 0;
  if (pthread_create(&l->thread, NULL, loader_main, l) != 0) {
    fprintf(stderr, "dp-train: cannot start the batch loader thread\n");
    exit(1);
  }
}

/* The next batch of the epoch, waiting for it if need be; the caller owns both tensors. */
static void loader_next(batch_loader* l, dp_tensor** x, dp_tensor** y) {
  pthread_mutex_lock(&l->mu);
  while (l->produced == l->consumed) pthread_cond_wait(&l->changed, &l->mu);
  const size_t slot = l->consumed % LOADER_SLOTS;
  *x = l->x[slot];
  *y = l->y[slot];
  l->x[slot] = l->y[slot] = NULL;
  l->consumed++;
  pthread_mutex_unlock(&l->mu);
  pthread_cond_broadcast(&l->changed);
}

/* Stops the thread (also mid-epoch) and releases the batches nobody took. */
static void loader_stop(batch_loader* l) {
  pthread_mutex_lock(&l->mu);
  l->stop = 1;
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->mu);
  pthread_join(l->thread, NULL);
  for (int i = 0; i < LOADER_SLOTS; ++i) {
    dp_tensor_release(l->x[i]);
    dp_tensor_release(l->y[i]);
    l->x[i] = l->y[i] = NULL;
  }
  pthread_cond_destroy(&l->changed);
  pthread_mutex_destroy(&l->mu);
}

static const char* device_str(dp_device d, char* buf, size_t n) {
  snprintf(buf, n, "%s:%d", d.type == DP_DEVICE_CPU ? "cpu" : "cuda", d.index);
  return buf;
}

/* ---------------------------------------------------------------------------------- */
/* Evaluation                                                                        */

typedef struct eval_result {
  double loss;
  double accuracy;
} eval_result;

/* Test loss and accuracy through the wrapper, in evaluation mode with grad off. */
static eval_result evaluate(dp_context* ctx, dp_data_parallel* dpw, dp_module* model,
                            const char* model_name, const fashion_split* test,
                            dp_device input_dev) {
  const int64_t eval_batch = 1000;
  check(dp_module_train(model, 0), "eval mode");
  const int previous = dp_set_grad_enabled(0);
  double loss_sum = 0;
  size_t correct = 0;
  int64_t* predicted = (int64_t*)malloc((size_t)eval_batch * sizeof(int64_t));
  float* inputs = (float*)malloc((size_t)eval_batch * FASHION_PIXELS * sizeof(float));
  if (!predicted || !inputs) {
    fprintf(stderr, "dp-train: out of memory\n");
    exit(1);
  }
  for (size_t start = 0; start < test->n; start += (size_t)eval_batch) {
    const int64_t b =
        (int64_t)(test->n - start < (size_t)eval_batch ? test->n - start : (size_t)eval_batch);
    int64_t shape[4];
    const size_t nd = model_input_shape(model_name, b, shape);
    dp_tensor *x = NULL, *y = NULL, *logits = NULL, *loss = NULL, *arg = NULL;
    fashion_pixels_to_float(inputs, test->pixels + start * FASHION_PIXELS,
                            (size_t)b * FASHION_PIXELS);
    check(dp_tensor_from_data(ctx, DP_FLOAT32, shape, nd, inputs,
                              (size_t)b * FASHION_PIXELS * sizeof(float), input_dev, &x),
          "test batch");
    size_t n_out = 0;
    check(dp_data_parallel_forward(dpw, &x, NULL, 1, &logits, 1, &n_out), "evaluation forward");
    dp_device out_dev;
    check(dp_tensor_device(logits, &out_dev), "device");
    check(dp_tensor_from_data(ctx, DP_INT64, &shape[0], 1, test->labels + start,
                              (size_t)b * sizeof(int64_t), out_dev, &y),
          "test labels");
    check(dp_op_cross_entropy(logits, y, &loss), "test loss");
    float l = 0;
    check(dp_tensor_to_host(loss, &l, sizeof l), "test loss");
    loss_sum += (double)l * (double)b;
    check(dp_op_argmax(logits, 1, &arg), "argmax");
    check(dp_tensor_to_host(arg, predicted, (size_t)b * sizeof(int64_t)), "argmax");
    for (int64_t i = 0; i < b; ++i) correct += predicted[i] == test->labels[start + (size_t)i];
    dp_tensor_release(x);
    dp_tensor_release(y);
    dp_tensor_release(logits);
    dp_tensor_release(loss);
    dp_tensor_release(arg);
  }
  free(predicted);
  free(inputs);
  dp_set_grad_enabled(previous);
  check(dp_module_train(model, 1), "train mode");
  eval_result r = {loss_sum / (double)test->n, (double)correct / (double)test->n};
  return r;
}

/* ---------------------------------------------------------------------------------- */
/* Reports: progress, metrics CSV, SVG plot                                          */

typedef struct epoch_record {
  int epoch;
  double train_loss, test_loss, test_accuracy, samples_per_s, seconds;
  dp_phase_times phases;
  double optimizer_s;
} epoch_record;

static void progress(const options* o, int tty, int epoch, size_t done, size_t total, double loss,
                     double rate, double elapsed) {
  if (o->quiet) return;
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

/* A file option's output. A regular file, or none yet, is written to a temporary file of
   this process's own beside it (an existing path.tmp, or another run's, is left alone) and
   renamed over it, so a reader never sees half of it; through a symbolic link, beside the
   file the link names, which stays a link. Anything else (a device such as /dev/null, a
   FIFO) is written directly: nothing can be renamed over it. */
typedef struct {
  char target[PATH_MAX];   /* where the output goes, through any links */
  char tmp[PATH_MAX + 64]; /* the temporary file; "" when writing the target directly */
  FILE* f;
} output_file;

/* Where `path` is or will be: the file itself, through any links, when it exists; else its
   directory's and its own name ("./out.st" and "out.st" are one file). 0 when neither
   resolves. */
static int resolve_path(const char* path, char* out, size_t size) {
  char dir[PATH_MAX], resolved[PATH_MAX];
  if (realpath(path, resolved)) {
    snprintf(out, size, "%s", resolved);
    return 1;
  }
  snprintf(dir, sizeof dir, "%s", path);
  char* slash = strrchr(dir, '/');
  const char* name = slash ? path + (slash - dir) + 1 : path;
  if (slash) {
    *slash = '\0';
    if (!*dir) snprintf(dir, sizeof dir, "/");
  } else {
    snprintf(dir, sizeof dir, ".");
  }
  if (!realpath(dir, resolved)) return 0;
  snprintf(out, size, "%s/%s", resolved, name);
  return 1;
}

/* The file an output to `path` goes to: resolve_path's, or `path` when it does not resolve
   (its directory missing, which the write then reports). */
static void output_target(const char* path, char* out, size_t size) {
  if (!resolve_path(path, out, size)) snprintf(out, size, "%s", path);
}

/* Whether `path` exists and is neither a regular file nor a directory (through links). */
static int special_file(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* Opens o->f for writing `path`; 0, or -1 with errno set. */
static int open_output(const char* path, output_file* o) {
  output_target(path, o->target, sizeof o->target);
  o->tmp[0] = '\0';
  if (special_file(o->target)) {
    o->f = fopen(o->target, "w");
    return o->f ? 0 : -1;
  }
  /* A file a killed run left under this name (its pid since reused) is skipped. */
  for (int n = 0; n < 100; ++n) {
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.%d", o->target, (long)getpid(), n);
    o->f = fopen(o->tmp, "wx");
    if (o->f || errno != EEXIST) return o->f ? 0 : -1;
  }
  return -1;
}

/* Closes o->f and puts the temporary file in place; 0, or -1 with errno set (the temporary
   file then removed). */
static int close_output(output_file* o) {
  int failed = fclose(o->f) != 0;
  if (!failed && o->tmp[0]) failed = rename(o->tmp, o->target) != 0;
  if (failed && o->tmp[0]) {
    const int err = errno;
    remove(o->tmp);
    errno = err;
  }
  return failed ? -1 : 0;
}

static void write_metrics(const char* path, const epoch_record* r, size_t n) {
  output_file out;
  if (open_output(path, &out) != 0) {
    bad_input("cannot write --metrics file %s: %s", path, strerror(errno));
  }
  FILE* f = out.f;
  fprintf(f,
          "epoch,train_loss,test_loss,test_accuracy,samples_per_s,seconds,scatter_s,"
          "replicate_s,apply_s,gather_s,backward_s,reduce_s,optimizer_s\n");
  for (size_t i = 0; i < n; ++i) {
    fprintf(f, "%d,%.6f,%.6f,%.6f,%.1f,%.3f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", r[i].epoch,
            r[i].train_loss, r[i].test_loss, r[i].test_accuracy, r[i].samples_per_s, r[i].seconds,
            r[i].phases.scatter, r[i].phases.replicate, r[i].phases.apply, r[i].phases.gather,
            r[i].phases.backward, r[i].phases.reduce, r[i].optimizer_s);
  }
  if (close_output(&out) != 0) {
    bad_input("cannot write --metrics file %s: %s", path, strerror(errno));
  }
}

/* The rows of an earlier run's --metrics file for epochs before `before` (a resumed run
   continues its history): at most before - 1 of them, one per epoch in increasing order;
   0 when the file does not exist. A row that does not parse, or that repeats or goes back
   to an epoch, ends the history there, with a warning. */
static size_t read_metrics(const char* path, int before, epoch_record* r) {
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[1024];
  size_t n = 0;
  int row = 0;
  if (!fgets(line, sizeof line, f) || strncmp(line, "epoch,", 6) != 0) {
    fprintf(stderr, "dp-train: warning: %s is not a --metrics file; starting it anew\n", path);
    fclose(f);
    return 0;
  }
  while (n + 1 < (size_t)before && fgets(line, sizeof line, f)) {
    ++row;
    epoch_record e;
    memset(&e, 0, sizeof e);
    if (sscanf(line, "%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &e.epoch, &e.train_loss,
               &e.test_loss, &e.test_accuracy, &e.samples_per_s, &e.seconds, &e.phases.scatter,
               &e.phases.replicate, &e.phases.apply, &e.phases.gather, &e.phases.backward,
               &e.phases.reduce, &e.optimizer_s) != 13) {
      fprintf(stderr, "dp-train: warning: %s row %d does not parse; its history ends before it\n",
              path, row);
      break;
    }
    if (e.epoch >= before) break;
    if (e.epoch < 1 || (n > 0 && e.epoch <= r[n - 1].epoch)) {
      fprintf(stderr,
              "dp-train: warning: %s row %d has epoch %d after epoch %d; its history ends before "
              "it\n",
              path, row, e.epoch, n > 0 ? r[n - 1].epoch : 0);
      break;
    }
    r[n++] = e;
  }
  fclose(f);
  return n;
}

/* Fails at start-up (exit 2) when `path` cannot be written, rather than after an epoch: an
   empty name, a directory, a device or FIFO it may not write, or a directory it cannot
   create its temporary file in (created and removed here). */
static void check_writable(const char* option, const char* path) {
  if (!*path) bad_input("%s needs a file name", option);
  char target[PATH_MAX];
  output_target(path, target, sizeof target);
  struct stat st;
  if (stat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
    bad_input("cannot write %s file %s: it is a directory", option, path);
  }
  if (special_file(target)) {
    /* Opened only when written: a FIFO's open waits for a reader. */
    if (access(target, W_OK) != 0) {
      bad_input("cannot write %s file %s: %s", option, path, strerror(errno));
    }
    return;
  }
  output_file out;
  if (open_output(path, &out) != 0) {
    bad_input("cannot write %s file %s: %s", option, path, strerror(errno));
  }
  fclose(out.f);
  remove(out.tmp);
}

/* Two of the file options naming one file would overwrite each other (a checkpoint
   replaced by a CSV). */
static int same_file(const char* a, const char* b) {
  char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
  if (resolve_path(a, ra, sizeof ra) && resolve_path(b, rb, sizeof rb)) return strcmp(ra, rb) == 0;
  return strcmp(a, b) == 0;
}

static void check_distinct_files(const options* o) {
  const struct {
    const char* option;
    const char* path;
  } files[] = {{"--checkpoint", o->checkpoint},
               {"--metrics", o->metrics},
               {"--plot", o->plot},
               {"--resume", o->resume}};
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = i + 1; j < 4; ++j) {
      /* Resuming from the file the run goes on checkpointing to is the usual way. */
      if (i == 0 && j == 3) continue;
      if (files[i].path && files[j].path && same_file(files[i].path, files[j].path)) {
        bad_input("%s and %s name the same file, %s", files[i].option, files[j].option,
                  files[j].path);
      }
    }
  }
}

/* One panel: series (values over epochs) in a box at (x0, y0) of size w x h. */
static void svg_panel(FILE* f, double x0, double y0, double w, double h, const char* title,
                      const epoch_record* r, size_t n, const double* const* series,
                      const char* const* names, const char* const* colors, size_t n_series,
                      int percent) {
  double lo = 1e300, hi = -1e300;
  for (size_t s = 0; s < n_series; ++s) {
    for (size_t i = 0; i < n; ++i) {
      lo = fmin(lo, series[s][i]);
      hi = fmax(hi, series[s][i]);
    }
  }
  if (lo > hi) { /* no epoch yet: an empty box over 0..1 */
    lo = 0;
    hi = 1;
  } else if (!(hi > lo)) {
    hi = lo + 1;
    lo -= 1;
  }
  const double pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  fprintf(f, "<text x='%.0f' y='%.0f' font-size='15' font-weight='bold'>%s</text>\n", x0, y0 - 10,
          title);
  fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#999'/>\n", x0,
          y0, w, h);
  for (int t = 0; t <= 4; ++t) {
    const double v = lo + (hi - lo) * t / 4.0;
    const double y = y0 + h - h * t / 4.0;
    fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#eee'/>\n", x0, y, x0 + w, y);
    if (percent) {
      fprintf(f, "<text x='%.0f' y='%.1f' font-size='11' text-anchor='end'>%.1f%%</text>\n", x0 - 6,
              y + 4, v * 100);
    } else {
      fprintf(f, "<text x='%.0f' y='%.1f' font-size='11' text-anchor='end'>%.3f</text>\n", x0 - 6,
              y + 4, v);
    }
  }
  const double step = n > 1 ? w / (double)(n - 1) : 0;
  for (size_t i = 0; i < n; ++i) {
    fprintf(f, "<text x='%.1f' y='%.0f' font-size='11' text-anchor='middle'>%d</text>\n",
            x0 + step * (double)i + (n > 1 ? 0 : w / 2), y0 + h + 16, r[i].epoch);
  }
  fprintf(f, "<text x='%.0f' y='%.0f' font-size='12' text-anchor='middle'>epoch</text>\n",
          x0 + w / 2, y0 + h + 32);
  for (size_t s = 0; s < n_series; ++s) {
    fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' points='", colors[s]);
    for (size_t i = 0; i < n; ++i) {
      const double x = x0 + step * (double)i + (n > 1 ? 0 : w / 2);
      const double y = y0 + h - (series[s][i] - lo) / (hi - lo) * h;
      fprintf(f, "%.1f,%.1f ", x, y);
    }
    fprintf(f, "'/>\n");
    for (size_t i = 0; i < n; ++i) {
      const double x = x0 + step * (double)i + (n > 1 ? 0 : w / 2);
      const double y = y0 + h - (series[s][i] - lo) / (hi - lo) * h;
      fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", x, y, colors[s]);
    }
    fprintf(f, "<rect x='%.0f' y='%.0f' width='12' height='3' fill='%s'/>",
            x0 + 10 + 120 * (double)s, y0 + 12, colors[s]);
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='12'>%s</text>\n", x0 + 26 + 120 * (double)s,
            y0 + 17, names[s]);
  }
}

static void write_plot(const char* path, const options* o, const epoch_record* r, size_t n) {
  output_file out;
  if (open_output(path, &out) != 0) {
    bad_input("cannot write --plot file %s: %s", path, strerror(errno));
  }
  FILE* f = out.f;
  double* train = (double*)malloc((n + 1) * sizeof(double));
  double* test = (double*)malloc((n + 1) * sizeof(double));
  double* acc = (double*)malloc((n + 1) * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    train[i] = r[i].train_loss;
    test[i] = r[i].test_loss;
    acc[i] = r[i].test_accuracy;
  }
  fprintf(f,
          "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='380' "
          "font-family='sans-serif'>\n<rect width='900' height='380' fill='white'/>\n"
          "<text x='450' y='24' font-size='16' text-anchor='middle'>dp-train: %s, batch %lld, "
          "%s lr %g</text>\n",
          o->model, (long long)o->batch, o->optimizer, o->lr);
  const double* loss_series[2] = {train, test};
  const char* loss_names[2] = {"train loss", "test loss"};
  const char* loss_colors[2] = {"#1f77b4", "#d62728"};
  svg_panel(f, 70, 70, 340, 240, "Loss", r, n, loss_series, loss_names, loss_colors, 2, 0);
  const double* acc_series[1] = {acc};
  const char* acc_names[1] = {"test accuracy"};
  const char* acc_colors[1] = {"#2ca02c"};
  svg_panel(f, 520, 70, 340, 240, "Test accuracy", r, n, acc_series, acc_names, acc_colors, 1, 1);
  fprintf(f, "</svg>\n");
  free(train);
  free(test);
  free(acc);
  if (close_output(&out) != 0) {
    bad_input("cannot write --plot file %s: %s", path, strerror(errno));
  }
}

/* What Ctrl-C left behind: `when` is "in" (the epoch was cut short) or "after". */
static void report_interrupt(const options* o, const char* when, int epoch, int checkpoint_epoch) {
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

/* ---------------------------------------------------------------------------------- */
/* Main                                                                              */

int main(int argc, char** argv) {
  options o;
  parse_options(argc, argv, &o);
  adopt_checkpoint_settings(&o);
  if ((o.given & GIVEN_MOMENTUM) && strcmp(o.optimizer, "sgd") != 0) {
    bad_input("--momentum applies to --optimizer sgd only, not %s", o.optimizer);
  }
  if (o.lr < 0) o.lr = strcmp(o.optimizer, "sgd") == 0 ? 0.1 : 0.001;
  check_distinct_files(&o);
  if (o.metrics) check_writable("--metrics", o.metrics);
  if (o.plot) check_writable("--plot", o.plot);
  if (o.checkpoint) check_writable("--checkpoint", o.checkpoint);
  const int tty = isatty(STDERR_FILENO);

  /* Devices. */
  dp_context_options co = DP_CONTEXT_OPTIONS_INIT;
  co.seed = o.seed;
  co.log_fn = on_log;
  dp_context* ctx = NULL;
  check(dp_context_create(&co, &ctx), "creating the devices");
  dp_device devices[MAX_DEVICES];
  size_t n_devices = 0;
  char items[MAX_DEVICES][64];
  if (strcmp(o.devices, "all") != 0) {
    n_devices = split_list(o.devices, items, MAX_DEVICES, "--devices");
    for (size_t i = 0; i < n_devices; ++i) {
      if (parse_device(items[i], &devices[i]) != 0) {
        bad_input("--devices: \"%s\" is not a device (expected cpu:N or cuda:N)", items[i]);
      }
      int32_t count = 0;
      dp_device_count(ctx, devices[i].type, &count);
      if (devices[i].index >= count) {
        bad_input("--devices: %s does not exist (%d %s devices)", items[i], count,
                  devices[i].type == DP_DEVICE_CPU ? "CPU" : "CUDA");
      }
    }
  } else {
    int32_t ncuda = 0, ncpu = 0;
    check(dp_device_count(ctx, DP_DEVICE_CUDA, &ncuda), "devices");
    check(dp_device_count(ctx, DP_DEVICE_CPU, &ncpu), "devices");
    const dp_device_type t = ncuda > 0 ? DP_DEVICE_CUDA : DP_DEVICE_CPU;
    const int32_t n = ncuda > 0 ? ncuda : ncpu;
    for (int32_t i = 0; i < n && i < MAX_DEVICES; ++i) {
      devices[n_devices].type = t;
      devices[n_devices++].index = i;
    }
  }
  dp_device output_device = devices[0];
  if (o.output_device && parse_device(o.output_device, &output_device) != 0) {
    bad_input("--output-device = \"%s\" is not a device (expected cpu:N or cuda:N)",
              o.output_device);
  }
  int64_t chunk_sizes[MAX_DEVICES];
  size_t n_chunks = 0;
  if (o.chunk_sizes) {
    n_chunks = split_list(o.chunk_sizes, items, MAX_DEVICES, "--chunk-sizes");
    int64_t sum = 0;
    for (size_t i = 0; i < n_chunks; ++i) {
      chunk_sizes[i] = parse_int(items[i], "--chunk-sizes entry", 0, INT64_MAX / 1024);
      sum += chunk_sizes[i];
    }
    if (n_chunks != n_devices) {
      bad_input("--chunk-sizes has %zu entries but there are %zu devices", n_chunks, n_devices);
    }
    if (sum != o.batch) {
      bad_input("--chunk-sizes sum to %lld but --batch is %lld%s", (long long)sum,
                (long long)o.batch, o.batch_from_checkpoint ? " (the checkpoint's)" : "");
    }
  }

  /* Data. */
  fashion_mnist data;
  char err[1024];
  /* --eval-only reads the test files alone, so a model can be evaluated where only they are. */
  const int loaded = o.eval_only
                         ? fashion_mnist_load_test(o.data, &data, err, sizeof err)
                         : fashion_mnist_load(o.data, (size_t)o.limit, &data, err, sizeof err);
  if (loaded != 0) {
    bad_input("%s (install Debian's dataset-fashion-mnist or pass --data DIR)", err);
  }
  if (!o.eval_only && data.train.n < (size_t)o.batch) {
    bad_input("--batch %lld%s is larger than the %zu training samples", (long long)o.batch,
              o.batch_from_checkpoint ? " (the checkpoint's)" : "", data.train.n);
  }

  /* Model, wrapper, optimizer. */
  dp_module* model = NULL;
  check(build_model(ctx, o.model, devices[0], &model), "building the model");
  dp_data_parallel_options dpo = DP_DATA_PARALLEL_OPTIONS_INIT;
  dpo.chunk_sizes = n_chunks ? chunk_sizes : NULL;
  dpo.n_chunk_sizes = n_chunks;
  dp_data_parallel* dpw = NULL;
  check(dp_data_parallel_create(model, devices, n_devices, &output_device, 0, &dpo, &dpw),
        "setting up DataParallel");
  /* --chunk-sizes split a training batch; the test set goes in batches of another size,
     which those sizes do not sum to, so it is evaluated through a second wrapper of the
     same module and devices that splits evenly. */
  dp_data_parallel* eval_dpw = dpw;
  if (n_chunks) {
    dp_data_parallel_options eo = DP_DATA_PARALLEL_OPTIONS_INIT;
    check(dp_data_parallel_create(model, devices, n_devices, &output_device, 0, &eo, &eval_dpw),
          "setting up DataParallel for evaluation");
  }
  dp_optimizer* opt = NULL;
  if (strcmp(o.optimizer, "sgd") == 0) {
    dp_sgd_options so = DP_SGD_OPTIONS_INIT;
    so.lr = o.lr;
    so.momentum = o.momentum;
    check(dp_optimizer_sgd(model, &so, &opt), "optimizer");
  } else {
    dp_adam_options ao = DP_ADAM_OPTIONS_INIT;
    ao.lr = o.lr;
    check(dp_optimizer_adam(model, &ao, &opt), "optimizer");
  }

  char devs_json[MAX_DEVICES * 16] = "";
  char devs_text[MAX_DEVICES * 16] = "";
  for (size_t i = 0; i < n_devices; ++i) {
    char d[32];
    device_str(devices[i], d, sizeof d);
    snprintf(devs_json + strlen(devs_json), sizeof devs_json - strlen(devs_json), "%s\"%s\"",
             i ? "," : "", d);
    snprintf(devs_text + strlen(devs_text), sizeof devs_text - strlen(devs_text), "%s%s",
             i ? "," : "", d);
  }

  int exit_code = 0;
  size_t* perm = NULL;
  float* xbuf = NULL;
  int64_t* ybuf = NULL;
  epoch_record* records = NULL;
  if (o.eval_only) {
    if (dp_module_load(model, o.eval_only) != DP_OK) {
      bad_input("cannot use --eval-only %s: %s", o.eval_only, dp_last_error());
    }
    const double t0 = now_seconds();
    const eval_result e = evaluate(ctx, eval_dpw, model, o.model, &data.test, devices[0]);
    if (!o.quiet || !o.json) {
      printf("evaluated %s on %zu test images over %s: test loss %.4f, test accuracy %.2f%%\n",
             o.eval_only, data.test.n, devs_text, e.loss, e.accuracy * 100);
    }
    if (o.json) { /* the training run's keys; nothing was trained, so no rate or phases */
      printf(
          "{\"model\": \"%s\", \"devices\": [%s], \"epochs\": 0, \"batch\": %lld, "
          "\"test_accuracy\": %.4f, \"test_loss\": %.4f, \"samples_per_s\": null, "
          "\"seconds\": %.3f, \"phases\": null}\n",
          o.model, devs_json, (long long)o.batch, e.accuracy, e.loss, now_seconds() - t0);
    }
    goto done;
  }

  int first_epoch = 1;
  if (o.resume) {
    if (dp_checkpoint_load(model, opt, o.resume) != DP_OK) {
      bad_input("cannot resume from %s: %s", o.resume, dp_last_error());
    }
    /* The load put back the rate the optimizer had; an --lr given now wins over it. */
    if (o.given & GIVEN_LR) check(dp_optimizer_set_lr(opt, o.lr), "setting --lr");
    char meta[64];
    if (dp_checkpoint_metadata(o.resume, "epoch", meta, sizeof meta, NULL) != DP_OK) {
      bad_input("--resume %s: the checkpoint records no epoch", o.resume);
    }
    first_epoch = (int)parse_int(meta, "checkpoint epoch", 0, 1000000) + 1;
    if (!o.quiet)
      fprintf(stderr, "dp-train: resuming after epoch %d from %s\n", first_epoch - 1, o.resume);
    if (first_epoch > o.epochs) {
      fprintf(stderr,
              "dp-train: warning: %s is at epoch %d and --epochs is %d, which counts from the "
              "first run's start: no epoch to train\n",
              o.resume, first_epoch - 1, o.epochs);
    }
  }

  signal(SIGINT, on_sigint);
  if (!o.quiet) {
    fprintf(stderr, "dp-train: %s on %s, %zu training samples, batch %lld, %s lr %g\n", o.model,
            devs_text, data.train.n, (long long)o.batch, o.optimizer, o.lr);
  }

  const size_t n_batches = data.train.n / (size_t)o.batch; /* as torch_reference.py */
  perm = (size_t*)malloc(data.train.n * sizeof(size_t));
  xbuf = (float*)malloc((size_t)o.batch * FASHION_PIXELS * sizeof(float));
  ybuf = (int64_t*)malloc((size_t)o.batch * sizeof(int64_t));
  const size_t max_records = (size_t)(o.epochs > first_epoch ? o.epochs : first_epoch) + 1;
  records = (epoch_record*)calloc(max_records, sizeof(epoch_record));
  if (!perm || !xbuf || !ybuf || !records) {
    fprintf(stderr, "dp-train: out of memory\n");
    exit_code = 1;
    goto done;
  }
  batch_loader loader;
  memset(&loader, 0, sizeof loader);
  loader.ctx = ctx;
  loader.train = &data.train;
  loader.perm = perm;
  loader.model = o.model;
  loader.batch = o.batch;
  loader.n_batches = n_batches;
  loader.input_device = devices[0];
  loader.label_device = output_device; /* where the logits usually are: see move_to_device_of */
  loader.staging = xbuf;
  loader.labels = ybuf;
  /* A resumed run continues the --metrics history of the run it resumes. */
  size_t n_records = o.resume && o.metrics ? read_metrics(o.metrics, first_epoch, records) : 0;
  const size_t history = n_records;
  int checkpoint_epoch = 0; /* the last epoch this run checkpointed */
  double train_time = 0, total_samples = 0;
  dp_phase_times phase_sum = {0, 0, 0, 0, 0, 0};
  double optimizer_sum = 0;
  const double run_start = now_seconds();
  eval_result last_eval = {NAN, NAN};

  for (int epoch = first_epoch; epoch <= o.epochs && exit_code == 0; ++epoch) {
    permutation(perm, data.train.n, o.seed, epoch);
    check(dp_data_parallel_reset_stats(dpw), "stats");
    double loss_sum = 0, opt_time = 0, backward_time = 0, last_report = 0;
    const double t0 = now_seconds();
    loader_start(&loader);
    for (size_t b = 0; b < n_batches; ++b) {
      if (interrupted) {
        report_interrupt(&o, "in", epoch, checkpoint_epoch);
        exit_code = EXIT_INTERRUPTED;
        break;
      }
      dp_tensor *x = NULL, *y = NULL, *logits = NULL, *loss = NULL;
      loader_next(&loader, &x, &y);
      size_t n_out = 0;
      check(dp_data_parallel_forward(dpw, &x, NULL, 1, &logits, 1, &n_out), "forward");
      move_to_device_of(&y, logits);
      check(dp_op_cross_entropy(logits, y, &loss), "loss");
      const double tb = now_seconds();
      check(dp_backward(loss, NULL, 0), "backward");
      const double ts = now_seconds();
      backward_time += ts - tb;
      check(dp_optimizer_step(opt), "optimizer step");
      check(dp_optimizer_zero_grad(opt), "zero_grad");
      opt_time += now_seconds() - ts;
      float l = 0;
      check(dp_tensor_to_host(loss, &l, sizeof l), "loss");
      loss_sum += l;
      dp_tensor_release(x);
      dp_tensor_release(y);
      dp_tensor_release(logits);
      dp_tensor_release(loss);
      const double elapsed = now_seconds() - t0;
      if (b + 1 == n_batches || (tty && elapsed - last_report > 0.1) ||
          (!tty && (b + 1) % (n_batches / 10 + 1) == 0)) {
        last_report = elapsed;
        progress(&o, tty, epoch, b + 1, n_batches, loss_sum / (double)(b + 1),
                 (double)(b + 1) * (double)o.batch / elapsed, elapsed);
      }
      if (!isfinite(l)) {
        /* On a terminal the progress bar's line is still open: the message gets its own. */
        fprintf(stderr, "%sdp-train: the loss became %f in epoch %d; try a smaller --lr\n",
                tty && !o.quiet ? "\n" : "", l, epoch);
        exit_code = 1;
        break;
      }
    }
    loader_stop(&loader);
    if (exit_code != 0) break;
    const double seconds = now_seconds() - t0;
    train_time += seconds;
    total_samples += (double)n_batches * (double)o.batch;
    dp_phase_times phases;
    check(dp_data_parallel_stats(dpw, NULL, &phases, NULL), "stats");
    /* The wrapper times backward from its gather to the reduce, and over one device, which
       it runs without either, not at all: the backward phase is the dp_backward calls
       less the reduce, as the optimizer phase is the step calls. */
    phases.backward = fmax(0.0, backward_time - phases.reduce);
    last_eval = evaluate(ctx, eval_dpw, model, o.model, &data.test, devices[0]);
    if (!isfinite(last_eval.loss)) { /* diverged in the epoch's last steps: keep the files */
      fprintf(stderr, "dp-train: the test loss became %f after epoch %d; try a smaller --lr\n",
              last_eval.loss, epoch);
      exit_code = 1;
      break;
    }
    epoch_record* r = &records[n_records++];
    r->epoch = epoch;
    r->train_loss = n_batches ? loss_sum / (double)n_batches : NAN;
    r->test_loss = last_eval.loss;
    r->test_accuracy = last_eval.accuracy;
    r->seconds = seconds;
    r->samples_per_s = seconds > 0 ? (double)n_batches * (double)o.batch / seconds : 0;
    r->phases = phases;
    r->optimizer_s = opt_time;
    phase_sum.scatter += phases.scatter;
    phase_sum.replicate += phases.replicate;
    phase_sum.apply += phases.apply;
    phase_sum.gather += phases.gather;
    phase_sum.backward += phases.backward;
    phase_sum.reduce += phases.reduce;
    optimizer_sum += opt_time;
    if (!o.quiet || !o.json) {
      printf(
          "epoch %d/%d  train loss %.4f  test loss %.4f  test accuracy %.2f%%  %.1fk samples/s  "
          "%.1fs  [scatter %.2fs replicate %.2fs apply %.2fs gather %.2fs backward %.2fs reduce "
          "%.2fs optimizer %.2fs]\n",
          epoch, o.epochs, r->train_loss, r->test_loss, r->test_accuracy * 100,
          r->samples_per_s / 1000, seconds, phases.scatter, phases.replicate, phases.apply,
          phases.gather, phases.backward, phases.reduce, opt_time);
      fflush(stdout);
    }
    if (o.checkpoint) {
      /* What a resumed run takes over (adopt_checkpoint_settings). */
      char epoch_str[32], seed_str[32], lr_str[32], momentum_str[32], batch_str[32],
          limit_str[32] = "all";
      snprintf(epoch_str, sizeof epoch_str, "%d", epoch);
      snprintf(seed_str, sizeof seed_str, "%llu", (unsigned long long)o.seed);
      format_double(o.lr, lr_str, sizeof lr_str);
      format_double(o.momentum, momentum_str, sizeof momentum_str);
      snprintf(batch_str, sizeof batch_str, "%lld", (long long)o.batch);
      if (o.limit) snprintf(limit_str, sizeof limit_str, "%lld", (long long)o.limit);
      const int sgd = strcmp(o.optimizer, "sgd") == 0;
      const dp_metadata_entry meta[8] = {{"model", o.model},         {"epoch", epoch_str},
                                         {"seed", seed_str},         {"limit", limit_str},
                                         {"optimizer", o.optimizer}, {"lr", lr_str},
                                         {"batch", batch_str},       {"momentum", momentum_str}};
      check(dp_checkpoint_save(model, opt, o.checkpoint, meta, sgd ? 8 : 7),
            "saving the checkpoint");
      checkpoint_epoch = epoch;
    }
    if (o.metrics) write_metrics(o.metrics, records, n_records);
    if (o.plot) write_plot(o.plot, &o, records, n_records);
  }
  if (interrupted && exit_code == 0) {
    /* Ctrl-C during the last epoch's evaluation or file writes, which run to their end. */
    report_interrupt(&o, "after", o.epochs, checkpoint_epoch);
    exit_code = EXIT_INTERRUPTED;
  }
  if (exit_code == 0 && n_records == history) { /* no epoch ran: the files still say so */
    last_eval = evaluate(ctx, eval_dpw, model, o.model, &data.test, devices[0]);
    if (o.metrics) write_metrics(o.metrics, records, n_records);
    if (o.plot) write_plot(o.plot, &o, records, n_records);
  }
  if (o.json && exit_code == 0) {
    printf(
        "{\"model\": \"%s\", \"devices\": [%s], \"epochs\": %d, \"batch\": %lld, "
        "\"test_accuracy\": %.4f, \"test_loss\": %.4f, \"samples_per_s\": %.1f, "
        "\"seconds\": %.3f, \"phases\": {\"scatter\": %.4f, \"replicate\": %.4f, \"apply\": "
        "%.4f, \"gather\": %.4f, \"backward\": %.4f, \"reduce\": %.4f, \"optimizer\": %.4f}}\n",
        o.model, devs_json, o.epochs, (long long)o.batch, last_eval.accuracy, last_eval.loss,
        train_time > 0 ? total_samples / train_time : 0, now_seconds() - run_start,
        phase_sum.scatter, phase_sum.replicate, phase_sum.apply, phase_sum.gather,
        phase_sum.backward, phase_sum.reduce, optimizer_sum);
  }

done: /* also reached by --eval-only and when memory runs out */
  free(perm);
  free(xbuf);
  free(ybuf);
  free(records);
  dp_optimizer_release(opt);
  if (eval_dpw != dpw) dp_data_parallel_release(eval_dpw);
  dp_data_parallel_release(dpw);
  dp_module_release(model);
  dp_context_release(ctx);
  fashion_mnist_free(&data);
  return exit_code;
}
