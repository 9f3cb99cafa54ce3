#include "parallel/validate.h"

#include "error.h"

namespace dp::parallel {

void check_device_list(const Context* ctx, const std::vector<Device>& devices, const char* name,
                       DeviceListRules rules) {
  DP_CHECK(!devices.empty(), kInvalidArgument, name << " is empty (no devices)");
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string what = std::string(name) + "[" + std::to_string(i) + "]";
    if (ctx) ctx->check_device(devices[i], what.c_str());
    DP_CHECK(!rules.one_type || devices[i].type == devices[0].type, kInvalidArgument,
             what << " = " << devices[i].str() << " is not of the same type as " << name
                  << "[0] = " << devices[0].str());
    for (size_t j = 0; rules.distinct && j < i; ++j) {
      DP_CHECK(devices[j] != devices[i], kInvalidArgument,
               what << " = " << devices[i].str() << " repeats " << name << "[" << j << "]");
    }
  }
}

int64_t check_chunk_sizes(const std::vector<int64_t>& chunk_sizes, size_t n_devices) {
  if (chunk_sizes.empty()) return 0;
  DP_CHECK(chunk_sizes.size() == n_devices, kInvalidArgument,
           "chunk_sizes has " << chunk_sizes.size() << " entries but there are " << n_devices
                              << " devices");
  int64_t total = 0;
  for (size_t i = 0; i < chunk_sizes.size(); ++i) {
    DP_CHECK(chunk_sizes[i] >= 0, kInvalidArgument,
             "chunk_sizes[" << i << "] = " << chunk_sizes[i] << " is negative");
    DP_CHECK(!__builtin_add_overflow(total, chunk_sizes[i], &total), kInvalidArgument,
             "chunk_sizes sum past 2^63 (at chunk_sizes[" << i << "] = " << chunk_sizes[i] << ")");
  }
  return total;
}

void check_splittable(const Tensor& x, const std::string& name) {
  DP_CHECK(x.ndim() > 0, kShapeMismatch,
           name << " is a 0-dim tensor, which cannot be scattered (mark it broadcast to copy it "
                   "to every device)");
}

}  // namespace dp::parallel
