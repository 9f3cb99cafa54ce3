// A device is {type, index}. CPU devices are virtual (one worker thread each); CUDA
// devices are logical GPUs (several may map to one physical GPU).
#pragma once

#include <string>

namespace dp {

enum class DeviceType : int { kCpu = 0, kCuda = 1 };  // equals dp_device_type

struct Device {
  DeviceType type = DeviceType::kCpu;
  int index = 0;

  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool is_cpu() const { return type == DeviceType::kCpu; }
  std::string str() const {
    return std::string(type == DeviceType::kCpu ? "cpu:" : "cuda:") + std::to_string(index);
  }
};

inline Device cpu(int index = 0) {
  return Device{DeviceType::kCpu, index};
}
inline Device cuda(int index) {
  return Device{DeviceType::kCuda, index};
}

}  // namespace dp
