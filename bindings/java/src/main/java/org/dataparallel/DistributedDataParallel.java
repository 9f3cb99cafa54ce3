package org.dataparallel;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_data_parallel_options;
import org.dataparallel.swig.dp_ddp;
import org.dataparallel.swig.dp_ddp_phase_times;
import org.dataparallel.swig.dp_ddp_options;
import org.dataparallel.swig.dp_device;
import org.dataparallel.swig.dp_tensor;

/**
 * torch.nn.parallel.DistributedDataParallel: each rank calls forward on its own share of
 * the global batch, and backward ({@link Tensor#backward()} on a loss computed from the
 * output) leaves in the module's parameters the gradients averaged over the ranks, so that
 * every rank's optimizer takes the same step. Inside a rank the module runs as a
 * DataParallel over the rank's devices (with one device, the module runs itself); the
 * builder takes that DataParallel's options too (chunkSizes, gradReduceDtype, ...).
 *
 * <p>Building it is collective: every rank checks that the models agree (parameter and
 * buffer names, shapes, dtypes; otherwise every rank throws INVALID_ARGUMENT naming the
 * first difference) and takes rank 0's parameters and buffers.
 *
 * <pre>{@code
 * try (DistributedDataParallel ddp = DistributedDataParallel.builder(model, group).build()) {
 *   Tensor loss = Ops.crossEntropy(ddp.forward(xOfThisRank), yOfThisRank);
 *   opt.zeroGrad();
 *   loss.backward();  // gradients averaged over the ranks
 *   opt.step();
 * }
 * }</pre>
 */
public final class DistributedDataParallel extends Handle<dp_ddp> {
  private final Module module;
  private final ProcessGroup group;
  private boolean gradSync = true;

  private DistributedDataParallel(dp_ddp handle, Module module, ProcessGroup group) {
    super(handle);
    this.module = module;
    this.group = group;
  }

  public static Builder builder(Module module, ProcessGroup group) {
    return new Builder(module, group);
  }

  /** Options of a DistributedDataParallel (PyTorch's defaults). */
  public static final class Builder {
    private final Module module;
    private final ProcessGroup group;
    private List<Device> devices;
    private Device outputDevice;
    private int dim;
    private long bucketBytes = 25L << 20;
    private long firstBucketBytes = 1L << 20;
    private boolean broadcastBuffers = true;
    private DType allreduceDtype = DType.FLOAT32;
    private final DataParallelSettings local = new DataParallelSettings();

    private Builder(Module module, ProcessGroup group) {
      this.module = Objects.requireNonNull(module, "module");
      this.group = Objects.requireNonNull(group, "group");
    }

    /**
     * This rank's devices (default: the GPU of its local rank where CUDA devices exist,
     * else its share of the CPU devices).
     */
    public Builder devices(Device... devices) {
      Objects.requireNonNull(devices, "devices");
      if (devices.length == 0) {
        throw new IllegalArgumentException(
            "devices() needs at least one device; leave it out for the rank's default");
      }
      this.devices = List.copyOf(Device.requireAll("devices", Arrays.asList(devices)));
      return this;
    }

    /** Where outputs are gathered (default: the first device). */
    public Builder outputDevice(Device device) {
      this.outputDevice = device;
      return this;
    }

    /** The batch dimension (default 0). */
    public Builder dim(int dim) {
      this.dim = dim;
      return this;
    }

    /**
     * The gradient buckets' size in bytes (default 25 MiB, PyTorch's bucket_cap_mb): a
     * bucket's allreduce starts as soon as backward has produced its last gradient.
     */
    public Builder bucketBytes(long bytes) {
      this.bucketBytes = positive(bytes, "bucketBytes");
      return this;
    }

    /** The first (last-layer) bucket's size in bytes (default 1 MiB). */
    public Builder firstBucketBytes(long bytes) {
      this.firstBucketBytes = positive(bytes, "firstBucketBytes");
      return this;
    }

    /**
     * Whether rank 0's buffers (BatchNorm statistics) reach every rank before each forward
     * (default true).
     */
    public Builder broadcastBuffers(boolean broadcast) {
      this.broadcastBuffers = broadcast;
      return this;
    }

    /**
     * What float32 gradient buckets travel between the ranks in: FLOAT32 (default), or
     * BFLOAT16 as PyTorch DDP's bf16_compress_hook (each rank's gradient divided by the
     * ranks and rounded, summed in bfloat16, widened back): half the bytes, each average
     * within ranks * 2^-8 times the mean of the ranks' gradient magnitudes of the float32
     * one (docs/distributed.md). Every rank passes the same; any other dtype throws
     * INVALID_ARGUMENT at build.
     */
    public Builder allreduceDtype(DType dtype) {
      this.allreduceDtype = Objects.requireNonNull(dtype, "dtype");
      return this;
    }

    // The DataParallel inside the rank: DataParallel.Builder's setters, but for gather
    // (the rank's output is always gathered, as in PyTorch's DDP) and bucketBytes (taken
    // by the gradient buckets above: see broadcastBucketBytes).

    /**
     * Rows per device of this rank's batch, one per device, summing to it (default: equal
     * chunks as torch.chunk). Checked at build (count, negatives) and at each forward (sum).
     */
    public Builder chunkSizes(long... sizes) {
      local.chunkSizes = Objects.requireNonNull(sizes, "sizes").clone();
      return this;
    }

    /** Keep the rank's replicas across forwards while grad mode is off and nothing changed. */
    public Builder cacheReplicas(boolean cache) {
      local.cacheReplicas = cache;
      return this;
    }

    /**
     * NONE (default): buffers keep replica 0's updates; AVERAGE: the mean over the rank's
     * replicas (broadcastBuffers then makes rank 0's the job's).
     */
    public Builder bufferSync(BufferSync sync) {
      local.bufferSync = Objects.requireNonNull(sync, "sync");
      return this;
    }

    /** CPU replicas share the parameters' memory instead of copying it (default true). */
    public Builder aliasCpu(boolean alias) {
      local.aliasCpu = alias;
      return this;
    }

    /**
     * DataParallel.Builder's bucketBytes, renamed beside {@link #bucketBytes}: the bucket
     * size in bytes of the broadcast that replicates the module onto the rank's devices (0,
     * the default: 10 MiB), not a gradient bucket.
     */
    public Builder broadcastBucketBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException(
            "broadcastBucketBytes = " + bytes + ": must be >= 0 (0: 10 MiB)");
      }
      local.bucketBytes = bytes;
      return this;
    }

    /**
     * The dtype the rank's replicas' float32 gradients move and are summed in before the
     * float32 average over the ranks: FLOAT32 (default), or BFLOAT16 as PyTorch DDP's
     * bf16_compress_hook (docs/autocast.md). Any other throws INVALID_ARGUMENT at build.
     */
    public Builder gradReduceDtype(DType dtype) {
      local.gradReduceDtype = Objects.requireNonNull(dtype, "dtype");
      return this;
    }

    /**
     * Collective: every rank builds its DistributedDataParallel at the same point. The
     * options are copied; the builder may be reused.
     */
    public DistributedDataParallel build() {
      dp_ddp_options o = new dp_ddp_options();
      dp_data_parallel_options localOptions = new dp_data_parallel_options();
      dp_device out = outputDevice == null ? null : outputDevice.toNative();
      try {
        o.setBucket_bytes(bucketBytes);
        o.setFirst_bucket_bytes(firstBucketBytes);
        o.setBroadcast_buffers(broadcastBuffers ? 1 : 0);
        o.setAllreduce_dtype(allreduceDtype.value());
        local.copyInto(localOptions);
        o.set_local(localOptions); // a copy: localOptions is freed below
        return new DistributedDataParallel(
            CApi.dp_ddp_create(module.handle(), group.handle(), Device.pairs(devices), out, dim, o),
            module, group);
      } finally {
        o.delete();
        localOptions.delete();
        if (out != null) out.delete();
      }
    }

    private static long positive(long bytes, String name) {
      if (bytes <= 0) throw new IllegalArgumentException(name + " = " + bytes + ": must be > 0");
      return bytes;
    }
  }

  /** One forward of this rank's batch, for a one-input, one-output module. */
  public Tensor forward(Tensor input) {
    return Tensor.single(forwardAll(input), "forward", "forwardAll");
  }

  /** One forward of this rank's batch: the outputs. */
  public Tensor[] forwardAll(Tensor... inputs) { return forwardAll(inputs, null); }

  /** As forwardAll; broadcast[i] copies input i whole to each of the rank's devices. */
  public Tensor[] forwardAll(Tensor[] inputs, boolean[] broadcast) {
    dp_tensor[] in = Tensor.handles("inputs", inputs);
    return Tensor.wrap(CApi.dp_ddp_forward(handle(), in, broadcast));
  }

  /** The wrapped module (the object passed to the builder). */
  public Module module() {
    handle();
    return module;
  }

  /** The process group (the object passed to the builder). */
  public ProcessGroup group() {
    handle();
    return group;
  }

  /** This rank's devices. */
  public List<Device> devices() { return Device.fromPairs(CApi.dp_ddp_devices(handle())); }

  /** The number of gradient buckets. */
  public long bucketCount() { return CApi.dp_ddp_bucket_count(handle()); }

  /**
   * Seconds of a step by part: the rank's DataParallel phases ({@code local}), rank 0's
   * buffers to every rank before the forward, the gradient buckets' allreduce (summed over
   * the buckets, on the communication thread, overlapping backward) and backward's wait for
   * it (the part backward did not hide).
   */
  public record StepTimes(
      PhaseTimes local, double bufferBroadcast, double allreduce, double syncWait) {
    static StepTimes of(dp_ddp_phase_times t) {
      return new StepTimes(PhaseTimes.of(t.getLocal()), t.getBuffer_broadcast(), t.getAllreduce(),
          t.getSync_wait());
    }
  }

  /** The last forward's (and its backward's) times, the totals, and the forwards counted. */
  public record Stats(StepTimes last, StepTimes total, long calls) {}

  public Stats stats() {
    dp_ddp_phase_times last = new dp_ddp_phase_times();
    dp_ddp_phase_times total = new dp_ddp_phase_times();
    try {
      long calls = CApi.dp_ddp_stats(handle(), last, total);
      return new Stats(StepTimes.of(last), StepTimes.of(total), calls);
    } finally {
      last.delete();
      total.delete();
    }
  }

  public void resetStats() { CApi.dp_ddp_reset_stats(handle()); }

  /**
   * false: the backwards of the following forwards only accumulate this rank's gradients
   * (gradient accumulation); true (the default): the next backward averages the gradients
   * over the ranks, what accumulated included. Read at each forward.
   */
  public synchronized void setGradSync(boolean sync) {
    CApi.dp_ddp_set_grad_sync(handle(), sync ? 1 : 0);
    gradSync = sync;
  }

  public synchronized boolean gradSync() {
    handle();
    return gradSync;
  }

  /**
   * PyTorch's no_sync(): gradient sync off until the guard is closed, then back to what it
   * was.
   *
   * <pre>{@code
   * try (DistributedDataParallel.NoSync s = ddp.noSync()) { ...k - 1 micro-batches... }
   * ...the last micro-batch, whose backward averages everything...
   * }</pre>
   */
  public synchronized NoSync noSync() {
    NoSync guard = new NoSync(gradSync);
    setGradSync(false);
    return guard;
  }

  /** Restores gradient sync to what it found (unless the DDP was closed meanwhile). */
  public final class NoSync implements AutoCloseable {
    private final boolean previous;
    private boolean closed;

    private NoSync(boolean previous) { this.previous = previous; }

    @Override
    public void close() {
      if (closed) return;
      closed = true;
      if (!isClosed()) setGradSync(previous);
    }
  }

  /**
   * Uneven inputs (PyTorch's join()): with it on, each forward first counts the ranks still
   * training, and a rank out of batches calls {@link #join()}. Every rank turns it on
   * before its first forward; each forward with grad mode on is followed by one backward.
   */
  public void setUnevenInputs(boolean on) { CApi.dp_ddp_set_uneven_inputs(handle(), on ? 1 : 0); }

  /**
   * After this rank's last batch: takes part in the other ranks' gradient averaging (with
   * zero gradients) until every rank has joined; then every rank takes the parameters and
   * buffers of the rank that ran the most forwards. STATE when uneven inputs are off.
   */
  public void join() { CApi.dp_ddp_join(handle()); }

  @Override
  public String toString() {
    return isClosed() ? "DistributedDataParallel(closed)"
                      : "DistributedDataParallel(group=" + group
            + ", devices=" + Arrays.toString(devices().toArray()) + ", module=" + module + ")";
  }
}
