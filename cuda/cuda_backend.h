// The CUDA backend: dp::Backend for logical CUDA devices, each on a physical GPU (several
// logical devices may share one, see device_map.h).
//
// Per logical device: a compute stream (every kernel and every product), a copy stream
// (host<->device and device<->device copies, ordered against the compute streams with
// events; large copies from and to pageable memory run on staging lanes, each a stream
// of its own), a memory pool for cudaMallocFromPoolAsync, and, created on the device's worker
// thread, a cuBLASLt handle with its workspace. Everything is asynchronous: a kernel call
// returns once its work is queued; copies to the host, synchronize() and the collectives
// are the points where the host waits.
//
// Memory is allocated and freed in the order of the owning device's compute stream. Any
// use of a device's memory on another stream (its copy stream, another device's streams)
// is followed by an event that the owning compute stream waits on, so a free queued later
// on that stream cannot overtake the use.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "cuda_blas.h"
#if DP_HAVE_CUDNN
#include "cuda_cudnn.h"
#endif
#include "device/backend.h"
#include "kernels/kernels.h"

namespace dp::cuda_plugin {

class NcclComms;

// Where convolutions run (DP_CUDA_CONV): cuDNN when the plugin was built with it (float32,
// and bfloat16 on GPUs with bfloat16 tensor cores), else im2col + cuBLASLt GEMMs in float32
// (cuda_conv.cc).
enum class ConvEngine {
  kIm2col,          // "im2col"
  kCudnn,           // "cudnn": cuDNN's heuristic choice of algorithm (the default)
  kCudnnBenchmark,  // "cudnn-benchmark": the fastest of cuDNN's algorithms, timed per shape
};

struct CudaDevice {
  int gpu = 0;        // physical ordinal
  std::string where;  // "cuda:1 (GPU 0)", for messages
  std::string name;   // "NVIDIA H200"
  uint64_t total_memory = 0;
  int multiprocessors = 0;
  int compute_major = 0, compute_minor = 0;  // compute capability (9.0 for an H200)
  cudaStream_t compute = nullptr;
  cudaStream_t copy = nullptr;
  cudaMemPool_t pool = nullptr;
  int* error_claim = nullptr;             // device memory (see DataError)
  DataError* error_record = nullptr;      // mapped page-locked host memory
  DataError* error_record_dev = nullptr;  // its address on the device

  // Page-locked staging for large copies between pageable host memory and this device
  // (cuda_copy.cc). A copy's pieces are shared among lanes, each run by a thread of its
  // own with two slots and a stream: the thread fills or empties one slot while the DMA
  // engine works on the other.
  struct StagingLane {
    cudaStream_t stream = nullptr;
    void* slot[2] = {nullptr, nullptr};
    cudaEvent_t done[2] = {nullptr, nullptr};  // recorded after the last DMA of each slot
  };
  struct Staging {
    std::mutex mu;  // one staged copy at a time; it may come from either end's worker
    std::vector<StagingLane> lanes;  // made on first use, as many as a copy has needed
    size_t limit = SIZE_MAX;         // lanes.size() once page-locked memory ran short
  } staging;

  // Worker-thread state: only the device's worker touches it.
  std::unique_ptr<Blas> blas;
#if DP_HAVE_CUDNN
  std::unique_ptr<Cudnn> cudnn;  // made by the first convolution that runs on cuDNN
  std::string cudnn_error;       // why cuDNN could not start ("" when it did or was not tried)
#endif
  std::string worker_error;  // why worker_started failed ("" when it did not)
  DataErrorSink error_sink() const {
    return {error_claim, error_record_dev};
  }
};

// Waits for a staging lane's DMAs, then frees its slots, events and stream (any that
// exist) and empties it (cuda_copy.cc).
void free_staging_lane(CudaDevice::StagingLane& lane) noexcept;

// CUDA events of one GPU, reused: an event may be recorded again as soon as the waits on
// its previous record are queued.
class EventPool {
 public:
  EventPool(const BackendHost& host, int gpu) : host_(host), gpu_(gpu) {}
  ~EventPool();
  cudaEvent_t acquire(const std::string& where);
  void release(cudaEvent_t e);

 private:
  const BackendHost& host_;
  int gpu_;
  std::mutex mu_;
  std::vector<cudaEvent_t> free_;
};

class CudaBackend final : public Backend {
 public:
  // gpus[i]: the physical GPU of logical device i. Raises (through host) when a GPU
  // cannot be set up.
  CudaBackend(const BackendHost& host, const std::vector<int>& gpus, bool allow_tf32);
  ~CudaBackend() override;

  DeviceType type() const override { return DeviceType::kCuda; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  std::string device_name(int dev) const override;
  void memory_info(int dev, uint64_t* free_bytes, uint64_t* total_bytes) const override;
  int physical_index(int dev) const override { return devices_[dev]->gpu; }
  void worker_started(int dev) override;
  void worker_stopping(int dev) override;
  void synchronize(int dev) override;
  void synchronize_hardware(int dev) override;

  void* allocate(int dev, size_t nbytes) override;
  void deallocate(int dev, void* ptr, size_t nbytes) noexcept override;
  void copy_2d(Device exec, Device dst_dev, void* dst, size_t dst_pitch, Device src_dev,
               const void* src, size_t src_pitch, size_t row_bytes, size_t rows) override;

  void fill(int dev, const KView& out, double value) override;
  void cast(int dev, const KView& x, const KView& out) override;
  void binary(int dev, BinaryOp op, const KView& a, const KView& b, const KView& out) override;
  void affine(int dev, const KView& x, const KView& out, double alpha, double beta) override;
  void unary(int dev, UnaryOp op, const KView& x, const KView& out) override;
  void unary_backward(int dev, UnaryOp op, const KView& grad_out, const KView& saved,
                      const KView& grad_in) override;
  void reduce_sum(int dev, const KView& x, const KView& out) override;
  void argmax(int dev, const KView& x, int dim, const KView& out) override;
  void matmul(int dev, const KView& a, const KView& b, const KView* bias, const KView& out,
              const MatmulParams& p) override;
  void softmax(int dev, const KView& x, int dim, bool log, const KView& out) override;
  void softmax_backward(int dev, const KView& grad_out, const KView& out, int dim, bool log,
                        const KView& grad_in) override;
  void conv2d(int dev, const KView& x, const KView& w, const KView* bias, const KView& y,
              const Conv2dParams& p) override;
  void conv2d_backward_data(int dev, const KView& gy, const KView& w, const KView& gx,
                            const Conv2dParams& p) override;
  void conv2d_backward_weights(int dev, const KView& x, const KView& gy, const KView& gw,
                               const KView* gbias, const Conv2dParams& p) override;
  size_t pool2d_workspace_bytes(int dev, const KView& x, const KView& y,
                                const Pool2dParams& p) override;
  void pool2d(int dev, const KView& x, const KView& y, void* workspace,
              const Pool2dParams& p) override;
  void pool2d_backward(int dev, const KView& gy, const KView& x, const void* workspace,
                       const KView& gx, const Pool2dParams& p) override;
  void batch_norm(int dev, const KView& x, const KView& gamma, const KView& beta, const KView& mean,
                  const KView& var, const KView& y, double eps, bool training) override;
  void batch_norm_backward(int dev, const KView& gy, const KView& x, const KView& gamma,
                           const KView& mean, const KView& var, const KView& gx,
                           const KView& ggamma, const KView& gbeta, double eps) override;
  void dropout_mask(int dev, const KView& mask, double p, uint64_t seed) override;
  void embedding(int dev, const KView& idx, const KView& weight, const KView& out) override;
  void embedding_backward(int dev, const KView& idx, const KView& gy, const KView& gw) override;
  void nll_loss(int dev, const KView& logp, const KView& target, const KView& out) override;
  void nll_loss_backward(int dev, const KView& grad_out, const KView& target,
                         const KView& grad_logp) override;
  void sgd_step(int dev, const KView& param, const KView& grad, const KView* momentum_buf,
                const SgdParams& p) override;
  void adam_step(int dev, const KView& param, const KView& grad, const KView& m, const KView& v,
                 const AdamParams& p) override;

  bool broadcast(const std::vector<int>& devs, const std::vector<void*>& buffers, size_t nbytes,
                 size_t root) override;
  bool reduce_sum(const std::vector<int>& devs, const std::vector<const void*>& send, void* recv,
                  int64_t count, DType dtype, size_t root) override;
  void properties(int dev, uint64_t* total_memory, int* multiprocessors) const override;

  // Between processes: NCCL (nccl_process_comm.h).
  std::string process_comm_unavailable() const override { return ""; }
  std::string pci_bus_id(int dev) const override;
  std::vector<uint8_t> process_comm_id() override;
  std::unique_ptr<ProcessComm> process_comm(const std::vector<uint8_t>& id, int nranks, int rank,
                                            int dev) override;

  // bfloat16. On a GPU of compute capability 8.0 and up: matmul on cuBLASLt (bfloat16
  // tensor cores, float32 accumulation) and, when convolutions run on cuDNN, the three
  // convolutions on cuDNN (bfloat16 tensors, float32 compute). Everything else, and
  // everything on older GPUs, the core stages through float32. matmul and the
  // convolutions also take bfloat16 views where they say no (a direct caller): they then
  // run their float32 path on widened copies (float32_copies.h).
  bool runs_bf16(Bf16Kernel kernel, int dev) const override;
  bool bf16_native(int dev) const override;
  const char* bf16_not_native_reason(int) const override {
    return "has no bfloat16 tensor cores (compute capability below 8.0)";
  }

 private:
  friend class ScratchBuffer;

  // The bfloat16 half of matmul (every view bfloat16).
  void matmul_bf16(CudaDevice& d, int dev, const KView& a, const KView& b, const KView* bias,
                   const KView& out, const MatmulParams& p);
  void conv_bias_gradient(CudaDevice& d, const KView& gy, const KView& gbias, int64_t images,
                          int64_t channels, int64_t pixels);
  // Raises kDtypeMismatch, naming op and the operand, unless every view given (null: an
  // absent operand) is of `dtype` (need_bf16: bfloat16).
  using NamedView = std::pair<const char*, const KView*>;
  void need_dtype(const CudaDevice& d, DType dtype, std::initializer_list<NamedView> views,
                  const char* op);
  void need_bf16(const CudaDevice& d, std::initializer_list<NamedView> views, const char* op) {
    need_dtype(d, DType::kBFloat16, views, op);
  }

  // The device for a kernel call on its worker: raises when its worker could not set up.
  CudaDevice& worker_device(int dev);
  // Raises "<where>: <op> kernel failed: ..." when a launch failed.
  void launched(const CudaDevice& d, cudaError_t err, const char* op);
  // Raises kDtypeMismatch unless v is float32 or float64.
  void need_float(const CudaDevice& d, const KView& v, const char* op);
  // Raises kOutOfRange, with the CPU backend's message, when a kernel on any device has
  // recorded a DataError. Called after the host has waited for work (a copy to the host,
  // synchronize()): whatever the awaited kernels found is visible by then. Any thread.
  void check_data_errors();
  // `consumer` waits for the work queued so far on `producer_stream` (of device p).
  void stream_wait(const CudaDevice& p, cudaStream_t producer_stream, cudaStream_t consumer,
                   const std::string& where);
  void copy_host_to_device(CudaDevice& d, void* dst, size_t dst_pitch, const void* src,
                           size_t src_pitch, size_t row_bytes, size_t rows);
  // Lanes for a staged copy of `bytes` (at most copy_lanes_, one per kLaneBytes), made
  // on first use: how many d has now, 0 when page-locked memory is short. Holds
  // d.staging.mu.
  size_t ensure_lanes(CudaDevice& d, size_t bytes);
  // A copy between pageable host memory and d through d's staging lanes (d.staging.mu
  // held). The caller's thread runs lane 0, one thread each the others.
  void staged_copy(CudaDevice& d, size_t lanes, bool to_device, char* dst, size_t dst_pitch,
                   const char* src, size_t src_pitch, size_t row_bytes, size_t rows);
  void copy_device_to_host(CudaDevice& s, void* dst, size_t dst_pitch, const void* src,
                           size_t src_pitch, size_t row_bytes, size_t rows);
  void copy_device_to_device(CudaDevice& exec, CudaDevice& d, void* dst, size_t dst_pitch,
                             CudaDevice& s, const void* src, size_t src_pitch, size_t row_bytes,
                             size_t rows);
  // Physical GPUs of `devs` when they are pairwise distinct, else empty.
  std::vector<int> distinct_gpus(const std::vector<int>& devs) const;
  // The compute stream of each of `devs`, in order.
  std::vector<cudaStream_t> compute_streams(const std::vector<int>& devs) const;
  void release_all() noexcept;

  BackendHost host_;  // a copy: raise is stateless; log only while the context lives
  bool allow_tf32_;
  // DP_CUDA_CONV_SCRATCH_BYTES (0: not set): the most memory one convolution call may
  // take for temporaries. See im2col_budget and cudnn_workspace_limit.
  size_t conv_scratch_bytes_;
  // DP_CUDA_COPY_LANES: the most lanes (host threads) one staged copy uses; default half
  // the host's cores, at most 4.
  size_t copy_lanes_;
  // Bytes of im2col temporaries per call (default 256 MiB); larger batches run in chunks
  // of images. The tests make it small to cover the chunked path.
  size_t im2col_budget() const;
  // The largest workspace a cuDNN algorithm may use on d (default: 1/16 of the GPU's
  // memory, at least 256 MiB). The faster algorithms for large batches need more than
  // 256 MiB: FFT's workspace grows with the images.
  size_t cudnn_workspace_limit(const CudaDevice& d) const;
  ConvEngine conv_engine_;
#if DP_HAVE_CUDNN
  // d's cuDNN when a convolution of `dtype` runs there (float32; bfloat16 on a GPU with
  // bfloat16 tensor cores), else null (then im2col runs it, in float32). Starts it on
  // first use; a failure to start is logged once and leaves im2col.
  Cudnn* cudnn_for(CudaDevice& d, DType dtype);
#endif
  std::vector<std::unique_ptr<CudaDevice>> devices_;
  std::vector<std::unique_ptr<EventPool>> events_;  // by physical GPU
  std::unique_ptr<NcclComms> nccl_;
  std::mutex data_error_mu_;  // one thread reports (and clears) a record
};

// Device memory for one operation's temporaries, from the device's pool, freed in the
// order of its compute stream when it goes out of scope.
class ScratchBuffer {
 public:
  // Raises kOutOfMemory, naming `what`, when the pool cannot give `bytes`.
  ScratchBuffer(const BackendHost& host, CudaDevice& d, size_t bytes, const char* what);
  // For callers with another way out: get() is null when the pool cannot give `bytes`
  // (the CUDA error is cleared), and when bytes is 0.
  ScratchBuffer(CudaDevice& d, size_t bytes, std::nothrow_t);
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return p_; }

 private:
  CudaDevice& d_;
  void* p_ = nullptr;
};

}  // namespace dp::cuda_plugin
