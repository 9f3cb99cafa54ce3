// bytes -> a DLManagedTensor's fields (ndim, shape, strides, dtype, device, byte_offset,
// data pointing into a buffer of this target, sized to match or not) ->
// dp_tensor_from_dlpack. The result must match what the header promises: success exactly
// for CPU tensors of float32/float64/int64 with compact row-major strides (shape and
// dtype kept, memory shared, deleter called exactly once after the release), failure
// with a documented code otherwise (deleter never called, *out untouched).
#include <dlpack/dlpack.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "capi_checks.h"

namespace {

constexpr int kMaxShape = 12;  // entries this target fills; ndim may claim more
constexpr size_t kMaxBuffer = 1 << 16;

dp_context* context() {
  static dp_context* ctx = fuzz::make_context(2);
  return ctx;
}

struct DeleterLog {
  std::atomic<int> calls{0};
  std::atomic<DLManagedTensor*> self{nullptr};
};

void count_deleter(DLManagedTensor* self) {
  auto* log = static_cast<DeleterLog*>(self->manager_ctx);
  log->self.store(self);
  log->calls.fetch_add(1);
}

// The element size of a supported dtype, 0 for any other.
size_t supported_size(DLDataType t) {
  if (t.lanes != 1) return 0;
  if (t.code == kDLFloat && t.bits == 32) return 4;
  if (t.code == kDLFloat && t.bits == 64) return 8;
  if (t.code == kDLInt && t.bits == 64) return 8;
  if (t.code == kDLBfloat && t.bits == 16) return 2;
  return 0;
}

dp_dtype dp_dtype_of(DLDataType t) {
  if (t.code == kDLInt) return DP_INT64;
  if (t.code == kDLBfloat) return DP_BFLOAT16;
  return t.bits == 32 ? DP_FLOAT32 : DP_FLOAT64;
}

// numel of the shape if it is valid for an element of `elem` bytes (the library's
// checked_numel rule: sizes >= 0, the product of the non-zero sizes fits in int64, and the
// bytes in half of size_t).
bool valid_numel(const int64_t* shape, int ndim, size_t elem, int64_t* numel) {
  int64_t nonzero = 1;
  bool empty = false;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] < 0) return false;
    if (shape[i] == 0) {
      empty = true;
      continue;
    }
    if (nonzero > std::numeric_limits<int64_t>::max() / shape[i]) return false;
    nonzero *= shape[i];
  }
  const int64_t n = empty ? 0 : nonzero;
  if (static_cast<uint64_t>(n) > std::numeric_limits<size_t>::max() / elem / 2) return false;
  *numel = n;
  return true;
}

bool compact(const int64_t* shape, const int64_t* strides, int ndim, int64_t numel) {
  if (strides == nullptr || numel <= 1) return true;
  int64_t expect = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

// What this target gave the library, and what it expects back.
struct Case {
  DLManagedTensor managed{};
  DeleterLog log;
  int64_t shape[kMaxShape] = {};
  int64_t strides[kMaxShape] = {};
  std::vector<unsigned char> buffer_storage;  // the buffer plus room for misalignment
  unsigned char* buffer = nullptr;
  size_t buffer_size = 0;
  int32_t device_type = kDLCPU;  // as an int: any value may arrive from a producer
};

void decode(fuzz::Input& in, Case& c) {
  DLTensor& dl = c.managed.dl_tensor;
  const uint8_t ndim_sel = in.u8();
  dl.ndim = ndim_sel < 224 ? ndim_sel % 11 - 1 : in.i32();
  for (int64_t& s : c.shape) s = fuzz::size_value(in);
  dl.shape = in.u8() % 16 == 0 ? nullptr : c.shape;

  const uint8_t dtype_sel = in.u8() % 10;
  static const DLDataType kTypes[] = {{kDLFloat, 32, 1}, {kDLFloat, 64, 1}, {kDLInt, 64, 1},
                                      {kDLFloat, 16, 1}, {kDLUInt, 8, 1},   {kDLInt, 32, 1},
                                      {kDLBfloat, 16, 1}};
  if (dtype_sel < 7) {
    dl.dtype = kTypes[dtype_sel];
  } else if (dtype_sel == 7) {
    dl.dtype = kTypes[in.u8() % 3];
    dl.dtype.lanes = in.u16();
  } else {
    dl.dtype.code = in.u8();
    dl.dtype.bits = in.u8();
    dl.dtype.lanes = in.u16();
  }

  // Strides: none, compact, compact with one entry changed, or arbitrary.
  const uint8_t strides_sel = in.u8() % 4;
  const int nd = dl.ndim < 0 ? 0 : (dl.ndim > kMaxShape ? kMaxShape : dl.ndim);
  uint64_t expect = 1;
  for (int i = nd - 1; i >= 0; --i) {
    c.strides[i] = static_cast<int64_t>(expect);
    expect *= static_cast<uint64_t>(c.shape[i]);  // wraps for bad shapes: no matter
  }
  if (strides_sel == 2 && nd > 0)
    c.strides[in.below(static_cast<size_t>(nd))] = fuzz::size_value(in);
  if (strides_sel == 3) {
    for (int64_t& s : c.strides) s = fuzz::size_value(in);
  }
  dl.strides = strides_sel == 0 ? nullptr : c.strides;

  const uint8_t device_sel = in.u8() % 8;
  c.device_type = device_sel < 6 ? kDLCPU : device_sel == 6 ? kDLCUDA : in.i32();
  // DLDevice::device_type is a C enum: stored as the int it is in memory, never as a C++
  // value outside the enumerators (that would be undefined behaviour in this target).
  static_assert(sizeof(dl.device.device_type) == sizeof(int32_t));
  std::memcpy(&dl.device.device_type, &c.device_type, sizeof c.device_type);
  dl.device.device_id = in.u8() % 4 == 0 ? in.i32() : 0;

  // The buffer: exactly what the shape needs when that is small, or another size.
  const size_t elem = supported_size(dl.dtype);
  int64_t numel = 0;
  size_t need = 0;
  if (dl.shape && dl.ndim >= 0 && dl.ndim <= kMaxShape && elem &&
      valid_numel(dl.shape, dl.ndim, elem, &numel) &&
      static_cast<uint64_t>(numel) * elem <= kMaxBuffer) {
    need = static_cast<size_t>(numel) * elem;
  }
  const uint8_t size_sel = in.u8() % 8;
  c.buffer_size = size_sel < 5 ? need : size_sel == 5 ? (need ? need - 1 : 0) : in.u16() % 512;
  // 64-aligned storage; the buffer starts 0, 1 or 4 bytes in, so misaligned data happens.
  c.buffer_storage.resize(c.buffer_size + 64 + 8);
  unsigned char* base = c.buffer_storage.data();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
  const uint8_t align_sel = in.u8() % 8;
  c.buffer = base + (align_sel == 6 ? 1 : align_sel == 7 ? 4 : 0);
  for (size_t i = 0; i < c.buffer_size; ++i) c.buffer[i] = static_cast<unsigned char>(i * 31 + 7);

  const uint8_t data_sel = in.u8() % 16;
  dl.data = data_sel == 0 ? nullptr : c.buffer;
  const uint8_t offset_sel = in.u8() % 8;
  if (offset_sel < 5) {
    dl.byte_offset = 0;
  } else if (offset_sel < 7) {
    dl.byte_offset = (elem ? elem : 1) * (in.u8() % 4);
  } else {
    dl.byte_offset = in.u64();
  }

  c.managed.manager_ctx = &c.log;
  c.managed.deleter = in.u8() % 8 == 0 ? nullptr : count_deleter;
}

// Waits (bounded) for the deleter: the library may call it from a worker thread.
int wait_for_deleter(const DeleterLog& log) {
  for (int i = 0; i < 5000 && log.calls.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return log.calls.load();
}

void check_export(dp_tensor* t, const DLTensor& imported, int64_t numel, size_t elem) {
  DLManagedTensor* out = nullptr;
  if (!fuzz::check_result(dp_tensor_to_dlpack(t, &out), "dp_tensor_to_dlpack")) return;
  FUZZ_CHECK(out != nullptr && out->dl_tensor.ndim == imported.ndim, "the export keeps ndim");
  int64_t n = 1;
  for (int i = 0; i < imported.ndim; ++i) {
    FUZZ_CHECK(out->dl_tensor.shape[i] == imported.shape[i], "the export keeps the shape");
    n *= out->dl_tensor.shape[i];
  }
  FUZZ_CHECK(n == numel, "the export has the same element count");
  FUZZ_CHECK(out->dl_tensor.dtype.code == imported.dtype.code &&
                 out->dl_tensor.dtype.bits == imported.dtype.bits &&
                 out->dl_tensor.dtype.lanes == 1,
             "the export keeps the dtype");
  FUZZ_CHECK(out->dl_tensor.dtype.bits / 8 == elem, "bits match the element size");
  void* data = nullptr;
  FUZZ_CHECK(dp_tensor_data(t, &data) == DP_OK, "dp_tensor_data of a CPU tensor");
  FUZZ_CHECK(static_cast<char*>(out->dl_tensor.data) + out->dl_tensor.byte_offset == data,
             "the export shares the memory");
  FUZZ_CHECK(out->deleter != nullptr, "an exported tensor has a deleter");
  out->deleter(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  fuzz::Input in(bytes, size);
  Case c;
  decode(in, c);
  const DLTensor& dl = c.managed.dl_tensor;
  dp_context* ctx = in.u8() % 64 == 0 ? nullptr : context();
  dp_tensor* const kUntouched = reinterpret_cast<dp_tensor*>(uintptr_t{0x5a5a5a50});
  dp_tensor* t = kUntouched;

  // What the header promises.
  const size_t elem = supported_size(dl.dtype);
  int64_t numel = 0;
  const bool shape_ok = dl.ndim >= 0 && dl.ndim <= DP_MAX_DIMS && (dl.shape || dl.ndim == 0) &&
                        elem && valid_numel(dl.shape, dl.ndim, elem, &numel);
  // data + byte_offset, and the end of the bytes after it, must not wrap the address space.
  uintptr_t address = 0, end = 0;
  const size_t span = shape_ok ? static_cast<size_t>(numel) * elem : 0;
  const bool wraps =
      __builtin_add_overflow(reinterpret_cast<uintptr_t>(dl.data), dl.byte_offset, &address) ||
      __builtin_add_overflow(address, span, &end);
  const bool expect_ok = ctx && shape_ok && !wraps &&
                         compact(dl.shape, dl.strides, dl.ndim, numel) && c.device_type == kDLCPU &&
                         (dl.data != nullptr || numel == 0) && (address % elem == 0 || numel == 0);
  // Undefined in the library itself (pointer arithmetic past its object): data NULL with
  // an offset, or an offset leaving the buffer.
  const bool wild_offset =
      (dl.data == nullptr && dl.byte_offset != 0) || dl.byte_offset > c.buffer_size;
  if (wild_offset && fuzz::skipped("dlpack-wild-offset")) return 0;

  const dp_result r = dp_tensor_from_dlpack(ctx, &c.managed, &t);
  if (r != DP_OK) {
    fuzz::check_failure(r, "dp_tensor_from_dlpack",
                        {DP_ERR_INVALID_ARGUMENT, DP_ERR_OUT_OF_RANGE, DP_ERR_DTYPE_MISMATCH,
                         DP_ERR_DEVICE_MISMATCH, DP_ERR_NOT_SUPPORTED});
    FUZZ_CHECK(!expect_ok, "a supported DLPack tensor is imported", dp_last_error());
    FUZZ_CHECK(t == kUntouched, "a failed import leaves *out untouched");
    FUZZ_CHECK(c.log.calls.load() == 0, "a failed import never calls the deleter");
    return 0;
  }

  FUZZ_CHECK(expect_ok, "only supported DLPack tensors are imported");
  FUZZ_CHECK(t != nullptr && t != kUntouched, "a successful import returns a tensor");
  FUZZ_CHECK(c.log.calls.load() == 0, "the deleter waits for the release");

  size_t ndim = 0;
  int64_t got_numel = -1;
  size_t nbytes = 0;
  dp_dtype dtype = DP_FLOAT32;
  dp_device device = {DP_DEVICE_CPU, -1};
  int64_t shape[DP_MAX_DIMS] = {};
  FUZZ_CHECK(dp_tensor_ndim(t, &ndim) == DP_OK && ndim == static_cast<size_t>(dl.ndim),
             "ndim is kept");
  FUZZ_CHECK(dp_tensor_shape(t, shape, DP_MAX_DIMS) == DP_OK, "dp_tensor_shape");
  for (size_t i = 0; i < ndim; ++i) FUZZ_CHECK(shape[i] == dl.shape[i], "the shape is kept");
  FUZZ_CHECK(dp_tensor_numel(t, &got_numel) == DP_OK && got_numel == numel, "numel");
  FUZZ_CHECK(dp_tensor_nbytes(t, &nbytes) == DP_OK && nbytes == static_cast<size_t>(numel) * elem,
             "nbytes is numel * element size");
  FUZZ_CHECK(dp_tensor_dtype(t, &dtype) == DP_OK && dtype == dp_dtype_of(dl.dtype),
             "the dtype is kept");
  FUZZ_CHECK(
      dp_tensor_device(t, &device) == DP_OK && device.type == DP_DEVICE_CPU && device.index == 0,
      "a kDLCPU tensor is on CPU device 0");
  void* data = nullptr;
  FUZZ_CHECK(dp_tensor_data(t, &data) == DP_OK, "dp_tensor_data");
  FUZZ_CHECK(reinterpret_cast<uintptr_t>(data) == address, "no copy: data + byte_offset");

  // Read the contents back when they lie inside the buffer this target owns.
  const uintptr_t begin = reinterpret_cast<uintptr_t>(c.buffer);
  if (dl.data && address >= begin && address - begin <= c.buffer_size &&
      nbytes <= c.buffer_size - (address - begin)) {
    std::vector<unsigned char> host(nbytes);
    FUZZ_CHECK(fuzz::check_result(dp_tensor_to_host(t, host.data(), nbytes), "dp_tensor_to_host"),
               "reading an imported tensor back succeeds");
    FUZZ_CHECK(nbytes == 0 || std::memcmp(host.data(), c.buffer + (address - begin), nbytes) == 0,
               "the tensor reads the producer's memory");
    check_export(t, dl, numel, elem);
  }

  dp_tensor_release(t);
  if (c.managed.deleter) {
    FUZZ_CHECK(wait_for_deleter(c.log) == 1, "the deleter runs once after the release");
    FUZZ_CHECK(c.log.self.load() == &c.managed, "the deleter gets the DLManagedTensor");
  }
  dp_device cpu0 = {DP_DEVICE_CPU, 0};
  FUZZ_CHECK(dp_device_synchronize(context(), cpu0) == DP_OK, "synchronize");
  FUZZ_CHECK(c.log.calls.load() == (c.managed.deleter ? 1 : 0), "the deleter runs exactly once");
  return 0;
}
