// Module checkpoints: a module's state (every parameter and buffer, by its dotted name)
// in a safetensors file, loadable by PyTorch's safetensors.torch.load_file and back.
#pragma once

#include <string>

#include <map>

#include "nn/module.h"
#include "optim/optimizer.h"

namespace dp {

void save_module(const Module& module, const std::string& path);

// Checks every name, dtype and shape first; on any mismatch (missing or unexpected
// name, other dtype or shape, corrupt or truncated file) throws and leaves the module
// unchanged. Then copies the values in place.
// Optimizer entries ("optimizer/...") in the file are ignored.
void load_module(Module& module, const std::string& path);

// A training checkpoint: the module's state under its names (what load_module and
// PyTorch read), plus, when `optimizer` is given, its state as "optimizer/<i>/<slot>" for
// parameter i (slots as PyTorch names them: momentum_buffer, exp_avg, exp_avg_sq, step),
// and string metadata (kept in the safetensors __metadata__).
void save_checkpoint(const Module& module, const Optimizer* optimizer, const std::string& path,
                     const std::map<std::string, std::string>& metadata);
// Restores what save_checkpoint wrote; everything is checked before anything changes. An
// optimizer of another kind, or a file without optimizer state when one is given, is a
// kFormat error. `metadata` (may be null) receives the file's metadata.
void load_checkpoint(Module& module, Optimizer* optimizer, const std::string& path,
                     std::map<std::string, std::string>* metadata);

}  // namespace dp
