#include "ops/autocast.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include "autograd/autocast_mode.h"
#include "context/context.h"
#include "ops/ops.h"

namespace dp {

// A kept copy (ops/autocast.h), on the storage that owns the memory it was cast from.
struct CastCopy {
  static constexpr uint64_t kOutOfDate = std::numeric_limits<uint64_t>::max();
  const void* data;  // the part of the memory cast: its first element and count
  int64_t numel;
  DType dtype;       // the copy's
  uint64_t version;  // of the memory when the copy was made, or kOutOfDate
  Tensor copy;       // no history; handed out through to_dtype_from only
};

namespace ops::autocast {

namespace {

bool keeps_copies() {
  static const bool keep = [] {
    const char* env = std::getenv("DP_AUTOCAST_CACHE");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  return keep;
}

// t in `to` from its memory's kept copy, made now when there is none that is current; an
// undefined tensor when none is kept for t: t is not a CPU parameter or an alias of one's
// kept part.
Tensor kept_cast(const Tensor& t, DType to) {
  if (!keeps_copies() || !t.device().is_cpu()) return Tensor();
  Storage& root = t.impl()->storage->root();
  if (root.exposed()) return Tensor();
  uint64_t version;
  {
    std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
    const std::shared_ptr<CastCopy>& kept = root.cast_copy();
    const bool same_part =
        kept && kept->data == t.data() && kept->numel == t.numel() && kept->dtype == to;
    if (same_part && kept->version == root.version()) return kept->copy;
    if (!same_part && !(t.is_leaf() && t.requires_grad())) return Tensor();
    // Read before the cast, so that a write during it leaves the copy out of date.
    version = root.version();
  }
  // Not under the lock: the cast may wait for a device worker, whose task may be asking
  // for this very lock. Two replicas that miss together both cast; either copy will do.
  Tensor copy = to_dtype(t.detach(), to);
  auto made = std::make_shared<CastCopy>(CastCopy{t.data(), t.numel(), to, version, copy});
  std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
  root.cast_copy() = std::move(made);
  return copy;
}

}  // namespace

Tensor lower(const Tensor& t) {
  if (!AutocastMode::enabled() || !t.defined() || t.dtype() != DType::kFloat32) return t;
  t.context()->note_autocast(t.device());
  const DType to = AutocastMode::dtype();
  if (Tensor copy = kept_cast(t, to); copy.defined()) return to_dtype_from(t, copy);
  return to_dtype(t, to);
}

Tensor copy_to_refresh(const Tensor& t) {
  if (!t.defined() || !t.device().is_cpu()) return Tensor();
  Storage& root = t.impl()->storage->root();
  std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
  std::shared_ptr<CastCopy>& kept = root.cast_copy();
  if (!kept) return Tensor();
  const bool whole = kept->data == t.data() && kept->numel == t.numel();
  const bool unshared =
      kept->copy.impl_ptr().use_count() == 1 && kept->copy.impl()->storage.use_count() == 1;
  if (!whole || !unshared || root.exposed()) {
    kept.reset();
    return Tensor();
  }
  kept->version = CastCopy::kOutOfDate;
  return kept->copy;
}

void refreshed(const Tensor& t, const Tensor& copy) {
  Storage& root = t.impl()->storage->root();
  std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
  std::shared_ptr<CastCopy>& kept = root.cast_copy();
  if (kept && kept->copy.same(copy)) kept->version = root.version();
}

Tensor fp32(const Tensor& t) {
  if (!AutocastMode::enabled() || !t.defined() || t.dtype() != DType::kBFloat16) return t;
  return to_dtype(t, DType::kFloat32);
}

void promote(Tensor& a, Tensor& b) {
  if (!AutocastMode::enabled() || !a.defined() || !b.defined() || a.dtype() == b.dtype()) return;
  // A bfloat16 operand takes the other's float32 or float64; any other mix is left to the
  // op's own check, which names it.
  if (a.dtype() == DType::kBFloat16 && is_floating(b.dtype())) {
    a = to_dtype(a, b.dtype());
  } else if (b.dtype() == DType::kBFloat16 && is_floating(a.dtype())) {
    b = to_dtype(b, a.dtype());
  }
}

}  // namespace ops::autocast

}  // namespace dp
