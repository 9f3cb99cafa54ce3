// A stand-in for the CUDA plugin (loaded through DP_CUDA_PLUGIN) that lets the process
// group's CUDA branch run on machines without a GPU: its "CUDA devices" are host memory,
// and its communicator between processes (Backend::process_comm) is MPI on a duplicate of
// MPI_COMM_WORLD instead of NCCL. The core cannot tell: the route decision, the id that
// rank 0 makes and the transport carries, the communicator's calls and its destruction
// all run as with the real plugin. Checks made here raise (the test then fails):
//   - every rank joins with the id rank 0 made (the bytes are compared over MPI),
//   - the communicator's calls come from the thread that made it, never a device worker,
//   - it is destroyed while MPI still runs (before the transport finalises it).
// Environment: DP_FAKE_CUDA_BUS_ID (the PCI bus id every device reports; default one per
// world rank, "fake:<rank>"), DP_FAKE_CUDA_NO_COMM=1 (no communicator, as a backend
// without NCCL), DP_FAKE_CUDA_DEVICES (how many devices, default 1). Only copies, fill, affine (x *
// a + b), casts and elementwise binary ops on operands of one shape exist (what the process-group
// and DDP tests run); other kernels raise.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device/backend.h"
#include "device/bfloat16.h"
#include "error.h"

namespace {

using namespace dp;

[[noreturn]] void fail(const BackendHost& host, Code code, const std::string& what) {
  host.raise(static_cast<int>(code), ("fake CUDA plugin: " + what).c_str());
  std::abort();  // raise never returns
}

int world_rank() {
  int up = 0, rank = -1;
  MPI_Initialized(&up);
  if (up) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

class FakeComm final : public ProcessComm {
 public:
  FakeComm(const BackendHost& host, const std::vector<uint8_t>& id, int nranks, int rank)
      : host_(host), owner_(std::this_thread::get_id()) {
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (!up || down) fail(host_, Code::kState, "MPI is not running");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    int size = 0, me = 0;
    MPI_Comm_size(comm_, &size);
    MPI_Comm_rank(comm_, &me);
    if (size != nranks || me != rank) {
      fail(host_, Code::kInvalidArgument,
           "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " is MPI's " +
               std::to_string(me) + " of " + std::to_string(size));
    }
    if (id.size() != 128)
      fail(host_, Code::kInvalidArgument, "an id of " + std::to_string(id.size()) + " bytes");
    std::vector<uint8_t> root(id);
    MPI_Bcast(root.data(), 128, MPI_BYTE, 0, comm_);
    if (root != id)
      fail(host_, Code::kBackend, "rank " + std::to_string(rank) + "'s id is not rank 0's");
  }
  ~FakeComm() override {
    int down = 0;
    MPI_Finalized(&down);
    if (down) {
      std::fprintf(stderr, "fake CUDA plugin: the communicator outlived MPI\n");
      std::abort();
    }
    MPI_Comm_free(&comm_);
  }

  void allreduce(void* buf, int64_t count, DType dtype, CollectiveOp op,
                 const QueuePoint*) override {
    on_owner("allreduce");
    if (dtype == DType::kBFloat16) return allreduce_bf16(static_cast<uint16_t*>(buf), count, op);
    MPI_Datatype type = dtype == DType::kFloat32   ? MPI_FLOAT
                        : dtype == DType::kFloat64 ? MPI_DOUBLE
                        : dtype == DType::kInt64   ? MPI_INT64_T
                                                   : MPI_UINT8_T;
    MPI_Op mop = op == CollectiveOp::kMax ? MPI_MAX : op == CollectiveOp::kMin ? MPI_MIN : MPI_SUM;
    MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(count), type, mop, comm_);
    if (op != CollectiveOp::kAverage) return;
    int size = 0;
    MPI_Comm_size(comm_, &size);
    for (int64_t i = 0; i < count; ++i) {
      if (dtype == DType::kFloat32) static_cast<float*>(buf)[i] /= static_cast<float>(size);
      if (dtype == DType::kFloat64) static_cast<double*>(buf)[i] /= size;
    }
  }
  void broadcast(void* buf, size_t nbytes, int root) override {
    on_owner("broadcast");
    MPI_Bcast(buf, static_cast<int>(nbytes), MPI_BYTE, root, comm_);
  }
  void allgather(const void* send, void* recv, size_t nbytes) override {
    on_owner("allgather");
    MPI_Allgather(send, static_cast<int>(nbytes), MPI_BYTE, recv, static_cast<int>(nbytes),
                  MPI_BYTE, comm_);
  }

 private:
  // MPI has no bfloat16: the values widened to float, reduced, and rounded once, which is
  // what NCCL gives for two ranks.
  void allreduce_bf16(uint16_t* buf, int64_t count, CollectiveOp op) {
    std::vector<float> wide(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) wide[i] = bf16_to_float(buf[i]);
    MPI_Op mop = op == CollectiveOp::kMax ? MPI_MAX : op == CollectiveOp::kMin ? MPI_MIN : MPI_SUM;
    MPI_Allreduce(MPI_IN_PLACE, wide.data(), static_cast<int>(count), MPI_FLOAT, mop, comm_);
    int size = 1;
    if (op == CollectiveOp::kAverage) MPI_Comm_size(comm_, &size);
    for (int64_t i = 0; i < count; ++i) buf[i] = float_to_bf16(wide[i] / static_cast<float>(size));
  }

  void on_owner(const char* call) {
    if (std::this_thread::get_id() != owner_) {
      fail(host_, Code::kInternal,
           std::string(call) +
               " called from another thread than the one that made the "
               "communicator");
    }
  }

  const BackendHost& host_;
  std::thread::id owner_;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class FakeCuda final : public Backend {
 public:
  explicit FakeCuda(const BackendHost& host) : host_(host) {}

  DeviceType type() const override { return DeviceType::kCuda; }
  int device_count() const override {
    const char* env = std::getenv("DP_FAKE_CUDA_DEVICES");
    return env && *env ? std::max(1, std::atoi(env)) : 1;
  }
  std::string device_name(int dev) const override {
    return "cuda:" + std::to_string(dev) + " (fake, host memory)";
  }
  void memory_info(int, uint64_t* free_bytes, uint64_t* total_bytes) const override {
    *free_bytes = *total_bytes = uint64_t{1} << 30;
  }
  int physical_index(int dev) const override { return dev; }
  void worker_started(int) override {}
  void worker_stopping(int) override {}
  void synchronize(int) override {}

  void* allocate(int, size_t nbytes) override {
    void* p = std::aligned_alloc(64, (nbytes + 63) / 64 * 64 + 64);
    if (!p) fail(host_, Code::kOutOfMemory, std::to_string(nbytes) + " bytes");
    return p;
  }
  void deallocate(int, void* ptr, size_t) noexcept override { std::free(ptr); }
  void copy_2d(Device, Device, void* dst, size_t dst_pitch, Device, const void* src,
               size_t src_pitch, size_t row_bytes, size_t rows) override {
    for (size_t r = 0; r < rows; ++r) {
      std::memmove(static_cast<char*>(dst) + r * dst_pitch,
                   static_cast<const char*>(src) + r * src_pitch, row_bytes);
    }
  }

  void fill(int, const KView& out, double value) override {
    for (int64_t i = 0; i < out.numel(); ++i) put(out, i, value);
  }
  void affine(int, const KView& x, const KView& out, double alpha, double beta) override {
    for (int64_t i = 0; i < out.numel(); ++i) put(out, i, get(x, i) * alpha + beta);
  }
  void cast(int, const KView& x, const KView& out) override {
    for (int64_t i = 0; i < out.numel(); ++i) put(out, i, get(x, i));
  }
  // Operands of one shape only (no broadcasting), as DDP's tests use them.
  void binary(int, BinaryOp op, const KView& a, const KView& b, const KView& out) override {
    if (a.numel() != out.numel() || b.numel() != out.numel()) none("broadcasting binary");
    for (int64_t i = 0; i < out.numel(); ++i) {
      const double x = get(a, i), y = get(b, i);
      put(out, i,
          op == BinaryOp::kAdd   ? x + y
          : op == BinaryOp::kSub ? x - y
          : op == BinaryOp::kMul ? x * y
                                 : x / y);
    }
  }

  std::string process_comm_unavailable() const override {
    const char* env = std::getenv("DP_FAKE_CUDA_NO_COMM");
    return env && *env && std::strcmp(env, "0") != 0 ? "the fake CUDA plugin has no communicator"
                                                     : "";
  }
  std::string pci_bus_id(int) const override {
    const char* env = std::getenv("DP_FAKE_CUDA_BUS_ID");
    return env && *env ? env : "fake:" + std::to_string(world_rank());
  }
  std::vector<uint8_t> process_comm_id() override {
    std::vector<uint8_t> id(128);
    std::random_device rd;
    for (uint8_t& b : id) b = static_cast<uint8_t>(rd());
    return id;
  }
  std::unique_ptr<ProcessComm> process_comm(const std::vector<uint8_t>& id, int nranks, int rank,
                                            int) override {
    return std::make_unique<FakeComm>(host_, id, nranks, rank);
  }

  // Everything else is beyond this fake.
  void unary(int, UnaryOp, const KView&, const KView&) override { none("unary"); }
  void unary_backward(int, UnaryOp, const KView&, const KView&, const KView&) override {
    none("unary_backward");
  }
  void reduce_sum(int, const KView&, const KView&) override { none("reduce_sum"); }
  void argmax(int, const KView&, int, const KView&) override { none("argmax"); }
  void matmul(int, const KView&, const KView&, const KView*, const KView&,
              const MatmulParams&) override {
    none("matmul");
  }
  void softmax(int, const KView&, int, bool, const KView&) override { none("softmax"); }
  void softmax_backward(int, const KView&, const KView&, int, bool, const KView&) override {
    none("softmax_backward");
  }
  void conv2d(int, const KView&, const KView&, const KView*, const KView&,
              const Conv2dParams&) override {
    none("conv2d");
  }
  void conv2d_backward_data(int, const KView&, const KView&, const KView&,
                            const Conv2dParams&) override {
    none("conv2d_backward_data");
  }
  void conv2d_backward_weights(int, const KView&, const KView&, const KView&, const KView*,
                               const Conv2dParams&) override {
    none("conv2d_backward_weights");
  }
  size_t pool2d_workspace_bytes(int, const KView&, const KView&, const Pool2dParams&) override {
    return 0;
  }
  void pool2d(int, const KView&, const KView&, void*, const Pool2dParams&) override {
    none("pool2d");
  }
  void pool2d_backward(int, const KView&, const KView&, const void*, const KView&,
                       const Pool2dParams&) override {
    none("pool2d_backward");
  }
  void batch_norm(int, const KView&, const KView&, const KView&, const KView&, const KView&,
                  const KView&, double, bool) override {
    none("batch_norm");
  }
  void batch_norm_backward(int, const KView&, const KView&, const KView&, const KView&,
                           const KView&, const KView&, const KView&, const KView&,
                           double) override {
    none("batch_norm_backward");
  }
  void dropout_mask(int, const KView&, double, uint64_t) override { none("dropout_mask"); }
  void embedding(int, const KView&, const KView&, const KView&) override { none("embedding"); }
  void embedding_backward(int, const KView&, const KView&, const KView&) override {
    none("embedding_backward");
  }
  void nll_loss(int, const KView&, const KView&, const KView&) override { none("nll_loss"); }
  void nll_loss_backward(int, const KView&, const KView&, const KView&) override {
    none("nll_loss_backward");
  }
  void sgd_step(int, const KView&, const KView&, const KView*, const SgdParams&) override {
    none("sgd_step");
  }
  void adam_step(int, const KView&, const KView&, const KView&, const KView&,
                 const AdamParams&) override {
    none("adam_step");
  }

 private:
  [[noreturn]] void none(const char* op) {
    fail(host_, Code::kNotSupported, std::string("no ") + op);
  }
  double get(const KView& v, int64_t i) {
    switch (v.dtype) {
      case DType::kFloat32:
        return v.as<float>()[i];
      case DType::kFloat64:
        return v.as<double>()[i];
      case DType::kInt64:
        return static_cast<double>(v.as<int64_t>()[i]);
      case DType::kBFloat16:
        return static_cast<float>(v.as<BFloat16>()[i]);
      case DType::kUInt8:
        return v.as<uint8_t>()[i];
    }
    return 0;
  }
  void put(const KView& v, int64_t i, double x) {
    switch (v.dtype) {
      case DType::kFloat32:
        v.as<float>()[i] = static_cast<float>(x);
        break;
      case DType::kFloat64:
        v.as<double>()[i] = x;
        break;
      case DType::kInt64:
        v.as<int64_t>()[i] = static_cast<int64_t>(x);
        break;
      case DType::kBFloat16:
        v.as<BFloat16>()[i] = BFloat16(static_cast<float>(x));
        break;
      case DType::kUInt8:
        v.as<uint8_t>()[i] = static_cast<uint8_t>(x);
        break;
    }
  }

  BackendHost host_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) dp::Backend* dp_cuda_plugin_entry(
    const dp::BackendHost* host, int abi_version, bool, const char** why) {
  if (abi_version != dp::kBackendAbiVersion) {
    *why = "fake CUDA plugin: another backend ABI";
    return nullptr;
  }
  return new FakeCuda(*host);
}
