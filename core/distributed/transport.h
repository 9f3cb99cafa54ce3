// The Transport interface: the collectives a process group asks of the library that
// moves bytes between processes. The MPI plugin (libdataparallel_mpi.so, built from mpi/)
// implements it; the core never includes mpi.h. Like device/backend.h, this header is the
// plugin's whole contract with the core: a pure virtual class and plain types.
//
// Rules every implementation follows:
// - Every call is blocking and collective: all ranks make the same calls in the same
//   order. The core makes them from one thread per group (its communication thread), so
//   an implementation needs no lock of its own.
// - Buffers are host memory. Failures throw std::runtime_error with a message naming the
//   call; the core turns it into a kBackend error.
// - abort() may be called from any thread, also while another call blocks: it ends the
//   whole job (every rank) and does not return.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/dtype.h"

namespace dp {

enum class ReduceOp : int { kSum = 0, kAverage = 1, kMax = 2, kMin = 3 };

class Transport {
 public:
  virtual ~Transport() = default;

  // The collective part of the start (the transport's own communicator, the ranks): the
  // core runs it on the communication thread, under the group's timeout. rank() and the
  // others are valid after it.
  virtual void connect() = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's place among the ranks of its machine, and how many those are.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // "MPI (Open MPI v4.1.4, thread level MULTIPLE)": for logs and errors.
  virtual std::string describe() const = 0;

  // In place: buf holds `count` elements of `dtype` (float32, float64, int64 or bfloat16)
  // and receives the elementwise sum, max or min over the ranks (kAverage is the core's:
  // it sums, then divides). bfloat16: the sum only; it moves 2 bytes an element and each
  // combination of two partial sums is computed in float32 and rounded to bfloat16 (to
  // nearest even), as NCCL's bfloat16 sum; every rank receives the same bits.
  virtual void allreduce(void* buf, size_t count, DType dtype, ReduceOp op) = 0;
  virtual void broadcast(void* buf, size_t bytes, int root) = 0;
  // recv (size() * bytes) receives every rank's `bytes` of send, in rank order.
  virtual void allgather(const void* send, void* recv, size_t bytes) = 0;
  virtual void barrier() = 0;
  [[noreturn]] virtual void abort(int exit_code) = 0;
};

// The plugin's entry point, `dp_mpi_plugin_entry`, which does only local work: a transport
// (not connected yet) over the world of the MPI environment the process was started in (comm_f ==
// kWorldComm; MPI is initialised here if the program has not done it), or over the caller's
// communicator, given as its Fortran handle (MPI_Comm_c2f; mpi4py's Comm.py2f()), which stays the
// caller's. Returns null and sets *why on failure. The transport is deleted by the core.
constexpr int kTransportAbiVersion = 2;  // 2: bfloat16 allreduce
constexpr int64_t kWorldComm = -1;
constexpr const char* kMpiPluginEntry = "dp_mpi_plugin_entry";
using MpiPluginEntryFn = Transport* (*)(int abi_version, int64_t comm_f, const char** why);

}  // namespace dp
