// Tensor: a refcounted handle to a TensorImpl, which is a contiguous row-major view
// (offset + shape) into a Storage, plus optional autograd metadata. This layer builds on
// device/ and context/ only: the autograd metadata is an opaque pointer here, and its
// accessors are implemented in autograd/.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device/backend.h"
#include "device/device.h"
#include "device/dtype.h"
#include "tensor/shape.h"
#include "tensor/storage.h"

namespace dp {

class Context;
class Node;
struct AutogradMeta;

// Frees autograd metadata where its type is complete (autograd/autograd_meta.cc).
struct AutogradMetaDeleter {
  void operator()(AutogradMeta* meta) const;
};

class TensorImpl {
 public:
  TensorImpl(std::shared_ptr<Storage> storage, int64_t offset, Shape shape, DType dtype);
  ~TensorImpl();

  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  DType dtype;
  // Non-null on a tensor through which in-place writes are refused (such as an alias of
  // memory that another device's tensor owns): static text, from the layer that made the
  // tensor, that completes the refusal "cannot write in place to a tensor on <device> ".
  const char* read_only_reason = nullptr;
  std::unique_ptr<AutogradMeta, AutogradMetaDeleter> autograd;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // --- creation (memory comes from the device's backend; contents as named) ---
  static Tensor empty(const std::shared_ptr<Context>& ctx, Shape shape, DType dtype, Device device);

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  const Shape& shape() const { return impl_->shape; }
  int ndim() const { return static_cast<int>(impl_->shape.size()); }
  int64_t size(int dim) const;  // dim may be negative
  int64_t numel() const { return numel_of(impl_->shape); }
  DType dtype() const { return impl_->dtype; }
  size_t element_size() const { return dtype_size(impl_->dtype); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  Device device() const { return impl_->storage->device(); }
  void* data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * element_size();
  }
  template <class T>
  T* data_as() const {
    return static_cast<T*>(data());
  }
  // The owning context; throws kState if it was released.
  std::shared_ptr<Context> context() const;

  uint64_t version() const { return impl_->storage->version(); }
  // Marks an in-place write; throws kState where it is refused (check_writable).
  void bump_version() const;
  // Throws kState, as bump_version would, where an in-place write is refused: a read-only
  // tensor, or memory whose writes are blocked (Storage::block_writes).
  void check_writable() const;
  bool read_only() const { return impl_->read_only_reason != nullptr; }

  // The kernel's view of this tensor.
  KView kview() const;
  // The kernel's view of elements [begin, end) (row-major order), as a 1-D tensor.
  KView kview_slice(int64_t begin, int64_t end) const;

  // --- views without autograd (same storage) ---
  Tensor view_as_shape(const Shape& shape) const;  // numel must match
  Tensor rows(int64_t begin, int64_t end) const;   // slice of dim 0
  Tensor detach() const;                           // drops autograd metadata
  // The same memory seen as a tensor of CPU device `device` (this tensor on a CPU device
  // too): on its own device, detach(); else a borrowed storage on `device` that shares
  // this memory's version counter and keeps it alive. No autograd metadata; read-only
  // where this tensor is.
  Tensor on_cpu_device(Device device) const;

  // --- autograd metadata (implemented in autograd/autograd_meta.cc) ---
  bool requires_grad() const;
  void set_requires_grad(bool requires_grad);
  bool is_leaf() const;  // no grad_fn
  const std::shared_ptr<Node>& grad_fn() const;
  uint32_t output_nr() const;
  Tensor grad() const;
  void set_grad(const Tensor& grad);

  bool same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace dp
