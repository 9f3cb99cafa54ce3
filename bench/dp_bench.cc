// dp-bench: the library's benchmarks, each printing its measured figures and the
// comparison in the same run, one JSON object per line.
//
//   dp-bench sgemm      matmul through dp_op_matmul on one CPU device vs dnnl_sgemm
//   dp-bench linear     dp_op_linear of the MLP's layers at 64..512 rows: the time per
//                       row, the part of a call that does not shrink with the rows, and
//                       oneDNN's matmul with the weight as stored and prepacked
//   dp-bench copy       64 MiB between two CPU devices vs memcpy
//   dp-bench train      training samples/s: one device without the wrapper, then
//                       DataParallel over 1..N CPU devices (--model mlp|cnn), then over
//                       N devices aliasing versus copying parameters and input chunks
//   dp-bench overhead   the DataParallel overhead per step on a tiny model
//   dp-bench scatter    scatter + gather of 64 MiB over 2 devices vs memcpy
//   dp-bench cores      the machine's ceiling for data parallelism: dnnl_sgemm on one
//                       thread, then on N threads at once (one product each)
//   dp-bench ceiling    the MLP's ceiling: its training step's matrix products alone
//                       (dnnl_sgemm, one thread, at each replica's batch) for 1..N devices
//   dp-bench all        everything above
//
// Uses only the public C API (plus oneDNN directly, as the sgemm reference).
#include <dataparallel/dataparallel.h>
#include <dnnl.h>

#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include "fashion_mnist.h"
#include "models.h"
}

extern "C" void omp_set_num_threads(int);  // GNU OpenMP, oneDNN's threads

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "dp-bench: %s: %s\n", what, dp_last_error());
  std::exit(1);
}

void ok(dp_result r, const char* what) {
  if (r != DP_OK) die(what);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds per call of f over `reps` calls after `warmup` calls.
double median_seconds(const std::function<void()>& f, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

dp_context* make_context(int cpus) {
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = cpus;
  o.load_cuda = 0;
  dp_context* ctx = nullptr;
  ok(dp_context_create(&o, &ctx), "context");
  return ctx;
}

dp_device cpu(int i) {
  return dp_device{DP_DEVICE_CPU, i};
}

dp_tensor* random_tensor(dp_context* ctx, std::vector<int64_t> shape, dp_device d, unsigned seed) {
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i * 2654435761u + seed) % 1000) / 1000.0 - 0.5);
  dp_tensor* t = nullptr;
  ok(dp_tensor_from_data(ctx, DP_FLOAT32, shape.data(), shape.size(), v.data(), n * 4, d, &t),
     "tensor");
  return t;
}

// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------

struct Data {
  fashion_mnist fm{};
  bool real = false;
};

Data load_data(size_t limit) {
  Data d;
  char err[512];
  if (fashion_mnist_load(FASHION_MNIST_DEFAULT_DIR, limit, &d.fm, err, sizeof err) == 0) {
    d.real = true;
    return d;
  }
  std::fprintf(stderr, "dp-bench: %s; using random data\n", err);
  const size_t n = limit ? limit : 60000;
  d.fm.train.n = n;
  d.fm.train.pixels = static_cast<uint8_t*>(std::malloc(n * FASHION_PIXELS));
  d.fm.train.labels = static_cast<int64_t*>(std::malloc(n * sizeof(int64_t)));
  for (size_t i = 0; i < n * FASHION_PIXELS; ++i)
    d.fm.train.pixels[i] = static_cast<uint8_t>((i * 2654435761u) % 256);
  for (size_t i = 0; i < n; ++i) d.fm.train.labels[i] = static_cast<int64_t>(i % 10);
  return d;
}

// Training samples/s over `steps` batches (after 5 warm-up steps), the loop as
// torch_reference.py times it: batch assembly, forward, loss, backward, step.
double train_rate(const Data& data, const char* model_name, int devices, bool wrapper,
                  int64_t batch, int steps, bool alias_cpu = true) {
  dp_context* ctx = make_context(std::max(devices, 2));
  dp_module* model = nullptr;
  ok(build_model(ctx, model_name, cpu(0), &model), "model");
  dp_data_parallel* dpw = nullptr;
  if (wrapper) {
    std::vector<dp_device> ids;
    for (int i = 0; i < devices; ++i) ids.push_back(cpu(i));
    dp_data_parallel_options o = DP_DATA_PARALLEL_OPTIONS_INIT;
    o.alias_cpu = alias_cpu ? 1 : 0;
    ok(dp_data_parallel_create(model, ids.data(), ids.size(), nullptr, 0, &o, &dpw), "wrapper");
  }
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  so.lr = 0.05;
  so.momentum = 0.9;
  dp_optimizer* opt = nullptr;
  ok(dp_optimizer_sgd(model, &so, &opt), "optimizer");
  std::vector<float> x(static_cast<size_t>(batch) * FASHION_PIXELS);
  std::vector<int64_t> y(static_cast<size_t>(batch));
  const size_t n = data.fm.train.n;
  double t0 = 0;
  for (int step = 0; step < steps + 5; ++step) {
    if (step == 5) t0 = now();
    for (int64_t i = 0; i < batch; ++i) {
      const size_t s = (static_cast<size_t>(step * batch + i) * 2654435761u) % n;
      fashion_pixels_to_float(&x[static_cast<size_t>(i) * FASHION_PIXELS],
                              data.fm.train.pixels + s * FASHION_PIXELS, FASHION_PIXELS);
      y[static_cast<size_t>(i)] = data.fm.train.labels[s];
    }
    int64_t shape[4];
    const size_t nd = model_input_shape(model_name, batch, shape);
    dp_tensor *xt = nullptr, *yt = nullptr, *out = nullptr, *loss = nullptr;
    ok(dp_tensor_from_data(ctx, DP_FLOAT32, shape, nd, x.data(), x.size() * 4, cpu(0), &xt), "x");
    ok(dp_tensor_from_data(ctx, DP_INT64, shape, 1, y.data(), y.size() * 8, cpu(0), &yt), "y");
    if (dpw) {
      size_t n_out = 0;
      ok(dp_data_parallel_forward(dpw, &xt, nullptr, 1, &out, 1, &n_out), "forward");
    } else {
      ok(dp_module_forward1(model, xt, &out), "forward");
    }
    ok(dp_op_cross_entropy(out, yt, &loss), "loss");
    ok(dp_backward(loss, nullptr, 0), "backward");
    ok(dp_optimizer_step(opt), "step");
    ok(dp_optimizer_zero_grad(opt), "zero_grad");
    for (dp_tensor* t : {xt, yt, out, loss}) dp_tensor_release(t);
  }
  const double rate = static_cast<double>(steps) * static_cast<double>(batch) / (now() - t0);
  dp_optimizer_release(opt);
  dp_data_parallel_release(dpw);
  dp_module_release(model);
  dp_context_release(ctx);
  return rate;
}

void bench_train(const char* model, int max_devices, const Data& data) {
  const bool cnn = std::strcmp(model, "cnn") == 0;
  const int steps = cnn ? 30 : 300;
  const double plain = train_rate(data, model, 1, false, 256, steps);
  std::printf(
      "{\"bench\": \"train\", \"model\": \"%s\", \"config\": \"1 device, no wrapper\", "
      "\"samples_per_s\": %.1f, \"data\": \"%s\"}\n",
      model, plain, data.real ? "fashion-mnist" : "random");
  std::fflush(stdout);
  double one = 0;
  for (int d = 1; d <= max_devices; ++d) {
    const double rate = train_rate(data, model, d, true, 256, steps);
    if (d == 1) one = rate;
    std::printf(
        "{\"bench\": \"train\", \"model\": \"%s\", \"config\": \"DataParallel over %d CPU "
        "device%s\", \"samples_per_s\": %.1f, \"speedup_vs_1_device\": %.3f}\n",
        model, d, d > 1 ? "s" : "", rate, rate / one);
    std::fflush(stdout);
  }
  if (max_devices < 2) return;
  // CPU devices alias the parameters' broadcast and the input's chunks (alias_cpu, the
  // default) instead of copying them: both ways, alternating, median of three each.
  std::vector<double> aliasing, copying;
  for (int round = 0; round < 3; ++round) {
    aliasing.push_back(train_rate(data, model, max_devices, true, 256, steps, true));
    copying.push_back(train_rate(data, model, max_devices, true, 256, steps, false));
  }
  std::sort(aliasing.begin(), aliasing.end());
  std::sort(copying.begin(), copying.end());
  std::printf(
      "{\"bench\": \"train_alias\", \"model\": \"%s\", \"devices\": %d, "
      "\"aliasing_samples_per_s\": %.1f, \"copying_samples_per_s\": %.1f, "
      "\"aliasing_vs_copying\": %.3f}\n",
      model, max_devices, aliasing[1], copying[1], aliasing[1] / copying[1]);
  std::fflush(stdout);
}

// The wrapper's cost per step: a tiny model (Linear 8x8, batch 8), forward + backward on
// two CPU devices with DataParallel, minus the same on one device without the wrapper.
void bench_overhead() {
  dp_context* ctx = make_context(2);
  dp_module* m = nullptr;
  ok(dp_module_linear(ctx, 8, 8, 1, cpu(0), &m), "linear");
  dp_tensor* x = random_tensor(ctx, {8, 8}, cpu(0), 4);
  auto step = [&](dp_data_parallel* dpw) {
    dp_tensor *out = nullptr, *loss = nullptr;
    if (dpw) {
      size_t n = 0;
      ok(dp_data_parallel_forward(dpw, &x, nullptr, 1, &out, 1, &n), "forward");
    } else {
      ok(dp_module_forward1(m, x, &out), "forward");
    }
    ok(dp_op_sum(out, &loss), "sum");
    ok(dp_backward(loss, nullptr, 0), "backward");
    ok(dp_module_zero_grad(m), "zero_grad");
    dp_tensor_release(out);
    dp_tensor_release(loss);
  };
  const double plain = median_seconds([&] { step(nullptr); }, 200, 3000);
  const dp_device ids[2] = {cpu(0), cpu(1)};
  dp_data_parallel* dpw = nullptr;
  ok(dp_data_parallel_create(m, ids, 2, nullptr, 0, nullptr, &dpw), "wrapper");
  const double wrapped = median_seconds([&] { step(dpw); }, 200, 3000);
  std::printf(
      "{\"bench\": \"overhead\", \"model\": \"Linear 8x8, batch 8\", \"plain_us\": %.2f, "
      "\"data_parallel_2_devices_us\": %.2f, \"overhead_us\": %.2f}\n",
      plain * 1e6, wrapped * 1e6, (wrapped - plain) * 1e6);
  std::fflush(stdout);
  dp_data_parallel_release(dpw);
  dp_tensor_release(x);
  dp_module_release(m);
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

// GFLOP/s of 1024^3 dnnl_sgemm products for `seconds`, on `threads` threads at once (each
// its own product, one oneDNN thread each), summed over the threads. Training over N CPU
// devices cannot speed up by more than sum(N) / sum(1) where products dominate.
double concurrent_sgemm_gflops(int threads, double seconds) {
  const int n = 1024;
  std::vector<double> flops(static_cast<size_t>(threads), 0.0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      omp_set_num_threads(1);
      std::vector<float> A(n * n, 0.5f), B(n * n, 0.25f), C(n * n);
      auto product = [&] {
        dnnl_sgemm('N', 'N', n, n, n, 1.f, A.data(), n, B.data(), n, 0.f, C.data(), n);
      };
      product();  // warm-up
      const auto t0 = std::chrono::steady_clock::now();
      int64_t count = 0;
      double elapsed = 0;
      do {
        product();
        ++count;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      } while (elapsed < seconds);
      flops[static_cast<size_t>(t)] = 2.0 * n * n * n * static_cast<double>(count) / elapsed;
    });
  }
  for (auto& th : pool) th.join();
  double total = 0;
  for (double f : flops) total += f;
  return total / 1e9;
}

// The MLP's training samples/s if a step did nothing but its matrix products: N threads
// at once (one per device, one oneDNN thread each) run the products of one replica at
// batch 256 / N (forward x W^T per layer; backward dW = dY^T x per layer and dX = dY W for
// all but the first) with dnnl_sgemm. A step is the slowest thread's mean time for the
// whole sequence. Real steps add the loss, the optimizer, the gradient sum and the batch
// assembly, so dp-train's samples/s is this ceiling times its efficiency.
double mlp_gemm_seconds(int64_t b, int threads) {
  const int64_t sizes[] = {784, 512, 256, 10};
  struct Product {
    char ta, tb;
    int64_t m, n, k;
  };
  std::vector<Product> products;
  for (int l = 0; l < 3; ++l) {
    const int64_t in = sizes[l], out = sizes[l + 1];
    products.push_back({'N', 'T', b, out, in});             // y = x W^T
    products.push_back({'T', 'N', out, in, b});             // dW = dY^T x
    if (l > 0) products.push_back({'N', 'N', b, in, out});  // dX = dY W
  }
  const int warmup = 20, reps = 300;
  std::vector<double> seconds(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      omp_set_num_threads(1);
      std::vector<float> A(784 * 512), B(784 * 512), C(784 * 512);
      for (size_t i = 0; i < A.size(); ++i) A[i] = B[i] = static_cast<float>(i % 7) * 0.1f;
      auto step = [&] {
        for (const Product& p : products) {
          const int64_t lda = p.ta == 'N' ? p.k : p.m, ldb = p.tb == 'N' ? p.n : p.k;
          dnnl_sgemm(p.ta, p.tb, p.m, p.n, p.k, 1.f, A.data(), lda, B.data(), ldb, 0.f, C.data(),
                     p.n);
        }
      };
      for (int i = 0; i < warmup; ++i) step();
      const double t0 = now();
      for (int i = 0; i < reps; ++i) step();
      seconds[static_cast<size_t>(t)] = (now() - t0) / reps;
    });
  }
  for (auto& th : pool) th.join();
  return *std::max_element(seconds.begin(), seconds.end());
}

void bench_ceiling(int max_devices) {
  const int64_t batch = 256;
  double one = 0;
  for (int d = 1; d <= max_devices; ++d) {
    const int64_t b = batch / d;
    const double step = mlp_gemm_seconds(b, d);
    const double rate = static_cast<double>(b * d) / step;
    if (d == 1) one = rate;
    std::printf(
        "{\"bench\": \"ceiling\", \"model\": \"mlp\", \"devices\": %d, \"batch\": %lld, "
        "\"gemm_ms_per_step\": %.3f, \"ceiling_samples_per_s\": %.0f, \"vs_1_device\": %.3f}\n",
        d, (long long)(b * d), step * 1e3, rate, rate / one);
    std::fflush(stdout);
  }
}

void bench_cores(int max_threads) {
  const double one = concurrent_sgemm_gflops(1, 3.0);
  for (int t = 1; t <= max_threads; ++t) {
    const double g = t == 1 ? one : concurrent_sgemm_gflops(t, 3.0);
    std::printf(
        "{\"bench\": \"cores\", \"threads\": %d, \"sgemm_gflops_total\": %.1f, "
        "\"vs_one_thread\": %.2f}\n",
        t, g, g / one);
    std::fflush(stdout);
  }
}

void usage() {
  std::fprintf(stderr,
               "usage: dp-bench [sgemm|linear|copy|train|overhead|scatter|cores|ceiling|all] "
               "[--model mlp|cnn] [--devices N] [--limit N]\n");
}

}  // namespace

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "all";
  const char* model = nullptr;
  int devices = 2;
  size_t limit = 0;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--model") && i + 1 < argc) {
      model = argv[++i];
    } else if (!std::strcmp(argv[i], "--devices") && i + 1 < argc) {
      devices = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--limit") && i + 1 < argc) {
      limit = static_cast<size_t>(std::atoll(argv[++i]));
    } else {
      usage();
      return 2;
    }
  }
  if (devices < 1) {
    usage();
    return 2;
  }
  const bool all = !std::strcmp(what, "all");
  bool any = false;
  if (all || !std::strcmp(what, "sgemm")) any = true, bench_sgemm();
  if (all || !std::strcmp(what, "linear")) any = true, bench_linear();
  if (all || !std::strcmp(what, "copy")) any = true, bench_copy();
  if (all || !std::strcmp(what, "overhead")) any = true, bench_overhead();
  if (all || !std::strcmp(what, "scatter")) any = true, bench_scatter();
  if (all || !std::strcmp(what, "cores")) any = true, bench_cores(devices);
  if (all || !std::strcmp(what, "ceiling")) any = true, bench_ceiling(devices);
  if (all || !std::strcmp(what, "train")) {
    any = true;
    const Data data = load_data(limit);
    if (!model || !std::strcmp(model, "mlp")) bench_train("mlp", devices, data);
    if (!model || !std::strcmp(model, "cnn")) bench_train("cnn", devices, data);
  }
  if (!any) {
    usage();
    return 2;
  }
  return 0;
}
