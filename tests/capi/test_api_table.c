/* dp_get_api: the versioned function table. */
#include "test_util.h"

static void get_api_returns_null_for_unknown_versions(void** state) {
  (void)state;
  assert_null(dp_get_api(0));
  assert_null(dp_get_api(DP_API_VERSION + 1));
  assert_null(dp_get_api(UINT32_MAX));
}

static void get_api_fills_every_member(void** state) {
  (void)state;
  const dp_api* api = dp_get_api(DP_API_VERSION);
  assert_non_null(api);
  assert_int_equal(api->version, DP_API_VERSION);
  assert_int_equal(api->struct_size, sizeof(dp_api));
  /* Every member after the header fields is a function pointer; none may be missing. */
  const size_t first = offsetof(dp_api, version_number);
  const size_t count = (sizeof(dp_api) - first) / sizeof(void (*)(void));
  const char* base = (const char*)api + first;
  for (size_t i = 0; i < count; ++i) {
    void (*fn)(void) = NULL;
    memcpy(&fn, base + i * sizeof fn, sizeof fn);
    if (fn == NULL) fail_msg("dp_api member %zu is NULL", i);
  }
  assert_ptr_equal(api->tensor_zeros, dp_tensor_zeros);
  assert_ptr_equal(api->context_release, dp_context_release);
  assert_ptr_equal(api->tensor_from_dlpack, dp_tensor_from_dlpack);
  /* The last members of each version: the table follows the header's order to its end. */
  assert_ptr_equal(api->ddp_release, dp_ddp_release);         /* version 2 */
  assert_ptr_equal(api->autocast_dtype, dp_autocast_dtype);   /* version 3 */
  assert_ptr_equal(api->ddp_reset_stats, dp_ddp_reset_stats); /* version 4 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(get_api_returns_null_for_unknown_versions),
      cmocka_unit_test(get_api_fills_every_member),
  };
  return cmocka_run_group_tests_name("api_table", tests, NULL, NULL);
}
