// What every fuzz target shares: a reader that decodes the input bytes into values (it
// never fails: bytes past the end read as zero), and a check that aborts with a message,
// which libFuzzer reports as a crash and the replay test as a failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace fuzz {

[[noreturn]] inline void fail(const char* file, int line, const char* cond, const char* what,
                              const char* detail = nullptr) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s [%s]%s%s\n", file, line, what, cond,
               detail ? ": " : "", detail ? detail : "");
  std::fflush(stderr);
  std::abort();
}

// FUZZ_CHECK(cond, "what should hold") or FUZZ_CHECK(cond, "what", detail_c_string).
#define FUZZ_CHECK(cond, ...)                                          \
  do {                                                                 \
    if (!(cond)) ::fuzz::fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return pos_ < size_ ? size_ - pos_ : 0; }

  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  uint32_t u32() { return static_cast<uint32_t>(u16()) | (static_cast<uint32_t>(u16()) << 16); }
  uint64_t u64() { return static_cast<uint64_t>(u32()) | (static_cast<uint64_t>(u32()) << 32); }
  int32_t i32() { return static_cast<int32_t>(u32()); }
  int64_t i64() { return static_cast<int64_t>(u64()); }
  bool flag() { return (u8() & 1) != 0; }
  // A value in [0, n) (n > 0), from one byte when n fits in it.
  size_t below(size_t n) { return n <= 256 ? u8() % n : u32() % n; }
  double f64() {
    const uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  template <class T>
  T pick(std::initializer_list<T> values) {
    return values.begin()[below(values.size())];
  }
  // Copies up to n bytes (fewer at the end) into out; returns how many.
  size_t take(void* out, size_t n) {
    const size_t k = n < remaining() ? n : remaining();
    if (k) std::memcpy(out, data_ + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace fuzz

namespace fuzz {

// Whether check `id` is listed in the environment variable DP_FUZZ_SKIP (comma-separated):
// lets a long fuzzing run get past a library bug that is already reported (and saved in
// regressions/) to look for others. Unset, every check runs; the replay test leaves it
// unset.
inline bool skipped(const char* id) {
  const char* list = std::getenv("DP_FUZZ_SKIP");
  if (!list) return false;
  const size_t n = std::strlen(id);
  for (const char* p = list; (p = std::strstr(p, id)) != nullptr; p += n) {
    const bool starts = p == list || p[-1] == ',';
    const bool ends = p[n] == '\0' || p[n] == ',';
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace fuzz

namespace fuzz {

// A tensor size: mostly small, sometimes one of the values that break careless checks
// (negative, 2^31, 2^32, products past 2^63), sometimes any 64-bit value.
inline int64_t size_value(Input& in) {
  const uint8_t sel = in.u8();
  if (sel < 200) return sel % 6;
  switch (sel % 10) {
    case 0:
      return -1;
    case 1:
      return INT64_MIN;
    case 2:
      return INT64_MAX;
    case 3:
      return int64_t{1} << 31;
    case 4:
      return int64_t{1} << 32;
    case 5:
      return int64_t{1} << 62;
    case 6:
      return (int64_t{1} << 61) + 1;
    default:
      return in.i64();
  }
}

}  // namespace fuzz
