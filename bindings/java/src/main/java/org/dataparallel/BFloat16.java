package org.dataparallel;

import java.util.Objects;

/**
 * bfloat16 bits in Java, which has no such type: a bfloat16 is a float's upper 16 bits,
 * kept in a {@code short}. The conversions are the library's (and PyTorch's): to bfloat16
 * rounds to nearest with ties to even, NaN stays a quiet NaN with its sign, and values
 * past the largest finite bfloat16 (3.3895e38) become infinities; back to float is exact.
 */
public final class BFloat16 {
  private BFloat16() {}

  /** The bfloat16 nearest to {@code value} (ties to the even bit pattern), as bits. */
  public static short fromFloat(float value) {
    final int u = Float.floatToRawIntBits(value);
    if ((u & 0x7fffffff) > 0x7f800000) return (short) ((u >>> 16) | 0x0040); // NaN, made quiet
    // Unsigned arithmetic on the bits: never past 2^32 for a non-NaN (-inf is 0xff800000).
    final long rounded = (Integer.toUnsignedLong(u) + 0x7fff + ((u >>> 16) & 1)) >>> 16;
    return (short) rounded;
  }

  /** The float value of bfloat16 {@code bits} (exact). */
  public static float toFloat(short bits) {
    return Float.intBitsToFloat((bits & 0xffff) << 16);
  }

  /** {@link #fromFloat} of each value. */
  public static short[] fromFloats(float[] values) {
    Objects.requireNonNull(values, "values");
    short[] bits = new short[values.length];
    for (int i = 0; i < values.length; ++i) bits[i] = fromFloat(values[i]);
    return bits;
  }

  /** {@link #toFloat} of each bit pattern. */
  public static float[] toFloats(short[] bits) {
    Objects.requireNonNull(bits, "bits");
    float[] values = new float[bits.length];
    for (int i = 0; i < bits.length; ++i) values[i] = toFloat(bits[i]);
    return values;
  }
}
