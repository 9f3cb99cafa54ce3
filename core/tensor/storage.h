// Storage: one allocation on one device, shared (refcounted) by every tensor viewing it.
// The version counter lives here, so views and their base see the same count.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "device/device.h"

namespace dp {

class Backend;
class Context;

class Storage {
 public:
  using Deleter = std::function<void(void*)>;

  // Memory from `backend` on `device`; freed through it.
  Storage(std::shared_ptr<Backend> backend, std::weak_ptr<Context> ctx, Device device,
          size_t nbytes);
  // Memory owned elsewhere (borrowed: deleter empty; adopted: deleter frees it).
  Storage(std::weak_ptr<Context> ctx, Device device, void* data, size_t nbytes, Deleter deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  const std::weak_ptr<Context>& context() const { return ctx_; }

  // An alias (CPU replicas: another device's view of `owner`'s memory) shares the owner's
  // version counter, so a write through the owner is seen by whoever saved the alias for
  // backward. Keeps the owner alive.
  void share_version_of(std::shared_ptr<Storage> owner) { owner_ = std::move(owner); }
  // The storage whose memory this one aliases (null when it owns or borrows its own).
  const std::shared_ptr<Storage>& owner() const { return owner_; }
  uint64_t version() const {
    return owner_ ? owner_->version() : version_.load(std::memory_order_relaxed);
  }
  void bump_version() {
    if (owner_) {
      owner_->bump_version();
    } else {
      version_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // Counted while DataParallel replicas on other CPU devices read this memory in place
  // (alias_cpu): an in-place write would reach them, so Tensor::bump_version refuses it.
  void add_aliasing_reader() { aliasing_readers_.fetch_add(1, std::memory_order_relaxed); }
  void remove_aliasing_reader() { aliasing_readers_.fetch_sub(1, std::memory_order_relaxed); }
  bool has_aliasing_readers() const {
    return aliasing_readers_.load(std::memory_order_relaxed) > 0;
  }

 private:
  std::shared_ptr<Backend> backend_;  // null for external memory
  std::weak_ptr<Context> ctx_;
  Device device_;
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Deleter deleter_;
  std::atomic<uint64_t> version_{0};
  std::atomic<int> aliasing_readers_{0};
  std::shared_ptr<Storage> owner_;  // set on aliases: see share_version_of
};

}  // namespace dp
