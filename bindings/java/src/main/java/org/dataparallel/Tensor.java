package org.dataparallel;

import java.nio.Buffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;
import java.util.Arrays;
import java.util.Objects;
import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_device;
import org.dataparallel.swig.dp_tensor;

/**
 * A tensor (float32, float64, int64 or bfloat16) on a CPU or CUDA device. Made from Java
 * arrays (a copy), from direct buffers (a copy, or borrowed without one), or returned by
 * ops and modules. Close it to release its memory at once; otherwise the garbage collector
 * does. bfloat16 elements go in and out as float[] values or as their bits in short[]
 * (and ShortBuffer), see {@link BFloat16}.
 */
public final class Tensor extends Handle<dp_tensor> {
  Tensor(dp_tensor handle) { super(handle); }

  static Tensor wrap(dp_tensor handle) { return handle == null ? null : new Tensor(handle); }

  static Tensor[] wrap(dp_tensor[] handles) {
    Tensor[] t = new Tensor[handles.length];
    for (int i = 0; i < handles.length; ++i) t[i] = new Tensor(handles[i]);
    return t;
  }

  /**
   * The one tensor of a call's outputs; more (or none) close them all and are an
   * OUT_OF_RANGE error saying "{@code call} returned N outputs; use {@code instead}".
   */
  static Tensor single(Tensor[] outputs, String call, String instead) {
    if (outputs.length != 1) {
      for (Tensor t : outputs) t.close();
      throw new DataParallelException(ErrorCode.OUT_OF_RANGE,
          call + " returned " + outputs.length + " outputs; use " + instead);
    }
    return outputs[0];
  }

  /** The proxies of an argument array named {@code name}: null elements are named too. */
  static dp_tensor[] handles(String name, Tensor... tensors) {
    Objects.requireNonNull(tensors, name);
    dp_tensor[] h = new dp_tensor[tensors.length];
    for (int i = 0; i < tensors.length; ++i) h[i] = of(tensors[i], name + "[" + i + "]");
    return h;
  }

  // ---- creation ----

  /** A float32 tensor on cpu:0 with a copy of {@code data} (row-major, {@code shape}). */
  public static Tensor of(Context ctx, float[] data, long... shape) {
    return fromData(ctx, DType.FLOAT32, Device.cpu(0), data, shape);
  }

  /** A float64 tensor on cpu:0 with a copy of {@code data}. */
  public static Tensor of(Context ctx, double[] data, long... shape) {
    return fromData(ctx, DType.FLOAT64, Device.cpu(0), data, shape);
  }

  /** An int64 tensor on cpu:0 with a copy of {@code data} (labels, indices). */
  public static Tensor of(Context ctx, long[] data, long... shape) {
    return fromData(ctx, DType.INT64, Device.cpu(0), data, shape);
  }

  /** A float32 tensor on {@code device} with a copy of {@code data}. */
  public static Tensor of(Context ctx, Device device, float[] data, long... shape) {
    return fromData(ctx, DType.FLOAT32, device, data, shape);
  }

  /**
   * A tensor of {@code dtype} on {@code device} with {@code data}'s values converted by the
   * library: BFLOAT16 rounds to nearest with ties to even ({@link BFloat16#fromFloat}),
   * INT64 truncates.
   */
  public static Tensor of(Context ctx, DType dtype, Device device, float[] data, long... shape) {
    if (Objects.requireNonNull(dtype, "dtype") == DType.FLOAT32) {
      return fromData(ctx, dtype, device, data, shape);
    }
    try (Tensor values = fromData(ctx, DType.FLOAT32, device, data, shape)) {
      return values.to(dtype);
    }
  }

  /** A bfloat16 tensor on cpu:0 with {@code data} rounded to nearest even. */
  public static Tensor ofBFloat16(Context ctx, float[] data, long... shape) {
    return of(ctx, DType.BFLOAT16, Device.cpu(0), data, shape);
  }

  /** A bfloat16 tensor on {@code device} whose elements are {@code bits}, unchanged. */
  public static Tensor ofBFloat16Bits(Context ctx, Device device, short[] bits, long... shape) {
    return fromData(ctx, DType.BFLOAT16, device, bits, shape);
  }

  /** A bfloat16 tensor on cpu:0 whose elements are {@code bits}, unchanged. */
  public static Tensor ofBFloat16Bits(Context ctx, short[] bits, long... shape) {
    return ofBFloat16Bits(ctx, Device.cpu(0), bits, shape);
  }

  /**
   * A tensor on {@code device} with a copy of a direct buffer's remaining elements
   * (FloatBuffer, DoubleBuffer, LongBuffer, or ShortBuffer of bfloat16 bits; native byte
   * order).
   */
  public static Tensor copyOf(Context ctx, Device device, Buffer data, long... shape) {
    return fromData(ctx, dtypeOf(data), device, directSlice(data), shape);
  }

  /**
   * A tensor over a direct buffer's remaining elements on CPU device {@code cpuIndex},
   * without a copy: writes by either side are seen by the other, and the buffer stays
   * reachable until the library no longer uses the memory. The buffer must be direct,
   * writable, in native byte order ({@code
   * ByteBuffer.allocateDirect(n).order(ByteOrder.nativeOrder())}). Writes through the buffer
   * bypass the version counter, so autocast keeps no bfloat16 cast of this memory
   * (docs/autocast.md).
   */
  public static Tensor borrow(Context ctx, int cpuIndex, Buffer data, long... shape) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(shape, "shape");
    if (Objects.requireNonNull(data, "data").isReadOnly()) {
      throw new IllegalArgumentException(
          "a read-only buffer cannot be borrowed: the library may write to the memory");
    }
    return new Tensor(CApi.dp_java_tensor_borrow(
        ctx.native_(), dtypeOf(data).value(), shape, directSlice(data), cpuIndex));
  }

  /** {@link #borrow(Context, int, Buffer, long...)} on cpu:0. */
  public static Tensor borrow(Context ctx, Buffer data, long... shape) {
    return borrow(ctx, 0, data, shape);
  }

  /** Zeros of {@code dtype} on {@code device}. */
  public static Tensor zeros(Context ctx, DType dtype, Device device, long... shape) {
    Objects.requireNonNull(dtype, "dtype");
    dp_device d = nativeDevice(ctx, device, shape);
    try {
      return new Tensor(CApi.dp_tensor_zeros(ctx.native_(), dtype.value(), shape, d));
    } finally {
      d.delete();
    }
  }

  /** float32 zeros on cpu:0. */
  public static Tensor zeros(Context ctx, long... shape) {
    return zeros(ctx, DType.FLOAT32, Device.cpu(0), shape);
  }

  /** Every element {@code value}, of {@code dtype} on {@code device}. */
  public static Tensor full(Context ctx, DType dtype, Device device, double value, long... shape) {
    Objects.requireNonNull(dtype, "dtype");
    dp_device d = nativeDevice(ctx, device, shape);
    try {
      return new Tensor(CApi.dp_tensor_full(ctx.native_(), dtype.value(), shape, value, d));
    } finally {
      d.delete();
    }
  }

  /** float32 {@code value} everywhere, on cpu:0. */
  public static Tensor full(Context ctx, double value, long... shape) {
    return full(ctx, DType.FLOAT32, Device.cpu(0), value, shape);
  }

  /**
   * The arguments every factory takes, checked for null (named), and the device's native
   * copy, which the caller deletes.
   */
  private static dp_device nativeDevice(Context ctx, Device device, long[] shape) {
    Objects.requireNonNull(ctx, "ctx");
    Objects.requireNonNull(shape, "shape");
    return Device.nativeOf(device);
  }

  private static Tensor fromData(
      Context ctx, DType dtype, Device device, Object data, long[] shape) {
    Objects.requireNonNull(data, "data");
    dp_device d = nativeDevice(ctx, device, shape);
    try {
      return new Tensor(CApi.dp_tensor_from_data(ctx.native_(), dtype.value(), shape, data, d));
    } finally {
      d.delete();
    }
  }

  private static DType dtypeOf(Buffer b) {
    if (b instanceof FloatBuffer) return DType.FLOAT32;
    if (b instanceof DoubleBuffer) return DType.FLOAT64;
    if (b instanceof LongBuffer) return DType.INT64;
    if (b instanceof ShortBuffer) return DType.BFLOAT16;
    throw new IllegalArgumentException(
        "buffer must be a FloatBuffer, DoubleBuffer, LongBuffer or ShortBuffer (bfloat16 "
        + "bits), not " + b.getClass().getSimpleName());
  }

  /** The remaining elements of a direct buffer in native order, as their own buffer. */
  private static Buffer directSlice(Buffer b) {
    if (!b.isDirect()) {
      throw new IllegalArgumentException("the buffer must be direct (ByteBuffer.allocateDirect)");
    }
    ByteOrder order;
    Buffer slice;
    if (b instanceof FloatBuffer f) {
      order = f.order();
      slice = f.slice();
    } else if (b instanceof DoubleBuffer dbl) {
      order = dbl.order();
      slice = dbl.slice();
    } else if (b instanceof LongBuffer l) {
      order = l.order();
      slice = l.slice();
    } else if (b instanceof ShortBuffer sh) {
      order = sh.order();
      slice = sh.slice();
    } else {
      throw new IllegalArgumentException(
          "buffer must be a FloatBuffer, DoubleBuffer, LongBuffer or ShortBuffer");
    }
    if (order != ByteOrder.nativeOrder()) {
      throw new IllegalArgumentException("the buffer must be in native byte order "
          + "(ByteBuffer.order(ByteOrder.nativeOrder()))");
    }
    return slice;
  }

  // ---- metadata ----

  public long[] shape() { return CApi.dp_tensor_shape(handle()); }

  public int ndim() { return (int) CApi.dp_tensor_ndim(handle()); }

  /** Size of dimension {@code dim} (negative counts from the end). */
  public long size(int dim) { return CApi.dp_tensor_dim(handle(), dim); }

  public long numel() { return CApi.dp_tensor_numel(handle()); }

  public DType dtype() { return DType.of(CApi.dp_tensor_dtype(handle())); }

  public Device device() { return Device.fromNative(CApi.dp_tensor_device(handle())); }

  /** Bumped by every in-place write to the tensor's memory. */
  public long version() { return CApi.dp_tensor_version(handle()); }

  // ---- contents ----

  /** The contents as float32 values (converted from another dtype; bfloat16 exactly). */
  public float[] toFloatArray() {
    float[] out = new float[Math.toIntExact(numel())];
    try (Tensor t = dtype() == DType.FLOAT32 ? null : to(DType.FLOAT32)) {
      CApi.dp_tensor_to_host(t == null ? handle() : t.handle(), out);
    }
    return out;
  }

  /** The contents as float64 values (converted from another dtype). */
  public double[] toDoubleArray() {
    double[] out = new double[Math.toIntExact(numel())];
    try (Tensor t = dtype() == DType.FLOAT64 ? null : to(DType.FLOAT64)) {
      CApi.dp_tensor_to_host(t == null ? handle() : t.handle(), out);
    }
    return out;
  }

  /** The contents as int64 values (floats truncated). */
  public long[] toLongArray() {
    long[] out = new long[Math.toIntExact(numel())];
    try (Tensor t = dtype() == DType.INT64 ? null : to(DType.INT64)) {
      CApi.dp_tensor_to_host(t == null ? handle() : t.handle(), out);
    }
    return out;
  }

  /**
   * The contents as bfloat16 bits (converted from another dtype, rounding to nearest
   * even); {@link BFloat16#toFloat} reads one, {@link #toFloatArray} gives the values.
   */
  public short[] toBFloat16Bits() {
    short[] out = new short[Math.toIntExact(numel())];
    try (Tensor t = dtype() == DType.BFLOAT16 ? null : to(DType.BFLOAT16)) {
      CApi.dp_tensor_to_host(t == null ? handle() : t.handle(), out);
    }
    return out;
  }

  /** The only element as a double. */
  public double item() {
    if (numel() != 1) {
      throw new DataParallelException(
          ErrorCode.SHAPE_MISMATCH, "item() needs one element, the tensor has " + numel());
    }
    return toDoubleArray()[0];
  }

  /** Copies the contents into a direct buffer's remaining elements (same dtype and count). */
  public void copyTo(Buffer destination) {
    if (Objects.requireNonNull(destination, "destination").isReadOnly()) {
      throw new IllegalArgumentException("copyTo: the destination buffer is read-only");
    }
    requireDtype(dtypeOf(destination), "copyTo");
    CApi.dp_tensor_to_host(handle(), directSlice(destination));
  }

  /** Overwrites the contents from {@code src} (float32 tensors; same count). Returns this. */
  public Tensor copyFrom(float[] src) {
    Objects.requireNonNull(src, "src");
    requireDtype(DType.FLOAT32, "copyFrom(float[])");
    CApi.dp_tensor_copy_from_host(handle(), src);
    return this;
  }

  /** Overwrites the contents from {@code src} (float64 tensors; same count). Returns this. */
  public Tensor copyFrom(double[] src) {
    Objects.requireNonNull(src, "src");
    requireDtype(DType.FLOAT64, "copyFrom(double[])");
    CApi.dp_tensor_copy_from_host(handle(), src);
    return this;
  }

  /** Overwrites the contents from {@code src} (int64 tensors; same count). Returns this. */
  public Tensor copyFrom(long[] src) {
    Objects.requireNonNull(src, "src");
    requireDtype(DType.INT64, "copyFrom(long[])");
    CApi.dp_tensor_copy_from_host(handle(), src);
    return this;
  }

  /** Overwrites the contents with bfloat16 bits (bfloat16 tensors; same count). Returns this. */
  public Tensor copyFrom(short[] bits) {
    Objects.requireNonNull(bits, "bits");
    requireDtype(DType.BFLOAT16, "copyFrom(short[])");
    CApi.dp_tensor_copy_from_host(handle(), bits);
    return this;
  }

  /**
   * Overwrites the contents from a direct buffer's remaining elements (same dtype and
   * count). Returns this.
   */
  public Tensor copyFrom(Buffer src) {
    Objects.requireNonNull(src, "src");
    requireDtype(dtypeOf(src), "copyFrom");
    CApi.dp_tensor_copy_from_host(handle(), directSlice(src));
    return this;
  }

  /** The copies move bytes: elements of another dtype would be their bits reinterpreted. */
  private void requireDtype(DType elements, String what) {
    DType own = dtype();
    if (own != elements) {
      throw new DataParallelException(ErrorCode.DTYPE_MISMATCH,
          what + ": the tensor is " + own + " but the elements are " + elements);
    }
  }

  /** A copy on {@code device} (differentiable). */
  public Tensor to(Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      return new Tensor(CApi.dp_tensor_to_device(handle(), d));
    } finally {
      d.delete();
    }
  }

  /** A copy converted to {@code dtype}. */
  public Tensor to(DType dtype) {
    return new Tensor(
        CApi.dp_tensor_to_dtype(handle(), Objects.requireNonNull(dtype, "dtype").value()));
  }

  // ---- autograd ----

  public boolean requiresGrad() { return CApi.dp_tensor_requires_grad(handle()); }

  /** Marks a leaf as requiring gradients. Returns this. */
  public Tensor requiresGrad(boolean requires) {
    CApi.dp_tensor_set_requires_grad(handle(), requires ? 1 : 0);
    return this;
  }

  /** The accumulated gradient of a leaf, or null when none was computed. */
  public Tensor grad() { return wrap(CApi.dp_tensor_grad(handle())); }

  public void zeroGrad() { CApi.dp_tensor_zero_grad(handle()); }

  /** A tensor sharing this memory, outside the graph. */
  public Tensor detach() { return new Tensor(CApi.dp_tensor_detach(handle())); }

  /** Backpropagates from this one-element tensor. */
  public void backward() { CApi.dp_backward(handle(), null, 0); }

  /** Backpropagates with d(loss)/d(this) = grad; retainGraph keeps the graph for another. */
  public void backward(Tensor grad, boolean retainGraph) {
    CApi.dp_backward(handle(), ofNullable(grad), retainGraph ? 1 : 0);
  }

  // ---- ops ----

  public Tensor add(Tensor other) {
    return new Tensor(CApi.dp_op_add(handle(), of(other, "other")));
  }

  public Tensor add(double value) { return new Tensor(CApi.dp_op_add_scalar(handle(), value)); }

  public Tensor sub(Tensor other) {
    return new Tensor(CApi.dp_op_sub(handle(), of(other, "other")));
  }

  public Tensor mul(Tensor other) {
    return new Tensor(CApi.dp_op_mul(handle(), of(other, "other")));
  }

  public Tensor mul(double factor) { return new Tensor(CApi.dp_op_scale(handle(), factor)); }

  public Tensor div(Tensor other) {
    return new Tensor(CApi.dp_op_div(handle(), of(other, "other")));
  }

  public Tensor neg() { return new Tensor(CApi.dp_op_neg(handle())); }

  public Tensor relu() { return new Tensor(CApi.dp_op_relu(handle())); }

  /** The exact (erf) GELU. */
  public Tensor gelu() { return new Tensor(CApi.dp_op_gelu(handle())); }

  public Tensor tanh() { return new Tensor(CApi.dp_op_tanh(handle())); }

  public Tensor sigmoid() { return new Tensor(CApi.dp_op_sigmoid(handle())); }

  public Tensor exp() { return new Tensor(CApi.dp_op_exp(handle())); }

  public Tensor log() { return new Tensor(CApi.dp_op_log(handle())); }

  /** Sum of all elements (0-dim). */
  public Tensor sum() { return new Tensor(CApi.dp_op_sum(handle())); }

  public Tensor sum(int dim, boolean keepdim) {
    return new Tensor(CApi.dp_op_sum_dim(handle(), dim, keepdim ? 1 : 0));
  }

  public Tensor mean() { return new Tensor(CApi.dp_op_mean(handle())); }

  public Tensor mean(int dim, boolean keepdim) {
    return new Tensor(CApi.dp_op_mean_dim(handle(), dim, keepdim ? 1 : 0));
  }

  /** Index of the largest element along dim (int64). */
  public Tensor argmax(int dim) { return new Tensor(CApi.dp_op_argmax(handle(), dim)); }

  public Tensor matmul(Tensor other) {
    return new Tensor(CApi.dp_op_matmul(handle(), of(other, "other")));
  }

  public Tensor softmax(int dim) { return new Tensor(CApi.dp_op_softmax(handle(), dim)); }

  public Tensor logSoftmax(int dim) { return new Tensor(CApi.dp_op_log_softmax(handle(), dim)); }

  /** A view with another shape (one size may be -1). */
  public Tensor reshape(long... shape) { return new Tensor(CApi.dp_op_reshape(handle(), shape)); }

  public Tensor flatten(int startDim, int endDim) {
    return new Tensor(CApi.dp_op_flatten(handle(), startDim, endDim));
  }

  /** Pieces of sizes[i] along dim. */
  public Tensor[] split(long[] sizes, int dim) {
    return wrap(CApi.dp_op_split(handle(), sizes, dim));
  }

  @Override
  public String toString() {
    if (isClosed()) return "Tensor(closed)";
    return "Tensor(shape=" + Arrays.toString(shape()) + ", dtype=" + dtype()
        + ", device=" + device() + ")";
  }
}
