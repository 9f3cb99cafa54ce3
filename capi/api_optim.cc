// dp_optimizer_*: SGD, Adam and AdamW over a module's parameters.
#include "capi/handles.h"
#include "capi/options.h"
#include "capi/result.h"

using namespace dp::capi;

namespace {

template <class F>
dp_result make(const dp_module* m, dp_optimizer** out, F&& f) {
  return guard([&] {
    dp_module* h = check(m, "m");
    out_ptr(out, "out");
    auto opt = std::make_unique<dp_optimizer>();
    opt->rep = f(h->rep->parameters());
    opt->ctx = retain(h->ctx);
    *out = opt.release();
  });
}

dp::AdamOptions adam_options(const dp_adam_options* o, bool decoupled) {
  const dp_adam_options d = read_options(
      o, decoupled ? dp_adam_options DP_ADAMW_OPTIONS_INIT : dp_adam_options DP_ADAM_OPTIONS_INIT,
      "options",
      {"dp_adam_options", decoupled ? "DP_ADAMW_OPTIONS_INIT" : "DP_ADAM_OPTIONS_INIT",
       offsetof(dp_adam_options, lr)});
  return {d.lr, d.beta1, d.beta2, d.eps, d.weight_decay, decoupled};
}

}  // namespace

extern "C" {

dp_result dp_optimizer_sgd(const dp_module* m, const dp_sgd_options* options, dp_optimizer** out) {
  return make(m, out, [&](std::vector<dp::Tensor> params) {
    const dp_sgd_options o =
        read_options(options, dp_sgd_options DP_SGD_OPTIONS_INIT, "options",
                     {"dp_sgd_options", "DP_SGD_OPTIONS_INIT", offsetof(dp_sgd_options, lr)});
    return std::make_unique<dp::Sgd>(
        std::move(params),
        dp::SgdOptions{o.lr, o.momentum, o.dampening, o.weight_decay, o.nesterov != 0});
  });
}

dp_result dp_optimizer_adam(const dp_module* m, const dp_adam_options* options,
                            dp_optimizer** out) {
  return make(m, out, [&](std::vector<dp::Tensor> params) {
    return std::make_unique<dp::Adam>(std::move(params), adam_options(options, false));
  });
}

dp_result dp_optimizer_adamw(const dp_module* m, const dp_adam_options* options,
                             dp_optimizer** out) {
  return make(m, out, [&](std::vector<dp::Tensor> params) {
    return std::make_unique<dp::Adam>(std::move(params), adam_options(options, true));
  });
}

dp_result dp_optimizer_step(dp_optimizer* opt) {
  return guard([&] { check(opt, "opt")->rep->step(); });
}

dp_result dp_optimizer_zero_grad(dp_optimizer* opt) {
  return guard([&] { check(opt, "opt")->rep->zero_grad(); });
}

dp_result dp_optimizer_set_lr(dp_optimizer* opt, double lr) {
  return guard([&] { check(opt, "opt")->rep->set_lr(lr); });
}

dp_result dp_optimizer_lr(const dp_optimizer* opt, double* out) {
  return guard([&] { *out_ptr(out, "out") = check(opt, "opt")->rep->lr(); });
}

void dp_optimizer_release(dp_optimizer* opt) {
  if (!opt) return;
  dp_context* ctx = opt->ctx;
  opt->tag = Tag::kDead;
  delete opt;
  release(ctx);
}

}  // extern "C"
