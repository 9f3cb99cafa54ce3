package org.dataparallel;

/** The dp_result codes other than DP_OK. */
public enum ErrorCode {
  INVALID_ARGUMENT(1),
  OUT_OF_RANGE(2),
  SHAPE_MISMATCH(3),
  DTYPE_MISMATCH(4),
  DEVICE_MISMATCH(5),
  OUT_OF_MEMORY(6),
  NOT_SUPPORTED(7),
  IO(8),
  FORMAT(9),
  STATE(10),
  BACKEND(11),
  CALLBACK(12),
  INTERNAL(13);

  private final int value;

  ErrorCode(int value) { this.value = value; }

  /** The C enum's value. */
  public int value() { return value; }

  /** The constant for a dp_result value; INTERNAL for one this binding does not know. */
  public static ErrorCode of(int value) {
    for (ErrorCode c : values()) {
      if (c.value == value) return c;
    }
    return INTERNAL;
  }
}
