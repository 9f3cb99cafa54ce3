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

// Runs fn(begin, end, cpu_index) over slices that cover [0, n), each slice on the worker
// of CPU device `cpu_index` (fn must use that device's kernels only). Slices hold at least
// `min_slice` elements and start on multiples of `align`. The calling thread, which must
// be CPU device `self`'s worker, runs the first slice; the others are offered to the
// other CPU workers, and any a busy worker has not started when the caller is done, the
// caller takes back and runs itself. So the call never waits on a task that has not
// begun, and a worker calling it cannot deadlock with another. Rethrows the first slice's
// exception after every slice has finished.
void cpu_parallel_for(Context& ctx, int self, int64_t n, int64_t min_slice, int64_t align,
                      const std::function<void(int64_t, int64_t, int)>& fn);

}  // namespace dp
