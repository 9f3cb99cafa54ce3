// The CPU backend: N virtual CPU devices sharing the host's memory. Each device runs its
// kernels single-threaded on its own worker (float32 on oneDNN, float64 and the rest on
// the reference loops), so N devices use N cores in parallel.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "device/backend.h"
#include "device/cpu/cpu_allocator.h"

namespace dp {

namespace dnnl_cpu {
struct DnnlDevice;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int devices);
  ~CpuBackend() override;

  DeviceType type() const override { return DeviceType::kCpu; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  std::string device_name(int dev) const override;
  void memory_info(int dev, uint64_t* free_bytes, uint64_t* total_bytes) const override;
  int physical_index(int) const override { return 0; }
  void worker_started(int dev) override;
  void worker_stopping(int dev) override;
  // Brackets work of device `dev` that runs inline on a caller's thread while the device's
  // worker is idle (the worker's execution lock held; see Worker::run): the thread then
  // counts as the device's owner and runs oneDNN with one OpenMP thread. Strictly nested.
  void enter_inline(int dev);
  void leave_inline();
  void synchronize(int) override {}

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
  size_t conv_relu_pool_state_bytes(int dev, const KView& x, const KView& w, bool bias,
                                    const KView& y, const KView& z, const Conv2dParams& cp,
                                    const Pool2dParams& pp) override;
  void conv_relu_pool(int dev, const KView& x, const KView& w, const KView* bias, const KView& y,
                      const KView& z, void* state, const Conv2dParams& cp,
                      const Pool2dParams& pp) override;
  void conv_relu_pool_backward(int dev, const KView& gz, const KView& x, const KView& w,
                               const KView& y, const KView& z, const void* state, const KView* gx,
                               const KView& gw, const KView* gbias, const Conv2dParams& cp,
                               const Pool2dParams& pp) override;
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

  // bfloat16: where the CPU has native bfloat16 (dnnl_cpu::bf16_native), matmul (into
  // bfloat16, or into float32: Bf16Kernel::kMatmulIntoFloat32), the convolutions and the
  // conv + ReLU + pool block run oneDNN's bfloat16 primitives; the core stages every other
  // kernel through float32, and all of them on other CPUs (ReLU's backward aside).
  bool runs_bf16(Bf16Kernel kernel, int dev) const override;
  bool bf16_native(int dev) const override;
  // The CPU lacks AVX512-BF16 and AMX, or DP_CPU_BF16=fp32 asked for float32 compute.
  const char* bf16_not_native_reason(int dev) const override;

  // Cached oneDNN primitives of a device (tests check the cache is used).
  size_t primitive_cache_size(int dev) const;

 private:
  dnnl_cpu::DnnlDevice& dnnl(int dev);

  std::vector<std::unique_ptr<dnnl_cpu::DnnlDevice, void (*)(dnnl_cpu::DnnlDevice*)>> devices_;
  std::vector<std::thread::id> owners_;                 // each device's worker thread
  std::vector<std::unique_ptr<CpuBlockCache>> caches_;  // per device
};

}  // namespace dp
