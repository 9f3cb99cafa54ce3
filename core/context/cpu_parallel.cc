#include "context/cpu_parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <vector>

#include "context/context.h"
#include "device/trace.h"
#include "device/worker.h"

namespace dp {

namespace {

// Chunks per CPU device: enough that a worker which starts late (asleep, or preempted)
// still finds work left, and that one which starts early takes more than its share.
constexpr int kChunksPerCpu = 4;

// Shared by the caller and the offered tasks. A task that runs after every chunk was
// claimed touches only `next`, so it outlives nothing it needs.
struct Shared {
  Shared(std::vector<int64_t> b, int first_offered)
      : bounds(std::move(b)),
        chunks(static_cast<int>(bounds.size()) - 1),
        next(first_offered),
        done(chunks),
        errors(static_cast<size_t>(chunks)) {}
  const std::vector<int64_t> bounds;
  const int chunks;
  std::atomic<int> next;  // the next unclaimed chunk (chunk 0 is a worker caller's own)
  Latch done;             // counts chunks finished, by anyone
  std::vector<std::exception_ptr> errors;
};

// Runs chunk k, then claims and runs chunks until none is left.
void run_chunks(Shared& s, int k, int device,
                const std::function<void(int64_t, int64_t, int)>& fn) {
  for (; k < s.chunks; k = s.next.fetch_add(1, std::memory_order_relaxed)) {
    try {
      fn(s.bounds[k], s.bounds[k + 1], device);
    } catch (...) {
      s.errors[k] = std::current_exception();
    }
    s.done.count_down();
  }
}

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
  const int chunks = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(int64_t{cpus} * kChunksPerCpu, by_size)));
  const bool on_a_worker = self != kNotOnACpuWorker;
  if (on_a_worker && (cpus == 1 || chunks == 1)) {
    fn(0, n, self);
    return;
  }
  auto shared = std::make_shared<Shared>(slice_bounds(n, chunks, align), on_a_worker ? 1 : 0);
  // Offer to the other CPU devices (to all of them from outside), as many as there are
  // chunks beyond the caller's. Offering is best effort: chunks nobody else claims, a
  // worker caller runs; from outside, a failed offer is an error.
  const int helpers = std::min(on_a_worker ? cpus - 1 : cpus, on_a_worker ? chunks - 1 : chunks);
  int offered = 0;
  std::exception_ptr post_error;
  for (int h = 0, d = 0; h < helpers; ++h, ++d) {
    if (d == self) ++d;
    try {
      // The task reaches fn only if it claims a chunk, and then the caller is still
      // waiting on `done`.
      ctx.worker(Device{DeviceType::kCpu, d}).post([shared, d, &fn] {
        const int k = shared->next.fetch_add(1, std::memory_order_relaxed);
        if (k < shared->chunks) {
          trace::Span span("shared slice");
          run_chunks(*shared, k, d, fn);
        }
      });
      ++offered;
    } catch (...) {
      if (!post_error) post_error = std::current_exception();
    }
  }
  // From outside, with no worker reached, nobody would run a chunk.
  if (!on_a_worker && offered == 0) std::rethrow_exception(post_error);
  if (on_a_worker) run_chunks(*shared, 0, self, fn);
  shared->done.wait();
  // Taken out of the shared state: a late offered task may be its last owner, and must
  // not be the one that frees an exception on a worker.
  std::exception_ptr first;
  for (std::exception_ptr& e : shared->errors) {
    if (e && !first) first = e;
    e = nullptr;
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace dp
