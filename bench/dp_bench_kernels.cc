// dp-bench's float32 kernel benches: one op or copy on CPU devices beside its reference:
// dp_op_matmul beside dnnl_sgemm (sgemm), dp_op_linear beside oneDNN's matmul (linear), and
// a copy between two devices and scatter + gather over two beside memcpy (copy, scatter).
#include <dataparallel/dataparallel.h>
#include <dnnl.h>

#include <dnnl.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "dp_bench.h"
#include "dp_bench_common.h"

namespace dp_bench {

void bench_sgemm() {
  dp_context* ctx = make_context(1);
  const int64_t shapes[][3] = {
      {1024, 1024, 1024}, {256, 784, 512}, {256, 512, 256}, {256, 256, 10}, {512, 256, 784}};
  for (const auto& s : shapes) {
    const int64_t M = s[0], K = s[1], N = s[2];
    dp_tensor* a = random_tensor(ctx, {M, K}, cpu(0), 1);
    dp_tensor* b = random_tensor(ctx, {K, N}, cpu(0), 2);
    const int reps = M * N * K > (int64_t{1} << 28) ? 20 : 200;
    const double t_dp = median_seconds(
        [&] {
          dp_tensor* c = nullptr;
          ok(dp_op_matmul(a, b, &c), "matmul");
          dp_tensor_release(c);
        },
        5, reps);
    // dnnl_sgemm on one thread, the same row-major product, into a reused buffer.
    std::vector<float> A(static_cast<size_t>(M * K)), B(static_cast<size_t>(K * N)),
        C(static_cast<size_t>(M * N));
    ok(dp_tensor_to_host(a, A.data(), A.size() * 4), "a");
    ok(dp_tensor_to_host(b, B.data(), B.size() * 4), "b");
    double t_ref = 0;
    std::thread([&] {
      omp_set_num_threads(1);
      t_ref = median_seconds(
          [&] { dnnl_sgemm('N', 'N', M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, C.data(), N); },
          5, reps);
    }).join();
    const double flop = 2.0 * static_cast<double>(M * N * K);
    std::printf(
        "{\"bench\": \"sgemm\", \"m\": %lld, \"k\": %lld, \"n\": %lld, \"dp_gflops\": %.1f, "
        "\"dnnl_sgemm_gflops\": %.1f, \"ratio\": %.3f}\n",
        (long long)M, (long long)K, (long long)N, flop / t_dp / 1e9, flop / t_ref / 1e9,
        t_ref / t_dp);
    std::fflush(stdout);
    dp_tensor_release(a);
    dp_tensor_release(b);
  }
  dp_context_release(ctx);
}

namespace {

// oneDNN's matmul y = x w^T + b alone, one thread, median microseconds per call: with w
// as stored ([out, in] rows), or packed beforehand into the blocked layout oneDNN picks
// (`packed`). `pack_us` gets the time of that packing (a oneDNN reorder).
double dnnl_linear_us(int64_t M, int64_t K, int64_t N, bool packed, double* pack_us) {
  using dnnl::memory;
  double result = 0;
  std::thread([&] {
    try {
      omp_set_num_threads(1);
      dnnl::engine eng(dnnl::engine::kind::cpu, 0);
      dnnl::stream strm(eng);
      const memory::desc x_md({M, K}, memory::data_type::f32, memory::format_tag::ab);
      const memory::desc w_plain({K, N}, memory::data_type::f32, memory::format_tag::ba);
      const memory::desc w_md =
          packed ? memory::desc({K, N}, memory::data_type::f32, memory::format_tag::any) : w_plain;
      const memory::desc b_md({1, N}, memory::data_type::f32, memory::format_tag::ab);
      const memory::desc y_md({M, N}, memory::data_type::f32, memory::format_tag::ab);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(x_md, w_md, b_md, y_md), eng);
      const dnnl::matmul mm(pd);
      std::vector<float> x(static_cast<size_t>(M * K), 0.1f), w(static_cast<size_t>(K * N), 0.01f),
          b(static_cast<size_t>(N), 0.f), y(static_cast<size_t>(M * N));
      memory xm(x_md, eng, x.data()), wm(w_plain, eng, w.data()), bm(b_md, eng, b.data()),
          ym(y_md, eng, y.data());
      memory used = wm;
      if (packed) {
        used = memory(pd.weights_desc(), eng);
        dnnl::reorder pack(wm, used);
        const double t = median_seconds(
            [&] {
              pack.execute(strm, wm, used);
              strm.wait();
            },
            5, 200);
        if (pack_us) *pack_us = t * 1e6;
      }
      result = 1e6 * median_seconds(
                         [&] {
                           mm.execute(strm, {{DNNL_ARG_SRC, xm},
                                             {DNNL_ARG_WEIGHTS, used},
                                             {DNNL_ARG_BIAS, bm},
                                             {DNNL_ARG_DST, ym}});
                           strm.wait();
                         },
                         5, 200);
    } catch (const dnnl::error& e) {
      std::fprintf(stderr, "dp-bench: oneDNN matmul %lldx%lldx%lld: %s\n", (long long)M,
                   (long long)K, (long long)N, e.what());
      std::exit(1);
    }
  }).join();
  return result;
}

}  // namespace

// The MLP's layers through dp_op_linear at 64..512 rows on one CPU device. Two devices
// give each replica half the batch, so what a call costs regardless of its rows is paid
// once per replica: `fixed_us` fits t(rows) = fixed + rows * per_row through the 128- and
// 512-row times, and `half_batch_extra_us` is 2 t(128) - t(256). Beside each: oneDNN's
// matmul alone with the weight as stored, and with the weight packed beforehand into
// oneDNN's blocked layout (what the call would save if replicas shared one packed copy)
// and what that packing costs.
void bench_linear() {
  dp_context* ctx = make_context(1);
  const int64_t layers[][2] = {{784, 512}, {512, 256}, {256, 10}};
  const int64_t rows[] = {64, 128, 256, 512};
  for (const auto& l : layers) {
    const int64_t K = l[0], N = l[1];
    dp_tensor* w = random_tensor(ctx, {N, K}, cpu(0), 4);
    dp_tensor* b = random_tensor(ctx, {N}, cpu(0), 5);
    double us[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < 4; ++i) {
      const int64_t M = rows[i];
      dp_tensor* x = random_tensor(ctx, {M, K}, cpu(0), 6);
      const double t = median_seconds(
          [&] {
            dp_tensor* y = nullptr;
            ok(dp_op_linear(x, w, b, &y), "linear");
            dp_tensor_release(y);
          },
          5, 200);
      us[i] = t * 1e6;
      double pack_us = 0;
      const double stored = dnnl_linear_us(M, K, N, false, nullptr);
      const double packed = dnnl_linear_us(M, K, N, true, &pack_us);
      std::printf(
          "{\"bench\": \"linear\", \"in\": %lld, \"out\": %lld, \"rows\": %lld, "
          "\"us\": %.1f, \"us_per_row\": %.3f, \"gflops\": %.1f, \"dnnl_us\": %.1f, "
          "\"dnnl_prepacked_us\": %.1f, \"dnnl_pack_us\": %.1f}\n",
          (long long)K, (long long)N, (long long)M, us[i], us[i] / static_cast<double>(M),
          2.0 * static_cast<double>(M * N * K) / t / 1e9, stored, packed, pack_us);
      std::fflush(stdout);
      dp_tensor_release(x);
    }
    const double per_row = (us[3] - us[1]) / static_cast<double>(rows[3] - rows[1]);
    std::printf(
        "{\"bench\": \"linear_fit\", \"in\": %lld, \"out\": %lld, \"per_row_us\": %.3f, "
        "\"fixed_us\": %.1f, \"half_batch_extra_us\": %.1f}\n",
        (long long)K, (long long)N, per_row, us[1] - static_cast<double>(rows[1]) * per_row,
        2 * us[1] - us[2]);
    std::fflush(stdout);
    dp_tensor_release(w);
    dp_tensor_release(b);
  }
  dp_context_release(ctx);
}

void bench_copy() {
  dp_context* ctx = make_context(2);
  const int64_t n = (int64_t{64} << 20) / 4;
  dp_tensor* src = random_tensor(ctx, {n}, cpu(0), 3);
  const double t_dp = median_seconds(
      [&] {
        dp_tensor* dst = nullptr;
        ok(dp_tensor_to_device(src, cpu(1), &dst), "copy");
        dp_tensor_release(dst);
      },
      3, 20);
  std::vector<char> a(static_cast<size_t>(n) * 4, 1), b(static_cast<size_t>(n) * 4);
  const double t_ref = median_seconds([&] { std::memcpy(b.data(), a.data(), a.size()); }, 3, 20);
  const double bytes = static_cast<double>(n) * 4;
  std::printf(
      "{\"bench\": \"copy_cpu0_to_cpu1\", \"bytes\": %.0f, \"dp_gb_s\": %.2f, \"memcpy_gb_s\": "
      "%.2f, "
      "\"ratio\": %.3f}\n",
      bytes, bytes / t_dp / 1e9, bytes / t_ref / 1e9, t_ref / t_dp);
  std::fflush(stdout);
  dp_tensor_release(src);
  dp_context_release(ctx);
}

// Scatter of a 64 MiB tensor over two devices and gather back, both with aliasing (the
// default on CPU devices: the chunk on cpu:1 reads cpu:0's memory) and with copies.
void bench_scatter() {
  dp_context* ctx = make_context(2);
  const int64_t rows = 1 << 14, cols = 1024;  // 64 MiB of float32
  dp_tensor* x = random_tensor(ctx, {rows, cols}, cpu(0), 5);
  const dp_device ids[2] = {cpu(0), cpu(1)};
  const double bytes = static_cast<double>(rows * cols * 4);
  std::vector<char> a(static_cast<size_t>(bytes), 1), b(static_cast<size_t>(bytes));
  const double t_memcpy = median_seconds([&] { std::memcpy(b.data(), a.data(), a.size()); }, 3, 20);
  dp_tensor* pieces[2] = {nullptr, nullptr};
  size_t n = 0;
  const double t_scatter = median_seconds(
      [&] {
        ok(dp_scatter(x, ids, 2, nullptr, 0, pieces, &n), "scatter");
        dp_tensor_release(pieces[0]);
        dp_tensor_release(pieces[1]);
      },
      3, 20);
  ok(dp_scatter(x, ids, 2, nullptr, 0, pieces, &n), "scatter");
  const double t_gather = median_seconds(
      [&] {
        dp_tensor* g = nullptr;
        ok(dp_gather(pieces, 2, cpu(0), 0, &g), "gather");
        dp_tensor_release(g);
      },
      3, 20);
  // Scatter with copies: the chunk for cpu:1 copied there (what a non-aliasing backend does).
  const double t_scatter_copy = median_seconds(
      [&] {
        dp_tensor* moved = nullptr;
        ok(dp_tensor_to_device(pieces[1], cpu(1), &moved), "copy");
        dp_tensor_release(moved);
      },
      3, 20);
  dp_tensor_release(pieces[0]);
  dp_tensor_release(pieces[1]);
  std::printf(
      "{\"bench\": \"scatter_gather_64MiB_2_devices\", \"memcpy_gb_s\": %.2f, "
      "\"scatter_alias_gb_s\": %.1f, \"scatter_copy_gb_s\": %.2f, \"gather_gb_s\": %.2f, "
      "\"gather_ratio_vs_memcpy\": %.3f, \"scatter_copy_ratio_vs_memcpy\": %.3f}\n",
      bytes / t_memcpy / 1e9, bytes / t_scatter / 1e9, bytes / 2 / t_scatter_copy / 1e9,
      bytes / t_gather / 1e9, t_memcpy / t_gather, (t_memcpy / 2) / t_scatter_copy);
  std::fflush(stdout);
  dp_tensor_release(x);
  dp_context_release(ctx);
}

}  // namespace dp_bench
