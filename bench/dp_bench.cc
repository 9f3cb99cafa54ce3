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
// The benches live by concern: dp_bench_kernels.cc (sgemm, linear, copy, scatter),
// dp_bench_training.cc (train, overhead, cores, ceiling), dp_bench_bf16.cc (bf16-matmul,
// bf16-conv, bf16-device, call-cost), declared in dp_bench.h; dp_bench_common.h holds the
// helpers they share. This file is the command line: the usage, the dispatch, and the
// hand-over to the MPI programs.
//
// Uses only the public C API (plus oneDNN directly, as the sgemm reference).
#include <dataparallel/dataparallel.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "dp_bench.h"
#include "dp_bench_common.h"

using namespace dp_bench;

namespace {

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
