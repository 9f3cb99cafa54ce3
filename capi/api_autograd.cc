// Gradients, backward and grad mode.
#include "autograd/autocast_mode.h"
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "capi/handles.h"
#include "capi/result.h"

using namespace dp::capi;

extern "C" {

dp_result dp_tensor_set_requires_grad(dp_tensor* t, int requires_grad) {
  return guard([&] { check(t, "t")->rep.set_requires_grad(requires_grad != 0); });
}

dp_result dp_tensor_requires_grad(const dp_tensor* t, int* out) {
  return guard([&] { *out_ptr(out, "out") = unwrap(t, "t").requires_grad() ? 1 : 0; });
}

dp_result dp_tensor_grad(const dp_tensor* t, dp_tensor** out) {
  return guard([&] {
    const dp::Tensor g = unwrap(t, "t").grad();
    out_ptr(out, "out");  // checked before anything is made that could leak
    *out = g.defined() ? wrap(g, t->ctx) : nullptr;
  });
}

dp_result dp_tensor_zero_grad(dp_tensor* t) {
  return guard([&] { check(t, "t")->rep.set_grad(dp::Tensor()); });
}

dp_result dp_tensor_detach(const dp_tensor* t, dp_tensor** out) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    out_ptr(out, "out");
    *out = wrap(x.detach(), t->ctx);
  });
}

dp_result dp_backward(dp_tensor* t, const dp_tensor* grad, int retain_graph) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    const dp::Tensor g = unwrap_optional_in(t->ctx, "t", grad, "grad");
    dp::backward({x}, {g}, {.retain_graph = retain_graph != 0});
  });
}

int dp_is_grad_enabled(void) {
  return dp::GradMode::enabled() ? 1 : 0;
}

int dp_set_grad_enabled(int enabled) {
  const int previous = dp::GradMode::enabled() ? 1 : 0;
  dp::GradMode::set(enabled != 0);
  return previous;
}

dp_result dp_set_autocast(dp_dtype dtype, dp_dtype* previous) {
  return guard([&] {
    DP_CHECK(dtype == DP_FLOAT32 || dtype == DP_BFLOAT16, kInvalidArgument,
             "dtype = " << static_cast<int>(dtype)
                        << " is not an autocast dtype (DP_BFLOAT16 = 3 turns autocast on, "
                           "DP_FLOAT32 = 0 turns it off)");
    if (previous) *previous = to_c(dp::AutocastMode::dtype());
    dp::AutocastMode::set(to_core(dtype, "dtype"));
  });
}

dp_dtype dp_autocast_dtype(void) {
  return to_c(dp::AutocastMode::dtype());
}

dp_result dp_set_error(dp_result code, const char* message) {
  return set_error(code, message ? message : "");
}

}  // extern "C"
