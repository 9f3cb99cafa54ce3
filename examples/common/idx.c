#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int idx_parse(const uint8_t* bytes, size_t n, idx_array* out, char* err, size_t err_size) {
  memset(out, 0, sizeof *out);
  if (n < 4) {
    snprintf(err, err_size, "%zu bytes is too short for an IDX header", n);
    return -1;
  }
  if (bytes[0] != 0 || bytes[1] != 0) {
    snprintf(err, err_size, "not an IDX file (magic bytes %02x %02x, expected 00 00)", bytes[0],
             bytes[1]);
    return -1;
  }
  if (bytes[2] != 0x08) {
    snprintf(err, err_size, "IDX element type 0x%02x is not unsigned bytes (0x08)", bytes[2]);
    return -1;
  }
  const int ndim = bytes[3];
  if (ndim < 1 || ndim > IDX_MAX_DIMS) {
    snprintf(err, err_size, "IDX dimension count %d is not between 1 and %d", ndim, IDX_MAX_DIMS);
    return -1;
  }
  const size_t header = 4 + 4 * (size_t)ndim;
  if (n < header) {
    snprintf(err, err_size, "IDX header needs %zu bytes but the file has %zu", header, n);
    return -1;
  }
  size_t size = 1;
  for (int i = 0; i < ndim; ++i) {
    const uint8_t* p = bytes + 4 + 4 * i;
    const uint32_t d =
        ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    out->dims[i] = d;
    if (d != 0 && size > SIZE_MAX / d) {
      snprintf(err, err_size, "IDX sizes overflow: dimension %d is %u after a product of %zu", i, d,
               size);
      return -1;
    }
    size *= d;
  }
  if (n - header != size) {
    snprintf(err, err_size, "IDX sizes need %zu data bytes but the file has %zu (truncated?)", size,
             n - header);
    return -1;
  }
  out->data = (uint8_t*)malloc(size ? size : 1);
  if (!out->data) {
    snprintf(err, err_size, "out of memory for %zu bytes", size);
    return -1;
  }
  memcpy(out->data, bytes + header, size);
  out->ndim = ndim;
  out->size = size;
  return 0;
}

int idx_read(const char* path, size_t max_bytes, idx_array* out, char* err, size_t err_size) {
  memset(out, 0, sizeof *out);
  gzFile f = gzopen(path, "rb");
  if (!f) {
    snprintf(err, err_size, "cannot open %s: %s", path, errno ? strerror(errno) : "gzopen failed");
    return -1;
  }
  size_t cap = 1 << 20, n = 0;
  uint8_t* buf = (uint8_t*)malloc(cap);
  int status = 0;
  while (buf) {
    if (n == cap) {
      if (cap >= max_bytes) {
        snprintf(err, err_size, "%s is larger than %zu bytes", path, max_bytes);
        status = -1;
        break;
      }
      uint8_t* grown = (uint8_t*)realloc(buf, cap * 2);
      if (!grown) {
        snprintf(err, err_size, "out of memory reading %s (%zu bytes)", path, cap * 2);
        status = -1;
        break;
      }
      buf = grown;
      cap *= 2;
    }
    const int got = gzread(f, buf + n, (unsigned)(cap - n));
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      snprintf(err, err_size, "%s is not a readable gzip file: %s", path, msg);
      status = -1;
      break;
    }
    if (got == 0) {
      /* The end of the input. zlib reports a gzip stream cut short (its data or the
         trailer that holds the checksum) only here, as Z_BUF_ERROR. */
      int code = Z_OK;
      const char* msg = gzerror(f, &code);
      if (code != Z_OK && code != Z_STREAM_END) {
        snprintf(err, err_size, "%s is truncated: its gzip stream ends early (%s)", path, msg);
        status = -1;
      }
      break;
    }
    n += (size_t)got;
  }
  gzclose(f);
  if (!buf) {
    snprintf(err, err_size, "out of memory reading %s (%zu bytes)", path, cap);
    return -1;
  }
  if (status == 0) {
    char inner[256];
    if (idx_parse(buf, n, out, inner, sizeof inner) != 0) {
      snprintf(err, err_size, "%s: %s", path, inner);
      status = -1;
    }
  }
  free(buf);
  return status;
}

void idx_free(idx_array* a) {
  if (!a) return;
  free(a->data);
  a->data = NULL;
  a->size = 0;
}
