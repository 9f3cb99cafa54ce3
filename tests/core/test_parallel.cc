// DataParallel in C++: training equivalence with the single-device run, BatchNorm
// statistics by value, CPU aliasing, coalesced buckets, the GPU imbalance rule.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "context/context.h"
#include "error.h"
#include "finishes_within.h"
#include "nn/layers.h"
#include "ops/ops.h"
#include "optim/optimizer.h"
#include "parallel/comm.h"
#include "parallel/data_parallel.h"
#include "parallel/parallel_apply.h"
#include "parallel/replicate.h"
#include "parallel/scatter_gather.h"
#include "test_context.h"
#include "test_models.h"

namespace dp {
namespace {

using testing_util::Batch;
using testing_util::cnn;
using testing_util::copy_weights;
using testing_util::finishes_within;
using testing_util::make_batches;
using testing_util::mlp;

std::shared_ptr<Context> make_ctx(int devices) {
  return testing_util::cpu_context(devices, /*seed=*/7);
}

std::vector<float> host(const Tensor& t) {
  return testing_util::host_values<float>(t);
}

// |got - want| <= rtol * max|want| for the whole tensor: float32 sums in another order
// differ by rounding relative to the tensor's scale, not to each element.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0;
  for (float w : want) scale = std::max(scale, static_cast<double>(std::abs(w)));
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - want[i]);
    if (d > worst) {
      worst = d;
      at = i;
    }
  }
  EXPECT_LE(worst, rtol * scale) << what << ": element " << at << " " << got[at] << " vs "
                                 << want[at] << " (scale " << scale << ")";
}

// Trains `model` for batches.size() SGD steps, through DataParallel over `devices` when
// devices > 0 (else directly). Returns the first step's gradients and the final weights.
// The learning rate is 0.02: the batches are noise with random labels, and at 0.05 the
// CNN's loss does not fall. There one discrete choice that float32 rounding flipped (a
// max-pool argmax or a ReLU at a near tie; the direct run's batch of 30 against chunks of
// 15) grew, on an AVX2 machine, from 1e-6 of the scale at step 7 to 1.5e-3 at step 20,
// about 10x a step at the end. At 0.02 the runs there stay within 1e-7.
std::pair<std::vector<std::vector<float>>, std::vector<std::vector<float>>> train(
    const std::shared_ptr<Module>& model, int devices, const std::vector<Batch>& batches) {
  std::unique_ptr<DataParallel> wrapper;
  if (devices > 0) {
    std::vector<Device> ids;
    for (int i = 0; i < devices; ++i) ids.push_back(cpu(i));
    wrapper = std::make_unique<DataParallel>(model, ids, std::nullopt, 0, DataParallelOptions{});
  }
  Sgd opt(model->parameters(), SgdOptions{0.02, 0.9, 0, 0, false});
  std::vector<std::vector<float>> first_grads;
  for (size_t step = 0; step < batches.size(); ++step) {
    opt.zero_grad();
    const Tensor out =
        wrapper ? wrapper->forward({batches[step].x})[0] : (*model)({batches[step].x})[0];
    backward({ops::cross_entropy(out, batches[step].y)}, {});
    if (step == 0) {
      for (const Tensor& p : model->parameters()) first_grads.push_back(host(p.grad()));
    }
    opt.step();
  }
  std::vector<std::vector<float>> weights;
  for (const Tensor& p : model->parameters()) weights.push_back(host(p));
  return {first_grads, weights};
}

void check_equivalence(bool image, int steps, int64_t batch) {
  auto ctx = make_ctx(4);
  auto make = [&] { return image ? cnn(ctx) : mlp(ctx); };
  auto reference = make();
  const auto batches = make_batches(ctx, image, steps, batch);
  auto single = make();
  copy_weights(*reference, *single);
  const auto [grads1, weights1] = train(single, 0, batches);
  for (int n = 1; n <= 4; ++n) {
    SCOPED_TRACE(std::to_string(n) + " devices");
    auto model = make();
    copy_weights(*reference, *model);
    const auto [grads, weights] = train(model, n, batches);
    ASSERT_EQ(grads.size(), grads1.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      expect_close(grads[i], grads1[i], 1e-5, "first-step gradient " + std::to_string(i));
    }
    for (size_t i = 0; i < weights.size(); ++i) {
      expect_close(weights[i], weights1[i], 1e-4, "weights after training " + std::to_string(i));
    }
  }
}

TEST(DataParallelTraining, MlpOnOneToFourDevicesMatchesTheSingleDeviceRun) {
  check_equivalence(false, 20, 60);  // 60 rows: chunks 30/30, 20x3, 15x4
}

TEST(DataParallelTraining, CnnOnOneToFourDevicesMatchesTheSingleDeviceRun) {
  check_equivalence(true, 20, 30);  // 30 rows: uneven chunks 8,8,8,6 on four devices
}

TEST(DataParallelTraining, AliasingAndCopyingCpuReplicasGiveIdenticalResults) {
  auto ctx = make_ctx(2);
  auto a = mlp(ctx), b = mlp(ctx);
  copy_weights(*a, *b);
  const auto batches = make_batches(ctx, false, 3, 32);
  DataParallelOptions copy;
  copy.alias_cpu = false;
  DataParallel wa(a, {cpu(0), cpu(1)}, std::nullopt, 0, {});
  DataParallel wb(b, {cpu(0), cpu(1)}, std::nullopt, 0, copy);
  for (const Batch& batch : batches) {
    backward({ops::cross_entropy(wa.forward({batch.x})[0], batch.y)}, {});
    backward({ops::cross_entropy(wb.forward({batch.x})[0], batch.y)}, {});
  }
  const auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_EQ(host(pa[i].grad()), host(pb[i].grad()));
}

TEST(DataParallelTraining, BackwardAndOptimizerStepAreRefusedInsideADeviceTask) {
  // Both hand work to the workers and wait for it: from a worker's own task (a custom
  // module's forward runs there) that would wait on itself. Each fails with a message
  // instead, and leaves the step untouched.
  auto ctx = testing_util::cpu_context(2, /*seed=*/3);
  auto model = mlp(ctx);
  Sgd opt(model->parameters(), SgdOptions{0.05, 0.9, 0, 0, false});
  const auto batch = make_batches(ctx, false, 1, 16)[0];
  const Tensor loss = ops::cross_entropy(model->forward({batch.x})[0], batch.y);
  const Tensor w = model->parameters()[0];
  const std::vector<float> before = host(w);
  // Runs f, which must fail with kState and a message containing `says`.
  auto expect_refused = [](const std::function<void()>& f, const std::string& says, int device) {
    try {
      f();
      ADD_FAILURE() << "ran inside a task of cpu:" << device << ": " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kState);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  for (int device : {0, 1}) {
    ctx->worker(cpu(device)).run_on_thread([&] {
      expect_refused([&] { backward({loss}, {}); }, "backward cannot run inside a device task",
                     device);
      expect_refused([&] { opt.step(); }, "optimizer step cannot run inside a device task", device);
    });
  }
  EXPECT_EQ(host(w), before);
  // From the caller both work.
  backward({loss}, {});
  opt.step();
  EXPECT_NE(host(w), before);
}

TEST(DataParallelReplicas, CpuReplicaParametersAreReadOnlyAliases) {
  auto ctx = make_ctx(2);
  auto model = mlp(ctx);
  auto replicas = parallel::replicate(*model, {cpu(0), cpu(1)}, {}, nullptr);
  ASSERT_EQ(replicas.size(), 2u);
  EXPECT_EQ(replicas[0].get(), model.get());  // replica 0 is the original
  const Tensor original = model->parameters()[0];
  const Tensor copy = replicas[1]->parameters()[0];
  EXPECT_EQ(copy.device(), cpu(1));
  EXPECT_EQ(copy.data(), original.data());  // aliased, not copied
  GradModeGuard no_grad(false);
  try {
    ops::fill_(copy, 0.0);
    FAIL() << "an in-place write through a replica's alias must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kState);
    EXPECT_NE(std::string(e.what()).find("aliases another device's memory"), std::string::npos);
  }
  EXPECT_EQ(host(original)[0], host(copy)[0]);  // nothing reached the original
}

// Expects `f` to fail with kState and a message containing `needle`.
template <class F>
void expect_state_error(F f, const std::string& needle) {
  try {
    f();
    FAIL() << "expected an error containing: " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kState) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A broadcast input reaches replica 0 as a view of the caller's tensor; with other CPU
// devices aliasing that memory, a write through replica 0's view would reach them too.
TEST(DataParallelReplicas, BroadcastSourceCopyIsReadOnlyOnlyWhileOtherDevicesAliasIt) {
  auto ctx = make_ctx(2);
  GradModeGuard no_grad(false);
  const Tensor t = ops::full(ctx, {3}, DType::kFloat32, cpu(0), 2.0);
  auto aliased = comm::broadcast_coalesced({t}, {cpu(0), cpu(1)}, 1 << 20, /*alias_cpu=*/true);
  EXPECT_EQ(aliased[0][0].data(), t.data());
  EXPECT_EQ(aliased[1][0].data(), t.data());
  expect_state_error([&] { ops::fill_(aliased[0][0], 7.0); }, "aliases another device's memory");
  EXPECT_EQ(host(t), (std::vector<float>{2, 2, 2}));
  ops::fill_(t, 3.0);  // the caller's own tensor stays writable

  auto copied = comm::broadcast_coalesced({t}, {cpu(0), cpu(1)}, 1 << 20, /*alias_cpu=*/false);
  ops::fill_(copied[0][0], 7.0);  // replica 0's view: the caller's memory, nobody else's
  EXPECT_EQ(host(t), (std::vector<float>{7, 7, 7}));
  EXPECT_EQ(host(copied[1][0]), (std::vector<float>{3, 3, 3}));
}

// A module whose forward writes, on cpu:0, its own parameter (what = "parameter") or its
// second input (what = "input") in place, then returns x * w * s.
std::shared_ptr<CallbackModule> writing_module(const std::shared_ptr<Context>& ctx,
                                               const std::string& what) {
  auto m = std::make_shared<CallbackModule>(
      ctx, "WritesInPlace",
      [what](Module& self, const std::vector<Tensor>& in) {
        const Tensor w = self.parameters()[0];
        if (w.device() == cpu(0)) ops::fill_(what == "parameter" ? w : in[1], 5.0);
        return std::vector<Tensor>{ops::mul(ops::mul(in[0], w), in[1])};
      },
      nullptr);
  m->register_parameter("w", ops::full(ctx, {2}, DType::kFloat32, cpu(0), 2.0));
  return m;
}

const char* const kAliasedWrite =
    "in replica 0 on device cpu:0: cannot write in place to a tensor on cpu:0 while "
    "DataParallel replicas on other CPU devices read its memory in place";

// Replica 0 is the original: it runs with the original's parameters and, under grad mode,
// the caller's own broadcast input, both of which the replica on cpu:1 aliases. A write
// through them is refused while the replicas run (it would change what replica 1 reads
// mid-forward) and allowed again afterwards, through the wrapper (fresh or cached
// replicas) and the functional form alike. With alias_cpu off every replica has its own
// copies and replica 0's write persists in the original, as in PyTorch.
TEST(DataParallelReplicas, ReplicaZeroCannotWriteWhatTheOtherReplicasAlias) {
  for (const std::string what : {"parameter", "input"}) {
    for (const std::string how : {"wrapper", "cached", "functional", "copying"}) {
      SCOPED_TRACE(what + " through " + how);
      auto ctx = make_ctx(2);
      auto m = writing_module(ctx, what);
      const Tensor w = m->parameters()[0];
      const Tensor x = ops::full(ctx, {4, 2}, DType::kFloat32, cpu(0), 1.0);
      Tensor s = ops::full(ctx, {2}, DType::kFloat32, cpu(0), 3.0);
      s.set_requires_grad(what == "input");  // the caller's own tensor reaches replica 0
      std::optional<GradModeGuard> no_grad;
      if (how == "cached") no_grad.emplace(false);  // replicas are cached without grad
      DataParallelOptions o;
      o.alias_cpu = how != "copying";
      o.cache_replicas = how == "cached";
      DataParallel dp(m, {cpu(0), cpu(1)}, std::nullopt, 0, o);
      auto forward = [&] {
        return how == "functional"
                   ? data_parallel(*m, {x, s}, {cpu(0), cpu(1)}, std::nullopt, 0, {false, true})
                   : dp.forward({x, s}, {false, true});
      };
      if (how == "cached") {
        ASSERT_THROW(forward(), Error);  // the first call fills the cache
      }
      if (how != "copying") {
        // Without grad mode replica 0's input is a read-only view, refused as such.
        expect_state_error(forward, how == "cached" && what == "input"
                                        ? "in replica 0 on device cpu:0: cannot write in place "
                                          "to a tensor on cpu:0 that aliases another device's"
                                        : kAliasedWrite);
        EXPECT_EQ(host(w), (std::vector<float>{2, 2}));
        EXPECT_EQ(host(s), (std::vector<float>{3, 3}));
        GradModeGuard off(false);
        ops::fill_(w, 2.0);  // no replica runs now: writable again
        ops::fill_(s, 3.0);
      } else {
        // Replica 0 wrote 5 into its w or s before multiplying; replica 1 kept 2 * 3.
        const float first = what == "parameter" ? 5 * 3 : 2 * 5;
        const auto y = host(forward()[0]);
        EXPECT_EQ(y, (std::vector<float>{first, first, first, first, 6, 6, 6, 6}));
        EXPECT_EQ(what == "parameter" ? host(w) : host(s), (std::vector<float>{5, 5}));
      }
    }
  }
}

// A replica on cpu:1 saves its aliased parameter for backward. An in-place write to the
// original between forward and backward (here an optimizer-like fill) changes what that
// backward would read, so backward refuses, as replica 0's own saved parameter would; the
// check must hold even when chunk_sizes give cpu:0 no rows and replica 0 does not run.
TEST(DataParallelReplicas, BackwardSeesAWriteToTheOriginalThroughTheAlias) {
  auto ctx = make_ctx(2);
  auto m = std::make_shared<Linear>(ctx, 2, 2, true, cpu(0), DType::kFloat32);
  DataParallelOptions o;
  o.chunk_sizes = {0, 4};
  DataParallel dp(m, {cpu(0), cpu(1)}, std::nullopt, 0, o);
  Tensor x = ops::full(ctx, {4, 2}, DType::kFloat32, cpu(0), 1.0);
  x.set_requires_grad(true);
  const Tensor y = dp.forward({x})[0];
  {
    GradModeGuard off(false);
    ops::fill_(m->parameters()[0], 0.5);
  }
  expect_state_error([&] { backward({ops::sum(y)}, {}); }, "was modified in place since");
}

// docs/spec.md 6: replicas, inputs and devices must have equal lengths. (The C API's
// dp_parallel_apply takes one count for all three, so only the core can be handed lists
// of different lengths.)
TEST(DataParallelApply, ReplicasInputsAndDevicesOfDifferentLengthsAreRejected) {
  auto ctx = make_ctx(2);
  auto model = mlp(ctx);
  auto replicas = parallel::replicate(*model, {cpu(0), cpu(1)}, {}, nullptr);
  const Tensor x = ops::full(ctx, {2, 784}, DType::kFloat32, cpu(0), 0.5);
  const std::vector<std::vector<Tensor>> one_input{{x}};
  for (const auto& [inputs, devices] :
       {std::pair{one_input, std::vector<Device>{cpu(0), cpu(1)}},
        std::pair{std::vector<std::vector<Tensor>>{{x}, {x}}, std::vector<Device>{cpu(0)}}}) {
    try {
      parallel::parallel_apply(replicas, inputs, devices, nullptr);
      FAIL() << "lists of different lengths must be rejected";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument);
      const std::string want = "parallel_apply: 2 replicas, " + std::to_string(inputs.size()) +
                               " input lists and " + std::to_string(devices.size()) + " devices";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

TEST(DataParallelReplicas, BuffersAreCopiedNotAliased) {
  auto ctx = make_ctx(2);
  auto bn = std::make_shared<BatchNorm>(ctx, 1, 3, 1e-5, 0.1, cpu(0));
  auto replicas = parallel::replicate(*bn, {cpu(0), cpu(1)}, {}, nullptr);
  const Tensor mine = bn->buffer("running_mean"), theirs = replicas[1]->buffer("running_mean");
  EXPECT_NE(mine.data(), theirs.data());
  EXPECT_FALSE(theirs.read_only());
  EXPECT_FALSE(theirs.requires_grad());
}

// BatchNorm1d statistics: replica 0's update persists by default; with buffer sync the
// running statistics are the replicas' average, checked against values computed here.
TEST(DataParallelBuffers, BatchNormStatisticsComeFromReplicaZeroOrTheAverage) {
  for (BufferSync sync : {BufferSync::kNone, BufferSync::kAverage}) {
    auto ctx = make_ctx(2);
    auto bn = std::make_shared<BatchNorm>(ctx, 1, 2, 1e-5, 0.1, cpu(0));
    // Rows: chunk 0 = rows 0-1, chunk 1 = rows 2-3.
    std::vector<float> xv{1, 10, 3, 20, 5, 40, 11, 60};
    Tensor x = ops::from_host(ctx, {4, 2}, DType::kFloat32, cpu(0), xv.data());
    DataParallelOptions o;
    o.buffer_sync = sync;
    DataParallel w(bn, {cpu(0), cpu(1)}, std::nullopt, 0, o);
    w.forward({x});
    const auto mean = host(bn->buffer("running_mean"));
    const auto var = host(bn->buffer("running_var"));
    // Per chunk: means (2, 15) and (8, 50); unbiased variances (2, 50) and (18, 200).
    if (sync == BufferSync::kNone) {
      EXPECT_NEAR(mean[0], 0.1 * 2, 1e-6);
      EXPECT_NEAR(mean[1], 0.1 * 15, 1e-5);
      EXPECT_NEAR(var[0], 0.9 + 0.1 * 2, 1e-5);
      EXPECT_NEAR(var[1], 0.9 + 0.1 * 50, 1e-4);
    } else {
      EXPECT_NEAR(mean[0], 0.1 * (2 + 8) / 2, 1e-6);
      EXPECT_NEAR(mean[1], 0.1 * (15 + 50) / 2, 1e-5);
      EXPECT_NEAR(var[0], 0.9 + 0.1 * (2 + 18) / 2, 1e-5);
      EXPECT_NEAR(var[1], 0.9 + 0.1 * (50 + 200) / 2, 1e-4);
    }
  }
}

// Replica caching (docs/spec.md 5) keeps replicas only while they are what replicate() would make
// now: the original's tensors unchanged, and its train/eval flags unchanged.
Tensor rows_4x2(const std::shared_ptr<Context>& ctx, float scale) {
  std::vector<float> v{1, 10, 3, 20, 5, 40, 11, 60};
  for (float& x : v) x *= scale;
  return ops::from_host(ctx, {4, 2}, DType::kFloat32, cpu(0), v.data());
}

// A module that adds its buffer "b" to its input; with `write`, it then adds 1 to "b" in
// place (a replica's own state, as a running-statistics observer keeps).
std::shared_ptr<Module> adds_its_buffer(const std::shared_ptr<Context>& ctx,
                                        const std::vector<float>& b, bool write) {
  auto m = std::make_shared<CallbackModule>(
      ctx, "AddBuffer",
      [write](Module& self, const std::vector<Tensor>& in) {
        const Tensor buf = self.buffer("b");
        Tensor y = ops::add(in[0], buf);
        if (write) ops::copy_(buf, ops::add_scalar(buf, 1.0));
        return std::vector<Tensor>{y};
      },
      nullptr);
  m->register_buffer("b", ops::from_host(ctx, {static_cast<int64_t>(b.size())}, DType::kFloat32,
                                         cpu(0), b.data()));
  return m;
}

TEST(DataParallelBuffers, BufferSyncLeavesABufferNoReplicaWroteBitForBit) {
  // The float32 mean of k equal copies need not equal them: averaged anyway, 0.1 became
  // 0.100000009 after one forward over 3 devices and kept drifting over 7.
  const std::vector<float> values{0.1f, 0.7f, 1.3f, 3.14159f, 0.2f, 0.001f, 5.5f, 0.3f};
  for (int devices : {3, 7}) {
    auto ctx = make_ctx(devices);
    auto m = adds_its_buffer(ctx, values, false);
    DataParallelOptions o;
    o.buffer_sync = BufferSync::kAverage;
    std::vector<Device> ids;
    for (int d = 0; d < devices; ++d) ids.push_back(cpu(d));
    DataParallel w(m, ids, std::nullopt, 0, o);
    const Tensor x = ops::zeros(ctx, {2 * devices, 8}, DType::kFloat32, cpu(0));
    for (int i = 0; i < 20; ++i) w.forward({x});
    EXPECT_EQ(host(m->buffer("b")), values) << devices << " devices";
  }
  // Beside a buffer that the replicas do write (a BatchNorm's statistics, broadcast in one
  // bucket with the constant one: each copy must count its own writes). The check is by
  // version counters on every kind of device, so this CPU test stands for CUDA too.
  auto ctx = make_ctx(3);
  auto seq = std::make_shared<Sequential>(ctx);
  seq->append(adds_its_buffer(ctx, values, false));
  seq->append(std::make_shared<BatchNorm>(ctx, 1, 8, 1e-5, 0.1, cpu(0)));
  DataParallelOptions o;
  o.buffer_sync = BufferSync::kAverage;
  DataParallel w(seq, {cpu(0), cpu(1), cpu(2)}, std::nullopt, 0, o);
  const Tensor x = rows_4x2(ctx, 1);
  const Tensor x8 = ops::reshape(ops::cat({x, x, x, x}, 1), {4, 8});
  const Tensor x12 = ops::cat({x8, x8, x8}, 0);
  for (int i = 0; i < 20; ++i) w.forward({x12});
  EXPECT_EQ(host(seq->children()[0].second->buffer("b")), values) << "beside a BatchNorm";
}

TEST(DataParallelCache, AReplicasWriteToItsOwnBufferIsNotSeenByTheNextForward) {
  // chunk_sizes leave replica 0 out, so the original's buffer never changes; replicas 1
  // and 2 add 1 to their copies. Those writes are lost (docs/spec.md 5), cached replicas or not:
  // every forward adds the original's 0.
  for (bool cache : {false, true}) {
    auto ctx = make_ctx(3);
    auto m = adds_its_buffer(ctx, {0.0f, 0.0f}, true);
    DataParallelOptions o;
    o.cache_replicas = cache;
    o.chunk_sizes = {0, 2, 2};
    DataParallel w(m, {cpu(0), cpu(1), cpu(2)}, std::nullopt, 0, o);
    GradModeGuard no_grad(false);
    const Tensor x = ops::zeros(ctx, {4, 2}, DType::kFloat32, cpu(0));
    for (int call = 0; call < 3; ++call) {
      EXPECT_EQ(host(w.forward({x})[0]), std::vector<float>(8, 0.0f))
          << "call " << call << (cache ? " with" : " without") << " the cache";
    }
    EXPECT_EQ(host(m->buffer("b")), (std::vector<float>{0, 0}));
  }
}

TEST(DataParallelCache, CachedReplicasFollowTheOriginalIntoTrainMode) {
  auto ctx = make_ctx(2);
  auto bn = std::make_shared<BatchNorm>(ctx, 1, 2, 1e-5, 0.1, cpu(0));
  DataParallelOptions o;
  o.cache_replicas = true;
  DataParallel w(bn, {cpu(0), cpu(1)}, std::nullopt, 0, o);
  GradModeGuard no_grad(false);
  bn->train(false);
  w.forward({rows_4x2(ctx, 1)});  // fills the cache with evaluation-mode replicas
  bn->train(true);
  // In train mode each replica normalises its own two rows by their statistics: every
  // column of every chunk becomes (-1, +1) (biased variance, eps aside).
  const auto y = host(w.forward({rows_4x2(ctx, 1)})[0]);
  for (int row = 0; row < 4; ++row) {
    for (int col = 0; col < 2; ++col) {
      EXPECT_NEAR(y[row * 2 + col], row % 2 == 0 ? -1.0 : 1.0, 1e-3) << "row " << row;
    }
  }
}

TEST(DataParallelCache, AForwardThatChangesTheOriginalsBuffersDropsTheCache) {
  // Train mode without grad: replica 0 updates the original's running statistics and
  // buffer sync averages the others' into them; cached replicas would keep old copies.
  std::vector<std::vector<float>> means;
  for (bool cache : {false, true}) {
    auto ctx = make_ctx(2);
    auto bn = std::make_shared<BatchNorm>(ctx, 1, 2, 1e-5, 0.1, cpu(0));
    DataParallelOptions o;
    o.cache_replicas = cache;
    o.buffer_sync = BufferSync::kAverage;
    DataParallel w(bn, {cpu(0), cpu(1)}, std::nullopt, 0, o);
    GradModeGuard no_grad(false);
    for (float scale : {1.0f, 2.0f, 3.0f}) w.forward({rows_4x2(ctx, scale)});
    means.push_back(host(bn->buffer("running_mean")));
  }
  EXPECT_EQ(means[1], means[0]);
  // By hand: chunk means (2, 15) and (8, 50) times the scale, averaged: (5, 32.5) * s.
  double m0 = 0, m1 = 0;
  for (double s : {1.0, 2.0, 3.0}) {
    m0 = 0.9 * m0 + 0.1 * 5 * s;
    m1 = 0.9 * m1 + 0.1 * 32.5 * s;
  }
  EXPECT_NEAR(means[1][0], m0, 1e-5);
  EXPECT_NEAR(means[1][1], m1, 1e-4);
}

TEST(DataParallelCache, AForwardWithGradBetweenCachedOnesLeavesNoEmptyCacheBehind) {
  for (bool skip_first : {false, true}) {
    auto ctx = make_ctx(2);
    auto model = mlp(ctx);
    DataParallelOptions o;
    o.cache_replicas = true;
    if (skip_first) o.chunk_sizes = {0, 4};
    DataParallel w(model, {cpu(0), cpu(1)}, std::nullopt, 0, o);
    const Tensor x = make_batches(ctx, false, 1, 4)[0].x;
    std::vector<float> first;
    {
      GradModeGuard no_grad(false);
      first = host(w.forward({x})[0]);  // cached
    }
    w.forward({x});  // with grad: not cached, and the cache is emptied
    GradModeGuard no_grad(false);
    EXPECT_EQ(host(w.forward({x})[0]), first) << "skip_first " << skip_first;
  }
}

TEST(DataParallelCache, ABatchOfOneChunkKeepsTheCachedReplicas) {
  // An evaluation loop whose last batch is one row: the full batches' replicas stay
  // cached across it (it used to replace them with the original alone).
  auto ctx = make_ctx(2);
  auto model = mlp(ctx);
  DataParallelOptions o;
  o.cache_replicas = true;
  DataParallel w(model, {cpu(0), cpu(1)}, std::nullopt, 0, o);
  GradModeGuard no_grad(false);
  const Tensor full = make_batches(ctx, false, 1, 4)[0].x;
  const Tensor one = ops::split(full, {1, 3}, 0)[0];
  w.forward({full});
  w.forward({one});
  w.forward({full});
  PhaseTimes last;
  w.stats().read(&last, nullptr, nullptr);
  EXPECT_EQ(last.replicate, 0.0) << "the cached replicas were broadcast again";
}

TEST(DataParallelReplicas, OneChunkOnAnotherDeviceIsGatheredToTheOutputDevice) {
  // chunk_sizes that give device_ids[0] no rows: the one chunk runs as replica 1; its
  // output still goes to output_device (default device_ids[0]), as every gather does.
  auto ctx = make_ctx(2);
  auto model = mlp(ctx);
  DataParallelOptions o;
  o.chunk_sizes = {0, 4};
  DataParallel w(model, {cpu(0), cpu(1)}, std::nullopt, 0, o);
  const Tensor x = make_batches(ctx, false, 1, 4)[0].x;
  const Tensor y = w.forward({x})[0];
  EXPECT_EQ(y.device(), cpu(0));
  EXPECT_EQ(host(y), host((*model)({x})[0]));
}

TEST(DataParallelReplicas, BuffersThatRequireGradGetTheSumOfTheReplicasGradients) {
  // out = x * b with b a buffer that requires grad: d(sum out)/db = the column sums of x
  // over the whole batch, which only the replicas together see (docs/spec.md 5: only buffers
  // that do not require grad are broadcast detached).
  auto ctx = make_ctx(2);
  auto m = std::make_shared<CallbackModule>(
      ctx, "Scale",
      [](Module& self, const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::mul(in[0], self.buffer("b"))};
      },
      nullptr);
  std::vector<float> bv{2, 3};
  Tensor b = ops::from_host(ctx, {2}, DType::kFloat32, cpu(0), bv.data());
  b.set_requires_grad(true);
  m->register_buffer("b", b);
  DataParallel w(m, {cpu(0), cpu(1)}, std::nullopt, 0, DataParallelOptions{});
  const Tensor x = rows_4x2(ctx, 1);
  backward({ops::sum(w.forward({x})[0])}, {});
  ASSERT_TRUE(b.grad().defined());
  EXPECT_EQ(host(b.grad()), (std::vector<float>{1 + 3 + 5 + 11, 10 + 20 + 40 + 60}));
}

TEST(DataParallelReplicas, AParameterALoneReplicaDoesNotUseGetsAZeroGradientAsWithSeveral) {
  // docs/spec.md 5: a parameter used by no replica gets a zero gradient. A batch of one row makes
  // one chunk, and a forward without inputs runs once: PyTorch runs that lone replica on a
  // broadcast copy, whose backward gives the zeros; ours is the original itself, and must
  // give them too. Wrapper and functional form; the used parameter's gradient unchanged.
  auto ctx = make_ctx(2);
  auto m = std::make_shared<CallbackModule>(
      ctx, "UsesW",
      [](Module& self, const std::vector<Tensor>& in) {
        const Tensor& w = self.param("w");
        return std::vector<Tensor>{in.empty() ? ops::mul(w, w) : ops::mul(in[0], w)};
      },
      nullptr);
  std::vector<float> wv{2, 3};
  m->register_parameter("w", ops::from_host(ctx, {2}, DType::kFloat32, cpu(0), wv.data()));
  m->register_parameter("u", ops::full(ctx, {3}, DType::kFloat32, cpu(0), 5.0));
  std::vector<float> xv{7, 11};
  const Tensor x = ops::from_host(ctx, {1, 2}, DType::kFloat32, cpu(0), xv.data());
  DataParallel w(m, {cpu(0), cpu(1)}, std::nullopt, 0, DataParallelOptions{});
  const std::vector<float> zeros{0, 0, 0};
  struct Case {
    const char* what;
    std::function<Tensor()> forward;
    std::vector<float> w_grad;  // d(sum out)/dw: x's row, or 2 w without inputs
  };
  const Case cases[] = {
      {"one row", [&] { return w.forward({x})[0]; }, {7, 11}},
      {"no inputs", [&] { return w.forward({})[0]; }, {4, 6}},
      {"functional, one row",
       [&] {
         return data_parallel(*m, {x}, {cpu(0), cpu(1)}, std::nullopt, 0, {})[0];
       },
       {7, 11}},
      {"functional, no inputs",
       [&] {
         return data_parallel(*m, {}, {cpu(0), cpu(1)}, std::nullopt, 0, {})[0];
       },
       {4, 6}},
  };
  for (const Case& c : cases) {
    m->zero_grad();
    backward({ops::sum(c.forward())}, {});
    ASSERT_TRUE(m->param("u").grad().defined()) << c.what;
    EXPECT_EQ(host(m->param("u").grad()), zeros) << c.what;
    EXPECT_EQ(m->param("u").grad().device(), cpu(0)) << c.what;
    EXPECT_EQ(host(m->param("w").grad()), c.w_grad) << c.what;
  }
  // With one device id there is no replica, as in PyTorch: the module runs itself.
  DataParallel single(m, {cpu(0)}, std::nullopt, 0, DataParallelOptions{});
  m->zero_grad();
  backward({ops::sum(single.forward({x})[0])}, {});
  EXPECT_FALSE(m->param("u").grad().defined());
}

TEST(DataParallelReplicas, ALoneReplicaGivesGradientsWhereSeveralReplicasDo) {
  // Which tensors get a gradient (and which of them zeros) must not depend on whether the
  // batch made one chunk or two: zeros come only once backward reaches the broadcast of
  // their group (parameters; buffers that require grad), as in PyTorch.
  auto ctx = make_ctx(2);
  // out[0] = x * w + b (b: a buffer that requires grad) when `uses` says so; out[1] = 2 x.
  struct Uses {
    bool w, b;
  };
  auto make = [&](Uses uses) {
    auto m = std::make_shared<CallbackModule>(
        ctx, "Uses",
        [uses](Module& self, const std::vector<Tensor>& in) {
          Tensor y = ops::scale(in[0], 1.0);
          if (uses.w) y = ops::mul(y, self.param("w"));
          if (uses.b) y = ops::add(y, self.buffer("b"));
          return std::vector<Tensor>{y, ops::scale(in[0], 2.0)};
        },
        nullptr);
    m->register_parameter("w", ops::full(ctx, {2}, DType::kFloat32, cpu(0), 3.0));
    m->register_parameter("u", ops::full(ctx, {2}, DType::kFloat32, cpu(0), 5.0));
    Tensor b = ops::full(ctx, {2}, DType::kFloat32, cpu(0), 1.0);
    b.set_requires_grad(true);
    m->register_buffer("b", b);
    m->register_buffer("c", [&] {
      Tensor c = ops::full(ctx, {2}, DType::kFloat32, cpu(0), 1.0);
      c.set_requires_grad(true);
      return c;
    }());
    return m;
  };
  // Per tensor: "none", or its gradient's values.
  auto grads_after = [&](Uses uses, int64_t rows, size_t output) {
    auto m = make(uses);
    DataParallel w(m, {cpu(0), cpu(1)}, std::nullopt, 0, DataParallelOptions{});
    Tensor x = ops::full(ctx, {rows, 2}, DType::kFloat32, cpu(0), 1.0);
    x.set_requires_grad(true);
    backward({ops::sum(w.forward({x})[output])}, {});
    std::map<std::string, std::string> got;
    for (const auto& [name, t] : m->state()) {
      if (!t.grad().defined()) {
        got[name] = "none";
        continue;
      }
      std::ostringstream os;
      for (float v : host(t.grad())) os << (v == 0 ? 0.0f : v / static_cast<float>(rows)) << " ";
      got[name] = os.str();  // per row, so that one row and four compare
    }
    return got;
  };
  const struct {
    const char* what;
    Uses uses;
    size_t output;
  } cases[] = {{"w and b used", {true, true}, 0},
               {"w used", {true, false}, 0},
               {"b used", {false, true}, 0},
               {"neither: the output depends on x alone", {false, false}, 0},
               {"the output that uses none", {true, true}, 1}};
  for (const auto& c : cases) {
    EXPECT_EQ(grads_after(c.uses, 1, c.output), grads_after(c.uses, 4, c.output)) << c.what;
  }
  // And the expected pattern, for one case by hand: w used, b not.
  const auto w_used = grads_after({true, false}, 1, 0);
  EXPECT_EQ(w_used.at("u"), "0 0 ");
  EXPECT_EQ(w_used.at("w"), "1 1 ");
  EXPECT_EQ(w_used.at("b"), "none");
  EXPECT_EQ(w_used.at("c"), "none");
}

// An MLP, and a custom module whose forward runs it under a DataParallel over cpu:0 and
// cpu:1 on its input (moved to cpu:0, where the MLP lives).
struct InnerDataParallel {
  std::shared_ptr<Module> model;
  std::shared_ptr<Module> outer;
};

InnerDataParallel inner_data_parallel(const std::shared_ptr<Context>& ctx) {
  auto model = mlp(ctx);
  auto inner = std::make_shared<DataParallel>(model, std::vector<Device>{cpu(0), cpu(1)},
                                              std::nullopt, 0, DataParallelOptions{});
  auto outer = std::make_shared<CallbackModule>(
      ctx, "Outer",
      [inner](Module&, const std::vector<Tensor>& in) {
        return inner->forward({ops::to_device(in[0], cpu(0))});
      },
      nullptr);
  return {model, outer};
}

TEST(DataParallelApply, ADataParallelInsideAReplicaIsRefusedNotDeadlocked) {
  // Under an outer DataParallel each replica's worker would wait for the other's: refused.
  // Called on its own it runs (its device's worker runs the inner replica 0 itself).
  auto ctx = make_ctx(2);
  auto [inner_model, outer_model] = inner_data_parallel(ctx);
  const Tensor x = make_batches(ctx, false, 1, 8)[0].x;
  GradModeGuard no_grad(false);
  const auto want = host((*inner_model)({x})[0]);
  // Chunks of 4 rows against the whole batch of 8: a GEMM may round a row differently
  // with another row count (oneDNN's AVX2 kernels do), so close, not equal.
  expect_close(host((*outer_model)({x})[0]), want, 1e-5, "the inner DataParallel's output");
  DataParallel outer(outer_model, {cpu(0), cpu(1)}, std::nullopt, 0, DataParallelOptions{});
  try {
    outer.forward({x});
    ADD_FAILURE() << "a DataParallel inside a replica ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kState);
    EXPECT_NE(std::string(e.what()).find("cannot run inside a replica"), std::string::npos)
        << e.what();
  }
  // And nothing is stuck afterwards.
  expect_close(host((*outer_model)({x})[0]), want, 1e-5, "the output after the refusal");
}

TEST(DataParallelApply, TwoCustomForwardsOnTwoDevicesEachRunningAModuleOnTheOthersFinish) {
  // A custom module on cpu:0 whose forward runs a Linear on cpu:1, and one on cpu:1 that
  // runs a Linear on cpu:0, called from two threads at once: each forward's worker waits
  // for the other's, and runs the other's request meanwhile (this used to hang).
  auto ctx = make_ctx(2);
  auto lin0 = std::make_shared<Linear>(ctx, 4, 3, true, cpu(0), DType::kFloat32);
  auto lin1 = std::make_shared<Linear>(ctx, 4, 3, true, cpu(1), DType::kFloat32);
  std::vector<float> v{1, -2, 3, 0.5f, -1, 4, 2, -3};
  const Tensor x0 = ops::from_host(ctx, {2, 4}, DType::kFloat32, cpu(0), v.data());
  const Tensor x1 = ops::to_device(x0, cpu(1));
  GradModeGuard no_grad(false);
  const auto want0 = host((*lin0)({x0})[0]), want1 = host((*lin1)({x1})[0]);
  std::atomic<int> arrived{0};
  auto crossing = [&](const std::shared_ptr<Linear>& other, const Tensor& input) {
    return [&, other, input](Module&, const std::vector<Tensor>&) {
      GradModeGuard off(false);  // the async threads' grad mode is their own
      arrived.fetch_add(1);      // both forwards are running before either calls the other device
      while (arrived.load() < 2) std::this_thread::yield();
      return (*other)({input});
    };
  };
  auto on0 = std::make_shared<CallbackModule>(ctx, "On0", crossing(lin1, x1), nullptr);
  auto on1 = std::make_shared<CallbackModule>(ctx, "On1", crossing(lin0, x0), nullptr);
  std::vector<float> got0, got1;
  finishes_within(30, "two custom forwards calling into each other's device", [&] {
    auto done0 = std::async(std::launch::async, [&] { return host((*on0)({x0})[0]); });
    auto done1 = std::async(std::launch::async, [&] { return host((*on1)({x1})[0]); });
    got0 = done0.get();
    got1 = done1.get();
  });
  EXPECT_EQ(got0, want1);
  EXPECT_EQ(got1, want0);
}

TEST(DataParallelApply, TwoCustomForwardsEachRunningADataParallelOverBothDevicesFinish) {
  // Custom modules on cpu:0 and cpu:1, called from two threads at once, each running a
  // DataParallel (of a model of its own) over cpu:0 and cpu:1: each one's replica for the
  // other's device waits behind the other's forward, which runs it while it waits for its
  // own replicas.
  auto ctx = make_ctx(2);
  const Tensor x = make_batches(ctx, false, 1, 8)[0].x;
  const Tensor x1 = ops::to_device(x, cpu(1));
  struct Side {
    std::shared_ptr<Module> model;
    std::shared_ptr<DataParallel> dp;
    std::vector<float> want;
  };
  GradModeGuard no_grad(false);
  std::vector<Side> sides;
  for (int i = 0; i < 2; ++i) {
    Side side;
    // The MLP inside a custom module: replicas that hold user code run on their devices'
    // workers (none on the calling one), so each forward waits in its TaskGroup.
    side.model = std::make_shared<CallbackModule>(
        ctx, "Wrapped",
        [](Module& self, const std::vector<Tensor>& in) {
          return (*self.children()[0].second)(in);
        },
        nullptr);
    side.model->register_module("mlp", mlp(ctx));
    side.dp = std::make_shared<DataParallel>(side.model, std::vector<Device>{cpu(0), cpu(1)},
                                             std::nullopt, 0, DataParallelOptions{});
    side.want = host((*side.model)({x})[0]);
    sides.push_back(side);
  }
  std::atomic<int> arrived{0};
  auto forward_with = [&](const std::shared_ptr<DataParallel>& dp) {
    return [&, dp](Module&, const std::vector<Tensor>&) {
      GradModeGuard off(false);  // the async threads' grad mode is their own
      arrived.fetch_add(1);      // both forwards are running before either starts its DataParallel
      while (arrived.load() < 2) std::this_thread::yield();
      return dp->forward({x});
    };
  };
  auto on0 = std::make_shared<CallbackModule>(ctx, "On0", forward_with(sides[0].dp), nullptr);
  auto on1 = std::make_shared<CallbackModule>(ctx, "On1", forward_with(sides[1].dp), nullptr);
  std::vector<float> got[2];
  finishes_within(30, "two custom forwards each running a DataParallel", [&] {
    auto done0 = std::async(std::launch::async, [&] { return host((*on0)({x})[0]); });
    auto done1 = std::async(std::launch::async, [&] { return host((*on1)({x1})[0]); });
    got[0] = done0.get();
    got[1] = done1.get();
  });
  for (int s = 0; s < 2; ++s) {
    ASSERT_EQ(got[s].size(), sides[s].want.size());
    for (size_t i = 0; i < got[s].size(); ++i) {
      EXPECT_NEAR(got[s][i], sides[s].want[i], 1e-5f * (1 + std::fabs(sides[s].want[i])));
    }
  }
}

TEST(DataParallelApply, ACustomForwardOnAnotherDeviceRunsADataParallelOverItsOwnDevice) {
  // The custom module gets its input on cpu:1, so its forward runs on cpu:1's worker; the
  // inner DataParallel's replica 1 is for that same worker, and runs there, inline (it
  // used to be queued behind the running forward: a hang).
  auto ctx = make_ctx(2);
  auto [inner_model, outer] = inner_data_parallel(ctx);
  const Tensor x = make_batches(ctx, false, 1, 8)[0].x;
  GradModeGuard no_grad(false);
  const auto want = host((*inner_model)({x})[0]);
  std::vector<float> got;
  finishes_within(60, "the custom forward running a DataParallel",
                  [&] { got = host((*outer)({ops::to_device(x, cpu(1))})[0]); });
  expect_close(got, want, 1e-5, "the inner DataParallel's output");  // chunks of 4 rows
}

TEST(DataParallelComm, BroadcastPacksTensorsIntoBucketsOfTheGivenSize) {
  auto ctx = make_ctx(2);
  std::vector<Tensor> ts;
  for (int i = 0; i < 5; ++i) ts.push_back(ops::full(ctx, {100}, DType::kFloat32, cpu(0), i + 1.0));
  // 400 bytes each; buckets of 1000 bytes hold two tensors: 3 buckets.
  auto out = comm::broadcast_coalesced(ts, {cpu(0), cpu(1)}, 1000, /*alias_cpu=*/false);
  ASSERT_EQ(out[1].size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(out[1][i].device(), cpu(1));
    EXPECT_EQ(host(out[1][i]), std::vector<float>(100, i + 1.0f));
    EXPECT_TRUE(out[0][i].same(ts[i]) || out[0][i].data() == ts[i].data());
  }
  EXPECT_EQ(out[1][0].impl()->storage, out[1][1].impl()->storage);  // one bucket
  EXPECT_NE(out[1][1].impl()->storage, out[1][2].impl()->storage);  // the next bucket
  EXPECT_EQ(out[1][2].impl()->storage, out[1][3].impl()->storage);
  EXPECT_NE(out[1][3].impl()->storage, out[1][4].impl()->storage);
}

TEST(DataParallelComm, ReduceAddSumsAcrossDevices) {
  auto ctx = make_ctx(3);
  std::vector<Tensor> parts;
  for (int d = 0; d < 3; ++d)
    parts.push_back(ops::full(ctx, {4}, DType::kFloat32, cpu(d), d + 1.0));
  EXPECT_EQ(host(comm::reduce_add(parts, cpu(1))), std::vector<float>(4, 6.0f));
  EXPECT_EQ(comm::reduce_add(parts, cpu(1)).device(), cpu(1));
}

// Gather's errors name the replica and output, whatever the outputs' ranks and dtypes.
TEST(DataParallelGather, ErrorsNameTheOutputForScalarsOffDimZeroAndMixedDtypes) {
  auto ctx = make_ctx(2);
  auto expect_error = [&](const std::vector<std::vector<Tensor>>& outputs, int dim, Code code,
                          const std::string& needle) {
    try {
      parallel::gather_outputs(outputs, cpu(0), dim, true, nullptr, nullptr);
      ADD_FAILURE() << "gathered; expected \"" << needle << "\"";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const Tensor s0 = ops::full(ctx, {}, DType::kFloat32, cpu(0), 1.0);
  const Tensor s1 = ops::full(ctx, {}, DType::kFloat32, cpu(1), 2.0);
  // Scalars gather along dim 0 only; -1 and 1 used to fail on the range of dim, or as a
  // shape mismatch between two identical shapes [].
  for (int dim : {1, -1}) {
    expect_error({{s0}, {s1}}, dim, Code::kShapeMismatch,
                 "gather: output 0 is 0-dim on every replica and dim = " + std::to_string(dim));
  }
  const Tensor f32 = ops::zeros(ctx, {2, 3}, DType::kFloat32, cpu(0));
  const Tensor f64 = ops::zeros(ctx, {2, 3}, DType::kFloat64, cpu(1));
  expect_error({{f32}, {f64}}, 0, Code::kDtypeMismatch,
               "gather: replica 1 output 0 is float64 but replica 0's is float32");
  // One replica's scalar becomes a vector of one value, as PyTorch's gather makes it.
  const Tensor one = parallel::gather_outputs({{s1}}, cpu(0), 0, true, nullptr, nullptr)[0];
  EXPECT_EQ(one.shape(), Shape{1});
  EXPECT_EQ(one.device(), cpu(0));
  EXPECT_EQ(host(one), std::vector<float>{2.0f});
}

TEST(DataParallelComm, ChunkSizesFollowTorchChunk) {
  EXPECT_EQ(comm::chunk_sizes(10, 4), (std::vector<int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(comm::chunk_sizes(9, 4), (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(comm::chunk_sizes(6, 4), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(comm::chunk_sizes(3, 4), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(comm::chunk_sizes(9, 8), (std::vector<int64_t>{2, 2, 2, 2, 1}));
  EXPECT_EQ(comm::chunk_sizes(0, 3), (std::vector<int64_t>{0, 0, 0}));
}

TEST(DataParallelImbalance, WarnsOnMemoryBelowThreeQuartersNamingBothGpus) {
  const std::vector<Device> d{cuda(0), cuda(1)};
  EXPECT_EQ(imbalance_warning(d, {80, 80}, {132, 132}), "");
  EXPECT_EQ(imbalance_warning(d, {80, 61}, {132, 132}), "");        // 76%: balanced
  EXPECT_EQ(imbalance_warning(d, {80, 60}, {132, 132}), "");        // exactly 75%: balanced
  EXPECT_NE(imbalance_warning(d, {80000, 59999}, {132, 132}), "");  // just under: warns
  const std::string w = imbalance_warning(d, {80, 40}, {132, 132});
  EXPECT_NE(w.find("cuda:1 has less than 75% of the memory of cuda:0"), std::string::npos) << w;
}

TEST(DataParallelImbalance, ChecksMultiprocessorsOnlyWhenMemoryIsBalanced) {
  const std::vector<Device> d{cuda(0), cuda(1)};
  const std::string w = imbalance_warning(d, {80, 80}, {40, 132});
  EXPECT_NE(w.find("cuda:0 has less than 75% of the multiprocessors of cuda:1"), std::string::npos)
      << w;
  // Memory unbalanced: the memory warning only.
  EXPECT_EQ(imbalance_warning(d, {80, 20}, {40, 132}).find("multiprocessors"), std::string::npos);
}

}  // namespace
}  // namespace dp
