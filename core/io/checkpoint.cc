#include "io/checkpoint.h"

#include <set>

#include "autograd/grad_mode.h"
#include "error.h"
#include "io/safetensors.h"
#include "ops/ops.h"

namespace dp {

void save_module(const Module& module, const std::string& path) {
  save_safetensors(path, module.state(), {{"format", "pt"}, {"producer", "libdataparallel"}});
}

void load_module(Module& module, const std::string& path) {
  const auto entries = load_safetensors(path);
  const auto state = module.state();
  std::set<std::string> expected;
  for (const auto& [name, t] : state) {
    expected.insert(name);
    auto it = entries.find(name);
    DP_CHECK(it != entries.end(), kFormat,
             "\"" << path << "\" has no entry \"" << name << "\" (this module's "
                  << module.type_name() << " needs it): a checkpoint of another model?");
    DP_CHECK(it->second.dtype == t.dtype(), kFormat,
             "\"" << path << "\": \"" << name << "\" is " << dtype_name(it->second.dtype)
                  << " but the module's is " << dtype_name(t.dtype()));
    DP_CHECK(it->second.shape == t.shape(), kFormat,
             "\"" << path << "\": \"" << name << "\" has shape " << shape_str(it->second.shape)
                  << " but the module's has shape " << shape_str(t.shape()));
  }
  for (const auto& [name, e] : entries) {
    DP_CHECK(expected.count(name), kFormat,
             "\"" << path << "\" has an entry \"" << name
                  << "\" that the module does not have: a checkpoint of another model?");
  }
  GradModeGuard no_grad(false);
  for (const auto& [name, t] : state) ops::copy_from_host(t, entries.at(name).data.data());
}

}  // namespace dp
