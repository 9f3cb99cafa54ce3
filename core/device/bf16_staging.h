// bfloat16 for every kernel of a backend. Bf16Staging wraps a backend (the context holds
// its backends wrapped) and passes each call through, except a kernel given a bfloat16
// view that the backend does not run on bfloat16 itself (Backend::runs_bf16): then each
// bfloat16 view is widened into a float32 buffer on the same device (exactly: bfloat16 is
// float32's upper half), the backend's float32 kernel runs, and each bfloat16 output is
// rounded once, to nearest even. That is how PyTorch's CPU kernels treat bfloat16
// (compute in float, round the result), so an op's value is its float32 value rounded.
//
// Costs: one widening per bfloat16 input and output (outputs are widened too, for the
// kernels that accumulate into them) and one rounding per output, in float32 buffers from
// the device's allocator, freed when the call ends. Every staged call runs on the
// device's worker, as kernels do, so buffers are reused in stream order on a GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "device/backend.h"

namespace dp {

class Bf16Staging final : public Backend {
 public:
  explicit Bf16Staging(std::shared_ptr<Backend> inner) : inner_(std::move(inner)) {}
  Backend& inner() const { return *inner_; }

  DeviceType type() const override { return inner_->type(); }
  int device_count() const override { return inner_->device_count(); }
  std::string device_name(int dev) const override { return inner_->device_name(dev); }
  void memory_info(int dev, uint64_t* free_bytes, uint64_t* total_bytes) const override {
    inner_->memory_info(dev, free_bytes, total_bytes);
  }
  int physical_index(int dev) const override { return inner_->physical_index(dev); }
  void worker_started(int dev) override { inner_->worker_started(dev); }
  void worker_stopping(int dev) override { inner_->worker_stopping(dev); }
  void synchronize(int dev) override { inner_->synchronize(dev); }
  void synchronize_hardware(int dev) override { inner_->synchronize_hardware(dev); }
  void* allocate(int dev, size_t nbytes) override { return inner_->allocate(dev, nbytes); }
  void deallocate(int dev, void* ptr, size_t nbytes) noexcept override {
    inner_->deallocate(dev, ptr, nbytes);
  }
  void copy_2d(Device exec, Device dst_dev, void* dst, size_t dst_pitch, Device src_dev,
               const void* src, size_t src_pitch, size_t row_bytes, size_t rows) override {
    inner_->copy_2d(exec, dst_dev, dst, dst_pitch, src_dev, src, src_pitch, row_bytes, rows);
  }
  void fill(int dev, const KView& out, double value) override { inner_->fill(dev, out, value); }
  void cast(int dev, const KView& x, const KView& out) override { inner_->cast(dev, x, out); }

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
                 size_t root) override {
    return inner_->broadcast(devs, buffers, nbytes, root);
  }
  bool reduce_sum(const std::vector<int>& devs, const std::vector<const void*>& send, void* recv,
                  int64_t count, DType dtype, size_t root) override {
    return inner_->reduce_sum(devs, send, recv, count, dtype, root);
  }
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

  std::string process_comm_unavailable() const override {
    return inner_->process_comm_unavailable();
  }
  std::string pci_bus_id(int dev) const override { return inner_->pci_bus_id(dev); }
  std::vector<uint8_t> process_comm_id() override { return inner_->process_comm_id(); }
  std::unique_ptr<ProcessComm> process_comm(const std::vector<uint8_t>& id, int nranks, int rank,
                                            int dev) override {
    return inner_->process_comm(id, nranks, rank, dev);
  }
  bool runs_bf16(Bf16Kernel kernel, int dev) const override {
    return inner_->runs_bf16(kernel, dev);
  }
  bool bf16_native(int dev) const override { return inner_->bf16_native(dev); }
  const char* bf16_not_native_reason(int dev) const override {
    return inner_->bf16_not_native_reason(dev);
  }
  void properties(int dev, uint64_t* total_memory, int* multiprocessors) const override {
    inner_->properties(dev, total_memory, multiprocessors);
  }

 private:
  std::shared_ptr<Backend> inner_;
};

}  // namespace dp
