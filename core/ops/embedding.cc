// Embedding lookup: rows of a weight table selected by int64 indices.
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class EmbeddingBackward final : public Node {
 public:
  EmbeddingBackward(Device d, const Tensor& indices, Shape weight_shape)
      : Node(d, 1), indices_(indices), weight_shape_(std::move(weight_shape)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    const Tensor& g = grads[0];
    const Tensor indices = DP_UNPACK(indices_);
    Tensor gw = empty_like(g, weight_shape_);
    Backend& be = backend_of(g);
    be.fill(dev(g), gw.kview(), 0.0);
    if (indices.numel() > 0) be.embedding_backward(dev(g), indices.kview(), g.kview(), gw.kview());
    return {gw};
  }
  const char* name() const override { return "EmbeddingBackward"; }
  void release_saved() override { indices_.reset(); }

 private:
  SavedTensor indices_;
  Shape weight_shape_;
};

}  // namespace

Tensor embedding(const Tensor& indices, const Tensor& weight) {
  check_dtype(indices, DType::kInt64, "embedding", "indices");
  check_float(weight, "embedding", "weight");
  check_ndim(weight, 2, "embedding", "weight");
  DP_CHECK(indices.device() == weight.device(), kDeviceMismatch,
           "embedding: indices are on " << indices.device().str() << " but weight is on "
                                        << weight.device().str());
  Shape out_shape = indices.shape();
  out_shape.push_back(weight.shape()[1]);
  return on_device(weight, [&] {
    Tensor out = empty_like(weight, out_shape);
    if (indices.numel() > 0) {
      backend_of(weight).embedding(dev(weight), indices.kview(), weight.kview(), out.kview());
    }
    if (needs_grad({&weight})) {
      set_history(out, make_node<EmbeddingBackward>({&weight}, weight.device(), indices.detach(),
                                                    weight.shape()));
    }
    return out;
  });
}

}  // namespace dp::ops
