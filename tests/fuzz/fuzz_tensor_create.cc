// bytes -> one of dp_tensor_zeros / empty / full / from_data / from_borrowed /
// from_adopted with arbitrary dtype values (invalid enum values included, passed as a C
// caller would), ndim 0..12, sizes (negative, products past 2^63), nbytes, data pointers
// and devices. The result is checked against the header: every violated rule allows
// its documented code, and a request that breaks none must succeed with the shape,
// numel, nbytes, dtype, device and contents asked for. An adopted buffer's deleter runs
// exactly once: before a failing call returns, or after the last release.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "c_caller.h"
#include "capi_checks.h"

namespace {

constexpr int kMaxShape = 12;
constexpr int kCpuDevices = 2;
// Valid requests above this many bytes are not made: the allocation would be real.
constexpr uint64_t kMaxBytes = 1 << 20;

dp_context* context() {
  static dp_context* ctx = fuzz::make_context(kCpuDevices);
  return ctx;
}

enum Creator { kZeros, kEmpty, kFull, kFromData, kFromBorrowed, kFromAdopted, kCreators };
const char* const kNames[] = {"dp_tensor_zeros",         "dp_tensor_empty",
                              "dp_tensor_full",          "dp_tensor_from_data",
                              "dp_tensor_from_borrowed", "dp_tensor_from_adopted"};

struct DeleterLog {
  std::atomic<int> calls{0};
  std::atomic<void*> data{nullptr};
};

void count_deleter(void* deleter_data, void* data) {
  auto* log = static_cast<DeleterLog*>(deleter_data);
  log->data.store(data);
  log->calls.fetch_add(1);
}

size_t dtype_size(int dtype) {
  return dtype == DP_FLOAT32                          ? 4
         : dtype == DP_BFLOAT16                       ? 2
         : (dtype == DP_FLOAT64 || dtype == DP_INT64) ? 8
                                                      : 0;
}

struct Request {
  Creator creator = kZeros;
  bool null_ctx = false, null_out = false;
  int dtype = DP_FLOAT32;
  size_t ndim = 0;
  int64_t shape[kMaxShape] = {};
  bool null_shape = false;
  int device_type = DP_DEVICE_CPU;
  int32_t device_index = 0;
  double value = 0;
  uint64_t nbytes = 0;
  int data_sel = 0;  // 0: the buffer, 1: NULL, 2: the buffer + 1 (misaligned)
  bool with_deleter = true;
};

Request decode(fuzz::Input& in) {
  Request q;
  q.creator = static_cast<Creator>(in.below(kCreators));
  const uint8_t rare = in.u8();
  q.null_ctx = rare == 1;
  q.null_out = rare == 2;
  const uint8_t dtype_sel = in.u8();
  q.dtype = dtype_sel < 200 ? dtype_sel % 4
                            : in.pick<int>({5, -1, 4, 255, 0x7fffffff, INT32_MIN, in.i32()});
  q.ndim = in.below(kMaxShape + 1);
  q.null_shape = in.u8() % 32 == 0;
  for (int64_t& s : q.shape) s = fuzz::size_value(in);
  const uint8_t device_sel = in.u8();
  q.device_type = device_sel < 224   ? DP_DEVICE_CPU
                  : device_sel < 240 ? DP_DEVICE_CUDA
                                     : in.pick<int>({2, -1, 100, in.i32()});
  const uint8_t index_sel = in.u8();
  q.device_index = index_sel < 200 ? index_sel % 2 : in.pick<int32_t>({2, -1, INT32_MAX, in.i32()});
  q.value = in.pick<double>({0.0, 1.0, -2.5, 3.75, 1e300, -1e300, 9.3e18, -9.3e18, 0x1p63, -0x1p63,
                             NAN, INFINITY, -INFINITY, in.f64()});
  q.data_sel = in.u8() % 16 == 0 ? 1 : in.u8() % 16 == 0 ? 2 : 0;
  q.with_deleter = in.u8() % 8 != 0;
  // nbytes: what the request needs (wrapping for impossible shapes), off by one, 0, or any.
  uint64_t need = dtype_size(q.dtype);
  for (size_t i = 0; i < q.ndim; ++i) need *= static_cast<uint64_t>(q.shape[i]);
  const uint8_t nbytes_sel = in.u8() % 8;
  q.nbytes = nbytes_sel < 5 ? need : nbytes_sel == 5 ? need + 1 : nbytes_sel == 6 ? 0 : in.u64();
  return q;
}

// The bytes dp_tensor_full must hold, or false when `value` has no defined conversion.
bool full_element(int dtype, double value, unsigned char* out) {
  if (dtype == DP_FLOAT64) {
    std::memcpy(out, &value, 8);
    return true;
  }
  if (dtype == DP_FLOAT32 || dtype == DP_BFLOAT16) {
    if (!std::isnan(value) && std::fabs(value) > std::numeric_limits<float>::max()) return false;
    const float f = static_cast<float>(value);
    if (dtype == DP_FLOAT32) {
      std::memcpy(out, &f, 4);
      return true;
    }
    // bfloat16: the float's upper half rounded to nearest, ties to even (NaN: any NaN).
    uint32_t u;
    std::memcpy(&u, &f, 4);
    const uint16_t b = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    std::memcpy(out, &b, 2);
    return true;
  }
  if (!(value >= -0x1p63 && value < 0x1p63)) return false;  // NaN, inf, out of range
  const int64_t i = static_cast<int64_t>(value);
  std::memcpy(out, &i, 8);
  return true;
}

std::string describe(const Request& q) {
  std::string s = std::string(kNames[q.creator]) + "(dtype " + std::to_string(q.dtype) +
                  ", shape " + (q.null_shape ? "NULL" : "") + "[";
  for (size_t i = 0; i < q.ndim; ++i) s += (i ? ", " : "") + std::to_string(q.shape[i]);
  s += "], ndim " + std::to_string(q.ndim) + ", device {" + std::to_string(q.device_type) + ", " +
       std::to_string(q.device_index) + "}, nbytes " + std::to_string(q.nbytes) + ", data " +
       (q.data_sel == 1   ? "NULL"
        : q.data_sel == 2 ? "misaligned"
                          : "buffer") +
       (q.null_ctx ? ", ctx NULL" : "") + (q.null_out ? ", out NULL" : "") + ")";
  return s;
}

// " 1 2": the codes, for messages.
std::string codes(const std::set<dp_result>& allowed) {
  std::string s;
  for (dp_result a : allowed) {
    s.push_back(' ');
    s.append(std::to_string(static_cast<int>(a)));
  }
  return s;
}

// The codes the header allows for this request (empty: it must succeed); *need receives
// the byte count when the shape and dtype are valid.
std::set<dp_result> allowed_errors(const Request& q, uint64_t* need) {
  std::set<dp_result> e;
  const bool wraps = q.creator == kFromBorrowed || q.creator == kFromAdopted;
  const bool copies = q.creator == kFromData || wraps;
  if (q.null_ctx || q.null_out) e.insert(DP_ERR_INVALID_ARGUMENT);
  const size_t elem = dtype_size(q.dtype);
  if (elem == 0) e.insert(DP_ERR_INVALID_ARGUMENT);
  bool shape_ok = true;
  if (q.ndim > DP_MAX_DIMS) {
    e.insert(DP_ERR_OUT_OF_RANGE);
    shape_ok = false;
  } else if (q.null_shape && q.ndim > 0) {
    e.insert(DP_ERR_INVALID_ARGUMENT);
    shape_ok = false;
  }
  // checked_numel's rule: sizes >= 0 and the product of the non-zero ones fits in int64.
  int64_t nonzero = 1;
  bool empty = false;
  for (size_t i = 0; shape_ok && i < q.ndim; ++i) {
    if (q.shape[i] < 0) {
      e.insert(DP_ERR_INVALID_ARGUMENT);
      shape_ok = false;
    } else if (q.shape[i] == 0) {
      empty = true;
    } else if (nonzero > std::numeric_limits<int64_t>::max() / q.shape[i]) {
      e.insert(DP_ERR_OUT_OF_RANGE);
      shape_ok = false;
    } else {
      nonzero *= q.shape[i];
    }
  }
  const int64_t numel = empty ? 0 : nonzero;
  // The byte count must fit in half of size_t (checked per dtype, and per byte).
  if (shape_ok &&
      static_cast<uint64_t>(numel) > std::numeric_limits<size_t>::max() / (elem ? elem : 1) / 2) {
    e.insert(DP_ERR_OUT_OF_RANGE);
    // No nbytes is the size such a shape needs, so that rule is broken too.
    if (copies) e.insert(DP_ERR_INVALID_ARGUMENT);
    shape_ok = false;
  }
  *need = shape_ok && elem ? static_cast<uint64_t>(numel) * elem : 0;
  if (wraps) {
    if (q.device_index < 0 || q.device_index >= kCpuDevices) e.insert(DP_ERR_OUT_OF_RANGE);
  } else if (q.device_type == DP_DEVICE_CPU) {
    if (q.device_index < 0 || q.device_index >= kCpuDevices) e.insert(DP_ERR_OUT_OF_RANGE);
  } else if (q.device_type == DP_DEVICE_CUDA) {
    e.insert(DP_ERR_OUT_OF_RANGE);  // the context has no CUDA devices
  } else {
    e.insert(DP_ERR_OUT_OF_RANGE);      // a device type that does not exist: a bad enum, or a
    e.insert(DP_ERR_INVALID_ARGUMENT);  // device that does not exist
  }
  // A value that int64 cannot represent (NaN, inf, out of range) is refused.
  unsigned char element[8];
  if (q.creator == kFull && elem && !full_element(q.dtype, q.value, element) &&
      q.dtype == DP_INT64) {
    e.insert(DP_ERR_INVALID_ARGUMENT);
  }
  if (copies) {
    if (shape_ok && elem && q.nbytes != *need) e.insert(DP_ERR_INVALID_ARGUMENT);
    if (q.data_sel == 1 && q.nbytes > 0) e.insert(DP_ERR_INVALID_ARGUMENT);
    if (wraps && q.data_sel == 2 && elem > 1) e.insert(DP_ERR_INVALID_ARGUMENT);
  }
  return e;
}

dp_result create(const Request& q, void* data, DeleterLog* log, dp_tensor** out) {
  dp_context* ctx = q.null_ctx ? nullptr : context();
  const int64_t* shape = q.null_shape ? nullptr : q.shape;
  dp_tensor** o = q.null_out ? nullptr : out;
  switch (q.creator) {
    case kZeros:
      return c_tensor_zeros(ctx, q.dtype, shape, q.ndim, q.device_type, q.device_index, o);
    case kEmpty:
      return c_tensor_empty(ctx, q.dtype, shape, q.ndim, q.device_type, q.device_index, o);
    case kFull:
      return c_tensor_full(ctx, q.dtype, shape, q.ndim, q.value, q.device_type, q.device_index, o);
    case kFromData:
      return c_tensor_from_data(ctx, q.dtype, shape, q.ndim, data, q.nbytes, q.device_type,
                                q.device_index, o);
    case kFromBorrowed:
      return c_tensor_from_borrowed(ctx, q.dtype, shape, q.ndim, data, q.nbytes, q.device_index, o);
    case kFromAdopted:
      return c_tensor_from_adopted(ctx, q.dtype, shape, q.ndim, data, q.nbytes, q.device_index,
                                   q.with_deleter ? count_deleter : nullptr, log, o);
    case kCreators:
      break;
  }
  return DP_ERR_INTERNAL;
}

void check_tensor(const Request& q, dp_tensor* t, const unsigned char* data, uint64_t need) {
  size_t ndim = 99, nbytes = 0;
  int64_t numel = -1;
  int64_t shape[DP_MAX_DIMS] = {};
  dp_dtype dtype = DP_FLOAT32;
  dp_device device = {DP_DEVICE_CPU, -1};
  FUZZ_CHECK(dp_tensor_ndim(t, &ndim) == DP_OK && ndim == q.ndim, "ndim as requested");
  FUZZ_CHECK(dp_tensor_shape(t, shape, DP_MAX_DIMS) == DP_OK, "dp_tensor_shape");
  int64_t expect_numel = 1;
  for (size_t i = 0; i < q.ndim; ++i) {
    FUZZ_CHECK(shape[i] == q.shape[i], "the shape as requested");
    expect_numel *= q.shape[i];
  }
  FUZZ_CHECK(dp_tensor_numel(t, &numel) == DP_OK && numel == expect_numel, "numel");
  FUZZ_CHECK(dp_tensor_nbytes(t, &nbytes) == DP_OK && nbytes == need, "nbytes");
  FUZZ_CHECK(dp_tensor_dtype(t, &dtype) == DP_OK && static_cast<int>(dtype) == q.dtype, "dtype");
  FUZZ_CHECK(dp_tensor_device(t, &device) == DP_OK, "dp_tensor_device");
  const bool wraps = q.creator == kFromBorrowed || q.creator == kFromAdopted;
  FUZZ_CHECK(device.type == DP_DEVICE_CPU && device.index == q.device_index,
             "the device as requested");
  if (wraps) {
    void* p = nullptr;
    FUZZ_CHECK(dp_tensor_data(t, &p) == DP_OK && p == data, "caller memory is not copied");
  }
  std::vector<unsigned char> host(nbytes);
  FUZZ_CHECK(fuzz::check_result(dp_tensor_to_host(t, host.data(), nbytes), "dp_tensor_to_host"),
             "a new tensor can be read");
  if (q.creator == kZeros) {
    for (unsigned char b : host) FUZZ_CHECK(b == 0, "dp_tensor_zeros is zero");
  } else if (q.creator == kFull) {
    unsigned char element[8];
    const size_t elem = dtype_size(q.dtype);
    if (full_element(q.dtype, q.value, element)) {
      for (size_t i = 0; i < nbytes; i += elem) {
        FUZZ_CHECK(std::memcmp(host.data() + i, element, elem) == 0 ||
                       (q.dtype != DP_INT64 && std::isnan(q.value)),
                   "dp_tensor_full holds the value");
      }
    }
  } else if (q.creator != kEmpty && nbytes > 0) {
    FUZZ_CHECK(std::memcmp(host.data(), data, nbytes) == 0, "the tensor holds the caller's data");
  }
}

int wait_for_deleter(const DeleterLog& log) {
  for (int i = 0; i < 5000 && log.calls.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return log.calls.load();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  fuzz::Input in(bytes, size);
  const Request q = decode(in);
  uint64_t need = 0;
  const std::set<dp_result> allowed = allowed_errors(q, &need);
  // A valid shape of more than kMaxBytes would be a real allocation (the library may
  // allocate before it checks the other arguments), or caller memory this target lacks.
  const bool allocates = q.creator != kFromBorrowed && q.creator != kFromAdopted;
  if (need > kMaxBytes && (allocates || allowed.empty())) return 0;
  // The caller's buffer: nbytes long when that is small (so an over-read is caught),
  // else a token 64 bytes (the library must refuse before reading it).
  const size_t buffer_size = q.nbytes <= kMaxBytes ? q.nbytes : 64;
  std::vector<unsigned char> storage(buffer_size + 16);
  unsigned char* base = storage.data();
  base += (16 - reinterpret_cast<uintptr_t>(base) % 16) % 16;
  unsigned char* buffer = q.data_sel == 2 ? base + 1 : base;
  for (size_t i = 0; i < buffer_size; ++i) buffer[i] = static_cast<unsigned char>(in.u8() ^ i);
  void* data = q.data_sel == 1 ? nullptr : buffer;

  DeleterLog log;
  dp_tensor* const kUntouched = reinterpret_cast<dp_tensor*>(uintptr_t{0x5a5a5a50});
  dp_tensor* t = kUntouched;
  const dp_result r = create(q, data, &log, &t);
  const char* name = kNames[q.creator];
  const bool adopts = q.creator == kFromAdopted && q.with_deleter;
  if (r != DP_OK) {
    fuzz::check_failure(r, name, {});
    std::string detail = describe(q) + " returned " + dp_result_string(r) + ": " + dp_last_error() +
                         "; allowed:" + codes(allowed);
    FUZZ_CHECK(allowed.count(r) == 1, "the code is one the request's faults allow", detail.c_str());
    FUZZ_CHECK(t == kUntouched, "a failed call leaves *out untouched");
    if (adopts) {
      FUZZ_CHECK(log.calls.load() == 1 && log.data.load() == data,
                 "a failed adopt calls the deleter once, before returning");
    }
    return 0;
  }
  std::string detail = describe(q) + " succeeded; allowed:" + codes(allowed);
  FUZZ_CHECK(allowed.empty(), "a request breaking a documented rule fails", detail.c_str());
  FUZZ_CHECK(t != nullptr && t != kUntouched, "a success returns a tensor");
  check_tensor(q, t, static_cast<unsigned char*>(data), need);
  FUZZ_CHECK(log.calls.load() == 0, "adopted memory stays until the release");
  dp_tensor_release(dp_tensor_retain(t));  // a second reference keeps it alive
  FUZZ_CHECK(log.calls.load() == 0, "adopted memory stays while a reference remains");
  dp_tensor_release(t);
  if (adopts) {
    FUZZ_CHECK(wait_for_deleter(log) == 1 && log.data.load() == data,
               "the deleter runs once after the last release");
  }
  return 0;
}
