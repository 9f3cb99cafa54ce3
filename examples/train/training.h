/* The training loop: the model, DataParallel and the optimizer over the chosen devices;
   the epochs of steps, each followed by an evaluation on the test set and the outputs;
   and --eval-only's evaluation alone. */
#ifndef DP_TRAIN_TRAINING_H_
#define DP_TRAIN_TRAINING_H_

#include <dataparallel/dataparallel.h>

#include "devices.h"
#include "fashion_mnist.h"
#include "options.h"

typedef struct trainer {
  dp_context* ctx;
  const options* o;
  const device_setup* d;
  const fashion_mnist* data;
  int tty; /* stderr is a terminal: progress is a bar */
  dp_module* model;
  dp_data_parallel* dpw;      /* training batches, split as --chunk-sizes says */
  dp_data_parallel* eval_dpw; /* the test set, split evenly (dpw without --chunk-sizes) */
  dp_optimizer* opt;
} trainer;

/* Builds o's model on the first device, its DataParallel wrappers and its optimizer; the
   other members are the caller's. Exits on a library error (errors.h). */
void trainer_setup(trainer* t);

/* Releases what trainer_setup made. */
void trainer_release(trainer* t);

/* --eval-only: loads the model of that file and prints its test loss and accuracy.
   Returns the exit code (0; a file it cannot load exits EXIT_BAD_INPUT). */
int evaluate_only(trainer* t);

/* Trains o->epochs epochs (from --resume's, when given), writing the outputs after each.
   Returns the exit code: 0, 1 when the loss became infinite or NaN, EXIT_INTERRUPTED after
   Ctrl-C. */
int train(trainer* t);

#endif /* DP_TRAIN_TRAINING_H_ */
