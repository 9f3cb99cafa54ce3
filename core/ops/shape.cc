// Shape ops: reshape and flatten (views), cat and split (copies, except split along
// dim 0, which gives views).
#include "ops/op_util.h"
#include "ops/ops.h"

namespace dp::ops {

namespace {

class ReshapeBackward final : public Node {
 public:
  ReshapeBackward(Device d, Shape input_shape) : Node(d, 1), input_shape_(std::move(input_shape)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return {grads[0].view_as_shape(input_shape_)};
  }
  const char* name() const override { return "ReshapeBackward"; }

 private:
  Shape input_shape_;
};

// Bytes of one "row" when a tensor is seen as [outer, size(dim) * inner].
struct Slab {
  int64_t outer = 1, inner = 1;
};

Slab slab_of(const Shape& s, int dim) {
  Slab sl;
  for (int i = 0; i < dim; ++i) sl.outer *= s[i];
  for (size_t i = dim + 1; i < s.size(); ++i) sl.inner *= s[i];
  return sl;
}

class CatBackward final : public Node {
 public:
  CatBackward(Device d, int dim, std::vector<int64_t> sizes, std::vector<Device> devices)
      : Node(d, 1), dim_(dim), sizes_(std::move(sizes)), devices_(std::move(devices)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    std::vector<Tensor> parts = split(grads[0], sizes_, dim_);
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!next_edges_[i].valid()) {
        parts[i] = Tensor();
      } else if (parts[i].device() != devices_[i]) {
        parts[i] = to_device(parts[i], devices_[i]);
      }
    }
    return parts;
  }
  const char* name() const override { return "CatBackward"; }

 private:
  int dim_;
  std::vector<int64_t> sizes_;
  std::vector<Device> devices_;
};

class SplitBackward final : public Node {
 public:
  SplitBackward(Device d, int dim, Shape input_shape, std::vector<int64_t> sizes)
      : Node(d, static_cast<uint32_t>(sizes.size())),
        dim_(dim),
        input_shape_(std::move(input_shape)),
        sizes_(std::move(sizes)) {}
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    fill_unused_pieces(grads, input_shape_, dim_, sizes_, device_);
    return {cat(grads, dim_)};
  }
  const char* name() const override { return "SplitBackward"; }

 private:
  int dim_;
  Shape input_shape_;
  std::vector<int64_t> sizes_;
};

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  check_defined(x, "reshape", "x");
  Shape s = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      DP_CHECK(infer < 0, kInvalidArgument, "reshape: more than one -1 in " << shape_str(shape));
      infer = static_cast<int>(i);
    } else {
      DP_CHECK(s[i] >= 0, kInvalidArgument,
               "reshape: shape[" << i << "] = " << s[i] << " is negative");
      DP_CHECK(!__builtin_mul_overflow(known, s[i], &known), kOutOfRange,
               "reshape: shape " << shape_str(shape) << " has more elements than fit in 64 bits");
    }
  }
  if (infer >= 0) {
    DP_CHECK(known > 0 && x.numel() % known == 0, kShapeMismatch,
             "reshape: cannot infer the -1 in " << shape_str(shape) << " for " << x.numel()
                                                << " elements");
    s[infer] = x.numel() / known;
  }
  checked_numel(s, x.element_size(), "shape");
  DP_CHECK(numel_of(s) == x.numel(), kShapeMismatch,
           "reshape: shape " << shape_str(shape) << " has " << numel_of(s) << " elements but x "
                             << shape_str(x.shape()) << " has " << x.numel());
  Tensor out = x.view_as_shape(s);
  if (needs_grad({&x})) set_history(out, make_node<ReshapeBackward>({&x}, x.device(), x.shape()));
  return out;
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  check_defined(x, "flatten", "x");
  if (x.ndim() == 0) {
    wrap_dim(start_dim, 0, "flatten: start_dim");
    wrap_dim(end_dim, 0, "flatten: end_dim");
    return reshape(x, {1});
  }
  const int s = wrap_dim(start_dim, x.ndim(), "flatten: start_dim");
  const int e = wrap_dim(end_dim, x.ndim(), "flatten: end_dim");
  DP_CHECK(s <= e, kInvalidArgument,
           "flatten: start_dim = " << start_dim << " comes after end_dim = " << end_dim);
  Shape out(x.shape().begin(), x.shape().begin() + s);
  int64_t n = 1;
  for (int i = s; i <= e; ++i) n *= x.shape()[i];
  out.push_back(n);
  out.insert(out.end(), x.shape().begin() + e + 1, x.shape().end());
  return reshape(x, out);
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  DP_CHECK(!tensors.empty(), kInvalidArgument, "cat: no tensors");
  check_defined(tensors[0], "cat", "tensors[0]");
  return cat(tensors, dim, tensors[0].device());
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, Device device) {
  DP_CHECK(!tensors.empty(), kInvalidArgument, "cat: no tensors");
  const Tensor& first = tensors[0];
  check_defined(first, "cat", "tensors[0]");
  DP_CHECK(first.ndim() > 0, kShapeMismatch, "cat: tensors[0] is 0-dimensional");
  const int d = wrap_dim(dim, first.ndim(), "cat: dim");
  Shape out_shape = first.shape();
  out_shape[d] = 0;
  std::vector<int64_t> sizes;
  std::vector<Device> devices;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    DP_CHECK(t.defined(), kInvalidArgument, "cat: tensors[" << i << "] is missing");
    DP_CHECK(t.dtype() == first.dtype(), kDtypeMismatch,
             "cat: tensors[" << i << "] is " << dtype_name(t.dtype()) << " but tensors[0] is "
                             << dtype_name(first.dtype()));
    bool fits = t.ndim() == first.ndim();
    for (int k = 0; fits && k < t.ndim(); ++k) fits = k == d || t.shape()[k] == first.shape()[k];
    DP_CHECK(fits, kShapeMismatch,
             "cat: tensors[" << i << "] has shape " << shape_str(t.shape())
                             << " but tensors[0] has " << shape_str(first.shape())
                             << " (they may differ only in dim " << d << ")");
    DP_CHECK(!__builtin_add_overflow(out_shape[d], t.shape()[d], &out_shape[d]), kOutOfRange,
             "cat: the sizes along dim " << d << " add up to more than 2^63 - 1 (at tensors[" << i
                                         << "])");
    sizes.push_back(t.shape()[d]);
    devices.push_back(t.device());
  }
  auto ctx = first.context();
  ctx->check_device(device, "device");
  Tensor out = Tensor::empty(ctx, out_shape, first.dtype(), device);
  const Slab sl = slab_of(out_shape, d);
  const size_t es = first.element_size();
  const size_t out_row = static_cast<size_t>(out_shape[d] * sl.inner) * es;
  // Each piece's copy runs on its own device's worker, so a gather from several GPUs
  // overlaps their copies.
  std::vector<Device> parts;
  std::vector<std::function<void()>> copies;
  size_t offset = 0;
  for (const Tensor& t : tensors) {
    const size_t row = static_cast<size_t>(t.shape()[d] * sl.inner) * es;
    parts.push_back(t.device());
    copies.push_back([&out, &t, offset, out_row, row, rows = static_cast<size_t>(sl.outer)] {
      device_copy_2d(out, offset, out_row, t, 0, row, row, rows);
    });
    offset += row;
  }
  run_per_device(*ctx, parts, copies);
  if (needs_grad(tensors)) {
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : tensors) inputs.push_back(&t);
    set_history(out, make_node<CatBackward>(inputs, device, d, sizes, devices));
  }
  return out;
}

int64_t sum_of_sizes(const std::vector<int64_t>& sizes, const char* prefix, const char* name,
                     Code overflow) {
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    DP_CHECK(sizes[i] >= 0, kInvalidArgument,
             prefix << name << "[" << i << "] = " << sizes[i] << " is negative");
    if (__builtin_add_overflow(total, sizes[i], &total)) {
      throw Error(overflow, std::string(prefix) + name + " sum past 2^63 (at " + name + "[" +
                                std::to_string(i) + "] = " + std::to_string(sizes[i]) + ")");
    }
  }
  return total;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  check_defined(x, "split", "x");
  DP_CHECK(x.ndim() > 0, kShapeMismatch, "split: x is 0-dimensional and cannot be split");
  const int d = wrap_dim(dim, x.ndim(), "split: dim");
  const int64_t total = sum_of_sizes(sizes, "split: ", "sizes", Code::kShapeMismatch);
  DP_CHECK(total == x.shape()[d], kShapeMismatch,
           "split: sizes sum to " << total << " but dim " << d << " of " << shape_str(x.shape())
                                  << " has size " << x.shape()[d]);
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  const Slab sl = slab_of(x.shape(), d);
  const size_t es = x.element_size();
  const size_t in_row = static_cast<size_t>(x.shape()[d] * sl.inner) * es;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    if (d == 0) {
      out.push_back(x.rows(begin, begin + size).detach());
    } else {
      Shape s = x.shape();
      s[d] = size;
      Tensor piece = Tensor::empty(x.context(), s, x.dtype(), x.device());
      const size_t row = static_cast<size_t>(size * sl.inner) * es;
      device_copy_2d(piece, 0, row, x, static_cast<size_t>(begin * sl.inner) * es, in_row, row,
                     static_cast<size_t>(sl.outer));
      out.push_back(piece);
    }
    begin += size;
  }
  if (needs_grad({&x})) {
    auto node = make_node<SplitBackward>({&x}, x.device(), d, x.shape(), sizes);
    for (size_t i = 0; i < out.size(); ++i) set_history(out[i], node, static_cast<uint32_t>(i));
  }
  return out;
}

void fill_unused_pieces(std::vector<Tensor>& grads, const Shape& whole, int64_t dim,
                        const std::vector<int64_t>& sizes, Device device) {
  const Tensor* like = nullptr;
  for (const Tensor& g : grads) {
    if (g.defined()) like = &g;
  }
  DP_CHECK(like, kInternal, "fill_unused_pieces: no piece has a gradient");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) continue;  // (only undefined entries change: `like` stays valid)
    Shape s = whole;
    s[static_cast<size_t>(dim)] = sizes[i];
    grads[i] = zeros(like->context(), s, like->dtype(), device);
  }
}

}  // namespace dp::ops
