#include "parallel/functions.h"

#include "autograd/function.h"
#include "context/context.h"
#include "error.h"
#include "ops/ops.h"
#include "parallel/comm.h"

namespace dp::parallel {

namespace {

// Sums the replicas' gradients of every broadcast tensor onto the source device.
class BroadcastBackward final : public Node {
 public:
  // Outputs are ordered device by device (devices other than the source), tensor by tensor.
  BroadcastBackward(Device source, const std::vector<Tensor>& originals, size_t copies,
                    std::shared_ptr<PhaseStats> stats, DType reduce_dtype = DType::kFloat32)
      : Node(source, static_cast<uint32_t>(originals.size() * copies)),
        tensors_(originals.size()),
        copies_(copies),
        reduce_dtype_(reduce_dtype),
        stats_(std::move(stats)) {
    for (const Tensor& t : originals) {
      shapes_.push_back(t.shape());
      dtypes_.push_back(t.dtype());
    }
  }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    if (stats_) stats_->backward_reached_reduce();
    PhaseTimer timer(stats_.get(), Phase::kReduce);
    std::vector<std::vector<Tensor>> per_device(copies_);
    for (size_t c = 0; c < copies_; ++c) {
      per_device[c].assign(grads.begin() + c * tensors_, grads.begin() + (c + 1) * tensors_);
    }
    const bool compress = reduce_dtype_ == DType::kBFloat16;
    if (compress) {
      for (auto& device_grads : per_device) {
        for (Tensor& g : device_grads) {
          if (g.defined() && g.dtype() == DType::kFloat32) g = ops::to_dtype(g, reduce_dtype_);
        }
      }
    }
    std::vector<Tensor> sums = comm::reduce_add_coalesced(per_device, device_);
    if (compress) {
      for (size_t j = 0; j < sums.size(); ++j) {
        if (sums[j].defined() && sums[j].dtype() != dtypes_[j])
          sums[j] = ops::to_dtype(sums[j], dtypes_[j]);
      }
    }
    // A tensor no replica used still gets a (zero) gradient, as in PyTorch.
    for (size_t j = 0; j < sums.size(); ++j) {
      if (!sums[j].defined() && next_edges_[j].valid()) {
        for (const Tensor& g : grads) {
          if (g.defined()) {
            sums[j] = ops::zeros(g.context(), shapes_[j], dtypes_[j], device_);
            break;
          }
        }
      }
    }
    return sums;
  }
  const char* name() const override { return "BroadcastBackward"; }

 private:
  size_t tensors_, copies_;
  DType reduce_dtype_;
  std::vector<Shape> shapes_;
  std::vector<DType> dtypes_;
  std::shared_ptr<PhaseStats> stats_;
};

// Gathers the chunks' gradients back onto the scattered tensor's device.
class ScatterBackward final : public Node {
 public:
  ScatterBackward(Device source, std::vector<int64_t> sizes, Shape shape, int dim)
      : Node(source, static_cast<uint32_t>(sizes.size())),
        sizes_(std::move(sizes)),
        shape_(std::move(shape)),
        dim_(dim) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    ops::fill_unused_pieces(grads, shape_, dim_, sizes_, device_);
    return {comm::gather(grads, device_, dim_)};
  }
  const char* name() const override { return "ScatterBackward"; }

 private:
  std::vector<int64_t> sizes_;
  Shape shape_;
  int dim_;
};

// Splits the gathered output's gradient back to the devices.
class GatherBackward final : public Node {
 public:
  GatherBackward(Device output, std::vector<Device> devices, std::vector<int64_t> sizes, int dim,
                 bool alias_cpu, std::shared_ptr<PhaseStats> stats)
      : Node(output, 1),
        devices_(std::move(devices)),
        sizes_(std::move(sizes)),
        dim_(dim),
        alias_cpu_(alias_cpu),
        stats_(std::move(stats)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    if (stats_) stats_->mark_backward_start();
    return comm::scatter(grads[0], devices_, sizes_, dim_, alias_cpu_);
  }
  const char* name() const override { return "GatherBackward"; }

 private:
  std::vector<Device> devices_;
  std::vector<int64_t> sizes_;
  int dim_;
  bool alias_cpu_;
  std::shared_ptr<PhaseStats> stats_;
};

}  // namespace

std::vector<Tensor> broadcast_to_own_device(const std::vector<Tensor>& tensors,
                                            std::shared_ptr<PhaseStats> stats) {
  std::vector<Tensor> out = tensors;
  if (tensors.empty() || !needs_grad(tensors)) return out;
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  auto node =
      make_node<BroadcastBackward>(inputs, tensors[0].device(), tensors, 1, std::move(stats));
  for (size_t j = 0; j < tensors.size(); ++j) {
    if (!tensors[j].requires_grad()) continue;
    out[j] = tensors[j].detach();  // the same memory and version counter
    set_history(out[j], node, static_cast<uint32_t>(j));
  }
  return out;
}

std::vector<std::vector<Tensor>> broadcast(const std::vector<Tensor>& tensors,
                                           const std::vector<Device>& devices, size_t bucket_bytes,
                                           bool alias_cpu, std::shared_ptr<PhaseStats> stats,
                                           DType reduce_dtype) {
  auto out = comm::broadcast_coalesced(tensors, devices, bucket_bytes, alias_cpu);
  if (tensors.empty() || !needs_grad(tensors)) return out;
  const Device src = tensors[0].device();
  // The source device's entries stay the inputs themselves.
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d] == src) out[d] = tensors;
  }
  std::vector<size_t> others;
  for (size_t d = 0; d < devices.size(); ++d) {
    if (devices[d] != src) others.push_back(d);
  }
  if (others.empty()) return out;
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  auto node =
      make_node<BroadcastBackward>(inputs, src, tensors, others.size(), stats, reduce_dtype);
  // make_node gave one edge per tensor; the gradient of copy c of tensor j is output
  // c * n + j, and all of them flow to tensor j's edge: BroadcastBackward's outputs are
  // one per tensor (reduce_add_coalesced), matching those edges.
  for (size_t c = 0; c < others.size(); ++c) {
    for (size_t j = 0; j < tensors.size(); ++j) {
      Tensor& t = out[others[c]][j];
      if (tensors[j].requires_grad())
        set_history(t, node, static_cast<uint32_t>(c * tensors.size() + j));
    }
  }
  return out;
}

std::vector<Tensor> scatter(const Tensor& x, const std::vector<Device>& devices,
                            const std::vector<int64_t>& sizes, int dim, bool alias_cpu) {
  // Rows past the chunks (an input longer than the others) stay behind on x's device and
  // get a zero gradient.
  int64_t covered = 0;
  for (int64_t s : sizes) covered += s;
  DP_CHECK(x.ndim() > 0 && covered <= x.shape()[dim], kShapeMismatch,
           "scatter: chunks of " << covered << " along dim " << dim << " of a tensor of shape "
                                 << shape_str(x.shape()));
  std::vector<int64_t> all_sizes = sizes;
  std::vector<Device> all_devices = devices;
  if (covered < x.shape()[dim]) {
    all_sizes.push_back(x.shape()[dim] - covered);
    all_devices.push_back(x.device());
  }
  std::vector<Tensor> out = comm::scatter(x, all_devices, all_sizes, dim, alias_cpu);
  if (needs_grad({&x})) {
    auto node = make_node<ScatterBackward>({&x}, x.device(), all_sizes, x.shape(), dim);
    for (size_t i = 0; i < out.size(); ++i) set_history(out[i], node, static_cast<uint32_t>(i));
  }
  out.resize(sizes.size());
  return out;
}

Tensor gather(const std::vector<Tensor>& tensors, Device device, int dim, bool alias_cpu,
              std::shared_ptr<PhaseStats> stats) {
  std::vector<int64_t> sizes;
  std::vector<Device> devices;
  for (const Tensor& t : tensors) {
    sizes.push_back(t.ndim() > 0 ? t.shape()[dim] : 1);
    devices.push_back(t.device());
  }
  Tensor out = comm::gather(tensors, device, dim);
  if (needs_grad(tensors)) {
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : tensors) inputs.push_back(&t);
    set_history(out, make_node<GatherBackward>(inputs, device, devices, sizes, dim, alias_cpu,
                                               std::move(stats)));
  }
  return out;
}

}  // namespace dp::parallel
