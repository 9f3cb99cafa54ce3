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
//                       (one thread, at each replica's batch) for 1..N devices, float32
//                       (dnnl_sgemm) and bfloat16 (oneDNN's bf16 matmul, where it has one)
//   dp-bench bf16-matmul  the MLP's products in bfloat16 (bf16 tensors, and float32 ones
//                       under dp_set_autocast) vs oneDNN's bf16 matmul primitive, or where
//                       the CPU has none, its float32 one plus the bf16<->f32 conversions
//   dp-bench bf16-conv  the CNN's two convolutions (batch 256) the same way
//   dp-bench bf16       both, after dp_device_bf16_native for cpu:0 and oneDNN's ISA
//   dp-bench bf16-device  that query alone
//   dp-bench call-cost  a 1x1x1 float32 dp_op_matmul + dp_device_synchronize +
//                       dp_tensor_release, --calls N times on one CPU device, beside
//                       oneDNN's execute of the same product: the fixed cost of an op
//                       (--side dp|onednn for one of them; bench/instructions_per_call.sh
//                       counts a side's instructions per call under callgrind)
//   dp-bench all        everything above but bf16-device and call-cost
//   dp-bench allreduce, dp-bench ddp
//                       the benchmarks across processes, programs of their own that link
//                       MPI (dp-bench-allreduce, dp-bench-ddp beside this one): dp-bench
//                       runs them in its place with the remaining arguments, so
//                       `mpirun -np 2 dp-bench allreduce` is `mpirun -np 2 dp-bench-allreduce`
//
// Uses only the public C API (plus oneDNN directly, as the sgemm reference).
#include <dataparallel/dataparallel.h>
#include <dnnl.h>

#include <dnnl.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <unistd.h>

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

// Appends the seconds of each of n calls of f to *t.
void time_calls(const std::function<void()>& f, int n, std::vector<double>* t) {
  for (int i = 0; i < n; ++i) {
    const double t0 = now();
    f();
    t->push_back(now() - t0);
  }
}

double median_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Seconds of one call of f after a warm-up call (at least 0.1 us): sizes a measurement.
double one_call_seconds(const std::function<void()>& f) {
  f();
  const double t0 = now();
  f();
  return std::max(now() - t0, 1e-7);
}

// Median seconds per call of f over `reps` calls after `warmup` calls.
double median_seconds(const std::function<void()>& f, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) f();
  std::vector<double> t;
  time_calls(f, reps, &t);
  return median_of(std::move(t));
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
// all but the first): in float32 with dnnl_sgemm; in bfloat16 with oneDNN's bf16 matmul
// primitives (bf16 in and out, float32 sums: what autocast runs). A step is the slowest
// thread's mean time for the whole sequence. Real steps add the loss, the optimizer, the
// gradient sum and the batch assembly (and in bfloat16 the casts), so dp-train's samples/s
// is this ceiling times its efficiency.
double mlp_gemm_seconds(int64_t b, int threads, bool bf16) {
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
      std::function<void()> step = [&] {
        for (const Product& p : products) {
          const int64_t lda = p.ta == 'N' ? p.k : p.m, ldb = p.tb == 'N' ? p.n : p.k;
          dnnl_sgemm(p.ta, p.tb, p.m, p.n, p.k, 1.f, A.data(), lda, B.data(), ldb, 0.f, C.data(),
                     p.n);
        }
      };
      // bfloat16: one matmul primitive per product, the transposes as strides.
      using dnnl::memory;
      dnnl::engine eng(dnnl::engine::kind::cpu, 0);
      dnnl::stream strm(eng);
      std::vector<uint16_t> A16(A.size(), 0x3dcd), B16(B.size(), 0x3dcd), C16(C.size());
      std::vector<dnnl::matmul> mms;
      std::vector<std::unordered_map<int, memory>> args;
      if (bf16) {
        for (const Product& p : products) {
          auto md = [](int64_t rows, int64_t cols, bool trans) {
            return trans ? memory::desc({rows, cols}, memory::data_type::bf16, {1, rows})
                         : memory::desc({rows, cols}, memory::data_type::bf16, {cols, 1});
          };
          const memory::desc a = md(p.m, p.k, p.ta == 'T'), w = md(p.k, p.n, p.tb == 'T'),
                             c = md(p.m, p.n, false);
          mms.emplace_back(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, w, c), eng));
          args.push_back({{DNNL_ARG_SRC, memory(a, eng, A16.data())},
                          {DNNL_ARG_WEIGHTS, memory(w, eng, B16.data())},
                          {DNNL_ARG_DST, memory(c, eng, C16.data())}});
        }
        step = [&] {
          for (size_t i = 0; i < mms.size(); ++i) mms[i].execute(strm, args[i]);
          strm.wait();
        };
      }
      for (int i = 0; i < warmup; ++i) step();
      const double t0 = now();
      for (int i = 0; i < reps; ++i) step();
      seconds[static_cast<size_t>(t)] = (now() - t0) / reps;
    });
  }
  for (auto& th : pool) th.join();
  return *std::max_element(seconds.begin(), seconds.end());
}

bool dnnl_bf16_available(std::string* why);

// Float32, then bfloat16 where oneDNN has bf16 primitives on this CPU.
void bench_ceiling(int max_devices) {
  const int64_t batch = 256;
  std::string why;
  for (const bool bf16 : {false, true}) {
    if (bf16 && !dnnl_bf16_available(&why)) break;
    double one = 0;
    for (int d = 1; d <= max_devices; ++d) {
      const int64_t b = batch / d;
      const double step = mlp_gemm_seconds(b, d, bf16);
      const double rate = static_cast<double>(b * d) / step;
      if (d == 1) one = rate;
      std::printf(
          "{\"bench\": \"ceiling\", \"model\": \"mlp\", \"precision\": \"%s\", \"devices\": %d, "
          "\"batch\": %lld, \"gemm_ms_per_step\": %.3f, \"ceiling_samples_per_s\": %.0f, "
          "\"vs_1_device\": %.3f}\n",
          bf16 ? "bf16" : "fp32", d, (long long)(b * d), step * 1e3, rate, rate / one);
      std::fflush(stdout);
    }
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

// ---------------------------------------------------------------------------------------
// bfloat16 products and convolutions. Our side: dp_op_matmul / dp_op_conv2d on bfloat16
// tensors (the op a bf16 tensor reaches), the same float32 tensors under
// dp_set_autocast(DP_BFLOAT16) (the casts of the inputs included), and float32. oneDNN's
// side, one thread: its own bf16 primitive (bf16 memory descriptors, f32 accumulation)
// where the CPU can create one; its float32 primitive with the bf16 -> f32 conversions of
// the inputs and the f32 -> bf16 rounding of the output (oneDNN reorders: the floor of a
// bf16 op that computes in float32); and its float32 primitive alone.

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

void usage() {
  std::fprintf(stderr,
               "usage: dp-bench "
               "[sgemm|linear|copy|train|overhead|scatter|cores|ceiling|bf16|bf16-matmul|bf16-conv|"
               "bf16-device|call-cost|all] "
               "[--model mlp|cnn] [--devices N] [--limit N] [--calls N] [--side dp|onednn|both]\n"
               "       mpirun -np 2 dp-bench allreduce|ddp [their arguments]\n");
}

// Replaces this process with `program` from dp-bench's own directory, passing argv[2..].
// Returns only when that fails (2, after saying why).
int run_beside(const char* program, char** argv) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    std::fprintf(stderr, "dp-bench: cannot find its own directory (/proc/self/exe): %s\n",
                 std::strerror(errno));
    return 2;
  }
  self[n] = '\0';
  std::string path(self);
  path = path.substr(0, path.rfind('/') + 1) + program;
  argv[1] = const_cast<char*>(path.c_str());
  execv(path.c_str(), argv + 1);
  std::fprintf(stderr,
               "dp-bench: cannot run %s: %s (it is built with the MPI plugin, when CMake finds "
               "MPI)\n",
               path.c_str(), std::strerror(errno));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "all";
  if (!std::strcmp(what, "allreduce")) return run_beside("dp-bench-allreduce", argv);
  if (!std::strcmp(what, "ddp")) return run_beside("dp-bench-ddp", argv);
  const char* model = nullptr;
  int devices = 2;
  size_t limit = 0;
  long calls = 1000000;
  const char* side = "both";
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--model") && i + 1 < argc) {
      model = argv[++i];
    } else if (!std::strcmp(argv[i], "--devices") && i + 1 < argc) {
      devices = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--limit") && i + 1 < argc) {
      limit = static_cast<size_t>(std::atoll(argv[++i]));
    } else if (!std::strcmp(argv[i], "--calls") && i + 1 < argc) {
      calls = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--side") && i + 1 < argc) {
      side = argv[++i];
    } else {
      usage();
      return 2;
    }
  }
  if (devices < 1 || calls < 0 ||
      (std::strcmp(side, "dp") && std::strcmp(side, "onednn") && std::strcmp(side, "both"))) {
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
  if (!std::strcmp(what, "bf16-device")) {
    any = true;
    dp_context* ctx = make_context(1);
    print_bf16_header(ctx);
    dp_context_release(ctx);
  }
  if (!std::strcmp(what, "call-cost")) any = true, bench_call_cost(calls, side);
  const bool bf16 = all || !std::strcmp(what, "bf16");
  if (bf16 || !std::strcmp(what, "bf16-matmul")) any = true, bench_bf16_matmul();
  if (bf16 || !std::strcmp(what, "bf16-conv")) any = true, bench_bf16_conv();
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
