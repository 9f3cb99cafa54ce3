// Context: the devices of one library instance, their backends and worker threads, the
// log callback and the seed. Everything mutable that the core keeps lives here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/backend.h"
#include "device/device.h"
#include "device/torch_generator.h"
#include "device/worker.h"

namespace dp {

using LogFn = std::function<void(int level, const char* message)>;

enum LogLevel : int { kLogDebug = 0, kLogInfo = 1, kLogWarning = 2, kLogError = 3 };

struct ContextOptions {
  int cpu_devices = 0;  // 0: DP_CPU_DEVICES, else the cores this process may use
  bool load_cuda = true;
  bool allow_tf32 = false;
  int log_level = kLogWarning;
  LogFn log_fn;  // empty: silent
  uint64_t seed = 0;
};

class Context : public std::enable_shared_from_this<Context> {
 public:
  static std::shared_ptr<Context> create(const ContextOptions& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const ContextOptions& options() const { return options_; }

  int device_count(DeviceType type) const;
  // Throws kInvalidArgument naming `what` when the device's type is neither CPU nor CUDA.
  static void check_device_type(Device device, const char* what);
  // Throws as check_device_type, then kOutOfRange naming `what` when the device does not
  // exist.
  void check_device(Device device, const char* what) const;
  // Devices of the accelerator in use: every CUDA device, else every CPU device.
  std::vector<Device> default_devices() const;

  Backend& backend(DeviceType type) const;
  const std::shared_ptr<Backend>& backend_ptr(DeviceType type) const;
  Worker& worker(Device device) const;

  // Runs f for the device (on its worker, or on this thread while the worker is idle;
  // see Worker::run) and returns its result.
  template <class F>
  auto run(Device device, F&& f) {
    return worker(device).run(std::forward<F>(f));
  }
  // Runs f on the device's worker thread itself (for user callbacks; see Worker).
  template <class F>
  auto run_on_thread(Device device, F&& f) {
    return worker(device).run_on_thread(std::forward<F>(f));
  }

  // The first time autocast casts for a device of a type without native bfloat16 (no
  // AVX512-BF16 or AMX; a GPU before compute capability 8.0), says so once through the
  // log callback (a warning: the run is correct but not faster).
  void note_autocast(Device device);
  void log(int level, const std::string& message) const;
  // Runs f(TorchGenerator&) on the stream parameters are initialised from, one caller at
  // a time: seeded with the context's seed, it gives layers made in PyTorch's order the
  // weights torch.manual_seed(seed) gives them (device/torch_generator.h).
  template <class F>
  auto with_init_generator(F&& f) {
    std::lock_guard<std::mutex> lock(init_mu_);
    return f(init_generator_);
  }
  // A fresh seed for random work on `device` (dropout masks): each device counts on its
  // own, so parallel replicas draw the same masks in every run.
  uint64_t next_seed(Device device);

  // Why CUDA is unavailable ("" when it is available or was not requested).
  const std::string& cuda_status() const { return cuda_status_; }

  // Stops the worker threads (after their queued work). Called by the destructor;
  // idempotent. Must not run on a worker thread.
  void shutdown();

 private:
  explicit Context(const ContextOptions& options);
  void load_cuda();
  void start_workers();

  ContextOptions options_;
  BackendHost host_{};
  std::shared_ptr<Backend> cpu_;
  std::shared_ptr<Backend> cuda_;
  void* cuda_plugin_ = nullptr;
  std::string cuda_status_;
  std::atomic<bool> autocast_noted_[2] = {false, false};  // per device type
  std::vector<std::unique_ptr<Worker>> cpu_workers_;
  std::vector<std::unique_ptr<Worker>> cuda_workers_;
  std::mutex init_mu_;
  TorchGenerator init_generator_;
  std::mutex device_seed_mu_;
  std::map<std::pair<int, int>, uint64_t> device_seed_counters_;
};

// The most CPU devices a context takes (each has a worker thread).
constexpr int kMaxCpuDevices = 4096;

// Where a plugin is loaded from: the environment variable's value when set, else
// file_name beside libdataparallel.so (or in ../lib from it) when there, else file_name
// alone (the dynamic loader's search path).
std::string plugin_path(const char* env_var, const char* file_name);

// Number of CPU devices a context gets by default: DP_CPU_DEVICES if set, else the cores
// this process may run on. Throws kInvalidArgument for a malformed DP_CPU_DEVICES.
int default_cpu_devices();

}  // namespace dp
