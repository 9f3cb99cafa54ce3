#include "nccl_process_comm.h"

#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "cuda_errors.h"
#include "nccl_comm.h"

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
  const ncclResult_t r = ncclCommInitRank(&comm, nranks, uid, rank);
  if (r != ncclSuccess) {
    cudaEventDestroy(computed_);
    cudaStreamDestroy(stream_);
    // ncclGetLastError(nullptr): the thread's last error (no communicator exists).
    check_nccl(host_, where_, r, nullptr, "ncclCommInitRank");
  }
  comm_ = comm;
}

NcclProcessComm::~NcclProcessComm() {
  if (!comm_) return;
  DeviceGuard guard(gpu_);
  if (broken_) {
    ncclCommAbort(comm_);
  } else {
    ncclCommDestroy(comm_);
  }
  cudaEventDestroy(computed_);
  cudaStreamDestroy(stream_);
  (void)cudaGetLastError();
}

cudaStream_t NcclProcessComm::after_compute(const std::string& call) {
  cudaError_t e = cudaEventRecord(computed_, compute_);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(stream_, computed_, 0);
  if (e != cudaSuccess) {
    broken_ = true;
    check_cuda(host_, where_, e, call + ": ordering it after the compute stream");
  }
  return stream_;
}

void NcclProcessComm::finish(ncclResult_t queued, const std::string& call) {
  if (queued != ncclSuccess) {
    broken_ = true;
    check_nccl(host_, where_, queued, comm_, call);
  }
  // Polls instead of cudaStreamSynchronize: a peer's network failure sets NCCL's
  // asynchronous error while the kernel may wait for data forever (NCCL's own advice for
  // blocking communicators). A peer that simply stops leaves the kernel waiting: the core's
  // timeout ends the job then.
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t state = cudaStreamQuery(stream_);
    if (state == cudaSuccess) return;
    if (state != cudaErrorNotReady) {
      broken_ = true;
      check_cuda(host_, where_, state, call + ": waiting for the communicator's stream");
    }
    ncclResult_t async = ncclSuccess;
    const ncclResult_t got = ncclCommGetAsyncError(comm_, &async);
    if (got != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) {
      broken_ = true;
      check_nccl(host_, where_, got != ncclSuccess ? got : async, comm_,
                 call + (got != ncclSuccess ? ": ncclCommGetAsyncError" : ""));
    }
    // Spin for the short calls (a small allreduce takes tens of microseconds), then
    // leave the core to others.
    if (std::chrono::steady_clock::now() - start < std::chrono::microseconds(200)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void NcclProcessComm::allreduce(void* buf, int64_t count, DType dtype, CollectiveOp op) {
  if (count <= 0) return;
  DeviceGuard guard(gpu_);
  const std::string call = std::string("ncclAllReduce (") + op_name(op) + ") of " +
                           std::to_string(count) + " " + dtype_name(dtype);
  cudaStream_t s = after_compute(call);
  finish(
      ncclAllReduce(buf, buf, static_cast<size_t>(count), nccl_type(dtype), nccl_op(op), comm_, s),
      call);
}

void NcclProcessComm::broadcast(void* buf, size_t nbytes, int root) {
  if (nbytes == 0) return;
  if (root < 0 || root >= nranks_) {
    raise(
        host_, Code::kOutOfRange, where_,
        "broadcast root " + std::to_string(root) + " is not a rank of " + std::to_string(nranks_));
  }
  DeviceGuard guard(gpu_);
  const std::string call =
      "ncclBroadcast of " + std::to_string(nbytes) + " bytes from rank " + std::to_string(root);
  finish(ncclBroadcast(buf, buf, nbytes, ncclUint8, root, comm_, after_compute(call)), call);
}

void NcclProcessComm::allgather(const void* send, void* recv, size_t nbytes) {
  if (nbytes == 0) return;
  DeviceGuard guard(gpu_);
  const std::string call = "ncclAllGather of " + std::to_string(nbytes) + " bytes";
  finish(ncclAllGather(send, recv, nbytes, ncclUint8, comm_, after_compute(call)), call);
}

}  // namespace dp::cuda_plugin
