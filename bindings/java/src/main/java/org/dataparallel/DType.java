package org.dataparallel;

/** Element types (dp_dtype). */
public enum DType {
  FLOAT32(0, 4),
  FLOAT64(1, 8),
  INT64(2, 8),
  /**
   * bfloat16: float32's upper 16 bits (sign, 8 exponent bits, 7 mantissa bits). Java has no
   * such type: its elements travel as float[] values (rounded to nearest even on the way
   * in, exact on the way out) or as their raw bits in short[] (see {@link BFloat16}).
   */
  BFLOAT16(3, 2);

  private final int value;
  private final int size;

  DType(int value, int size) {
    this.value = value;
    this.size = size;
  }

  /** The C enum's value. */
  public int value() { return value; }

  /** Bytes per element. */
  public int size() { return size; }

  static DType of(int value) {
    for (DType t : values()) {
      if (t.value == value) return t;
    }
    throw new DataParallelException(ErrorCode.INTERNAL, "unknown dtype " + value);
  }
}
