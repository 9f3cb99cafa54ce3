// The C API when memory runs out: every C++ allocation that a call makes on the calling
// thread is made to fail in turn (this program replaces operator new, which the library
// uses through the dynamic linker as any C++ program's allocations would). Each failure
// must come back as DP_ERR_OUT_OF_MEMORY with the out-params untouched and ownership
// unchanged; the sanitizer build's leak check at exit catches anything a failure leaked
// (such as a handle made and then dropped). The calls walked are those that make several
// handles, or hand over memory, in one call; calls that reach oneDNN are left out, since
// its own behaviour under failing allocations is not ours to test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "dataparallel/dataparallel.h"
#include "dlpack/dlpack.h"

namespace {

// The allocation (1-based, on this thread) that fails; 0: none.
thread_local long fail_at = 0;
thread_local long seen = 0;

void* allocate(std::size_t n) {
  if (fail_at > 0 && ++seen == fail_at) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) {
  return allocate(n);
}
void* operator new[](std::size_t n) {
  return allocate(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

void ok(dp_result r) {
  ASSERT_EQ(r, DP_OK) << dp_last_error();
}

// Runs `call` with its k-th allocation failing, for k = 1, 2, ... until a run makes fewer
// than k allocations (and so succeeds). Each run starts from reset(); a failed run must
// return DP_ERR_OUT_OF_MEMORY and pass untouched(); a successful one is handed to
// on_success (which releases what it made). Returns how many runs failed.
template <class Reset, class Call, class Untouched, class OnSuccess>
int walk(const char* what, Reset reset, Call call, Untouched untouched, OnSuccess on_success) {
  int failures = 0;
  for (long k = 1; k < 10000; ++k) {
    reset();
    seen = 0;
    fail_at = k;
    const dp_result r = call();
    const bool reached = seen >= k;
    fail_at = 0;
    if (r == DP_OK) {
      on_success();
      if (!reached) return failures;
      continue;  // the failing allocation was one the call could do without
    }
    ++failures;
    EXPECT_EQ(r, DP_ERR_OUT_OF_MEMORY) << what << ", allocation " << k << ": " << dp_last_error();
    EXPECT_TRUE(untouched()) << what << ", allocation " << k
                             << " failed but changed an out-param or ownership";
  }
  ADD_FAILURE() << what << " still allocating after 10000 allocations";
  return failures;
}

template <class T>
T* sentinel() {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(0x5e5e5e50));
}

class OutOfMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
    o.cpu_devices = 2;
    o.load_cuda = 0;
    ok(dp_context_create(&o, &ctx_));
    const int64_t shape[2] = {4, 3};
    ok(dp_tensor_zeros(ctx_, DP_FLOAT32, shape, 2, cpu0_, &x_));
    ok(dp_module_linear(ctx_, 3, 2, 1, cpu0_, &linear_));
  }
  void TearDown() override {
    dp_module_release(linear_);
    dp_tensor_release(x_);
    dp_context_release(ctx_);
  }
  dp_context* ctx_ = nullptr;
  dp_tensor* x_ = nullptr;
  dp_module* linear_ = nullptr;
  const dp_device cpu0_ = {DP_DEVICE_CPU, 0};
  const dp_device both_[2] = {{DP_DEVICE_CPU, 0}, {DP_DEVICE_CPU, 1}};
};

TEST_F(OutOfMemory, ParameterLeavesNameAndTensorUntouched) {
  const char* name = nullptr;
  dp_tensor* t = nullptr;
  const int failures = walk(
      "dp_module_parameter", [&] { name = sentinel<const char>(), t = sentinel<dp_tensor>(); },
      [&] { return dp_module_parameter(linear_, 0, &name, &t); },
      [&] { return name == sentinel<const char>() && t == sentinel<dp_tensor>(); },
      [&] {
        EXPECT_STREQ(name, "weight");
        dp_tensor_release(t);
      });
  EXPECT_GT(failures, 0);
}

TEST_F(OutOfMemory, SplitScatterAndReplicateHandOutAllHandlesOrNone) {
  dp_tensor* outs[2];
  size_t n = 0;
  const int64_t sizes[2] = {1, 3};
  auto reset = [&] { outs[0] = outs[1] = sentinel<dp_tensor>(), n = 77; };
  auto untouched = [&] {
    return outs[0] == sentinel<dp_tensor>() && outs[1] == sentinel<dp_tensor>() && n == 77;
  };
  auto release_both = [&] {
    dp_tensor_release(outs[0]);
    dp_tensor_release(outs[1]);
  };
  EXPECT_GT(walk(
                "dp_op_split", reset, [&] { return dp_op_split(x_, sizes, 2, 0, outs); }, untouched,
                release_both),
            0);
  EXPECT_GT(walk(
                "dp_scatter", reset, [&] { return dp_scatter(x_, both_, 2, nullptr, 0, outs, &n); },
                untouched, release_both),
            0);
  dp_module* replicas[2];
  EXPECT_GT(walk(
                "dp_replicate", [&] { replicas[0] = replicas[1] = sentinel<dp_module>(); },
                [&] { return dp_replicate(linear_, both_, 2, replicas); },
                [&] {
                  return replicas[0] == sentinel<dp_module>() &&
                         replicas[1] == sentinel<dp_module>();
                },
                [&] {
                  dp_module_release(replicas[0]);
                  dp_module_release(replicas[1]);
                }),
            0);
}

// A custom module returning its input twice: several outputs without oneDNN.
dp_result twice(void*, dp_module*, dp_tensor* const* inputs, size_t, dp_tensor** outputs, size_t,
                size_t* n_outputs) {
  outputs[0] = dp_tensor_retain(inputs[0]);
  outputs[1] = dp_tensor_retain(inputs[0]);
  *n_outputs = 2;
  return DP_OK;
}

TEST_F(OutOfMemory, ModuleForwardHandsOutAllOutputsOrNone) {
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = twice;
  dp_module* m = nullptr;
  ok(dp_module_custom(ctx_, &desc, &m));
  dp_tensor* outs[2];
  size_t n = 0;
  const int failures = walk(
      "dp_module_forward", [&] { outs[0] = outs[1] = sentinel<dp_tensor>(), n = 77; },
      [&] { return dp_module_forward(m, &x_, 1, outs, 2, &n); },
      [&] {
        return outs[0] == sentinel<dp_tensor>() && outs[1] == sentinel<dp_tensor>() && n == 77;
      },
      [&] {
        EXPECT_EQ(n, 2u);
        dp_tensor_release(outs[0]);
        dp_tensor_release(outs[1]);
      });
  EXPECT_GT(failures, 0);
  dp_module_release(m);
}

// A DLManagedTensor over a static array that counts its deleter's calls.
struct Counted {
  DLManagedTensor managed;
  float data[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  int deleted = 0;
};

TEST_F(OutOfMemory, FromDlpackLeavesSrcToTheCallerOnFailure) {
  Counted c;
  c.managed.dl_tensor.data = c.data;
  c.managed.dl_tensor.device = {kDLCPU, 0};
  c.managed.dl_tensor.ndim = 1;
  c.managed.dl_tensor.dtype = {kDLFloat, 32, 1};
  c.managed.dl_tensor.shape = c.shape;
  c.managed.dl_tensor.strides = nullptr;
  c.managed.dl_tensor.byte_offset = 0;
  c.managed.manager_ctx = &c;
  c.managed.deleter = [](DLManagedTensor* self) {
    ++static_cast<Counted*>(self->manager_ctx)->deleted;
  };
  dp_tensor* t = nullptr;
  const int failures = walk(
      "dp_tensor_from_dlpack", [&] { t = sentinel<dp_tensor>(), c.deleted = 0; },
      [&] { return dp_tensor_from_dlpack(ctx_, &c.managed, &t); },
      [&] { return t == sentinel<dp_tensor>() && c.deleted == 0; },
      [&] {
        EXPECT_EQ(c.deleted, 0);
        dp_tensor_release(t);
        EXPECT_EQ(c.deleted, 1);  // taken over on success, given back once
      });
  EXPECT_GT(failures, 0);
}

}  // namespace
