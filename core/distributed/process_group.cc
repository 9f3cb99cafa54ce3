#include "distributed/process_group.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "device/bfloat16.h"
#include "device/trace.h"
#include "error.h"
#include "ops/ops.h"
#include "tensor/copy.h"

namespace dp {

namespace {

// The plugin, loaded once per process and kept (as the CUDA plugin is): MPI must not be
// unloaded while it may still be finalised.
struct MpiPlugin {
  MpiPluginEntryFn entry = nullptr;
  std::string status;  // why entry is null
};

const MpiPlugin& mpi_plugin() {
  static const MpiPlugin plugin = [] {
    MpiPlugin p;
    const std::string path = plugin_path("DP_MPI_PLUGIN", "libdataparallel_mpi.so");
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      p.status = "the MPI plugin could not be loaded (" + std::string(why ? why : path) +
                 "); build with MPI (Debian: libopenmpi-dev) or set DP_MPI_PLUGIN";
      return p;
    }
    p.entry = reinterpret_cast<MpiPluginEntryFn>(dlsym(handle, kMpiPluginEntry));
    if (!p.entry) p.status = "the MPI plugin " + path + " has no entry point " + kMpiPluginEntry;
    return p;
  }();
  return plugin;
}

bool timeout_in_range(double seconds) {
  return seconds >= kMinTimeoutSeconds && seconds <= kMaxTimeoutSeconds;  // false for NaN
}

double timeout_from_env(double requested) {
  DP_CHECK(requested == 0 || timeout_in_range(requested), kInvalidArgument,
           "timeout_seconds = " << requested << " is outside [" << kMinTimeoutSeconds << ", "
                                << static_cast<long long>(kMaxTimeoutSeconds)
                                << "] seconds (a year; 0: the default)");
  if (requested > 0) return requested;
  const char* env = std::getenv("DP_DISTRIBUTED_TIMEOUT");
  if (!env || !*env) return kDefaultTimeoutSeconds;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  DP_CHECK(end != env && *end == '\0' && timeout_in_range(v), kInvalidArgument,
           "DP_DISTRIBUTED_TIMEOUT = \""
               << env << "\" is not a number of seconds in [" << kMinTimeoutSeconds << ", "
               << static_cast<long long>(kMaxTimeoutSeconds) << "] (a year)");
  return v;
}

// Host memory holding t's values: t itself on a CPU device, else a copy.
Tensor host_view(const Tensor& t) {
  return t.device().is_cpu() ? t : copy_to_device(t, Device{DeviceType::kCpu, 0});
}

// Ends the process with a message when its scope lasts longer than the timeout.
class Watchdog {
 public:
  Watchdog(double timeout_seconds, const char* what)
      : thread_([this, timeout_seconds, what] {
          std::unique_lock<std::mutex> lock(mu_);
          if (cv_.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                           [&] { return done_; })) {
            return;
          }
          std::fprintf(stderr,
                       "dataparallel: a rank (before it knew its number) waited %.0f s for %s "
                       "(the process group's timeout; DP_DISTRIBUTED_TIMEOUT): another rank did "
                       "not start; ending this one\n",
                       timeout_seconds, what);
          std::fflush(stderr);
          std::_Exit(1);
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// ---- CUDA tensors: a communicator of the CUDA backend (NCCL), or host staging ----

// DP_DISTRIBUTED_CUDA: how collectives on CUDA tensors move their bytes. Unset, empty or
// "nccl": on NCCL when every rank can use it on a GPU of its own, else through host
// memory and MPI; "mpi": always through host memory and MPI. Read at the first
// collective on each CUDA device; any other value is an invalid argument there.
bool cuda_comm_wanted() {
  const char* env = std::getenv("DP_DISTRIBUTED_CUDA");
  const std::string v = env ? env : "";
  DP_CHECK(v.empty() || v == "nccl" || v == "mpi", kInvalidArgument,
           "DP_DISTRIBUTED_CUDA = \"" << v << "\" is neither nccl nor mpi");
  return v != "mpi";
}

// This machine as NCCL tells machines apart (its host hash): NCCL_HOSTID when set, else
// the host name and the boot id.
uint64_t machine_hash() {
  std::string id;
  if (const char* env = std::getenv("NCCL_HOSTID"); env && *env) {
    id = env;
  } else {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
    id = name;
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string b;
    if (boot >> b) id += "/" + b;
  }
  return fnv1a(id);
}

// What each rank tells the others at a CUDA device's first collective.
enum CudaOfferState : int32_t {
  kOfferComm = 1,     // can and will use a communicator
  kOfferEnvMpi = 2,   // DP_DISTRIBUTED_CUDA=mpi
  kOfferNoComm = 3,   // the backend has no communicator
  kOfferNoBusId = 4,  // the device's PCI bus id could not be read
};
struct CudaOffer {
  char device[120];  // "<machine hash>/<PCI bus id>": equal on two ranks sharing a GPU
  int32_t state;
  int32_t reserved;
};
static_assert(sizeof(CudaOffer) == 128, "a fixed size for the allgather");

std::string offer_reason(int32_t state) {
  switch (state) {
    case kOfferEnvMpi:
      return "DP_DISTRIBUTED_CUDA=mpi is set there";
    case kOfferNoComm:
      return "its CUDA backend has no NCCL";
    case kOfferNoBusId:
      return "its GPU's PCI bus id could not be read";
    default:
      return "state " + std::to_string(state);
  }
}

// Rank 0's communicator id, broadcast to every rank; when it could not make one, its
// error text instead.
struct CommIdMessage {
  int32_t ok;
  uint32_t size;  // bytes of id used
  uint8_t id[248];
};
static_assert(sizeof(CommIdMessage) == 256, "a fixed size for the broadcast");

CollectiveOp collective_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return CollectiveOp::kSum;
    case ReduceOp::kAverage:
      return CollectiveOp::kAverage;
    case ReduceOp::kMax:
      return CollectiveOp::kMax;
    case ReduceOp::kMin:
      return CollectiveOp::kMin;
  }
  return CollectiveOp::kSum;
}

}  // namespace

void divide_in_place(const Tensor& t, int n) {
  // The count and the divisor in locals, so that the loops vectorise (measured: a 2 MiB
  // bucket in 70 us instead of 0.87 ms with numel() read each iteration).
  const int64_t count = t.numel();
  if (n == 1) return;
  if (t.dtype() == DType::kFloat32) {
    float* p = t.data_as<float>();
    if ((n & (n - 1)) == 0) {
      // A power of two: x * (1/n) is x / n exactly (both round the same real number), and
      // a multiply keeps up with memory where a vector divide does not.
      const float inverse = 1.0f / static_cast<float>(n);
      for (int64_t i = 0; i < count; ++i) p[i] *= inverse;
    } else {
      const float by = static_cast<float>(n);
      for (int64_t i = 0; i < count; ++i) p[i] /= by;
    }
  } else if (t.dtype() == DType::kBFloat16) {
    uint16_t* p = t.data_as<uint16_t>();
    const float by = static_cast<float>(n);
    for (int64_t i = 0; i < count; ++i) p[i] = float_to_bf16(bf16_to_float(p[i]) / by);
  } else {
    DP_CHECK(t.dtype() == DType::kFloat64, kInternal,
             "divide_in_place: " << dtype_name(t.dtype()) << " is not a floating dtype");
    double* p = t.data_as<double>();
    const double by = n;
    for (int64_t i = 0; i < count; ++i) p[i] /= by;
  }
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::shared_ptr<ProcessGroup> ProcessGroup::create(std::shared_ptr<Context> ctx, int64_t comm_f,
                                                   const ProcessGroupOptions& options) {
  DP_CHECK(ctx != nullptr, kInvalidArgument, "the process group needs a context");
  const double timeout = timeout_from_env(options.timeout_seconds);
  const MpiPlugin& plugin = mpi_plugin();
  DP_CHECK(plugin.entry != nullptr, kNotSupported, plugin.status);
  const char* why = nullptr;
  // MPI's start is collective in most implementations (the ranks exchange their
  // addresses), so a rank that never comes would hang this one inside it. It runs on
  // this thread (MPI's main thread, which also finalises), watched by another that ends
  // the process past the timeout; MPI_Abort is not available before MPI has started.
  std::unique_ptr<Transport> transport;
  {
    Watchdog watchdog(timeout, "MPI's start (MPI_Init_thread)");
    transport.reset(plugin.entry(kTransportAbiVersion, comm_f, &why));
  }
  DP_CHECK(transport != nullptr, kBackend,
           "MPI could not start: " << (why ? why : "unknown reason"));
  return std::shared_ptr<ProcessGroup>(
      new ProcessGroup(std::move(ctx), std::move(transport), timeout));
}

ProcessGroup::ProcessGroup(std::shared_ptr<Context> ctx, std::unique_ptr<Transport> transport,
                           double timeout_seconds)
    : ctx_(std::move(ctx)),
      transport_(std::move(transport)),
      describe_(transport_->describe()),
      timeout_seconds_(timeout_seconds) {
  thread_ = std::thread([this] { loop(); });
  // Collective: under the timeout like every other, so that a rank that never comes ends
  // the job instead of hanging this one.
  std::shared_ptr<Work> connected =
      submit("connect", -1, "the process group's start", [](Transport& tr) { tr.connect(); });
  try {
    wait(*connected);
  } catch (...) {
    stop();
    throw;
  }
  rank_ = transport_->rank();
  size_ = transport_->size();
  local_rank_ = transport_->local_rank();
  local_size_ = transport_->local_size();
}

ProcessGroup::~ProcessGroup() {
  stop();
  cuda_routes_.clear();  // every rank destroys its communicators here, after its last call
  transport_.reset();
}

void ProcessGroup::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ProcessGroup::loop() {
  trace::name_thread("comm");
  // Idle, it also watches a collective the caller runs itself (run): a check a second,
  // or more often for a short timeout.
  const auto poll = std::chrono::duration<double>(std::min(1.0, timeout_seconds_ / 4));
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // No wake-up when the caller starts one (it would cost what running it on the
      // caller saves): the check runs on a timer.
      while (!stopping_ && (queue_.empty() || busy_)) {
        cv_.wait_for(lock, poll);
        if (!inline_what_.empty() && std::chrono::steady_clock::now() > inline_deadline_) {
          timed_out(inline_what_);
        }
      }
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    std::exception_ptr error;
    try {
      trace::Span span(job.name, job.arg);
      job.run(*transport_);
    } catch (...) {
      error = std::current_exception();
    }
    job.run = nullptr;  // drop what the job holds before waiters go on
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    {
      std::lock_guard<std::mutex> lock(job.work->mu_);
      job.work->done_ = true;
      job.work->error_ = error;
    }
    job.work->cv_.notify_all();
  }
}

void ProcessGroup::run(const char* name, int64_t arg, const std::string& what,
                       const std::function<void(Transport&)>& job) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!queue_.empty() || busy_) {
      // Behind what is queued, to keep the issue order.
      lock.unlock();
      std::shared_ptr<Work> work = submit(name, arg, what, job);
      wait(*work);
      return;
    }
    busy_ = true;  // the communication thread starts nothing meanwhile
    inline_what_ = what;
    inline_deadline_ = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double>(timeout_seconds_));
  }
  std::exception_ptr error;
  try {
    trace::Span span(name, arg);
    job(*transport_);
  } catch (...) {
    error = std::current_exception();
  }
  bool queued;
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
    inline_what_.clear();
    queued = !queue_.empty();
  }
  if (queued) cv_.notify_all();  // jobs queued meanwhile may start
  if (error) rethrow_as_backend(error, what);
}

std::shared_ptr<Work> ProcessGroup::submit(const char* name, int64_t arg, std::string what,
                                           std::function<void(Transport&)> job) {
  auto work = std::make_shared<Work>(std::move(what));
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Job{name, arg, work, std::move(job)});
  }
  cv_.notify_all();
  return work;
}

void ProcessGroup::wait(Work& work) {
  std::unique_lock<std::mutex> lock(work.mu_);
  const auto limit = std::chrono::duration<double>(timeout_seconds_);
  if (!work.cv_.wait_for(lock, limit, [&] { return work.done_; })) timed_out(work.what());
  if (work.error_) rethrow_as_backend(work.error_, work.what());
}

void ProcessGroup::timed_out(const std::string& what) {
  char who[64] = "a rank (before it knew its number)";
  if (size_ > 0) std::snprintf(who, sizeof who, "rank %d of %d", rank_, size_);
  char text[512];
  std::snprintf(text, sizeof text,
                "dataparallel: %s waited %.0f s for %s (the process group's timeout; "
                "DP_DISTRIBUTED_TIMEOUT): another rank died or stopped taking part; "
                "aborting the job",
                who, timeout_seconds_, what.c_str());
  std::fprintf(stderr, "%s\n", text);
  std::fflush(stderr);
  ctx_->log(kLogError, text);
  transport_->abort(1);
  std::_Exit(1);  // abort() does not return; a transport that did would still end here
}

void ProcessGroup::rethrow_as_backend(const std::exception_ptr& error, const std::string& what) {
  try {
    std::rethrow_exception(error);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    DP_THROW(kBackend, what << ": " << e.what());
  }
}

void ProcessGroup::allreduce(const Tensor& t, ReduceOp op, const std::string& what) {
  DP_CHECK(t.defined(), kInvalidArgument, "allreduce: the tensor is undefined");
  DP_CHECK(op != ReduceOp::kAverage || is_floating(t.dtype()), kDtypeMismatch,
           "allreduce: an average needs a floating tensor, not " << dtype_name(t.dtype()));
  t.check_writable();
  // Before the first CUDA collective's set-up, which is collective (NCCL could reduce
  // uint8, host staging's MPI cannot: the same answer on every route and device).
  DP_CHECK(t.dtype() != DType::kUInt8, kDtypeMismatch,
           "allreduce: a uint8 tensor cannot be reduced (float32, float64, int64 or bfloat16)");
  const std::string named =
      what.empty() ? "allreduce of " + std::to_string(t.numel()) + " elements" : what;
  if (ProcessComm* comm = cuda_comm(t)) {
    const CollectiveOp cop = collective_op(op);
    run_on_comm("allreduce", -1, named + " on " + t.device().str() + " (NCCL)",
                [comm, t, cop] { comm->allreduce(t.data(), t.numel(), t.dtype(), cop, nullptr); });
    t.bump_version();
    return;
  }
  if (t.dtype() == DType::kBFloat16) {
    // The reduction runs in float32 on a widened copy and the result is rounded once:
    // more accurate than the transport's bfloat16 reduction (which rounds each partial
    // sum, as NCCL's does), and what a caller of this API expects. DDP's compressed
    // buckets take the transport's for its halved bytes.
    const Tensor wide = ops::to_dtype(t.detach(), DType::kFloat32);
    allreduce(wide, op, named);
    ops::copy_(t, ops::to_dtype(wide, DType::kBFloat16));
    return;
  }
  Tensor host = host_view(t);
  const int n = size_;
  run("allreduce", -1, named, [&host, op, n](Transport& tr) {
    tr.allreduce(host.data(), static_cast<size_t>(host.numel()), host.dtype(), op);
    if (op == ReduceOp::kAverage) divide_in_place(host, n);
  });
  if (!host.same(t)) copy_bytes(t, host);
  t.bump_version();
}

void ProcessGroup::broadcast(const Tensor& t, int root, const std::string& what) {
  DP_CHECK(t.defined(), kInvalidArgument, "broadcast: the tensor is undefined");
  DP_CHECK(root >= 0 && root < size_, kOutOfRange,
           "broadcast: root " << root << " is not a rank of this group of " << size_);
  t.check_writable();
  const std::string named = what.empty() ? "broadcast from rank " + std::to_string(root) : what;
  if (ProcessComm* comm = cuda_comm(t)) {
    run_on_comm("broadcast", root, named + " on " + t.device().str() + " (NCCL)",
                [comm, t, root] { comm->broadcast(t.data(), t.nbytes(), root); });
    t.bump_version();
    return;
  }
  Tensor host = host_view(t);
  run("broadcast", root, named,
      [&host, root](Transport& tr) { tr.broadcast(host.data(), host.nbytes(), root); });
  if (!host.same(t)) copy_bytes(t, host);
  t.bump_version();
}

Tensor ProcessGroup::allgather(const Tensor& t) {
  DP_CHECK(t.defined(), kInvalidArgument, "allgather: the tensor is undefined");
  Shape shape = t.shape();
  if (shape.empty()) {
    shape = {size_};
  } else {
    shape[0] *= size_;
  }
  if (ProcessComm* comm = cuda_comm(t)) {
    Tensor gathered = Tensor::empty(ctx_, shape, t.dtype(), t.device());
    run_on_comm("allgather", -1,
                "allgather of " + std::to_string(t.numel()) + " elements on " + t.device().str() +
                    " (NCCL)",
                [comm, t, gathered] { comm->allgather(t.data(), gathered.data(), t.nbytes()); });
    return gathered;
  }
  Tensor host = host_view(t);
  const Device cpu{DeviceType::kCpu, t.device().is_cpu() ? t.device().index : 0};
  Tensor out = Tensor::empty(ctx_, shape, t.dtype(), cpu);
  run("allgather", -1, "allgather of " + std::to_string(t.numel()) + " elements",
      [&host, &out](Transport& tr) { tr.allgather(host.data(), out.data(), host.nbytes()); });
  return out.device() == t.device() ? out : copy_to_device(out, t.device());
}

ProcessComm* ProcessGroup::cuda_comm(const Tensor& t) {
  if (t.device().type != DeviceType::kCuda) return nullptr;
  const int dev = t.device().index;
  auto decided = [&]() -> const CudaRoute* {
    std::lock_guard<std::mutex> lock(cuda_mu_);
    auto it = cuda_routes_.find(dev);
    return it != cuda_routes_.end() && it->second.decided ? &it->second : nullptr;
  };
  const CudaRoute* route = decided();
  if (!route) {
    const bool want = cuda_comm_wanted();
    auto work = submit(
        "cuda route", dev,
        "the set-up of the collectives on " + t.device().str() + " (NCCL, or host memory and MPI)",
        [this, dev, want](Transport& tr) { decide_cuda_route(tr, dev, want); });
    wait(*work);  // rethrows a failed set-up the first time
    route = decided();
  }
  // Entries are never erased while the group lives, so route stays valid.
  DP_CHECK(route != nullptr && route->failure.empty(), kState,
           "collectives on " << t.device().str() << " cannot run: setting up their NCCL "
                             << "communicator failed at the first one ("
                             << (route ? route->failure : std::string("no route")) << ")");
  return route->comm.get();
}

void ProcessGroup::decide_cuda_route(Transport& tr, int dev, bool want_comm) {
  {
    std::lock_guard<std::mutex> lock(cuda_mu_);
    if (cuda_routes_[dev].decided) return;  // a second thread asked at the same time
  }
  Backend& backend = ctx_->backend(DeviceType::kCuda);
  const std::string where = "cuda:" + std::to_string(dev);

  // Every rank says whether it can and will use a communicator, and on which GPU.
  CudaOffer mine{};
  std::string bus_id, bus_error;
  mine.state = kOfferComm;
  if (!want_comm) {
    mine.state = kOfferEnvMpi;
  } else if (!backend.process_comm_unavailable().empty()) {
    mine.state = kOfferNoComm;
  } else {
    try {
      bus_id = backend.pci_bus_id(dev);
    } catch (const std::exception& e) {
      bus_error = e.what();
    }
    if (bus_id.empty()) mine.state = kOfferNoBusId;
  }
  std::snprintf(mine.device, sizeof mine.device, "%016llx/%s",
                static_cast<unsigned long long>(machine_hash()), bus_id.c_str());
  std::vector<CudaOffer> offers(static_cast<size_t>(size_));
  tr.allgather(&mine, offers.data(), sizeof mine);

  // The same decision on every rank: each sees the same offers.
  std::string staging;   // why the bytes go through host memory; "" for a communicator
  bool expected = true;  // staging for a reason the user chose (DP_DISTRIBUTED_CUDA=mpi)
  for (int r = 0; r < size_ && staging.empty(); ++r) {
    const int32_t state = offers[static_cast<size_t>(r)].state;
    if (state == kOfferComm) continue;
    expected = state == kOfferEnvMpi;
    if (r == rank_) {
      staging = state == kOfferEnvMpi ? "DP_DISTRIBUTED_CUDA=mpi"
                : state == kOfferNoComm
                    ? backend.process_comm_unavailable()
                    : "the PCI bus id of " + where + " could not be read (" + bus_error + ")";
    } else {
      staging = "rank " + std::to_string(r) + " does not use NCCL: " + offer_reason(state);
    }
  }
  for (int i = 0; i < size_ && staging.empty(); ++i) {
    for (int j = i + 1; j < size_ && staging.empty(); ++j) {
      const CudaOffer& a = offers[static_cast<size_t>(i)];
      const CudaOffer& b = offers[static_cast<size_t>(j)];
      if (std::strncmp(a.device, b.device, sizeof a.device) != 0) continue;
      const char* slash = std::strchr(a.device, '/');
      staging = "ranks " + std::to_string(i) + " and " + std::to_string(j) +
                " share one GPU (PCI bus " + std::string(slash ? slash + 1 : a.device) +
                " on one machine), and NCCL cannot run two ranks on one GPU";
      expected = false;
    }
  }

  // A communicator: rank 0 makes its id, the transport carries it, every rank joins.
  std::unique_ptr<ProcessComm> comm;
  std::string failure;
  if (staging.empty()) {
    CommIdMessage msg{};
    if (rank_ == 0) {
      std::string error;
      std::vector<uint8_t> id;
      try {
        id = backend.process_comm_id();
        if (id.size() > sizeof msg.id) error = std::to_string(id.size()) + "-byte id";
      } catch (const std::exception& e) {
        error = e.what();
      }
      msg.ok = error.empty() ? 1 : 0;
      if (msg.ok) {
        msg.size = static_cast<uint32_t>(id.size());
        std::memcpy(msg.id, id.data(), id.size());
      } else {
        msg.size = static_cast<uint32_t>(std::min(error.size(), sizeof msg.id));
        std::memcpy(msg.id, error.data(), msg.size);
      }
    }
    tr.broadcast(&msg, sizeof msg, 0);
    const size_t size = std::min<size_t>(msg.size, sizeof msg.id);
    if (!msg.ok) {
      staging = "rank 0 could not make a NCCL id: " +
                std::string(reinterpret_cast<const char*>(msg.id), size);
      expected = false;
    } else {
      try {
        comm = backend.process_comm(std::vector<uint8_t>(msg.id, msg.id + size), size_, rank_, dev);
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(cuda_mu_);
    CudaRoute& route = cuda_routes_[dev];
    route.decided = true;
    route.comm = std::move(comm);
    route.failure = failure;
  }
  const std::string who = "process group, rank " + std::to_string(rank_) + " of " +
                          std::to_string(size_) + ": collectives on " + where;
  if (!failure.empty()) {
    DP_THROW(kBackend, who << ": the NCCL communicator could not be made: " << failure);
  }
  if (staging.empty()) {
    ctx_->log(kLogInfo, who + " run on NCCL");
  } else if (!staging_logged_) {
    staging_logged_ = true;  // once per group: every CUDA device would say the same
    ctx_->log(expected ? kLogInfo : kLogWarning,
              who + " go through host memory and MPI: " + staging);
  }
}

void ProcessGroup::run_on_comm(const char* name, int64_t arg, std::string what,
                               std::function<void()> job) {
  auto work = submit(name, arg, std::move(what), [job = std::move(job)](Transport&) { job(); });
  wait(*work);
}

void ProcessGroup::barrier() {
  run("barrier", -1, "barrier", [](Transport& tr) { tr.barrier(); });
}

}  // namespace dp
