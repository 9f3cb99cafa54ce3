package org.dataparallel;

import org.dataparallel.swig.CApi;

/**
 * Whether ops record the autograd graph, per thread (it follows the thread's calls onto
 * the device workers). Switch it for a block:
 *
 * <pre>{@code
 * try (GradMode.Guard g = GradMode.disabled()) { ... inference ... }
 * }</pre>
 */
public final class GradMode {
  private GradMode() {}

  public static boolean isEnabled() { return CApi.dp_is_grad_enabled() != 0; }

  /** Switches recording for this thread; returns the previous setting. */
  public static boolean setEnabled(boolean enabled) {
    return CApi.dp_set_grad_enabled(enabled ? 1 : 0) != 0;
  }

  /** Recording off until the guard is closed (then the previous setting returns). */
  public static Guard disabled() { return new Guard(setEnabled(false)); }

  /** Recording on until the guard is closed. */
  public static Guard enabled() { return new Guard(setEnabled(true)); }

  /** Restores the setting it found when closed. */
  public static final class Guard implements AutoCloseable {
    private final boolean previous;
    private boolean closed;

    private Guard(boolean previous) { this.previous = previous; }

    @Override
    public void close() {
      if (!closed) {
        setEnabled(previous);
        closed = true;
      }
    }
  }
}
