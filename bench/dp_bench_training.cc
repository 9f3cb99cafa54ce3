// dp-bench's training benches: training samples/s over 1..N CPU devices (train), the
// DataParallel wrapper's cost per step (overhead), and the ceilings a speed-up meets: the
// machine's, N threads of dnnl_sgemm at once (cores), and the MLP's, its step's matrix
// products alone (ceiling, in float32 and, where oneDNN has them, bfloat16 primitives).
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
#include <unordered_map>
#include <vector>

extern "C" {
#include "models.h"
}

#include "dp_bench.h"
#include "dp_bench_common.h"

namespace dp_bench {

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace dp_bench
