/* The context, devices, versions and error reporting of the C API. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

static void version_number_matches_the_header_macros(void** state) {
  (void)state;
  assert_int_equal(dp_version_number(), DP_VERSION_NUMBER);
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", DP_VERSION_MAJOR, DP_VERSION_MINOR, DP_VERSION_PATCH);
  assert_string_equal(dp_version_string(), expect);
}

static void result_string_names_every_code(void** state) {
  (void)state;
  assert_string_equal(dp_result_string(DP_OK), "ok");
  assert_string_equal(dp_result_string(DP_ERR_INVALID_ARGUMENT), "invalid argument");
  assert_string_equal(dp_result_string(DP_ERR_OUT_OF_MEMORY), "out of memory");
  for (int c = DP_OK; c <= DP_ERR_INTERNAL; ++c) {
    assert_non_null(dp_result_string((dp_result)c));
    assert_string_not_equal(dp_result_string((dp_result)c), "unknown result code");
  }
  assert_string_equal(dp_result_string((dp_result)999), "unknown result code");
}

static void context_creates_the_requested_cpu_devices(void** state) {
  (void)state;
  dp_context* ctx = make_context(3);
  int32_t n = -1;
  ASSERT_OK(dp_device_count(ctx, DP_DEVICE_CPU, &n));
  assert_int_equal(n, 3);
  ASSERT_OK(dp_device_count(ctx, DP_DEVICE_CUDA, &n));
  assert_int_equal(n, 0);
  dp_context_release(ctx);
}

static void context_defaults_to_dp_cpu_devices_from_the_environment(void** state) {
  (void)state;
  setenv("DP_CPU_DEVICES", "5", 1);
  dp_context* ctx = NULL;
  ASSERT_OK(dp_context_create(NULL, &ctx));
  int32_t n = 0;
  ASSERT_OK(dp_device_count(ctx, DP_DEVICE_CPU, &n));
  assert_int_equal(n, 5);
  dp_context_release(ctx);

  setenv("DP_CPU_DEVICES", "two", 1);
  ctx = NULL;
  ASSERT_ERROR(dp_context_create(NULL, &ctx), DP_ERR_INVALID_ARGUMENT, "DP_CPU_DEVICES = \"two\"");
  assert_null(ctx);
  unsetenv("DP_CPU_DEVICES");
}

static void context_rejects_bad_options_naming_the_field(void** state) {
  (void)state;
  dp_context* ctx = NULL;
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = -2;
  ASSERT_ERROR(dp_context_create(&o, &ctx), DP_ERR_INVALID_ARGUMENT, "cpu_devices = -2");
  /* A thread per device: past 4096 (DP_CPU_DEVICES's bound too), thread creation failed
     as an internal error, and INT32_MAX as out of memory naming nothing. */
  o.cpu_devices = 100000;
  ASSERT_ERROR(dp_context_create(&o, &ctx), DP_ERR_INVALID_ARGUMENT,
               "cpu_devices = 100000 is not between 0 (the default) and 4096");
  o.cpu_devices = INT32_MAX;
  ASSERT_ERROR(dp_context_create(&o, &ctx), DP_ERR_INVALID_ARGUMENT,
               "cpu_devices = 2147483647 is not between 0 (the default) and 4096");
  assert_null(ctx);
  o = (dp_context_options)DP_CONTEXT_OPTIONS_INIT;
  o.struct_size = 8;
  ASSERT_ERROR(dp_context_create(&o, &ctx), DP_ERR_INVALID_ARGUMENT, "struct_size = 8");
  o = (dp_context_options)DP_CONTEXT_OPTIONS_INIT;
  o.log_level = (dp_log_level)9;
  ASSERT_ERROR(dp_context_create(&o, &ctx), DP_ERR_INVALID_ARGUMENT, "log_level = 9");
  ASSERT_ERROR(dp_context_create(NULL, NULL), DP_ERR_INVALID_ARGUMENT, "out is NULL");
  assert_null(ctx);
}

struct log_record {
  int calls;
  char last[512];
};

static void record_log(void* user, dp_log_level level, const char* message) {
  struct log_record* r = (struct log_record*)user;
  (void)level;
  r->calls++;
  snprintf(r->last, sizeof r->last, "%s", message);
}

static void context_without_gpu_reports_zero_cuda_devices_and_logs_why(void** state) {
  (void)state;
  struct log_record rec = {0, ""};
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 1;
  o.load_cuda = 1;
  o.log_level = DP_LOG_INFO;
  o.log_fn = record_log;
  o.log_user_data = &rec;
  dp_context* ctx = NULL;
  ASSERT_OK(dp_context_create(&o, &ctx));
  int32_t n = -1;
  ASSERT_OK(dp_device_count(ctx, DP_DEVICE_CUDA, &n));
  if (n == 0) {
    /* This machine has no GPU: the reason reached the log, and CPU devices work. */
    assert_true(rec.calls >= 1);
    assert_non_null(strstr(rec.last, "CPU devices only"));
    dp_device bad = {DP_DEVICE_CUDA, 0};
    dp_tensor* t = NULL;
    int64_t shape[1] = {2};
    ASSERT_ERROR(dp_tensor_zeros(ctx, DP_FLOAT32, shape, 1, bad, &t), DP_ERR_OUT_OF_RANGE,
                 "only 0 CUDA devices exist");
  }
  dp_context_release(ctx);
}

static void log_is_silent_by_default(void** state) {
  (void)state;
  /* Nothing to observe but that creation with load_cuda and no callback succeeds. */
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 1;
  dp_context* ctx = NULL;
  ASSERT_OK(dp_context_create(&o, &ctx));
  dp_context_release(ctx);
}

static void device_name_is_copied_and_truncated_safely(void** state) {
  (void)state;
  dp_context* ctx = make_context(2);
  char buf[64];
  size_t needed = 0;
  ASSERT_OK(dp_device_name(ctx, cpu_dev(1), buf, sizeof buf, &needed));
  assert_int_equal(strncmp(buf, "cpu:1", 5), 0);
  assert_int_equal(needed, strlen(buf) + 1);
  char small[4];
  ASSERT_OK(dp_device_name(ctx, cpu_dev(1), small, sizeof small, &needed));
  assert_string_equal(small, "cpu");
  ASSERT_OK(dp_device_name(ctx, cpu_dev(0), NULL, 0, &needed));
  assert_true(needed > 5);
  ASSERT_ERROR(dp_device_name(ctx, cpu_dev(2), buf, sizeof buf, NULL), DP_ERR_OUT_OF_RANGE,
               "device = cpu:2 but only 2 CPU devices exist");
  ASSERT_ERROR(dp_device_name(ctx, cpu_dev(0), NULL, 8, NULL), DP_ERR_INVALID_ARGUMENT,
               "buf is NULL but buf_size = 8");
  dp_context_release(ctx);
}

static void device_memory_reports_host_memory_for_cpu(void** state) {
  (void)state;
  dp_context* ctx = make_context(1);
  uint64_t free_bytes = 0, total = 0;
  ASSERT_OK(dp_device_memory(ctx, cpu_dev(0), &free_bytes, &total));
  assert_true(total > 0);
  assert_true(free_bytes <= total);
  ASSERT_OK(dp_device_synchronize(ctx, cpu_dev(0)));
  dp_device bad = {(dp_device_type)7, 0};
  ASSERT_ERROR(dp_device_memory(ctx, bad, &free_bytes, &total), DP_ERR_INVALID_ARGUMENT,
               "device type 7");
  dp_context_release(ctx);
}

static void null_and_bad_handles_are_rejected_by_name(void** state) {
  (void)state;
  int32_t n = 0;
  ASSERT_ERROR(dp_device_count(NULL, DP_DEVICE_CPU, &n), DP_ERR_INVALID_ARGUMENT, "ctx is NULL");
  dp_context* ctx = make_context(1);
  ASSERT_ERROR(dp_device_count(ctx, DP_DEVICE_CPU, NULL), DP_ERR_INVALID_ARGUMENT, "out is NULL");
  ASSERT_ERROR(dp_device_count(ctx, (dp_device_type)3, &n), DP_ERR_INVALID_ARGUMENT, "type = 3");
  /* A tensor handle passed where a context is expected. */
  int64_t shape[1] = {1};
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_zeros(ctx, DP_FLOAT32, shape, 1, cpu_dev(0), &t));
  ASSERT_ERROR(dp_device_count((const dp_context*)t, DP_DEVICE_CPU, &n), DP_ERR_INVALID_ARGUMENT,
               "not a live dp_context handle");
  dp_tensor_release(t);
  dp_context_release(ctx);
  dp_context_release(NULL);
}

static void* read_last_error(void* out) {
  snprintf((char*)out, 256, "%s", dp_last_error());
  return NULL;
}

static void last_error_is_per_thread_and_kept_until_the_next_failure(void** state) {
  (void)state;
  int32_t n = 0;
  assert_int_equal(dp_device_count(NULL, DP_DEVICE_CPU, &n), DP_ERR_INVALID_ARGUMENT);
  dp_context* ctx = make_context(1);
  ASSERT_OK(dp_device_count(ctx, DP_DEVICE_CPU, &n));
  assert_non_null(strstr(dp_last_error(), "ctx is NULL")); /* success leaves it alone */
  char other[256] = "unset";
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, read_last_error, other), 0);
  pthread_join(th, NULL);
  assert_string_equal(other, ""); /* another thread has no error yet */
  dp_context_release(ctx);
}

static void a_tensor_keeps_its_context_alive_after_context_release(void** state) {
  (void)state;
  dp_context* ctx = make_context(2);
  const float v[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  dp_tensor* a = make_f32(ctx, v, shape, 1, cpu_dev(0));
  dp_context_release(ctx);
  dp_tensor* b = NULL;
  ASSERT_OK(dp_tensor_to_device(a, cpu_dev(1), &b));
  float out[3];
  read_f32(b, out, 3);
  assert_close_f32(out, v, 3, 0, 0);
  dp_tensor_release(a);
  dp_tensor_release(b);
}

static void count_free(void* user) {
  ((struct log_record*)user)->calls += 1000;
}

/* log_user_data_free runs once, when the context's last object goes (here a tensor that
   outlives dp_context_release), and not at all when creating the context fails. A struct
   from a header without the member (struct_size ending before it) leaves it unset. */
static void the_log_data_is_freed_once_when_the_context_ends(void** state) {
  (void)state;
  struct log_record rec = {0, ""};
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 1;
  o.load_cuda = 0;
  o.log_fn = record_log;
  o.log_user_data = &rec;
  o.log_user_data_free = count_free;
  dp_context* ctx = NULL;
  ASSERT_OK(dp_context_create(&o, &ctx));
  int64_t shape[1] = {2};
  dp_tensor* t = NULL;
  ASSERT_OK(dp_tensor_zeros(ctx, DP_FLOAT32, shape, 1, cpu_dev(0), &t));
  dp_context_release(ctx);
  assert_int_equal(rec.calls, 0); /* the tensor keeps the context */
  dp_tensor_release(t);
  assert_int_equal(rec.calls, 1000);

  o.log_level = (dp_log_level)7; /* refused: the data stays the caller's */
  assert_int_equal(dp_context_create(&o, &ctx), DP_ERR_INVALID_ARGUMENT);
  assert_int_equal(rec.calls, 1000);

  o.log_level = DP_LOG_WARNING;
  o.struct_size = offsetof(dp_context_options, log_user_data_free);
  ASSERT_OK(dp_context_create(&o, &ctx));
  dp_context_release(ctx);
  assert_int_equal(rec.calls, 1000);
}

/* A custom forward that returns the tensor of another context held in user_data. */
static dp_result forward_returning_foreign(void* user_data, dp_module* self,
                                           dp_tensor* const* inputs, size_t n_inputs,
                                           dp_tensor** outputs, size_t max_outputs,
                                           size_t* n_outputs) {
  (void)self, (void)inputs, (void)n_inputs, (void)max_outputs;
  outputs[0] = dp_tensor_retain((dp_tensor*)user_data);
  *n_outputs = 1;
  return DP_OK;
}

static void objects_of_two_contexts_are_refused_naming_the_argument(void** state) {
  (void)state;
  dp_context* a = make_context(2);
  dp_context* b = make_context(2);
  const float v[4] = {1, 2, 3, 4};
  const int64_t shape[2] = {2, 2};
  dp_tensor* xa = make_f32(a, v, shape, 2, cpu_dev(0));
  dp_tensor* ya = make_f32(a, v, shape, 2, cpu_dev(0));
  dp_tensor* xb = make_f32(b, v, shape, 2, cpu_dev(0));
  dp_tensor* out = NULL;

  /* Within one context the same calls work. */
  ASSERT_OK(dp_op_add(xa, ya, &out));
  float sum[4];
  read_f32(out, sum, 4);
  const float want[4] = {2, 4, 6, 8};
  assert_close_f32(sum, want, 4, 0, 0);
  dp_tensor_release(out);
  out = NULL;

  ASSERT_ERROR(dp_op_add(xa, xb, &out), DP_ERR_INVALID_ARGUMENT,
               "add: b belongs to another dp_context than a");
  assert_null(out);
  ASSERT_ERROR(dp_op_matmul(xb, xa, &out), DP_ERR_INVALID_ARGUMENT,
               "matmul: b belongs to another dp_context than a");
  ASSERT_ERROR(dp_op_linear(xa, ya, xb, &out), DP_ERR_INVALID_ARGUMENT,
               "linear: bias belongs to another dp_context than x");
  ASSERT_ERROR(dp_op_batch_norm(xa, NULL, NULL, NULL, xb, 1, 0.1, 1e-5, &out),
               DP_ERR_INVALID_ARGUMENT, "batch_norm: running_var belongs to another dp_context");
  const dp_tensor* three[3] = {xa, ya, xb};
  ASSERT_ERROR(dp_op_cat(three, 3, 0, &out), DP_ERR_INVALID_ARGUMENT,
               "cat: tensors[2] belongs to another dp_context than tensors[0]");
  dp_tensor* mixed[2] = {xa, xb};
  ASSERT_ERROR(dp_gather(mixed, 2, cpu_dev(0), 0, &out), DP_ERR_INVALID_ARGUMENT,
               "tensors[1] belongs to another dp_context than tensors[0]");
  assert_null(out);

  /* backward with a gradient of the other context. */
  ASSERT_OK(dp_tensor_set_requires_grad(xa, 1));
  dp_tensor* loss = NULL;
  ASSERT_OK(dp_op_mul(xa, ya, &loss));
  ASSERT_ERROR(dp_backward(loss, xb, 0), DP_ERR_INVALID_ARGUMENT,
               "grad belongs to another dp_context than t");
  dp_tensor* grad = NULL;
  ASSERT_OK(dp_tensor_grad(xa, &grad));
  assert_null(grad); /* nothing ran */
  dp_tensor_release(loss);

  /* Modules: inputs, parameters, children, optimizers and DataParallel. */
  dp_module* la = NULL;
  dp_module* lb = NULL;
  dp_module* seq = NULL;
  ASSERT_OK(dp_module_linear(a, 2, 2, 1, cpu_dev(0), &la));
  ASSERT_OK(dp_module_linear(b, 2, 2, 1, cpu_dev(0), &lb));
  ASSERT_OK(dp_module_sequential(a, &seq));
  ASSERT_ERROR(dp_module_forward1(la, xb, &out), DP_ERR_INVALID_ARGUMENT,
               "input belongs to another dp_context than m");
  size_t n_out = 0;
  ASSERT_ERROR(dp_module_forward(la, mixed + 1, 1, &out, 1, &n_out), DP_ERR_INVALID_ARGUMENT,
               "inputs[0] belongs to another dp_context than m");
  ASSERT_ERROR(dp_module_append(seq, lb), DP_ERR_INVALID_ARGUMENT,
               "child belongs to another dp_context than sequential");
  ASSERT_ERROR(dp_module_register_child(seq, "b", lb), DP_ERR_INVALID_ARGUMENT,
               "child belongs to another dp_context than m");
  dp_tensor* pb = make_f32(b, v, shape, 2, cpu_dev(0));
  ASSERT_ERROR(dp_module_register_parameter(seq, "p", pb), DP_ERR_INVALID_ARGUMENT,
               "t belongs to another dp_context than m");
  ASSERT_ERROR(dp_module_register_buffer(seq, "p", pb), DP_ERR_INVALID_ARGUMENT,
               "t belongs to another dp_context than m");
  size_t n_params = 9;
  ASSERT_OK(dp_module_parameter_count(seq, &n_params));
  size_t n_buffers = 9;
  ASSERT_OK(dp_module_buffer_count(seq, &n_buffers));
  assert_int_equal(n_buffers, 0);
  assert_int_equal(n_params, 0);        /* nothing was added */
  ASSERT_OK(dp_module_append(seq, la)); /* a child of its own context is taken */

  dp_optimizer* opt_b = NULL;
  ASSERT_OK(dp_optimizer_sgd(lb, NULL, &opt_b));
  ASSERT_ERROR(dp_checkpoint_save(la, opt_b, "never-written.safetensors", NULL, 0),
               DP_ERR_INVALID_ARGUMENT, "opt belongs to another dp_context than m");
  ASSERT_ERROR(dp_checkpoint_load(la, opt_b, "never-read.safetensors"), DP_ERR_INVALID_ARGUMENT,
               "opt belongs to another dp_context than m");
  assert_int_equal(access("never-written.safetensors", F_OK), -1);

  dp_data_parallel* dpw = NULL;
  ASSERT_OK(dp_data_parallel_create(la, NULL, 0, NULL, 0, NULL, &dpw));
  ASSERT_ERROR(dp_data_parallel_forward(dpw, mixed + 1, NULL, 1, &out, 1, &n_out),
               DP_ERR_INVALID_ARGUMENT, "inputs[0] belongs to another dp_context than dp");
  ASSERT_ERROR(dp_data_parallel_apply(la, mixed, NULL, 2, NULL, 0, NULL, 0, &out, 1, &n_out),
               DP_ERR_INVALID_ARGUMENT, "inputs[1] belongs to another dp_context than module");
  dp_module* reps[2] = {la, lb};
  dp_tensor* outs[2] = {NULL, NULL};
  const dp_device devs[2] = {cpu_dev(0), cpu_dev(1)};
  ASSERT_ERROR(dp_parallel_apply(reps, 2, mixed, 1, devs, outs), DP_ERR_INVALID_ARGUMENT,
               "replicas[1] belongs to another dp_context than replicas[0]");
  reps[1] = la;
  ASSERT_ERROR(dp_parallel_apply(reps, 2, mixed, 1, devs, outs), DP_ERR_INVALID_ARGUMENT,
               "inputs[1] belongs to another dp_context than replicas[0]");
  assert_null(outs[0]);
  assert_null(outs[1]);

  /* A custom forward that returns another context's tensor fails the forward. */
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.type_name = "Foreign";
  desc.forward = forward_returning_foreign;
  desc.user_data = xb;
  dp_module* custom = NULL;
  ASSERT_OK(dp_module_custom(a, &desc, &custom));
  ASSERT_ERROR(dp_module_forward1(custom, xa, &out), DP_ERR_CALLBACK,
               "outputs[0] belongs to another dp_context than the module");
  assert_null(out);

  dp_module_release(custom);
  dp_data_parallel_release(dpw);
  dp_optimizer_release(opt_b);
  dp_tensor_release(pb);
  dp_module_release(seq);
  dp_module_release(lb);
  dp_module_release(la);
  dp_tensor_release(xb);
  dp_tensor_release(ya);
  dp_tensor_release(xa);
  dp_context_release(b);
  dp_context_release(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(version_number_matches_the_header_macros),
      cmocka_unit_test(result_string_names_every_code),
      cmocka_unit_test(context_creates_the_requested_cpu_devices),
      cmocka_unit_test(context_defaults_to_dp_cpu_devices_from_the_environment),
      cmocka_unit_test(context_rejects_bad_options_naming_the_field),
      cmocka_unit_test(context_without_gpu_reports_zero_cuda_devices_and_logs_why),
      cmocka_unit_test(log_is_silent_by_default),
      cmocka_unit_test(device_name_is_copied_and_truncated_safely),
      cmocka_unit_test(device_memory_reports_host_memory_for_cpu),
      cmocka_unit_test(null_and_bad_handles_are_rejected_by_name),
      cmocka_unit_test(last_error_is_per_thread_and_kept_until_the_next_failure),
      cmocka_unit_test(a_tensor_keeps_its_context_alive_after_context_release),
      cmocka_unit_test(the_log_data_is_freed_once_when_the_context_ends),
      cmocka_unit_test(objects_of_two_contexts_are_refused_naming_the_argument),
  };
  return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
