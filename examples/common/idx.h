/* Reading IDX files (the MNIST / Fashion-MNIST format), gzip'd or plain, with zlib.
   IDX: two zero bytes, a type byte (0x08: unsigned bytes), a dimension count, the sizes
   as big-endian uint32, then the data. Every field is checked. */
#ifndef DP_EXAMPLES_IDX_H_
#define DP_EXAMPLES_IDX_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IDX_MAX_DIMS 4

typedef struct idx_array {
  uint8_t* data; /* malloc'd; idx_free releases it */
  int ndim;
  uint32_t dims[IDX_MAX_DIMS];
  size_t size; /* product of dims */
} idx_array;

/* Parses IDX bytes. 0 on success; else -1 with a message naming the problem in err. */
int idx_parse(const uint8_t* bytes, size_t n, idx_array* out, char* err, size_t err_size);

/* Reads and parses a file (gzip'd or plain). 0 on success; else -1 with a message that
   names the file and the problem in err. Files over max_bytes (uncompressed) are
   rejected. */
int idx_read(const char* path, size_t max_bytes, idx_array* out, char* err, size_t err_size);

void idx_free(idx_array* a);

#ifdef __cplusplus
}
#endif

#endif /* DP_EXAMPLES_IDX_H_ */
