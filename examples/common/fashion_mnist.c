#define _DEFAULT_SOURCE /* posix_memalign, madvise */
#include "fashion_mnist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "idx.h"

/* The training images are read in random rows (one shuffled batch at a time): on 4 KiB
   pages nearly every row costs a TLB miss. Aligning to 2 MiB and asking for transparent
   huge pages halved the batch assembly time on the development machine (the kernel may
   decline; the memory is then ordinary). */
static uint8_t* alloc_pixels(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  const size_t rounded = bytes == 0 ? huge : (bytes + huge - 1) / huge * huge;
  void* mem = NULL;
  if (posix_memalign(&mem, huge, rounded) != 0) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(mem, rounded, MADV_HUGEPAGE);
#endif
  return (uint8_t*)mem;
}

static int load_split(const char* dir, const char* prefix, size_t limit, fashion_split* out,
                      char* err, size_t err_size) {
  char images_path[1024], labels_path[1024];
  snprintf(images_path, sizeof images_path, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
  snprintf(labels_path, sizeof labels_path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
  idx_array images, labels;
  const size_t max_bytes = (size_t)1 << 30;
  if (idx_read(images_path, max_bytes, &images, err, err_size) != 0) return -1;
  if (idx_read(labels_path, max_bytes, &labels, err, err_size) != 0) {
    idx_free(&images);
    return -1;
  }
  int status = -1;
  if (images.ndim != 3) {
    snprintf(err, err_size, "%s: expected N x 28 x 28 images, got %d dimensions", images_path,
             images.ndim);
  } else if (images.dims[1] != 28 || images.dims[2] != 28) {
    snprintf(err, err_size, "%s: expected N x 28 x 28 images, got %u x %u x %u", images_path,
             images.dims[0], images.dims[1], images.dims[2]);
  } else if (images.dims[0] == 0) {
    snprintf(err, err_size, "%s: holds no images", images_path);
  } else if (labels.ndim != 1 || labels.dims[0] != images.dims[0]) {
    snprintf(err, err_size, "%s: expected %u labels, one per image", labels_path, images.dims[0]);
  } else {
    size_t n = images.dims[0];
    if (limit > 0 && limit < n) n = limit;
    out->n = n;
    out->pixels = alloc_pixels(n * FASHION_PIXELS);
    out->labels = (int64_t*)malloc(n * sizeof(int64_t));
    if (!out->pixels || !out->labels) {
      snprintf(err, err_size, "out of memory for %zu samples", n);
    } else {
      status = 0;
      memcpy(out->pixels, images.data, n * FASHION_PIXELS);
      for (size_t i = 0; i < n && status == 0; ++i) {
        if (labels.data[i] >= FASHION_CLASSES) {
          snprintf(err, err_size, "%s: label %zu is %u, not a class in [0, 10)", labels_path, i,
                   labels.data[i]);
          status = -1;
        }
        out->labels[i] = labels.data[i];
      }
    }
    if (status != 0) {
      free(out->pixels);
      free(out->labels);
      memset(out, 0, sizeof *out);
    }
  }
  idx_free(&images);
  idx_free(&labels);
  return status;
}

int fashion_mnist_load(const char* dir, size_t train_limit, fashion_mnist* out, char* err,
                       size_t err_size) {
  memset(out, 0, sizeof *out);
  if (load_split(dir, "train", train_limit, &out->train, err, err_size) != 0) return -1;
  if (load_split(dir, "t10k", 0, &out->test, err, err_size) != 0) {
    fashion_mnist_free(out);
    return -1;
  }
  return 0;
}

int fashion_mnist_load_test(const char* dir, fashion_mnist* out, char* err, size_t err_size) {
  memset(out, 0, sizeof *out);
  return load_split(dir, "t10k", 0, &out->test, err, err_size);
}

void fashion_mnist_free(fashion_mnist* d) {
  free(d->train.pixels);
  free(d->train.labels);
  free(d->test.pixels);
  free(d->test.labels);
  memset(d, 0, sizeof *d);
}

/* A batch's conversion is bound by the division's throughput: compiled for the CPU it runs
   on (GCC's target_clones, chosen at load time) 256 random rows take ~19 us here instead
   of ~33 us with the baseline's 4-wide SSE2 division; every width rounds the same. Not
   under ThreadSanitizer, whose runtime is not ready when the load-time resolver runs. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void fashion_pixels_to_float(float* restrict dst, const uint8_t* restrict pixels, size_t count) {
  for (size_t i = 0; i < count; ++i) dst[i] = (float)pixels[i] / 255.0f;
}
