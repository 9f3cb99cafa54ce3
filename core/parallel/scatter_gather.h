// Scatter of a forward's inputs and gather of its outputs (torch/nn/parallel/
// scatter_gather.py), with autograd: docs/spec.md sections 4 and 7.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "parallel/stats.h"
#include "tensor/tensor.h"

namespace dp::parallel {

struct ScatterOptions {
  int dim = 0;
  // Explicit sizes along dim, one per device, summing to the batch; 0 skips a device.
  // Empty: torch.chunk's sizes.
  std::vector<int64_t> chunk_sizes;
  bool alias_cpu = true;
  // What errors call input i: "inputs[i]", or this name when set (dp_scatter's one input
  // is its argument "input", and its dim then "dim" instead of "dim (scattering ...)").
  std::string input_name;
};

struct ScatteredInputs {
  std::vector<Device> devices;              // the devices that got a chunk, in order
  std::vector<std::vector<Tensor>> inputs;  // inputs[r] for replica r
};

// Splits every input not marked in `broadcast` along dim (every split input must give
// the same number of chunks... the replica count is the smallest chunk count, as
// PyTorch's zip does); inputs marked broadcast are copied whole to each device used.
// Checks devices (check_device_list, named "devices") and chunk_sizes (check_chunk_sizes)
// first; throws kShapeMismatch for a 0-dim input to split, kInvalidArgument for
// chunk_sizes that do not sum to the batch (messages name the value).
ScatteredInputs scatter_inputs(const std::vector<Tensor>& inputs,
                               const std::vector<bool>& broadcast,
                               const std::vector<Device>& devices, const ScatterOptions& options,
                               std::shared_ptr<PhaseStats> stats);

// scatter_inputs of one input (not broadcast): its chunks, one per device used (fewer
// than devices for a small batch), as dp_scatter hands them out.
std::vector<Tensor> scatter_one(const Tensor& input, const std::vector<Device>& devices,
                                const ScatterOptions& options);

// Concatenates output i of every replica along dim onto `device` (which must exist:
// kOutOfRange naming "output_device" otherwise). All outputs of one position must have
// the same rank and equal sizes except along dim (the message names the replica and both
// shapes). If every output of a position is 0-dim and dim is 0, each is viewed as a
// 1-element vector and `warn` is told.
std::vector<Tensor> gather_outputs(const std::vector<std::vector<Tensor>>& outputs, Device device,
                                   int dim, bool alias_cpu, std::shared_ptr<PhaseStats> stats,
                                   const std::function<void(const std::string&)>& warn);

// gather_outputs of one output per tensor (tensors[r] as replica r's), as dp_gather: the
// scalar warning goes to the tensors' context's log.
Tensor gather_one(const std::vector<Tensor>& tensors, Device device, int dim);

}  // namespace dp::parallel
