package org.dataparallel;

import java.util.Objects;
import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_process_group;
import org.dataparallel.swig.dp_process_group_options;

/**
 * The ranks of a multi-process job started by mpirun (mpiexec, srun) and the collectives
 * between them, as torch.distributed's MPI process group. Every rank creates it, and
 * every rank calls the same collectives in the same order; each runs on the group's
 * communication thread. A collective that waits longer than the group's timeout
 * (DP_DISTRIBUTED_TIMEOUT seconds, else 300) prints what it waited for and aborts the
 * whole job, so that a rank that died stops the others instead of hanging them.
 *
 * <p>MPI starts once per process: the group initialises it (unless the program did) and
 * finalises it when the group, and every {@link DistributedDataParallel} over it, is
 * closed; no group can be made after that. Keep one group for the program's life and
 * close it before the program ends:
 *
 * <pre>{@code
 * try (Context ctx = Context.builder().loadCuda(false).build();
 *      ProcessGroup group = ProcessGroup.fromMpi(ctx)) { ... }
 * }</pre>
 */
public final class ProcessGroup extends Handle<dp_process_group> {
  private ProcessGroup(dp_process_group handle) { super(handle); }

  /**
   * A group of every rank of the MPI job this process was started in, with the default
   * timeout. Collective. Throws NOT_SUPPORTED when the MPI plugin cannot be loaded,
   * BACKEND when MPI cannot start.
   */
  public static ProcessGroup fromMpi(Context ctx) { return fromMpi(ctx, 0); }

  /**
   * As {@link #fromMpi(Context)}, with a collective waiting at most timeoutSeconds
   * before the job is aborted (0: DP_DISTRIBUTED_TIMEOUT, else 300).
   */
  public static ProcessGroup fromMpi(Context ctx, double timeoutSeconds) {
    Objects.requireNonNull(ctx, "ctx");
    dp_process_group_options o = options(timeoutSeconds);
    try {
      return new ProcessGroup(CApi.dp_process_group_from_mpi(ctx.handle(), o));
    } finally {
      o.delete();
    }
  }

  /**
   * A group over a communicator the caller owns, passed as its Fortran handle
   * (MPI_Comm_c2f(comm) in C, comm.py2f() in mpi4py, the integer itself in Fortran), with
   * the default timeout. MPI must already be initialised with MPI_THREAD_SERIALIZED or more
   * (by the program, or by a group from {@link #fromMpi(Context)}), and stays the caller's:
   * close this group before MPI_Finalize. The group works on its own duplicate of the
   * communicator, so its collectives never match the caller's. Collective over the
   * communicator. Throws INVALID_ARGUMENT for a value that is no Fortran handle (outside
   * the int range, or -1), BACKEND when MPI is not initialised or the handle is
   * MPI_COMM_NULL, NOT_SUPPORTED when the MPI plugin cannot be loaded.
   */
  public static ProcessGroup fromMpiComm(Context ctx, long fortranComm) {
    return fromMpiComm(ctx, fortranComm, 0);
  }

  /**
   * As {@link #fromMpiComm(Context, long)}, with a collective waiting at most
   * timeoutSeconds before the job is aborted (0: DP_DISTRIBUTED_TIMEOUT, else 300).
   */
  public static ProcessGroup fromMpiComm(Context ctx, long fortranComm, double timeoutSeconds) {
    Objects.requireNonNull(ctx, "ctx");
    dp_process_group_options o = options(timeoutSeconds);
    try {
      return new ProcessGroup(CApi.dp_process_group_from_mpi_comm(ctx.handle(), fortranComm, o));
    } finally {
      o.delete();
    }
  }

  private static dp_process_group_options options(double timeoutSeconds) {
    if (!(Double.isFinite(timeoutSeconds) && timeoutSeconds >= 0)) {
      throw new IllegalArgumentException("timeoutSeconds = " + timeoutSeconds
          + ": must be a number of seconds > 0, or 0 for the default");
    }
    dp_process_group_options o = new dp_process_group_options();
    o.setTimeout_seconds(timeoutSeconds);
    return o;
  }

  /** This process's rank, 0 .. size() - 1. */
  public int rank() { return CApi.dp_process_group_rank(handle()); }

  /** The number of ranks. */
  public int size() { return CApi.dp_process_group_size(handle()); }

  /** This process's rank among the group's ranks on this machine. */
  public int localRank() { return CApi.dp_process_group_local_rank(handle()); }

  /** The number of the group's ranks on this machine. */
  public int localSize() { return CApi.dp_process_group_local_size(handle()); }

  /**
   * In place: every rank's tensor (the same shape and dtype on all) becomes the reduction
   * over the ranks. Returns tensor.
   */
  public Tensor allreduce(Tensor tensor, ReduceOp op) {
    Objects.requireNonNull(op, "op");
    CApi.dp_process_group_allreduce(handle(), of(tensor, "tensor"), op.ordinal());
    return tensor;
  }

  /** allreduce with {@link ReduceOp#SUM}. */
  public Tensor allreduce(Tensor tensor) { return allreduce(tensor, ReduceOp.SUM); }

  /** In place: every rank's tensor becomes rank root's. Returns tensor. */
  public Tensor broadcast(Tensor tensor, int root) {
    CApi.dp_process_group_broadcast(handle(), of(tensor, "tensor"), root);
    return tensor;
  }

  /**
   * Every rank's tensor (the same shape on all) concatenated along dim 0 in rank order, as
   * a new tensor on tensor's device (a 0-dim tensor gives a vector).
   */
  public Tensor allgather(Tensor tensor) {
    return Tensor.wrap(CApi.dp_process_group_allgather(handle(), of(tensor, "tensor")));
  }

  /** Returns when every rank has called it. */
  public void barrier() { CApi.dp_process_group_barrier(handle()); }

  @Override
  public String toString() {
    return isClosed() ? "ProcessGroup(closed)"
                      : "ProcessGroup(rank=" + rank() + ", size=" + size() + ")";
  }
}
