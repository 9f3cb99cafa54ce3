/* Loads the CUDA plugin the way the core does (dlopen with RTLD_NOW, so every symbol it
 * needs must resolve) and calls its entry point. Without a driver or a GPU the entry
 * returns NULL with the CUDA runtime's reason: that is the expected outcome here, not a
 * failure. Exit status 0 when the plugin loads and answers, 1 otherwise.
 *   plugin_load <path to libdataparallel_cuda.so> */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The layout of dp::BackendHost (core/device/backend.h), seen from C. */
struct backend_host {
  void (*raise)(int code, const char* message);
  void (*log)(void* log_state, int level, const char* message);
  void* log_state;
};

typedef void* (*entry_fn)(const struct backend_host* host, int abi_version, bool allow_tf32,
                          const char** why);

static void host_raise(int code, const char* message) {
  fprintf(stderr, "plugin_load: the plugin raised error %d: %s\n", code, message);
  exit(1);
}

static void host_log(void* state, int level, const char* message) {
  (void)state;
  printf("plugin_load: log (level %d): %s\n", level, message);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <libdataparallel_cuda.so>\n", argv[0]);
    return 1;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "plugin_load: dlopen(%s) failed: %s\n", argv[1], dlerror());
    return 1;
  }
  entry_fn entry = (entry_fn)dlsym(lib, "dp_cuda_plugin_entry");
  if (!entry) {
    fprintf(stderr, "plugin_load: no dp_cuda_plugin_entry: %s\n", dlerror());
    return 1;
  }
  struct backend_host host = {host_raise, host_log, NULL};
  const char* why = NULL;
  void* backend = entry(&host, DP_BACKEND_ABI_VERSION, false, &why);
  if (backend) {
    /* A GPU machine: the backend started. It is a C++ object this program cannot
       destroy; the process ends here anyway. */
    printf("plugin_load: the CUDA backend started\n");
  } else {
    printf("plugin_load: no CUDA backend: %s\n", why ? why : "(no reason given)");
    if (!why || !*why) return 1;
  }
  return 0;
}
