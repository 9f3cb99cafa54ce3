// Plain copies between tensors on any devices: no argument checks beyond what the copy
// needs, no autograd history. The ops (copy_, to_device, clone, cat, split) and the
// autograd engine build on them.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace dp {

// Copies `rows` rows of `row_bytes` between tensors on any devices: from src's data at
// byte offset src_offset (rows src_pitch apart) to dst's at dst_offset (dst_pitch apart).
// Runs on the current thread when it is either device's worker (or both are CPU
// devices), so a device task never waits on another worker.
void device_copy_2d(const Tensor& dst, size_t dst_offset, size_t dst_pitch, const Tensor& src,
                    size_t src_offset, size_t src_pitch, size_t row_bytes, size_t rows);

// Copies all of src's bytes into dst (same byte size), on any devices.
void copy_bytes(const Tensor& dst, const Tensor& src);

// A new tensor on `device` holding a copy of t (t's shape and dtype). Throws kOutOfRange
// when the device does not exist.
Tensor copy_to_device(const Tensor& t, Device device);

// Runs tasks[i] for work that device devices[i] takes part in (copies to or from it). When
// two or more distinct non-CPU devices take part and this thread is no worker, each task
// runs on its device's worker, all at once, so the copies to several GPUs overlap;
// otherwise they run here in order. The first failure (by index) is rethrown.
void run_per_device(const Context& ctx, const std::vector<Device>& devices,
                    const std::vector<std::function<void()>>& tasks);

}  // namespace dp
