#include "device/cpu/cpu_backend.h"

#include <sys/sysinfo.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "device/bfloat16.h"
#include "device/convert.h"
#include "device/cpu/cpu_dnnl.h"
#include "device/cpu/cpu_loops.h"
#include "device/cpu/cpu_reference.h"
#include "device/cpu/fault.h"
#include "error.h"

namespace dp {

namespace {

// Calls f(T{}) for the floating dtype of `v`; other dtypes are an error naming `op`.
template <class F>
void by_float(const KView& v, const char* op, F&& f) {
  switch (v.dtype) {
    case DType::kFloat32:
      f(float{});
      return;
    case DType::kFloat64:
      f(double{});
      return;
    default:
      DP_THROW(kDtypeMismatch, op << " needs float32 or float64, got " << dtype_name(v.dtype));
  }
}

bool f32(const KView& v) {
  return v.dtype == DType::kFloat32;
}

// When the dimensions reduced (out has size 1 where x does not) form one contiguous block,
// x is [outer, mid, inner] with mid summed away.
bool reduced_block(const KView& x, const KView& out, int64_t* outer, int64_t* mid, int64_t* inner) {
  int first = -1, last = -1;
  for (int i = 0; i < x.ndim; ++i) {
    if (out.shape[i] == 1 && x.shape[i] != 1) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) return false;
  for (int i = first; i <= last; ++i) {
    if (out.shape[i] != 1) return false;
  }
  *outer = *mid = *inner = 1;
  for (int i = 0; i < first; ++i) *outer *= x.shape[i];
  for (int i = first; i <= last; ++i) *mid *= x.shape[i];
  for (int i = last + 1; i < x.ndim; ++i) *inner *= x.shape[i];
  return true;
}

}  // namespace

CpuBackend::CpuBackend(int devices) {
  devices_.reserve(devices);
  owners_.resize(devices);
  const size_t limit = cpu_cache_limit_bytes();
  for (int i = 0; i < devices; ++i) caches_.push_back(std::make_unique<CpuBlockCache>(limit));
  for (int i = 0; i < devices; ++i) devices_.emplace_back(nullptr, [](dnnl_cpu::DnnlDevice*) {});
}

CpuBackend::~CpuBackend() = default;

std::string CpuBackend::device_name(int dev) const {
  return "cpu:" + std::to_string(dev) + " (virtual CPU device, 1 thread, oneDNN)";
}

void CpuBackend::memory_info(int, uint64_t* free_bytes, uint64_t* total_bytes) const {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) {
    *free_bytes = *total_bytes = 0;
    return;
  }
  *total_bytes = static_cast<uint64_t>(info.totalram) * info.mem_unit;
  *free_bytes = static_cast<uint64_t>(info.freeram + info.bufferram) * info.mem_unit;
}

void CpuBackend::worker_started(int dev) {
  devices_[dev] = dnnl_cpu::make_device();
  owners_[dev] = std::this_thread::get_id();
}

void CpuBackend::worker_stopping(int dev) {
  devices_[dev] = {nullptr, [](dnnl_cpu::DnnlDevice*) {}};
}

namespace {

// The devices whose work this thread runs inline, innermost last.
struct InlineFrame {
  const CpuBackend* backend;
  int dev;
  // The thread's OpenMP limit before this frame set it to 1, or 0 while it has not: a frame
  // sets it when it first reaches a oneDNN path (dnnl()), so that inline work without one (a
  // synchronize, our own loops) skips the two OpenMP calls each way.
  int omp_threads;
};
thread_local std::vector<InlineFrame> tl_inline;

}  // namespace

void CpuBackend::enter_inline(int dev) {
  tl_inline.push_back({this, dev, 0});
}

void CpuBackend::leave_inline() {
  const InlineFrame f = tl_inline.back();
  tl_inline.pop_back();
  if (f.omp_threads != 0) dnnl_cpu::leave_single_thread(f.omp_threads);
}

dnnl_cpu::DnnlDevice& CpuBackend::dnnl(int dev) {
  DP_CHECK(devices_[dev] != nullptr, kInternal, "cpu:" << dev << " has no oneDNN state");
  if (owners_[dev] == std::this_thread::get_id()) return *devices_[dev];
  // Inline on the caller's thread: oneDNN runs this device's kernels single-threaded
  // there too (the limit is per thread).
  DP_CHECK(!tl_inline.empty() && tl_inline.back().backend == this && tl_inline.back().dev == dev,
           kInternal, "cpu:" << dev << " kernel called outside its worker thread");
  InlineFrame& f = tl_inline.back();
  if (f.omp_threads == 0) f.omp_threads = dnnl_cpu::enter_single_thread();
  return *devices_[dev];
}

size_t CpuBackend::primitive_cache_size(int dev) const {
  return devices_[dev] ? dnnl_cpu::cache_size(*devices_[dev]) : 0;
}

void* CpuBackend::allocate(int dev, size_t nbytes) {
  DP_CHECK(!fault::allocation_fails(), kOutOfMemory,
           "cpu:" << dev << " could not allocate " << nbytes << " bytes (injected fault)");
  void* p = caches_[dev]->allocate(nbytes);
  DP_CHECK(p != nullptr, kOutOfMemory,
           "cpu:" << dev << " could not allocate " << nbytes << " bytes");
  return p;
}

void CpuBackend::deallocate(int dev, void* ptr, size_t nbytes) noexcept {
  caches_[dev]->deallocate(ptr, nbytes);
}

void CpuBackend::copy_2d(Device, Device, void* dst, size_t dst_pitch, Device, const void* src,
                         size_t src_pitch, size_t row_bytes, size_t rows) {
  if (rows == 0 || row_bytes == 0 || dst == src) return;
  if (dst_pitch == row_bytes && src_pitch == row_bytes) {
    std::memcpy(dst, src, row_bytes * rows);
    return;
  }
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                static_cast<const char*>(src) + r * src_pitch, row_bytes);
  }
}

void CpuBackend::fill(int, const KView& out, double value) {
  const int64_t n = out.numel();
  switch (out.dtype) {
    case DType::kFloat32:
      std::fill(out.as<float>(), out.as<float>() + n, static_cast<float>(value));
      break;
    case DType::kFloat64:
      std::fill(out.as<double>(), out.as<double>() + n, value);
      break;
    case DType::kInt64:
      std::fill(out.as<int64_t>(), out.as<int64_t>() + n, static_cast<int64_t>(value));
      break;
    case DType::kBFloat16:
      std::fill(out.as<BFloat16>(), out.as<BFloat16>() + n, BFloat16(static_cast<float>(value)));
      break;
    case DType::kUInt8:
      std::memset(out.data, static_cast<int>(value), n);
      break;
  }
}

namespace {
template <class To>
void cast_to(const KView& x, To* out) {
  const int64_t n = x.numel();
  switch (x.dtype) {
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i) out[i] = convert_element<To>(x.as<float>()[i]);
      break;
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) out[i] = convert_element<To>(x.as<double>()[i]);
      break;
    case DType::kInt64:
      for (int64_t i = 0; i < n; ++i) out[i] = convert_element<To>(x.as<int64_t>()[i]);
      break;
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) out[i] = convert_element<To>(x.as<BFloat16>()[i]);
      break;
    case DType::kUInt8:
      for (int64_t i = 0; i < n; ++i) out[i] = convert_element<To>(x.as<uint8_t>()[i]);
      break;
  }
}
}  // namespace

void CpuBackend::cast(int, const KView& x, const KView& out) {
  // The conversions bfloat16 staging runs (device/bf16_staging.h), in vector loops.
  if (x.dtype == DType::kBFloat16 && out.dtype == DType::kFloat32) {
    return cpu_loops::bf16_to_float(x.as<uint16_t>(), out.as<float>(), x.numel());
  }
  if (x.dtype == DType::kFloat32 && out.dtype == DType::kBFloat16) {
    return cpu_loops::float_to_bf16(x.as<float>(), out.as<uint16_t>(), x.numel());
  }
  switch (out.dtype) {
    case DType::kFloat32:
      cast_to(x, out.as<float>());
      break;
    case DType::kFloat64:
      cast_to(x, out.as<double>());
      break;
    case DType::kInt64:
      cast_to(x, out.as<int64_t>());
      break;
    case DType::kBFloat16:
      cast_to(x, out.as<BFloat16>());
      break;
    case DType::kUInt8:
      cast_to(x, out.as<uint8_t>());
      break;
  }
}

namespace {

bool same_shape(const KView& x, const KView& y) {
  if (x.ndim != y.ndim) return false;
  for (int d = 0; d < x.ndim; ++d) {
    if (x.shape[d] != y.shape[d]) return false;
  }
  return true;
}

// True when the byte ranges of x and y are the same or do not meet.
bool same_or_apart(const KView& x, const KView& y) {
  const auto* xb = static_cast<const char*>(x.data);
  const auto* yb = static_cast<const char*>(y.data);
  const int64_t xn = x.numel() * static_cast<int64_t>(dtype_size(x.dtype));
  const int64_t yn = y.numel() * static_cast<int64_t>(dtype_size(y.dtype));
  return xb == yb || xb + xn <= yb || yb + yn <= xb;
}

}  // namespace

void CpuBackend::binary(int dev, BinaryOp op, const KView& a, const KView& b, const KView& out) {
  if (f32(out) && f32(a) && f32(b) && same_shape(a, out) && same_shape(b, out) &&
      same_or_apart(a, out) && same_or_apart(b, out)) {
    return cpu_loops::binary_same_shape(op, a.as<float>(), b.as<float>(), out.as<float>(),
                                        out.numel());
  }
  if (f32(out) && dnnl_cpu::binary(dnnl(dev), op, a, b, out)) return;
  if (out.dtype == DType::kInt64) {
    // Integer arithmetic wraps around (computed unsigned: signed overflow is undefined);
    // integer division has no such reading, and a zero divisor would be undefined.
    DP_CHECK(op != BinaryOp::kDiv, kDtypeMismatch,
             "div: int64 division is not supported (divide floating-point tensors)");
    return ref::binary<uint64_t>(op, a, b, out);
  }
  by_float(out, "binary op", [&](auto t) { ref::binary<decltype(t)>(op, a, b, out); });
}

void CpuBackend::affine(int dev, const KView& x, const KView& out, double alpha, double beta) {
  if (f32(out) && dnnl_cpu::affine(dnnl(dev), x, out, alpha, beta)) return;
  by_float(out, "affine", [&](auto t) { ref::affine<decltype(t)>(x, out, alpha, beta); });
}

// oneDNN 2.6's float32 log (eltwise_log and inside softmax_log) is off by up to ~60 ulp
// near 1 (log(1.0001f) = 9.86e-5 instead of 1.0e-4), which log_softmax and cross entropy
// inherit; the C library's logf is within an ulp, so log and log_softmax use it.
void CpuBackend::unary(int dev, UnaryOp op, const KView& x, const KView& out) {
  // oneDNN's exp gives +inf for NaN (and log is not among its fast kernels here).
  if (f32(out) && op != UnaryOp::kLog && op != UnaryOp::kExp &&
      dnnl_cpu::unary(dnnl(dev), op, x, out)) {
    return;
  }
  by_float(out, "unary op", [&](auto t) { ref::unary<decltype(t)>(op, x, out); });
}

void CpuBackend::unary_backward(int dev, UnaryOp op, const KView& gy, const KView& saved,
                                const KView& gx) {
  if (op == UnaryOp::kRelu && gx.dtype == DType::kBFloat16) {  // runs_bf16(kReluBackward)
    DP_CHECK(gy.dtype == DType::kBFloat16 && saved.dtype == DType::kBFloat16, kDtypeMismatch,
             "relu backward on bfloat16 needs bfloat16 gradient and input, got "
                 << dtype_name(gy.dtype) << " and " << dtype_name(saved.dtype));
    // The reference's gy * relu'(x) on the widened values: a product by 0 or 1, so the
    // rounding back is exact and there is nothing to stage.
    cpu_loops::relu_backward_bf16(gy.as<uint16_t>(), saved.as<uint16_t>(), gx.as<uint16_t>(),
                                  gx.numel());
    return;
  }
  if (f32(gx) && dnnl_cpu::unary_backward(dnnl(dev), op, gy, saved, gx)) return;
  by_float(gx, "unary backward",
           [&](auto t) { ref::unary_backward<decltype(t)>(op, gy, saved, gx); });
}

void CpuBackend::reduce_sum(int dev, const KView& x, const KView& out) {
  int64_t outer, mid, inner;
  if (f32(out) && x.numel() > 0 && reduced_block(x, out, &outer, &mid, &inner)) {
    // oneDNN 2.6 runs these (bias gradients, losses) on its slow reference kernel.
    return cpu_loops::sum_middle(x.as<float>(), out.as<float>(), outer, mid, inner);
  }
  if (f32(out) && dnnl_cpu::reduce_sum(dnnl(dev), x, out)) return;
  if (out.dtype == DType::kInt64) return ref::reduce_sum<int64_t>(x, out);
  by_float(out, "sum", [&](auto t) { ref::reduce_sum<decltype(t)>(x, out); });
}

void CpuBackend::argmax(int, const KView& x, int dim, const KView& out) {
  by_float(x, "argmax", [&](auto t) { ref::argmax<decltype(t)>(x, dim, out); });
}

bool CpuBackend::runs_bf16(Bf16Kernel kernel, int) const {
  // ReLU's backward is a loop of our own on any CPU; matmul (into bfloat16 or float32), the
  // three convolutions and the conv + ReLU + pool block are oneDNN's bfloat16 primitives
  // where the CPU has them.
  return kernel == Bf16Kernel::kReluBackward || dnnl_cpu::bf16_native();
}

bool CpuBackend::bf16_native(int) const {
  return dnnl_cpu::bf16_native();
}

const char* CpuBackend::bf16_not_native_reason(int) const {
  return dnnl_cpu::bf16_forced_fp32() ? "runs bfloat16 in float32 (DP_CPU_BF16=fp32)"
                                      : "has no native bfloat16 (AVX512-BF16 or AMX)";
}

void CpuBackend::matmul(int dev, const KView& a, const KView& b, const KView* bias,
                        const KView& out, const MatmulParams& p) {
  // float32, or bfloat16 a and b into float32 (Bf16Kernel::kMatmulIntoFloat32).
  if (f32(out) && dnnl_cpu::matmul(dnnl(dev), a, b, bias, out, p)) return;
  if (a.dtype == DType::kBFloat16 || out.dtype == DType::kBFloat16) {  // native bfloat16
    if (out.dtype == DType::kBFloat16 && dnnl_cpu::matmul(dnnl(dev), a, b, bias, out, p)) return;
    // K = 0 (oneDNN is not asked): out = relu((accumulate ? out : 0) + bias).
    const int64_t cols = out.shape[out.ndim - 1];
    auto bias_at = [&](int64_t j) {
      return bias->dtype == DType::kBFloat16 ? static_cast<float>(bias->as<BFloat16>()[j])
                                             : bias->as<float>()[j];
    };
    auto fill = [&](auto* o) {
      using T = std::remove_pointer_t<decltype(o)>;
      for (int64_t i = 0, n = out.numel(); i < n; ++i) {
        float v = p.accumulate ? static_cast<float>(o[i]) : 0.f;
        if (bias) v += bias_at(i % cols);
        o[i] = T(p.relu && !(v > 0) && v == v ? 0.f : v);
      }
    };
    if (out.dtype == DType::kBFloat16) {
      fill(out.as<BFloat16>());
    } else {
      fill(out.as<float>());
    }
    return;
  }
  by_float(out, "matmul", [&](auto t) { ref::matmul<decltype(t)>(a, b, bias, out, p); });
}

void CpuBackend::softmax(int dev, const KView& x, int dim, bool log, const KView& out) {
  if (f32(out) && !log && dnnl_cpu::softmax(dnnl(dev), x, dim, log, out)) return;
  if (f32(out) && log && dim == x.ndim - 1) {
    const int64_t cols = x.shape[dim];
    if (cols > 0)
      cpu_loops::log_softmax_rows(x.as<float>(), out.as<float>(), x.numel() / cols, cols);
    return;
  }
  by_float(out, "softmax", [&](auto t) { ref::softmax<decltype(t)>(x, dim, log, out); });
}

void CpuBackend::softmax_backward(int dev, const KView& gy, const KView& y, int dim, bool log,
                                  const KView& gx) {
  if (f32(gx) && !log && dnnl_cpu::softmax_backward(dnnl(dev), gy, y, dim, log, gx)) return;
  if (f32(gx) && log && dim == y.ndim - 1 && gx.data != gy.data && gx.data != y.data) {
    const int64_t cols = y.shape[dim];
    if (cols > 0) {
      cpu_loops::log_softmax_backward_rows(gy.as<float>(), y.as<float>(), gx.as<float>(),
                                           y.numel() / cols, cols);
    }
    return;
  }
  by_float(gx, "softmax backward",
           [&](auto t) { ref::softmax_backward<decltype(t)>(gy, y, dim, log, gx); });
}

// bfloat16 convolutions (runs_bf16: a CPU with native bfloat16) are oneDNN's; it declines
// only empty ones, whose results are fills: the bias where nothing is summed, zeros, and a
// bias gradient summed in float32.
namespace {

void fill_bf16(const KView& v, float value) {
  BFloat16* p = v.as<BFloat16>();
  std::fill(p, p + v.numel(), BFloat16(value));
}

// y[n, o, :, :] = relu?(bias[o]) (or 0): a convolution over zero input channels.
void bf16_conv_of_nothing(const KView* bias, const KView& y, bool relu) {
  const int64_t plane = y.shape[2] * y.shape[3];
  BFloat16* out = y.as<BFloat16>();
  for (int64_t n = 0; n < y.shape[0]; ++n) {
    for (int64_t o = 0; o < y.shape[1]; ++o) {
      float v = bias ? static_cast<float>(bias->as<BFloat16>()[o]) : 0.f;
      if (relu && !(v > 0) && v == v) v = 0.f;
      std::fill(out, out + plane, BFloat16(v));
      out += plane;
    }
  }
}

void bf16_bias_gradient(const KView& gy, const KView& gbias) {
  const int64_t plane = gy.shape[2] * gy.shape[3];
  for (int64_t o = 0; o < gbias.numel(); ++o) {
    float sum = 0.f;
    for (int64_t n = 0; n < gy.shape[0]; ++n) {
      const BFloat16* g = gy.as<BFloat16>() + (n * gy.shape[1] + o) * plane;
      for (int64_t i = 0; i < plane; ++i) sum += static_cast<float>(g[i]);
    }
    gbias.as<BFloat16>()[o] = BFloat16(sum);
  }
}

bool bf16(const KView& v) {
  return v.dtype == DType::kBFloat16;
}

}  // namespace

void CpuBackend::conv2d(int dev, const KView& x, const KView& w, const KView* bias, const KView& y,
                        const Conv2dParams& p) {
  if ((f32(y) || bf16(y)) && dnnl_cpu::conv2d(dnnl(dev), x, w, bias, y, p)) return;
  if (bf16(y)) return bf16_conv_of_nothing(bias, y, p.relu);
  by_float(y, "conv2d", [&](auto t) { ref::conv2d<decltype(t)>(x, w, bias, y, p); });
}

void CpuBackend::conv2d_backward_data(int dev, const KView& gy, const KView& w, const KView& gx,
                                      const Conv2dParams& p) {
  if ((f32(gx) || bf16(gx)) && dnnl_cpu::conv2d_backward_data(dnnl(dev), gy, w, gx, p)) return;
  if (bf16(gx)) return fill_bf16(gx, 0.f);
  by_float(gx, "conv2d backward",
           [&](auto t) { ref::conv2d_backward_data<decltype(t)>(gy, w, gx, p); });
}

void CpuBackend::conv2d_backward_weights(int dev, const KView& x, const KView& gy, const KView& gw,
                                         const KView* gbias, const Conv2dParams& p) {
  if ((f32(gw) || bf16(gw)) && dnnl_cpu::conv2d_backward_weights(dnnl(dev), x, gy, gw, gbias, p))
    return;
  if (bf16(gw)) {
    fill_bf16(gw, 0.f);
    if (gbias) bf16_bias_gradient(gy, *gbias);
    return;
  }
  by_float(gw, "conv2d backward",
           [&](auto t) { ref::conv2d_backward_weights<decltype(t)>(x, gy, gw, gbias, p); });
}

size_t CpuBackend::conv_relu_pool_state_bytes(int dev, const KView& x, const KView& w, bool bias,
                                              const KView& y, const KView& z,
                                              const Conv2dParams& cp, const Pool2dParams& pp) {
  return dnnl_cpu::conv_relu_pool_state_bytes(dnnl(dev), x, w, bias, y, z, cp, pp);
}

void CpuBackend::conv_relu_pool(int dev, const KView& x, const KView& w, const KView* bias,
                                const KView& y, const KView& z, void* state, const Conv2dParams& cp,
                                const Pool2dParams& pp) {
  DP_CHECK(dnnl_cpu::conv_relu_pool(dnnl(dev), x, w, bias, y, z, state, cp, pp), kInternal,
           "conv_relu_pool: unsupported tensors (state_bytes was 0)");
}

void CpuBackend::conv_relu_pool_backward(int dev, const KView& gz, const KView& x, const KView& w,
                                         const KView& y, const KView& z, const void* state,
                                         const KView* gx, const KView& gw, const KView* gbias,
                                         const Conv2dParams& cp, const Pool2dParams& pp) {
  DP_CHECK(
      dnnl_cpu::conv_relu_pool_backward(dnnl(dev), gz, x, w, y, z, state, gx, gw, gbias, cp, pp),
      kInternal, "conv_relu_pool_backward: unsupported tensors");
}

namespace {

// oneDNN pads max pooling with -FLT_MAX, not -inf: a window of -inf inputs and padding
// gives -FLT_MAX and drops the inputs' gradient. Padded max pooling takes the reference
// loop, where padding never wins. (All three entry points below decide alike.)
bool dnnl_pools(const Pool2dParams& p) {
  return p.kind != PoolKind::kMax || (p.pad_h == 0 && p.pad_w == 0);
}

}  // namespace

size_t CpuBackend::pool2d_workspace_bytes(int dev, const KView& x, const KView& y,
                                          const Pool2dParams& p) {
  if (p.kind != PoolKind::kMax) return 0;
  if (f32(x) && dnnl_pools(p)) {
    const size_t bytes = dnnl_cpu::pool2d_workspace_bytes(dnnl(dev), x, y, p);
    if (bytes > 0 || y.numel() == 0) return bytes;
  }
  return static_cast<size_t>(y.numel()) * sizeof(int64_t);  // the reference's indices
}

// float32 max pooling keeps oneDNN's workspace; the reference path (float64, and float32
// shapes oneDNN declines) keeps int64 indices. Both sides decide the same way, so
// pool2d_backward reads what pool2d wrote.
void CpuBackend::pool2d(int dev, const KView& x, const KView& y, void* workspace,
                        const Pool2dParams& p) {
  if (f32(y) && dnnl_pools(p) && dnnl_cpu::pool2d(dnnl(dev), x, y, workspace, p)) return;
  by_float(y, "pool2d",
           [&](auto t) { ref::pool2d<decltype(t)>(x, y, static_cast<int64_t*>(workspace), p); });
}

void CpuBackend::pool2d_backward(int dev, const KView& gy, const KView& x, const void* workspace,
                                 const KView& gx, const Pool2dParams& p) {
  if (f32(gx) && dnnl_pools(p) && dnnl_cpu::pool2d_backward(dnnl(dev), gy, x, workspace, gx, p)) {
    return;
  }
  by_float(gx, "pool2d backward", [&](auto t) {
    ref::pool2d_backward<decltype(t)>(gy, gx, static_cast<const int64_t*>(workspace), p);
  });
}

void CpuBackend::batch_norm(int dev, const KView& x, const KView& gamma, const KView& beta,
                            const KView& mean, const KView& var, const KView& y, double eps,
                            bool training) {
  if (f32(y) && dnnl_cpu::batch_norm(dnnl(dev), x, gamma, beta, mean, var, y, eps, training)) {
    return;
  }
  by_float(y, "batch_norm", [&](auto t) {
    ref::batch_norm<decltype(t)>(x, gamma, beta, mean, var, y, eps, training);
  });
}

void CpuBackend::batch_norm_backward(int dev, const KView& gy, const KView& x, const KView& gamma,
                                     const KView& mean, const KView& var, const KView& gx,
                                     const KView& ggamma, const KView& gbeta, double eps) {
  if (f32(gx) &&
      dnnl_cpu::batch_norm_backward(dnnl(dev), gy, x, gamma, mean, var, gx, ggamma, gbeta, eps)) {
    return;
  }
  by_float(gx, "batch_norm backward", [&](auto t) {
    ref::batch_norm_backward<decltype(t)>(gy, x, gamma, mean, var, gx, ggamma, gbeta, eps);
  });
}

void CpuBackend::dropout_mask(int, const KView& mask, double p, uint64_t seed) {
  by_float(mask, "dropout", [&](auto t) { ref::dropout_mask<decltype(t)>(mask, p, seed); });
}

void CpuBackend::embedding(int, const KView& idx, const KView& weight, const KView& out) {
  const int64_t rows = weight.shape[0], dim = weight.shape[1];
  const int64_t* pi = idx.as<int64_t>();
  const size_t row_bytes = static_cast<size_t>(dim) * dtype_size(weight.dtype);
  for (int64_t i = 0, n = idx.numel(); i < n; ++i) {
    DP_CHECK(pi[i] >= 0 && pi[i] < rows, kOutOfRange,
             "embedding index[" << i << "] = " << pi[i] << " is outside [0, " << rows << ")");
    std::memcpy(static_cast<char*>(out.data) + i * row_bytes,
                static_cast<const char*>(weight.data) + pi[i] * row_bytes, row_bytes);
  }
}

void CpuBackend::embedding_backward(int, const KView& idx, const KView& gy, const KView& gw) {
  const int64_t dim = gw.shape[1];
  const int64_t* pi = idx.as<int64_t>();
  by_float(gw, "embedding backward", [&](auto t) {
    using T = decltype(t);
    for (int64_t i = 0, n = idx.numel(); i < n; ++i) {
      T* dst = gw.as<T>() + pi[i] * dim;
      const T* src = gy.as<T>() + i * dim;
      for (int64_t j = 0; j < dim; ++j) dst[j] += src[j];
    }
  });
}

void CpuBackend::nll_loss(int, const KView& logp, const KView& target, const KView& out) {
  const int64_t N = logp.shape[0], C = logp.shape[1];
  const int64_t* pt = target.as<int64_t>();
  for (int64_t i = 0; i < N; ++i) {
    DP_CHECK(pt[i] >= 0 && pt[i] < C, kOutOfRange,
             "target[" << i << "] = " << pt[i] << " is not a class index in [0, " << C << ")");
  }
  by_float(out, "cross_entropy", [&](auto t) {
    using T = decltype(t);
    double sum = 0;  // accumulate in double: N can be large
    for (int64_t i = 0; i < N; ++i) sum += logp.as<T>()[i * C + pt[i]];
    out.as<T>()[0] =
        N > 0 ? static_cast<T>(-sum / static_cast<double>(N)) : std::numeric_limits<T>::quiet_NaN();
  });
}

void CpuBackend::nll_loss_backward(int, const KView& grad_out, const KView& target,
                                   const KView& grad_logp) {
  const int64_t N = grad_logp.shape[0], C = grad_logp.shape[1];
  const int64_t* pt = target.as<int64_t>();
  by_float(grad_logp, "cross_entropy backward", [&](auto t) {
    using T = decltype(t);
    T* g = grad_logp.as<T>();
    std::fill(g, g + N * C, T(0));
    const T v = -grad_out.as<T>()[0] / static_cast<T>(N);
    for (int64_t i = 0; i < N; ++i) g[i * C + pt[i]] = v;
  });
}

void CpuBackend::sgd_step(int, const KView& param, const KView& grad, const KView* buf,
                          const SgdParams& p) {
  if (f32(param)) {
    return cpu_loops::sgd(param.as<float>(), grad.as<float>(), buf ? buf->as<float>() : nullptr,
                          param.numel(), p);
  }
  by_float(param, "sgd", [&](auto t) { ref::sgd_step<decltype(t)>(param, grad, buf, p); });
}

void CpuBackend::adam_step(int, const KView& param, const KView& grad, const KView& m,
                           const KView& v, const AdamParams& p) {
  if (f32(param)) {
    return cpu_loops::adam(param.as<float>(), grad.as<float>(), m.as<float>(), v.as<float>(),
                           param.numel(), p);
  }
  by_float(param, "adam", [&](auto t) { ref::adam_step<decltype(t)>(param, grad, m, v, p); });
}

}  // namespace dp
