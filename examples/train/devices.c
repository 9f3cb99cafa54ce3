#include "devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

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

static void device_str(dp_device d, char* buf, size_t n) {
  snprintf(buf, n, "%s:%d", d.type == DP_DEVICE_CPU ? "cpu" : "cuda", d.index);
}

/* The names and the `where` of d's devices. */
static void name_devices(device_setup* d, const options* o) {
  d->names[0] = d->json_names[0] = '\0';
  for (size_t i = 0; i < d->n_devices; ++i) {
    char name[32];
    device_str(d->devices[i], name, sizeof name);
    const size_t used_json = strlen(d->json_names), used = strlen(d->names);
    snprintf(d->json_names + used_json, sizeof d->json_names - used_json, "%s\"%s\"", i ? "," : "",
             name);
    snprintf(d->names + used, sizeof d->names - used, "%s%s", i ? "," : "", name);
  }
  if (o->distributed) {
    snprintf(d->where, sizeof d->where, "%d ranks (rank 0 on %s)", o->ranks, d->names);
  } else {
    snprintf(d->where, sizeof d->where, "%s", d->names);
  }
}

void choose_devices(dp_context* ctx, const options* o, device_setup* out) {
  memset(out, 0, sizeof *out);
  dp_device* devices = out->devices;
  size_t n_devices = 0;
  char items[MAX_DEVICES][64];
  if (o->distributed && !o->devices) {
    /* The library picks a rank's devices when it creates the DistributedDataParallel, and
       the trainer names them then (set_rank_devices). */
  } else if (o->devices && strcmp(o->devices, "all") != 0) {
    n_devices = split_list(o->devices, items, MAX_DEVICES, "--devices");
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
  out->n_devices = n_devices;
  if (n_devices) out->output_device = devices[0];
  if (o->output_device && parse_device(o->output_device, &out->output_device) != 0) {
    bad_input("--output-device = \"%s\" is not a device (expected cpu:N or cuda:N)",
              o->output_device);
  }
  if (o->chunk_sizes) {
    const size_t n_chunks = split_list(o->chunk_sizes, items, MAX_DEVICES, "--chunk-sizes");
    int64_t sum = 0;
    for (size_t i = 0; i < n_chunks; ++i) {
      out->chunk_sizes[i] = parse_int(items[i], "--chunk-sizes entry", 0, INT64_MAX / 1024);
      sum += out->chunk_sizes[i];
    }
    if (n_chunks != n_devices) {
      bad_input("--chunk-sizes has %zu entries but there are %zu devices", n_chunks, n_devices);
    }
    if (sum != o->batch) {
      bad_input("--chunk-sizes sum to %lld but --batch is %lld%s", (long long)sum,
                (long long)o->batch, o->batch_from_checkpoint ? " (the checkpoint's)" : "");
    }
    out->n_chunks = n_chunks;
  }
  name_devices(out, o);
}

void set_rank_devices(device_setup* d, const options* o, const dp_device* devices, size_t n) {
  d->n_devices = n < MAX_DEVICES ? n : MAX_DEVICES;
  memcpy(d->devices, devices, d->n_devices * sizeof *devices);
  if (!o->output_device) d->output_device = devices[0];
  name_devices(d, o);
}

int devices_bf16_native(const dp_context* ctx, const device_setup* d) {
  for (size_t i = 0; i < d->n_devices; ++i) {
    int native = 0;
    check(dp_device_bf16_native(ctx, d->devices[i], &native), "devices");
    if (!native) return 0;
  }
  return d->n_devices > 0;
}
