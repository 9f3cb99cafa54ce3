package org.dataparallel;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_data_parallel;
import org.dataparallel.swig.dp_data_parallel_options;
import org.dataparallel.swig.dp_device;
import org.dataparallel.swig.dp_phase_times;

/**
 * torch.nn.DataParallel: forward scatters the inputs along a dimension over the devices,
 * replicates the module, runs the replicas in parallel and gathers the outputs. Backward
 * is the ordinary {@link Tensor#backward()} on a loss computed from them; it leaves the
 * sum of the replicas' gradients in the module's parameters.
 *
 * <pre>{@code
 * DataParallel dp = DataParallel.builder(model).devices(Device.cpu(0), Device.cpu(1)).build();
 * }</pre>
 */
public final class DataParallel extends Handle<dp_data_parallel> {
  private final Module module;

  private DataParallel(dp_data_parallel handle, Module module) {
    super(handle);
    this.module = module;
  }

  public static Builder builder(Module module) { return new Builder(module); }

  /** Options of a DataParallel (PyTorch's defaults). */
  public static final class Builder {
    private final Module module;
    private List<Device> devices;
    private Device outputDevice;
    private int dim;
    private final DataParallelSettings settings = new DataParallelSettings();

    private Builder(Module module) { this.module = Objects.requireNonNull(module, "module"); }

    /**
       The devices (default: every CUDA device, else every CPU device). The module must be
        on the first when forward runs (with one device it is moved there).
     */
    public Builder devices(Device... devices) {
      Objects.requireNonNull(devices, "devices");
      if (devices.length == 0) {
        throw new IllegalArgumentException(
            "devices() needs at least one device; leave it out for every device");
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

    /** Rows per device, summing to the batch (default: equal chunks as torch.chunk). */
    public Builder chunkSizes(long... sizes) {
      settings.chunkSizes = sizes.clone();
      return this;
    }

    /** false: forward returns every replica's outputs on its own device. */
    public Builder gather(boolean gather) {
      settings.gather = gather;
      return this;
    }

    /** Keep replicas across forwards while grad mode is off and nothing changed. */
    public Builder cacheReplicas(boolean cache) {
      settings.cacheReplicas = cache;
      return this;
    }

    public Builder bufferSync(BufferSync sync) {
      settings.bufferSync = Objects.requireNonNull(sync, "sync");
      return this;
    }

    /** CPU replicas share the parameters' memory instead of copying it (default true). */
    public Builder aliasCpu(boolean alias) {
      settings.aliasCpu = alias;
      return this;
    }

    /** Broadcast bucket size in bytes (0: 10 MiB); negative throws IllegalArgumentException. */
    public Builder bucketBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("bucketBytes = " + bytes + ": must be >= 0 (0: 10 MiB)");
      }
      settings.bucketBytes = bytes;
      return this;
    }

    /**
     * The dtype the replicas' float32 gradients move and are summed in: FLOAT32 (default), or
     * BFLOAT16 as PyTorch DDP's bf16_compress_hook (docs/autocast.md).
     */
    public Builder gradReduceDtype(DType dtype) {
      settings.gradReduceDtype = Objects.requireNonNull(dtype, "dtype");
      return this;
    }

    public DataParallel build() {
      dp_data_parallel_options o = new dp_data_parallel_options();
      dp_device out = outputDevice == null ? null : outputDevice.toNative();
      try {
        settings.copyInto(o);
        return new DataParallel(
            CApi.dp_data_parallel_create(module.handle(), Device.pairs(devices), out, dim, o),
            module);
      } finally {
        o.delete();
        if (out != null) out.delete();
      }
    }
  }

  /** One forward of a one-input, one-output module: the gathered output. */
  public Tensor forward(Tensor input) {
    dp_data_parallel h = handle();
    return Tensor.single(Tensor.wrap(CApi.dp_data_parallel_forward(
                             h, new org.dataparallel.swig.dp_tensor[] {of(input, "input")}, null)),
        "forward", "forwardAll");
  }

  /** One forward: the gathered outputs (gather(false): every replica's, replica by replica). */
  public Tensor[] forwardAll(Tensor... inputs) { return forwardAll(inputs, null); }

  /** As forwardAll; broadcast[i] copies input i whole to every device instead of splitting. */
  public Tensor[] forwardAll(Tensor[] inputs, boolean[] broadcast) {
    return Tensor.wrap(
        CApi.dp_data_parallel_forward(handle(), Tensor.handles("inputs", inputs), broadcast));
  }

  /** The wrapped module (the object passed to the builder). */
  public Module module() {
    handle();
    return module;
  }

  public List<Device> devices() {
    return Device.fromPairs(CApi.dp_data_parallel_devices(handle()));
  }

  /** The module's state under its own names (no "module." prefix), as safetensors. */
  public void save(Path path) { CApi.dp_data_parallel_save(handle(), Checkpoint.pathString(path)); }

  public void load(Path path) { CApi.dp_data_parallel_load(handle(), Checkpoint.pathString(path)); }

  /** Phase times of the last forward (and its backward), the totals, and the forwards counted. */
  public record Stats(PhaseTimes last, PhaseTimes total, long calls) {}

  public Stats stats() {
    dp_phase_times last = new dp_phase_times();
    dp_phase_times total = new dp_phase_times();
    try {
      long calls = CApi.dp_data_parallel_stats(handle(), last, total);
      return new Stats(PhaseTimes.of(last), PhaseTimes.of(total), calls);
    } finally {
      last.delete();
      total.delete();
    }
  }

  public void resetStats() { CApi.dp_data_parallel_reset_stats(handle()); }

  @Override
  public String toString() {
    return isClosed() ? "DataParallel(closed)"
                      : "DataParallel(devices=" + Arrays.toString(devices().toArray())
            + ", module=" + module + ")";
  }
}
