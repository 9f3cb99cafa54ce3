// The Backend interface: everything the core asks of a device type. The CPU backend
// lives in core/device/cpu; the CUDA backend is a plugin (libdataparallel_cuda.so) built from
// cuda/. This header is the plugin's whole contract with the core, so it is header-only:
// plain structs and a pure virtual class, nothing the plugin would have to link against.
//
// Rules every implementation follows:
// - Kernels see contiguous row-major tensors (KView) already allocated by the core, and
//   only ever run on the worker thread of the device they are given, so per-device state
//   needs no lock. allocate/deallocate and the device queries may run on any thread.
// - Failures are reported by calling host().raise(code, message), which throws the core's
//   error type through the backend's frames: keep backend code exception-safe (RAII).
// - float32 is the fast path. float64 exists for reference checks in tests.
// - bfloat16: every backend fills, casts (to and from every dtype) and copies it. Other
//   kernels get bfloat16 views only where runs_bf16 says so; for the rest the core runs
//   the float32 kernel on widened copies and rounds the results (device/bf16_staging.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/device.h"
#include "device/dtype.h"

namespace dp {

constexpr int kMaxDims = 8;  // the most dimensions of a tensor; equals DP_MAX_DIMS

// A contiguous row-major tensor as a kernel sees it.
struct KView {
  void* data = nullptr;
  DType dtype = DType::kFloat32;
  int ndim = 0;
  int64_t shape[kMaxDims] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[i];
    return n;
  }
  int64_t size(int d) const { return shape[d]; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

enum class BinaryOp : int { kAdd, kSub, kMul, kDiv };
enum class UnaryOp : int { kRelu, kGelu, kTanh, kSigmoid, kExp, kLog };
enum class PoolKind : int { kMax, kAvg };

struct MatmulParams {
  bool trans_a = false;     // a is stored [K, M] (or [B, K, M])
  bool trans_b = false;     // b is stored [N, K] (or [B, N, K])
  bool accumulate = false;  // out += a @ b instead of out = a @ b
  bool relu = false;        // out = relu(a @ b + bias)
};

struct Conv2dParams {  // dilation 1, groups 1; the kernel size comes from the weight
  int stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  bool relu = false;  // forward only: y = relu(conv(x) + bias)
  // conv_relu_pool only: round y to bfloat16 values before pooling, so that a float32
  // block staged for bfloat16 views (device/bf16_staging.h) pools what bfloat16 ops would.
  // A backend with the block honours it.
  bool round_bf16 = false;
};

struct Pool2dParams {
  PoolKind kind = PoolKind::kMax;
  int kernel_h = 2, kernel_w = 2, stride_h = 2, stride_w = 2, pad_h = 0, pad_w = 0;
  // Average pooling divides by the full window including padding (PyTorch's default).
};

struct SgdParams {
  double lr = 0.01, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  bool first_step = true;  // the momentum buffer starts as the (decayed) gradient
};

struct AdamParams {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled = false;  // AdamW: decay the parameter, not the gradient
  int64_t step = 1;        // 1 for the first update (bias correction)
};

// The kernels a backend may run on bfloat16 views itself (Backend::runs_bf16).
enum class Bf16Kernel : int {
  kMatmul,
  kConv2d,
  kConv2dBackwardData,
  kConv2dBackwardWeights,
  kConvReluPool,  // conv_relu_pool_state_bytes, conv_relu_pool and its backward
  kReluBackward,  // unary_backward with UnaryOp::kRelu (a mask: exact in bfloat16)
  // matmul with bfloat16 a and b, no bias, into a float32 out: float32 sums, no rounding
  // (a float32 parameter's gradient from bfloat16 operands, ops::linear under autocast).
  // A backend without it gets such a call staged (a and b widened, the float32 product).
  // New values go last: a plugin built before them answers false for a value it does
  // not know, and the values it knows keep their numbers.
  kMatmulIntoFloat32,
};

// The reductions of ProcessComm::allreduce.
enum class CollectiveOp : int { kSum, kAverage, kMax, kMin };

// A point in a device's queue of work, taken by ProcessComm::mark.
class QueuePoint {
 public:
  virtual ~QueuePoint() = default;
};

// A communicator between processes, one device of this backend in each (the CUDA
// backend's is NCCL's), made by Backend::process_comm. Rules:
// - Every call is collective: each rank makes the same calls in the same order, from one
//   thread (the process group's communication thread), never a device's worker.
// - A call queues its work on the device after the work queued there so far (given a
//   QueuePoint: after the work queued before the point), and returns once it is done:
//   the result is then in the buffer, as with host memory.
// - Buffers are device memory of the communicator's device. Failures raise (BackendHost).
// - Deleting it destroys the communicator, which may wait for the other ranks to do the
//   same: every rank deletes its own, after its last call.
class ProcessComm {
 public:
  virtual ~ProcessComm() = default;
  // In place: `count` elements of `dtype` at buf become their reduction over the ranks.
  // kAverage is for floating dtypes.
  // `after` (may be null, see mark): the point the call waits for.
  virtual void allreduce(void* buf, int64_t count, DType dtype, CollectiveOp op,
                         const QueuePoint* after) = 0;
  // In place: nbytes at buf become rank root's.
  virtual void broadcast(void* buf, size_t nbytes, int root) = 0;
  // recv (nranks * nbytes) receives every rank's nbytes of send, in rank order.
  virtual void allgather(const void* send, void* recv, size_t nbytes) = 0;
  // The device's queue as it stands now, from any thread: an allreduce given the point
  // waits for the work queued before it only, not for what the device has queued since
  // (DDP marks a bucket as its last gradient comes in; its allreduce then runs beside the
  // backward kernels queued after it). Null where a call cannot wait for less.
  virtual std::unique_ptr<QueuePoint> mark() { return nullptr; }
};

// Services the core offers a backend.
struct BackendHost {
  // Throws the core's error with `code` (a dp::Code value). Never returns.
  void (*raise)(int code, const char* message);
  // Sends a message to the context's log callback (level: a dp_log_level value).
  void (*log)(void* log_state, int level, const char* message);
  void* log_state;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // --- devices (any thread) ---
  virtual DeviceType type() const = 0;
  virtual int device_count() const = 0;
  virtual std::string device_name(int dev) const = 0;
  virtual void memory_info(int dev, uint64_t* free_bytes, uint64_t* total_bytes) const = 0;
  // The physical device a logical one runs on (CUDA ordinal; CPU devices: 0).
  virtual int physical_index(int dev) const = 0;

  // --- worker life cycle (on the device's worker thread) ---
  virtual void worker_started(int dev) = 0;
  virtual void worker_stopping(int dev) = 0;
  // Waits until all work queued on the device has finished.
  virtual void synchronize(int dev) = 0;
  // Waits until all work on the device's hardware has finished, this library's and any
  // other's in the process (another library's streams, before its memory is borrowed).
  virtual void synchronize_hardware(int dev) { synchronize(dev); }

  // --- memory (any thread) ---
  // At least 64-byte aligned. Raises kOutOfMemory when it cannot.
  virtual void* allocate(int dev, size_t nbytes) = 0;
  virtual void deallocate(int dev, void* ptr, size_t nbytes) noexcept = 0;

  // --- copies (on the worker of `exec`, one of the two devices) ---
  // rows x row_bytes, rows `*_pitch` bytes apart. Either side may be a CPU device when the
  // backend is not the CPU backend (host <-> device copies).
  virtual void copy_2d(Device exec, Device dst_dev, void* dst, size_t dst_pitch, Device src_dev,
                       const void* src, size_t src_pitch, size_t row_bytes, size_t rows) = 0;

  // --- kernels (on the worker of `dev`; every view lives on `dev`) ---
  virtual void fill(int dev, const KView& out, double value) = 0;
  virtual void cast(int dev, const KView& x, const KView& out) = 0;
  // out = a op b with NumPy broadcasting (a and b right-aligned to out's shape).
  // out may alias a (in-place) when a has out's shape.
  virtual void binary(int dev, BinaryOp op, const KView& a, const KView& b, const KView& out) = 0;
  // out = alpha * x + beta (out may alias x).
  virtual void affine(int dev, const KView& x, const KView& out, double alpha, double beta) = 0;
  virtual void unary(int dev, UnaryOp op, const KView& x, const KView& out) = 0;
  // grad_in = grad_out * f'(.). `saved` is the input x for kRelu, kGelu and kLog and the
  // output y for kTanh, kSigmoid and kExp.
  virtual void unary_backward(int dev, UnaryOp op, const KView& grad_out, const KView& saved,
                              const KView& grad_in) = 0;
  // out has x's ndim with size 1 in every reduced dimension.
  virtual void reduce_sum(int dev, const KView& x, const KView& out) = 0;
  // out (int64) is x without dimension `dim`; ties pick the first index.
  virtual void argmax(int dev, const KView& x, int dim, const KView& out) = 0;
  // out = a @ b (+ bias broadcast over rows) (then relu). 2-D, or 3-D batched.
  virtual void matmul(int dev, const KView& a, const KView& b, const KView* bias, const KView& out,
                      const MatmulParams& p) = 0;
  virtual void softmax(int dev, const KView& x, int dim, bool log, const KView& out) = 0;
  virtual void softmax_backward(int dev, const KView& grad_out, const KView& out, int dim, bool log,
                                const KView& grad_in) = 0;
  // x [N, C, H, W], w [O, C, KH, KW], bias [O] or null, y [N, O, OH, OW].
  virtual void conv2d(int dev, const KView& x, const KView& w, const KView* bias, const KView& y,
                      const Conv2dParams& p) = 0;
  virtual void conv2d_backward_data(int dev, const KView& gy, const KView& w, const KView& gx,
                                    const Conv2dParams& p) = 0;
  virtual void conv2d_backward_weights(int dev, const KView& x, const KView& gy, const KView& gw,
                                       const KView* gbias, const Conv2dParams& p) = 0;
  // Bytes of backend-private workspace that pool2d fills and pool2d_backward reads.
  virtual size_t pool2d_workspace_bytes(int dev, const KView& x, const KView& y,
                                        const Pool2dParams& p) = 0;
  virtual void pool2d(int dev, const KView& x, const KView& y, void* workspace,
                      const Pool2dParams& p) = 0;
  virtual void pool2d_backward(int dev, const KView& gy, const KView& x, const void* workspace,
                               const KView& gx, const Pool2dParams& p) = 0;
  // x [N, C] or [N, C, H, W]; statistics per channel. training: writes the batch mean and
  // biased variance into mean/var; else normalises with them.
  virtual void batch_norm(int dev, const KView& x, const KView& gamma, const KView& beta,
                          const KView& mean, const KView& var, const KView& y, double eps,
                          bool training) = 0;
  // Backward of training-mode batch norm with the batch statistics mean/var.
  virtual void batch_norm_backward(int dev, const KView& gy, const KView& x, const KView& gamma,
                                   const KView& mean, const KView& var, const KView& gx,
                                   const KView& ggamma, const KView& gbeta, double eps) = 0;
  // mask[i] = 0 with probability p, else 1 / (1 - p). Element i's draw depends only on
  // (seed, i), so every backend draws the same mask.
  virtual void dropout_mask(int dev, const KView& mask, double p, uint64_t seed) = 0;
  // out[i, :] = weight[idx[i], :]; raises kOutOfRange for an index outside [0, rows).
  virtual void embedding(int dev, const KView& idx, const KView& weight, const KView& out) = 0;
  // gw (zeroed by the caller) += scatter of gy rows by idx.
  virtual void embedding_backward(int dev, const KView& idx, const KView& gy, const KView& gw) = 0;
  // Mean negative log-likelihood: out (0-dim) = -mean(logp[i, target[i]]). Raises
  // kOutOfRange for a target outside [0, C).
  virtual void nll_loss(int dev, const KView& logp, const KView& target, const KView& out) = 0;
  // grad_logp = d(out)/d(logp) * grad_out (0-dim).
  virtual void nll_loss_backward(int dev, const KView& grad_out, const KView& target,
                                 const KView& grad_logp) = 0;
  // In-place optimizer updates with PyTorch's rules. momentum_buf null when momentum == 0.
  virtual void sgd_step(int dev, const KView& param, const KView& grad, const KView* momentum_buf,
                        const SgdParams& p) = 0;
  virtual void adam_step(int dev, const KView& param, const KView& grad, const KView& m,
                         const KView& v, const AdamParams& p) = 0;

  // --- collectives between devices of this backend (optional) ---
  // Called from a thread that is none of the workers, after the work that produced the
  // inputs was queued, and ordered before work queued after it on each device. Return
  // false when there is no collective for these devices: the core then uses copy_2d.
  //
  // Copies nbytes at buffers[root] into buffers[i] on device devs[i], for every i.
  virtual bool broadcast(const std::vector<int>& devs, const std::vector<void*>& buffers,
                         size_t nbytes, size_t root) {
    (void)devs, (void)buffers, (void)nbytes, (void)root;
    return false;
  }
  // recv (on devs[root]) = the elementwise sum of send[i] (on devs[i]), count elements.
  virtual bool reduce_sum(const std::vector<int>& devs, const std::vector<const void*>& send,
                          void* recv, int64_t count, DType dtype, size_t root) {
    (void)devs, (void)send, (void)recv, (void)count, (void)dtype, (void)root;
    return false;
  }
  // A fused block z = pool(relu(conv2d(x, w) + bias)) whose intermediate y = relu(conv(...))
  // ([N, O, OH, OW]; a shape only, the block keeps it in a private layout) is saved in
  // `state` for the backward. Returns the bytes of that state, or 0 when the backend has no
  // such block (then callers compose conv2d, relu and pool2d).
  virtual size_t conv_relu_pool_state_bytes(int dev, const KView& x, const KView& w, bool bias,
                                            const KView& y, const KView& z, const Conv2dParams& cp,
                                            const Pool2dParams& pp) {
    (void)dev, (void)x, (void)w, (void)bias, (void)y, (void)z, (void)cp, (void)pp;
    return 0;
  }
  // state: state_bytes long, or null when no backward will follow.
  virtual void conv_relu_pool(int dev, const KView& x, const KView& w, const KView* bias,
                              const KView& y, const KView& z, void* state, const Conv2dParams& cp,
                              const Pool2dParams& pp) {
    (void)dev, (void)x, (void)w, (void)bias, (void)y, (void)z, (void)state, (void)cp, (void)pp;
    throw std::logic_error("conv_relu_pool is not supported by this backend");
  }
  // Gradients from gz, the forward's output z and its state: gx (may be null: not
  // needed), gw, gbias (may be null).
  virtual void conv_relu_pool_backward(int dev, const KView& gz, const KView& x, const KView& w,
                                       const KView& y, const KView& z, const void* state,
                                       const KView* gx, const KView& gw, const KView* gbias,
                                       const Conv2dParams& cp, const Pool2dParams& pp) {
    (void)dev, (void)gz, (void)x, (void)w, (void)y, (void)z, (void)state, (void)gx, (void)gw;
    (void)gbias, (void)cp, (void)pp;
    throw std::logic_error("conv_relu_pool_backward is not supported by this backend");
  }
  // --- collectives between processes (optional; the CUDA backend's run on NCCL) ---
  // "" when process_comm_id and process_comm work, else why not (the core then moves the
  // bytes through host memory).
  virtual std::string process_comm_unavailable() const {
    return "this backend has no collectives between processes";
  }
  // The PCI bus id of the hardware of device `dev` ("0000:3b:00.0"), "" for none: ranks
  // whose devices have the same id on one machine share a device, which a communicator
  // may refuse. Any thread.
  virtual std::string pci_bus_id(int dev) const {
    (void)dev;
    return "";
  }
  // The id of a new communicator (opaque bytes): one rank makes it and sends it to the
  // others, which pass it to process_comm. Any thread.
  virtual std::vector<uint8_t> process_comm_id() {
    throw std::logic_error("process_comm_id is not supported by this backend");
  }
  // This rank's member (rank of nranks) of the communicator `id` names, over device `dev`.
  // Collective: returns once every rank has joined. Called from the thread that will make
  // the communicator's calls (owned by the caller).
  virtual std::unique_ptr<ProcessComm> process_comm(const std::vector<uint8_t>& id, int nranks,
                                                    int rank, int dev) {
    (void)id, (void)nranks, (void)rank, (void)dev;
    throw std::logic_error("process_comm is not supported by this backend");
  }

  // --- bfloat16 (any thread) ---
  // Whether `kernel` takes bfloat16 views on device `dev` (computing with float32
  // accumulation, rounding its outputs once); false: the core stages it through float32.
  virtual bool runs_bf16(Bf16Kernel kernel, int dev) const {
    (void)kernel, (void)dev;
    return false;
  }
  // Whether the hardware of `dev` computes bfloat16 products natively (CPU: AVX512-BF16
  // or AMX; CUDA: tensor cores of compute capability 8.0 and up), for dp_device_bf16_native.
  virtual bool bf16_native(int dev) const {
    (void)dev;
    return false;
  }
  // Why bf16_native(dev) is false, for the warning a context logs once under autocast
  // ("cpu:0 <reason>: bfloat16 matmul and convolution compute in float32 ...").
  virtual const char* bf16_not_native_reason(int dev) const {
    (void)dev;
    return "has no native bfloat16";
  }

  // Total memory and multiprocessor count, for DataParallel's imbalance check (CUDA).
  virtual void properties(int dev, uint64_t* total_memory, int* multiprocessors) const {
    uint64_t free_bytes = 0;
    memory_info(dev, &free_bytes, total_memory);
    *multiprocessors = 1;
  }
};

// The CUDA plugin exports one function of this type, named kCudaPluginEntry. It returns
// a backend (owned by the caller, destroyed with delete through the virtual destructor),
// or null with *why set to a static or thread-local message (no driver, no GPU).
using CudaPluginEntryFn = Backend* (*)(const BackendHost* host, int abi_version, bool allow_tf32,
                                       const char** why);
constexpr const char* kCudaPluginEntry = "dp_cuda_plugin_entry";
constexpr int kBackendAbiVersion = 5;

}  // namespace dp
