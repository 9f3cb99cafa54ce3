// Copies between the host and CUDA devices and between CUDA devices. They run on the copy
// stream of the device whose worker executes them, or, staged through page-locked memory,
// on that device's staging lanes' streams, ordered against the compute streams of both
// ends with events: the copy waits for the work queued on them so far, and they wait for
// the copy before anything queued after it (a kernel reading the data, a free of the
// source), unless the host has waited for the copy to finish.
#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
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

// Copies of at least kStagedMin bytes between pageable host memory and a device go
// through the device's page-locked staging lanes (CudaDevice::Staging): each lane is a
// host thread with two slots of kSlotBytes and a stream of its own, and fills (or
// empties) one slot while the DMA engine works on the other. The host's copy into or out
// of the slots sets the pace, and it scales with the lanes where the driver's staging of
// pageable memory does not (a gather through the driver from two threads ran no faster
// than one cudaMemcpy). 1 GiB scattered from the host to two logical devices of an H200
// and gathered back (16-core host, `DP_CUDA_COPY_LANES=N dp_gpu_bench --only copy`, three
// rounds): 20 / 18 GB/s with one lane per device, 38 / 35 with two, 50 / 49 with four,
// 47 / 43 with eight; cudaMemcpy of pageable memory ran at 9.5 / 18.
// A copy gets a lane per kLaneBytes, at most copy_lanes_ (DP_CUDA_COPY_LANES). Copies to
// a device are staged from one lane on; copies to the host from two, as one lane is no
// faster than the driver.
constexpr size_t kSlotBytes = size_t{8} << 20;
constexpr size_t kStagedMin = size_t{1} << 20;
constexpr size_t kLaneBytes = size_t{16} << 20;

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

void free_staging_lane(CudaDevice::StagingLane& lane) noexcept {
  if (lane.stream) cudaStreamSynchronize(lane.stream);
  for (int i = 0; i < 2; ++i) {
    if (lane.slot[i]) cudaFreeHost(lane.slot[i]);
    if (lane.done[i]) cudaEventDestroy(lane.done[i]);
  }
  if (lane.stream) cudaStreamDestroy(lane.stream);
  lane = {};
}

size_t CudaBackend::ensure_lanes(CudaDevice& d, size_t bytes) {
  CudaDevice::Staging& st = d.staging;
  const size_t want = std::min(std::clamp<size_t>(bytes / kLaneBytes, 1, copy_lanes_), st.limit);
  if (st.lanes.size() >= want) return want;
  st.lanes.reserve(want);
  DeviceGuard guard(d.gpu);  // the streams, events and slots belong to d's GPU
  const size_t had = st.lanes.size();
  std::string failure;
  while (st.lanes.size() < want) {
    CudaDevice::StagingLane lane;
    cudaError_t e = cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking);
    for (int i = 0; e == cudaSuccess && i < 2; ++i) {
      e = cudaEventCreateWithFlags(&lane.done[i], cudaEventDisableTiming);
      if (e == cudaSuccess) e = cudaHostAlloc(&lane.slot[i], kSlotBytes, cudaHostAllocPortable);
    }
    if (e != cudaSuccess) {
      // Page-locked memory is a limited resource: copy with the lanes there are, or
      // without staging, and do not ask again.
      failure = cudaGetErrorString(e);
      (void)cudaGetLastError();
      free_staging_lane(lane);
      st.limit = st.lanes.size();
      break;
    }
    st.lanes.push_back(lane);
  }
  if (host_.log && st.lanes.size() > had) {
    const std::string msg = d.where + ": " + std::to_string(st.lanes.size()) +
                            " staging lanes for copies to and from pageable memory (" +
                            std::to_string(st.lanes.size() * 2 * (kSlotBytes >> 20)) +
                            " MiB page-locked)";
    host_.log(host_.log_state, 1 /* DP_LOG_INFO */, msg.c_str());
  }
  if (host_.log && !failure.empty()) {
    const std::string msg = d.where + ": no page-locked memory for staging lane " +
                            std::to_string(st.lanes.size() + 1) + " (" + failure +
                            "): copies use " + std::to_string(st.lanes.size()) + " from now on";
    host_.log(host_.log_state, 2 /* DP_LOG_WARNING */, msg.c_str());
  }
  return std::min(want, st.lanes.size());
}

void CudaBackend::staged_copy(CudaDevice& d, size_t lanes, bool to_device, char* dst,
                              size_t dst_pitch, const char* src, size_t src_pitch, size_t row_bytes,
                              size_t rows) {
  const std::vector<Piece> pieces = pieces_of(dst_pitch, src_pitch, row_bytes, rows);
  lanes = std::min(lanes, pieces.size());
  // The copy waits for the work queued on d so far: a copy to the device writes memory
  // allocated or last used there, a copy to the host reads what d's kernels make.
  for (size_t l = 0; l < lanes; ++l) {
    stream_wait(d, d.compute, d.staging.lanes[l].stream, d.where);
  }
  const std::string what =
      to_device ? "cudaMemcpyAsync host to device of " : "cudaMemcpyAsync device to host of ";
  // Lane l moves a contiguous share of the pieces, alternating between its two slots.
  auto run_lane = [&](size_t l) {
    DeviceGuard guard(d.gpu);
    CudaDevice::StagingLane& lane = d.staging.lanes[l];
    const size_t begin = pieces.size() * l / lanes, end = pieces.size() * (l + 1) / lanes;
    auto slot_of = [&](size_t k) { return static_cast<int>((k - begin) & 1); };
    auto wait_slot = [&](int i) {  // free once the DMA that last used it is done
      check_cuda(host_, d.where, cudaEventSynchronize(lane.done[i]),
                 "cudaEventSynchronize (staging slot)");
    };
    auto dma = [&](size_t k) {
      const Piece& p = pieces[k];
      const int i = slot_of(k);
      char* slot = static_cast<char*>(lane.slot[i]);
      check_cuda(host_, d.where,
                 to_device ? memcpy_2d(dst + p.dst_offset, dst_pitch, slot, p.bytes, p.bytes,
                                       p.rows, cudaMemcpyHostToDevice, lane.stream)
                           : memcpy_2d(slot, p.bytes, src + p.src_offset, src_pitch, p.bytes,
                                       p.rows, cudaMemcpyDeviceToHost, lane.stream),
                 what + bytes_text(p.bytes, p.rows) + " (staged)");
      check_cuda(host_, d.where, cudaEventRecord(lane.done[i], lane.stream),
                 "cudaEventRecord (staging slot)");
    };
    if (to_device) {
      for (size_t k = begin; k < end; ++k) {
        const Piece& p = pieces[k];
        wait_slot(slot_of(k));
        char* slot = static_cast<char*>(lane.slot[slot_of(k)]);
        for (size_t r = 0; r < p.rows; ++r) {
          std::memcpy(slot + r * p.bytes, src + p.src_offset + r * src_pitch, p.bytes);
        }
        dma(k);
      }
      return;
    }
    for (size_t k = begin; k < end && k < begin + 2; ++k) {
      wait_slot(slot_of(k));
      dma(k);
    }
    for (size_t k = begin; k < end; ++k) {
      const Piece& p = pieces[k];
      wait_slot(slot_of(k));
      const char* slot = static_cast<const char*>(lane.slot[slot_of(k)]);
      for (size_t r = 0; r < p.rows; ++r) {
        std::memcpy(dst + p.dst_offset + r * dst_pitch, slot + r * p.bytes, p.bytes);
      }
      if (k + 2 < end) dma(k + 2);
    }
  };

  // Lanes 1.. on threads of their own (those that cannot be started run on the caller's
  // thread after lane 0); every thread is joined before anything is raised.
  std::vector<std::exception_ptr> errors(lanes);
  auto run_catching = [&](size_t l) {
    try {
      run_lane(l);
    } catch (...) {
      errors[l] = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  size_t on_helpers = 1;  // lanes [1, on_helpers) run on helpers
  try {
    helpers.reserve(lanes - 1);
    for (size_t l = 1; l < lanes; ++l) {
      helpers.emplace_back(run_catching, l);
      on_helpers = l + 1;
    }
  } catch (...) {
    // No thread to be had: the caller runs the rest.
  }
  run_catching(0);
  for (size_t l = on_helpers; l < lanes; ++l) run_catching(l);
  for (std::thread& t : helpers) t.join();
  if (std::any_of(errors.begin(), errors.end(), [](const auto& e) { return e != nullptr; })) {
    // A lane that failed may have left DMAs in flight, reading memory the caller is about
    // to free or writing a slot whose event does not cover them: wait them out.
    for (size_t l = 0; l < lanes; ++l) (void)cudaStreamSynchronize(d.staging.lanes[l].stream);
    (void)cudaGetLastError();
  }
  if (to_device) {
    // Whatever is queued on d later (a kernel reading dst, its free) waits for the DMAs.
    try {
      for (size_t l = 0; l < lanes; ++l) {
        stream_wait(d, d.staging.lanes[l].stream, d.compute, d.where);
      }
    } catch (...) {
      errors.push_back(std::current_exception());
    }
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void CudaBackend::copy_host_to_device(CudaDevice& d, void* dst, size_t dst_pitch, const void* src,
                                      size_t src_pitch, size_t row_bytes, size_t rows) {
  const bool page_locked = is_page_locked(src);
  if (!page_locked && row_bytes * rows >= kStagedMin) {
    std::lock_guard<std::mutex> lock(d.staging.mu);
    if (const size_t lanes = ensure_lanes(d, row_bytes * rows); lanes > 0) {
      // src has been read in full when this returns: the caller may free it.
      return staged_copy(d, lanes, true, static_cast<char*>(dst), dst_pitch,
                         static_cast<const char*>(src), src_pitch, row_bytes, rows);
    }
  }
  stream_wait(d, d.compute, d.copy, d.where);  // dst was allocated or last used there
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
  if (row_bytes * rows >= 2 * kLaneBytes && copy_lanes_ >= 2 && !is_page_locked(dst)) {
    std::lock_guard<std::mutex> lock(s.staging.mu);
    if (const size_t lanes = ensure_lanes(s, row_bytes * rows); lanes >= 2) {
      staged_copy(s, lanes, false, static_cast<char*>(dst), dst_pitch,
                  static_cast<const char*>(src), src_pitch, row_bytes, rows);
      check_data_errors();
      return;
    }
  }
  // Straight to pageable memory through the driver's own staging, or to page-locked
  // memory by DMA.
  stream_wait(s, s.compute, s.copy, s.where);  // the kernels that produce src
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
