#include "parallel/alias_read_guard.h"

namespace dp::parallel {

const char* const kWriteThroughAlias =
    "that aliases another device's memory (a replica parameter, a broadcast input or a "
    "scatter chunk); copy it first";

namespace {

const char* const kWriteWhileAliasesRead =
    "while DataParallel replicas on other CPU devices read its memory in place (the original "
    "module's parameter or a broadcast input, which they alias); for a module that writes "
    "these in forward, create the wrapper with alias_cpu off so that the replicas get copies";

}  // namespace

AliasReadGuard::AliasReadGuard(std::vector<std::shared_ptr<Storage>> storages)
    : guarded_(std::move(storages)) {
  for (const auto& s : guarded_) s->block_writes(kWriteWhileAliasesRead);
}

AliasReadGuard::~AliasReadGuard() {
  for (const auto& s : guarded_) s->unblock_writes();
}

}  // namespace dp::parallel
