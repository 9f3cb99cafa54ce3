package org.dataparallel;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_context;
import org.dataparallel.swig.dp_context_options;
import org.dataparallel.swig.dp_device;

/**
 * The library's devices: virtual CPU devices (each with one worker thread) and, when the
 * CUDA plugin finds any, CUDA devices. Tensors, modules and optimizers made from a
 * context keep it alive in the library after close().
 *
 * <pre>{@code
 * try (Context ctx = Context.builder().cpuDevices(2).build()) { ... }
 * }</pre>
 */
public final class Context extends Handle<dp_context> {
  private Context(dp_context handle) { super(handle); }

  /** A context with the defaults: one CPU device per core (or DP_CPU_DEVICES), CUDA if any. */
  public static Context create() { return builder().build(); }

  public static Builder builder() { return new Builder(); }

  /** Options of a new context. */
  public static final class Builder {
    private int cpuDevices;
    private boolean loadCuda = true;
    private boolean allowTf32;
    private long seed;
    private BiConsumer<LogLevel, String> log;
    private LogLevel logLevel = LogLevel.WARNING;

    private Builder() {}

    /** Number of virtual CPU devices; 0 (the default): DP_CPU_DEVICES, else the cores. */
    public Builder cpuDevices(int n) {
      this.cpuDevices = n;
      return this;
    }

    /** Whether to look for CUDA devices (default true; none found is not an error). */
    public Builder loadCuda(boolean load) {
      this.loadCuda = load;
      return this;
    }

    /** TF32 tensor-core math for float32 matmul and convolution on CUDA. */
    public Builder allowTf32(boolean allow) {
      this.allowTf32 = allow;
      return this;
    }

    /**
     * Seed for parameter initialisation and dropout: layers made in the order a PyTorch
     * model makes its own start from the weights {@code torch.manual_seed(seed)} gives it.
     */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /**
     * Where the library's messages at or above {@link #logLevel} go (none by default: the
     * library is silent). The listener runs on whichever thread logs, library threads
     * included, and must not call the library; what it throws is dropped. The library
     * holds it until the context ends (after close(), once its last tensor, module and
     * optimizer are closed too).
     */
    public Builder log(BiConsumer<LogLevel, String> listener) {
      this.log = listener;
      return this;
    }

    /** The least severe level that reaches {@link #log} (default WARNING). */
    public Builder logLevel(LogLevel level) {
      this.logLevel = java.util.Objects.requireNonNull(level, "level");
      return this;
    }

    public Context build() {
      dp_context_options o = new dp_context_options();
      try {
        o.setCpu_devices(cpuDevices);
        o.setLoad_cuda(loadCuda ? 1 : 0);
        o.setAllow_tf32(allowTf32 ? 1 : 0);
        o.setSeed(seed);
        o.setLog_level(logLevel.value());
        if (log != null) CApi.dp_java_options_set_log(o, new LogBridge(log));
        try {
          return new Context(CApi.dp_context_create(o));
        } catch (RuntimeException | Error e) {
          CApi.dp_java_options_drop_log(o); // the failed context did not take the listener
          throw e;
        }
      } finally {
        o.delete();
      }
    }
  }

  /** What the library calls for each message: the listener, any exception dropped. */
  static final class LogBridge {
    private final BiConsumer<LogLevel, String> listener;

    LogBridge(BiConsumer<LogLevel, String> listener) { this.listener = listener; }

    void deliver(int level, String message) {
      try {
        listener.accept(LogLevel.of(level), message);
      } catch (Throwable t) {
        // a listener's failure must not unwind through the library's threads
      }
    }
  }

  /** Number of devices of a type (0 for CUDA without GPUs). */
  public int deviceCount(DeviceType type) {
    return CApi.dp_device_count(handle(), java.util.Objects.requireNonNull(type, "type").value());
  }

  /** Every device of a type. */
  public List<Device> devices(DeviceType type) {
    List<Device> list = new ArrayList<>();
    for (int i = 0, n = deviceCount(type); i < n; ++i) list.add(new Device(type, i));
    return list;
  }

  /** E.g. "cpu:1 (virtual CPU device, 1 thread)". */
  public String deviceName(Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      return CApi.dp_device_name_string(handle(), d);
    } finally {
      d.delete();
    }
  }

  /** {free, total} bytes of a device. */
  public long[] deviceMemory(Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      return CApi.dp_device_memory(handle(), d);
    } finally {
      d.delete();
    }
  }

  /**
   * Whether a device computes bfloat16 products in hardware (a CPU with AVX512-BF16 or AMX,
   * a GPU of compute capability 8.0 or later). Where it does not, bfloat16 tensors and
   * {@link Autocast} still compute correctly (in float32, rounding the results): they save
   * memory and bytes moved, not time.
   */
  public boolean bf16Native(Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      return CApi.dp_device_bf16_native(handle(), d);
    } finally {
      d.delete();
    }
  }

  /** Waits until the queued work on a device has finished. */
  public void synchronize(Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      CApi.dp_device_synchronize(handle(), d);
    } finally {
      d.delete();
    }
  }

  dp_context native_() { return handle(); }

  /** The proxy of an argument named "ctx": a null one is a NullPointerException. */
  static dp_context nativeOf(Context ctx) { return of(ctx, "ctx"); }

  @Override
  public String toString() {
    if (isClosed()) return "Context(closed)";
    return "Context(cpu=" + deviceCount(DeviceType.CPU) + ", cuda=" + deviceCount(DeviceType.CUDA)
        + ")";
  }
}
