#include "device/cpu_parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <vector>

#include "device/context.h"
#include "device/trace.h"
#include "device/worker.h"

namespace dp {

namespace {

// Shared by the caller and the offered tasks; a task that runs after the caller has
// taken its slice back touches only `claimed`, so it outlives nothing it needs.
struct Shared {
  explicit Shared(int offered) : done(offered), claimed(offered), errors(offered) {}
  Latch done;                              // counts slices 1..k finished, by anyone
  std::vector<std::atomic<bool>> claimed;  // slice 1 + i started by somebody
  std::vector<std::exception_ptr> errors;
};

}  // namespace

std::vector<int64_t> slice_bounds(int64_t n, int parts, int64_t align) {
  std::vector<int64_t> bounds(static_cast<size_t>(parts) + 1);
  for (int k = 0; k <= parts; ++k) bounds[k] = k == parts ? n : n * k / parts / align * align;
  return bounds;
}

void cpu_parallel_for(Context& ctx, int self, int64_t n, int64_t min_slice, int64_t align,
                      const std::function<void(int64_t, int64_t, int)>& fn) {
  const int cpus = ctx.device_count(DeviceType::kCpu);
  const int64_t by_size = min_slice > 0 ? n / min_slice : n;
  const int parts = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cpus, by_size)));
  if (parts == 1) {
    fn(0, n, self);
    return;
  }
  const std::vector<int64_t> bounds = slice_bounds(n, parts, align);
  // Slice 0 is the caller's; slice k > 0 goes to the k-th CPU device other than self.
  std::vector<int> owner(parts);
  owner[0] = self;
  for (int k = 1, d = 0; k < parts; ++k, ++d) {
    if (d == self) ++d;
    owner[k] = d;
  }
  auto shared = std::make_shared<Shared>(parts - 1);
  auto run_slice = [&fn, &bounds](Shared& s, int k, int device) {
    try {
      fn(bounds[k], bounds[k + 1], device);
    } catch (...) {
      s.errors[k - 1] = std::current_exception();
    }
    s.done.count_down();
  };
  for (int k = 1; k < parts; ++k) {
    // The task holds the state; it reaches fn only if it claims its slice, and then the
    // caller is still waiting on `done`.
    // Offering is best effort: a slice whose post failed is still unclaimed below.
    try {
      ctx.worker(Device{DeviceType::kCpu, owner[k]})
          .post([shared, k, run_slice, device = owner[k]] {
            if (!shared->claimed[k - 1].exchange(true, std::memory_order_acq_rel)) {
              trace::Span span("shared slice");
              run_slice(*shared, k, device);
            }
          });
    } catch (...) {
    }
  }
  std::exception_ptr first;
  try {
    fn(bounds[0], bounds[1], self);
  } catch (...) {
    first = std::current_exception();
  }
  for (int k = 1; k < parts; ++k) {
    if (!shared->claimed[k - 1].exchange(true, std::memory_order_acq_rel)) {
      run_slice(*shared, k, self);
    }
  }
  shared->done.wait();
  if (!first) {
    for (const std::exception_ptr& e : shared->errors) {
      if (e) {
        first = e;
        break;
      }
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace dp
