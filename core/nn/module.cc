#include "nn/module.h"

#include <unordered_map>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "context/context.h"
#include "error.h"
#include "ops/ops.h"

namespace dp {

namespace {

bool valid_name(const std::string& name) {
  return !name.empty() && name.find_first_of("./") == std::string::npos;
}

}  // namespace

// Parameters, buffers and children share one namespace, as PyTorch's attributes do: a
// parameter and a buffer of one name would collide in the saved state.
void Module::check_name_free(const std::string& name, const char* what) const {
  auto taken = [&](const auto& list) {
    for (const auto& entry : list) {
      if (entry.first == name) return true;
    }
    return false;
  };
  const char* holder = taken(params_)     ? "a parameter"
                       : taken(buffers_)  ? "a buffer"
                       : taken(children_) ? "a child module"
                                          : nullptr;
  DP_CHECK(
      holder == nullptr, kInvalidArgument,
      what << " \"" << name << "\" cannot be registered: " << holder << " of that name already is");
}

Module::Module(std::shared_ptr<Context> ctx, std::string type_name)
    : ctx_(std::move(ctx)), type_name_(std::move(type_name)) {}

std::vector<Tensor> Module::operator()(const std::vector<Tensor>& inputs) {
  Device d;
  if (!device(&d)) {
    if (inputs.empty() || !inputs[0].defined()) return forward(inputs);
    d = inputs[0].device();
  }
  return run_forward_on(d, [&] { return forward(inputs); });
}

bool Module::runs_user_code() const {
  for (const auto& [name, child] : children_) {
    if (child->runs_user_code()) return true;
  }
  return false;
}

void Module::register_parameter(const std::string& name, Tensor t) {
  DP_CHECK(valid_name(name), kInvalidArgument,
           "parameter name \"" << name << "\" must be non-empty and contain no '.' or '/'");
  DP_CHECK(t.defined(), kInvalidArgument, "parameter \"" << name << "\" is missing");
  DP_CHECK(
      is_floating(t.dtype()), kDtypeMismatch,
      "parameter \"" << name << "\" must be float32 or float64, got " << dtype_name(t.dtype()));
  // The optimizer updates and autograd accumulates into the very tensor registered: it
  // must be a leaf, not the result of an op whose graph it would keep.
  DP_CHECK(t.is_leaf(), kInvalidArgument,
           "parameter \"" << name
                          << "\" must be a leaf tensor, not the result of an op that records "
                             "its gradient (register a detached copy)");
  check_name_free(name, "parameter");
  t.set_requires_grad(true);
  params_.emplace_back(name, std::move(t));
}

void Module::register_buffer(const std::string& name, Tensor t) {
  DP_CHECK(valid_name(name), kInvalidArgument,
           "buffer name \"" << name << "\" must be non-empty and contain no '.' or '/'");
  DP_CHECK(t.defined(), kInvalidArgument, "buffer \"" << name << "\" is missing");
  check_name_free(name, "buffer");
  buffers_.emplace_back(name, std::move(t));
}

void Module::register_module(const std::string& name, std::shared_ptr<Module> child) {
  DP_CHECK(valid_name(name), kInvalidArgument,
           "child name \"" << name << "\" must be non-empty and contain no '.' or '/'");
  DP_CHECK(child != nullptr, kInvalidArgument, "child \"" << name << "\" is missing");
  DP_CHECK(child.get() != this, kInvalidArgument, "a module cannot be its own child");
  check_name_free(name, "child");
  // A cycle would make every walk over the tree endless.
  bool cycle = false;
  visit_modules(*child, [&](const std::string&, Module& m) { cycle = cycle || &m == this; });
  DP_CHECK(!cycle, kInvalidArgument,
           "child \"" << name << "\" contains this " << type_name_ << ": that would make a cycle");
  children_.emplace_back(name, std::move(child));
}

Tensor Module::param(const std::string& name) const {
  for (const auto& [n, t] : params_) {
    if (n == name) return t;
  }
  return Tensor();
}

Tensor Module::buffer(const std::string& name) const {
  for (const auto& [n, t] : buffers_) {
    if (n == name) return t;
  }
  return Tensor();
}

void visit_modules(Module& root, const std::function<void(const std::string&, Module&)>& f) {
  std::function<void(const std::string&, Module&)> walk = [&](const std::string& prefix,
                                                              Module& m) {
    f(prefix, m);
    for (auto& [name, child] : m.children()) walk(prefix + name + ".", *child);
  };
  walk("", root);
}

Module::Named Module::named_parameters() const {
  Named out;
  std::unordered_set<const TensorImpl*> seen;
  visit_modules(const_cast<Module&>(*this), [&](const std::string& prefix, Module& m) {
    for (const auto& [n, t] : m.own_parameters()) {
      if (seen.insert(t.impl()).second) out.emplace_back(prefix + n, t);
    }
  });
  return out;
}

Module::Named Module::named_buffers() const {
  Named out;
  visit_modules(const_cast<Module&>(*this), [&](const std::string& prefix, Module& m) {
    for (const auto& [n, t] : m.own_buffers()) out.emplace_back(prefix + n, t);
  });
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [n, t] : named_parameters()) out.push_back(t);
  return out;
}

Module::Named Module::state() const {
  Named out;
  visit_modules(const_cast<Module&>(*this), [&](const std::string& prefix, Module& m) {
    for (const auto& [n, t] : m.own_parameters()) out.emplace_back(prefix + n, t);
    for (const auto& [n, t] : m.own_buffers()) out.emplace_back(prefix + n, t);
  });
  return out;
}

Tensor Module::get(const std::string& name) const {
  for (auto& [k, t] : state()) {
    if (k == name) return t;
  }
  DP_THROW(kOutOfRange,
           "the " << type_name_ << " has no parameter or buffer named \"" << name << "\"");
}

namespace {

std::pair<std::string, Tensor> entry_at(Module::Named list, size_t index, const char* what) {
  DP_CHECK(index < list.size(), kOutOfRange,
           "index = " << index << " but the module has " << list.size() << " " << what);
  return std::move(list[index]);
}

}  // namespace

std::pair<std::string, Tensor> Module::named_parameter(size_t index) const {
  return entry_at(named_parameters(), index, "parameters");
}

std::pair<std::string, Tensor> Module::named_buffer(size_t index) const {
  return entry_at(named_buffers(), index, "buffers");
}

void Module::train(bool training) {
  visit_modules(*this, [&](const std::string&, Module& m) { m.training_ = training; });
}

void Module::to(Device device) {
  ctx_->check_device(device, "device");
  GradModeGuard no_grad(false);
  std::unordered_map<const TensorImpl*, Tensor> moved;  // keeps tied parameters tied
  auto move = [&](Tensor& t, bool parameter) {
    if (t.device() == device) return;
    auto it = moved.find(t.impl());
    if (it != moved.end()) {
      t = it->second;
      return;
    }
    Tensor m = ops::to_device(t.detach(), device);
    if (parameter) m.set_requires_grad(true);
    moved.emplace(t.impl(), m);
    t = m;
  };
  visit_modules(*this, [&](const std::string&, Module& m) {
    for (auto& [n, t] : m.own_parameters()) move(t, true);
    for (auto& [n, t] : m.own_buffers()) move(t, false);
  });
}

bool Module::device(Device* out) const {
  bool found = false;
  visit_modules(const_cast<Module&>(*this), [&](const std::string&, Module& m) {
    if (found) return;
    if (!m.own_parameters().empty()) {
      *out = m.own_parameters().front().second.device();
      found = true;
    } else if (!m.own_buffers().empty()) {
      *out = m.own_buffers().front().second.device();
      found = true;
    }
  });
  return found;
}

void Module::zero_grad() {
  for (auto& [n, t] : named_parameters()) {
    if (t.is_leaf()) t.set_grad(Tensor());
  }
}

}  // namespace dp
