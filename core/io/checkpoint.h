// Module checkpoints: a module's state (every parameter and buffer, by its dotted name)
// in a safetensors file, loadable by PyTorch's safetensors.torch.load_file and back.
#pragma once

#include <string>

#include "nn/module.h"

namespace dp {

void save_module(const Module& module, const std::string& path);

// Checks every name, dtype and shape first; on any mismatch (missing or unexpected
// name, other dtype or shape, corrupt or truncated file) throws and leaves the module
// unchanged. Then copies the values in place.
void load_module(Module& module, const std::string& path);

}  // namespace dp
