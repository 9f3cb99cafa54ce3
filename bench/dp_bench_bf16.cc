// dp-bench's bfloat16 benches (bf16-matmul, bf16-conv, and the bf16-device query they
// print first) and call-cost.
//
// bfloat16 products and convolutions. Our side: dp_op_matmul / dp_op_conv2d on bfloat16
// tensors (the op a bf16 tensor reaches), the same float32 tensors under
// dp_set_autocast(DP_BFLOAT16) (the casts of the inputs included), and float32. oneDNN's
// side, one thread: its own bf16 primitive (bf16 memory descriptors, f32 accumulation)
// where the CPU can create one; its float32 primitive with the bf16 -> f32 conversions of
// the inputs and the f32 -> bf16 rounding of the output (oneDNN reorders: the floor of a
// bf16 op that computes in float32); and its float32 primitive alone.
//
// call-cost belongs here although its product is float32: it measures the fixed cost per
// call that bf16-matmul's last row (1x1x1) shows and that bounds the ratios of its small
// products (those with a side of 10), looped alone so that callgrind can count it
// (bench/instructions_per_call.sh), as docs/performance.md's bfloat16 step describes. It
// also reports its two sides as the bf16 benches report theirs (DnnlSide, us_json,
// ratio_json), from the same one-thread oneDNN setup (on_one_thread): helpers that no
// float32 bench uses.
#include <dataparallel/dataparallel.h>
#include <dnnl.h>

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "dp_bench.h"
#include "dp_bench_common.h"

namespace dp_bench {
namespace {

// f runs on a new thread with one oneDNN (OpenMP) thread, as one CPU device computes.
void on_one_thread(const std::function<void()>& f) {
  std::thread([&] {
    omp_set_num_threads(1);
    try {
      f();
    } catch (const dnnl::error& e) {
      std::fprintf(stderr, "dp-bench: oneDNN: %s\n", e.what());
      std::exit(1);
    }
  }).join();
}

// Seconds of one call of f after a warm-up call (at least 0.1 us): sizes a measurement.
double one_call_seconds(const std::function<void()>& f) {
  f();
  const double t0 = now();
  f();
  return std::max(now() - t0, 1e-7);
}

// Median seconds per call of f, with as many calls as fit in about `budget` seconds
// (5 to 200; 3 warm-up calls).
double median_seconds_for(const std::function<void()>& f, double budget = 0.6) {
  const double one = one_call_seconds(f);
  const int reps = std::clamp(static_cast<int>(budget / one), 5, 200);
  return median_seconds(f, 1, reps);
}

// Medians of ours' and ref's seconds per call, measured in alternating blocks of calls
// (about 20 ms each) for about `budget` seconds in all: on a machine whose speed drifts
// during a run (a shared VM) both figures move alike, and their ratio holds.
std::pair<double, double> paired_medians(const std::function<void()>& ours,
                                         const std::function<void()>& ref, double budget) {
  const double one_ours = one_call_seconds(ours), one_ref = one_call_seconds(ref);
  const int block_ours = std::clamp(static_cast<int>(0.02 / one_ours), 1, 1000);
  const int block_ref = std::clamp(static_cast<int>(0.02 / one_ref), 1, 1000);
  const int rounds =
      std::clamp(static_cast<int>(budget / (block_ours * one_ours + block_ref * one_ref)), 5, 100);
  std::vector<double> t_ours, t_ref;
  for (int r = 0; r < rounds; ++r) {
    time_calls(ours, block_ours, &t_ours);
    time_calls(ref, block_ref, &t_ref);
  }
  return {median_of(std::move(t_ours)), median_of(std::move(t_ref))};
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

// A JSON string literal of s (quotes and backslashes escaped, control characters blanked).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  }
  return out + "\"";
}

// One oneDNN side's figure: seconds per call, or the reason it could not run.
struct DnnlSide {
  double seconds = 0;  // 0: not available
  std::string impl;    // oneDNN's implementation name, or the error
};

std::string gflops_json(double flop, const DnnlSide& s) {
  if (s.seconds <= 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", flop / s.seconds / 1e9);
  return buf;
}

std::string us_json(const DnnlSide& s) {
  if (s.seconds <= 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", s.seconds * 1e6);
  return buf;
}

std::string ratio_json(double ours_s, const DnnlSide& s) {
  if (s.seconds <= 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s.seconds / ours_s);
  return buf;
}

// The bf16 <-> f32 conversions of the floor, as plain loops the compiler vectorizes:
// oneDNN 2.6's own bf16 reorders on a CPU without AVX512 are its reference loops, several
// times slower than these.
void widen(const uint16_t* from, float* to, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(from[i]) << 16;
    std::memcpy(&to[i], &u, 4);
  }
}

// Round to nearest, ties to even; NaN stays NaN (quiet).
void round_to_bf16(const float* from, uint16_t* to, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, &from[i], 4);
    const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    to[i] = static_cast<uint16_t>(nan ? (u >> 16) | 0x40u : rounded);
  }
}

// The three oneDNN sides of a bf16 op.
struct DnnlBf16Figures {
  double ours_bf16 = 0;      // our bf16 op, timed in turns with `bf16` when it exists
  DnnlSide bf16;             // oneDNN's own bf16 primitive
  DnnlSide f32_conversions;  // f32 primitive + bf16 <-> f32 reorders
  DnnlSide f32;              // f32 primitive alone
};

// The host bfloat16 bits of a bf16 tensor.
std::vector<uint16_t> bf16_host(const dp_tensor* t, size_t n) {
  std::vector<uint16_t> v(n);
  ok(dp_tensor_to_host(t, v.data(), n * 2), "bf16 to host");
  return v;
}

std::vector<float> f32_host(const dp_tensor* t, size_t n) {
  std::vector<float> v(n);
  ok(dp_tensor_to_host(t, v.data(), n * 4), "f32 to host");
  return v;
}

dp_tensor* to_bf16(const dp_tensor* t) {
  dp_tensor* b = nullptr;
  ok(dp_tensor_to_dtype(t, DP_BFLOAT16, &b), "to bf16");
  return b;
}

// C[M,N] = A[M,K] B[K,N], row-major, A and B given as bf16 bits and as float32.
// ours_bf16 runs our bf16 op once; it is timed in turns with oneDNN's bf16 primitive, or
// alone where this CPU has none.
DnnlBf16Figures dnnl_matmul_bf16(int64_t M, int64_t K, int64_t N, std::vector<uint16_t>& a16,
                                 std::vector<uint16_t>& b16, std::vector<float>& a32,
                                 std::vector<float>& b32, const std::function<void()>& ours_bf16) {
  using dnnl::memory;
  using dt = memory::data_type;
  DnnlBf16Figures r;
  on_one_thread([&] {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    auto md = [](memory::dims d, dt t) { return memory::desc(d, t, memory::format_tag::ab); };
    const memory::desc a16_md = md({M, K}, dt::bf16), b16_md = md({K, N}, dt::bf16),
                       c16_md = md({M, N}, dt::bf16), a32_md = md({M, K}, dt::f32),
                       b32_md = md({K, N}, dt::f32), c32_md = md({M, N}, dt::f32);
    std::vector<uint16_t> c16(static_cast<size_t>(M * N));
    std::vector<float> c32(static_cast<size_t>(M * N)), a_wide(a32.size()), b_wide(b32.size());
    memory a16m(a16_md, eng, a16.data()), b16m(b16_md, eng, b16.data()),
        c16m(c16_md, eng, c16.data()), a32m(a32_md, eng, a32.data()), b32m(b32_md, eng, b32.data()),
        c32m(c32_md, eng, c32.data()), a_widem(a32_md, eng, a_wide.data()),
        b_widem(b32_md, eng, b_wide.data());
    try {
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a16_md, b16_md, c16_md), eng);
      const dnnl::matmul mm(pd);
      r.bf16.impl = pd.impl_info_str();
      std::tie(r.ours_bf16, r.bf16.seconds) = paired_medians(
          ours_bf16,
          [&] {
            mm.execute(strm,
                       {{DNNL_ARG_SRC, a16m}, {DNNL_ARG_WEIGHTS, b16m}, {DNNL_ARG_DST, c16m}});
            strm.wait();
          },
          1.2);
    } catch (const dnnl::error& e) {
      r.bf16.impl = e.what();
      r.ours_bf16 = median_seconds_for(ours_bf16);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a32_md, b32_md, c32_md), eng);
    const dnnl::matmul mm(pd);
    r.f32.impl = r.f32_conversions.impl = pd.impl_info_str();
    r.f32.seconds = median_seconds_for([&] {
      mm.execute(strm, {{DNNL_ARG_SRC, a32m}, {DNNL_ARG_WEIGHTS, b32m}, {DNNL_ARG_DST, c32m}});
      strm.wait();
    });
    r.f32_conversions.seconds = median_seconds_for([&] {
      widen(a16.data(), a_wide.data(), a16.size());
      widen(b16.data(), b_wide.data(), b16.size());
      mm.execute(strm,
                 {{DNNL_ARG_SRC, a_widem}, {DNNL_ARG_WEIGHTS, b_widem}, {DNNL_ARG_DST, c32m}});
      strm.wait();
      round_to_bf16(c32.data(), c16.data(), c32.size());
    });
  });
  return r;
}

struct ConvShape {
  int64_t n, c, h, w, o, k, pad;
};

// oneDNN's convolution y = conv(x, w) + bias as a user with NCHW tensors runs it: the
// primitive picks its blocked formats (format_tag::any) and x, w and y are reordered from
// and to the plain layouts in each call (what our op does too).
// ours_bf16: as in dnnl_matmul_bf16.
DnnlBf16Figures dnnl_conv_bf16(const ConvShape& s, std::vector<uint16_t>& x16,
                               std::vector<uint16_t>& w16, std::vector<uint16_t>& b16,
                               std::vector<float>& x32, std::vector<float>& w32,
                               std::vector<float>& b32, const std::function<void()>& ours_bf16) {
  using dnnl::memory;
  using dt = memory::data_type;
  using tag = memory::format_tag;
  DnnlBf16Figures r;
  on_one_thread([&] {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    const int64_t oh = s.h + 2 * s.pad - s.k + 1, ow = s.w + 2 * s.pad - s.k + 1;
    const memory::dims xd{s.n, s.c, s.h, s.w}, wd{s.o, s.c, s.k, s.k}, bd{s.o},
        yd{s.n, s.o, oh, ow}, strides{1, 1}, pad{s.pad, s.pad};
    const memory::desc x16_md(xd, dt::bf16, tag::nchw), w16_md(wd, dt::bf16, tag::oihw),
        y16_md(yd, dt::bf16, tag::nchw), x32_md(xd, dt::f32, tag::nchw),
        w32_md(wd, dt::f32, tag::oihw), b32_md(bd, dt::f32, tag::x), y32_md(yd, dt::f32, tag::nchw);
    std::vector<uint16_t> y16(static_cast<size_t>(s.n * s.o * oh * ow));
    std::vector<float> y32(y16.size()), b_wide(b32.size());
    memory x16m(x16_md, eng, x16.data()), w16m(w16_md, eng, w16.data()),
        y16m(y16_md, eng, y16.data()), x32m(x32_md, eng, x32.data()), w32m(w32_md, eng, w32.data()),
        b32m(b32_md, eng, b32.data()), y32m(y32_md, eng, y32.data()),
        b_widem(b32_md, eng, b_wide.data());
    // One call: reorder x and w (from the given user memories) into the primitive's
    // formats, run it, reorder y out into `y_user`; `pre` runs first, `post` last.
    auto timed = [&](dt type, memory& xm, memory& wm, memory& bm, memory& y_user,
                     const std::function<void()>& pre, const std::function<void()>& post,
                     DnnlSide* out, const std::function<void()>* ours = nullptr) {
      const memory::desc any_x(xd, type, tag::any), any_w(wd, type, tag::any),
          any_y(yd, type, tag::any);
      const dnnl::convolution_forward::primitive_desc pd(
          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                          dnnl::algorithm::convolution_direct, any_x, any_w, b32_md,
                                          any_y, strides, pad, pad),
          eng);
      out->impl = pd.impl_info_str();
      const dnnl::convolution_forward conv(pd);
      memory xp(pd.src_desc(), eng), wp(pd.weights_desc(), eng), yp(pd.dst_desc(), eng);
      const dnnl::reorder rx(xm, xp), rw(wm, wp), ry(yp, y_user);
      auto call = [&] {
        if (pre) pre();
        rx.execute(strm, xm, xp);
        rw.execute(strm, wm, wp);
        conv.execute(
            strm,
            {{DNNL_ARG_SRC, xp}, {DNNL_ARG_WEIGHTS, wp}, {DNNL_ARG_BIAS, bm}, {DNNL_ARG_DST, yp}});
        ry.execute(strm, yp, y_user);
        strm.wait();
        if (post) post();
      };
      if (ours) {
        std::tie(r.ours_bf16, out->seconds) = paired_medians(*ours, call, 3.0);
      } else {
        out->seconds = median_seconds_for(call);
      }
    };
    auto widen_bias = [&] { widen(b16.data(), b_wide.data(), b16.size()); };
    try {
      timed(dt::bf16, x16m, w16m, b_widem, y16m, widen_bias, nullptr, &r.bf16, &ours_bf16);
    } catch (const dnnl::error& e) {
      r.bf16.impl = e.what();
      r.ours_bf16 = median_seconds_for(ours_bf16, 1.5);
    }
    // f32 primitive fed from float32 copies of the bf16 inputs, its output rounded.
    std::vector<float> x_wide(x16.size()), w_wide(w16.size()), y_wide(y16.size());
    memory x_widem(x32_md, eng, x_wide.data()), w_widem(w32_md, eng, w_wide.data()),
        y_widem(y32_md, eng, y_wide.data());
    timed(
        dt::f32, x_widem, w_widem, b_widem, y_widem,
        [&] {
          widen(x16.data(), x_wide.data(), x16.size());
          widen(w16.data(), w_wide.data(), w16.size());
          widen(b16.data(), b_wide.data(), b16.size());
        },
        [&] { round_to_bf16(y_wide.data(), y16.data(), y16.size()); }, &r.f32_conversions);
    timed(dt::f32, x32m, w32m, b32m, y32m, nullptr, nullptr, &r.f32);
  });
  return r;
}

}  // namespace

// Whether this CPU's oneDNN creates a bf16 matmul primitive; `why` gets its error if not.
bool dnnl_bf16_available(std::string* why) {
  using dnnl::memory;
  bool ok_ = false;
  on_one_thread([&] {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const memory::desc md({16, 16}, memory::data_type::bf16, memory::format_tag::ab);
    try {
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(md, md, md), eng);
      ok_ = true;
      *why = pd.impl_info_str();
    } catch (const dnnl::error& e) {
      *why = e.what();
    }
  });
  return ok_;
}

void print_bf16_header(dp_context* ctx) {
  static bool printed = false;
  if (printed) return;
  printed = true;
  int native = -1;
  ok(dp_device_bf16_native(ctx, cpu(0), &native), "dp_device_bf16_native");
  std::string why;
  const bool avail = dnnl_bf16_available(&why);
  const dnnl_version_t* v = dnnl_version();
  std::printf(
      "{\"bench\": \"bf16_device\", \"device\": \"cpu:0\", \"dp_device_bf16_native\": %d, "
      "\"dnnl_version\": \"%d.%d.%d\", \"dnnl_isa\": \"%s\", \"dnnl_bf16_primitive\": %s, "
      "\"dnnl_bf16_detail\": %s}\n",
      native, v->major, v->minor, v->patch, isa_name(dnnl::get_effective_cpu_isa()),
      avail ? "true" : "false", json_string(why).c_str());
  if (!avail)
    std::printf(
        "{\"bench\": \"bf16_note\", \"note\": \"oneDNN cannot create bf16 primitives on this "
        "CPU: the bf16 references are its float32 primitive with the bf16<->f32 conversions "
        "(the floor of a bf16 op that computes in float32) and our float32 op\"}\n");
  std::fflush(stdout);
}

void bench_bf16_matmul() {
  dp_context* ctx = make_context(1);
  print_bf16_header(ctx);
  // The MLP's products at batch 256 as [M,K] x [K,N], 784-512-256-10: forward x W^T of
  // each layer, backward dX = dY W of the second and third (dW = dY^T x of the second has
  // dX's shape), dW of the first and third. Last, 1x1x1: each side's fixed cost per call
  // (ours: the C API, the output tensor, the primitive cache; oneDNN's: its execute), which
  // bounds the ratio of the small products.
  const int64_t shapes[][3] = {{256, 784, 512}, {256, 512, 256}, {256, 256, 10}, {256, 256, 512},
                               {256, 10, 256},  {512, 256, 784}, {10, 256, 256}, {1, 1, 1}};
  for (const auto& s : shapes) {
    const int64_t M = s[0], K = s[1], N = s[2];
    dp_tensor* a = random_tensor(ctx, {M, K}, cpu(0), 1);
    dp_tensor* b = random_tensor(ctx, {K, N}, cpu(0), 2);
    dp_tensor* a16 = to_bf16(a);
    dp_tensor* b16 = to_bf16(b);
    auto matmul = [&](const dp_tensor* x, const dp_tensor* y) {
      dp_tensor* c = nullptr;
      ok(dp_op_matmul(x, y, &c), "matmul");
      ok(dp_device_synchronize(ctx, cpu(0)), "synchronize");
      dp_tensor_release(c);
    };
    const double t_f32 = median_seconds_for([&] { matmul(a, b); });
    dp_dtype previous = DP_FLOAT32;
    ok(dp_set_autocast(DP_BFLOAT16, &previous), "autocast on");
    const double t_auto = median_seconds_for([&] { matmul(a, b); });
    ok(dp_set_autocast(previous, nullptr), "autocast off");
    const size_t na = static_cast<size_t>(M * K), nb = static_cast<size_t>(K * N);
    std::vector<uint16_t> ah = bf16_host(a16, na), bh = bf16_host(b16, nb);
    std::vector<float> af = f32_host(a, na), bf = f32_host(b, nb);
    const DnnlBf16Figures d = dnnl_matmul_bf16(M, K, N, ah, bh, af, bf, [&] { matmul(a16, b16); });
    const double t_bf16 = d.ours_bf16;
    const double flop = 2.0 * static_cast<double>(M * N * K);
    const DnnlSide ours_f32{t_f32, ""};
    std::printf(
        "{\"bench\": \"bf16_matmul\", \"m\": %lld, \"k\": %lld, \"n\": %lld, "
        "\"dp_bf16_gflops\": %.1f, \"dp_autocast_gflops\": %.1f, \"dp_fp32_gflops\": %.1f, "
        "\"dnnl_bf16_gflops\": %s, \"dnnl_f32_plus_conversions_gflops\": %s, "
        "\"dnnl_f32_gflops\": %s, \"dp_bf16_us\": %.2f, \"dnnl_bf16_us\": %s, "
        "\"bf16_vs_dnnl_bf16\": %s, "
        "\"bf16_vs_dnnl_f32_plus_conversions\": %s, \"bf16_vs_dp_fp32\": %s, "
        "\"autocast_vs_dp_fp32\": %.3f, \"fp32_vs_dnnl_f32\": %s, \"dnnl_impl\": %s}\n",
        (long long)M, (long long)K, (long long)N, flop / t_bf16 / 1e9, flop / t_auto / 1e9,
        flop / t_f32 / 1e9, gflops_json(flop, d.bf16).c_str(),
        gflops_json(flop, d.f32_conversions).c_str(), gflops_json(flop, d.f32).c_str(),
        t_bf16 * 1e6, us_json(d.bf16).c_str(), ratio_json(t_bf16, d.bf16).c_str(),
        ratio_json(t_bf16, d.f32_conversions).c_str(), ratio_json(t_bf16, ours_f32).c_str(),
        t_f32 / t_auto, ratio_json(t_f32, d.f32).c_str(),
        json_string(d.bf16.seconds > 0 ? d.bf16.impl : d.f32.impl).c_str());
    std::fflush(stdout);
    for (dp_tensor* t : {a, b, a16, b16}) dp_tensor_release(t);
  }
  dp_context_release(ctx);
}

void bench_bf16_conv() {
  dp_context* ctx = make_context(1);
  print_bf16_header(ctx);
  // The CNN's two convolutions at batch 256 (3x3, padding 1), forward with bias.
  const ConvShape shapes[] = {{256, 1, 28, 28, 32, 3, 1}, {256, 32, 14, 14, 64, 3, 1}};
  for (const ConvShape& s : shapes) {
    dp_tensor* x = random_tensor(ctx, {s.n, s.c, s.h, s.w}, cpu(0), 1);
    dp_tensor* w = random_tensor(ctx, {s.o, s.c, s.k, s.k}, cpu(0), 2);
    dp_tensor* b = random_tensor(ctx, {s.o}, cpu(0), 3);
    dp_tensor* x16 = to_bf16(x);
    dp_tensor* w16 = to_bf16(w);
    dp_tensor* b16 = to_bf16(b);
    auto conv = [&](const dp_tensor* xx, const dp_tensor* ww, const dp_tensor* bb) {
      dp_tensor* y = nullptr;
      ok(dp_op_conv2d(xx, ww, bb, 1, 1, static_cast<int32_t>(s.pad), static_cast<int32_t>(s.pad),
                      &y),
         "conv2d");
      ok(dp_device_synchronize(ctx, cpu(0)), "synchronize");
      dp_tensor_release(y);
    };
    const double t_f32 = median_seconds_for([&] { conv(x, w, b); }, 1.5);
    dp_dtype previous = DP_FLOAT32;
    ok(dp_set_autocast(DP_BFLOAT16, &previous), "autocast on");
    const double t_auto = median_seconds_for([&] { conv(x, w, b); }, 1.5);
    ok(dp_set_autocast(previous, nullptr), "autocast off");
    const size_t nx = static_cast<size_t>(s.n * s.c * s.h * s.w),
                 nw = static_cast<size_t>(s.o * s.c * s.k * s.k), nb = static_cast<size_t>(s.o);
    std::vector<uint16_t> xh = bf16_host(x16, nx), wh = bf16_host(w16, nw), bh = bf16_host(b16, nb);
    std::vector<float> xf = f32_host(x, nx), wf = f32_host(w, nw), bf = f32_host(b, nb);
    const DnnlBf16Figures d =
        dnnl_conv_bf16(s, xh, wh, bh, xf, wf, bf, [&] { conv(x16, w16, b16); });
    const double t_bf16 = d.ours_bf16;
    const int64_t oh = s.h + 2 * s.pad - s.k + 1, ow = s.w + 2 * s.pad - s.k + 1;
    const double flop = 2.0 * static_cast<double>(s.n * s.o * oh * ow * s.c * s.k * s.k);
    const DnnlSide ours_f32{t_f32, ""};
    std::printf(
        "{\"bench\": \"bf16_conv\", \"x\": [%lld, %lld, %lld, %lld], \"w\": [%lld, %lld, "
        "%lld, %lld], \"pad\": %lld, \"dp_bf16_gflops\": %.1f, \"dp_autocast_gflops\": %.1f, "
        "\"dp_fp32_gflops\": %.1f, \"dp_bf16_ms\": %.2f, \"dnnl_bf16_gflops\": %s, "
        "\"dnnl_f32_plus_conversions_gflops\": %s, \"dnnl_f32_gflops\": %s, "
        "\"bf16_vs_dnnl_bf16\": %s, \"bf16_vs_dnnl_f32_plus_conversions\": %s, "
        "\"bf16_vs_dp_fp32\": %s, \"autocast_vs_dp_fp32\": %.3f, \"fp32_vs_dnnl_f32\": %s, "
        "\"dnnl_impl\": %s}\n",
        (long long)s.n, (long long)s.c, (long long)s.h, (long long)s.w, (long long)s.o,
        (long long)s.c, (long long)s.k, (long long)s.k, (long long)s.pad, flop / t_bf16 / 1e9,
        flop / t_auto / 1e9, flop / t_f32 / 1e9, t_bf16 * 1e3, gflops_json(flop, d.bf16).c_str(),
        gflops_json(flop, d.f32_conversions).c_str(), gflops_json(flop, d.f32).c_str(),
        ratio_json(t_bf16, d.bf16).c_str(), ratio_json(t_bf16, d.f32_conversions).c_str(),
        ratio_json(t_bf16, ours_f32).c_str(), t_f32 / t_auto, ratio_json(t_f32, d.f32).c_str(),
        json_string(d.bf16.seconds > 0 ? d.bf16.impl : d.f32.impl).c_str());
    std::fflush(stdout);
    for (dp_tensor* t : {x, w, b, x16, w16, b16}) dp_tensor_release(t);
  }
  dp_context_release(ctx);
}

// ours: a 1x1x1 float32 dp_op_matmul + dp_device_synchronize + dp_tensor_release;
// oneDNN: its float32 1x1x1 matmul primitive's execute + stream wait on memories made once.
// `side` "dp", "onednn" or "both" (under callgrind, one side at a time).
void bench_call_cost(long calls, const char* side) {
  const bool ours = std::strcmp(side, "onednn") != 0, theirs = std::strcmp(side, "dp") != 0;
  // Seconds a call (0 when calls is 0: no figure, as for a side not run).
  auto per_call = [&](const std::function<void()>& call) {
    call();  // the primitive is made here, outside the count
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) call();
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - t0;
    return calls > 0 ? spent.count() / static_cast<double>(calls) : 0.0;
  };
  DnnlSide dp, dnnl;
  if (ours) {
    dp_context* ctx = make_context(1);
    dp_tensor* a = random_tensor(ctx, {1, 1}, cpu(0), 1);
    dp_tensor* b = random_tensor(ctx, {1, 1}, cpu(0), 2);
    dp.seconds = per_call([&] {
      dp_tensor* c = nullptr;
      ok(dp_op_matmul(a, b, &c), "matmul");
      ok(dp_device_synchronize(ctx, cpu(0)), "synchronize");
      dp_tensor_release(c);
    });
    dp_tensor_release(a);
    dp_tensor_release(b);
    dp_context_release(ctx);
  }
  if (theirs) {
    on_one_thread([&] {
      using dnnl::memory;
      dnnl::engine eng(dnnl::engine::kind::cpu, 0);
      dnnl::stream strm(eng);
      const memory::desc md({1, 1}, memory::data_type::f32, memory::format_tag::ab);
      float av = 0.5f, bv = 0.25f, cv = 0.f;
      memory am(md, eng, &av), bm(md, eng, &bv), cm(md, eng, &cv);
      const dnnl::matmul mm(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
      dnnl.seconds = per_call([&] {
        mm.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
        strm.wait();
      });
    });
  }
  std::printf(
      "{\"bench\": \"call_cost\", \"op\": \"1x1x1 float32 matmul\", \"calls\": %ld, "
      "\"dp_us_per_call\": %s, \"dnnl_execute_us_per_call\": %s, \"ratio\": %s}\n",
      calls, us_json(dp).c_str(), us_json(dnnl).c_str(),
      dp.seconds > 0 ? ratio_json(dp.seconds, dnnl).c_str() : "null");
}

}  // namespace dp_bench
