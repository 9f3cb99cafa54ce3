#include "io/checkpoint.h"

#include <cstring>
#include <set>

#include "autograd/grad_mode.h"
#include "error.h"
#include "io/safetensors.h"
#include "ops/ops.h"

namespace dp {

namespace {

constexpr const char* kOptimizerPrefix = "optimizer/";

bool is_optimizer_entry(const std::string& name) {
  return name.rfind(kOptimizerPrefix, 0) == 0;
}

std::string slot_name(size_t param, const std::string& slot) {
  return kOptimizerPrefix + std::to_string(param) + "/" + slot;
}

// Checks the module's entries against the file: every name present, same dtype and shape,
// nothing extra (optimizer entries aside).
void check_module_entries(const Module& module, const std::string& path,
                          const std::map<std::string, SafetensorsEntry>& entries) {
  std::set<std::string> expected;
  for (const auto& [name, t] : module.state()) {
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
    DP_CHECK(expected.count(name) || is_optimizer_entry(name), kFormat,
             "\"" << path << "\" has an entry \"" << name
                  << "\" that the module does not have: a checkpoint of another model?");
  }
}

}  // namespace

void save_module(const Module& module, const std::string& path) {
  save_checkpoint(module, nullptr, path, {});
}

void load_module(Module& module, const std::string& path) {
  load_checkpoint(module, nullptr, path, nullptr);
}

void save_checkpoint(const Module& module, const Optimizer* optimizer, const std::string& path,
                     const std::map<std::string, std::string>& metadata) {
  std::map<std::string, std::string> meta = metadata;
  meta["format"] = "pt";
  meta["producer"] = "libdataparallel";
  auto entries = module.state();
  if (optimizer) {
    auto* opt = const_cast<Optimizer*>(optimizer);
    meta["optimizer"] = opt->kind();
    const auto& params = opt->params();
    for (size_t i = 0; i < params.size(); ++i) {
      for (const Optimizer::Slot& s : opt->slots(i)) {
        if (s.count) {
          entries.emplace_back(
              slot_name(i, s.name),
              ops::from_host(params[i].context(), {}, DType::kInt64, cpu(0), s.count));
        } else if (s.buffer->defined()) {
          entries.emplace_back(slot_name(i, s.name), *s.buffer);
        }
      }
    }
  }
  save_safetensors(path, entries, meta);
}

void load_checkpoint(Module& module, Optimizer* optimizer, const std::string& path,
                     std::map<std::string, std::string>* metadata) {
  std::map<std::string, std::string> meta;
  const auto entries = load_safetensors(path, &meta);
  check_module_entries(module, path, entries);
  if (optimizer) {
    auto it = meta.find("optimizer");
    DP_CHECK(it != meta.end(), kFormat, "\"" << path << "\" holds no optimizer state");
    DP_CHECK(it->second == optimizer->kind(), kFormat,
             "\"" << path << "\" holds " << it->second << " state but the optimizer is "
                  << optimizer->kind());
    const auto& params = optimizer->params();
    for (size_t i = 0; i < params.size(); ++i) {
      for (const Optimizer::Slot& s : optimizer->slots(i)) {
        auto e = entries.find(slot_name(i, s.name));
        if (e == entries.end()) continue;  // not created yet when saved
        const Shape want = s.count ? Shape{} : params[i].shape();
        const DType want_type = s.count ? DType::kInt64 : params[i].dtype();
        DP_CHECK(e->second.shape == want && e->second.dtype == want_type, kFormat,
                 "\"" << path << "\": \"" << e->first << "\" has shape "
                      << shape_str(e->second.shape) << " " << dtype_name(e->second.dtype)
                      << " but the optimizer needs " << shape_str(want) << " "
                      << dtype_name(want_type));
      }
    }
  }
  GradModeGuard no_grad(false);
  for (const auto& [name, t] : module.state()) ops::copy_from_host(t, entries.at(name).data.data());
  if (optimizer) {
    const auto& params = optimizer->params();
    for (size_t i = 0; i < params.size(); ++i) {
      for (const Optimizer::Slot& s : optimizer->slots(i)) {
        auto e = entries.find(slot_name(i, s.name));
        if (s.count) {
          *s.count = 0;
          if (e != entries.end()) std::memcpy(s.count, e->second.data.data(), sizeof(int64_t));
        } else if (e == entries.end()) {
          *s.buffer = Tensor();
        } else {
          *s.buffer = ops::from_host(params[i].context(), params[i].shape(), params[i].dtype(),
                                     params[i].device(), e->second.data.data());
        }
      }
    }
  }
  if (metadata) *metadata = std::move(meta);
}

}  // namespace dp
