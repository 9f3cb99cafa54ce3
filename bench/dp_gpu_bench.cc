// dp_gpu_bench: the library on a GPU, through its C API, measured the way
// bench/torch_gpu_reference.py measures PyTorch, so that scripts/gpu-check.sh can print
// both side by side (bench/dp_gpu_bench_table.py).
//
//   train   MLP and CNN of bench/torch_reference.py, SGD (lr 0.1, momentum 0.9),
//           cross entropy, batches copied from host memory every step; one GPU, and
//           DataParallel over two logical devices on GPU 0 (DP_CUDA_DEVICES=0,0)
//   sgemm   8192^3 float32 product, TF32 off
//   copy    a 1 GiB host tensor scattered over the two logical devices and gathered
//           back, beside cudaMemcpy of 1 GiB each way from the same kind of host memory
//
// One JSON object per line on stdout; progress and errors on stderr. A benchmark that
// fails prints an "error" line and the others still run.
//   dp_gpu_bench [--seconds S] [--only train|sgemm|copy] [--model mlp|cnn] [--batch N]
//                [--devices 1|2]
// DP_CUDA_CONV (im2col, cudnn, cudnn-benchmark) picks the convolution engine; each train
// line names the one in use.
#include <cuda_runtime_api.h>
#include <dataparallel/dataparallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void check(dp_result r, const char* what) {
  if (r != DP_OK) {
    throw std::runtime_error(std::string(what) + ": " + dp_result_string(r) + ": " +
                             dp_last_error());
  }
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// Owns one reference of a C API handle.
struct Tensor {
  dp_tensor* t = nullptr;
  Tensor() = default;
  explicit Tensor(dp_tensor* p) : t(p) {}
  Tensor(Tensor&& o) noexcept : t(o.t) { o.t = nullptr; }
  Tensor& operator=(Tensor&& o) noexcept {
    std::swap(t, o.t);
    return *this;
  }
  ~Tensor() { dp_tensor_release(t); }
};

const dp_device kCuda0{DP_DEVICE_CUDA, 0};
const dp_device kCuda1{DP_DEVICE_CUDA, 1};
const dp_device kCpu0{DP_DEVICE_CPU, 0};

void synchronize(dp_context* ctx) {
  int32_t n = 0;
  check(dp_device_count(ctx, DP_DEVICE_CUDA, &n), "dp_device_count");
  for (int32_t i = 0; i < n; ++i) {
    check(dp_device_synchronize(ctx, dp_device{DP_DEVICE_CUDA, i}), "dp_device_synchronize");
  }
}

// `layer` by reference: it is read after the constructor call in the argument list has
// set it (argument evaluation order is unspecified).
void append(dp_module* seq, dp_result r, dp_module*& layer) {
  check(r, "creating a layer");
  check(dp_module_append(seq, layer), "dp_module_append");
  dp_module_release(layer);
}

// The models of bench/torch_reference.py.
dp_module* build(dp_context* ctx, const std::string& model, dp_device d) {
  dp_module* s = nullptr;
  check(dp_module_sequential(ctx, &s), "dp_module_sequential");
  dp_module* l = nullptr;
  if (model == "mlp") {
    append(s, dp_module_linear(ctx, 784, 512, 1, d, &l), l);
    append(s, dp_module_relu(ctx, &l), l);
    append(s, dp_module_linear(ctx, 512, 256, 1, d, &l), l);
    append(s, dp_module_relu(ctx, &l), l);
    append(s, dp_module_linear(ctx, 256, 10, 1, d, &l), l);
  } else {
    append(s, dp_module_conv2d(ctx, 1, 32, 3, 3, 1, 1, 1, 1, 1, d, &l), l);
    append(s, dp_module_relu(ctx, &l), l);
    append(s, dp_module_maxpool2d(ctx, 2, 2, 2, 2, 0, 0, &l), l);
    append(s, dp_module_conv2d(ctx, 32, 64, 3, 3, 1, 1, 1, 1, 1, d, &l), l);
    append(s, dp_module_relu(ctx, &l), l);
    append(s, dp_module_maxpool2d(ctx, 2, 2, 2, 2, 0, 0, &l), l);
    append(s, dp_module_flatten(ctx, 1, -1, &l), l);
    append(s, dp_module_linear(ctx, 3136, 128, 1, d, &l), l);
    append(s, dp_module_relu(ctx, &l), l);
    append(s, dp_module_linear(ctx, 128, 10, 1, d, &l), l);
  }
  return s;
}

struct Batch {
  Tensor x, y;  // host tensors (cpu:0), as a data loader hands them over
};

std::vector<Batch> host_batches(dp_context* ctx, const std::string& model, int64_t batch,
                                int count) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<Batch> out;
  for (int k = 0; k < count; ++k) {
    std::vector<float> x(static_cast<size_t>(batch * 784));
    for (float& v : x) v = u(rng);
    std::vector<int64_t> y(static_cast<size_t>(batch));
    for (int64_t& v : y) v = static_cast<int64_t>(rng() % 10);
    const int64_t mlp_shape[2] = {batch, 784}, cnn_shape[4] = {batch, 1, 28, 28};
    const bool cnn = model == "cnn";
    Batch b;
    check(dp_tensor_from_data(ctx, DP_FLOAT32, cnn ? cnn_shape : mlp_shape, cnn ? 4 : 2, x.data(),
                              x.size() * sizeof(float), kCpu0, &b.x.t),
          "dp_tensor_from_data");
    check(dp_tensor_from_data(ctx, DP_INT64, &batch, 1, y.data(), y.size() * sizeof(int64_t), kCpu0,
                              &b.y.t),
          "dp_tensor_from_data");
    out.push_back(std::move(b));
  }
  return out;
}

// Samples per second of SGD training, on cuda:0 alone (devices 1) or through
// DataParallel over cuda:0 and cuda:1.
double train(dp_context* ctx, const std::string& model, int64_t batch, int devices,
             double seconds) {
  dp_module* net = build(ctx, model, kCuda0);
  dp_data_parallel* wrapper = nullptr;
  if (devices > 1) {
    const dp_device ids[2] = {kCuda0, kCuda1};
    check(dp_data_parallel_create(net, ids, 2, nullptr, 0, nullptr, &wrapper),
          "dp_data_parallel_create");
  }
  dp_sgd_options so = DP_SGD_OPTIONS_INIT;
  so.lr = 0.1;
  so.momentum = 0.9;
  dp_optimizer* opt = nullptr;
  check(dp_optimizer_sgd(net, &so, &opt), "dp_optimizer_sgd");
  const auto batches = host_batches(ctx, model, batch, batch >= 4096 ? 4 : 16);
  size_t next = 0;
  auto step = [&] {
    const Batch& b = batches[next++ % batches.size()];
    check(dp_optimizer_zero_grad(opt), "dp_optimizer_zero_grad");
    Tensor out, y, loss;
    size_t n = 0;
    if (wrapper) {
      check(dp_data_parallel_forward(wrapper, &b.x.t, nullptr, 1, &out.t, 1, &n),
            "dp_data_parallel_forward");
    } else {
      Tensor x;
      check(dp_tensor_to_device(b.x.t, kCuda0, &x.t), "dp_tensor_to_device");
      check(dp_module_forward(net, &x.t, 1, &out.t, 1, &n), "dp_module_forward");
    }
    check(dp_tensor_to_device(b.y.t, kCuda0, &y.t), "dp_tensor_to_device");
    check(dp_op_cross_entropy(out.t, y.t, &loss.t), "dp_op_cross_entropy");
    check(dp_backward(loss.t, nullptr, 0), "dp_backward");
    check(dp_optimizer_step(opt), "dp_optimizer_step");
  };
  for (int i = 0; i < 3; ++i) step();  // plans, pools and kernels warm up
  synchronize(ctx);
  // Calibrate the step count on a few steps, then time a run of about `seconds`.
  auto t0 = Clock::now();
  for (int i = 0; i < 3; ++i) step();
  synchronize(ctx);
  const double per_step = seconds_since(t0) / 3;
  const int steps = static_cast<int>(std::min(2000.0, std::max(5.0, seconds / per_step)));
  t0 = Clock::now();
  for (int i = 0; i < steps; ++i) step();
  synchronize(ctx);
  const double elapsed = seconds_since(t0);
  dp_optimizer_release(opt);
  dp_data_parallel_release(wrapper);
  dp_module_release(net);
  return static_cast<double>(steps) * static_cast<double>(batch) / elapsed;
}

Tensor random_on(dp_context* ctx, const int64_t* shape, size_t ndim, dp_device d) {
  size_t n = 1;
  for (size_t i = 0; i < ndim; ++i) n *= static_cast<size_t>(shape[i]);
  std::vector<float> v(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (float& x : v) x = u(rng);
  Tensor t;
  check(dp_tensor_from_data(ctx, DP_FLOAT32, shape, ndim, v.data(), n * sizeof(float), d, &t.t),
        "dp_tensor_from_data");
  return t;
}

// TFLOP/s of an n^3 float32 product on cuda:0.
double sgemm(dp_context* ctx, int64_t n, int iters) {
  const int64_t shape[2] = {n, n};
  Tensor a = random_on(ctx, shape, 2, kCuda0), b = random_on(ctx, shape, 2, kCuda0);
  for (int i = 0; i < 2; ++i) {
    Tensor c;
    check(dp_op_matmul(a.t, b.t, &c.t), "dp_op_matmul");
  }
  synchronize(ctx);
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    Tensor c;
    check(dp_op_matmul(a.t, b.t, &c.t), "dp_op_matmul");
  }
  synchronize(ctx);
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) * iters /
         seconds_since(t0) / 1e12;
}

void print_result(const std::string& fields) {
  std::printf("{%s}\n", fields.c_str());
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// GB/s of a 1 GiB host tensor scattered over cuda:0 and cuda:1, and gathered back,
// beside cudaMemcpy of 1 GiB each way (pageable memory, as the host tensor is, and
// page-locked for reference).
void copies(dp_context* ctx, int reps) {
  const size_t bytes = size_t{1} << 30;
  const int64_t shape[2] = {int64_t{1} << 18, 1024};
  Tensor host;
  check(dp_tensor_zeros(ctx, DP_FLOAT32, shape, 2, kCpu0, &host.t), "dp_tensor_zeros");
  const dp_device devs[2] = {kCuda0, kCuda1};
  auto scatter_once = [&](double* secs, double* gather_secs) {
    dp_tensor* chunks[2] = {nullptr, nullptr};
    size_t n = 0;
    synchronize(ctx);
    auto t0 = Clock::now();
    check(dp_scatter(host.t, devs, 2, nullptr, 0, chunks, &n), "dp_scatter");
    synchronize(ctx);
    *secs = seconds_since(t0);
    Tensor back;
    t0 = Clock::now();
    check(dp_gather(chunks, n, kCpu0, 0, &back.t), "dp_gather");
    *gather_secs = seconds_since(t0);  // a copy to the host returns once it is done
    for (size_t i = 0; i < n; ++i) dp_tensor_release(chunks[i]);
  };
  double s = 0, g = 0, best_s = 1e30, best_g = 1e30;
  scatter_once(&s, &g);  // first touch of every page, pools filled
  for (int i = 0; i < reps; ++i) {
    scatter_once(&s, &g);
    best_s = std::min(best_s, s);
    best_g = std::min(best_g, g);
  }
  const double gb = static_cast<double>(bytes) / 1e9;
  print_result("\"impl\": \"dp\", \"bench\": \"scatter\", \"bytes\": " + std::to_string(bytes) +
               ", \"gbps\": " + num(gb / best_s));
  print_result("\"impl\": \"dp\", \"bench\": \"gather\", \"bytes\": " + std::to_string(bytes) +
               ", \"gbps\": " + num(gb / best_g));

  // The baseline: cudaMemcpy on the same GPU from the same kind of memory.
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  void* dev = nullptr;
  check_cuda(cudaMalloc(&dev, bytes), "cudaMalloc");
  for (const bool pinned : {false, true}) {
    void* h = nullptr;
    if (pinned) {
      check_cuda(cudaMallocHost(&h, bytes), "cudaMallocHost");
    } else {
      h = std::malloc(bytes);
      if (!h) throw std::runtime_error("malloc of 1 GiB failed");
    }
    std::memset(h, 0, bytes);
    double best_h2d = 1e30, best_d2h = 1e30;
    for (int i = 0; i < reps + 1; ++i) {
      auto t0 = Clock::now();
      check_cuda(cudaMemcpy(dev, h, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
      if (i > 0) best_h2d = std::min(best_h2d, seconds_since(t0));
      t0 = Clock::now();
      check_cuda(cudaMemcpy(h, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
      if (i > 0) best_d2h = std::min(best_d2h, seconds_since(t0));
    }
    const std::string kind = pinned ? "pinned" : "pageable";
    print_result("\"impl\": \"cudaMemcpy\", \"bench\": \"h2d_" + kind +
                 "\", \"bytes\": " + std::to_string(bytes) + ", \"gbps\": " + num(gb / best_h2d));
    print_result("\"impl\": \"cudaMemcpy\", \"bench\": \"d2h_" + kind +
                 "\", \"bytes\": " + std::to_string(bytes) + ", \"gbps\": " + num(gb / best_d2h));
    if (pinned) {
      cudaFreeHost(h);
    } else {
      std::free(h);
    }
  }
  cudaFree(dev);
}

template <class F>
void guarded(const std::string& name, F&& f) {
  std::fprintf(stderr, "dp_gpu_bench: %s\n", name.c_str());
  try {
    f();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dp_gpu_bench: %s failed: %s\n", name.c_str(), e.what());
    std::string msg = e.what();
    for (char& c : msg) {
      if (c == '"' || c == '\\' || c == '\n') c = ' ';
    }
    print_result("\"impl\": \"dp\", \"bench\": \"" + name + "\", \"error\": \"" + msg + "\"");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.5;
  std::string only, only_model;
  int64_t only_batch = 0;
  int only_devices = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
      only_model = argv[++i];
    } else if (std::strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      only_batch = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      only_devices = std::atoi(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: %s [--seconds S] [--only train|sgemm|copy] [--model mlp|cnn] [--batch N] "
          "[--devices 1|2]\n",
          argv[0]);
      return 2;
    }
  }
  // Two logical devices on GPU 0: the one-GPU runs use cuda:0, DataParallel both.
  setenv("DP_CUDA_DEVICES", "0,0", 1);
  dp_context_options o = DP_CONTEXT_OPTIONS_INIT;
  o.cpu_devices = 2;
  o.allow_tf32 = 0;
  o.log_level = DP_LOG_INFO;  // the CUDA backend's start-up line, or why there is none
  o.log_fn = [](void*, dp_log_level, const char* message) {
    std::fprintf(stderr, "dp_gpu_bench: [library] %s\n", message);
  };
  dp_context* ctx = nullptr;
  if (dp_context_create(&o, &ctx) != DP_OK) {
    std::fprintf(stderr, "dp_gpu_bench: %s\n", dp_last_error());
    return 1;
  }
  int32_t cuda = 0;
  dp_device_count(ctx, DP_DEVICE_CUDA, &cuda);
  if (cuda < 2) {
    std::fprintf(stderr, "dp_gpu_bench: needs a GPU (the context has %d CUDA devices)\n", cuda);
    dp_context_release(ctx);
    return 1;
  }
  if (only.empty() || only == "train") {
    const char* conv = std::getenv("DP_CUDA_CONV");
    for (const char* model : {"mlp", "cnn"}) {
      if (!only_model.empty() && only_model != model) continue;
      for (int64_t batch : {int64_t{256}, int64_t{4096}}) {
        if (only_batch != 0 && only_batch != batch) continue;
        for (int devices : {1, 2}) {
          if (only_devices != 0 && only_devices != devices) continue;
          const std::string name = std::string("train ") + model + " batch " +
                                   std::to_string(batch) + " devices " + std::to_string(devices);
          guarded(name, [&] {
            const double sps = train(ctx, model, batch, devices, seconds);
            print_result("\"impl\": \"dp\", \"bench\": \"train\", \"model\": \"" +
                         std::string(model) + "\", \"batch\": " + std::to_string(batch) +
                         ", \"devices\": " + std::to_string(devices) + ", \"conv\": \"" +
                         (conv && *conv ? conv : "default") + "\", \"samples_per_s\": " + num(sps));
          });
        }
      }
    }
  }
  if (only.empty() || only == "sgemm") {
    guarded("sgemm", [&] {
      print_result("\"impl\": \"dp\", \"bench\": \"sgemm\", \"n\": 8192, \"tflops\": " +
                   num(sgemm(ctx, 8192, 10)));
    });
  }
  if (only.empty() || only == "copy") guarded("copy", [&] { copies(ctx, 3); });
  dp_context_release(ctx);
  return 0;
}
