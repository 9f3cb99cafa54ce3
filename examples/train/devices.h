/* The devices of --devices, --output-device and --chunk-sizes, checked against the
   context's. */
#ifndef DP_TRAIN_DEVICES_H_
#define DP_TRAIN_DEVICES_H_

#include <dataparallel/dataparallel.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#define MAX_DEVICES 64

typedef struct device_setup {
  dp_device devices[MAX_DEVICES]; /* devices[0] holds the model and takes the inputs */
  size_t n_devices;
  dp_device output_device;
  int64_t chunk_sizes[MAX_DEVICES]; /* --chunk-sizes; n_chunks 0 for an even split */
  size_t n_chunks;
  char names[MAX_DEVICES * 16];      /* "cpu:0,cpu:1" */
  char json_names[MAX_DEVICES * 16]; /* "\"cpu:0\",\"cpu:1\"" */
  char where[MAX_DEVICES * 16 + 64]; /* names, or "2 ranks (rank 0 on cpu:0)" */
} device_setup;

/* The devices o names (all, or none given without --distributed: every GPU, else every
   CPU device) into *out. With --distributed and no --devices, none yet: the library picks
   them for the rank, and set_rank_devices records them. Exits EXIT_BAD_INPUT (errors.h)
   for a device that is not one or does not exist, and for chunk sizes that do not fit
   the devices or --batch. */
void choose_devices(dp_context* ctx, const options* o, device_setup* out);

/* The n devices the library chose for this rank into *d (and the output device, unless
   --output-device gave it). */
void set_rank_devices(device_setup* d, const options* o, const dp_device* devices, size_t n);

/* 1 when every device of d computes bfloat16 in hardware (dp_device_bf16_native), else 0. */
int devices_bf16_native(const dp_context* ctx, const device_setup* d);

#endif /* DP_TRAIN_DEVICES_H_ */
