#include "parallel/comm.h"

#include <algorithm>

#include "context/context.h"
#include "error.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "parallel/alias_read_guard.h"
#include "tensor/copy.h"

namespace dp::comm {

namespace {

bool both_cpu(Device a, Device b) {
  return a.is_cpu() && b.is_cpu();
}

// A view of `bucket` (1-D) at element `offset` with `shape`.
Tensor view_into(const Tensor& bucket, int64_t offset, const Shape& shape) {
  auto impl = std::make_shared<TensorImpl>(bucket.impl()->storage, bucket.impl()->offset + offset,
                                           shape, bucket.dtype());
  return Tensor(std::move(impl));
}

}  // namespace

bool aliased_by_another_device(Device src, const std::vector<Device>& devices, bool alias_cpu) {
  return alias_cpu && std::any_of(devices.begin(), devices.end(),
                                  [&](Device d) { return d != src && both_cpu(d, src); });
}

Tensor alias_on(const Tensor& t, Device device) {
  DP_CHECK(both_cpu(t.device(), device), kInternal,
           "alias_on: " << t.device().str() << " -> " << device.str() << " is not CPU to CPU");
  if (t.device() == device) return t.detach();
  Tensor alias = t.on_cpu_device(device);
  alias.impl()->read_only_reason = parallel::kWriteThroughAlias;
  return alias;
}

Tensor with_own_version(const Tensor& t) {
  if (!t.defined()) return t;
  std::shared_ptr<Storage> bucket = t.impl()->storage;
  // "Adopted" memory whose deleter frees nothing: it holds the bucket until this storage
  // goes.
  auto storage = std::make_shared<Storage>(bucket->context(), t.device(), t.data(), t.nbytes(),
                                           [bucket](void*) {});
  auto impl = std::make_shared<TensorImpl>(std::move(storage), 0, t.shape(), t.dtype());
  return Tensor(std::move(impl));
}

std::vector<std::vector<Tensor>> broadcast_coalesced(const std::vector<Tensor>& tensors,
                                                     const std::vector<Device>& devices,
                                                     size_t bucket_bytes, bool alias_cpu) {
  std::vector<std::vector<Tensor>> out(devices.size());
  if (tensors.empty()) return out;
  const Device src = tensors[0].device();
  for (size_t j = 0; j < tensors.size(); ++j) {
    DP_CHECK(tensors[j].device() == src, kDeviceMismatch,
             "broadcast: tensors[" << j << "] is on " << tensors[j].device().str()
                                   << " but tensors[0] is on " << src.str());
  }
  auto ctx = tensors[0].context();

  // Buckets: runs of tensors of one dtype, about bucket_bytes each.
  struct Bucket {
    DType dtype;
    std::vector<size_t> members;
    int64_t numel = 0;
  };
  std::vector<Bucket> buckets;
  for (size_t j = 0; j < tensors.size(); ++j) {
    const Tensor& t = tensors[j];
    if (buckets.empty() || buckets.back().dtype != t.dtype() ||
        (buckets.back().numel > 0 &&
         static_cast<size_t>(buckets.back().numel) * t.element_size() + t.nbytes() >
             bucket_bytes)) {
      buckets.push_back({t.dtype(), {}, 0});
    }
    buckets.back().members.push_back(j);
    buckets.back().numel += t.numel();
  }

  // The devices that need real copies. When other CPU devices alias the source's memory,
  // the source device's own copy (a view) is read-only as theirs are: a write through it
  // would reach them.
  const bool aliased = aliased_by_another_device(src, devices, alias_cpu);
  std::vector<size_t> copy_to;
  for (size_t d = 0; d < devices.size(); ++d) {
    const Device dev = devices[d];
    if (dev == src) {
      for (const Tensor& t : tensors) {
        out[d].push_back(t.detach());
        if (aliased) out[d].back().impl()->read_only_reason = parallel::kWriteThroughAlias;
      }
    } else if (alias_cpu && both_cpu(dev, src)) {
      for (const Tensor& t : tensors) out[d].push_back(alias_on(t, dev));
    } else {
      out[d].resize(tensors.size());
      copy_to.push_back(d);
    }
  }
  if (copy_to.empty()) return out;

  for (const Bucket& b : buckets) {
    // Pack on the source device.
    Tensor packed = Tensor::empty(ctx, {b.numel}, b.dtype, src);
    int64_t offset = 0;
    for (size_t j : b.members) {
      const Tensor& t = tensors[j];
      device_copy_2d(packed, offset * t.element_size(), t.nbytes(), t, 0, t.nbytes(), t.nbytes(),
                     1);
      offset += t.numel();
    }
    // One transfer per destination: a collective when the backend has one.
    std::vector<Tensor> received(copy_to.size());
    for (size_t k = 0; k < copy_to.size(); ++k) {
      received[k] = Tensor::empty(ctx, {b.numel}, b.dtype, devices[copy_to[k]]);
    }
    bool done = false;
    if (!src.is_cpu()) {
      bool same_type = true;
      for (size_t d : copy_to) same_type = same_type && devices[d].type == src.type;
      if (same_type) {
        std::vector<int> devs{src.index};
        std::vector<void*> buffers{packed.data()};
        for (size_t k = 0; k < copy_to.size(); ++k) {
          devs.push_back(devices[copy_to[k]].index);
          buffers.push_back(received[k].data());
        }
        done = ctx->backend(src.type).broadcast(devs, buffers, packed.nbytes(), 0);
      }
    }
    if (!done) {
      for (const Tensor& r : received) {
        device_copy_2d(r, 0, r.nbytes(), packed, 0, packed.nbytes(), packed.nbytes(), 1);
      }
    }
    // Unpack: views into the received buckets.
    for (size_t k = 0; k < copy_to.size(); ++k) {
      int64_t off = 0;
      for (size_t j : b.members) {
        out[copy_to[k]][j] = view_into(received[k], off, tensors[j].shape());
        off += tensors[j].numel();
      }
    }
  }
  return out;
}

Tensor reduce_add(const std::vector<Tensor>& inputs, Device device) {
  std::vector<Tensor> present;
  for (const Tensor& t : inputs) {
    if (t.defined()) present.push_back(t);
  }
  if (present.empty()) return Tensor();
  for (size_t i = 1; i < present.size(); ++i) {
    DP_CHECK(present[i].shape() == present[0].shape() && present[i].dtype() == present[0].dtype(),
             kShapeMismatch,
             "reduce_add: inputs differ: " << shape_str(present[0].shape()) << " "
                                           << dtype_name(present[0].dtype()) << " and "
                                           << shape_str(present[i].shape()) << " "
                                           << dtype_name(present[i].dtype()));
  }
  auto ctx = present[0].context();
  bool all_cpu = device.is_cpu();
  for (const Tensor& t : present) all_cpu = all_cpu && t.device().is_cpu();
  if (present.size() == 1) {
    const Tensor& t = present[0];
    if (t.device() == device) return t;
    return all_cpu ? alias_on(t, device) : ops::to_device(t.detach(), device);
  }
  if (!all_cpu) {
    // A collective when every input is on a distinct device of one accelerator type.
    bool same = !device.is_cpu();
    std::vector<int> devs;
    std::vector<const void*> send;
    size_t root = 0;
    for (size_t i = 0; i < present.size(); ++i) {
      same = same && present[i].device().type == device.type;
      for (int d : devs) same = same && d != present[i].device().index;
      devs.push_back(present[i].device().index);
      send.push_back(present[i].data());
      if (present[i].device() == device) root = i;
    }
    if (same && present[root].device() == device) {
      Tensor out = Tensor::empty(ctx, present[0].shape(), present[0].dtype(), device);
      if (ctx->backend(device.type)
              .reduce_sum(devs, send, out.data(), out.numel(), out.dtype(), root)) {
        return out;
      }
    }
  }
  // CPU devices read each other's memory directly; others are copied to `device` first.
  std::vector<Tensor> local;
  for (const Tensor& t : present) {
    local.push_back(all_cpu || t.device() == device ? t : ops::to_device(t.detach(), device));
  }
  return ctx->run(device, [&] {
    Backend& b = ctx->backend(device.type);
    Tensor out = Tensor::empty(ctx, local[0].shape(), local[0].dtype(), device);
    if (out.numel() == 0) return out;
    b.binary(device.index, BinaryOp::kAdd, local[0].kview(), local[1].kview(), out.kview());
    for (size_t i = 2; i < local.size(); ++i) {
      b.binary(device.index, BinaryOp::kAdd, out.kview(), local[i].kview(), out.kview());
    }
    return out;
  });
}

std::vector<Tensor> reduce_add_coalesced(const std::vector<std::vector<Tensor>>& per_device,
                                         Device device) {
  if (per_device.empty()) return {};
  const size_t n = per_device[0].size();
  std::vector<Tensor> out(n);
  std::vector<Tensor> column(per_device.size());
  for (size_t j = 0; j < n; ++j) {
    for (size_t d = 0; d < per_device.size(); ++d) column[d] = per_device[d][j];
    out[j] = reduce_add(column, device);
  }
  return out;
}

std::vector<int64_t> chunk_sizes(int64_t size, int64_t n) {
  DP_CHECK(n > 0, kInvalidArgument, "chunk count n = " << n << " must be positive");
  if (size == 0) return std::vector<int64_t>(static_cast<size_t>(n), 0);
  const int64_t chunk = size / n + (size % n != 0 ? 1 : 0);  // ceil, without overflow
  std::vector<int64_t> out;
  for (int64_t begin = 0; begin < size;) {
    const int64_t c = std::min(chunk, size - begin);
    out.push_back(c);
    begin += c;  // never past size
  }
  return out;
}

std::vector<Tensor> scatter(const Tensor& x, const std::vector<Device>& devices,
                            const std::vector<int64_t>& sizes, int dim, bool alias_cpu) {
  DP_CHECK(sizes.size() <= devices.size(), kInvalidArgument,
           "scatter: " << sizes.size() << " chunks for " << devices.size() << " devices");
  const Tensor src = x.detach();
  std::vector<Tensor> pieces;
  if (dim == 0) {
    int64_t begin = 0;
    for (int64_t s : sizes) {
      pieces.push_back(src.rows(begin, begin + s));
      begin += s;
    }
  } else {
    pieces = ops::split(src, sizes, dim);
  }
  std::vector<Tensor> out(pieces.size());
  std::vector<Device> targets;  // the copies, each run on its target's worker
  std::vector<std::function<void()>> copies;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Device d = devices[i];
    if (d == x.device()) {
      out[i] = pieces[i];
    } else if (alias_cpu && both_cpu(d, x.device())) {
      out[i] = alias_on(pieces[i], d);
    } else {
      targets.push_back(d);
      copies.push_back([&out, &pieces, i, d] { out[i] = ops::to_device(pieces[i], d); });
    }
  }
  run_per_device(*x.context(), targets, copies);
  return out;
}

Tensor gather(const std::vector<Tensor>& tensors, Device device, int dim) {
  std::vector<Tensor> detached;
  for (const Tensor& t : tensors) detached.push_back(t.detach());
  return ops::cat(detached, dim, device);
}

}  // namespace dp::comm
