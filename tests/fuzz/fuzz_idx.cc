// bytes -> idx_parse (examples/common/idx.c). A parse either succeeds with fields that
// describe the input exactly, or fails with a message and nothing allocated.
#include <cstring>

#include "fuzz_input.h"
#include "idx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  idx_array a;
  char err[256];
  err[0] = '\0';
  const int r = idx_parse(data, size, &a, err, sizeof err);
  // The same with a one-byte message buffer: the message is cut, never overflows.
  idx_array b;
  char tiny[1] = {'x'};
  const int r_tiny = idx_parse(data, size, &b, tiny, sizeof tiny);
  FUZZ_CHECK(r == r_tiny, "the message buffer's size does not change the result");
  idx_free(&b);
  if (r != 0) {
    FUZZ_CHECK(r == -1, "idx_parse returns 0 or -1");
    FUZZ_CHECK(err[0] != '\0' && std::strlen(err) < sizeof err, "a failure has a message");
    FUZZ_CHECK(tiny[0] == '\0', "a one-byte message buffer holds the empty string");
    FUZZ_CHECK(a.data == nullptr && a.size == 0, "a failure leaves nothing allocated");
    return 0;
  }
  FUZZ_CHECK(a.ndim >= 1 && a.ndim <= IDX_MAX_DIMS, "ndim is 1 to IDX_MAX_DIMS");
  FUZZ_CHECK(size >= 4 + 4 * static_cast<size_t>(a.ndim), "the header fits in the input");
  FUZZ_CHECK(data[0] == 0 && data[1] == 0 && data[2] == 0x08 && data[3] == a.ndim,
             "the magic bytes, type and dimension count are as read");
  size_t product = 1;
  for (int i = 0; i < a.ndim; ++i) {
    const uint8_t* p = data + 4 + 4 * i;
    const uint32_t d = (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
                       (static_cast<uint32_t>(p[2]) << 8) | p[3];
    FUZZ_CHECK(a.dims[i] == d, "dims are the big-endian sizes");
    product *= d;
  }
  const size_t header = 4 + 4 * static_cast<size_t>(a.ndim);
  FUZZ_CHECK(a.size == product && a.size == size - header,
             "size is the product of dims and "
             "the data length");
  FUZZ_CHECK(a.data != nullptr, "a parsed array has data");
  FUZZ_CHECK(std::memcmp(a.data, data + header, a.size) == 0, "data is the input's payload");
  idx_free(&a);
  FUZZ_CHECK(a.data == nullptr && a.size == 0, "idx_free clears the array");
  idx_free(&a);  // twice is harmless
  return 0;
}
