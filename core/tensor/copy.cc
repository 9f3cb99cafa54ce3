// Copies between tensors, within a device and across devices.
#include "tensor/copy.h"

#include <algorithm>
#include <cstring>

#include "context/context.h"

namespace dp {

namespace {

// The backend that can reach both devices: the non-CPU one, if any.
Backend& copy_backend(const Context& ctx, Device dst, Device src) {
  if (!dst.is_cpu()) return ctx.backend(dst.type);
  return ctx.backend(src.type);
}

}  // namespace

void device_copy_2d(const Tensor& dst, size_t dst_offset, size_t dst_pitch, const Tensor& src,
                    size_t src_offset, size_t src_pitch, size_t row_bytes, size_t rows) {
  if (rows == 0 || row_bytes == 0) return;
  char* d = static_cast<char*>(dst.data()) + dst_offset;
  const char* s = static_cast<const char*>(src.data()) + src_offset;
  const Device dd = dst.device(), sd = src.device();
  if (dd.is_cpu() && sd.is_cpu()) {
    // CPU devices share the host's memory: no worker needed.
    if (d == s) return;
    if (dst_pitch == row_bytes && src_pitch == row_bytes) {
      std::memcpy(d, s, row_bytes * rows);
    } else {
      for (size_t r = 0; r < rows; ++r)
        std::memcpy(d + r * dst_pitch, s + r * src_pitch, row_bytes);
    }
    return;
  }
  auto ctx = src.context();
  // A worker never waits on another worker: run here if this is either device's worker.
  Device exec = dd.is_cpu() ? sd : dd;
  if (ctx->worker(sd).is_current()) exec = sd;
  if (ctx->worker(dd).is_current()) exec = dd;
  ctx->run(exec, [&] {
    copy_backend(*ctx, dd, sd).copy_2d(exec, dd, d, dst_pitch, sd, s, src_pitch, row_bytes, rows);
  });
}

void copy_bytes(const Tensor& dst, const Tensor& src) {
  const size_t n = src.nbytes();
  device_copy_2d(dst, 0, n, src, 0, n, n, 1);
}

Tensor copy_to_device(const Tensor& t, Device device) {
  auto ctx = t.context();
  ctx->check_device(device, "device");
  Tensor out = Tensor::empty(ctx, t.shape(), t.dtype(), device);
  copy_bytes(out, t);
  return out;
}

void run_per_device(const Context& ctx, const std::vector<Device>& devices,
                    const std::vector<std::function<void()>>& tasks) {
  std::vector<Device> distinct;
  for (Device d : devices) {
    if (!d.is_cpu() && std::find(distinct.begin(), distinct.end(), d) == distinct.end()) {
      distinct.push_back(d);
    }
  }
  if (distinct.size() < 2 || Worker::on_a_worker()) {
    for (const auto& task : tasks) task();
    return;
  }
  TaskGroup group(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) group.submit(i, ctx.worker(devices[i]), tasks[i]);
  for (const std::exception_ptr& e : group.wait()) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace dp
