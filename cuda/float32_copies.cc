#include "float32_copies.h"

#include "cuda_errors.h"
#include "kernels/kernels.h"

namespace dp::cuda_plugin {

KView Float32Copies::widen(const KView& v, bool copy_values) {
  if (v.dtype != DType::kBFloat16) return v;
  KView w = v;
  w.dtype = DType::kFloat32;
  buffers_.push_back(std::make_unique<ScratchBuffer>(
      host_, d_, static_cast<size_t>(v.numel()) * sizeof(float), "a float32 copy of bfloat16"));
  w.data = buffers_.back()->get();
  if (copy_values && v.numel() > 0) {
    check_cuda(host_, d_.where, kernels::cast(d_.compute, v, w),
               "cast kernel (bfloat16 to float32)");
  }
  return w;
}

KView Float32Copies::in(const KView& v) {
  return widen(v, true);
}

KView Float32Copies::out(const KView& v, bool keep) {
  KView w = widen(v, keep);
  if (v.dtype == DType::kBFloat16) outputs_.emplace_back(v, w);
  return w;
}

void Float32Copies::finish() {
  for (const auto& [bf16, f32] : outputs_) {
    if (bf16.numel() == 0) continue;
    check_cuda(host_, d_.where, kernels::cast(d_.compute, f32, bf16),
               "cast kernel (float32 to bfloat16)");
  }
}

}  // namespace dp::cuda_plugin
