#include "cudnn_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace dp::cuda_plugin {

namespace {
// cudnnGetVersion() is major * 10000 + minor * 100 + patch since cuDNN 9, major * 1000 +
// minor * 100 + patch before.
size_t major_of(size_t version) {
  return version >= 90000 ? version / 10000 : version / 1000;
}
}  // namespace

CudnnLibrary::~CudnnLibrary() {
  if (handle) dlclose(handle);
}

std::unique_ptr<CudnnLibrary> open_cudnn(const std::string& path, std::string* why) {
  auto lib = std::make_unique<CudnnLibrary>();
  // RTLD_LOCAL: cuDNN's symbols stay out of the process's global scope, where they could
  // meet another copy of cuDNN (PyTorch's, in a Python process).
  lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    const char* e = dlerror();
    *why = e ? e : path + ": dlopen failed";
    return nullptr;
  }
  const char* missing = nullptr;
#define DP_CUDNN_FIND(name)                                                       \
  if (!missing) {                                                                 \
    lib->name = reinterpret_cast<decltype(lib->name)>(dlsym(lib->handle, #name)); \
    if (!lib->name) missing = #name;                                              \
  }
  DP_CUDNN_FUNCTIONS(DP_CUDNN_FIND)
#undef DP_CUDNN_FIND
  if (missing) {
    *why = path + " has no " + missing + " (not a cuDNN " + std::to_string(CUDNN_MAJOR) + ")";
    return nullptr;
  }
  // A cuDNN of another major version may have every function yet not their behaviour
  // (cuDNN 9's detailed status codes, for one).
  if (major_of(lib->cudnnGetVersion()) != CUDNN_MAJOR) {
    *why = path + " is cuDNN " + cudnn_version_text(*lib) +
           ", but the plugin was built for cuDNN " + std::to_string(CUDNN_MAJOR);
    return nullptr;
  }
  return lib;
}

const CudnnLibrary* cudnn_library(std::string* why) {
  struct Opened {
    std::unique_ptr<CudnnLibrary> lib;
    std::string why;
  };
  // Opened once, on the first call (thread-safe), and never closed: handles and plans
  // made from it may live until the process ends.
  static const Opened* const opened = [] {
    auto* o = new Opened;
    std::vector<std::string> tries;
    if (const char* env = std::getenv("DP_CUDNN_LIBRARY"); env && *env) {
      tries.push_back(env);
    } else {
      const std::string name = "libcudnn.so." + std::to_string(CUDNN_MAJOR);
      tries.push_back(name);
#ifdef DP_CUDNN_BUILD_DIR
      tries.push_back(std::string(DP_CUDNN_BUILD_DIR) + "/" + name);
#endif
    }
    for (const std::string& path : tries) {
      std::string failed;
      o->lib = open_cudnn(path, &failed);
      if (o->lib) break;
      o->why += (o->why.empty() ? "" : "; ") + failed;
    }
    if (o->lib) o->why.clear();
    return o;
  }();
  if (!opened->lib && why) *why = opened->why;
  return opened->lib.get();
}

std::string cudnn_version_text(const CudnnLibrary& lib) {
  const size_t v = lib.cudnnGetVersion();
  const size_t minor = v >= 90000 ? v / 100 % 100 : v / 100 % 10;
  return std::to_string(major_of(v)) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

}  // namespace dp::cuda_plugin
