// dp_get_api: the append-only table of every public function.
#include "dataparallel/dataparallel.h"

namespace {

const dp_api kApi = {
    /*version=*/DP_API_VERSION,
    /*struct_size=*/sizeof(dp_api),
#define DP_FN(name) /*name=*/ &dp_##name,
#include "capi/api_functions.inc"
#undef DP_FN
};

}  // namespace

extern "C" const dp_api* dp_get_api(uint32_t version) {
  if (version == 0 || version > DP_API_VERSION) return nullptr;
  return &kApi;
}
