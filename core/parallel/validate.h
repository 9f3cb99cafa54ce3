// The DataParallel pipeline's argument checks. Each public entry checks its arguments with
// these: DataParallel's constructor, data_parallel() (which builds one), and each stage
// (scatter_inputs, replicate, parallel_apply, gather_outputs), which is an entry too: the
// C API's dp_scatter, dp_replicate, dp_parallel_apply and dp_gather call them on their
// own, so inside the wrapper's forward a stage checks its already checked device list
// again (a few comparisons per device). The layers below the stages (comm, functions)
// take checked arguments and check none of this again. Nothing else checks device lists,
// chunk sizes or 0-dim inputs, so each check has one message and one error code.
//
// The error-code rule (also written in dataparallel.h): a device index past the devices
// that exist (or negative) is kOutOfRange; a malformed list (empty, a device type that is
// neither CPU nor CUDA, a repeat, mixed types, a chunk_sizes of the wrong length or with a
// negative entry) is kInvalidArgument.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "context/context.h"
#include "tensor/tensor.h"

namespace dp::parallel {

// What a device list must be beyond a non-empty list of existing devices.
struct DeviceListRules {
  bool distinct = false;  // no device twice (DataParallel's device_ids)
  bool one_type = false;  // every device of devices[0]'s type (DataParallel's device_ids)
};

// Throws unless `devices` is non-empty and each entry is a device of ctx. Messages name
// the list and the entry: "device_ids[1] = cpu:7 but only 2 CPU devices exist",
// "devices is empty (no devices)", "device_ids[1] = cpu:0 repeats device_ids[0]". With ctx
// null (a scatter of no inputs holds no tensor to tell the context) only the list's form
// is checked: not empty, and the rules.
void check_device_list(const Context* ctx, const std::vector<Device>& devices, const char* name,
                       DeviceListRules rules = {});

// chunk_sizes for n_devices devices: empty (torch.chunk's sizes), or one size per device,
// none negative, summing within int64 (kInvalidArgument naming the entry). Returns the sum
// (0 when empty).
int64_t check_chunk_sizes(const std::vector<int64_t>& chunk_sizes, size_t n_devices);

// x, named `name` in the message, can be split along a dimension: it is not 0-dim
// (kShapeMismatch; a 0-dim input reaches every device only when marked broadcast).
void check_splittable(const Tensor& x, const std::string& name);

}  // namespace dp::parallel
