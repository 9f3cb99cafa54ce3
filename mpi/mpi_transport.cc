// libdataparallel_mpi.so: the Transport (core/distributed/transport.h) over MPI. Loaded
// by the core on the first process group, so libdataparallel.so needs no MPI library.
// Written against the MPI standard only (no Open MPI or MPICH extension), so it runs the
// same under mpirun, mpiexec or srun.
//
// Each transport works on its own duplicate of the communicator (MPI_Comm_dup): the
// library's collectives never match the application's. Errors return (MPI_ERRORS_RETURN)
// and become exceptions naming the call.
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "device/bfloat16.h"
#include "device/cpu/target_clones.h"
#include "distributed/transport.h"

namespace {

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(len));
}

void check(int code, const char* call) {
  if (code != MPI_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: " + mpi_error(code));
}

// bfloat16: MPI has no such type. Elements travel as 2-byte units and their sum is a
// user-defined operation that adds two values in float32 and rounds the result (to
// nearest even), as NCCL's bfloat16 sum does. It commutes bit for bit, so MPI may combine
// in any order and every rank receives the same bits. Only the sum is offered: DDP's
// compressed buckets need nothing else, and the process group's public allreduce reduces
// bfloat16 tensors in float32.
DP_CLONES void sum_bf16(void* in, void* inout, int* len, MPI_Datatype*) {
  const uint16_t* a = static_cast<const uint16_t*>(in);
  uint16_t* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[i] = dp::float_to_bf16(dp::bf16_to_float(a[i]) + dp::bf16_to_float(b[i]));
  }
}

// The datatype and the sum above, made once the transport connects (MPI is running) and
// freed with it.
struct Bf16Sum {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;

  void create() {
    check(MPI_Type_contiguous(2, MPI_BYTE, &type), "MPI_Type_contiguous");
    check(MPI_Type_commit(&type), "MPI_Type_commit");
    check(MPI_Op_create(&sum_bf16, 1, &op), "MPI_Op_create");
  }
  void free() {
    if (op != MPI_OP_NULL) MPI_Op_free(&op);
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
  }
};

MPI_Datatype mpi_type(dp::DType dtype) {
  switch (dtype) {
    case dp::DType::kFloat32:
      return MPI_FLOAT;
    case dp::DType::kFloat64:
      return MPI_DOUBLE;
    case dp::DType::kInt64:
      return MPI_INT64_T;
    default:
      throw std::runtime_error("MPI allreduce: no MPI type for dtype " +
                               std::to_string(static_cast<int>(dtype)));
  }
}

MPI_Op mpi_op(dp::ReduceOp op) {
  switch (op) {
    case dp::ReduceOp::kSum:
    case dp::ReduceOp::kAverage:
      return MPI_SUM;
    case dp::ReduceOp::kMax:
      return MPI_MAX;
    case dp::ReduceOp::kMin:
      return MPI_MIN;
  }
  throw std::runtime_error("MPI allreduce: unknown reduce op");
}

// MPI counts are int: larger buffers go in pieces of at most this many elements.
constexpr size_t kMaxCount = INT_MAX / 16;

// MPI initialised by this plugin is finalised when the last transport over the world goes:
// MPI can be initialised once per process, so a program keeps one process group for its
// life (docs/distributed.md).
std::mutex g_init_mu;
int g_world_transports = 0;
bool g_we_initialised = false;

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "SINGLE";
    case MPI_THREAD_FUNNELED:
      return "FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "SERIALIZED";
    default:
      return "MULTIPLE";
  }
}

// The implementation this plugin was compiled against, as its MPI_Get_library_version
// names it (null for another MPI: only the version check below applies).
#if defined(OPEN_MPI)
constexpr const char* kBuiltFor = "Open MPI";
#elif defined(MPICH_VERSION)
constexpr const char* kBuiltFor = "MPICH";
#else
constexpr const char* kBuiltFor = nullptr;
#endif

// The plugin's MPI calls go to the first library in the process that defines them: an MPI
// loaded before it with global symbols (mpi4py loads its MPI so) takes them, and gets
// handles of another implementation. Caught before MPI starts (both calls may precede
// MPI_Init): a library that names another implementation (an Open MPI plugin where MPICH
// was loaded first, or the reverse), or one older than the standard of the plugin's
// headers (MPI 4.0 headers, MPI 3.1 library; a newer library is an upgrade).
void check_mpi_is_the_one_built_against() {
  int version = 0, subversion = 0;
  check(MPI_Get_version(&version, &subversion), "MPI_Get_version");
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  check(MPI_Get_library_version(library, &len), "MPI_Get_library_version");
  std::string name(library, static_cast<size_t>(len));
  name = name.substr(0, name.find_first_of(",\n"));
  const bool other = kBuiltFor != nullptr && name.find(kBuiltFor) == std::string::npos;
  const bool older =
      version < MPI_VERSION || (version == MPI_VERSION && subversion < MPI_SUBVERSION);
  if (other || older) {
    throw std::runtime_error(
        std::string("the MPI plugin was built against ") + (kBuiltFor ? kBuiltFor : "an MPI") +
        " (MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION) +
        " headers) but its calls reach " + name + " (MPI " + std::to_string(version) + "." +
        std::to_string(subversion) +
        "): another MPI library was loaded into this process first (such as mpi4py's); use the "
        "plugin built against that MPI (DP_MPI_PLUGIN)");
  }
}

class MpiTransport final : public dp::Transport {
 public:
  explicit MpiTransport(int64_t comm_f) : owns_world_(comm_f == dp::kWorldComm) {
    std::lock_guard<std::mutex> lock(g_init_mu);
    check_mpi_is_the_one_built_against();
    int initialised = 0, finalised = 0;
    check(MPI_Initialized(&initialised), "MPI_Initialized");
    check(MPI_Finalized(&finalised), "MPI_Finalized");
    if (finalised) {
      throw std::runtime_error(
          "MPI was finalised in this process (when its last process group was released); "
          "MPI can be initialised once per process, so keep one process group for the "
          "program's life");
    }
    if (!initialised) {
      if (!owns_world_) {
        throw std::runtime_error("a communicator was passed in but MPI is not initialised");
      }
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &thread_level_),
            "MPI_Init_thread");
      g_we_initialised = true;
    } else {
      check(MPI_Query_thread(&thread_level_), "MPI_Query_thread");
    }
    // The core calls MPI from its communication thread, and abort() from any thread.
    if (thread_level_ < MPI_THREAD_SERIALIZED) {
      throw std::runtime_error(std::string("MPI was initialised with thread level ") +
                               thread_level_name(thread_level_) +
                               "; the process group needs MPI_THREAD_SERIALIZED or "
                               "MPI_THREAD_MULTIPLE (MPI_Init_thread)");
    }
    base_ = MPI_COMM_WORLD;
    if (!owns_world_) {
      base_ = MPI_Comm_f2c(static_cast<MPI_Fint>(comm_f));
      if (base_ == MPI_COMM_NULL) throw std::runtime_error("the communicator passed in is null");
    }
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, static_cast<size_t>(len));
    v = v.substr(0, v.find_first_of(",\n"));
    describe_ = "MPI (" + v + ", thread level " + thread_level_name(thread_level_) + ")";
    if (owns_world_) ++g_world_transports;
  }

  ~MpiTransport() override {
    std::lock_guard<std::mutex> lock(g_init_mu);
    const bool last_over_world = owns_world_ && --g_world_transports == 0;
    // A program that owns MPI may have finalised it already (mpi4py does at exit): nothing
    // may be freed then.
    int finalised = 0;
    if (MPI_Finalized(&finalised) != MPI_SUCCESS || finalised) return;
    bf16_.free();
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    if (last_over_world && g_we_initialised) MPI_Finalize();
  }

  void connect() override {
    check(MPI_Comm_dup(base_, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    MPI_Comm local = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    check(MPI_Comm_rank(local, &local_rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(local, &local_size_), "MPI_Comm_size");
    MPI_Comm_free(&local);
    bf16_.create();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  std::string describe() const override { return describe_; }

  void allreduce(void* buf, size_t count, dp::DType dtype, dp::ReduceOp op) override {
    const bool bf16 = dtype == dp::DType::kBFloat16;
    if (bf16 && op != dp::ReduceOp::kSum && op != dp::ReduceOp::kAverage) {
      throw std::runtime_error("MPI allreduce: bfloat16 is reduced by sum only");
    }
    const MPI_Datatype type = bf16 ? bf16_.type : mpi_type(dtype);
    const MPI_Op mop = bf16 ? bf16_.op : mpi_op(op);
    const size_t esize = dp::dtype_size(dtype);
    char* p = static_cast<char*>(buf);
    for (size_t done = 0; done < count;) {
      const size_t n = count - done < kMaxCount ? count - done : kMaxCount;
      check(MPI_Allreduce(MPI_IN_PLACE, p + done * esize, static_cast<int>(n), type, mop, comm_),
            "MPI_Allreduce");
      done += n;
    }
  }

  void broadcast(void* buf, size_t bytes, int root) override {
    char* p = static_cast<char*>(buf);
    for (size_t done = 0; done < bytes;) {
      const size_t n = bytes - done < kMaxCount ? bytes - done : kMaxCount;
      check(MPI_Bcast(p + done, static_cast<int>(n), MPI_BYTE, root, comm_), "MPI_Bcast");
      done += n;
    }
  }

  void allgather(const void* send, void* recv, size_t bytes) override {
    if (bytes > kMaxCount) {
      throw std::runtime_error("MPI_Allgather: " + std::to_string(bytes) +
                               " bytes per rank is more than one call takes");
    }
    check(MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, recv, static_cast<int>(bytes),
                        MPI_BYTE, comm_),
          "MPI_Allgather");
  }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

  // Ends the whole job, as the timeout's message says, even for a group over part of it.
  // MPI_Abort on MPI_COMM_WORLD goes through the launcher, which ends every rank at once;
  // on a duplicate, MPICH 4.0 may keep the aborting rank until the others next call MPI
  // (tests/distributed/ddp_scenarios.c, stall-barrier: 60 s for a 3 s timeout). Open MPI
  // ends the job for any communicator. The launcher forwards each rank's output on its
  // own schedule, and MPICH's Hydra was seen (once, on a loaded machine) to end the job
  // before forwarding the message that the caller wrote just before: a fifth of a second
  // lets it pass first, a pause nobody waiting minutes for a timeout notices.
  [[noreturn]] void abort(int exit_code) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);  // MPI_Abort should not return
  }

 private:
  bool owns_world_;
  MPI_Comm base_ = MPI_COMM_NULL;  // the world or the caller's: what comm_ duplicates
  MPI_Comm comm_ = MPI_COMM_NULL;
  int thread_level_ = MPI_THREAD_SINGLE;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  Bf16Sum bf16_;
  std::string describe_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) dp::Transport* dp_mpi_plugin_entry(
    int abi_version, int64_t comm_f, const char** why) {
  thread_local std::string message;
  try {
    if (abi_version != dp::kTransportAbiVersion) {
      throw std::runtime_error("plugin transport ABI " + std::to_string(dp::kTransportAbiVersion) +
                               " but the core wants " + std::to_string(abi_version));
    }
    return new MpiTransport(comm_f);
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown error";
  }
  *why = message.c_str();
  return nullptr;
}
