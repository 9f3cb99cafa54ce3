// Float32 copies of bfloat16 views, for a bfloat16 call that the plugin runs on its
// float32 path: a product cuBLASLt has no bfloat16 algorithm for, a convolution cuDNN does
// not run in bfloat16 (no cuDNN, DP_CUDA_CONV=im2col, a shape it refuses, a GPU without
// bfloat16 tensor cores). The result is then the float32 result rounded once, what the
// core's own staging (core/device/bf16_staging.h) gives for the kernels the plugin does
// not take in bfloat16.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "cuda_backend.h"

namespace dp::cuda_plugin {

// Used on the device's worker, like the kernel call it serves. Buffers come from the
// device's pool, in the order of its compute stream, and are freed when this goes out of
// scope (after the work queued with them, in stream order). Views that are not bfloat16
// pass through untouched.
class Float32Copies {
 public:
  Float32Copies(const BackendHost& host, CudaDevice& d) : host_(host), d_(d) {}
  Float32Copies(const Float32Copies&) = delete;
  Float32Copies& operator=(const Float32Copies&) = delete;

  // v widened to float32 (exactly: bfloat16 is float32's upper half).
  KView in(const KView& v);
  // A float32 buffer for the output v, holding v's values when `keep` (a kernel that
  // accumulates into its output); finish() rounds it into v.
  KView out(const KView& v, bool keep);
  // Rounds every output to nearest even into its bfloat16 view, once.
  void finish();

 private:
  KView widen(const KView& v, bool copy_values);

  const BackendHost& host_;
  CudaDevice& d_;
  std::vector<std::unique_ptr<ScratchBuffer>> buffers_;
  std::vector<std::pair<KView, KView>> outputs_;  // (bfloat16 view, its float32 buffer)
};

}  // namespace dp::cuda_plugin
