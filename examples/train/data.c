#include "data.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "models.h"
#include "torch_randperm.h"

void load_data(const options* o, fashion_mnist* data) {
  char err[1024];
  /* --eval-only reads the test files alone, so a model can be evaluated where only they are. */
  const int loaded = o->eval_only
                         ? fashion_mnist_load_test(o->data, data, err, sizeof err)
                         : fashion_mnist_load(o->data, (size_t)o->limit, data, err, sizeof err);
  if (loaded != 0) {
    bad_input("%s (install Debian's dataset-fashion-mnist or pass --data DIR)", err);
  }
  if (!o->eval_only && data->train.n < (size_t)o->batch) {
    bad_input("--batch %lld%s is larger than the %zu training samples", (long long)o->batch,
              o->batch_from_checkpoint ? " (the checkpoint's)" : "", data->train.n);
  }
}

void permutation(size_t* perm, size_t n, uint64_t seed, int epoch) {
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

static void make_batch(const batch_loader* l, size_t b, dp_tensor** x, dp_tensor** y) {
  int64_t shape[4];
  const size_t nd = model_input_shape(l->model, l->batch, shape);
  const size_t* rows = l->perm + b * l->stride + l->offset;
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

void loader_start(batch_loader* l) {
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->changed, NULL);
  l->produced = l->consumed = 0;
  l->stop = 0;
  if (pthread_create(&l->thread, NULL, loader_main, l) != 0) {
    fprintf(stderr, "dp-train: cannot start the batch loader thread\n");
    exit(1);
  }
}

void loader_next(batch_loader* l, dp_tensor** x, dp_tensor** y) {
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

void loader_stop(batch_loader* l) {
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
