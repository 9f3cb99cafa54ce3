package org.dataparallel;

/**
 * A failed library call: the dp_result code and the library's message, which names the
 * argument that was wrong and its value. Also thrown for use of a closed object (code
 * {@link ErrorCode#STATE}).
 */
public class DataParallelException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final int code;

  /** Called by the JNI code with a dp_result value and dp_last_error()'s text. */
  public DataParallelException(int code, String message) {
    super(message);
    this.code = code;
  }

  public DataParallelException(ErrorCode code, String message) { this(code.value(), message); }

  /** The dp_result value (1 .. 13). */
  public int code() { return code; }

  /** The code as an enum constant. */
  public ErrorCode errorCode() { return ErrorCode.of(code); }

  @Override
  public String toString() {
    return "DataParallelException[" + errorCode() + "]: " + getMessage();
  }
}
