// Sanitizer defaults of the fuzz targets (ASAN_OPTIONS / UBSAN_OPTIONS still override):
// - an allocation over 1 GiB fails (returns NULL) instead of aborting the process, so
//   that a request the machine cannot serve exercises the library's DP_ERR_OUT_OF_MEMORY
//   path (libFuzzer's -rss_limit_mb=2048 would otherwise report it as a crash);
// - undefined behaviour stops the run, so that libFuzzer records it as a crash.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1";
}
