#include "io/dlpack.h"

#include <dlpack/dlpack.h>

#include <cstring>

#include "context/context.h"
#include "error.h"

namespace dp {

namespace {

// What the exported DLManagedTensor points into: the tensor (keeping the storage alive)
// and the shape array DLTensor refers to.
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape;
};

DLDataType to_dl(DType t) {
  switch (t) {
    case DType::kFloat32:
      return {kDLFloat, 32, 1};
    case DType::kFloat64:
      return {kDLFloat, 64, 1};
    case DType::kInt64:
      return {kDLInt, 64, 1};
    case DType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DType::kUInt8:
      return {kDLUInt, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

DType from_dl(DLDataType t) {
  DP_CHECK(t.lanes == 1, kDtypeMismatch,
           "DLPack tensor has " << t.lanes << " lanes; only 1 is supported");
  if (t.code == kDLFloat && t.bits == 32) return DType::kFloat32;
  if (t.code == kDLFloat && t.bits == 64) return DType::kFloat64;
  if (t.code == kDLInt && t.bits == 64) return DType::kInt64;
  if (t.code == kDLBfloat && t.bits == 16) return DType::kBFloat16;
  DP_THROW(kDtypeMismatch, "DLPack dtype (code " << static_cast<int>(t.code) << ", "
                                                 << static_cast<int>(t.bits)
                                                 << " bits) is not float32, float64, int64 or "
                                                    "bfloat16");
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  DP_CHECK(t.defined(), kInvalidArgument, "to_dlpack: tensor is missing");
  auto ctx = t.context();
  if (!t.device().is_cpu()) {
    // DLPack 0.6 has no stream handshake: the consumer reads the memory on a stream of its
    // own (PyTorch's current one), which this library's streams do not order. The
    // device's work (the kernels that wrote t) finishes first.
    const Device d = t.device();
    ctx->run(d, [&] { ctx->backend(d.type).synchronize(d.index); });
  }
  auto holder = std::make_unique<ExportContext>();
  holder->tensor = t.detach();
  t.impl()->storage->mark_exposed();  // the importer may write it
  holder->shape.assign(t.shape().begin(), t.shape().end());
  auto managed = std::make_unique<DLManagedTensor>();
  DLTensor& dl = managed->dl_tensor;
  dl.data = t.data();
  if (t.device().is_cpu()) {
    dl.device = {kDLCPU, 0};
  } else {
    dl.device = {kDLCUDA, ctx->backend(t.device().type).physical_index(t.device().index)};
  }
  dl.ndim = t.ndim();
  dl.dtype = to_dl(t.dtype());
  dl.shape = holder->shape.data();
  dl.strides = nullptr;  // compact row-major
  dl.byte_offset = 0;
  managed->manager_ctx = holder.release();
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
    delete self;
  };
  return managed.release();
}

Tensor from_dlpack(const std::shared_ptr<Context>& ctx, DLManagedTensor* src) {
  DP_CHECK(src != nullptr, kInvalidArgument, "from_dlpack: src is NULL");
  const DLTensor& dl = src->dl_tensor;
  DP_CHECK(dl.ndim >= 0 && dl.ndim <= kMaxDims, kOutOfRange,
           "DLPack tensor has ndim = " << dl.ndim << "; at most " << kMaxDims << " are supported");
  DP_CHECK(dl.shape != nullptr || dl.ndim == 0, kInvalidArgument, "DLPack tensor has no shape");
  const DType dtype = from_dl(dl.dtype);
  Shape shape(dl.shape, dl.shape + dl.ndim);
  const int64_t n = checked_numel(shape, dtype_size(dtype), "DLPack shape");
  if (dl.strides != nullptr && n > 1) {
    int64_t expect = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      DP_CHECK(shape[i] == 1 || dl.strides[i] == expect, kNotSupported,
               "DLPack tensor is not compact row-major (strides[" << i << "] = " << dl.strides[i]
                                                                  << ", expected " << expect
                                                                  << "); make it contiguous first");
      expect *= shape[i];
    }
  }
  // Read as a plain integer: a foreign producer may put any value there, and loading an
  // out-of-range enum is undefined behaviour in C++.
  int32_t device_type = 0;
  std::memcpy(&device_type, &dl.device.device_type, sizeof device_type);
  Device device;
  if (device_type == kDLCPU) {
    device = cpu(0);
  } else if (device_type == kDLCUDA) {
    const int count = ctx->device_count(DeviceType::kCuda);
    int found = -1;
    for (int i = 0; i < count && found < 0; ++i) {
      if (ctx->backend(DeviceType::kCuda).physical_index(i) == dl.device.device_id) found = i;
    }
    DP_CHECK(found >= 0, kDeviceMismatch,
             "DLPack tensor is on CUDA device " << dl.device.device_id
                                                << ", which this context does not use");
    device = cuda(found);
  } else {
    DP_THROW(kNotSupported,
             "DLPack device type " << device_type << " is not supported (CPU = 1, CUDA = 2)");
  }
  DP_CHECK(dl.data != nullptr || n == 0, kInvalidArgument,
           "DLPack tensor has data NULL but " << n << " elements");
  // In integers: pointer arithmetic that leaves the object (or starts from NULL) is
  // undefined, and a hostile offset may wrap the address space.
  uintptr_t addr = 0, end = 0;
  const size_t nbytes = static_cast<size_t>(n) * dtype_size(dtype);
  DP_CHECK(!__builtin_add_overflow(reinterpret_cast<uintptr_t>(dl.data), dl.byte_offset, &addr) &&
               !__builtin_add_overflow(addr, nbytes, &end),
           kInvalidArgument,
           "DLPack byte_offset " << dl.byte_offset << " puts the data past the end of memory");
  void* data = reinterpret_cast<void*>(addr);
  DP_CHECK(reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0 || n == 0, kNotSupported,
           "DLPack data is not aligned to " << dtype_size(dtype) << " bytes");
  if (device.type == DeviceType::kCuda) {
    // The producer may still be writing this memory on a stream of its own (PyTorch's
    // current stream), which this library's streams do not wait for: all work on the GPU
    // finishes first, as an export waits for this library's own.
    ctx->run(device, [&] { ctx->backend(DeviceType::kCuda).synchronize_hardware(device.index); });
  }
  // The deleter fires only once the tensor exists: if building it throws (out of memory),
  // src stays the caller's, as promised.
  auto armed = std::make_shared<bool>(false);
  auto storage = std::make_shared<Storage>(ctx, device, data, nbytes, [src, armed](void*) {
    if (*armed && src->deleter) src->deleter(src);
  });
  storage->mark_exposed();
  Tensor t(std::make_shared<TensorImpl>(std::move(storage), 0, shape, dtype));
  *armed = true;
  return t;
}

}  // namespace dp
