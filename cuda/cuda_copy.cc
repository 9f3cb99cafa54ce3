// Copies between the host and CUDA devices and between CUDA devices. They run on the copy
// stream of the device whose worker executes them, ordered against the compute streams
// of both ends with events: the copy waits for the work queued on them so far, and they
// wait for the copy before anything queued after it (a kernel reading the data, a free
// of the source).
#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_backend.h"
#include "cuda_errors.h"

namespace dp::cuda_plugin {

namespace {

cudaError_t memcpy_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                      size_t row_bytes, size_t rows, cudaMemcpyKind kind, cudaStream_t s) {
  if (rows == 1 || (dst_pitch == row_bytes && src_pitch == row_bytes)) {
    return cudaMemcpyAsync(dst, src, row_bytes * rows, kind, s);
  }
  if (dst_pitch <= INT_MAX && src_pitch <= INT_MAX) {
    return cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, kind, s);
  }
  // Pitches beyond what the 2-D copy accepts: one copy per row.
  for (size_t r = 0; r < rows; ++r) {
    const cudaError_t e =
        cudaMemcpyAsync(static_cast<char*>(dst) + r * dst_pitch,
                        static_cast<const char*>(src) + r * src_pitch, row_bytes, kind, s);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// Page-locked host memory (cudaMallocHost, cudaHostRegister): the DMA reads it after the
// call returns, unlike pageable memory, which CUDA stages before returning.
bool is_page_locked(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

// Copies from pageable host memory of at least kStagedMin bytes go through the device's
// two page-locked slots of kSlotBytes (CudaDevice::Staging): the host fills one slot
// while the DMA engine empties the other. For a 1 GiB scatter this ran at 14 GB/s where
// the driver's own staging of pageable memory (cudaMemcpy) ran at 7.6 (H200).
constexpr size_t kSlotBytes = size_t{8} << 20;
constexpr size_t kStagedMin = size_t{1} << 20;

// Part of a staged copy: `rows` rows of `bytes` each, packed back to back in a slot.
struct Piece {
  size_t dst_offset, src_offset;  // of its first row
  size_t bytes, rows;
};

// Splits rows x row_bytes (rows *_pitch apart) into pieces that fit a slot: whole rows
// where a row fits, otherwise each row in slot-sized parts.
std::vector<Piece> pieces_of(size_t dst_pitch, size_t src_pitch, size_t row_bytes, size_t rows) {
  if (rows > 1 && dst_pitch == row_bytes && src_pitch == row_bytes) {  // one contiguous run
    row_bytes *= rows;
    rows = 1;
  }
  std::vector<Piece> out;
  if (row_bytes <= kSlotBytes) {
    const size_t per = kSlotBytes / row_bytes;
    for (size_t r = 0; r < rows; r += per) {
      out.push_back({r * dst_pitch, r * src_pitch, row_bytes, std::min(per, rows - r)});
    }
  } else {
    for (size_t r = 0; r < rows; ++r) {
      for (size_t b = 0; b < row_bytes; b += kSlotBytes) {
        out.push_back(
            {r * dst_pitch + b, r * src_pitch + b, std::min(kSlotBytes, row_bytes - b), 1});
      }
    }
  }
  return out;
}

std::string bytes_text(size_t row_bytes, size_t rows) {
  return std::to_string(row_bytes * rows) + " bytes";
}

}  // namespace

void CudaBackend::stream_wait(const CudaDevice& p, cudaStream_t producer_stream,
                              cudaStream_t consumer, const std::string& where) {
  EventPool& pool = *events_[p.gpu];
  struct Lease {
    EventPool& pool;
    cudaEvent_t ev;
    ~Lease() { pool.release(ev); }
  } lease{pool, pool.acquire(where)};
  {
    DeviceGuard guard(p.gpu);  // an event is recorded on a stream of its own GPU
    check_cuda(host_, where, cudaEventRecord(lease.ev, producer_stream), "cudaEventRecord");
  }
  check_cuda(host_, where, cudaStreamWaitEvent(consumer, lease.ev, 0), "cudaStreamWaitEvent");
}

void CudaBackend::copy_2d(Device exec, Device dst_dev, void* dst, size_t dst_pitch, Device src_dev,
                          const void* src, size_t src_pitch, size_t row_bytes, size_t rows) {
  if (rows == 0 || row_bytes == 0) return;
  if (dst_dev.is_cpu() && src_dev.is_cpu()) {  // host memory on both sides
    for (size_t r = 0; r < rows; ++r) {
      std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                  static_cast<const char*>(src) + r * src_pitch, row_bytes);
    }
    return;
  }
  if (src_dev.is_cpu()) {
    return copy_host_to_device(worker_device(dst_dev.index), dst, dst_pitch, src, src_pitch,
                               row_bytes, rows);
  }
  if (dst_dev.is_cpu()) {
    return copy_device_to_host(worker_device(src_dev.index), dst, dst_pitch, src, src_pitch,
                               row_bytes, rows);
  }
  copy_device_to_device(worker_device(exec.index), *devices_[dst_dev.index], dst, dst_pitch,
                        *devices_[src_dev.index], src, src_pitch, row_bytes, rows);
}

bool CudaBackend::ensure_staging(CudaDevice& d) {
  CudaDevice::Staging& st = d.staging;
  if (st.slot[1] != nullptr) return true;
  DeviceGuard guard(d.gpu);  // the events belong to the device whose copy stream records them
  for (int i = 0; i < 2; ++i) {
    if (st.done[i] == nullptr) {
      check_cuda(host_, d.where, cudaEventCreateWithFlags(&st.done[i], cudaEventDisableTiming),
                 "cudaEventCreateWithFlags (staging)");
    }
    if (st.slot[i] == nullptr &&
        cudaHostAlloc(&st.slot[i], kSlotBytes, cudaHostAllocPortable) != cudaSuccess) {
      // Page-locked memory is a limited resource: copy without staging instead.
      (void)cudaGetLastError();
      st.slot[i] = nullptr;
      return false;
    }
  }
  return true;
}

char* CudaBackend::staging_slot(CudaDevice& d, int i) {
  check_cuda(host_, d.where, cudaEventSynchronize(d.staging.done[i]),
             "cudaEventSynchronize (staging buffer)");
  return static_cast<char*>(d.staging.slot[i]);
}

void CudaBackend::copy_host_to_device(CudaDevice& d, void* dst, size_t dst_pitch, const void* src,
                                      size_t src_pitch, size_t row_bytes, size_t rows) {
  stream_wait(d, d.compute, d.copy, d.where);  // dst was allocated or last used there
  const bool page_locked = is_page_locked(src);
  if (!page_locked && row_bytes * rows >= kStagedMin) {
    std::lock_guard<std::mutex> lock(d.staging.mu);
    if (ensure_staging(d)) {
      DeviceGuard guard(d.gpu);
      int i = 0;
      for (const Piece& p : pieces_of(dst_pitch, src_pitch, row_bytes, rows)) {
        char* slot = staging_slot(d, i);  // free once the DMA two pieces back is done
        for (size_t r = 0; r < p.rows; ++r) {
          std::memcpy(slot + r * p.bytes,
                      static_cast<const char*>(src) + p.src_offset + r * src_pitch, p.bytes);
        }
        check_cuda(
            host_, d.where,
            memcpy_2d(static_cast<char*>(dst) + p.dst_offset, dst_pitch, slot, p.bytes, p.bytes,
                      p.rows, cudaMemcpyHostToDevice, d.copy),
            "cudaMemcpyAsync host to device of " + bytes_text(p.bytes, p.rows) + " (staged)");
        check_cuda(host_, d.where, cudaEventRecord(d.staging.done[i], d.copy),
                   "cudaEventRecord (staging)");
        i ^= 1;
      }
      // src has been read in full: the caller may free it as soon as this returns.
      stream_wait(d, d.copy, d.compute, d.where);
      return;
    }
  }
  check_cuda(
      host_, d.where,
      memcpy_2d(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyHostToDevice, d.copy),
      "cudaMemcpyAsync host to device of " + bytes_text(row_bytes, rows));
  // The caller may free its buffer as soon as this returns. Pageable memory has been
  // staged by now; page-locked memory is read by the DMA later, so wait for it.
  if (page_locked) {
    check_cuda(host_, d.where, cudaStreamSynchronize(d.copy),
               "cudaStreamSynchronize (copy stream)");
  }
  stream_wait(d, d.copy, d.compute, d.where);
}

void CudaBackend::copy_device_to_host(CudaDevice& s, void* dst, size_t dst_pitch, const void* src,
                                      size_t src_pitch, size_t row_bytes, size_t rows) {
  stream_wait(s, s.compute, s.copy, s.where);  // the kernels that produce src
  // Straight to pageable memory: the driver's own staging measured faster here than
  // staging through our slots (13.9 against 11.2 GB/s for a 1 GiB gather on an H200,
  // dp_gpu_bench --only copy), as the unpacking copy on the host is the bottleneck.
  check_cuda(
      host_, s.where,
      memcpy_2d(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDeviceToHost, s.copy),
      "cudaMemcpyAsync device to host of " + bytes_text(row_bytes, rows));
  // The host reads dst as soon as this returns.
  check_cuda(host_, s.where, cudaStreamSynchronize(s.copy), "cudaStreamSynchronize (copy stream)");
  check_data_errors();
}

void CudaBackend::copy_device_to_device(CudaDevice& e, CudaDevice& d, void* dst, size_t dst_pitch,
                                        CudaDevice& s, const void* src, size_t src_pitch,
                                        size_t row_bytes, size_t rows) {
  const std::string what =
      "cudaMemcpyAsync " + s.where + " to " + d.where + " of " + bytes_text(row_bytes, rows);
  if (&d == &s) {  // within one device: in order on its compute stream
    check_cuda(
        host_, d.where,
        memcpy_2d(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDefault, d.compute),
        what);
    return;
  }
  // Between devices (peer access where the GPUs differ, enabled at start-up).
  stream_wait(s, s.compute, e.copy, e.where);
  stream_wait(d, d.compute, e.copy, e.where);
  check_cuda(host_, e.where,
             memcpy_2d(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDefault, e.copy),
             what);
  stream_wait(e, e.copy, s.compute, e.where);
  stream_wait(e, e.copy, d.compute, e.where);
}

}  // namespace dp::cuda_plugin
