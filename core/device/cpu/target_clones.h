// DP_CLONES: compile a function once per x86-64 level (AVX-512, AVX2, baseline) and pick
// the one for the CPU it runs on when the library loads (GCC's target_clones), so a
// generic x86-64 build still runs its loops in the widest vectors the CPU has.
// Not under ThreadSanitizer: the load-time resolver of a cloned function runs before the
// sanitizer's runtime is ready, and crashes when instrumented.
#pragma once

#if defined(__x86_64__) && !defined(__clang__) && !defined(DP_NO_TARGET_CLONES) && \
    !defined(__SANITIZE_THREAD__)
#define DP_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DP_CLONES
#endif
