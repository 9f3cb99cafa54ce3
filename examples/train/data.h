/* The training data: Fashion-MNIST as --data and --limit give it, each epoch's order, and
   the thread that assembles the batches. */
#ifndef DP_TRAIN_DATA_H_
#define DP_TRAIN_DATA_H_

#include <dataparallel/dataparallel.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "fashion_mnist.h"
#include "options.h"

/* The data files into *data: the test files alone for --eval-only, else the training
   files (their first --limit samples) too. Exits EXIT_BAD_INPUT (errors.h) for a missing
   or corrupt file and for a --batch larger than the training set. */
void load_data(const options* o, fashion_mnist* data);

/* The epoch's order (epochs count from 1): torch_reference.py's, torch.randperm after
   manual_seed(seed + epoch - 1). It depends only on (seed, epoch), so a resumed run
   shuffles exactly as the uninterrupted one. */
void permutation(size_t* perm, size_t n, uint64_t seed, int epoch);

enum { LOADER_SLOTS = 2 };

/* The training batches of one epoch in perm's order, assembled one ahead on a thread of
   their own (data.c says why). The caller fills the first block before loader_start and
   leaves the rest to the loader. Batch b holds the samples perm[b * stride + offset + i]
   for i < batch: the whole global batch (stride = batch, offset 0), or with --distributed
   rank r's share of it, rows [r * batch, (r + 1) * batch) of the global batch (stride =
   --batch, batch = --batch / ranks, offset = r * batch). */
typedef struct batch_loader {
  dp_context* ctx;
  const fashion_split* train;
  const size_t* perm;
  const char* model;
  int64_t batch;
  size_t stride, offset;
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

/* Starts the thread on the epoch's first batch; exits 1 if it cannot. */
void loader_start(batch_loader* l);

/* The next batch of the epoch, waiting for it if need be; the caller owns both tensors. */
void loader_next(batch_loader* l, dp_tensor** x, dp_tensor** y);

/* Stops the thread (also mid-epoch) and releases the batches nobody took. */
void loader_stop(batch_loader* l);

#endif /* DP_TRAIN_DATA_H_ */
