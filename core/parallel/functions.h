// The DataParallel pipeline's autograd functions, as torch/nn/parallel/_functions.py:
// each moves tensors between devices in forward and records a node that moves the
// gradients back, so the ordinary backward() call runs DataParallel's backward.
#pragma once

#include <memory>
#include <vector>

#include "parallel/stats.h"
#include "tensor/tensor.h"

namespace dp::parallel {

// Broadcast: tensors (on one device) to every device of `devices`. Backward: the
// gradients from every device are summed (reduce_add) onto the tensors' device. The
// returned tensors of the source device are the inputs themselves (not recorded: their
// gradients reach the leaves directly), so the sum over devices is delivered whole.
// result[d][j] is tensors[j] on devices[d]. reduce_dtype kBFloat16: the other devices'
// float32 gradients are rounded to bfloat16 before they move and are summed, and the sum
// is widened back (PyTorch DDP's bf16_compress_hook); kFloat32 (the default) leaves them.
std::vector<std::vector<Tensor>> broadcast(const std::vector<Tensor>& tensors,
                                           const std::vector<Device>& devices, size_t bucket_bytes,
                                           bool alias_cpu, std::shared_ptr<PhaseStats> stats,
                                           DType reduce_dtype = DType::kFloat32);

// Scatter: x split along dim into sizes[i] for devices[i]. Backward: the gradients are
// gathered back onto x's device (zeros for chunks that got none).
std::vector<Tensor> scatter(const Tensor& x, const std::vector<Device>& devices,
                            const std::vector<int64_t>& sizes, int dim, bool alias_cpu);

// Gather: tensors (one per device) concatenated along dim on `device`. Backward: the
// gradient is split with the forward's sizes and sent back to each tensor's device.
Tensor gather(const std::vector<Tensor>& tensors, Device device, int dim, bool alias_cpu,
              std::shared_ptr<PhaseStats> stats);

// `tensors` (on one device) "broadcast" to that device alone, as PyTorch's Broadcast to a
// single device: aliases of the same memory, recorded behind one BroadcastBackward, so
// that once backward reaches any of them every one that requires grad gets a gradient,
// zeros where unused. A lone replica's parameters take it (see lone_replica).
std::vector<Tensor> broadcast_to_own_device(const std::vector<Tensor>& tensors,
                                            std::shared_ptr<PhaseStats> stats);

}  // namespace dp::parallel
