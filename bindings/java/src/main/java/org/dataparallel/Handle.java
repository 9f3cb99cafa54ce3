package org.dataparallel;

import java.util.Objects;
import org.dataparallel.swig.CApi;

/**
 * What every class that owns one library handle shares: close() releases it now (twice is
 * safe), an unreachable object releases it through a Cleaner, and any use after close()
 * throws a {@link DataParallelException} with code {@link ErrorCode#STATE}.
 */
abstract class Handle<H extends CApi.Pointer> implements AutoCloseable {
  private H handle;

  Handle(H handle) {
    if (handle == null) {
      throw new DataParallelException(ErrorCode.INTERNAL, "the library returned no handle");
    }
    this.handle = handle;
  }

  /** The low-level proxy; throws when closed. */
  final synchronized H handle() {
    if (handle == null) {
      throw new DataParallelException(ErrorCode.STATE, getClass().getSimpleName() + " is closed");
    }
    return handle;
  }

  /**
   * The proxy of a required argument {@code h}, named {@code name}: a null argument is a
   * NullPointerException naming it, a closed one a STATE exception.
   */
  static <H extends CApi.Pointer> H of(Handle<H> h, String name) {
    return Objects.requireNonNull(h, name).handle();
  }

  /** The proxy of an optional argument, or null for null. */
  static <H extends CApi.Pointer> H ofNullable(Handle<H> h) {
    return h == null ? null : h.handle();
  }

  /** Whether close() was called. */
  public final synchronized boolean isClosed() { return handle == null; }

  /**
   * Releases the handle now, or, while another thread is inside a call with it, when that
   * call returns; what other handles still use stays alive in the library.
   */
  @Override
  public synchronized void close() {
    if (handle != null) {
      handle.delete();
      handle = null;
    }
  }
}
