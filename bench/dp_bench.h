// The benches that dp-bench's main (dp_bench.cc) runs, by the file that holds them. Each
// prints its figures on stdout, one JSON object per line.
#pragma once

#include <dataparallel/dataparallel.h>

#include <cstddef>
#include <string>

extern "C" {
#include "fashion_mnist.h"
}

namespace dp_bench {

// dp_bench_kernels.cc: one float32 op or copy on CPU devices beside its reference.
void bench_sgemm();    // dp-bench sgemm
void bench_linear();   // dp-bench linear
void bench_copy();     // dp-bench copy
void bench_scatter();  // dp-bench scatter

// dp_bench_training.cc: training over CPU devices, and what bounds its speed-up.

// The training images: Fashion-MNIST's (`real`), or random ones where it cannot be read.
struct Data {
  fashion_mnist fm{};
  bool real = false;
};

// At most `limit` training images (0: all), Fashion-MNIST's or random.
Data load_data(size_t limit);
void bench_train(const char* model, int max_devices, const Data& data);  // dp-bench train
void bench_overhead();                                                   // dp-bench overhead
void bench_cores(int max_threads);                                       // dp-bench cores
void bench_ceiling(int max_devices);                                     // dp-bench ceiling

// dp_bench_bf16.cc: bfloat16 beside oneDNN's own bf16 primitives, and the fixed cost of a
// call that bounds the small products.

// Whether this CPU's oneDNN creates a bf16 matmul primitive; `why` gets its error if not.
bool dnnl_bf16_available(std::string* why);
void print_bf16_header(dp_context* ctx);             // dp-bench bf16-device (once a process)
void bench_bf16_matmul();                            // dp-bench bf16-matmul
void bench_bf16_conv();                              // dp-bench bf16-conv
void bench_call_cost(long calls, const char* side);  // dp-bench call-cost

}  // namespace dp_bench
