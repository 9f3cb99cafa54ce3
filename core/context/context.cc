#include "context/context.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "device/bf16_staging.h"
#include "device/cpu/cpu_backend.h"
#include "device/trace.h"
#include "error.h"

namespace dp {

namespace {

[[noreturn]] void raise_error(int code, const char* message) {
  throw Error(static_cast<Code>(code), message ? message : "backend error");
}

void log_to_context(void* state, int level, const char* message) {
  static_cast<const Context*>(state)->log(level, message);
}

std::string directory_of_this_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&default_cpu_devices), &info) == 0 || !info.dli_fname) {
    return "";
  }
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

int default_cpu_devices() {
  if (const char* env = std::getenv("DP_CPU_DEVICES"); env && *env) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    DP_CHECK(*end == '\0' && n > 0 && n <= kMaxCpuDevices, kInvalidArgument,
             "DP_CPU_DEVICES = \"" << env << "\" is not a device count between 1 and "
                                   << kMaxCpuDevices);
    return static_cast<int>(n);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

Context::Context(const ContextOptions& options) : options_(options), init_generator_(options.seed) {
  host_.raise = &raise_error;
  host_.log = &log_to_context;
  host_.log_state = this;
}

std::shared_ptr<Context> Context::create(const ContextOptions& options) {
  DP_CHECK(options.cpu_devices >= 0 && options.cpu_devices <= kMaxCpuDevices, kInvalidArgument,
           "cpu_devices = " << options.cpu_devices << " is not between 0 (the default) and "
                            << kMaxCpuDevices);
  // DP_TRACE=FILE: record a timeline from the first context on (see device/trace.h).
  static const bool traced = [] {
    const char* path = std::getenv("DP_TRACE");
    if (!path || !*path) return false;
    trace::start(path);
    return true;
  }();
  (void)traced;
  ContextOptions opts = options;
  if (opts.cpu_devices == 0) opts.cpu_devices = default_cpu_devices();
  std::shared_ptr<Context> ctx(new Context(opts));
  ctx->cpu_ = std::make_shared<Bf16Staging>(std::make_shared<CpuBackend>(opts.cpu_devices));
  if (opts.load_cuda) ctx->load_cuda();
  ctx->start_workers();
  return ctx;
}

std::string plugin_path(const char* env_var, const char* file_name) {
  if (const char* env = std::getenv(env_var); env && *env) return env;
  const std::string dir = directory_of_this_library();
  const std::string name = file_name;
  for (const std::string& candidate : {dir + "/" + name, dir + "/../lib/" + name}) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return name;  // the dynamic loader's search path
}

void Context::load_cuda() {
  const std::string path = plugin_path("DP_CUDA_PLUGIN", "libdataparallel_cuda.so");
  cuda_plugin_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!cuda_plugin_) {
    const char* why = dlerror();
    cuda_status_ = "CUDA plugin not loaded (" + std::string(why ? why : path) + ")";
    log(kLogInfo, cuda_status_ + "; using CPU devices only");
    return;
  }
  auto entry = reinterpret_cast<CudaPluginEntryFn>(dlsym(cuda_plugin_, kCudaPluginEntry));
  if (!entry) {
    cuda_status_ = "CUDA plugin " + path + " has no entry point " + kCudaPluginEntry;
    log(kLogWarning, cuda_status_);
    dlclose(cuda_plugin_);
    cuda_plugin_ = nullptr;
    return;
  }
  const char* why = nullptr;
  Backend* backend = entry(&host_, kBackendAbiVersion, options_.allow_tf32, &why);
  if (!backend) {
    cuda_status_ = std::string("no CUDA devices: ") + (why ? why : "unknown reason");
    log(kLogInfo, cuda_status_ + "; using CPU devices only");
    return;  // keep the plugin loaded: the runtime may not like being unloaded
  }
  cuda_ = std::make_shared<Bf16Staging>(std::shared_ptr<Backend>(backend));
}

void Context::start_workers() {
  for (int i = 0; i < cpu_->device_count(); ++i) {
    Backend* b = cpu_.get();
    auto* cpu = static_cast<CpuBackend*>(&static_cast<Bf16Staging*>(b)->inner());
    // CPU work may run on an idle device's caller thread (see Worker::run).
    cpu_workers_.push_back(std::make_unique<Worker>(
        "cpu:" + std::to_string(i), [b, i] { b->worker_started(i); },
        [b, i] { b->worker_stopping(i); },
        InlineHooks{[cpu, i] { cpu->enter_inline(i); }, [cpu] { cpu->leave_inline(); }}));
  }
  if (cuda_) {
    for (int i = 0; i < cuda_->device_count(); ++i) {
      Backend* b = cuda_.get();
      cuda_workers_.push_back(std::make_unique<Worker>(
          "cuda:" + std::to_string(i), [b, i] { b->worker_started(i); },
          [b, i] { b->worker_stopping(i); }));
    }
  }
}

void Context::shutdown() {
  cpu_workers_.clear();
  cuda_workers_.clear();
}

Context::~Context() {
  shutdown();
  // The backends stay alive while any storage still points at them; the plugin stays
  // mapped for the life of the process for the same reason.
}

int Context::device_count(DeviceType type) const {
  if (type == DeviceType::kCpu) return static_cast<int>(cpu_workers_.size());
  return static_cast<int>(cuda_workers_.size());
}

void Context::check_device_type(Device device, const char* what) {
  DP_CHECK(device.type == DeviceType::kCpu || device.type == DeviceType::kCuda, kInvalidArgument,
           what << " has device type " << static_cast<int>(device.type)
                << ", which is neither CPU (0) nor CUDA (1)");
}

void Context::check_device(Device device, const char* what) const {
  check_device_type(device, what);
  const int n = device_count(device.type);
  DP_CHECK(
      device.index >= 0 && device.index < n, kOutOfRange,
      what << " = " << device.str() << " but only " << n
           << (device.type == DeviceType::kCpu ? " CPU" : " CUDA") << " devices exist"
           << (device.type == DeviceType::kCuda && !cuda_status_.empty() ? " (" + cuda_status_ + ")"
                                                                         : ""));
}

std::vector<Device> Context::default_devices() const {
  std::vector<Device> out;
  const DeviceType t = device_count(DeviceType::kCuda) > 0 ? DeviceType::kCuda : DeviceType::kCpu;
  for (int i = 0; i < device_count(t); ++i) out.push_back(Device{t, i});
  return out;
}

Backend& Context::backend(DeviceType type) const {
  return *backend_ptr(type);
}

const std::shared_ptr<Backend>& Context::backend_ptr(DeviceType type) const {
  if (type == DeviceType::kCuda) {
    DP_CHECK(cuda_ != nullptr, kOutOfRange, "no CUDA devices exist (" << cuda_status_ << ")");
    return cuda_;
  }
  return cpu_;
}

Worker& Context::worker(Device device) const {
  const auto& workers = device.type == DeviceType::kCpu ? cpu_workers_ : cuda_workers_;
  DP_CHECK(device.index >= 0 && static_cast<size_t>(device.index) < workers.size(), kOutOfRange,
           "device " << device.str() << " does not exist (" << workers.size() << " "
                     << (device.type == DeviceType::kCpu ? "CPU" : "CUDA")
                     << " devices; the context may have been released)");
  return *workers[device.index];
}

void Context::note_autocast(Device device) {
  const int type = device.type == DeviceType::kCpu ? 0 : 1;
  if (autocast_noted_[type].load(std::memory_order_relaxed)) return;
  if (backend(device.type).bf16_native(device.index)) return;
  if (autocast_noted_[type].exchange(true)) return;
  log(kLogWarning,
      "autocast: " + device.str() + " " +
          backend(device.type).bf16_not_native_reason(device.index) +
          ": bfloat16 matmul and convolution compute in float32 and round their results "
          "(correct, but not faster than float32)");
}

void Context::log(int level, const std::string& message) const {
  if (options_.log_fn && level >= options_.log_level) {
    options_.log_fn(level, message.c_str());
  }
}

namespace {
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

uint64_t Context::next_seed(Device device) {
  uint64_t n;
  {
    std::lock_guard<std::mutex> lock(device_seed_mu_);
    n = ++device_seed_counters_[{static_cast<int>(device.type), device.index}];
  }
  const uint64_t stream =
      mix(options_.seed ^ (0x5DEECE66Dull * (1 + static_cast<uint64_t>(device.type)) +
                           static_cast<uint64_t>(device.index)));
  return mix(stream + n * 0x9E3779B97F4A7C15ull);
}

}  // namespace dp
