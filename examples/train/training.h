/* The training loop: the model, DataParallel (or with --distributed
   DistributedDataParallel) and the optimizer over the chosen devices; the epochs of
   steps, each followed by an evaluation on the test set and the outputs; and
   --eval-only's evaluation alone. */
#ifndef DP_TRAIN_TRAINING_H_
#define DP_TRAIN_TRAINING_H_

#include <dataparallel/dataparallel.h>

#include "devices.h"
#include "fashion_mnist.h"
#include "options.h"

typedef struct trainer {
  dp_context* ctx;
  const options* o;
  device_setup* d; /* with --distributed and no --devices, trainer_setup fills it in */
  const fashion_mnist* data;
  int tty;                 /* stderr is a terminal: progress is a bar */
  dp_process_group* group; /* --distributed: every rank's (the caller's); NULL without */
  dp_module* model;
  dp_data_parallel* dpw;      /* training batches, split as --chunk-sizes says (no group) */
  dp_ddp* ddp;                /* training batches: this rank's share (with a group) */
  dp_data_parallel* eval_dpw; /* the test set, split evenly (dpw without --chunk-sizes) */
  dp_optimizer* opt;
  int stopped; /* --distributed: Ctrl-C reached a rank, as of the last step's sums */
} trainer;

/* Builds o's model on the first device, its DataParallel (with a group,
   DistributedDataParallel, which takes rank 0's weights) and evaluation wrappers and its
   optimizer; the other members are the caller's. Collective with a group. Exits on a
   library error (errors.h). */
void trainer_setup(trainer* t);

/* Releases what trainer_setup made. */
void trainer_release(trainer* t);

/* --eval-only: loads the model of that file and prints its test loss and accuracy (with
   a group, each rank evaluates its share of the test set and rank 0 prints the sums).
   Returns the exit code (0; a file it cannot load exits EXIT_BAD_INPUT). */
int evaluate_only(trainer* t);

/* Trains o->epochs epochs (from --resume's, when given), writing the outputs after each
   (with a group, rank 0 alone writes and prints; every rank returns the same code).
   Returns the exit code: 0, 1 when the loss became infinite or NaN, EXIT_INTERRUPTED after
   Ctrl-C. */
int train(trainer* t);

#endif /* DP_TRAIN_TRAINING_H_ */
