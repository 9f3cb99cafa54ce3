// CPU replicas read another CPU device's memory in place (alias_cpu) instead of copying
// it, so in-place writes that would reach them are refused. This file holds that rule's
// guard and the reasons the refusals give; each reason completes "cannot write in place
// to a tensor on <device> " (Tensor::check_writable).
#pragma once

#include <memory>
#include <vector>

#include "tensor/storage.h"

namespace dp::parallel {

// The reason on an alias itself (a replica parameter, a broadcast input or a scatter
// chunk on another CPU device): TensorImpl::read_only_reason.
extern const char* const kWriteThroughAlias;

// Memory that replicas on other CPU devices read in place while they run: for the guard's
// lifetime an in-place write to it is refused (kState), since it would reach them
// mid-forward. Blocks nest per storage, so guards of concurrent calls do too.
class AliasReadGuard {
 public:
  explicit AliasReadGuard(std::vector<std::shared_ptr<Storage>> storages);
  ~AliasReadGuard();
  AliasReadGuard(const AliasReadGuard&) = delete;
  AliasReadGuard& operator=(const AliasReadGuard&) = delete;

 private:
  std::vector<std::shared_ptr<Storage>> guarded_;
};

}  // namespace dp::parallel
