// Element types, as kernels see them (KView, in backend.h) and tensors carry them. Values
// equal the C ABI's dp_dtype for the public ones.
#pragma once

#include <cstddef>
#include <cstdint>

namespace dp {

enum class DType : int {
  kFloat32 = 0,
  kFloat64 = 1,
  kInt64 = 2,
  kBFloat16 = 3,  // 16-bit brain float: float32's exponent, 8 bits of mantissa (device/bfloat16.h)
  kUInt8 = 8,     // internal: backend workspaces (max-pool indices); not in the C ABI
};

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat64:
      return 8;
    case DType::kInt64:
      return 8;
    case DType::kBFloat16:
      return 2;
    case DType::kUInt8:
      return 1;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt64:
      return "int64";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kUInt8:
      return "uint8";
  }
  return "unknown";
}

inline bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kBFloat16;
}

}  // namespace dp
