#define _POSIX_C_SOURCE 200809L

#include "training.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "checkpoint.h"
#include "data.h"
#include "errors.h"
#include "metrics.h"
#include "models.h"
#include "plot.h"
#include "report.h"

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

/* With a group: the model under DistributedDataParallel over the rank's devices, and a
   DataParallel of the same module over them for the test set. */
static void distributed_setup(trainer* t) {
  const options* o = t->o;
  device_setup* d = t->d;
  /* Without --devices the library picks the rank's devices: CPU ones from cpu:0, where the
     module must be, or one GPU, to which it moves the module. */
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  check(build_model(t->ctx, o->model, d->n_devices ? d->devices[0] : cpu0, &t->model),
        "building the model");
  dp_ddp_options ddpo = DP_DDP_OPTIONS_INIT;
  ddpo.allreduce_dtype = strcmp(o->allreduce, "bf16") == 0 ? DP_BFLOAT16 : DP_FLOAT32;
  check(dp_ddp_create(t->model, t->group, d->n_devices ? d->devices : NULL, d->n_devices,
                      o->output_device ? &d->output_device : NULL, 0, &ddpo, &t->ddp),
        "setting up DistributedDataParallel");
  dp_device devices[MAX_DEVICES];
  size_t n = 0;
  check(dp_ddp_devices(t->ddp, devices, MAX_DEVICES, &n), "the rank's devices");
  set_rank_devices(d, o, devices, n);
  dp_data_parallel_options eo = DP_DATA_PARALLEL_OPTIONS_INIT;
  check(dp_data_parallel_create(t->model, d->devices, d->n_devices, &d->output_device, 0, &eo,
                                &t->eval_dpw),
        "setting up DataParallel for evaluation");
}

static void create_optimizer(trainer* t) {
  const options* o = t->o;
  if (strcmp(o->optimizer, "sgd") == 0) {
    dp_sgd_options so = DP_SGD_OPTIONS_INIT;
    so.lr = o->lr;
    so.momentum = o->momentum;
    check(dp_optimizer_sgd(t->model, &so, &t->opt), "optimizer");
  } else {
    dp_adam_options ao = DP_ADAM_OPTIONS_INIT;
    ao.lr = o->lr;
    check(dp_optimizer_adam(t->model, &ao, &t->opt), "optimizer");
  }
}

void trainer_setup(trainer* t) {
  const options* o = t->o;
  const device_setup* d = t->d;
  if (t->group) {
    distributed_setup(t);
    create_optimizer(t);
    return;
  }
  check(build_model(t->ctx, o->model, d->devices[0], &t->model), "building the model");
  dp_data_parallel_options dpo = DP_DATA_PARALLEL_OPTIONS_INIT;
  dpo.chunk_sizes = d->n_chunks ? d->chunk_sizes : NULL;
  dpo.n_chunk_sizes = d->n_chunks;
  check(dp_data_parallel_create(t->model, d->devices, d->n_devices, &d->output_device, 0, &dpo,
                                &t->dpw),
        "setting up DataParallel");
  /* --chunk-sizes split a training batch; the test set goes in batches of another size,
     which those sizes do not sum to, so it is evaluated through a second wrapper of the
     same module and devices that splits evenly. */
  t->eval_dpw = t->dpw;
  if (d->n_chunks) {
    dp_data_parallel_options eo = DP_DATA_PARALLEL_OPTIONS_INIT;
    check(dp_data_parallel_create(t->model, d->devices, d->n_devices, &d->output_device, 0, &eo,
                                  &t->eval_dpw),
          "setting up DataParallel for evaluation");
  }
  create_optimizer(t);
}

void trainer_release(trainer* t) {
  dp_optimizer_release(t->opt);
  if (t->eval_dpw != t->dpw) dp_data_parallel_release(t->eval_dpw);
  if (t->dpw) dp_data_parallel_release(t->dpw);
  if (t->ddp) dp_ddp_release(t->ddp);
  dp_module_release(t->model);
  t->opt = NULL;
  t->eval_dpw = t->dpw = NULL;
  t->ddp = NULL;
  t->model = NULL;
}

/* With a group, v[0..n) becomes its sum over the ranks (collective: every rank calls it
   with the same n); without, it stays as it is. */
static void sum_over_ranks(const trainer* t, double* v, size_t n) {
  if (!t->group) return;
  const int64_t shape[1] = {(int64_t)n};
  const dp_device cpu0 = {DP_DEVICE_CPU, 0};
  dp_tensor* sums = NULL;
  check(dp_tensor_from_data(t->ctx, DP_FLOAT64, shape, 1, v, n * sizeof(double), cpu0, &sums),
        "sums over the ranks");
  check(dp_process_group_allreduce(t->group, sums, DP_REDUCE_SUM), "sums over the ranks");
  check(dp_tensor_to_host(sums, v, n * sizeof(double)), "sums over the ranks");
  dp_tensor_release(sums);
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

typedef struct eval_result {
  double loss;
  double accuracy;
} eval_result;

/* Test loss and accuracy through the wrapper, in evaluation mode with grad off. With a
   group, each rank evaluates rows [rank * n / ranks, (rank + 1) * n / ranks) of the test
   set, and the sums of the losses and of the right answers are summed over the ranks:
   every rank gets the figures of the whole test set. */
static eval_result evaluate(const trainer* t) {
  dp_context* ctx = t->ctx;
  dp_module* model = t->model;
  const char* model_name = t->o->model;
  const fashion_split* test = &t->data->test;
  const dp_device input_dev = t->d->devices[0];
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
  const size_t rank = (size_t)t->o->rank, ranks = (size_t)t->o->ranks;
  const size_t begin = test->n * rank / ranks, end = test->n * (rank + 1) / ranks;
  for (size_t start = begin; start < end; start += (size_t)eval_batch) {
    const int64_t b =
        (int64_t)(end - start < (size_t)eval_batch ? end - start : (size_t)eval_batch);
    int64_t shape[4];
    const size_t nd = model_input_shape(model_name, b, shape);
    dp_tensor *x = NULL, *y = NULL, *logits = NULL, *loss = NULL, *arg = NULL;
    fashion_pixels_to_float(inputs, test->pixels + start * FASHION_PIXELS,
                            (size_t)b * FASHION_PIXELS);
    check(dp_tensor_from_data(ctx, DP_FLOAT32, shape, nd, inputs,
                              (size_t)b * FASHION_PIXELS * sizeof(float), input_dev, &x),
          "test batch");
    size_t n_out = 0;
    check(dp_data_parallel_forward(t->eval_dpw, &x, NULL, 1, &logits, 1, &n_out),
          "evaluation forward");
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
  double sums[2] = {loss_sum, (double)correct};
  sum_over_ranks(t, sums, 2);
  eval_result r = {sums[0] / (double)test->n, sums[1] / (double)test->n};
  return r;
}

/* ---------------------------------------------------------------------------------- */

/* Whether an evaluation alone (of the checkpoint `file` that `option` names) gave a
   finite test loss; if not, rank 0 says so. Every rank has the same reduced loss, so all
   agree. */
static int finite_evaluation(const options* o, double loss, const char* option, const char* file) {
  if (isfinite(loss)) return 1;
  if (o->rank == 0) {
    fprintf(stderr, "dp-train: the test loss of %s %s is %f, not a number to report\n", option,
            file, loss);
  }
  return 0;
}

int evaluate_only(trainer* t) {
  const options* o = t->o;
  if (dp_module_load(t->model, o->eval_only) != DP_OK) {
    bad_input("cannot use --eval-only %s: %s", o->eval_only, dp_last_error());
  }
  const double t0 = now_seconds();
  const eval_result e = evaluate(t);
  if (!finite_evaluation(o, e.loss, "--eval-only", o->eval_only)) return 1;
  report_evaluation(o, t->d, devices_bf16_native(t->ctx, t->d), t->data->test.n, e.loss, e.accuracy,
                    now_seconds() - t0);
  return 0;
}

/* The steps of one epoch over the loader's batches, into r's train_loss, seconds,
   samples_per_s and optimizer_s, with the forward and dp_backward calls' seconds in
   *forward_s and *backward_s. Returns the exit code: 0, or the one that ends the run
   (Ctrl-C, a non-finite loss). With a group, a step's loss is the mean of the ranks'
   (the global batch's loss, as without), and Ctrl-C on any rank stops every rank after
   the same step: both are summed over the ranks after each step. */
static int train_epoch(trainer* t, batch_loader* loader, epoch_record* r, double* forward_s,
                       double* backward_s, int checkpoint_epoch) {
  const options* o = t->o;
  const size_t n_batches = loader->n_batches;
  double loss_sum = 0, opt_time = 0, forward_time = 0, backward_time = 0, last_report = 0;
  int exit_code = 0;
  const double t0 = now_seconds();
  loader_start(loader);
  for (size_t b = 0; b < n_batches; ++b) {
    if (t->group ? t->stopped : interrupted) {
      report_interrupt(o, "in", r->epoch, checkpoint_epoch);
      exit_code = EXIT_INTERRUPTED;
      break;
    }
    dp_tensor *x = NULL, *y = NULL, *logits = NULL, *loss = NULL;
    loader_next(loader, &x, &y);
    size_t n_out = 0;
    const double tf = now_seconds();
    if (t->ddp) {
      check(dp_ddp_forward(t->ddp, &x, NULL, 1, &logits, 1, &n_out), "forward");
    } else {
      check(dp_data_parallel_forward(t->dpw, &x, NULL, 1, &logits, 1, &n_out), "forward");
    }
    forward_time += now_seconds() - tf;
    move_to_device_of(&y, logits);
    check(dp_op_cross_entropy(logits, y, &loss), "loss");
    const double tb = now_seconds();
    check(dp_backward(loss, NULL, 0), "backward");
    const double ts = now_seconds();
    backward_time += ts - tb;
    check(dp_optimizer_step(t->opt), "optimizer step");
    check(dp_optimizer_zero_grad(t->opt), "zero_grad");
    opt_time += now_seconds() - ts;
    float l = 0;
    check(dp_tensor_to_host(loss, &l, sizeof l), "loss");
    if (t->group) {
      double step[2] = {l, interrupted};
      sum_over_ranks(t, step, 2);
      l = (float)(step[0] / o->ranks);
      t->stopped = step[1] > 0;
    }
    loss_sum += l;
    dp_tensor_release(x);
    dp_tensor_release(y);
    dp_tensor_release(logits);
    dp_tensor_release(loss);
    const double elapsed = now_seconds() - t0;
    if (b + 1 == n_batches || (t->tty && elapsed - last_report > 0.1) ||
        (!t->tty && (b + 1) % (n_batches / 10 + 1) == 0)) {
      last_report = elapsed;
      report_progress(o, t->tty, r->epoch, b + 1, n_batches, loss_sum / (double)(b + 1),
                      (double)(b + 1) * (double)o->batch / elapsed, elapsed);
    }
    if (!isfinite(l)) {
      /* On a terminal the progress bar's line is still open: the message gets its own.
         Every rank sees the same loss; rank 0 says so. */
      if (o->rank == 0) {
        fprintf(stderr, "%sdp-train: the loss became %f in epoch %d; try a smaller --lr\n",
                t->tty && !o->quiet ? "\n" : "", l, r->epoch);
      }
      exit_code = 1;
      break;
    }
  }
  loader_stop(loader);
  const double seconds = now_seconds() - t0;
  r->train_loss = n_batches ? loss_sum / (double)n_batches : NAN;
  r->seconds = seconds;
  r->samples_per_s = seconds > 0 ? (double)n_batches * (double)o->batch / seconds : 0;
  r->optimizer_s = opt_time;
  *forward_s = forward_time;
  *backward_s = backward_time;
  return exit_code;
}

static void add_phases(dp_phase_times* sum, const dp_phase_times* p) {
  sum->scatter += p->scatter;
  sum->replicate += p->replicate;
  sum->apply += p->apply;
  sum->gather += p->gather;
  sum->backward += p->backward;
  sum->reduce += p->reduce;
}

int train(trainer* t) {
  const options* o = t->o;
  const fashion_mnist* data = t->data;
  int first_epoch = 1;
  if (o->resume) first_epoch = resume_checkpoint(o, t->model, t->opt);

  signal(SIGINT, on_sigint);
  const int64_t rank_batch = o->batch / o->ranks; /* settle_options checked it divides */
  if (!o->quiet && o->rank == 0) {
    char share[64] = "";
    if (o->distributed) snprintf(share, sizeof share, " (%lld a rank)", (long long)rank_batch);
    fprintf(stderr, "dp-train: %s on %s, %zu training samples, batch %lld%s, %s lr %g\n", o->model,
            t->d->where, data->train.n, (long long)o->batch, share, o->optimizer, o->lr);
  }

  int exit_code = 0;
  const size_t n_batches = data->train.n / (size_t)o->batch; /* as torch_reference.py */
  size_t* perm = (size_t*)malloc(data->train.n * sizeof(size_t));
  float* xbuf = (float*)malloc((size_t)o->batch * FASHION_PIXELS * sizeof(float));
  int64_t* ybuf = (int64_t*)malloc((size_t)o->batch * sizeof(int64_t));
  const size_t max_records = (size_t)(o->epochs > first_epoch ? o->epochs : first_epoch) + 1;
  epoch_record* records = (epoch_record*)calloc(max_records, sizeof(epoch_record));
  if (!perm || !xbuf || !ybuf || !records) {
    fprintf(stderr, "dp-train: out of memory\n");
    exit_code = 1;
    goto done;
  }
  batch_loader loader;
  memset(&loader, 0, sizeof loader);
  loader.ctx = t->ctx;
  loader.train = &data->train;
  loader.perm = perm;
  loader.model = o->model;
  loader.batch = rank_batch;
  loader.stride = (size_t)o->batch;
  loader.offset = (size_t)(o->rank * rank_batch);
  loader.n_batches = n_batches;
  loader.input_device = t->d->devices[0];
  loader.label_device = t->d->output_device; /* where the logits usually are */
  loader.staging = xbuf;
  loader.labels = ybuf;
  /* A resumed run continues the --metrics history of the run it resumes. Only rank 0
     writes files. */
  const int writes = o->rank == 0;
  size_t n_records =
      writes && o->resume && o->metrics ? read_metrics(o->metrics, first_epoch, records) : 0;
  const size_t history = n_records;
  int checkpoint_epoch = 0; /* the last epoch this run checkpointed */
  double train_time = 0, total_samples = 0;
  dp_phase_times phase_sum = {0, 0, 0, 0, 0, 0};
  sync_times sync_sum = {0, 0, 0};
  double optimizer_sum = 0;
  const double run_start = now_seconds();
  eval_result last_eval = {NAN, NAN};

  for (int epoch = first_epoch; epoch <= o->epochs && exit_code == 0; ++epoch) {
    permutation(perm, data->train.n, o->seed, epoch); /* the same on every rank */
    if (t->dpw) check(dp_data_parallel_reset_stats(t->dpw), "stats");
    if (t->ddp) check(dp_ddp_reset_stats(t->ddp), "stats");
    epoch_record* r = &records[n_records];
    memset(r, 0, sizeof *r);
    r->epoch = epoch;
    double forward_time = 0, backward_time = 0;
    exit_code = train_epoch(t, &loader, r, &forward_time, &backward_time, checkpoint_epoch);
    if (exit_code != 0) break;
    train_time += r->seconds;
    total_samples += (double)n_batches * (double)o->batch;
    if (t->dpw) {
      check(dp_data_parallel_stats(t->dpw, NULL, &r->phases, NULL), "stats");
      /* The wrapper times backward from its gather to the reduce, and over one device,
         which it runs without either, not at all: the backward phase is the dp_backward
         calls less the reduce, as the optimizer phase is the step calls. */
      r->phases.backward = fmax(0.0, backward_time - r->phases.reduce);
    } else {
      /* A DistributedDataParallel: its DataParallel's phases, and the backward phase as
         above less the wait for the ranks' allreduce, reported apart. */
      dp_ddp_phase_times total = DP_DDP_PHASE_TIMES_INIT;
      check(dp_ddp_stats(t->ddp, NULL, &total, NULL), "stats");
      r->phases = total.local;
      r->phases.backward = fmax(0.0, backward_time - total.local.reduce - total.sync_wait);
      r->sync = (sync_times){total.allreduce, total.sync_wait, total.buffer_broadcast};
    }
    last_eval = evaluate(t);
    if (!isfinite(last_eval.loss)) { /* diverged in the epoch's last steps: keep the files */
      if (o->rank == 0) {
        fprintf(stderr, "dp-train: the test loss became %f after epoch %d; try a smaller --lr\n",
                last_eval.loss, epoch);
      }
      exit_code = 1;
      break;
    }
    r->test_loss = last_eval.loss;
    r->test_accuracy = last_eval.accuracy;
    ++n_records;
    add_phases(&phase_sum, &r->phases);
    sync_sum.allreduce += r->sync.allreduce;
    sync_sum.sync_wait += r->sync.sync_wait;
    sync_sum.buffer_broadcast += r->sync.buffer_broadcast;
    optimizer_sum += r->optimizer_s;
    report_epoch(o, r);
    if (o->checkpoint && writes) save_checkpoint(o, t->model, t->opt, epoch);
    if (o->checkpoint) checkpoint_epoch = epoch;
    if (o->metrics && writes) write_metrics(o->metrics, records, n_records);
    if (o->plot && writes) write_plot(o->plot, o, records, n_records);
  }
  if (t->group && exit_code == 0) {
    /* Ctrl-C after the last step's sums: every rank ends as the one it reached. */
    double stop = interrupted;
    sum_over_ranks(t, &stop, 1);
    t->stopped = stop > 0;
  }
  if ((t->group ? t->stopped : interrupted) && exit_code == 0) {
    /* Ctrl-C during the last epoch's evaluation or file writes, which run to their end. */
    report_interrupt(o, "after", o->epochs, checkpoint_epoch);
    exit_code = EXIT_INTERRUPTED;
  }
  if (exit_code == 0 && n_records == history) {
    /* No epoch ran (--resume of a checkpoint at --epochs already): the files still say so,
       unless the checkpoint's model gives no finite loss. */
    last_eval = evaluate(t);
    if (!finite_evaluation(o, last_eval.loss, "--resume", o->resume)) {
      exit_code = 1;
    } else {
      if (o->metrics && writes) write_metrics(o->metrics, records, n_records);
      if (o->plot && writes) write_plot(o->plot, o, records, n_records);
    }
  }
  if (o->json && exit_code == 0) {
    report_json(o, t->d, devices_bf16_native(t->ctx, t->d), last_eval.accuracy, last_eval.loss,
                train_time > 0 ? total_samples / train_time : 0, now_seconds() - run_start,
                &phase_sum, optimizer_sum, t->ddp ? &sync_sum : NULL);
  }

done: /* also reached when memory runs out */
  free(perm);
  free(xbuf);
  free(ybuf);
  free(records);
  return exit_code;
}
