// Work sharing across the CPU devices' workers for one large memory-bound kernel (a
// gradient sum, an optimizer update): CPU devices share memory, so a worker that would
// otherwise run such a kernel alone while the others wait can hand slices of it out.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace dp {

class Context;

// Bounds of `parts` slices covering [0, n): slice k is [b[k], b[k + 1]). Inner bounds are
// multiples of `align` (elements), so slices of a 64-byte-aligned tensor never share a
// cache line when align is 64 bytes' worth of elements.
std::vector<int64_t> slice_bounds(int64_t n, int parts, int64_t align);

// Runs fn(begin, end, cpu_index) over chunks that cover [0, n), each chunk on the worker
// of CPU device `cpu_index` (fn must use that device's kernels only). There are at most
// n / min_slice chunks and four per CPU device; inner bounds are multiples of `align`. The calling
// thread, which must be CPU device `self`'s worker, runs the first chunk; the other CPU workers are
// offered the rest, and whoever is free claims the next chunk, the caller included. So the call
// never waits on a task that has not begun (a worker that is busy, or slow to wake, leaves its
// chunks to the others), and a worker calling it cannot deadlock with another. Rethrows the
// exception of the lowest chunk that failed, after every chunk has finished.
//
// With self = kNotOnACpuWorker (a thread that is no CPU worker, such as the user's), every
// CPU worker is offered chunks and the caller only waits for them; it must not be called
// so from a worker's task (that worker would wait on itself).
constexpr int kNotOnACpuWorker = -1;
void cpu_parallel_for(Context& ctx, int self, int64_t n, int64_t min_slice, int64_t align,
                      const std::function<void(int64_t, int64_t, int)>& fn);

}  // namespace dp
