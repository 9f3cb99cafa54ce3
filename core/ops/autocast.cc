#include "ops/autocast.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "autograd/autocast_mode.h"
#include "autograd/grad_mode.h"
#include "context/context.h"
#include "device/trace.h"
#include "ops/ops.h"

namespace dp {

namespace ops::autocast {

namespace {

bool keeps_copies() {
  static const bool keep = [] {
    const char* env = std::getenv("DP_AUTOCAST_CACHE");
    return !(env && std::strcmp(env, "0") == 0);
  }();
  return keep;
}

// A cast that autocast inserts, as a span of the trace ("autocast cast", its argument the
// element count): a kept copy shows as the casts of a parameter's size that stop after
// the first step.
Tensor traced_cast(const Tensor& t, DType to) {
  trace::Span span("autocast cast", t.numel());
  return to_dtype(t, to);
}

// t in `to` from its memory's kept copy (viewed in t's shape: a reshaped view of a
// parameter shares it), made now when there is none that is current; an undefined tensor
// when none is kept for t: t is neither a CPU leaf that requires grad nor another view of
// the kept part's memory (an alias on another CPU device, a reshape).
Tensor kept_cast(const Tensor& t, DType to) {
  if (!keeps_copies() || !t.device().is_cpu()) return Tensor();
  Storage& root = t.impl()->storage->root();
  if (root.exposed()) return Tensor();
  uint64_t version;
  {
    std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
    const std::shared_ptr<CastCopy>& kept = root.cast_copy();
    const bool same_part = kept && kept->of(t) && kept->dtype == to;
    if (same_part && kept->version == root.version()) {
      kept->used = true;
      return kept->copy.view_as_shape(t.shape());
    }
    if (!same_part && !(t.is_leaf() && t.requires_grad())) return Tensor();
    // Read before the cast and compared after it: a write that bumps the counter during
    // the cast, or once its values are in place (as an optimizer step does, after the
    // update), leaves a copy made meanwhile out of date. A write already under way when
    // the cast begins (bumped, still writing) is a race, as any read during a write.
    version = root.version();
  }
  // Not under the lock: the cast may wait for a device worker, whose task may be asking
  // for this very lock. Two replicas that miss together both cast; either copy will do.
  Tensor copy = traced_cast(t.detach(), to);
  // A write that began during the cast: the copy is this call's only.
  if (root.version() != version) return copy;
  auto made = std::make_shared<CastCopy>(CastCopy{t.data(), t.numel(), to, version, true, copy});
  std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
  std::shared_ptr<CastCopy>& kept = root.cast_copy();
  // A current copy made meanwhile (by another replica, or a step's refresh) stays.
  if (!(kept && kept->version == root.version())) kept = std::move(made);
  return copy;
}

}  // namespace

Tensor lower(const Tensor& t) {
  if (!AutocastMode::enabled() || !t.defined() || t.dtype() != DType::kFloat32) return t;
  t.context()->note_autocast(t.device());
  const DType to = AutocastMode::dtype();
  if (Tensor copy = kept_cast(t, to); copy.defined()) return to_dtype_from(t, copy);
  return traced_cast(t, to);
}

Tensor lower_untracked(const Tensor& t) {
  GradModeGuard untracked(false);
  return lower(t);
}

Tensor copy_to_refresh(const Tensor& t) {
  if (!t.defined() || !t.device().is_cpu()) return Tensor();
  Storage& root = t.impl()->storage->root();
  std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
  std::shared_ptr<CastCopy>& kept = root.cast_copy();
  if (!kept) return Tensor();
  const bool unshared =
      kept->copy.impl_ptr().use_count() == 1 && kept->copy.impl()->storage.use_count() == 1;
  // A copy that no cast used since the last refresh (autocast no longer on, the module no
  // longer run) is let go rather than written at every step.
  if (!kept->of(t) || !unshared || !kept->used || root.exposed()) {
    kept.reset();
    return Tensor();
  }
  kept->version = CastCopy::kOutOfDate;
  kept->used = false;
  return kept->copy;
}

void refreshed(const Tensor& t, const Tensor& copy, uint64_t version) {
  Storage& root = t.impl()->storage->root();
  std::lock_guard<std::mutex> lock(root.cast_copy_mutex());
  std::shared_ptr<CastCopy>& kept = root.cast_copy();
  if (kept && kept->copy.same(copy) && root.version() == version) kept->version = version;
}

Tensor fp32(const Tensor& t) {
  if (!AutocastMode::enabled() || !t.defined() || t.dtype() != DType::kBFloat16) return t;
  return traced_cast(t, DType::kFloat32);
}

void promote(Tensor& a, Tensor& b) {
  if (!AutocastMode::enabled() || !a.defined() || !b.defined() || a.dtype() == b.dtype()) return;
  // A bfloat16 operand takes the other's float32 or float64; any other mix is left to the
  // op's own check, which names it.
  if (a.dtype() == DType::kBFloat16 && is_floating(b.dtype())) {
    a = traced_cast(a, b.dtype());
  } else if (b.dtype() == DType::kBFloat16 && is_floating(a.dtype())) {
    b = traced_cast(b, a.dtype());
  }
}

}  // namespace ops::autocast

}  // namespace dp
