/* dp-train's command line: the options, --help, and the checks that need no device. */
#ifndef DP_TRAIN_OPTIONS_H_
#define DP_TRAIN_OPTIONS_H_

#include <stdint.h>

typedef struct options {
  const char* model;
  int epochs;
  int64_t batch;
  double lr; /* < 0 until settle_options gives the optimizer's default */
  double momentum;
  const char* optimizer;
  const char* precision; /* "fp32", or "bf16": the whole run under bfloat16 autocast */
  uint64_t seed;
  const char* devices; /* NULL: not given (every device; with --distributed the library's) */
  const char* output_device;
  const char* chunk_sizes;
  int64_t limit; /* 0: every training sample */
  const char* data;
  const char* checkpoint;
  const char* resume;
  const char* eval_only;
  const char* metrics;
  const char* plot;
  int json;
  int quiet;
  int verbose; /* --verbose: the library's notes too (log level info) */
  int distributed;
  const char* allreduce; /* "fp32", or "bf16": --distributed's gradients travel in bfloat16 */
  int allreduce_given;
  unsigned given;            /* GIVEN_* bits: the options the command line set */
  int batch_from_checkpoint; /* --batch came from --resume's checkpoint */
  /* Not options: with --distributed, this process's rank and the number of ranks (0 and 1
     without). Only rank 0 prints progress, results and warnings, and writes files. */
  int rank, ranks;
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

/* The command line into *o, with the defaults for what it leaves out. Exits 0 after
   --help, EXIT_BAD_INPUT (errors.h) on an unknown option, a bad value or two options that
   exclude each other. The strings in *o point into argv. */
void parse_options(int argc, char** argv, options* o);

/* The checks and defaults that wait for a checkpoint's settings (checkpoint.h) and the
   number of ranks: momentum is for SGD only, an lr not given is the optimizer's default,
   and --batch must divide among the ranks. */
void settle_options(options* o);

/* s as an integer in lo..hi, or exit EXIT_BAD_INPUT with a message naming `what` and s. */
int64_t parse_int(const char* s, const char* what, int64_t lo, int64_t hi);

#endif /* DP_TRAIN_OPTIONS_H_ */
