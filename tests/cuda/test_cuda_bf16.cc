// bfloat16 on the CUDA plugin: what it reports (bf16_native, runs_bf16), its bfloat16
// matmul (cuBLASLt) and convolutions (cuDNN, or its float32 path) against float64
// references, fill, cast, copies, embedding rows, the collective reduce, and autocast's
// linear and conv2d end to end. Skips without a GPU.
//
// The bound. bfloat16 has 8 significant bits, so rounding to nearest has relative error at
// most u = 2^-8. The references are computed in float64 from the very bfloat16 values the
// GPU gets, so the inputs carry no error of their own; what remains is
//   - the products' float32 accumulation over K terms: at most g * S, with
//     g = (K + 2) * 2^-24 (K products, the bias and the accumulated output) and S the sum
//     of the magnitudes of every term (|a_k b_k| summed, |bias|, |out before|);
//   - the rounding of the result to bfloat16, u |result|, and once more where the bias is
//     added after the product was rounded (cuDNN's bias and cuBLASLt's unfused epilogue,
//     as PyTorch does): u (|r| + |bias| + |out before|) again.
// So each element must satisfy |got - r| <= 2u (|r| + |bias| + |out before|) + 4 g S,
// r the exact pre-ReLU value (ReLU moves no two values further apart), with a factor 2 of
// room on the accumulation, whose order the libraries choose. bfloat16 bits read as
// another dtype, a transposition or bias missed, miss it by orders of magnitude; a sum
// accumulated in bfloat16 (a rounding of u per partial sum, K of them) misses it too for
// the larger K here.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "autograd/autocast_mode.h"
#include "autograd/engine.h"
#include "cuda_test_util.h"
#include "device/bf16_staging.h"
#include "device/bfloat16.h"
#include "error.h"

namespace dp {
namespace {

constexpr double kU = 1.0 / 256;         // bfloat16's unit roundoff, 2^-8
constexpr double kF32 = 1.0 / 16777216;  // float32's, 2^-24

// bfloat16 values with their bits, as the GPU gets them.
struct Bf16Values {
  std::vector<uint16_t> bits;
  std::vector<double> v;
};

// Each element of a result with what its bound needs: the exact pre-ReLU value, the
// magnitude of what was rounded after the product (|bias| + |out before|), and S.
struct Reference {
  std::vector<double> r, extra, s;
  explicit Reference(size_t n) : r(n, 0.0), extra(n, 0.0), s(n, 0.0) {}
};

class CudaBf16 : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = std::make_shared<cuda_test::LogRecord>();
    ctx_ = cuda_test::make_context(nullptr, 1, log_);
    DP_SKIP_WITHOUT_CUDA(ctx_, 1);
    seed_ = std::random_device{}();
    rng_.seed(seed_);
  }

  // The plugin itself, under the core's staging layer: calls on it reach the plugin's
  // bfloat16 paths whatever runs_bf16 says.
  Backend& plugin() const {
    return static_cast<Bf16Staging&>(ctx_->backend(DeviceType::kCuda)).inner();
  }

  Bf16Values random(size_t n, double lo = -1, double hi = 1) {
    std::uniform_real_distribution<double> u(lo, hi);
    Bf16Values b;
    for (size_t i = 0; i < n; ++i) {
      const uint16_t bits = float_to_bf16(static_cast<float>(u(rng_)));
      b.bits.push_back(bits);
      b.v.push_back(bf16_to_float(bits));
    }
    return b;
  }

  Tensor on_cuda(const Shape& s, const Bf16Values& b) {
    return ops::from_host(ctx_, s, DType::kBFloat16, cuda(0), b.bits.data());
  }

  static std::vector<uint16_t> bits_of(const Tensor& t) {
    std::vector<uint16_t> bits(static_cast<size_t>(t.numel()));
    ops::to_host(t, bits.data());
    return bits;
  }

  static std::vector<double> values_of(const Tensor& t) {
    EXPECT_EQ(t.dtype(), DType::kBFloat16);
    std::vector<double> v;
    for (uint16_t b : bits_of(t)) v.push_back(bf16_to_float(b));
    return v;
  }

  // got within the header's bound of ref (terms: the most terms of one element's sum).
  void expect_within(const std::vector<double>& got, const Reference& ref, int64_t terms, bool relu,
                     const std::string& what) {
    ASSERT_EQ(got.size(), ref.r.size()) << what;
    const double g = static_cast<double>(terms + 2) * kF32;
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = relu ? std::max(ref.r[i], 0.0) : ref.r[i];
      const double bound = 2 * kU * (std::abs(ref.r[i]) + ref.extra[i]) + 4 * g * ref.s[i];
      const double ratio = std::abs(got[i] - want) / (bound > 0 ? bound : 1e-300);
      if (!(ratio <= worst)) {  // NaN counts as the worst
        worst = std::isnan(ratio) ? INFINITY : ratio;
        at = i;
      }
    }
    EXPECT_LE(worst, 1.0) << what << " (seed " << seed_ << "): element " << at << " is " << got[at]
                          << ", the float64 reference "
                          << (relu ? std::max(ref.r[at], 0.0) : ref.r[at]) << "; bound "
                          << 2 * kU * (std::abs(ref.r[at]) + ref.extra[at]) + 4 * g * ref.s[at]
                          << " (S " << ref.s[at] << ", " << terms << " terms)";
  }

  // Runs f on cuda:0's worker, as the ops do.
  template <class F>
  void on_worker(F&& f) {
    ctx_->run(cuda(0), std::forward<F>(f));
  }

  std::shared_ptr<cuda_test::LogRecord> log_;
  std::shared_ptr<Context> ctx_;
  unsigned seed_ = 0;
  std::mt19937_64 rng_;
};

// ---- what the plugin reports ----

TEST_F(CudaBf16, Bf16NativeAndRunsBf16FollowTheComputeCapabilityAndTheConvolutionEngine) {
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, plugin().physical_index(0)), cudaSuccess);
  const bool native = prop.major >= 8;
  std::string start_up;
  {
    std::lock_guard<std::mutex> lock(log_->mu);
    for (const std::string& line : log_->lines) {
      if (line.find("CUDA backend: ") != std::string::npos) start_up = line;
    }
  }
  const bool cudnn = start_up.find("; convolutions: cuDNN ") != std::string::npos;
  SCOPED_TRACE(std::string(prop.name) + ", compute capability " + std::to_string(prop.major) + "." +
               std::to_string(prop.minor) + "; " + start_up);
  Backend& be = ctx_->backend(DeviceType::kCuda);  // through the staging layer, as the core asks
  EXPECT_EQ(be.bf16_native(0), native);
  EXPECT_EQ(be.runs_bf16(Bf16Kernel::kMatmul, 0), native);
  for (Bf16Kernel k :
       {Bf16Kernel::kConv2d, Bf16Kernel::kConv2dBackwardData, Bf16Kernel::kConv2dBackwardWeights}) {
    EXPECT_EQ(be.runs_bf16(k, 0), native && cudnn) << "Bf16Kernel " << static_cast<int>(k);
  }
  EXPECT_FALSE(be.runs_bf16(Bf16Kernel::kConvReluPool, 0));  // no fused block in the plugin
  // No bfloat16 product into float32 (yet): linear rounds its weight gradient, as PyTorch.
  EXPECT_FALSE(be.runs_bf16(Bf16Kernel::kMatmulIntoFloat32, 0));
}

TEST_F(CudaBf16, WithDpCudaConvIm2colTheCoreStagesTheConvolutions) {
  ctx_ = cuda_test::make_context_with("DP_CUDA_CONV", "im2col", nullptr, 1);
  Backend& be = ctx_->backend(DeviceType::kCuda);
  EXPECT_EQ(be.runs_bf16(Bf16Kernel::kMatmul, 0), be.bf16_native(0));
  EXPECT_FALSE(be.runs_bf16(Bf16Kernel::kConv2d, 0));
  EXPECT_FALSE(be.runs_bf16(Bf16Kernel::kConv2dBackwardData, 0));
  EXPECT_FALSE(be.runs_bf16(Bf16Kernel::kConv2dBackwardWeights, 0));
}

// ---- fill, cast, copies, embedding ----

TEST_F(CudaBf16, FillAndCastRoundToNearestEvenAndKeepNanAndInfinity) {
  // Hand-computed bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 and goes to the even
  // 1; 1 + 3 * 2^-8 goes up to the even 1 + 2^-6; 1/3 (0x3EAAAAAB) rounds up; the
  // largest float rounds past bfloat16's largest finite value to infinity.
  const float in[] = {1.0f,     1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f / 3, -0.0f,
                      INFINITY, -INFINITY,      3.4028235e38f,      -2.5f,    1e-40f};
  const uint16_t want[] = {0x3F80, 0x3F80, 0x3F82, 0x3EAB, 0x8000,
                           0x7F80, 0xFF80, 0x7F80, 0xC020, 0x0001};
  const int64_t n = sizeof in / sizeof in[0];
  const Tensor f = ops::from_host(ctx_, {n}, DType::kFloat32, cuda(0), in);
  const Tensor b = ops::to_dtype(f, DType::kBFloat16);
  ASSERT_EQ(b.dtype(), DType::kBFloat16);
  ASSERT_EQ(b.device(), cuda(0));
  const std::vector<uint16_t> got = bits_of(b);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i], want[i]) << "element " << i << " (" << in[i] << ")";
  }
  // Back to float32: exact (bfloat16 is float32's upper half).
  std::vector<float> back(static_cast<size_t>(n));
  ops::to_host(ops::to_dtype(b, DType::kFloat32), back.data());
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = 0;
    std::memcpy(&u, &back[i], sizeof u);
    EXPECT_EQ(u, static_cast<uint32_t>(want[i]) << 16) << "element " << i;
  }
  // NaN stays NaN, quiet, with its sign.
  const float nan_in[] = {NAN, -NAN};
  const std::vector<uint16_t> nan_bits = bits_of(
      ops::to_dtype(ops::from_host(ctx_, {2}, DType::kFloat32, cuda(0), nan_in), DType::kBFloat16));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(nan_bits[i] & 0x7F80, 0x7F80) << "NaN " << i;
    EXPECT_NE(nan_bits[i] & 0x007F, 0) << "NaN " << i;
    EXPECT_EQ(nan_bits[i] >> 15, static_cast<unsigned>(i)) << "the sign of NaN " << i;
  }
  // fill rounds its value once: 0.1 is 0x3DCCCCCD in float32, 0x3DCD in bfloat16.
  const std::vector<uint16_t> filled =
      bits_of(ops::full(ctx_, {3, 5}, DType::kBFloat16, cuda(0), 0.1));
  for (uint16_t v : filled) EXPECT_EQ(v, 0x3DCD);
  // bfloat16 to int64 and float64, through float.
  const float ints[] = {2.75f, -3.5f, 1000.0f};
  const Tensor bi =
      ops::to_dtype(ops::from_host(ctx_, {3}, DType::kFloat32, cuda(0), ints), DType::kBFloat16);
  int64_t as_int[3] = {};
  ops::to_host(ops::to_dtype(bi, DType::kInt64), as_int);
  EXPECT_EQ(as_int[0], 2);
  EXPECT_EQ(as_int[1], -3);
  EXPECT_EQ(as_int[2], 1000);
  double as_double[3] = {};
  ops::to_host(ops::to_dtype(bi, DType::kFloat64), as_double);
  EXPECT_EQ(as_double[0], 2.75);
  EXPECT_EQ(as_double[1], -3.5);
  EXPECT_EQ(as_double[2], 1000.0);
}

TEST_F(CudaBf16, CopiesMoveTwoByteElementsExactly) {
  // An odd count (the last element shares no 4-byte word), there and back.
  const Bf16Values v = random(1001, -100, 100);
  EXPECT_EQ(bits_of(on_cuda({1001}, v)), v.bits);
  // cat along dimension 1: 2-D copies of 10- and 6-byte rows into 16-byte rows, and the
  // split back out of them.
  const Bf16Values a = random(3 * 5), b = random(3 * 3);
  const Tensor c = ops::cat({on_cuda({3, 5}, a), on_cuda({3, 3}, b)}, 1);
  std::vector<uint16_t> want;
  for (int r = 0; r < 3; ++r) {
    want.insert(want.end(), a.bits.begin() + r * 5, a.bits.begin() + r * 5 + 5);
    want.insert(want.end(), b.bits.begin() + r * 3, b.bits.begin() + r * 3 + 3);
  }
  EXPECT_EQ(bits_of(c), want);
  const std::vector<Tensor> parts = ops::split(c, {5, 3}, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(bits_of(parts[0]), a.bits);
  EXPECT_EQ(bits_of(parts[1]), b.bits);
  // Between the host's CPU device and the GPU, both ways.
  const Tensor host = ops::from_host(ctx_, {3, 5}, DType::kBFloat16, cpu(0), a.bits.data());
  EXPECT_EQ(bits_of(ops::to_device(ops::to_device(host, cuda(0)), cpu(0))), a.bits);
}

TEST_F(CudaBf16, EmbeddingCopiesBf16Rows) {
  const Bf16Values w = random(10 * 7);
  const int64_t idx[] = {3, 0, 9, 3};
  const Tensor out =
      ops::embedding(ops::from_host(ctx_, {4}, DType::kInt64, cuda(0), idx), on_cuda({10, 7}, w));
  ASSERT_EQ(out.dtype(), DType::kBFloat16);
  std::vector<uint16_t> want;
  for (int64_t i : idx) want.insert(want.end(), w.bits.begin() + i * 7, w.bits.begin() + i * 7 + 7);
  EXPECT_EQ(bits_of(out), want);
}

// ---- matmul ----

struct MatmulCase {
  int64_t batch;  // 0: 2-D
  bool a3, b3;    // which operands are 3-D when batched
  int64_t m, k, n;
  MatmulParams p;
  bool bias;
};

std::string describe(const MatmulCase& c) {
  std::ostringstream s;
  if (c.batch) s << c.batch << " x ";
  s << "[" << c.m << ", " << c.k << "] @ [" << c.k << ", " << c.n << "]";
  if (c.batch) s << " (a " << (c.a3 ? "3-D" : "2-D") << ", b " << (c.b3 ? "3-D" : "2-D") << ")";
  if (c.p.trans_a) s << " trans_a";
  if (c.p.trans_b) s << " trans_b";
  if (c.bias) s << " bias";
  if (c.p.relu) s << " relu";
  if (c.p.accumulate) s << " accumulate";
  return s.str();
}

class CudaBf16Matmul : public CudaBf16 {
 protected:
  // One call of the plugin's matmul on bfloat16 views against its float64 reference.
  void check(const MatmulCase& c) {
    const std::string what = describe(c);
    const int64_t B = c.batch ? c.batch : 1;
    const int64_t M = c.m, K = c.k, N = c.n;
    const bool a3 = c.batch && c.a3, b3 = c.batch && c.b3;
    const Shape sa = c.p.trans_a ? Shape{K, M} : Shape{M, K};
    const Shape sb = c.p.trans_b ? Shape{N, K} : Shape{K, N};
    auto batched = [&](Shape s, bool three) {
      if (three) s.insert(s.begin(), B);
      return s;
    };
    const Bf16Values av = random(static_cast<size_t>((a3 ? B : 1) * M * K));
    const Bf16Values bv = random(static_cast<size_t>((b3 ? B : 1) * K * N));
    const Bf16Values biasv = random(static_cast<size_t>(N));
    const Bf16Values c0 = random(static_cast<size_t>(B * M * N));
    const Tensor a = on_cuda(batched(sa, a3), av), b = on_cuda(batched(sb, b3), bv);
    const Tensor bias = on_cuda({N}, biasv);
    const Tensor out = on_cuda(c.batch ? Shape{B, M, N} : Shape{M, N}, c0);

    Reference ref(static_cast<size_t>(B * M * N));
    for (int64_t bi = 0; bi < B; ++bi) {
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          const size_t o = static_cast<size_t>((bi * M + i) * N + j);
          double sum = 0, mag = 0;
          for (int64_t k = 0; k < K; ++k) {
            const int64_t ia = (a3 ? bi * M * K : 0) + (c.p.trans_a ? k * M + i : i * K + k);
            const int64_t ib = (b3 ? bi * K * N : 0) + (c.p.trans_b ? j * K + k : k * N + j);
            const double t = av.v[static_cast<size_t>(ia)] * bv.v[static_cast<size_t>(ib)];
            sum += t;
            mag += std::abs(t);
          }
          double extra = 0;
          if (c.bias) {
            sum += biasv.v[static_cast<size_t>(j)];
            extra += std::abs(biasv.v[static_cast<size_t>(j)]);
          }
          if (c.p.accumulate) {
            sum += c0.v[o];
            extra += std::abs(c0.v[o]);
          }
          ref.r[o] = sum;
          ref.extra[o] = extra;
          ref.s[o] = mag + extra;
        }
      }
    }
    on_worker([&] {
      const KView kb = bias.kview();
      plugin().matmul(0, a.kview(), b.kview(), c.bias ? &kb : nullptr, out.kview(), c.p);
    });
    expect_within(values_of(out), ref, K, c.p.relu, what);
  }
};

TEST_F(CudaBf16Matmul, EveryFlagCombinationMatchesFloat64WithinTheBf16Bound) {
  // Odd sizes: rows of 2-byte elements that are not 4-byte multiples.
  for (int flags = 0; flags < 32; ++flags) {
    MatmulCase c{0, false, false, 37, 70, 29, {}, false};
    c.p.trans_a = flags & 1;
    c.p.trans_b = flags & 2;
    c.bias = flags & 4;
    c.p.relu = flags & 8;
    c.p.accumulate = flags & 16;
    check(c);
  }
}

TEST_F(CudaBf16Matmul, LargeProductsWithBiasAndReluMatchFloat64) {
  // Aligned sizes, where cuBLASLt picks its tensor-core kernels and fuses the epilogue;
  // the second is the MLP's first layer at a batch of 256.
  MatmulCase c{0, false, false, 256, 512, 128, {}, true};
  c.p.relu = true;
  check(c);
  MatmulCase linear{0, false, false, 256, 784, 512, {}, true};
  linear.p.trans_b = true;  // x @ W^T, as linear runs it
  linear.p.relu = true;
  check(linear);
  MatmulCase grad_w{0, false, false, 512, 256, 784, {}, false};
  grad_w.p.trans_a = true;  // g^T @ x, the weight gradient
  check(grad_w);
}

TEST_F(CudaBf16Matmul, BatchedProductsMatchFloat64) {
  for (int flags = 0; flags < 4; ++flags) {
    MatmulCase c{3, true, true, 9, 21, 11, {}, false};
    c.p.trans_a = flags & 1;
    c.p.trans_b = flags & 2;
    check(c);
  }
  check({4, true, false, 6, 10, 7, {}, false});  // [B, M, K] @ [K, N]: one product of B * M rows
  MatmulCase shared_b{4, true, false, 6, 10, 7, {}, false};
  shared_b.p.trans_a = true;  // [B, K, M]^T @ [K, N]: b's stride 0
  check(shared_b);
  MatmulCase shared_a{4, false, true, 6, 10, 7, {}, false};
  shared_a.p.trans_b = true;  // [M, K] @ [B, N, K]^T: a's stride 0
  check(shared_a);
  MatmulCase accumulate{2, true, true, 5, 8, 6, {}, false};
  accumulate.p.accumulate = true;
  check(accumulate);
}

TEST_F(CudaBf16Matmul, AnEmptySumIsTheBiasThenRelu) {
  MatmulCase c{0, false, false, 4, 0, 6, {}, true};
  c.p.relu = true;
  check(c);
}

TEST_F(CudaBf16Matmul, NanAndInfinityPropagate) {
  // a [4, 3] with a NaN in row 0 and ones in the rest of column 0; b [3, 5] with +inf at
  // (0, 1): row 0 of the product is NaN, and column 1 of the other rows +inf.
  Bf16Values av = random(12), bv = random(15);
  for (int i = 0; i < 4; ++i) {
    av.bits[static_cast<size_t>(i * 3)] = i == 0 ? 0x7FC0 : 0x3F80;
  }
  bv.bits[1] = 0x7F80;
  const Tensor a = on_cuda({4, 3}, av), b = on_cuda({3, 5}, bv);
  const Tensor out = ops::empty(ctx_, {4, 5}, DType::kBFloat16, cuda(0));
  on_worker([&] { plugin().matmul(0, a.kview(), b.kview(), nullptr, out.kview(), {}); });
  const std::vector<double> got = values_of(out);
  for (int j = 0; j < 5; ++j)
    EXPECT_TRUE(std::isnan(got[static_cast<size_t>(j)])) << "(0, " << j << ")";
  for (int i = 1; i < 4; ++i) {
    const double v = got[static_cast<size_t>(i * 5 + 1)];
    EXPECT_TRUE(std::isinf(v) && v > 0) << "(" << i << ", 1) is " << v;
  }
}

TEST_F(CudaBf16Matmul, MixedDtypesAreRefusedByName) {
  const Tensor a = on_cuda({2, 3}, random(6));
  const Tensor b = ops::zeros(ctx_, {3, 2}, DType::kFloat32, cuda(0));
  const Tensor out = ops::zeros(ctx_, {2, 2}, DType::kBFloat16, cuda(0));
  try {
    on_worker([&] { plugin().matmul(0, a.kview(), b.kview(), nullptr, out.kview(), {}); });
    FAIL() << "a float32 b was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kDtypeMismatch);
    EXPECT_NE(std::string(e.what()).find("b is float32, not bfloat16"), std::string::npos)
        << e.what();
  }
}

// ---- convolutions ----

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  Conv2dParams p;
  bool bias;
};

class CudaBf16Conv : public CudaBf16 {
 protected:
  // The three directions of one shape through the plugin, against float64.
  void check(const ConvCase& cc, const std::string& what) {
    SCOPED_TRACE(what);
    const Conv2dParams& p = cc.p;
    const int64_t OH = (cc.h + 2 * p.pad_h - cc.kh) / p.stride_h + 1;
    const int64_t OW = (cc.w + 2 * p.pad_w - cc.kw) / p.stride_w + 1;
    const Bf16Values xv = random(static_cast<size_t>(cc.n * cc.c * cc.h * cc.w));
    const Bf16Values wv = random(static_cast<size_t>(cc.o * cc.c * cc.kh * cc.kw), -0.5, 0.5);
    const Bf16Values bv = random(static_cast<size_t>(cc.o));
    const Bf16Values gyv = random(static_cast<size_t>(cc.n * cc.o * OH * OW));
    const Tensor x = on_cuda({cc.n, cc.c, cc.h, cc.w}, xv);
    const Tensor w = on_cuda({cc.o, cc.c, cc.kh, cc.kw}, wv);
    const Tensor b = on_cuda({cc.o}, bv);
    const Tensor gy = on_cuda({cc.n, cc.o, OH, OW}, gyv);
    const Tensor y = ops::empty(ctx_, {cc.n, cc.o, OH, OW}, DType::kBFloat16, cuda(0));
    const Tensor gx = ops::empty(ctx_, x.shape(), DType::kBFloat16, cuda(0));
    const Tensor gw = ops::empty(ctx_, w.shape(), DType::kBFloat16, cuda(0));
    const Tensor gb = ops::empty(ctx_, {cc.o}, DType::kBFloat16, cuda(0));

    auto count = [](const Tensor& t) { return static_cast<size_t>(t.numel()); };
    Reference fy(count(y)), fgx(count(x)), fgw(count(w)), fgb(count(b));
    for (int64_t n = 0; n < cc.n; ++n) {
      for (int64_t o = 0; o < cc.o; ++o) {
        for (int64_t oh = 0; oh < OH; ++oh) {
          for (int64_t ow = 0; ow < OW; ++ow) {
            const size_t iy = static_cast<size_t>(((n * cc.o + o) * OH + oh) * OW + ow);
            for (int64_t c = 0; c < cc.c; ++c) {
              for (int64_t kh = 0; kh < cc.kh; ++kh) {
                const int64_t ih = oh * p.stride_h - p.pad_h + kh;
                if (ih < 0 || ih >= cc.h) continue;
                for (int64_t kw = 0; kw < cc.kw; ++kw) {
                  const int64_t iw = ow * p.stride_w - p.pad_w + kw;
                  if (iw < 0 || iw >= cc.w) continue;
                  const size_t ix = static_cast<size_t>(((n * cc.c + c) * cc.h + ih) * cc.w + iw);
                  const size_t iw_ =
                      static_cast<size_t>(((o * cc.c + c) * cc.kh + kh) * cc.kw + kw);
                  const double fwd = xv.v[ix] * wv.v[iw_];
                  fy.r[iy] += fwd;
                  fy.s[iy] += std::abs(fwd);
                  const double bd = gyv.v[iy] * wv.v[iw_];
                  fgx.r[ix] += bd;
                  fgx.s[ix] += std::abs(bd);
                  const double bw = xv.v[ix] * gyv.v[iy];
                  fgw.r[iw_] += bw;
                  fgw.s[iw_] += std::abs(bw);
                }
              }
            }
            fgb.r[static_cast<size_t>(o)] += gyv.v[iy];
            fgb.s[static_cast<size_t>(o)] += std::abs(gyv.v[iy]);
            if (cc.bias) {
              const double bias = bv.v[static_cast<size_t>(o)];
              fy.r[iy] += bias;
              fy.extra[iy] += std::abs(bias);
              fy.s[iy] += std::abs(bias);
            }
          }
        }
      }
    }
    on_worker([&] {
      const KView kb = b.kview(), kgb = gb.kview();
      plugin().conv2d(0, x.kview(), w.kview(), cc.bias ? &kb : nullptr, y.kview(), p);
      plugin().conv2d_backward_data(0, gy.kview(), w.kview(), gx.kview(), p);
      plugin().conv2d_backward_weights(0, x.kview(), gy.kview(), gw.kview(), &kgb, p);
    });
    expect_within(values_of(y), fy, cc.c * cc.kh * cc.kw, p.relu, "forward");
    expect_within(values_of(gx), fgx, cc.o * cc.kh * cc.kw, false, "backward data");
    expect_within(values_of(gw), fgw, cc.n * OH * OW, false, "backward weights");
    expect_within(values_of(gb), fgb, cc.n * OH * OW, false, "bias gradient");
  }

  void check_shapes() {
    Conv2dParams pad1;
    pad1.pad_h = pad1.pad_w = 1;
    Conv2dParams pad1_relu = pad1;
    pad1_relu.relu = true;
    Conv2dParams stride2;
    stride2.stride_h = stride2.stride_w = 2;
    Conv2dParams uneven;
    uneven.stride_h = 2;
    uneven.pad_h = 2;
    check({2, 3, 7, 7, 4, 3, 3, pad1_relu, true}, "3x3 stride 1 pad 1, bias, relu");
    check({2, 2, 8, 9, 3, 3, 3, stride2, false}, "3x3 stride 2, no bias");
    check({2, 3, 9, 7, 4, 5, 3, uneven, true}, "5x3 stride (2, 1) pad (2, 0)");
    check({2, 4, 5, 5, 3, 1, 1, {}, true}, "1x1");
    check({8, 1, 28, 28, 32, 3, 3, pad1_relu, true}, "the CNN's conv 1 -> 32 on 28x28");
    check({8, 32, 14, 14, 64, 3, 3, pad1_relu, true}, "the CNN's conv 32 -> 64 on 14x14");
  }

  // Lines saying a bfloat16 convolution ran on another path than cuDNN.
  std::string bf16_fallbacks() {
    std::string lines;
    std::lock_guard<std::mutex> lock(log_->mu);
    for (const std::string& line : log_->lines) {
      if (line.find("in bfloat16") != std::string::npos &&
          line.find("cuDNN runs no") != std::string::npos) {
        lines += line + "\n";
      }
    }
    return lines;
  }
};

// With cuDNN (the default engine) on a GPU with bfloat16 tensor cores the convolutions run
// on cuDNN in bfloat16; elsewhere on the plugin's float32 path, rounded once. Both are held
// to the bound. The CNN's shapes must not leave cuDNN.
TEST_F(CudaBf16Conv, ForwardAndBothBackwardsMatchFloat64WithinTheBf16Bound) {
  check_shapes();
  if (ctx_->backend(DeviceType::kCuda).runs_bf16(Bf16Kernel::kConv2d, 0)) {
    const std::string fallbacks = bf16_fallbacks();
    for (const char* cnn :
         {"x [8, 1, 28, 28], w [32, 1, 3, 3]", "x [8, 32, 14, 14], w [64, 32, 3, 3]"}) {
      EXPECT_EQ(fallbacks.find(cnn), std::string::npos)
          << "a bfloat16 convolution of the CNN did not run on cuDNN:\n"
          << fallbacks;
    }
  }
}

TEST_F(CudaBf16Conv, OnIm2colTheFloat32PathMatchesFloat64WithinTheBf16Bound) {
  log_ = std::make_shared<cuda_test::LogRecord>();
  ctx_ = cuda_test::make_context_with("DP_CUDA_CONV", "im2col", nullptr, 1, log_);
  check_shapes();
}

// ---- autocast end to end ----

// linear and conv2d under autocast on cuda:0: float32 inputs and parameters, a bfloat16
// output within the bound of the bfloat16-rounded inputs, and float32 gradients for the
// float32 leaves.
TEST_F(CudaBf16, AutocastRunsLinearAndConv2dInBf16WithFloat32Gradients) {
  const Bf16Values xv = random(16 * 40), wv = random(24 * 40), bv = random(24);
  // The leaves hold bfloat16 values in float32, so the casts autocast makes are exact.
  auto leaf = [&](const Shape& s, const Bf16Values& v) {
    Tensor t = ops::to_dtype(on_cuda(s, v), DType::kFloat32).detach();
    t.set_requires_grad(true);
    return t;
  };
  const Tensor x = leaf({16, 40}, xv), w = leaf({24, 40}, wv), b = leaf({24}, bv);
  Tensor y;
  {
    AutocastGuard autocast(DType::kBFloat16);
    y = ops::linear(x, w, b, true);
  }
  ASSERT_EQ(y.dtype(), DType::kBFloat16);
  Reference ry(16 * 24);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 24; ++j) {
      const size_t o = static_cast<size_t>(i * 24 + j);
      for (int k = 0; k < 40; ++k) {
        const double t =
            xv.v[static_cast<size_t>(i * 40 + k)] * wv.v[static_cast<size_t>(j * 40 + k)];
        ry.r[o] += t;
        ry.s[o] += std::abs(t);
      }
      ry.r[o] += bv.v[static_cast<size_t>(j)];
      ry.extra[o] = std::abs(bv.v[static_cast<size_t>(j)]);
      ry.s[o] += ry.extra[o];
    }
  }
  expect_within(values_of(y), ry, 40, true, "linear under autocast");
  // The gradient of sum(y * g): g (bfloat16) masked by ReLU, then gW = g^T x.
  const Bf16Values gv = random(16 * 24);
  backward({y}, {on_cuda({16, 24}, gv)});
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), DType::kFloat32);
  EXPECT_EQ(x.grad().dtype(), DType::kFloat32);
  EXPECT_EQ(b.grad().dtype(), DType::kFloat32);
  const std::vector<double> yv = values_of(y);
  Reference rw(24 * 40);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 24; ++j) {
      const double g =
          yv[static_cast<size_t>(i * 24 + j)] > 0 ? gv.v[static_cast<size_t>(i * 24 + j)] : 0;
      for (int k = 0; k < 40; ++k) {
        const double t = g * xv.v[static_cast<size_t>(i * 40 + k)];
        rw.r[static_cast<size_t>(j * 40 + k)] += t;
        rw.s[static_cast<size_t>(j * 40 + k)] += std::abs(t);
      }
    }
  }
  expect_within(cuda_test::values(w.grad()), rw, 16, false, "the weight's gradient");

  // conv2d: a bfloat16 output of float32 leaves (its values are checked above, directly).
  const Tensor cx = leaf({2, 3, 6, 6}, random(2 * 3 * 36)), cw = leaf({4, 3, 3, 3}, random(108));
  Tensor cy;
  {
    AutocastGuard autocast(DType::kBFloat16);
    cy = ops::conv2d(cx, cw, Tensor(), 1, 1, 1, 1);
  }
  EXPECT_EQ(cy.dtype(), DType::kBFloat16);
  backward({cy}, {ops::full(ctx_, cy.shape(), DType::kBFloat16, cuda(0), 1.0)});
  EXPECT_EQ(cw.grad().dtype(), DType::kFloat32);
  EXPECT_EQ(cx.grad().dtype(), DType::kFloat32);
}

// ---- the collective reduce between devices ----

// Two logical devices on one GPU have no NCCL ranks of their own: the reduce says no (the
// core then copies), for bfloat16 as for float32.
TEST_F(CudaBf16, ReduceBetweenLogicalDevicesOfOneGpuDeclines) {
  ctx_ = cuda_test::make_context("0,0", 1);
  DP_SKIP_WITHOUT_CUDA(ctx_, 2);
  const Bf16Values v = random(64);
  const Tensor a = ops::from_host(ctx_, {64}, DType::kBFloat16, cuda(0), v.bits.data());
  const Tensor b = ops::from_host(ctx_, {64}, DType::kBFloat16, cuda(1), v.bits.data());
  const Tensor out = ops::zeros(ctx_, {64}, DType::kBFloat16, cuda(0));
  EXPECT_FALSE(
      plugin().reduce_sum({0, 1}, {a.data(), b.data()}, out.data(), 64, DType::kBFloat16, 0));
}

// Two GPUs: NCCL sums bfloat16 (small integers: every sum exact).
TEST_F(CudaBf16, NcclReducesBf16BetweenTwoGpus) {
  DP_SKIP_WITHOUT_CUDA(ctx_, 2);
  if (plugin().physical_index(0) == plugin().physical_index(1)) {
    GTEST_SKIP() << "no CUDA device: cuda:0 and cuda:1 share a GPU";
  }
  std::vector<uint16_t> x(4096), y(4096);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = float_to_bf16(static_cast<float>(i % 100));
    y[i] = float_to_bf16(static_cast<float>(i % 7 + 1));
  }
  const Tensor a = ops::from_host(ctx_, {4096}, DType::kBFloat16, cuda(0), x.data());
  const Tensor b = ops::from_host(ctx_, {4096}, DType::kBFloat16, cuda(1), y.data());
  const Tensor out = ops::zeros(ctx_, {4096}, DType::kBFloat16, cuda(0));
  for (int d : {0, 1}) ctx_->run(cuda(d), [&] { plugin().synchronize(d); });
  ASSERT_TRUE(
      plugin().reduce_sum({0, 1}, {a.data(), b.data()}, out.data(), 4096, DType::kBFloat16, 0));
  const std::vector<uint16_t> got = bits_of(out);
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(got[i], float_to_bf16(static_cast<float>(i % 100 + i % 7 + 1))) << "element " << i;
  }
}

}  // namespace
}  // namespace dp
