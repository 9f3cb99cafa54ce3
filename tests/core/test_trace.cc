// DP_TRACE's timeline: one training step of the MLP over two CPU devices, and one on a
// single device, written as a Chrome trace, read back, and checked for who ran what and
// when.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/engine.h"
#include "device/trace.h"
#include "optim/optimizer.h"
#include "parallel/data_parallel.h"
#include "test_context.h"
#include "test_models.h"

namespace dp {
namespace {

struct Span {
  std::string thread, name;
  double begin, end;
  int64_t arg;
};

std::vector<Span> read_trace(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::map<int, std::string> threads;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M") threads[e.at("tid").get<int>()] = e.at("args").at("name");
  }
  std::vector<Span> spans;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const double ts = e.at("ts").get<double>();
    spans.push_back({threads.at(e.at("tid").get<int>()), e.at("name"), ts,
                     ts + e.at("dur").get<double>(),
                     e.contains("args") ? e.at("args").at("i").get<int64_t>() : -1});
  }
  return spans;
}

std::vector<Span> named(const std::vector<Span>& spans, const std::string& name) {
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (s.name == name) out.push_back(s);
  }
  return out;
}

bool inside(const Span& inner, const Span& outer) {
  return inner.begin >= outer.begin && inner.end <= outer.end;
}

// Waits (up to 30 s) for the worker to sleep, which it does once it has spun DP_SPIN_US
// with nothing to do. The caller runs an idle worker's work itself, but a worker on its
// way to sleep holds its execution lock for a moment, and if a loaded machine preempts it
// right there the work goes to its thread: the tests that check who ran what start each
// phase once the worker sleeps.
bool sleeps(const Worker& w) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!w.asleep() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return w.asleep();
}

TEST(Trace, ATrainingStepShowsEachPhaseOnTheThreadThatRanIt) {
  const std::string path = ::testing::TempDir() + "dp_trace_test.json";
  std::remove(path.c_str());
  auto ctx = testing_util::cpu_context(2, /*seed=*/3);
  auto model = testing_util::mlp(ctx);
  DataParallel wrapper(model, {cpu(0), cpu(1)}, std::nullopt, 0, DataParallelOptions{});
  Sgd opt(model->parameters(), SgdOptions{0.05, 0.9, 0, 0, false});
  const auto batch = testing_util::make_batches(ctx, false, 1, 64)[0];
  trace::name_thread("caller");

  trace::start(path);
  ASSERT_TRUE(sleeps(ctx->worker(cpu(0))));
  const Tensor out = wrapper.forward({batch.x})[0];
  ASSERT_TRUE(sleeps(ctx->worker(cpu(0))));
  backward({ops::cross_entropy(out, batch.y)}, {});
  opt.step();
  ASSERT_TRUE(trace::stop());
  EXPECT_FALSE(trace::stop()) << "a second stop has nothing to write";
  EXPECT_FALSE(trace::enabled());

  const auto spans = read_trace(path);
  for (const Span& s : spans) EXPECT_LE(s.begin, s.end) << s.name;

  // The caller: one forward holding the four stages in pipeline order.
  const auto forward = named(spans, "data parallel forward");
  ASSERT_EQ(forward.size(), 1u);
  EXPECT_EQ(forward[0].thread, "caller");
  double last = forward[0].begin;
  for (const char* stage : {"scatter", "replicate", "apply", "gather"}) {
    const auto s = named(spans, stage);
    ASSERT_EQ(s.size(), 1u) << stage;
    EXPECT_EQ(s[0].thread, "caller") << stage;
    EXPECT_TRUE(inside(s[0], forward[0])) << stage;
    EXPECT_GE(s[0].begin, last) << stage << " starts before the stage ahead of it ends";
    last = s[0].end;
  }

  // Each replica's forward inside the caller's apply: replica 1 on cpu:1's worker, and
  // replica 0 on the caller itself, working as cpu:0 (whose worker is idle).
  const auto apply = named(spans, "apply")[0];
  const auto replicas = named(spans, "replica forward");
  ASSERT_EQ(replicas.size(), 2u);
  for (const Span& r : replicas) {
    ASSERT_TRUE(r.arg == 0 || r.arg == 1);
    EXPECT_EQ(r.thread, r.arg == 0 ? "caller" : "cpu:1");
    EXPECT_TRUE(inside(r, apply)) << "replica " << r.arg;
  }

  // Backward: three Linear layers per replica, replica 0's on the caller (cpu:0 being the
  // loss's device) and replica 1's on cpu:1, inside the caller's call; the gradients of
  // the two replicas are summed.
  const auto autograd = named(spans, "autograd backward");
  ASSERT_EQ(autograd.size(), 1u);
  std::map<std::string, int> linear_backward;
  for (const Span& s : named(spans, "LinearBackward")) {
    ++linear_backward[s.thread];
    EXPECT_TRUE(inside(s, autograd[0]));
  }
  EXPECT_EQ(linear_backward["caller"], 3);
  EXPECT_EQ(linear_backward["cpu:1"], 3);
  EXPECT_EQ(named(spans, "gradient sum").size(), 6u) << "one per parameter";

  // The optimizer: the caller's step, the updates within it, on the workers or on the
  // caller (which runs CPU device 0's share while that worker is idle).
  const auto step = named(spans, "optimizer step");
  ASSERT_EQ(step.size(), 1u);
  EXPECT_EQ(step[0].thread, "caller");
  const auto updates = named(spans, "optimizer update");
  ASSERT_FALSE(updates.empty());
  for (const Span& u : updates) {
    EXPECT_TRUE(u.thread == "caller" || u.thread == "cpu:0" || u.thread == "cpu:1") << u.thread;
    EXPECT_TRUE(inside(u, step[0]));
  }
}

TEST(Trace, AStepOnOneIdleCpuDeviceRunsItsBackwardAndFirstUpdateChunkOnTheCaller) {
  const std::string path = ::testing::TempDir() + "dp_trace_one_device.json";
  std::remove(path.c_str());
  auto ctx = testing_util::cpu_context(2, /*seed=*/3);
  auto model = testing_util::mlp(ctx);
  Sgd opt(model->parameters(), SgdOptions{0.05, 0.9, 0, 0, false});
  const auto batch = testing_util::make_batches(ctx, false, 1, 64)[0];
  trace::name_thread("caller");

  // The optimizer's first chunk runs on the caller only while cpu:0's worker sleeps.
  trace::start(path);
  const Tensor out = model->forward({batch.x})[0];
  ASSERT_TRUE(sleeps(ctx->worker(cpu(0))));
  backward({ops::cross_entropy(out, batch.y)}, {});
  ASSERT_TRUE(sleeps(ctx->worker(cpu(0))));
  opt.step();
  ASSERT_TRUE(trace::stop());

  const auto spans = read_trace(path);
  // Every node of the graph is on cpu:0, which is idle: the caller runs them all.
  const auto linear = named(spans, "LinearBackward");
  EXPECT_EQ(linear.size(), 3u);
  const auto accumulate = named(spans, "AccumulateGrad");
  EXPECT_EQ(accumulate.size(), model->parameters().size());
  for (const auto* list : {&linear, &accumulate}) {
    for (const Span& s : *list) EXPECT_EQ(s.thread, "caller") << s.name;
  }
  // The optimizer's first chunk runs on the caller too, as cpu:0.
  bool caller_updated = false;
  for (const Span& u : named(spans, "optimizer update")) caller_updated |= u.thread == "caller";
  EXPECT_TRUE(caller_updated);
}

TEST(Trace, NothingIsRecordedWhenTracingIsOff) {
  ASSERT_FALSE(trace::enabled());
  EXPECT_FALSE(trace::stop());
  { trace::Span span("never recorded"); }
  const std::string path = ::testing::TempDir() + "dp_trace_off.json";
  trace::start(path);
  ASSERT_TRUE(trace::stop());
  for (const Span& s : read_trace(path)) EXPECT_NE(s.name, "never recorded");
}

}  // namespace
}  // namespace dp
