// DLPack export and import.
#include "capi/handles.h"
#include "capi/result.h"
#include "io/dlpack.h"

using namespace dp::capi;

extern "C" {

dp_result dp_tensor_to_dlpack(const dp_tensor* t, struct DLManagedTensor** out) {
  return guard([&] {
    const dp::Tensor& x = unwrap(t, "t");
    out_ptr(out, "out");  // checked before the export is made, so a NULL out leaks nothing
    *out = dp::to_dlpack(x);
  });
}

dp_result dp_tensor_from_dlpack(dp_context* ctx, struct DLManagedTensor* src, dp_tensor** out) {
  return guard([&] {
    const auto& c = unwrap(ctx, "ctx");
    out_ptr(out, "out");
    DP_CHECK(src != nullptr, kInvalidArgument, "src is NULL");
    // The handle first: once the tensor owns src nothing may fail, or src would be freed
    // by us and by the caller.
    auto h = std::make_unique<dp_tensor>();
    h->rep = dp::from_dlpack(c, src);
    h->ctx = retain(ctx);
    *out = h.release();
  });
}

}  // extern "C"
