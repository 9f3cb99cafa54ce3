#include "distributed/process_group.h"

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "device/trace.h"
#include "error.h"
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

double timeout_from_env(double requested) {
  DP_CHECK(std::isfinite(requested) && requested >= 0, kInvalidArgument,
           "timeout_seconds = " << requested << " is not a finite number >= 0");
  if (requested > 0) return requested;
  const char* env = std::getenv("DP_DISTRIBUTED_TIMEOUT");
  if (!env || !*env) return kDefaultTimeoutSeconds;
  char* end = nullptr;
  const double v = std::strtod(env, &end);
  DP_CHECK(end != env && *end == '\0' && std::isfinite(v) && v > 0, kInvalidArgument,
           "DP_DISTRIBUTED_TIMEOUT = \"" << env << "\" is not a number of seconds > 0");
  return v;
}

// Host memory holding t's values: t itself on a CPU device, else a copy.
Tensor host_view(const Tensor& t) {
  return t.device().is_cpu() ? t : copy_to_device(t, Device{DeviceType::kCpu, 0});
}

void divide(const Tensor& t, int by) {
  if (t.dtype() == DType::kFloat32) {
    float* p = t.data_as<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] /= static_cast<float>(by);
  } else {
    double* p = t.data_as<double>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] /= by;
  }
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

}  // namespace

std::string mpi_plugin_status() {
  return mpi_plugin().status;
}

bool Work::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
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
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
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
      std::lock_guard<std::mutex> lock(job.work->mu_);
      job.work->done_ = true;
      job.work->error_ = error;
    }
    job.work->cv_.notify_all();
  }
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
  if (!work.cv_.wait_for(lock, limit, [&] { return work.done_; })) {
    char who[64] = "a rank (before it knew its number)";
    if (size_ > 0) std::snprintf(who, sizeof who, "rank %d of %d", rank_, size_);
    char text[512];
    std::snprintf(text, sizeof text,
                  "dataparallel: %s waited %.0f s for %s (the process group's timeout; "
                  "DP_DISTRIBUTED_TIMEOUT): another rank died or stopped taking part; "
                  "aborting the job",
                  who, timeout_seconds_, work.what().c_str());
    std::fprintf(stderr, "%s\n", text);
    std::fflush(stderr);
    ctx_->log(kLogError, text);
    transport_->abort(1);
  }
  if (work.error_) {
    try {
      std::rethrow_exception(work.error_);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      DP_THROW(kBackend, work.what() << ": " << e.what());
    }
  }
}

void ProcessGroup::allreduce(const Tensor& t, ReduceOp op) {
  DP_CHECK(t.defined(), kInvalidArgument, "allreduce: the tensor is undefined");
  DP_CHECK(op != ReduceOp::kAverage || is_floating(t.dtype()), kDtypeMismatch,
           "allreduce: an average needs a floating tensor, not " << dtype_name(t.dtype()));
  t.check_writable();
  Tensor host = host_view(t);
  const int n = size_;
  auto work =
      submit("allreduce", -1, "allreduce of " + std::to_string(t.numel()) + " elements",
             [host, op, n](Transport& tr) {
               tr.allreduce(host.data(), static_cast<size_t>(host.numel()), host.dtype(), op);
               if (op == ReduceOp::kAverage) divide(host, n);
             });
  wait(*work);
  if (!host.same(t)) copy_bytes(t, host);
  t.bump_version();
}

void ProcessGroup::broadcast(const Tensor& t, int root) {
  DP_CHECK(t.defined(), kInvalidArgument, "broadcast: the tensor is undefined");
  DP_CHECK(root >= 0 && root < size_, kOutOfRange,
           "broadcast: root " << root << " is not a rank of this group of " << size_);
  t.check_writable();
  Tensor host = host_view(t);
  auto work =
      submit("broadcast", root, "broadcast from rank " + std::to_string(root),
             [host, root](Transport& tr) { tr.broadcast(host.data(), host.nbytes(), root); });
  wait(*work);
  if (!host.same(t)) copy_bytes(t, host);
  t.bump_version();
}

Tensor ProcessGroup::allgather(const Tensor& t) {
  DP_CHECK(t.defined(), kInvalidArgument, "allgather: the tensor is undefined");
  Tensor host = host_view(t);
  Shape shape = t.shape();
  if (shape.empty()) {
    shape = {size_};
  } else {
    shape[0] *= size_;
  }
  const Device cpu{DeviceType::kCpu, t.device().is_cpu() ? t.device().index : 0};
  Tensor out = Tensor::empty(ctx_, shape, t.dtype(), cpu);
  auto work =
      submit("allgather", -1, "allgather of " + std::to_string(t.numel()) + " elements",
             [host, out](Transport& tr) { tr.allgather(host.data(), out.data(), host.nbytes()); });
  wait(*work);
  return out.device() == t.device() ? out : copy_to_device(out, t.device());
}

void ProcessGroup::barrier() {
  auto work = submit("barrier", -1, "barrier", [](Transport& tr) { tr.barrier(); });
  wait(*work);
}

}  // namespace dp
