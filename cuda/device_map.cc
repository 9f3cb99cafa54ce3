#include "device_map.h"

#include <cctype>
#include <cstdlib>

namespace dp::cuda_plugin {

std::vector<int> parse_device_map(const char* spec, int physical_count, std::string* error) {
  std::vector<int> out;
  if (spec == nullptr || *spec == '\0') {
    for (int i = 0; i < physical_count; ++i) out.push_back(i);
    return out;
  }
  const std::string text(spec);
  size_t begin = 0;
  for (int entry = 0;; ++entry) {
    const size_t comma = text.find(',', begin);
    std::string item =
        text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    size_t lead = 0;
    while (lead < item.size() && std::isspace(static_cast<unsigned char>(item[lead]))) ++lead;
    item = item.substr(lead);
    char* end = nullptr;
    const long v = item.empty() ? -1 : std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v >= physical_count) {
      *error = "DP_CUDA_DEVICES = \"" + text + "\": entry " + std::to_string(entry) + " (\"" +
               item + "\") is not a GPU ordinal in [0, " + std::to_string(physical_count) + ")";
      return {};
    }
    out.push_back(static_cast<int>(v));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

}  // namespace dp::cuda_plugin
