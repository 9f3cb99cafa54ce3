// Reading an option struct by its struct_size, so that callers built against an older or
// a newer header keep working (the rule is written in dataparallel.h, before
// dp_context_options).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "error.h"

namespace dp::capi {

// The largest struct_size read: far above any option struct's size.
inline constexpr size_t kMaxOptionsSize = 4096;

// What the messages name, and the smallest struct_size accepted: the size of the
// struct's first version, at least the offset of its first member after struct_size.
struct OptionsLayout {
  const char* type;  // "dp_sgd_options"
  const char* init;  // "DP_SGD_OPTIONS_INIT"
  size_t minimum;
};

// `defaults` (the _INIT values) with the caller's members copied over: the first
// min(struct_size, sizeof(T)) bytes of *given, so that members a shorter struct lacks keep
// their defaults. A struct_size past sizeof(T) comes from a newer header: accepted when
// the bytes this library does not know are all zero (the newer members left at zero),
// DP_ERR_NOT_SUPPORTED otherwise. NULL gives the defaults. The result's struct_size is
// sizeof(T).
// Throws kInvalidArgument unless `size` is a struct_size of layout's struct. Every version
// starts with a size_t, so its size is a multiple of size_t's alignment (another size would
// end inside a member); none comes near kMaxOptionsSize, which keeps a struct_size left
// uninitialised from reading far past the caller's struct.
inline void check_struct_size(size_t size, const char* arg, const OptionsLayout& layout) {
  DP_CHECK(size >= layout.minimum && size <= kMaxOptionsSize && size % alignof(size_t) == 0,
           kInvalidArgument,
           arg << "->struct_size = " << size << " is not the size of a " << layout.type << " ("
               << layout.minimum << " to " << kMaxOptionsSize << ", a multiple of "
               << alignof(size_t) << "; initialise with " << layout.init << ")");
}

template <class T>
T read_options(const T* given, T defaults, const char* arg, const OptionsLayout& layout) {
  if (!given) return defaults;
  const size_t size = given->struct_size;
  check_struct_size(size, arg, layout);
  const auto* bytes = reinterpret_cast<const unsigned char*>(given);
  const auto* unknown = std::find_if(bytes + std::min(size, sizeof(T)), bytes + size,
                                     [](unsigned char b) { return b != 0; });
  DP_CHECK(unknown == bytes + size, kNotSupported,
           arg << "->struct_size = " << size << " is larger than this library's " << layout.type
               << " (" << sizeof(T) << " bytes) and byte " << (unknown - bytes)
               << " is not zero: a member from a newer header that this library does not know");
  std::memcpy(&defaults, given, std::min(size, sizeof(T)));
  defaults.struct_size = sizeof(T);
  return defaults;
}

// Throws kInvalidArgument unless out->struct_size is one write_results takes (the sizes
// read_options takes).
template <class T>
void check_results_size(const T* out, const char* arg, const OptionsLayout& layout) {
  check_struct_size(out->struct_size, arg, layout);
}

// Writes `value` into the caller's result struct *out by its struct_size (checked by
// check_results_size): the first min(struct_size, sizeof(T)) bytes. Bytes past sizeof(T)
// (members of a newer header that this library does not know) are never written: the
// caller's _INIT left them zero, and a struct_size left uninitialised cannot make the
// library write past the struct. out->struct_size keeps the caller's value.
template <class T>
void write_results(T* out, const T& value, const char* arg, const OptionsLayout& layout) {
  check_results_size(out, arg, layout);
  const size_t known = std::min(static_cast<size_t>(out->struct_size), sizeof(T));
  std::memcpy(reinterpret_cast<unsigned char*>(out) + sizeof(size_t),
              reinterpret_cast<const unsigned char*>(&value) + sizeof(size_t),
              known - sizeof(size_t));
}

}  // namespace dp::capi
