// Every op on a CUDA device agrees with the CPU backend: the same float32 inputs go
// through the op on cpu:0 and on cuda:0, forward and backward (the gradient of
// sum(f(x) * w) for fixed random weights w), and the results must match to 1e-5 relative
// to each tensor's scale (TF32 off). A few float64 runs check the double instantiations.
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <random>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "cuda_test_util.h"
#include "error.h"
#include "optim/optimizer.h"

namespace dp {
namespace {

using cuda_test::expect_close;
using cuda_test::values;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

constexpr double kRtol = 1e-5;
// cuDNN's convolutions may run FFT or Winograd algorithms (as PyTorch's default choice
// does), whose float32 transforms round differently from a dot product: over the
// thousands of terms of a weight gradient they land about 1e-5 of the tensor's scale from
// the CPU (1.05e-5 seen on an H200 with a 16-image batch). The cuDNN engines are held to
// 3e-5; im2col, whose products are plain GEMMs, to kRtol.
constexpr double kCudnnConvRtol = 3e-5;
#if DP_HAVE_CUDNN
constexpr double kDefaultConvRtol = kCudnnConvRtol;
#else
constexpr double kDefaultConvRtol = kRtol;
#endif

class CudaOps : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = cuda_test::make_context(nullptr);
    DP_SKIP_WITHOUT_CUDA(ctx_, 1);
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }

  // Uniform in [lo, hi) on cpu:0; requires grad unless `grad` is false.
  Tensor rand(const Shape& s, double lo = -1, double hi = 1, bool grad = true,
              DType dtype = DType::kFloat32) {
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(static_cast<size_t>(numel_of(s)));
    for (double& x : v) x = u(rng_);
    Tensor t = ops::from_host(ctx_, s, DType::kFloat64, cpu(0), v.data());
    if (dtype != DType::kFloat64) t = ops::to_dtype(t, dtype);
    t.set_requires_grad(grad);
    return t;
  }

  Tensor int64s(const Shape& s, std::vector<int64_t> v) {
    return ops::from_host(ctx_, s, DType::kInt64, cpu(0), v.data());
  }

  // The same tensor on `device` (a leaf with the same requires_grad).
  static Tensor moved(const Tensor& t, Device device) {
    Tensor c = ops::to_device(t.detach(), device);
    c.set_requires_grad(t.requires_grad());
    return c;
  }

  struct Run {
    Tensor y;
    std::vector<Tensor> inputs;
  };

  Run run(const Fn& f, const std::vector<Tensor>& inputs, Device device,
          const std::vector<double>& w) {
    Run r;
    for (const Tensor& t : inputs) r.inputs.push_back(moved(t, device));
    r.y = f(r.inputs);
    if (r.y.requires_grad()) {
      Tensor wt = ops::from_host(ctx_, r.y.shape(), DType::kFloat64, device, w.data());
      if (r.y.dtype() != DType::kFloat64) wt = ops::to_dtype(wt, r.y.dtype());
      backward({r.y}, {wt});
    }
    return r;
  }

  // f on the CPU and on cuda:0 from the same inputs: outputs and every input's gradient
  // must agree.
  void agree(const std::string& what, const Fn& f, const std::vector<Tensor>& inputs,
             double rtol = kRtol) {
    SCOPED_TRACE(what + " (seed " + std::to_string(seed_) + ")");
    Tensor probe;
    {
      GradModeGuard no_grad(false);
      probe = f(inputs);
    }
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> w(static_cast<size_t>(probe.numel()));
    for (double& x : w) x = u(rng_);
    const Run c = run(f, inputs, cpu(0), w);
    const Run g = run(f, inputs, cuda(0), w);
    ASSERT_EQ(g.y.device(), cuda(0));
    ASSERT_EQ(g.y.shape(), c.y.shape());
    expect_close(values(g.y), values(c.y), rtol, what + ": output");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].requires_grad() || !c.inputs[i].grad().defined()) continue;
      ASSERT_TRUE(g.inputs[i].grad().defined()) << "input " << i << " has no gradient on CUDA";
      EXPECT_EQ(g.inputs[i].grad().device(), cuda(0));
      expect_close(values(g.inputs[i].grad()), values(c.inputs[i].grad()), rtol,
                   what + ": gradient of input " + std::to_string(i));
    }
  }

  // A context made with the environment variable `name` set to `value` (the plugin reads it
  // when it starts).
  static std::shared_ptr<Context> context_with(const char* name, const char* value) {
    return cuda_test::make_context_with(name, value, nullptr);
  }

  void agree_on_convolutions(double rtol) {
    agree(
        "conv 3x3 stride 1 pad 1",
        [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1); },
        {rand({2, 3, 7, 7}), rand({4, 3, 3, 3}), rand({4})}, rtol);
    agree(
        "conv 3x3 stride 2 no bias",
        [](auto& x) { return ops::conv2d(x[0], x[1], Tensor(), 2, 2, 0, 0); },
        {rand({2, 2, 8, 9}), rand({3, 2, 3, 3})}, rtol);
    agree(
        "conv + relu", [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1, true); },
        {rand({3, 2, 6, 6}), rand({5, 2, 3, 3}), rand({5})}, rtol);
    agree(
        "conv 1x1", [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 0, 0); },
        {rand({2, 4, 5, 5}), rand({3, 4, 1, 1}), rand({3})}, rtol);
    agree(
        "conv 5x3 stride (2,1) pad (2,0)",
        [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 2, 1, 2, 0); },
        {rand({2, 3, 9, 7}), rand({4, 3, 5, 3}), rand({4})}, rtol);
    agree(
        "conv 32 -> 64 channels on 14x14",
        [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1, true); },
        {rand({8, 32, 14, 14}), rand({64, 32, 3, 3}, -0.1, 0.1), rand({64})}, rtol);
  }

  std::shared_ptr<Context> ctx_;
  uint32_t seed_ = 0;
  std::mt19937_64 rng_;
};

TEST_F(CudaOps, ArithmeticBroadcastsLikeTheCpu) {
  agree("add [3,4]+[4]", [](auto& x) { return ops::add(x[0], x[1]); }, {rand({3, 4}), rand({4})});
  agree("sub [3,1]-[3,4]", [](auto& x) { return ops::sub(x[0], x[1]); },
        {rand({3, 1}), rand({3, 4})});
  agree("mul [2,3,4]*[3,1]", [](auto& x) { return ops::mul(x[0], x[1]); },
        {rand({2, 3, 4}), rand({3, 1})});
  agree("div [3,4]/[4]", [](auto& x) { return ops::div(x[0], x[1]); },
        {rand({3, 4}), rand({4}, 0.5, 2.0)});
  agree("div scalar/[5]", [](auto& x) { return ops::div(x[0], x[1]); },
        {rand({}), rand({5}, 0.5, 2.0)});
  agree("add [300,257]+[300,257]", [](auto& x) { return ops::add(x[0], x[1]); },
        {rand({300, 257}), rand({300, 257})});
  agree("neg", [](auto& x) { return ops::neg(x[0]); }, {rand({7})});
  agree("scale", [](auto& x) { return ops::scale(x[0], -2.5); }, {rand({2, 3})});
  agree("add_scalar", [](auto& x) { return ops::add_scalar(x[0], 4.0); }, {rand({2, 3})});
}

TEST_F(CudaOps, ActivationsMatchTheCpu) {
  agree("relu", [](auto& x) { return ops::relu(x[0]); }, {rand({40, 50})});
  agree("gelu", [](auto& x) { return ops::gelu(x[0]); }, {rand({40, 50}, -3, 3)});
  agree("tanh", [](auto& x) { return ops::tanh(x[0]); }, {rand({40, 50}, -3, 3)});
  agree("sigmoid", [](auto& x) { return ops::sigmoid(x[0]); }, {rand({40, 50}, -4, 4)});
  agree("exp", [](auto& x) { return ops::exp(x[0]); }, {rand({40, 50})});
  agree("log", [](auto& x) { return ops::log(x[0]); }, {rand({40, 50}, 0.2, 3)});
}

TEST_F(CudaOps, ReductionsMatchTheCpuForEveryShapeOfReduction) {
  agree("sum all", [](auto& x) { return ops::sum(x[0]); }, {rand({3, 4})});
  agree("sum all of 300k", [](auto& x) { return ops::sum(x[0]); }, {rand({300, 1000})});
  agree("sum dim 1", [](auto& x) { return ops::sum(x[0], 1, false); }, {rand({3, 4, 2})});
  agree("sum dim -1 keepdim", [](auto& x) { return ops::sum(x[0], -1, true); }, {rand({3, 4})});
  agree("sum of long rows", [](auto& x) { return ops::sum(x[0], 1, false); }, {rand({4, 100000})});
  agree("sum of long columns", [](auto& x) { return ops::sum(x[0], 0, false); },
        {rand({50000, 8})});
  agree("mean all", [](auto& x) { return ops::mean(x[0]); }, {rand({3, 4})});
  agree("mean dim 0", [](auto& x) { return ops::mean(x[0], 0, false); }, {rand({5, 3})});
  // Broadcasting's backward sums over dims 0 and 2 at once (two passes).
  agree("sum_to [3,1] from [2,3,4]", [](auto& x) { return ops::mul(x[0], x[1]); },
        {rand({2, 3, 4}, -1, 1, false), rand({3, 1})});
  agree("mse_loss", [](auto& x) { return ops::mse_loss(x[0], x[1]); },
        {rand({6, 5}), rand({6, 5})});
}

TEST_F(CudaOps, ArgmaxPicksTheSameIndices) {
  for (int dim : {0, 1}) {
    Tensor x = rand({37, 10}, -1, 1, false);
    const Tensor c = ops::argmax(x, dim);
    const Tensor g = ops::argmax(ops::to_device(x, cuda(0)), dim);
    std::vector<int64_t> vc(static_cast<size_t>(c.numel())), vg(vc.size());
    ops::to_host(c, vc.data());
    ops::to_host(g, vg.data());
    EXPECT_EQ(vg, vc) << "dim " << dim;
  }
}

TEST_F(CudaOps, MatmulAndLinearMatchTheCpu) {
  agree("matmul 2-D", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({3, 5}), rand({5, 4})});
  agree("matmul batched", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({2, 3, 5}), rand({2, 5, 4})});
  agree("matmul 3-D @ 2-D", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({2, 3, 5}), rand({5, 4})});
  agree("matmul 2-D @ 3-D", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({3, 5}), rand({2, 5, 4})});
  agree("matmul 200x300x100", [](auto& x) { return ops::matmul(x[0], x[1]); },
        {rand({200, 300}), rand({300, 100})});
  agree("linear", [](auto& x) { return ops::linear(x[0], x[1], x[2]); },
        {rand({6, 5}), rand({4, 5}), rand({4})});
  agree("linear without bias", [](auto& x) { return ops::linear(x[0], x[1], Tensor()); },
        {rand({6, 5}), rand({4, 5})});
  agree("linear + relu", [](auto& x) { return ops::linear(x[0], x[1], x[2], true); },
        {rand({6, 5}), rand({4, 5}), rand({4})});
  agree("linear 3-D input", [](auto& x) { return ops::linear(x[0], x[1], x[2]); },
        {rand({2, 3, 5}), rand({4, 5}), rand({4})});
  agree("linear 256x784 -> 512 + relu", [](auto& x) { return ops::linear(x[0], x[1], x[2], true); },
        {rand({256, 784}), rand({512, 784}, -0.05, 0.05), rand({512})});
  // Rows 1.. of a tensor start 4 bytes past an aligned address: cuBLASLt must be told.
  agree("linear on an unaligned view",
        [](auto& x) { return ops::linear(x[0].rows(1, 65), x[1], x[2], true); },
        {rand({66, 33}), rand({17, 33}), rand({17})});
  // A bias 4 bytes past an aligned address runs the epilogue kernel, not cuBLASLt's fused one.
  agree("linear + relu, the bias an unaligned view",
        [](auto& x) { return ops::linear(x[0], x[1], x[2].rows(1, 18), true); },
        {rand({64, 33}), rand({17, 33}), rand({18})});
}

TEST_F(CudaOps, SoftmaxMatchesTheCpuAlongAnyDimension) {
  agree("softmax dim 1", [](auto& x) { return ops::softmax(x[0], 1); }, {rand({4, 10}, -3, 3)});
  agree("log_softmax dim 1", [](auto& x) { return ops::log_softmax(x[0], 1); },
        {rand({4, 10}, -3, 3)});
  agree("softmax dim 0", [](auto& x) { return ops::softmax(x[0], 0); }, {rand({5, 3}, -3, 3)});
  agree("log_softmax dim 1 of 3-D", [](auto& x) { return ops::log_softmax(x[0], 1); },
        {rand({2, 6, 4}, -3, 3)});
  agree("log_softmax of long rows", [](auto& x) { return ops::log_softmax(x[0], 1); },
        {rand({3, 3000}, -3, 3)});
}

TEST_F(CudaOps, ConvolutionMatchesTheCpu) {
  agree_on_convolutions(kDefaultConvRtol);  // on cuDNN when the plugin has it
}

TEST_F(CudaOps, ConvolutionOnIm2colMatchesTheCpu) {
  ctx_ = context_with("DP_CUDA_CONV", "im2col");
  agree_on_convolutions(kRtol);
}

TEST_F(CudaOps, ConvolutionOnBenchmarkedCudnnMatchesTheCpu) {
  ctx_ = context_with("DP_CUDA_CONV", "cudnn-benchmark");
  agree_on_convolutions(kDefaultConvRtol);
}

TEST_F(CudaOps, ConvolutionInChunksOfImagesMatchesTheCpu) {
  // A scratch budget of a few images makes every im2col call run in several chunks (the
  // weight gradient then accumulates over chunks).
  setenv("DP_CUDA_CONV_SCRATCH_BYTES", "20000", 1);
  ctx_ = context_with("DP_CUDA_CONV", "im2col");
  unsetenv("DP_CUDA_CONV_SCRATCH_BYTES");
  agree("conv in chunks", [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1, true); },
        {rand({9, 3, 10, 10}), rand({4, 3, 3, 3}), rand({4})});
}

// The CNN's two convolutions, forward and both backward products, run on cuDNN (no shape
// falls back to im2col) when the plugin was built with cuDNN and opens it, and on im2col
// otherwise.
TEST_F(CudaOps, TheCnnsConvolutionsRunWhereTheStartUpLineSays) {
  auto log = std::make_shared<cuda_test::LogRecord>();
  ctx_ = cuda_test::make_context(nullptr, 2, log);
  agree(
      "conv 1 -> 32 on 28x28",
      [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1, true); },
      {rand({16, 1, 28, 28}), rand({32, 1, 3, 3}), rand({32})}, kDefaultConvRtol);
  agree(
      "conv 32 -> 64 on 14x14",
      [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1, true); },
      {rand({16, 32, 14, 14}), rand({64, 32, 3, 3}, -0.1, 0.1), rand({64})}, kDefaultConvRtol);
  std::lock_guard<std::mutex> lock(log->mu);
  std::string start_up, fallbacks;
  for (const std::string& line : log->lines) {
    if (line.find("CUDA backend: ") != std::string::npos) start_up = line;
    // A shape sent to im2col, or cuDNN failing to start on a device.
    if (line.find("im2col runs it") != std::string::npos ||
        line.find("use im2col") != std::string::npos) {
      fallbacks += line + "\n";
    }
  }
#if DP_HAVE_CUDNN
  const char* library = std::getenv("DP_CUDNN_LIBRARY");
  if (library && access(library, F_OK) != 0) {
    // ctest's cuda_without_cudnn: no cuDNN to open, so im2col runs every convolution (and
    // they agreed with the CPU above), and the start-up line names the file it tried.
    EXPECT_NE(start_up.find("; convolutions: im2col + cuBLASLt (cuDNN could not be opened: "),
              std::string::npos)
        << start_up;
    EXPECT_NE(start_up.find(library), std::string::npos) << start_up;
  } else {
    EXPECT_NE(start_up.find("; convolutions: cuDNN "), std::string::npos) << start_up;
    EXPECT_EQ(fallbacks, "");
  }
#else
  EXPECT_NE(start_up.find("; convolutions: im2col"), std::string::npos) << start_up;
#endif
}

TEST_F(CudaOps, PoolingMatchesTheCpu) {
  agree("max 2x2 stride 2", [](auto& x) { return ops::max_pool2d(x[0], 2, 2, 2, 2, 0, 0); },
        {rand({2, 3, 8, 8})});
  agree("max 3x3 stride 2 pad 1 (overlapping)",
        [](auto& x) { return ops::max_pool2d(x[0], 3, 3, 2, 2, 1, 1); }, {rand({2, 3, 9, 7})});
  agree("avg 2x2 stride 2", [](auto& x) { return ops::avg_pool2d(x[0], 2, 2, 2, 2, 0, 0); },
        {rand({2, 3, 8, 8})});
  agree("avg 3x3 stride 1 pad 1", [](auto& x) { return ops::avg_pool2d(x[0], 3, 3, 1, 1, 1, 1); },
        {rand({2, 2, 6, 5})});
  // Windows apart, with padding and gaps between them (the backward's disjoint path).
  agree("max 2x2 stride 3 pad 1", [](auto& x) { return ops::max_pool2d(x[0], 2, 2, 3, 3, 1, 1); },
        {rand({2, 3, 10, 8})});
  agree("avg 2x3 stride (2, 4) pad (1, 1)",
        [](auto& x) { return ops::avg_pool2d(x[0], 2, 3, 2, 4, 1, 1); }, {rand({2, 2, 7, 9})});
}

TEST_F(CudaOps, BatchNormMatchesTheCpuInTrainingAndEvaluation) {
  for (const Shape& s : {Shape{16, 3}, Shape{4, 3, 5, 5}}) {
    const std::string name = shape_str(s);
    Tensor rm = rand({3}, -0.5, 0.5, false), rv = rand({3}, 0.5, 2, false);
    agree("batch_norm training " + name,
          [&](auto& x) {
            return ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 0.1, 1e-5);
          },
          {rand(s, -2, 3), rand({3}, 0.5, 1.5), rand({3})});
    agree("batch_norm evaluation " + name,
          [&](auto& x) { return ops::batch_norm(x[0], x[1], x[2], x[3], x[4], false, 0.1, 1e-5); },
          {rand(s, -2, 3), rand({3}, 0.5, 1.5), rand({3}), rm, rv});
  }
  // The running statistics are updated in place the same way.
  Tensor x = rand({8, 3, 4, 4}, -1, 2, false);
  Tensor rm_c = ops::zeros(ctx_, {3}, DType::kFloat32, cpu(0));
  Tensor rv_c = ops::full(ctx_, {3}, DType::kFloat32, cpu(0), 1.0);
  Tensor rm_g = ops::to_device(rm_c, cuda(0)), rv_g = ops::to_device(rv_c, cuda(0));
  ops::batch_norm(x, Tensor(), Tensor(), rm_c, rv_c, true, 0.1, 1e-5);
  ops::batch_norm(ops::to_device(x, cuda(0)), Tensor(), Tensor(), rm_g, rv_g, true, 0.1, 1e-5);
  expect_close(values(rm_g), values(rm_c), kRtol, "running_mean");
  expect_close(values(rv_g), values(rv_c), kRtol, "running_var");
}

// The per-channel sums put channels on the grid's second dimension, which holds at most
// 65,535 blocks: more channels than that loop over it.
TEST_F(CudaOps, BatchNormOverMoreChannelsThanAGridHasRowsMatchesTheCpu) {
  constexpr int64_t kChannels = 65535 + 4465;
  agree("batch_norm training [4, 70000]",
        [](auto& x) {
          return ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 0.1, 1e-5);
        },
        {rand({4, kChannels}, -2, 3), rand({kChannels}, 0.5, 1.5), rand({kChannels})});
}

TEST_F(CudaOps, DropoutDrawsExactlyTheCpuMask) {
  Tensor x = rand({1000, 3});
  Tensor xc = moved(x, cpu(0)), xg = moved(x, cuda(0));
  Tensor yc = ops::dropout(xc, 0.3, true, 42), yg = ops::dropout(xg, 0.3, true, 42);
  EXPECT_EQ(cuda_test::floats(yg), cuda_test::floats(yc));
  Tensor w = ops::full(ctx_, {1000, 3}, DType::kFloat32, cpu(0), 1.0);
  backward({yc}, {w});
  backward({yg}, {ops::to_device(w, cuda(0))});
  EXPECT_EQ(cuda_test::floats(xg.grad()), cuda_test::floats(xc.grad()));
}

TEST_F(CudaOps, EmbeddingGathersAndScattersRowsLikeTheCpu) {
  // Index 3 appears three times: its gradient rows add up.
  const Tensor idx = int64s({2, 4}, {3, 0, 7, 3, 9, 3, 1, 0});
  agree("embedding", [&](auto& x) { return ops::embedding(x[0], x[1]); }, {idx, rand({10, 6})});
}

TEST_F(CudaOps, AnEmbeddingIndexOutOfRangeIsReportedWhenTheResultIsRead) {
  Tensor w = ops::to_device(rand({10, 4}, -1, 1, false), cuda(0));
  Tensor idx = ops::to_device(int64s({4}, {1, 2, 12, 3}), cuda(0));
  try {
    Tensor y = ops::embedding(idx, w);
    cuda_test::floats(y);  // the kernel's finding surfaces at this synchronisation
    FAIL() << "index 12 of a 10-row table must be reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOutOfRange) << e.what();
    EXPECT_NE(std::string(e.what()).find("embedding index[2] = 12 is outside [0, 10)"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("cuda:0 (GPU 0): ", 0), 0u) << e.what();
  }
  // Reported once: the device carries on.
  Tensor ok = ops::embedding(ops::to_device(int64s({2}, {1, 2}), cuda(0)), w);
  EXPECT_EQ(cuda_test::floats(ok).size(), 8u);
}

TEST_F(CudaOps, LossesMatchTheCpu) {
  const Tensor target = int64s({6}, {0, 4, 2, 2, 1, 3});
  agree("cross_entropy", [&](auto& x) { return ops::cross_entropy(x[0], x[1]); },
        {rand({6, 5}, -2, 2), target});
  agree("nll_loss", [&](auto& x) { return ops::nll_loss(ops::log_softmax(x[0], 1), x[1]); },
        {rand({6, 5}, -2, 2), target});
}

TEST_F(CudaOps, ATargetOutOfRangeIsReportedWhenTheLossIsRead) {
  Tensor logits = ops::to_device(rand({3, 4}, -1, 1, false), cuda(0));
  Tensor target = ops::to_device(int64s({3}, {0, 5, 1}), cuda(0));
  try {
    cuda_test::floats(ops::cross_entropy(logits, target));
    FAIL() << "target 5 of 4 classes must be reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOutOfRange) << e.what();
    EXPECT_NE(std::string(e.what()).find("target[1] = 5 is not a class index in [0, 4)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CudaOps, ShapesAndCopiesMatchTheCpu) {
  agree("cat dim 0",
        [](auto& x) {
          return ops::cat({x[0], x[1]}, 0);
        },
        {rand({2, 3}), rand({4, 3})});
  agree("cat dim 1 (pitched copies)",
        [](auto& x) {
          return ops::cat({x[0], x[1]}, 1);
        },
        {rand({3, 2, 4}), rand({3, 5, 4})});
  agree("split dim 1", [](auto& x) { return ops::split(x[0], {2, 3}, 1)[1]; }, {rand({4, 5})});
  agree("reshape and flatten",
        [](auto& x) {
          return ops::flatten(ops::reshape(x[0], {3, -1}), 0, 1);
        },
        {rand({2, 3, 4})});
  agree("to float64 and back",
        [](auto& x) {
          return ops::to_dtype(
              ops::mul(ops::to_dtype(x[0], DType::kFloat64), ops::to_dtype(x[0], DType::kFloat64)),
              DType::kFloat32);
        },
        {rand({5, 5})});
  // Fill and host round trips of every dtype.
  Tensor f = ops::full(ctx_, {3, 3}, DType::kFloat64, cuda(0), -1.25);
  EXPECT_EQ(values(f), std::vector<double>(9, -1.25));
  Tensor i = ops::full(ctx_, {5}, DType::kInt64, cuda(0), 7);
  std::vector<int64_t> iv(5);
  ops::to_host(i, iv.data());
  EXPECT_EQ(iv, std::vector<int64_t>(5, 7));
  // A CUDA tensor copied onto a CPU device and back.
  Tensor x = rand({64, 33}, -1, 1, false);
  Tensor back = ops::to_device(ops::to_device(x, cuda(0)), cpu(1));
  EXPECT_EQ(cuda_test::floats(back), cuda_test::floats(x));
}

TEST_F(CudaOps, Float64OpsMatchTheCpu) {
  auto r64 = [&](const Shape& s) { return rand(s, -1, 1, true, DType::kFloat64); };
  agree(
      "matmul f64", [](auto& x) { return ops::matmul(x[0], x[1]); }, {r64({7, 9}), r64({9, 5})},
      1e-12);
  agree(
      "linear + relu f64", [](auto& x) { return ops::linear(x[0], x[1], x[2], true); },
      {r64({6, 5}), r64({4, 5}), r64({4})}, 1e-12);
  agree(
      "conv f64", [](auto& x) { return ops::conv2d(x[0], x[1], x[2], 1, 1, 1, 1); },
      {r64({2, 3, 6, 6}), r64({4, 3, 3, 3}), r64({4})}, 1e-12);
  agree(
      "log_softmax f64", [](auto& x) { return ops::log_softmax(x[0], 1); }, {r64({4, 7})}, 1e-12);
  agree(
      "max pool f64", [](auto& x) { return ops::max_pool2d(x[0], 2, 2, 2, 2, 0, 0); },
      {r64({2, 2, 6, 6})}, 1e-12);
  agree(
      "batch_norm f64",
      [&](auto& x) {
        return ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 0.1, 1e-5);
      },
      {r64({4, 3, 3, 3}), r64({3}), r64({3})}, 1e-10);
  agree(
      "gelu f64", [](auto& x) { return ops::gelu(x[0]); }, {r64({40})}, 1e-12);
}

// Optimizer steps on parameters with the same gradients on both backends.
TEST_F(CudaOps, OptimizerStepsMatchTheCpu) {
  struct Case {
    const char* name;
    std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)> make;
  };
  const std::vector<Case> cases = {
      {"sgd",
       [](auto p) {
         return std::make_unique<Sgd>(p, SgdOptions{0.1, 0, 0, 0, false});
       }},
      {"sgd momentum + decay",
       [](auto p) {
         return std::make_unique<Sgd>(p, SgdOptions{0.1, 0.9, 0.1, 0.01, false});
       }},
      {"sgd nesterov",
       [](auto p) {
         return std::make_unique<Sgd>(p, SgdOptions{0.1, 0.9, 0, 0, true});
       }},
      {"adam",
       [](auto p) {
         return std::make_unique<Adam>(p, AdamOptions{1e-2, 0.9, 0.999, 1e-8, 0.01, false});
       }},
      {"adamw",
       [](auto p) {
         return std::make_unique<Adam>(p, AdamOptions{1e-2, 0.9, 0.999, 1e-8, 0.01, true});
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor init = rand({40, 30}, -1, 1, false);
    Tensor pc = moved(init, cpu(0)), pg = moved(init, cuda(0));
    pc.set_requires_grad(true);
    pg.set_requires_grad(true);
    auto oc = c.make({pc}), og = c.make({pg});
    for (int step = 0; step < 3; ++step) {
      Tensor g = rand({40, 30}, -1, 1, false);
      pc.set_grad(ops::clone(g));
      pg.set_grad(ops::to_device(g, cuda(0)));
      oc->step();
      og->step();
    }
    expect_close(values(pg), values(pc), kRtol, std::string(c.name) + " parameters");
  }
}

}  // namespace
}  // namespace dp
