/* Tensors through the C API: creation, queries, copies, caller memory, DLPack. */
#include <dlpack/dlpack.h>
#include <stdlib.h>

#include "test_util.h"

static int setup(void** state) {
  *state = make_context(2);
  return 0;
}

static int teardown(void** state) {
  dp_context_release((dp_context*)*state);
  return 0;
}

static void zeros_full_and_from_data_hold_the_expected_values(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[2] = {2, 3};
  dp_tensor* z = NULL;
  dp_tensor* f = NULL;
  ASSERT_OK(dp_tensor_zeros(ctx, DP_FLOAT32, shape, 2, cpu_dev(1), &z));
  ASSERT_OK(dp_tensor_full(ctx, DP_FLOAT64, shape, 2, -2.5, cpu_dev(0), &f));
  float zv[6];
  double fv[6];
  read_f32(z, zv, 6);
  ASSERT_OK(dp_tensor_to_host(f, fv, sizeof fv));
  for (int i = 0; i < 6; ++i) {
    assert_true(zv[i] == 0.0f);
    assert_true(fv[i] == -2.5);
  }
  const int64_t lv[4] = {7, -1, 0, 1LL << 40};
  const int64_t lshape[1] = {4};
  dp_tensor* l = NULL;
  ASSERT_OK(dp_tensor_from_data(ctx, DP_INT64, lshape, 1, lv, sizeof lv, cpu_dev(0), &l));
  int64_t back[4];
  ASSERT_OK(dp_tensor_to_host(l, back, sizeof back));
  assert_memory_equal(back, lv, sizeof lv);
  dp_tensor_release(z);
  dp_tensor_release(f);
  dp_tensor_release(l);
}

static void queries_report_dtype_shape_numel_and_device(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[3] = {4, 1, 5};
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_empty(ctx, DP_FLOAT64, shape, 3, cpu_dev(1), &t));
  dp_dtype dt;
  size_t ndim = 0, nbytes = 0;
  int64_t got[DP_MAX_DIMS], numel = 0, d = 0;
  dp_device dev;
  ASSERT_OK(dp_tensor_dtype(t, &dt));
  ASSERT_OK(dp_tensor_ndim(t, &ndim));
  ASSERT_OK(dp_tensor_shape(t, got, DP_MAX_DIMS));
  ASSERT_OK(dp_tensor_numel(t, &numel));
  ASSERT_OK(dp_tensor_nbytes(t, &nbytes));
  ASSERT_OK(dp_tensor_device(t, &dev));
  ASSERT_OK(dp_tensor_dim(t, -1, &d));
  assert_int_equal(dt, DP_FLOAT64);
  assert_int_equal(ndim, 3);
  assert_memory_equal(got, shape, sizeof shape);
  assert_int_equal(numel, 20);
  assert_int_equal(nbytes, 160);
  assert_int_equal(dev.type, DP_DEVICE_CPU);
  assert_int_equal(dev.index, 1);
  assert_int_equal(d, 5);
  ASSERT_ERROR(dp_tensor_dim(t, 3, &d), DP_ERR_OUT_OF_RANGE, "dim = 3");
  ASSERT_ERROR(dp_tensor_shape(t, got, 2), DP_ERR_OUT_OF_RANGE, "capacity = 2");
  dp_tensor_release(t);
}

static void a_scalar_tensor_has_no_dimensions_and_one_element(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_full(ctx, DP_FLOAT32, NULL, 0, 3.0, cpu_dev(0), &t));
  size_t ndim = 9;
  int64_t numel = 0;
  float v = 0;
  ASSERT_OK(dp_tensor_ndim(t, &ndim));
  ASSERT_OK(dp_tensor_numel(t, &numel));
  read_f32(t, &v, 1);
  assert_int_equal(ndim, 0);
  assert_int_equal(numel, 1);
  assert_true(v == 3.0f);
  dp_tensor_release(t);
}

static void creation_rejects_bad_arguments_naming_the_value(void** state) {
  dp_context* ctx = (dp_context*)*state;
  dp_tensor* t = NULL;
  const int64_t ok[2] = {2, 2};
  const int64_t neg[2] = {2, -3};
  const int64_t huge[3] = {1LL << 32, 1LL << 32, 4};
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  const float data[4] = {0};
  ASSERT_ERROR(dp_tensor_zeros(NULL, DP_FLOAT32, ok, 2, cpu_dev(0), &t), DP_ERR_INVALID_ARGUMENT,
               "ctx is NULL");
  ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, ok, 2, cpu_dev(0), NULL), DP_ERR_INVALID_ARGUMENT,
               "out is NULL");
  ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, neg, 2, cpu_dev(0), &t), DP_ERR_INVALID_ARGUMENT,
               "shape[1] = -3 is negative");
  ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, huge, 3, cpu_dev(0), &t), DP_ERR_OUT_OF_RANGE,
               "more elements than fit in 64 bits");
  ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, nine, 9, cpu_dev(0), &t), DP_ERR_OUT_OF_RANGE,
               "ndim = 9");
  ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, NULL, 2, cpu_dev(0), &t), DP_ERR_INVALID_ARGUMENT,
               "shape is NULL but ndim = 2");
  ASSERT_ERROR(dp_tensor_zeros(ctx, (dp_dtype)11, ok, 2, cpu_dev(0), &t), DP_ERR_INVALID_ARGUMENT,
               "dtype = 11");
  ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, ok, 2, cpu_dev(2), &t), DP_ERR_OUT_OF_RANGE,
               "device = cpu:2 but only 2 CPU devices exist");
  ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, ok, 2, cpu_dev(-1), &t), DP_ERR_OUT_OF_RANGE,
               "device = cpu:-1");
  ASSERT_ERROR(dp_tensor_from_data(ctx, DP_FLOAT32, ok, 2, data, 12, cpu_dev(0), &t),
               DP_ERR_INVALID_ARGUMENT, "nbytes = 12 but shape [2, 2] of float32 needs 16 bytes");
  ASSERT_ERROR(dp_tensor_from_data(ctx, DP_FLOAT32, ok, 2, NULL, 16, cpu_dev(0), &t),
               DP_ERR_INVALID_ARGUMENT, "data is NULL");
  assert_null(t);
}

static void to_host_and_copy_from_host_check_the_byte_count(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[1] = {3};
  const float v[3] = {1, 2, 3};
  dp_tensor* t = make_f32(ctx, v, shape, 1, cpu_dev(0));
  float out[4];
  ASSERT_ERROR(dp_tensor_to_host(t, out, 16), DP_ERR_INVALID_ARGUMENT,
               "dst_bytes = 16 but the tensor holds 12 bytes");
  ASSERT_ERROR(dp_tensor_to_host(t, NULL, 12), DP_ERR_INVALID_ARGUMENT, "dst is NULL");
  ASSERT_ERROR(dp_tensor_copy_from_host(t, v, 8), DP_ERR_INVALID_ARGUMENT, "src_bytes = 8");
  ASSERT_ERROR(dp_tensor_to_host(NULL, out, 12), DP_ERR_INVALID_ARGUMENT, "t is NULL");
  dp_tensor_release(t);
}

static void copy_from_host_overwrites_and_bumps_the_version(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[1] = {2};
  const float v[2] = {1, 2}, w[2] = {5, 6};
  dp_tensor* t = make_f32(ctx, v, shape, 1, cpu_dev(0));
  uint64_t v0 = 0, v1 = 0;
  ASSERT_OK(dp_tensor_version(t, &v0));
  ASSERT_OK(dp_tensor_copy_from_host(t, w, sizeof w));
  ASSERT_OK(dp_tensor_version(t, &v1));
  assert_int_equal(v1, v0 + 1);
  float out[2];
  read_f32(t, out, 2);
  assert_close_f32(out, w, 2, 0, 0);
  dp_tensor_release(t);
}

static void to_device_copies_between_cpu_devices(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[2] = {2, 2};
  const float v[4] = {1.5f, -2, 3, 4e-3f};
  dp_tensor* a = make_f32(ctx, v, shape, 2, cpu_dev(0));
  dp_tensor* b = NULL;
  ASSERT_OK(dp_tensor_to_device(a, cpu_dev(1), &b));
  dp_device dev;
  ASSERT_OK(dp_tensor_device(b, &dev));
  assert_int_equal(dev.index, 1);
  void* pa = NULL;
  void* pb = NULL;
  ASSERT_OK(dp_tensor_data(a, &pa));
  ASSERT_OK(dp_tensor_data(b, &pb));
  assert_ptr_not_equal(pa, pb); /* a copy, not an alias */
  float out[4];
  read_f32(b, out, 4);
  assert_close_f32(out, v, 4, 0, 0);
  ASSERT_ERROR(dp_tensor_to_device(a, cpu_dev(5), &b), DP_ERR_OUT_OF_RANGE, "cpu:5");
  dp_tensor_release(a);
  dp_tensor_release(b);
}

static void to_dtype_converts_values(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[1] = {3};
  const float v[3] = {1.75f, -2.5f, 3};
  dp_tensor* a = make_f32(ctx, v, shape, 1, cpu_dev(0));
  dp_tensor* d = NULL;
  dp_tensor* l = NULL;
  ASSERT_OK(dp_tensor_to_dtype(a, DP_FLOAT64, &d));
  ASSERT_OK(dp_tensor_to_dtype(a, DP_INT64, &l));
  double dv[3];
  int64_t lv[3];
  ASSERT_OK(dp_tensor_to_host(d, dv, sizeof dv));
  ASSERT_OK(dp_tensor_to_host(l, lv, sizeof lv));
  assert_true(dv[0] == 1.75 && dv[1] == -2.5 && dv[2] == 3.0);
  assert_true(lv[0] == 1 && lv[1] == -2 && lv[2] == 3); /* truncation toward zero */
  dp_tensor_release(a);
  dp_tensor_release(d);
  dp_tensor_release(l);
}

static void float_to_integer_saturates_and_maps_nan_to_zero(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[1] = {7};
  const float v[7] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 300.5f, -0.75f};
  dp_tensor* a = make_f32(ctx, v, shape, 1, cpu_dev(0));
  dp_tensor* l = NULL;
  ASSERT_OK(dp_tensor_to_dtype(a, DP_INT64, &l));
  int64_t lv[7];
  ASSERT_OK(dp_tensor_to_host(l, lv, sizeof lv));
  const int64_t want[7] = {0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 300, 0};
  for (int i = 0; i < 7; ++i) assert_true(lv[i] == want[i]);
  dp_tensor_release(a);
  dp_tensor_release(l);
}

static void borrowed_memory_is_shared_not_copied(void** state) {
  dp_context* ctx = (dp_context*)*state;
  float buf[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {2, 2};
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_from_borrowed(ctx, DP_FLOAT32, shape, 2, buf, sizeof buf, 1, &t));
  void* p = NULL;
  ASSERT_OK(dp_tensor_data(t, &p));
  assert_ptr_equal(p, buf);
  const float w[4] = {9, 8, 7, 6};
  ASSERT_OK(dp_tensor_copy_from_host(t, w, sizeof w));
  assert_true(buf[0] == 9 && buf[3] == 6); /* the library wrote the caller's memory */
  buf[1] = 42;
  float out[4];
  read_f32(t, out, 4);
  assert_true(out[1] == 42); /* and reads it */
  ASSERT_ERROR(dp_tensor_from_borrowed(ctx, DP_FLOAT32, shape, 2, (char*)buf + 1, 16, 0, &t),
               DP_ERR_INVALID_ARGUMENT, "not aligned");
  dp_tensor_release(t);
  assert_true(buf[2] == 7); /* releasing a borrow leaves the memory alone */
}

struct deleter_log {
  int calls;
  void* freed;
};

static void count_and_free(void* user, void* data) {
  struct deleter_log* log = (struct deleter_log*)user;
  log->calls++;
  log->freed = data;
  free(data);
}

static void adopted_memory_is_freed_once_when_the_last_tensor_goes(void** state) {
  dp_context* ctx = (dp_context*)*state;
  struct deleter_log log = {0, NULL};
  float* buf = (float*)malloc(6 * sizeof(float));
  for (int i = 0; i < 6; ++i) buf[i] = (float)i;
  const int64_t shape[1] = {6};
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_from_adopted(ctx, DP_FLOAT32, shape, 1, buf, 6 * sizeof(float), 0,
                                   count_and_free, &log, &t));
  dp_tensor* extra = dp_tensor_retain(t);
  assert_ptr_equal(extra, t);
  dp_tensor_release(t);
  assert_int_equal(log.calls, 0); /* still referenced */
  float out[6];
  read_f32(extra, out, 6);
  assert_true(out[5] == 5.0f);
  dp_tensor_release(extra);
  assert_int_equal(log.calls, 1);
  assert_ptr_equal(log.freed, buf);
}

static void adopt_calls_the_deleter_when_creation_fails(void** state) {
  dp_context* ctx = (dp_context*)*state;
  struct deleter_log log = {0, NULL};
  float* buf = (float*)malloc(4 * sizeof(float));
  const int64_t shape[1] = {4};
  dp_tensor* t = NULL;
  ASSERT_ERROR(
      dp_tensor_from_adopted(ctx, DP_FLOAT32, shape, 1, buf, 99, 0, count_and_free, &log, &t),
      DP_ERR_INVALID_ARGUMENT, "nbytes = 99");
  assert_int_equal(log.calls, 1);
  assert_null(t);
}

static void dlpack_export_shares_memory_and_keeps_it_alive(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[2] = {2, 3};
  const float v[6] = {1, 2, 3, 4, 5, 6};
  dp_tensor* t = make_f32(ctx, v, shape, 2, cpu_dev(0));
  DLManagedTensor* m = NULL;
  ASSERT_OK(dp_tensor_to_dlpack(t, &m));
  void* p = NULL;
  ASSERT_OK(dp_tensor_data(t, &p));
  assert_ptr_equal(m->dl_tensor.data, p);
  assert_int_equal(m->dl_tensor.ndim, 2);
  assert_int_equal(m->dl_tensor.shape[0], 2);
  assert_int_equal(m->dl_tensor.shape[1], 3);
  assert_int_equal(m->dl_tensor.dtype.code, kDLFloat);
  assert_int_equal(m->dl_tensor.dtype.bits, 32);
  assert_int_equal(m->dl_tensor.device.device_type, kDLCPU);
  dp_tensor_release(t); /* the export keeps the memory */
  assert_true(((float*)m->dl_tensor.data)[5] == 6.0f);
  m->deleter(m);
}

static void dlpack_import_wraps_without_copy_and_calls_the_deleter(void** state) {
  dp_context* ctx = (dp_context*)*state;
  const int64_t shape[2] = {3, 2};
  const float v[6] = {6, 5, 4, 3, 2, 1};
  dp_tensor* src = make_f32(ctx, v, shape, 2, cpu_dev(0));
  DLManagedTensor* m = NULL;
  ASSERT_OK(dp_tensor_to_dlpack(src, &m));
  dp_tensor_release(src);
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_from_dlpack(ctx, m, &t));
  void* p = NULL;
  ASSERT_OK(dp_tensor_data(t, &p));
  assert_ptr_equal(p, m->dl_tensor.data);
  float out[6];
  read_f32(t, out, 6);
  assert_close_f32(out, v, 6, 0, 0);
  dp_tensor_release(t); /* runs m's deleter; ASan/valgrind see a leak otherwise */
}

static void dlpack_import_rejects_unsupported_tensors_without_taking_them(void** state) {
  dp_context* ctx = (dp_context*)*state;
  int64_t shape[2] = {2, 2};
  int64_t strides[2] = {1, 2}; /* column-major */
  float data[4] = {0};
  DLManagedTensor m;
  memset(&m, 0, sizeof m);
  m.dl_tensor.data = data;
  m.dl_tensor.device.device_type = kDLCPU;
  m.dl_tensor.ndim = 2;
  m.dl_tensor.dtype.code = kDLFloat;
  m.dl_tensor.dtype.bits = 32;
  m.dl_tensor.dtype.lanes = 1;
  m.dl_tensor.shape = shape;
  m.dl_tensor.strides = strides;
  dp_tensor* t = NULL;
  ASSERT_ERROR(dp_tensor_from_dlpack(ctx, &m, &t), DP_ERR_NOT_SUPPORTED, "not compact row-major");
  m.dl_tensor.strides = NULL;
  m.dl_tensor.dtype.bits = 16;
  ASSERT_ERROR(dp_tensor_from_dlpack(ctx, &m, &t), DP_ERR_DTYPE_MISMATCH, "16 bits");
  m.dl_tensor.dtype.bits = 32;
  m.dl_tensor.device.device_type = kDLMetal;
  ASSERT_ERROR(dp_tensor_from_dlpack(ctx, &m, &t), DP_ERR_NOT_SUPPORTED, "device type 8");
  ASSERT_ERROR(dp_tensor_from_dlpack(ctx, NULL, &t), DP_ERR_INVALID_ARGUMENT, "src is NULL");
  assert_null(t);
}

static void release_accepts_null(void** state) {
  (void)state;
  dp_tensor_release(NULL);
  assert_null(dp_tensor_retain(NULL));
}

/* A tensor gives back its context, also after the creator released its own reference:
   tensors made through it sit beside the first on the same devices. */
static void a_tensor_gives_its_context_even_after_the_creator_released_it(void** state) {
  (void)state;
  dp_context* ctx = make_context(3);
  const int64_t shape[1] = {2};
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_full(ctx, DP_FLOAT32, shape, 1, 1.5, cpu_dev(2), &t));
  dp_context_release(ctx); /* t keeps the context alive */
  dp_context* again = NULL;
  ASSERT_OK(dp_tensor_context(t, &again));
  int32_t n = 0;
  ASSERT_OK(dp_device_count(again, DP_DEVICE_CPU, &n));
  assert_int_equal(n, 3);
  dp_tensor* u = NULL;
  ASSERT_OK(dp_tensor_full(again, DP_FLOAT32, shape, 1, 2.0, cpu_dev(2), &u));
  dp_tensor* sum = NULL;
  ASSERT_OK(dp_op_add(t, u, &sum));
  float got[2];
  read_f32(sum, got, 2);
  assert_true(got[0] == 3.5f && got[1] == 3.5f);
  dp_tensor_release(sum);
  dp_tensor_release(u);
  dp_context_release(again);
  dp_tensor_release(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(zeros_full_and_from_data_hold_the_expected_values),
      cmocka_unit_test(a_tensor_gives_its_context_even_after_the_creator_released_it),
      cmocka_unit_test(queries_report_dtype_shape_numel_and_device),
      cmocka_unit_test(a_scalar_tensor_has_no_dimensions_and_one_element),
      cmocka_unit_test(creation_rejects_bad_arguments_naming_the_value),
      cmocka_unit_test(to_host_and_copy_from_host_check_the_byte_count),
      cmocka_unit_test(copy_from_host_overwrites_and_bumps_the_version),
      cmocka_unit_test(to_device_copies_between_cpu_devices),
      cmocka_unit_test(to_dtype_converts_values),
      cmocka_unit_test(float_to_integer_saturates_and_maps_nan_to_zero),
      cmocka_unit_test(borrowed_memory_is_shared_not_copied),
      cmocka_unit_test(adopted_memory_is_freed_once_when_the_last_tensor_goes),
      cmocka_unit_test(adopt_calls_the_deleter_when_creation_fails),
      cmocka_unit_test(dlpack_export_shares_memory_and_keeps_it_alive),
      cmocka_unit_test(dlpack_import_wraps_without_copy_and_calls_the_deleter),
      cmocka_unit_test(dlpack_import_rejects_unsupported_tensors_without_taking_them),
      cmocka_unit_test(release_accepts_null),
  };
  return cmocka_run_group_tests_name("tensor", tests, setup, teardown);
}
