package org.dataparallel;

import java.util.Objects;
import org.dataparallel.swig.CApi;

/**
 * Mixed precision for the calling thread, PyTorch's autocast: while an {@code Autocast}
 * is open, linear, matmul, conv2d and a Sequential's Conv2d-ReLU-pool block cast float32
 * inputs to bfloat16 and return bfloat16 (accumulating in float32); softmax, logSoftmax,
 * crossEntropy, nllLoss, mseLoss, sum, mean and batchNorm cast bfloat16 inputs to float32
 * and return float32; add, sub, mul and div of a bfloat16 and a float32 tensor return
 * float32; every other op runs in its input's dtype (float64 is never cast). The casts are
 * differentiable, so parameters stay float32 and their gradients arrive in float32.
 * docs/autocast.md lists the ops beside PyTorch's.
 *
 * <pre>{@code
 * try (Autocast a = Autocast.bfloat16()) {
 *   loss = Ops.crossEntropy(model.forward(x), y);  // the linears in bfloat16, the loss in float32
 * }
 * loss.backward();                                 // parameters' gradients in float32
 * }</pre>
 *
 * <p>The setting belongs to the thread and follows its calls onto the device workers
 * (DataParallel's replicas run under it); other threads start with it off. {@link #close}
 * restores the setting found when this was opened, and must run on the same thread
 * (try-with-resources does).
 */
public final class Autocast implements AutoCloseable {
  private final int previous;
  private final Thread owner = Thread.currentThread();
  private boolean closed;

  private Autocast(DType dtype) { previous = CApi.dp_set_autocast(dtype.value()); }

  /** Autocast in bfloat16 until closed. */
  public static Autocast bfloat16() { return new Autocast(DType.BFLOAT16); }

  /** Autocast off until closed: a float32 region inside an autocast one. */
  public static Autocast disabled() { return new Autocast(DType.FLOAT32); }

  /**
   * As torch.autocast(dtype=..., enabled=...): autocast in {@code dtype} (BFLOAT16, the one
   * lower-precision dtype) when enabled, off when not, until closed.
   */
  public static Autocast of(DType dtype, boolean enabled) {
    if (Objects.requireNonNull(dtype, "dtype") != DType.BFLOAT16) {
      throw new DataParallelException(ErrorCode.INVALID_ARGUMENT, "autocast: dtype " + dtype
          + " is not a lower-precision dtype (BFLOAT16 is the one autocast runs in)");
    }
    return new Autocast(enabled ? dtype : DType.FLOAT32);
  }

  /** This thread's autocast dtype: BFLOAT16 when on, FLOAT32 when off. */
  public static DType dtype() { return DType.of(CApi.dp_autocast_dtype()); }

  /** Whether this thread's ops follow the autocast policy now. */
  public static boolean isEnabled() { return dtype() != DType.FLOAT32; }

  /**
   * Restores the setting found when this was opened; closing twice does nothing. On another
   * thread than the one that opened it: IllegalStateException (it would switch that
   * thread's setting instead).
   */
  @Override
  public void close() {
    if (closed) return;
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException("an Autocast opened on thread \"" + owner.getName()
          + "\" is closed on thread \"" + Thread.currentThread().getName()
          + "\": the setting is per thread, close it where it was opened");
    }
    CApi.dp_set_autocast(previous);
    closed = true;
  }
}
