// Which physical GPU each logical CUDA device runs on. Several logical devices may share
// one GPU (each with its own streams), so the whole multi-device pipeline can be tested
// on a machine with a single GPU.
#pragma once

#include <string>
#include <vector>

namespace dp::cuda_plugin {

// Parses DP_CUDA_DEVICES ("0,0" = two logical devices on GPU 0; "1,0" = logical 0 on
// GPU 1, logical 1 on GPU 0). `spec` null or empty: one logical device per physical GPU.
// Returns the physical ordinal of each logical device, or an empty list with *error set
// naming the bad entry when an entry is not an ordinal in [0, physical_count).
std::vector<int> parse_device_map(const char* spec, int physical_count, std::string* error);

}  // namespace dp::cuda_plugin
