// Fault injection (build with -DDP_FAULT_INJECTION=ON): every tensor allocation of a
// DataParallel training step over two CPU devices is made to fail in turn. Each failure
// must come back from the C API as DP_ERR_OUT_OF_MEMORY with a message, leak nothing (the
// sanitizer build checks), and leave the library able to run the next step with correct
// results. Also: a replica that fails, and a replica that is slow.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dataparallel/dataparallel.h"
#include "device/cpu/fault.h"

namespace {

void ok(dp_result r) {
  ASSERT_EQ(r, DP_OK) << dp_last_error();
}

dp_device cpu(int i) {
  return dp_device{DP_DEVICE_CPU, i};
}

struct Model {
  dp_context* ctx = nullptr;
  dp_module* net = nullptr;
  dp_data_parallel* dp = nullptr;
  dp_optimizer* opt = nullptr;

  explicit Model(bool adam = false) {
    dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
    o.cpu_devices = 2;
    o.load_cuda = 0;
    o.seed = 3;
    ok(dp_context_create(&o, &ctx));
    ok(dp_module_sequential(ctx, &net));
    dp_module* l = nullptr;
    ok(dp_module_linear(ctx, 6, 5, 1, cpu(0), &l));
    ok(dp_module_append(net, l));
    dp_module_release(l);
    ok(dp_module_relu(ctx, &l));
    ok(dp_module_append(net, l));
    dp_module_release(l);
    ok(dp_module_linear(ctx, 5, 3, 1, cpu(0), &l));
    ok(dp_module_append(net, l));
    dp_module_release(l);
    const dp_device ids[2] = {cpu(0), cpu(1)};
    ok(dp_data_parallel_create(net, ids, 2, nullptr, 0, nullptr, &dp));
    if (adam) {
      dp_adam_options ao = DP_ADAM_OPTIONS_INIT;
      ao.lr = 0.01;
      ok(dp_optimizer_adam(net, &ao, &opt));
    } else {
      dp_sgd_options so = DP_SGD_OPTIONS_INIT;
      so.lr = 0.1;
      so.momentum = 0.9;
      ok(dp_optimizer_sgd(net, &so, &opt));
    }
  }
  ~Model() {
    dp_optimizer_release(opt);
    dp_data_parallel_release(dp);
    dp_module_release(net);
    dp_context_release(ctx);
  }

  // One step on a fixed batch (without `update`, up to the gradients); the first failing
  // call's result.
  dp_result step(bool update = true) {
    std::vector<float> xv(8 * 6);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 7) / 7.f - 0.4f;
    const int64_t yv[8] = {0, 1, 2, 0, 1, 2, 2, 1};
    const int64_t xs[2] = {8, 6}, ys[1] = {8};
    dp_tensor *x = nullptr, *y = nullptr, *out = nullptr, *loss = nullptr;
    size_t n = 0;
    dp_result r = dp_tensor_from_data(ctx, DP_FLOAT32, xs, 2, xv.data(), xv.size() * 4, cpu(0), &x);
    if (r == DP_OK) r = dp_tensor_from_data(ctx, DP_INT64, ys, 1, yv, sizeof yv, cpu(0), &y);
    if (r == DP_OK) r = dp_optimizer_zero_grad(opt);
    if (r == DP_OK) r = dp_data_parallel_forward(dp, &x, nullptr, 1, &out, 1, &n);
    if (r == DP_OK) r = dp_op_cross_entropy(out, y, &loss);
    if (r == DP_OK) r = dp_backward(loss, nullptr, 0);
    if (r == DP_OK && update) r = dp_optimizer_step(opt);
    for (dp_tensor* t : {x, y, out, loss}) dp_tensor_release(t);
    return r;
  }

  std::vector<float> weights() {
    std::vector<float> all;
    size_t count = 0;
    EXPECT_EQ(dp_module_parameter_count(net, &count), DP_OK);
    for (size_t i = 0; i < count; ++i) {
      dp_tensor* t = nullptr;
      EXPECT_EQ(dp_module_parameter(net, i, nullptr, &t), DP_OK);
      int64_t numel = 0;
      dp_tensor_numel(t, &numel);
      std::vector<float> v(static_cast<size_t>(numel));
      dp_tensor_to_host(t, v.data(), v.size() * 4);
      all.insert(all.end(), v.begin(), v.end());
      dp_tensor_release(t);
    }
    return all;
  }
};

TEST(FaultInjection, EveryAllocationOfATrainingStepFailsCleanlyAndTheNextStepRecovers) {
  // The reference: two steps without faults.
  std::vector<float> after_two;
  {
    Model m;
    ASSERT_EQ(m.step(), DP_OK);
    ASSERT_EQ(m.step(), DP_OK);
    after_two = m.weights();
  }
  const std::string saved = testing::TempDir() + "dp_fault_step1.safetensors";
  int64_t points = 0;
  for (int64_t n = 1;; ++n) {
    Model m;                     // the same seed: the same initial weights as the reference
    ASSERT_EQ(m.step(), DP_OK);  // step one, unharmed
    ok(dp_checkpoint_save(m.net, m.opt, saved.c_str(), nullptr, 0));
    dp::fault::fail_allocation(n);
    const dp_result r = m.step();
    const int64_t seen = dp::fault::allocations();
    dp::fault::fail_allocation(0);
    if (seen < n) {  // the step made fewer than n allocations: every point is covered
      ASSERT_EQ(r, DP_OK);
      EXPECT_EQ(m.weights(), after_two);
      break;
    }
    ++points;
    ASSERT_EQ(r, DP_ERR_OUT_OF_MEMORY) << "allocation " << n << ": " << dp_last_error();
    EXPECT_NE(std::strstr(dp_last_error(), "could not allocate"), nullptr) << dp_last_error();
    // Back to the state after step one (weights and momentum: a failure inside the
    // optimizer may have updated some parameters), then step two again: the result must
    // be the reference's, so nothing inside the library was left broken.
    ok(dp_checkpoint_load(m.net, m.opt, saved.c_str()));
    ASSERT_EQ(m.step(), DP_OK) << "the wrapper is unusable after failing allocation " << n;
    EXPECT_EQ(m.weights(), after_two) << "wrong result after failing allocation " << n;
  }
  std::remove(saved.c_str());
  std::printf("[ fault    ] allocation-failure points exercised: %lld\n",
              static_cast<long long>(points));
  EXPECT_GT(points, 20);
}

// The first optimizer step makes the optimizer's state (SGD's momentum buffers, Adam's
// moments). Each of its allocations failing in turn leaves none of it half made: the step
// retried on the same gradients is a first step (no momentum of uninitialised memory, no
// Adam step counted twice, no moment without its partner), so two steps later the weights
// are the reference's bit for bit.
TEST(FaultInjection, AFailedFirstOptimizerStepIsRetriedAsAFirstStep) {
  for (const bool adam : {false, true}) {
    std::vector<float> reference;
    {
      Model m(adam);
      ASSERT_EQ(m.step(), DP_OK);
      ASSERT_EQ(m.step(), DP_OK);
      reference = m.weights();
    }
    int64_t points = 0;
    for (int64_t n = 1;; ++n) {
      Model m(adam);
      ASSERT_EQ(m.step(false), DP_OK);
      dp::fault::fail_allocation(n);
      const dp_result r = dp_optimizer_step(m.opt);
      const int64_t seen = dp::fault::allocations();
      dp::fault::fail_allocation(0);
      if (seen < n) {
        ASSERT_EQ(r, DP_OK);
        break;
      }
      ++points;
      ASSERT_EQ(r, DP_ERR_OUT_OF_MEMORY) << "allocation " << n << ": " << dp_last_error();
      ASSERT_EQ(dp_optimizer_step(m.opt), DP_OK) << dp_last_error();  // the same gradients
      ASSERT_EQ(m.step(), DP_OK) << dp_last_error();
      EXPECT_EQ(m.weights(), reference) << (adam ? "Adam" : "SGD") << ", allocation " << n;
    }
    EXPECT_GE(points, adam ? 8 : 4);  // 4 parameters: 4 buffers, or 4 pairs of moments
  }
}

// A custom module whose forward sleeps on replica 1: the others wait, nothing deadlocks,
// and the results are right; a failure on replica 1 only leaves the wrapper usable.
struct SlowOrFailing {
  int delay_ms = 0;
  bool fail = false;
};

dp_result slow_forward(void* user, dp_module* self, dp_tensor* const* in, size_t n, dp_tensor** out,
                       size_t max_out, size_t* n_out) {
  (void)self, (void)n, (void)max_out;
  auto* cfg = static_cast<SlowOrFailing*>(user);
  dp_device d;
  dp_tensor_device(in[0], &d);
  if (d.index == 1) {
    if (cfg->fail) return dp_set_error(DP_ERR_CALLBACK, "replica 1 refuses");
    std::this_thread::sleep_for(std::chrono::milliseconds(cfg->delay_ms));
  }
  *n_out = 1;
  return dp_op_scale(in[0], 2.0, &out[0]);
}

TEST(FaultInjection, ASlowReplicaIsWaitedForAndAFailingOneLeavesTheWrapperUsable) {
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 2;
  o.load_cuda = 0;
  dp_context* ctx = nullptr;
  ok(dp_context_create(&o, &ctx));
  SlowOrFailing cfg{200, false};
  dp_custom_module_desc desc = DP_CUSTOM_MODULE_DESC_INIT;
  desc.forward = slow_forward;
  desc.user_data = &cfg;
  dp_module* m = nullptr;
  ok(dp_module_custom(ctx, &desc, &m));
  const dp_device ids[2] = {cpu(0), cpu(1)};
  dp_data_parallel* dp = nullptr;
  ok(dp_data_parallel_create(m, ids, 2, nullptr, 0, nullptr, &dp));
  const float xv[4] = {1, 2, 3, 4};
  const int64_t xs[1] = {4};
  dp_tensor* x = nullptr;
  ok(dp_tensor_from_data(ctx, DP_FLOAT32, xs, 1, xv, sizeof xv, cpu(0), &x));
  dp_tensor* y = nullptr;
  size_t n = 0;
  const auto t0 = std::chrono::steady_clock::now();
  ok(dp_data_parallel_forward(dp, &x, nullptr, 1, &y, 1, &n));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  float yv[4];
  ok(dp_tensor_to_host(y, yv, sizeof yv));
  EXPECT_EQ(std::vector<float>(yv, yv + 4), (std::vector<float>{2, 4, 6, 8}));
  dp_tensor_release(y);
  cfg.fail = true;
  EXPECT_EQ(dp_data_parallel_forward(dp, &x, nullptr, 1, &y, 1, &n), DP_ERR_CALLBACK);
  EXPECT_NE(std::strstr(dp_last_error(), "in replica 1 on device cpu:1: "), nullptr)
      << dp_last_error();
  EXPECT_NE(std::strstr(dp_last_error(), "replica 1 refuses"), nullptr) << dp_last_error();
  cfg = {0, false};
  ok(dp_data_parallel_forward(dp, &x, nullptr, 1, &y, 1, &n));
  dp_tensor_release(y);
  dp_tensor_release(x);
  dp_data_parallel_release(dp);
  dp_module_release(m);
  dp_context_release(ctx);
}

}  // namespace
