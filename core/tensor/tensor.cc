#include "tensor/tensor.h"

#include "context/context.h"
#include "error.h"

namespace dp {

TensorImpl::TensorImpl(std::shared_ptr<Storage> s, int64_t off, Shape sh, DType dt)
    : storage(std::move(s)), offset(off), shape(std::move(sh)), dtype(dt) {}

TensorImpl::~TensorImpl() = default;

Tensor Tensor::empty(const std::shared_ptr<Context>& ctx, Shape shape, DType dtype, Device device) {
  const int64_t n = checked_numel(shape, dtype_size(dtype));
  auto storage = std::make_shared<Storage>(ctx->backend_ptr(device.type), ctx, device,
                                           static_cast<size_t>(n) * dtype_size(dtype));
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), 0, std::move(shape), dtype));
}

int64_t Tensor::size(int dim) const {
  return impl_->shape[wrap_dim(dim, ndim(), "dim")];
}

std::shared_ptr<Context> Tensor::context() const {
  auto ctx = impl_->storage->context().lock();
  DP_CHECK(ctx != nullptr, kState,
           "the context of this tensor (on " << device().str() << ") was released");
  return ctx;
}

void Tensor::check_writable() const {
  const char* refusal = impl_->read_only_reason;
  if (refusal == nullptr) refusal = impl_->storage->writes_blocked_because();
  DP_CHECK(refusal == nullptr, kState,
           "cannot write in place to a tensor on " << device().str() << " " << refusal);
}

void Tensor::bump_version() const {
  check_writable();
  impl_->storage->bump_version();
}

KView Tensor::kview() const {
  KView v;
  v.data = data();
  v.dtype = dtype();
  v.ndim = ndim();
  for (int i = 0; i < v.ndim; ++i) v.shape[i] = impl_->shape[i];
  return v;
}

KView Tensor::kview_slice(int64_t begin, int64_t end) const {
  KView v;
  v.data = static_cast<char*>(data()) + begin * static_cast<int64_t>(element_size());
  v.dtype = dtype();
  v.ndim = 1;
  v.shape[0] = end - begin;
  return v;
}

Tensor Tensor::view_as_shape(const Shape& shape) const {
  DP_CHECK(
      numel_of(shape) == numel(), kShapeMismatch,
      "cannot view a tensor of shape " << shape_str(this->shape()) << " as " << shape_str(shape));
  auto impl = std::make_shared<TensorImpl>(impl_->storage, impl_->offset, shape, impl_->dtype);
  impl->read_only_reason = impl_->read_only_reason;
  return Tensor(std::move(impl));
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  DP_CHECK(
      ndim() >= 1 && begin >= 0 && begin <= end && end <= impl_->shape[0], kOutOfRange,
      "rows [" << begin << ", " << end << ") of a tensor of shape " << shape_str(impl_->shape));
  Shape s = impl_->shape;
  s[0] = end - begin;
  const int64_t row = ndim() >= 1 && impl_->shape[0] > 0 ? numel() / impl_->shape[0] : 0;
  auto impl =
      std::make_shared<TensorImpl>(impl_->storage, impl_->offset + begin * row, s, impl_->dtype);
  impl->read_only_reason = impl_->read_only_reason;
  return Tensor(std::move(impl));
}

Tensor Tensor::on_cpu_device(Device device) const {
  DP_CHECK(
      this->device().is_cpu() && device.is_cpu(), kInternal,
      "on_cpu_device: " << this->device().str() << " -> " << device.str() << " is not CPU to CPU");
  if (device == this->device()) return detach();
  auto storage = std::make_shared<Storage>(impl_->storage->context(), device, data(), nbytes(),
                                           Storage::Deleter{});  // borrowed
  storage->share_version_of(impl_->storage);
  auto impl = std::make_shared<TensorImpl>(std::move(storage), 0, impl_->shape, impl_->dtype);
  impl->read_only_reason = impl_->read_only_reason;
  return Tensor(std::move(impl));
}

Tensor Tensor::detach() const {
  auto impl =
      std::make_shared<TensorImpl>(impl_->storage, impl_->offset, impl_->shape, impl_->dtype);
  impl->read_only_reason = impl_->read_only_reason;
  return Tensor(std::move(impl));
}

}  // namespace dp
