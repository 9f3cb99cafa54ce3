// Moving tensors between devices for DataParallel, without autograd: coalesced broadcast,
// reduce-add, scatter and gather. As torch/nn/parallel/comm.py. The autograd wrappers
// (scatter_gather.h, replicate.h) build on these.
//
// CPU devices share the host's memory. Where nothing writes through it, a tensor can
// reach another CPU device as an alias instead of a copy; such aliases are marked
// read-only, so an in-place write through one fails instead of reaching the other device.
//
// The stages above check the arguments (parallel/validate.h) before they get here: a
// device list is not empty and names devices that exist, scatter's x is not 0-dim.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace dp::comm {

constexpr size_t kDefaultBucketBytes = size_t{10} << 20;  // PyTorch's 10 MiB buckets

// t, seen as a tensor of CPU device `device` (t must be on a CPU device): no copy; the
// result is read-only and keeps t's memory alive.
Tensor alias_on(const Tensor& t, Device device);

// t (a view into a bucket of broadcast_coalesced) with a version counter of its own: the
// same memory, kept alive, but a write through another view of the bucket no longer
// counts as a write to t. Replicas' state buffers take it, so that buffer sync can tell
// which of them a forward wrote (BatchNorm's statistics beside a constant buffer).
Tensor with_own_version(const Tensor& t);

// Whether a broadcast from `src` with alias_cpu gives some other device of `devices` an
// alias of src's memory (both CPU devices) rather than a copy.
bool aliased_by_another_device(Device src, const std::vector<Device>& devices, bool alias_cpu);

// Copies of `tensors` (all on one device) on each of `devices`. Tensors are packed into
// buckets of about bucket_bytes, one transfer per bucket and device (an NCCL broadcast
// when the backend has one); the results are views into the buckets. With alias_cpu,
// CPU-to-CPU results are read-only aliases instead. Result[d][j] is tensors[j] on
// devices[d]; for the tensors' own device the tensors themselves are returned.
std::vector<std::vector<Tensor>> broadcast_coalesced(const std::vector<Tensor>& tensors,
                                                     const std::vector<Device>& devices,
                                                     size_t bucket_bytes, bool alias_cpu);

// The elementwise sum of `inputs` (same shape and dtype, one per device) on `device`.
// Undefined inputs are skipped; all undefined gives an undefined result.
Tensor reduce_add(const std::vector<Tensor>& inputs, Device device);

// reduce_add for many tensors at once: result[j] = sum over d of per_device[d][j].
std::vector<Tensor> reduce_add_coalesced(const std::vector<std::vector<Tensor>>& per_device,
                                         Device device);

// torch.chunk's sizes: ceil(B / n) each, as many as needed (fewer than n when B is small;
// n empty chunks when B is 0).
std::vector<int64_t> chunk_sizes(int64_t size, int64_t n);

// Splits x along dim into chunk_sizes[i] rows for devices[i] (zero-size chunks skip
// their device). Chunks on x's own device are views (along dim 0); with alias_cpu,
// chunks for other CPU devices are read-only aliases; otherwise copies.
std::vector<Tensor> scatter(const Tensor& x, const std::vector<Device>& devices,
                            const std::vector<int64_t>& chunk_sizes, int dim, bool alias_cpu);

// Concatenates along dim onto `device`.
Tensor gather(const std::vector<Tensor>& tensors, Device device, int dim);

}  // namespace dp::comm
