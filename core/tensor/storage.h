// Storage: one allocation on one device, shared (refcounted) by every tensor viewing it.
// The version counter lives here, so views and their base see the same count.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "device/device.h"

namespace dp {

class Backend;
class Context;
struct CastCopy;  // autocast's copy of a parameter in a lower precision (ops/autocast.cc)

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

  // An alias (another device's view of `owner`'s memory) shares the owner's
  // version counter, so a write through the owner is seen by whoever saved the alias for
  // backward. Keeps the owner alive.
  void share_version_of(std::shared_ptr<Storage> owner) { owner_ = std::move(owner); }
  // The storage whose memory this one aliases (null when it owns or borrows its own).
  const std::shared_ptr<Storage>& owner() const { return owner_; }
  // The storage whose memory this is: the end of the owner() chain (this one when it owns
  // or borrows its memory).
  Storage& root() { return owner_ ? owner_->root() : *this; }
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

  // Marks the memory as writable without the version counter seeing it: the caller's own
  // memory (borrowed, or imported through DLPack), an address handed out (dp_tensor_data) or
  // a DLPack export. Marks the root. Copies that stay valid while the version is unchanged
  // (autocast's cast copies) are never kept of such memory.
  void mark_exposed() { root().exposed_.store(true, std::memory_order_relaxed); }
  bool exposed() { return root().exposed_.load(std::memory_order_relaxed); }

  // Autocast's lower-precision copy of this memory, or of a part of it (ops/autocast.cc);
  // null when there is none. Read and written under cast_copy_mutex(), on the root only.
  std::shared_ptr<CastCopy>& cast_copy() { return cast_copy_; }
  std::mutex& cast_copy_mutex() { return cast_copy_mu_; }

  // Blocks in-place writes to this memory until the matching unblock_writes (blocks nest):
  // Tensor::bump_version refuses them meanwhile. `why` is static text, the same for every
  // block of one storage, that completes the refusal "cannot write in place to a tensor
  // on <device> ".
  void block_writes(const char* why) {
    block_reason_.store(why, std::memory_order_relaxed);
    write_blocks_.fetch_add(1, std::memory_order_release);
  }
  void unblock_writes() { write_blocks_.fetch_sub(1, std::memory_order_relaxed); }
  // Why writes are blocked now; null when they are not.
  const char* writes_blocked_because() const {
    return write_blocks_.load(std::memory_order_acquire) > 0
               ? block_reason_.load(std::memory_order_relaxed)
               : nullptr;
  }

 private:
  std::shared_ptr<Backend> backend_;  // null for external memory
  std::weak_ptr<Context> ctx_;
  Device device_;
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  Deleter deleter_;
  std::atomic<uint64_t> version_{0};
  std::atomic<int> write_blocks_{0};
  std::atomic<const char*> block_reason_{nullptr};
  std::shared_ptr<Storage> owner_;  // set on aliases: see share_version_of
  std::atomic<bool> exposed_{false};
  std::mutex cast_copy_mu_;
  std::shared_ptr<CastCopy> cast_copy_;
};

}  // namespace dp
