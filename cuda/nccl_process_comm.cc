#include "nccl_process_comm.h"

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>

#include "cuda_errors.h"
#include "nccl_comm.h"
#include "nccl_order.h"

namespace dp::cuda_plugin {

namespace {

ncclRedOp_t nccl_op(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kSum:
      return ncclSum;
    case CollectiveOp::kAverage:
      return ncclAvg;  // NCCL 2.10 and later
    case CollectiveOp::kMax:
      return ncclMax;
    case CollectiveOp::kMin:
      return ncclMin;
  }
  return ncclSum;
}

class Event final : public QueuePoint {
 public:
  explicit Event(cudaEvent_t e) : event(e) {}
  // A stream may still wait for it: CUDA releases it once that wait is done.
  ~Event() override { cudaEventDestroy(event); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t event;
};

const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kSum:
      return "sum";
    case CollectiveOp::kAverage:
      return "average";
    case CollectiveOp::kMax:
      return "max";
    case CollectiveOp::kMin:
      return "min";
  }
  return "?";
}

}  // namespace

std::vector<uint8_t> nccl_unique_id(const BackendHost& host) {
  ncclUniqueId id;
  check_nccl(host, "NCCL", ncclGetUniqueId(&id), nullptr, "ncclGetUniqueId");
  std::vector<uint8_t> bytes(sizeof id.internal);
  std::memcpy(bytes.data(), id.internal, sizeof id.internal);
  return bytes;
}

NcclProcessComm::NcclProcessComm(const BackendHost& host, std::string where, int gpu,
                                 cudaStream_t compute, const std::vector<uint8_t>& id, int nranks,
                                 int rank)
    : host_(host),
      where_(std::move(where) + ", NCCL rank " + std::to_string(rank) + " of " +
             std::to_string(nranks)),
      gpu_(gpu),
      compute_(compute),
      nranks_(nranks) {
  ncclUniqueId uid;
  if (id.size() != sizeof uid.internal) {
    raise(host_, Code::kInvalidArgument, where_,
          "a NCCL id is " + std::to_string(sizeof uid.internal) + " bytes, not " +
              std::to_string(id.size()));
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    raise(host_, Code::kInvalidArgument, where_, "not a rank of a communicator");
  }
  std::memcpy(uid.internal, id.data(), sizeof uid.internal);
  DeviceGuard guard(gpu_);  // ncclCommInitRank binds the communicator to the current GPU
  check_cuda(host_, where_, cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags for the communicator");
  if (const cudaError_t e = cudaEventCreateWithFlags(&computed_, cudaEventDisableTiming);
      e != cudaSuccess) {
    cudaStreamDestroy(stream_);
    check_cuda(host_, where_, e, "cudaEventCreateWithFlags for the communicator");
  }
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRank(&comm, nranks, uid, rank);
  if (r == ncclInProgress) r = nccl_settled(comm);  // a non-blocking communicator
  if (r != ncclSuccess) {
    // ncclGetLastError(nullptr): the thread's last error (when no communicator exists).
    const std::string why = nccl_failure(r, comm, "ncclCommInitRank");
    if (comm) ncclCommAbort(comm);
    cudaEventDestroy(computed_);
    cudaStreamDestroy(stream_);
    raise(host_, Code::kBackend, where_, why);
  }
  comm_ = comm;
  try {
    order_id_ = NcclOrder::process().join(host_, gpu_);
  } catch (...) {
    ncclCommDestroy(comm_);
    cudaEventDestroy(computed_);
    cudaStreamDestroy(stream_);
    throw;
  }
}

NcclProcessComm::~NcclProcessComm() {
  NcclOrder::process().leave(gpu_, order_id_);
  DeviceGuard guard(gpu_);
  if (comm_) ncclCommDestroy(comm_);
  cudaEventDestroy(computed_);
  cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

void NcclProcessComm::fail(const std::string& why) {
  if (comm_) {
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }
  // The aborted calls end; after this no kernel of ours reads or writes a buffer that the
  // caller may free once the error reaches it.
  (void)cudaStreamSynchronize(stream_);
  (void)cudaGetLastError();
  raise(host_, Code::kBackend, where_, why);
}

std::unique_ptr<QueuePoint> NcclProcessComm::mark() {
  DeviceGuard guard(gpu_);
  cudaEvent_t e = nullptr;
  check_cuda(host_, where_, cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
             "cudaEventCreateWithFlags for a point of the compute stream");
  auto point = std::make_unique<Event>(e);
  check_cuda(host_, where_, cudaEventRecord(e, compute_), "cudaEventRecord on the compute stream");
  return point;
}

cudaStream_t NcclProcessComm::after_compute(const std::string& call, const QueuePoint* after) {
  if (!comm_) {
    raise(host_, Code::kBackend, where_,
          call + ": the communicator was aborted after an earlier failure; end the job");
  }
  cudaError_t e = cudaSuccess;
  cudaEvent_t wait_for = computed_;
  if (after) {
    wait_for = static_cast<const Event*>(after)->event;
  } else {
    e = cudaEventRecord(computed_, compute_);
  }
  if (e == cudaSuccess) e = cudaStreamWaitEvent(stream_, wait_for, 0);
  if (e != cudaSuccess) {
    fail(call + ": ordering it after the compute stream failed: " + cudaGetErrorString(e));
  }
  return stream_;
}

void NcclProcessComm::run(const std::string& call, const QueuePoint* after,
                          const std::function<ncclResult_t(cudaStream_t)>& queue) {
  DeviceGuard guard(gpu_);
  std::string failure;
  {
    // After the process's own NCCL calls queued before it on the GPU (nccl_order.h),
    // which wait for this one from the end of this scope.
    cudaStream_t s = after_compute(call, after);  // may fail: not while launching
    NcclOrder::Launch launch(NcclOrder::process(), host_, {gpu_}, {stream_}, order_id_);
    ncclResult_t queued = queue(s);
    // A non-blocking communicator may still be queueing the call: its stream says nothing
    // until NCCL is done with that.
    if (queued == ncclInProgress) queued = nccl_settled(comm_);
    if (queued != ncclSuccess) failure = nccl_failure(queued, comm_, call);
  }
  if (!failure.empty()) fail(failure);  // waits for the stream: not while launching
  // Polls instead of cudaStreamSynchronize: a peer's network failure sets NCCL's
  // asynchronous error while the kernel may wait for data forever (NCCL's own advice for
  // blocking communicators). A peer that simply stops leaves the kernel waiting: the core's
  // timeout ends the job then.
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t state = cudaStreamQuery(stream_);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) {
      fail(call + ": waiting for the communicator's stream failed: " + cudaGetErrorString(state));
    }
    ncclResult_t async = ncclSuccess;
    const ncclResult_t got = ncclCommGetAsyncError(comm_, &async);
    if (got != ncclSuccess) fail(nccl_failure(got, comm_, call + ": ncclCommGetAsyncError"));
    if (async != ncclSuccess && async != ncclInProgress) fail(nccl_failure(async, comm_, call));
    // Spin for the short calls (a small allreduce takes tens of microseconds), then
    // leave the core to others.
    if (std::chrono::steady_clock::now() - start < std::chrono::microseconds(200)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void NcclProcessComm::allreduce(void* buf, int64_t count, DType dtype, CollectiveOp op,
                                const QueuePoint* after) {
  if (count <= 0) return;
  const std::string call = std::string("ncclAllReduce (") + op_name(op) + ") of " +
                           std::to_string(count) + " " + dtype_name(dtype);
  run(call, after, [&](cudaStream_t s) {
    return ncclAllReduce(buf, buf, static_cast<size_t>(count), nccl_type(dtype), nccl_op(op), comm_,
                         s);
  });
}

void NcclProcessComm::broadcast(void* buf, size_t nbytes, int root) {
  if (nbytes == 0) return;
  if (root < 0 || root >= nranks_) {
    raise(
        host_, Code::kOutOfRange, where_,
        "broadcast root " + std::to_string(root) + " is not a rank of " + std::to_string(nranks_));
  }
  const std::string call =
      "ncclBroadcast of " + std::to_string(nbytes) + " bytes from rank " + std::to_string(root);
  run(call, nullptr,
      [&](cudaStream_t s) { return ncclBroadcast(buf, buf, nbytes, ncclUint8, root, comm_, s); });
}

void NcclProcessComm::allgather(const void* send, void* recv, size_t nbytes) {
  if (nbytes == 0) return;
  const std::string call = "ncclAllGather of " + std::to_string(nbytes) + " bytes";
  run(call, nullptr,
      [&](cudaStream_t s) { return ncclAllGather(send, recv, nbytes, ncclUint8, comm_, s); });
}

}  // namespace dp::cuda_plugin
