#include "parallel/validate.h"

#include "error.h"
#include "ops/op_util.h"

namespace dp::parallel {

void check_device_list(const Context* ctx, const std::vector<Device>& devices, const char* name,
                       DeviceListRules rules) {
  DP_CHECK(!devices.empty(), kInvalidArgument, name << " is empty (no devices)");
  auto entry = [&](size_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; };
  // The list's form first, then each device's existence: a malformed list is an invalid
  // argument whatever devices this machine has (mixed types are refused as mixed, not as
  // a missing CUDA device).
  for (size_t i = 0; i < devices.size(); ++i) {
    Context::check_device_type(devices[i], entry(i).c_str());
    DP_CHECK(!rules.one_type || devices[i].type == devices[0].type, kInvalidArgument,
             entry(i) << " = " << devices[i].str() << " is not of the same type as " << name
                      << "[0] = " << devices[0].str());
    for (size_t j = 0; rules.distinct && j < i; ++j) {
      DP_CHECK(devices[j] != devices[i], kInvalidArgument,
               entry(i) << " = " << devices[i].str() << " repeats " << name << "[" << j << "]");
    }
  }
  for (size_t i = 0; ctx && i < devices.size(); ++i)
    ctx->check_device(devices[i], entry(i).c_str());
}

int64_t check_chunk_sizes(const std::vector<int64_t>& chunk_sizes, size_t n_devices) {
  if (chunk_sizes.empty()) return 0;
  DP_CHECK(chunk_sizes.size() == n_devices, kInvalidArgument,
           "chunk_sizes has " << chunk_sizes.size() << " entries but there are " << n_devices
                              << " devices");
  return ops::sum_of_sizes(chunk_sizes, "", "chunk_sizes", Code::kInvalidArgument);
}

void check_splittable(const Tensor& x, const std::string& name) {
  DP_CHECK(x.ndim() > 0, kShapeMismatch,
           name << " is a 0-dim tensor, which cannot be scattered (mark it broadcast to copy it "
                   "to every device)");
}

}  // namespace dp::parallel
