#include "io/checkpoint.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "autograd/grad_mode.h"
#include "error.h"
#include "io/safetensors.h"
#include "ops/ops.h"

namespace dp {

namespace {

constexpr const char* kOptimizerPrefix = "optimizer/";
// The optimizer's learning rate, which a schedule may have changed since it was made: a
// load restores it, as PyTorch's optimizer.load_state_dict restores its param_groups.
constexpr const char* kLrKey = "optimizer_lr";

// The shortest text that reads back to the same double, whatever the process's locale
// (snprintf and strtod follow LC_NUMERIC: "0,05" under a decimal-comma locale, which a
// JVM sets from the environment).
std::string lr_text(double lr) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, lr);
  return std::string(buf, r.ptr);
}

// `text` as a learning rate (all of it a decimal number, finite and >= 0), or nullopt.
std::optional<double> parse_lr(const std::string& text) {
  double lr = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, lr);
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(lr) || lr < 0) return std::nullopt;
  return lr;
}

// The learning rate a file records, as set_lr would take it; nullopt when the file
// predates the key.
std::optional<double> saved_lr(const std::map<std::string, std::string>& meta,
                               const std::string& path) {
  auto it = meta.find(kLrKey);
  if (it == meta.end()) return std::nullopt;
  const std::optional<double> lr = parse_lr(it->second);
  DP_CHECK(lr.has_value(), kFormat,
           "\"" << path << "\": " << kLrKey << " = \"" << it->second
                << "\" is not a learning rate (a finite number >= 0)");
  return lr;
}

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

// The optimizer's state is saved and loaded under its parameters' positions: they must be
// the module's (all or some of them), or the file pairs one model's weights with another's
// state, which neither can load.
void check_optimizer_of(const Module& module, const Optimizer& optimizer) {
  std::set<const TensorImpl*> mine;
  for (const auto& [name, t] : module.state()) mine.insert(t.impl());
  const auto& params = optimizer.params();
  for (size_t i = 0; i < params.size(); ++i) {
    DP_CHECK(mine.count(params[i].impl()), kInvalidArgument,
             "opt: its parameter " << i << " (shape " << shape_str(params[i].shape())
                                   << ") is not a parameter of the module (" << module.type_name()
                                   << "): an optimizer of another model?");
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
  // The library's own keys: a user value may repeat one (dp-train records its optimizer)
  // but not contradict it, or a load would trust what is not in the file.
  std::map<std::string, std::string> own{{"format", "pt"}, {"producer", "libdataparallel"}};
  if (optimizer) {
    check_optimizer_of(module, *optimizer);
    own["optimizer"] = const_cast<Optimizer*>(optimizer)->kind();
    own[kLrKey] = lr_text(optimizer->lr());
  }
  for (const char* key : {"format", "producer", "optimizer", kLrKey}) {
    auto it = metadata.find(key);
    if (it == metadata.end()) continue;
    // The rate as a number: "0.1" repeats the library's "0.1" however either is written.
    const bool same = own.count(key) &&
                      (key == std::string(kLrKey) ? parse_lr(it->second) == parse_lr(own.at(key))
                                                  : own.at(key) == it->second);
    DP_CHECK(same, kInvalidArgument,
             "metadata \"" << key << "\" = \"" << it->second << "\" contradicts the library's own ("
                           << (own.count(key) ? "\"" + own.at(key) + "\""
                                              : std::string("no optimizer is saved"))
                           << ")");
  }
  std::map<std::string, std::string> meta = metadata;
  for (const auto& [key, value] : own) meta[key] = value;
  auto entries = module.state();
  if (optimizer) {
    auto* opt = const_cast<Optimizer*>(optimizer);
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
  if (optimizer) check_optimizer_of(module, *optimizer);
  std::optional<double> lr;  // the file's learning rate, for the optimizer
  std::map<std::string, std::string> meta;
  const auto entries = load_safetensors(path, &meta);
  check_module_entries(module, path, entries);
  if (optimizer) {
    auto it = meta.find("optimizer");
    DP_CHECK(it != meta.end(), kFormat, "\"" << path << "\" holds no optimizer state");
    DP_CHECK(it->second == optimizer->kind(), kFormat,
             "\"" << path << "\" holds " << it->second << " state but the optimizer is "
                  << optimizer->kind());
    lr = saved_lr(meta, path);
    const auto& params = optimizer->params();
    std::set<std::string> known;
    for (size_t i = 0; i < params.size(); ++i) {
      // A parameter's state is whole or absent: its buffers all present or all missing
      // (created together at its first step), and with a step count, buffers exactly when
      // the count is at least 1. A file that breaks this would leave a half-made state
      // that the next step reads.
      int64_t steps = -1;  // -1: this optimizer keeps no count
      size_t buffers = 0, present = 0;
      for (const Optimizer::Slot& s : optimizer->slots(i)) {
        const std::string name = slot_name(i, s.name);
        known.insert(name);
        if (!s.count) ++buffers;
        auto e = entries.find(name);
        if (e == entries.end()) {
          DP_CHECK(!s.count, kFormat,
                   "\"" << path << "\" has no \"" << name << "\": incomplete optimizer state");
          continue;  // a buffer not created yet when saved
        }
        const Shape want = s.count ? Shape{} : params[i].shape();
        const DType want_type = s.count ? DType::kInt64 : params[i].dtype();
        DP_CHECK(e->second.shape == want && e->second.dtype == want_type, kFormat,
                 "\"" << path << "\": \"" << e->first << "\" has shape "
                      << shape_str(e->second.shape) << " " << dtype_name(e->second.dtype)
                      << " but the optimizer needs " << shape_str(want) << " "
                      << dtype_name(want_type));
        if (s.count) {
          std::memcpy(&steps, e->second.data.data(), sizeof steps);
          DP_CHECK(steps >= 0, kFormat,
                   "\"" << path << "\": \"" << name << "\" is " << steps << ", not a step count");
        } else {
          ++present;
        }
      }
      DP_CHECK(present == 0 || present == buffers, kFormat,
               "\"" << path << "\": parameter " << i << " has " << present << " of the " << buffers
                    << " state tensors " << optimizer->kind()
                    << " keeps: incomplete optimizer state");
      DP_CHECK(steps < 0 || buffers == 0 || (steps >= 1) == (present == buffers), kFormat,
               "\"" << path << "\": parameter " << i << " has step " << steps << " but "
                    << (present ? "state tensors" : "no state tensors")
                    << ": inconsistent optimizer state");
    }
    for (const auto& [name, e] : entries) {
      DP_CHECK(!is_optimizer_entry(name) || known.count(name), kFormat,
               "\"" << path << "\" has an entry \"" << name << "\" that this " << optimizer->kind()
                    << " optimizer (" << params.size()
                    << " parameters) does not keep: a checkpoint of another setup?");
    }
  }
  // Nothing is written until every write is known to be allowed: a replica's aliased
  // parameter, refused half way, would leave the module partly loaded.
  const auto state = module.state();
  for (const auto& [name, t] : state) t.check_writable();
  GradModeGuard no_grad(false);
  for (const auto& [name, t] : state) ops::copy_from_host(t, entries.at(name).data.data());
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
    if (lr) optimizer->set_lr(*lr);
  }
  if (metadata) *metadata = std::move(meta);
}

}  // namespace dp
