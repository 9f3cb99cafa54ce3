#include "tensor/storage.h"

#include "device/backend.h"

namespace dp {

Storage::Storage(std::shared_ptr<Backend> backend, std::weak_ptr<Context> ctx, Device device,
                 size_t nbytes)
    : backend_(std::move(backend)), ctx_(std::move(ctx)), device_(device), nbytes_(nbytes) {
  data_ = backend_->allocate(device.index, nbytes);
}

Storage::Storage(std::weak_ptr<Context> ctx, Device device, void* data, size_t nbytes,
                 Deleter deleter)
    : ctx_(std::move(ctx)),
      device_(device),
      data_(data),
      nbytes_(nbytes),
      deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (backend_) {
    backend_->deallocate(device_.index, data_, nbytes_);
  } else if (deleter_) {
    deleter_(data_);
  }
}

}  // namespace dp
