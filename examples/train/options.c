#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "fashion_mnist.h"

static void usage(FILE* f) {
  fprintf(f,
          "usage: dp-train [options]\n"
          "Trains a model on Fashion-MNIST with DataParallel over the chosen devices.\n\n"
          "  --model mlp|cnn         the models of torch_reference.py (default mlp)\n"
          "  --epochs N              the last epoch to train, 1 to 100000 (default 5)\n"
          "  --batch N               global batch, split over ranks and devices (default 256)\n"
          "  --lr X                  learning rate (default 0.1 for SGD, 0.001 for Adam)\n"
          "  --momentum X            SGD momentum (default 0.9)\n"
          "  --optimizer sgd|adam    (default sgd)\n"
          "  --precision fp32|bf16   bf16: training and evaluation under bfloat16 autocast\n"
          "                          (matmuls and convolutions in bfloat16, weights, losses\n"
          "                          and the optimizer in float32; default fp32)\n"
          "  --seed N                weights and shuffling, as torch_reference.py's (default 0;\n"
          "                          as torch.manual_seed, only N's low 32 bits count)\n"
          "  --devices LIST          cpu:0,cpu:1 or cuda:0,cuda:1 or all (default all:\n"
          "                          every GPU, else every CPU device; with --distributed\n"
          "                          the library's devices for a rank)\n"
          "  --output-device DEV     where outputs are gathered (default the first device)\n"
          "  --chunk-sizes LIST      rows per device of a training batch, summing to --batch\n"
          "                          (default even; the test set is always split evenly;\n"
          "                          not with --distributed)\n"
          "  --distributed           one process per rank, started by mpirun: rank r of R\n"
          "                          trains rows [r*B/R, (r+1)*B/R) of each batch of\n"
          "                          B = --batch rows (divisible by R) over its devices,\n"
          "                          with gradients averaged over the ranks, and evaluates\n"
          "                          1/R of the test set; rank 0 alone prints and writes\n"
          "                          files (docs/dp-train.md)\n"
          "  --allreduce fp32|bf16   with --distributed: the dtype the gradients travel\n"
          "                          between the ranks in (bf16: as PyTorch DDP's\n"
          "                          bf16_compress_hook, half the bytes; default fp32)\n"
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
          "  --verbose               the library's notes too (devices, the collectives'\n"
          "                          routes, where DDP's gradient buckets live)\n"
          "  --help                  this text\n\n"
          "Exit codes:\n"
          "  0    done\n"
          "  1    the loss became infinite or NaN (try a smaller --lr), out of memory,\n"
          "       or another failure of the library (--distributed without its MPI plugin)\n"
          "  2    bad input: an option, the data files, a device, a checkpoint, or an\n"
          "       output file that cannot be written (one line on stderr names it)\n"
          "  130  interrupted by Ctrl-C; the last complete checkpoint is intact\n");
}

/* strtoll and strtod skip leading blanks and take a '+', which no option's number needs:
   it starts with a digit, '-' or '.'. */
static int number_start(const char* s) {
  return *s != '\0' && strchr("0123456789-.", *s) != NULL;
}

int64_t parse_int(const char* s, const char* what, int64_t lo, int64_t hi) {
  char* end = NULL;
  errno = 0;
  const long long v = strtoll(s, &end, 10);
  if (errno || !number_start(s) || *end || v < lo || v > hi) {
    bad_input("%s = \"%s\" is not an integer between %lld and %lld", what, s, (long long)lo,
              (long long)hi);
  }
  return v;
}

/* A number >= lo. strtod also reads "inf", "nan" and numbers too large for a double (as
   infinity): those are refused as not finite rather than as not numbers. */
static double parse_double(const char* s, const char* what, double lo) {
  char* end = NULL;
  errno = 0;
  const double v = strtod(s, &end);
  const int spelled = *s != '\0' && (number_start(s) || isalpha((unsigned char)*s)) && !*end;
  if (spelled && !isfinite(v)) {
    bad_input("%s = \"%s\" is not finite: it must be a finite number >= %g", what, s, lo);
  }
  if (!spelled || errno || !number_start(s) || !(v >= lo)) {
    bad_input("%s = \"%s\" is not a number >= %g", what, s, lo);
  }
  return v;
}

void parse_options(int argc, char** argv, options* o) {
  enum {
    OPT_OUTPUT = 1000,
    OPT_CHUNKS,
    OPT_RESUME,
    OPT_EVAL,
    OPT_METRICS,
    OPT_PLOT,
    OPT_JSON,
    OPT_QUIET,
    OPT_VERBOSE,
    OPT_OPTIMIZER,
    OPT_MOMENTUM,
    OPT_LIMIT,
    OPT_DATA,
    OPT_CHECKPOINT,
    OPT_DISTRIBUTED,
    OPT_PRECISION,
    OPT_ALLREDUCE
  };
  static const struct option longopts[] = {{"model", required_argument, NULL, 'm'},
                                           {"epochs", required_argument, NULL, 'e'},
                                           {"batch", required_argument, NULL, 'b'},
                                           {"lr", required_argument, NULL, 'l'},
                                           {"momentum", required_argument, NULL, OPT_MOMENTUM},
                                           {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
                                           {"precision", required_argument, NULL, OPT_PRECISION},
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
                                           {"verbose", no_argument, NULL, OPT_VERBOSE},
                                           {"distributed", no_argument, NULL, OPT_DISTRIBUTED},
                                           {"allreduce", required_argument, NULL, OPT_ALLREDUCE},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->model = "mlp";
  o->epochs = 5;
  o->batch = 256;
  o->lr = -1;
  o->momentum = 0.9;
  o->optimizer = "sgd";
  o->precision = "fp32";
  o->allreduce = "fp32";
  o->data = FASHION_MNIST_DEFAULT_DIR;
  o->ranks = 1;
  /* The options whose text is kept as given, to be checked later. */
  const struct {
    int code;
    const char** value;
  } texts[] = {
      {'d', &o->devices},        {OPT_OUTPUT, &o->output_device},  {OPT_CHUNKS, &o->chunk_sizes},
      {OPT_DATA, &o->data},      {OPT_CHECKPOINT, &o->checkpoint}, {OPT_RESUME, &o->resume},
      {OPT_EVAL, &o->eval_only}, {OPT_METRICS, &o->metrics},       {OPT_PLOT, &o->plot}};
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
    const char** text = NULL;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i) {
      if (texts[i].code == c) text = texts[i].value;
    }
    if (text) {
      *text = optarg;
      continue;
    }
    switch (c) {
      case 'm':
        o->model = optarg;
        o->given |= GIVEN_MODEL;
        break;
      case 'e':
        o->epochs = (int)parse_int(optarg, "--epochs", 1, 100000);
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
      case OPT_LIMIT:
        o->limit = parse_int(optarg, "--limit", 1, INT64_MAX);
        o->given |= GIVEN_LIMIT;
        break;
      case OPT_JSON:
        o->json = 1;
        break;
      case OPT_QUIET:
        o->quiet = 1;
        break;
      case OPT_VERBOSE:
        o->verbose = 1;
        break;
      case OPT_DISTRIBUTED:
        o->distributed = 1;
        break;
      case OPT_PRECISION:
        o->precision = optarg;
        break;
      case OPT_ALLREDUCE:
        o->allreduce = optarg;
        o->allreduce_given = 1;
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
  /* A rank's DataParallel splits its share of the batch, which --chunk-sizes (summing to
     --batch) does not describe. */
  if (o->distributed && o->chunk_sizes) {
    bad_input(
        "--chunk-sizes and --distributed exclude each other: each rank splits its share "
        "of --batch evenly over its devices");
  }
  if (strcmp(o->model, "mlp") != 0 && strcmp(o->model, "cnn") != 0) {
    bad_input("--model = \"%s\": expected mlp or cnn", o->model);
  }
  if (strcmp(o->precision, "fp32") != 0 && strcmp(o->precision, "bf16") != 0) {
    bad_input("--precision = \"%s\": expected fp32 or bf16", o->precision);
  }
  if (strcmp(o->allreduce, "fp32") != 0 && strcmp(o->allreduce, "bf16") != 0) {
    bad_input("--allreduce = \"%s\": expected fp32 or bf16", o->allreduce);
  }
  if (o->allreduce_given && !o->distributed) {
    bad_input("--allreduce needs --distributed: one process has no allreduce between ranks");
  }
  if (strcmp(o->optimizer, "sgd") != 0 && strcmp(o->optimizer, "adam") != 0) {
    bad_input("--optimizer = \"%s\": expected sgd or adam", o->optimizer);
  }
}

void settle_options(options* o) {
  if ((o->given & GIVEN_MOMENTUM) && strcmp(o->optimizer, "sgd") != 0) {
    bad_input("--momentum applies to --optimizer sgd only, not %s", o->optimizer);
  }
  if (o->lr < 0) o->lr = strcmp(o->optimizer, "sgd") == 0 ? 0.1 : 0.001;
  /* Every rank trains the same number of rows of each global batch. */
  if (o->eval_only) return;
  if (o->batch < o->ranks) {
    bad_input(
        "--batch %lld%s is smaller than the %d ranks: each rank needs at least one row of "
        "every batch",
        (long long)o->batch, o->batch_from_checkpoint ? " (the checkpoint's)" : "", o->ranks);
  }
  if (o->batch % o->ranks != 0) {
    bad_input(
        "--batch %lld%s is not divisible by the %d ranks: each rank trains --batch / ranks "
        "rows of every batch",
        (long long)o->batch, o->batch_from_checkpoint ? " (the checkpoint's)" : "", o->ranks);
  }
}
