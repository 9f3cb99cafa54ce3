// Module: named parameters, named buffers and named children, a train/eval flag, and a
// forward. Names follow PyTorch for the same structure ("0.weight", "2.running_mean"), so
// checkpoints move between the two.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context/context.h"
#include "device/trace.h"
#include "tensor/tensor.h"

namespace dp {

class Context;

class Module : public std::enable_shared_from_this<Module> {
 public:
  using Named = std::vector<std::pair<std::string, Tensor>>;

  Module(std::shared_ptr<Context> ctx, std::string type_name);
  virtual ~Module() = default;

  // The computation, on the calling thread (operator() moves it to the right worker).
  virtual std::vector<Tensor> forward(const std::vector<Tensor>& inputs) = 0;
  // A copy of this module sharing its parameter, buffer and child entries; replicate()
  // then swaps the entries of the copy for the replica's own.
  virtual std::shared_ptr<Module> shallow_copy() const = 0;

  // Runs forward on the worker of the module's device (its first parameter's or buffer's,
  // else the first input's), in one hand-off however deep the module is.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);
  // Runs f (this module's forward) for `device`: on its worker thread when the module
  // holds user code (a callback module, documented to run there), else possibly inline
  // on this thread while the device is idle (Context::run).
  template <class F>
  auto run_forward_on(Device device, F&& f) {
    auto traced = [&f] {
      trace::Span span("module forward");
      return f();
    };
    return runs_user_code() ? ctx_->run_on_thread(device, traced) : ctx_->run(device, traced);
  }
  // Whether forward calls user code: this module's own (see CallbackModule) or a child's.
  virtual bool runs_user_code() const;

  const std::string& type_name() const { return type_name_; }
  const std::shared_ptr<Context>& context() const { return ctx_; }

  // --- registration (the tensor becomes a parameter: a leaf that requires grad) ---
  void register_parameter(const std::string& name, Tensor t);
  void register_buffer(const std::string& name, Tensor t);
  void register_module(const std::string& name, std::shared_ptr<Module> child);

  // --- access ---
  // This module's own entries, in registration order.
  Named& own_parameters() { return params_; }
  Named& own_buffers() { return buffers_; }
  std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() { return children_; }
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const {
    return children_;
  }
  // Own parameter or buffer by name; undefined Tensor if absent.
  Tensor param(const std::string& name) const;
  Tensor buffer(const std::string& name) const;
  // Recursive, with dotted names. Parameters used twice (tied) appear once, under their
  // first name, as torch.nn.Module.named_parameters() does.
  Named named_parameters() const;
  Named named_buffers() const;
  std::vector<Tensor> parameters() const;
  // Every parameter and buffer under every name (tied ones under each): the checkpoint.
  Named state() const;
  // A parameter or buffer by dotted name ("0.weight"); kOutOfRange naming it when absent.
  Tensor get(const std::string& name) const;
  // Entry `index` of named_parameters() (or named_buffers()); kOutOfRange naming the
  // index and the count when there is none.
  std::pair<std::string, Tensor> named_parameter(size_t index) const;
  std::pair<std::string, Tensor> named_buffer(size_t index) const;

  // --- state ---
  void train(bool training);  // recursive
  bool is_training() const { return training_; }
  // Moves every parameter and buffer to `device` (ties kept; gradients dropped).
  void to(Device device);
  // The device of the first parameter or buffer; nullopt-like: false when there are none.
  bool device(Device* out) const;
  void zero_grad();  // sets every parameter's grad to none

 protected:
  Module(const Module&) = default;
  // Throws kInvalidArgument if a parameter, buffer or child already has `name`.
  void check_name_free(const std::string& name, const char* what) const;

  std::shared_ptr<Context> ctx_;
  std::string type_name_;
  bool training_ = true;
  Named params_;
  Named buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// Visits every module of the tree, the root first, with its dotted prefix ("" for the
// root, "0." for its first child, ...).
void visit_modules(Module& root, const std::function<void(const std::string&, Module&)>& f);

}  // namespace dp
