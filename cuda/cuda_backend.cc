// The CUDA backend's devices: set-up and tear-down, memory, synchronisation, device
// queries and the NCCL collectives (between its GPUs, and the communicators between
// processes). Copies are in cuda_copy.cc, kernels in cuda_ops.cc
// and cuda_conv.cc.
#include "cuda_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <thread>

#include "cuda_errors.h"
#include "nccl_comm.h"
#include "nccl_order.h"
#include "nccl_process_comm.h"

namespace dp::cuda_plugin {

// ---- events ----

EventPool::~EventPool() {
  for (cudaEvent_t e : free_) cudaEventDestroy(e);
}

cudaEvent_t EventPool::acquire(const std::string& where) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      cudaEvent_t e = free_.back();
      free_.pop_back();
      return e;
    }
  }
  DeviceGuard guard(gpu_);
  cudaEvent_t e = nullptr;
  check_cuda(host_, where, cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
             "cudaEventCreateWithFlags");
  return e;
}

void EventPool::release(cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(e);
}

// ---- scratch memory ----

ScratchBuffer::ScratchBuffer(const BackendHost& host, CudaDevice& d, size_t bytes, const char* what)
    : d_(d) {
  const cudaError_t err = cudaMallocFromPoolAsync(&p_, bytes > 0 ? bytes : 1, d.pool, d.compute);
  if (err != cudaSuccess) {
    p_ = nullptr;
    check_cuda(host, d.where, err,
               std::string("cudaMallocAsync of ") + std::to_string(bytes) + " bytes for " + what);
  }
}

ScratchBuffer::ScratchBuffer(CudaDevice& d, size_t bytes, std::nothrow_t) : d_(d) {
  if (bytes > 0 && cudaMallocFromPoolAsync(&p_, bytes, d.pool, d.compute) != cudaSuccess) {
    p_ = nullptr;
    (void)cudaGetLastError();
  }
}

ScratchBuffer::~ScratchBuffer() {
  if (p_) cudaFreeAsync(p_, d_.compute);
}

// ---- set-up and tear-down ----

namespace {
// DP_CUDA_CONV_SCRATCH_BYTES, or 0 when it is not set.
size_t conv_scratch_from_env() {
  const char* env = std::getenv("DP_CUDA_CONV_SCRATCH_BYTES");
  const long long v = env ? std::atoll(env) : 0;
  return v > 0 ? static_cast<size_t>(v) : 0;
}

// DP_CUDA_COPY_LANES (1..64), else half the host's cores, 1 to 4 (cuda_copy.cc); a value
// out of range is reported through `bad`.
size_t copy_lanes_from_env(std::string* bad) {
  if (const char* env = std::getenv("DP_CUDA_COPY_LANES"); env && *env) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v >= 1 && v <= 64) return static_cast<size_t>(v);
    *bad = env;
  }
  return std::clamp<size_t>(std::thread::hardware_concurrency() / 2, 1, 4);
}

// DP_CUDA_CONV; an unknown value is reported through `bad`.
ConvEngine conv_engine_from_env(std::string* bad) {
  const char* env = std::getenv("DP_CUDA_CONV");
  const std::string v = env ? env : "";
  if (v == "im2col") return ConvEngine::kIm2col;
  if (v == "cudnn-benchmark") return ConvEngine::kCudnnBenchmark;
  if (!v.empty() && v != "cudnn") *bad = v;
  return ConvEngine::kCudnn;
}

// The engine DP_CUDA_CONV asked for, as it will run: a cuDNN engine that cannot run (a
// build without cuDNN, or no cuDNN to open) becomes im2col, and *text says why.
ConvEngine usable_conv_engine(ConvEngine e, std::string* text) {
  if (e == ConvEngine::kIm2col) {
    *text = "im2col + cuBLASLt";
    return e;
  }
#if DP_HAVE_CUDNN
  std::string why;
  if (const CudnnLibrary* lib = cudnn_library(&why)) {
    *text = "cuDNN " + cudnn_version_text(*lib) +
            (e == ConvEngine::kCudnnBenchmark ? ", benchmarked" : "");
    return e;
  }
  *text = "im2col + cuBLASLt (cuDNN could not be opened: " + why + ")";
#else
  *text = "im2col + cuBLASLt (this build has no cuDNN)";
#endif
  return ConvEngine::kIm2col;
}
}  // namespace

CudaBackend::CudaBackend(const BackendHost& host, const std::vector<int>& gpus, bool allow_tf32)
    : host_(host), allow_tf32_(allow_tf32), conv_scratch_bytes_(conv_scratch_from_env()) {
  std::string bad_engine, engine_text, bad_lanes;
  conv_engine_ = usable_conv_engine(conv_engine_from_env(&bad_engine), &engine_text);
  copy_lanes_ = copy_lanes_from_env(&bad_lanes);
  if (!bad_engine.empty() && host_.log) {
    host_.log(
        host_.log_state, 2 /* DP_LOG_WARNING */,
        ("DP_CUDA_CONV=" + bad_engine + " is none of im2col, cudnn, cudnn-benchmark: using cudnn")
            .c_str());
  }
  if (!bad_lanes.empty() && host_.log) {
    host_.log(host_.log_state, 2 /* DP_LOG_WARNING */,
              ("DP_CUDA_COPY_LANES=" + bad_lanes + " is not a whole number from 1 to 64: using " +
               std::to_string(copy_lanes_))
                  .c_str());
  }
  try {
    int physical = 0;
    check_cuda(host_, "CUDA", cudaGetDeviceCount(&physical), "cudaGetDeviceCount");
    for (int g = 0; g < physical; ++g) events_.push_back(std::make_unique<EventPool>(host_, g));
    nccl_ = std::make_unique<NcclComms>(host_);

    // Streams and pools are made here, not in worker_started: allocate() may run on any
    // thread as soon as the context exists, before a worker has reached its start hook.
    for (size_t i = 0; i < gpus.size(); ++i) {
      devices_.push_back(std::make_unique<CudaDevice>());  // release_all frees a partial one
      CudaDevice* d = devices_.back().get();
      d->gpu = gpus[i];
      d->where = "cuda:" + std::to_string(i) + " (GPU " + std::to_string(d->gpu) + ")";
      DeviceGuard guard(d->gpu);
      auto check = [&](cudaError_t e, const char* call) { check_cuda(host_, d->where, e, call); };
      cudaDeviceProp prop{};
      check(cudaGetDeviceProperties(&prop, d->gpu), "cudaGetDeviceProperties");
      d->name = prop.name;
      d->total_memory = prop.totalGlobalMem;
      d->multiprocessors = prop.multiProcessorCount;
      d->compute_major = prop.major;
      d->compute_minor = prop.minor;
      check(cudaStreamCreateWithFlags(&d->compute, cudaStreamNonBlocking),
            "cudaStreamCreateWithFlags (compute stream)");
      check(cudaStreamCreateWithFlags(&d->copy, cudaStreamNonBlocking),
            "cudaStreamCreateWithFlags (copy stream)");
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = d->gpu;
      check(cudaMemPoolCreate(&d->pool, &props), "cudaMemPoolCreate");
      // Keep freed memory in the pool: returning it to the driver after every
      // synchronisation would make the next step allocate from the driver again.
      uint64_t keep = std::numeric_limits<uint64_t>::max();
      check(cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReleaseThreshold, &keep),
            "cudaMemPoolSetAttribute(ReleaseThreshold)");
      check(cudaMalloc(&d->error_claim, sizeof(int)), "cudaMalloc (data error claim)");
      check(cudaMemset(d->error_claim, 0, sizeof(int)), "cudaMemset (data error claim)");
      void* record = nullptr;
      check(cudaHostAlloc(&record, sizeof(DataError), cudaHostAllocMapped | cudaHostAllocPortable),
            "cudaHostAlloc (data error record)");
      d->error_record = static_cast<DataError*>(record);
      std::memset(record, 0, sizeof(DataError));
      void* record_dev = nullptr;
      check(cudaHostGetDevicePointer(&record_dev, record, 0), "cudaHostGetDevicePointer");
      d->error_record_dev = static_cast<DataError*>(record_dev);
    }

    // Peer access between the distinct GPUs in use: direct copies, and access to each
    // other's pools (pool memory is not covered by cudaDeviceEnablePeerAccess).
    std::set<int> used(gpus.begin(), gpus.end());
    for (int a : used) {
      for (int b : used) {
        if (a == b) continue;
        int can = 0;
        check_cuda(host_, "GPU " + std::to_string(a), cudaDeviceCanAccessPeer(&can, a, b),
                   "cudaDeviceCanAccessPeer");
        if (!can) continue;
        DeviceGuard guard(a);
        const cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);
        if (err == cudaErrorPeerAccessAlreadyEnabled) {
          (void)cudaGetLastError();
        } else {
          check_cuda(host_, "GPU " + std::to_string(a), err,
                     "cudaDeviceEnablePeerAccess to GPU " + std::to_string(b));
        }
        for (auto& d : devices_) {
          if (d->gpu != b) continue;
          cudaMemAccessDesc access{};
          access.location.type = cudaMemLocationTypeDevice;
          access.location.id = a;
          access.flags = cudaMemAccessFlagsProtReadWrite;
          check_cuda(host_, d->where, cudaMemPoolSetAccess(d->pool, &access, 1),
                     "cudaMemPoolSetAccess for GPU " + std::to_string(a));
        }
      }
    }
  } catch (...) {
    release_all();
    throw;
  }
  std::string list;
  for (size_t i = 0; i < devices_.size(); ++i) {
    list += (i ? ", " : "") + devices_[i]->where + " " + devices_[i]->name;
  }
  if (host_.log) {
    host_.log(host_.log_state, 1,
              ("CUDA backend: " + list + (allow_tf32 ? "; TF32 allowed" : "; TF32 off") +
               "; convolutions: " + engine_text)
                  .c_str());
  }
}

CudaBackend::~CudaBackend() {
  release_all();
}

// Errors are ignored: this may run while the process exits and the CUDA runtime is
// already shutting down.
void CudaBackend::release_all() noexcept {
  nccl_.reset();
  for (auto& d : devices_) {
    DeviceGuard guard(d->gpu);
    if (d->compute) cudaStreamSynchronize(d->compute);
    if (d->copy) cudaStreamSynchronize(d->copy);
#if DP_HAVE_CUDNN
    d->cudnn.reset();
#endif
    d->blas.reset();
    if (d->error_claim) cudaFree(d->error_claim);
    if (d->error_record) cudaFreeHost(d->error_record);
    for (CudaDevice::StagingLane& lane : d->staging.lanes) free_staging_lane(lane);
    if (d->pool) cudaMemPoolDestroy(d->pool);
    if (d->copy) cudaStreamDestroy(d->copy);
    if (d->compute) cudaStreamDestroy(d->compute);
  }
  devices_.clear();
  events_.clear();
  (void)cudaGetLastError();
}

void CudaBackend::worker_started(int dev) {
  CudaDevice& d = *devices_[dev];
  // This hook must not throw (it runs outside any task): a failure is kept and reported
  // by the device's first kernel.
  try {
    check_cuda(host_, d.where, cudaSetDevice(d.gpu), "cudaSetDevice");
    d.blas = std::make_unique<Blas>(host_, d.where, d.compute, allow_tf32_);
  } catch (const std::exception& e) {
    d.worker_error = e.what();
  }
}

void CudaBackend::worker_stopping(int dev) {
  CudaDevice& d = *devices_[dev];
  cudaStreamSynchronize(d.compute);
  cudaStreamSynchronize(d.copy);
#if DP_HAVE_CUDNN
  d.cudnn.reset();
#endif
  d.blas.reset();
  (void)cudaGetLastError();
}

// ---- device queries ----

std::string CudaBackend::device_name(int dev) const {
  const CudaDevice& d = *devices_[dev];
  return "cuda:" + std::to_string(dev) + " (" + d.name + ", GPU " + std::to_string(d.gpu) + ")";
}

void CudaBackend::memory_info(int dev, uint64_t* free_bytes, uint64_t* total_bytes) const {
  const CudaDevice& d = *devices_[dev];
  DeviceGuard guard(d.gpu);
  size_t f = 0, t = 0;
  check_cuda(host_, d.where, cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
  *free_bytes = f;
  *total_bytes = t;
}

void CudaBackend::properties(int dev, uint64_t* total_memory, int* multiprocessors) const {
  *total_memory = devices_[dev]->total_memory;
  *multiprocessors = devices_[dev]->multiprocessors;
}

// bfloat16 tensor-core instructions arrived with compute capability 8.0 (Ampere).
bool CudaBackend::bf16_native(int dev) const {
  return devices_[dev]->compute_major >= 8;
}

bool CudaBackend::runs_bf16(Bf16Kernel kernel, int dev) const {
  if (!bf16_native(dev)) return false;  // the core stages it; float32 is as fast there
  switch (kernel) {
    case Bf16Kernel::kMatmul:
      return true;
    case Bf16Kernel::kConv2d:
    case Bf16Kernel::kConv2dBackwardData:
    case Bf16Kernel::kConv2dBackwardWeights:
      // On cuDNN. im2col's GEMMs would round their patch matrices and partial sums to
      // bfloat16; the core's staging runs im2col in float32 instead.
      return conv_engine_ != ConvEngine::kIm2col;
    case Bf16Kernel::kConvReluPool:  // the plugin has no fused block (callers compose)
      return false;
    case Bf16Kernel::kReluBackward:  // staged: a float32 kernel around a mask
      return false;
    case Bf16Kernel::kMatmulIntoFloat32:
      // Not yet (cuBLASLt can: bfloat16 A and B, float32 D): on these GPUs linear's float32
      // weight gradient is a bfloat16 product rounded, then widened, as PyTorch's.
      return false;
  }
  return false;
}

// ---- memory ----

void* CudaBackend::allocate(int dev, size_t nbytes) {
  CudaDevice& d = *devices_[dev];
  DeviceGuard guard(d.gpu);
  const size_t bytes = nbytes > 0 ? nbytes : 1;
  void* p = nullptr;
  cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, d.pool, d.compute);
  if (err == cudaErrorMemoryAllocation) {
    // Memory freed on this stream by work still in flight returns to the pool once that
    // work is done: wait for it and try once more before giving up.
    (void)cudaGetLastError();
    cudaStreamSynchronize(d.compute);
    cudaStreamSynchronize(d.copy);
    err = cudaMallocFromPoolAsync(&p, bytes, d.pool, d.compute);
  }
  check_cuda(host_, d.where, err, "cudaMallocAsync of " + std::to_string(nbytes) + " bytes");
  return p;
}

void CudaBackend::deallocate(int dev, void* ptr, size_t) noexcept {
  if (ptr == nullptr) return;
  CudaDevice& d = *devices_[dev];
  DeviceGuard guard(d.gpu);
  if (cudaFreeAsync(ptr, d.compute) != cudaSuccess) (void)cudaGetLastError();
}

// ---- synchronisation and errors found by kernels ----

void CudaBackend::synchronize(int dev) {
  CudaDevice& d = worker_device(dev);
  check_cuda(host_, d.where, cudaStreamSynchronize(d.copy), "cudaStreamSynchronize (copy stream)");
  check_cuda(host_, d.where, cudaStreamSynchronize(d.compute),
             "cudaStreamSynchronize (compute stream)");
  check_data_errors();
}

void CudaBackend::synchronize_hardware(int dev) {
  CudaDevice& d = worker_device(dev);
  DeviceGuard guard(d.gpu);
  check_cuda(host_, d.where, cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check_data_errors();
}

void CudaBackend::check_data_errors() {
  std::lock_guard<std::mutex> lock(data_error_mu_);
  for (auto& dev : devices_) {
    volatile DataError* r = dev->error_record;
    if (r->code == 0) continue;
    const DataError e{r->code, r->op, r->position, r->value, r->bound};
    r->code = 0;
    {
      DeviceGuard guard(dev->gpu);  // the next error on this device may claim the record
      check_cuda(host_, dev->where, cudaMemsetAsync(dev->error_claim, 0, sizeof(int), dev->compute),
                 "cudaMemsetAsync (data error claim)");
    }
    // The CPU backend's words. The kernel ran asynchronously, so the failure surfaces at
    // the first synchronisation after it (a copy to the host, synchronize()).
    std::string what;
    if (e.op == kEmbeddingIndex) {
      what = "embedding index[" + std::to_string(e.position) + "] = " + std::to_string(e.value) +
             " is outside [0, " + std::to_string(e.bound) + ")";
    } else {
      what = "target[" + std::to_string(e.position) + "] = " + std::to_string(e.value) +
             " is not a class index in [0, " + std::to_string(e.bound) + ")";
    }
    raise(host_, Code::kOutOfRange, dev->where,
          what + " (found by a kernel that ran before this synchronisation)");
  }
}

CudaDevice& CudaBackend::worker_device(int dev) {
  CudaDevice& d = *devices_[dev];
  if (!d.blas) {
    raise(host_, Code::kBackend, d.where,
          d.worker_error.empty() ? "the device's worker has not started"
                                 : "the device could not be set up: " + d.worker_error);
  }
  return d;
}

// ---- collectives (NCCL between distinct GPUs) ----

std::vector<int> CudaBackend::distinct_gpus(const std::vector<int>& devs) const {
  std::vector<int> gpus;
  std::set<int> seen;
  for (int dev : devs) {
    const int g = devices_[dev]->gpu;
    if (!seen.insert(g).second) return {};
    gpus.push_back(g);
  }
  return gpus;
}

namespace {

// After a group of calls on non-blocking communicators (ncclGroupEnd's ncclInProgress):
// waits until NCCL has queued every call on its stream, before the streams are used.
void settle_group(const BackendHost& host, const std::vector<ncclComm_t>& comms,
                  const std::string& where) {
  for (ncclComm_t c : comms) check_nccl(host, where, nccl_settled(c), c, "ncclGroupEnd");
}

}  // namespace

std::vector<cudaStream_t> CudaBackend::compute_streams(const std::vector<int>& devs) const {
  std::vector<cudaStream_t> streams;
  streams.reserve(devs.size());
  for (int dev : devs) streams.push_back(devices_[dev]->compute);
  return streams;
}

bool CudaBackend::broadcast(const std::vector<int>& devs, const std::vector<void*>& buffers,
                            size_t nbytes, size_t root) {
  // Logical devices on one GPU have no NCCL ranks of their own: the core copies instead.
  const std::vector<int> gpus = distinct_gpus(devs);
  if (gpus.size() < 2) return false;
  const std::vector<ncclComm_t>& comms = nccl_->get(gpus);
  const std::string where = "NCCL broadcast of " + std::to_string(nbytes) + " bytes";
  // After the calls between processes queued before it on these GPUs (nccl_order.h); its
  // end is recorded when `launch` goes, after the group is queued or has failed.
  NcclOrder::Launch launch(NcclOrder::process(), host_, gpus, compute_streams(devs));
  check_nccl(host_, where, ncclGroupStart(), nullptr, "ncclGroupStart");
  ncclResult_t first = ncclSuccess;
  size_t failed = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    // Only the root's send buffer is read; the others pass their own (a pointer on
    // their own GPU), which NCCL ignores.
    const ncclResult_t r =
        ncclBroadcast(buffers[i], buffers[i], nbytes, ncclUint8, static_cast<int>(root), comms[i],
                      devices_[devs[i]]->compute);
    if (r != ncclSuccess && first == ncclSuccess) {
      first = r;
      failed = i;
    }
  }
  const ncclResult_t end = ncclGroupEnd();  // always closes the group
  check_nccl(host_, devices_[devs[failed]]->where, first, comms[failed], where + ": ncclBroadcast");
  check_nccl(host_, where, end, nullptr, "ncclGroupEnd");
  if (end == ncclInProgress) settle_group(host_, comms, where);
  return true;
}

bool CudaBackend::reduce_sum(const std::vector<int>& devs, const std::vector<const void*>& send,
                             void* recv, int64_t count, DType dtype, size_t root) {
  const std::vector<int> gpus = distinct_gpus(devs);
  if (gpus.size() < 2) return false;
  const std::vector<ncclComm_t>& comms = nccl_->get(gpus);
  const std::string where = "NCCL reduce of " + std::to_string(count) + " " + dtype_name(dtype);
  // After the calls between processes queued before it on these GPUs (nccl_order.h); its
  // end is recorded when `launch` goes, after the group is queued or has failed.
  NcclOrder::Launch launch(NcclOrder::process(), host_, gpus, compute_streams(devs));
  check_nccl(host_, where, ncclGroupStart(), nullptr, "ncclGroupStart");
  ncclResult_t first = ncclSuccess;
  size_t failed = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    const ncclResult_t r = ncclReduce(send[i], i == root ? recv : nullptr,
                                      static_cast<size_t>(count), nccl_type(dtype), ncclSum,
                                      static_cast<int>(root), comms[i], devices_[devs[i]]->compute);
    if (r != ncclSuccess && first == ncclSuccess) {
      first = r;
      failed = i;
    }
  }
  const ncclResult_t end = ncclGroupEnd();
  check_nccl(host_, devices_[devs[failed]]->where, first, comms[failed], where + ": ncclReduce");
  check_nccl(host_, where, end, nullptr, "ncclGroupEnd");
  if (end == ncclInProgress) settle_group(host_, comms, where);
  return true;
}

// ---- collectives between processes (NCCL, one GPU per rank) ----

std::string CudaBackend::pci_bus_id(int dev) const {
  const CudaDevice& d = *devices_[dev];
  char id[64] = {};
  check_cuda(host_, d.where, cudaDeviceGetPCIBusId(id, sizeof id, d.gpu), "cudaDeviceGetPCIBusId");
  return id;
}

std::vector<uint8_t> CudaBackend::process_comm_id() {
  return nccl_unique_id(host_);
}

std::unique_ptr<ProcessComm> CudaBackend::process_comm(const std::vector<uint8_t>& id, int nranks,
                                                       int rank, int dev) {
  CudaDevice& d = *devices_[dev];
  return std::make_unique<NcclProcessComm>(host_, d.where, d.gpu, d.compute, id, nranks, rank);
}

}  // namespace dp::cuda_plugin
