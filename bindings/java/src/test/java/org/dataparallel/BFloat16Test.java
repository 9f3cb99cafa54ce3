package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ShortBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** bfloat16 tensors from Java: float[] values (rounded) and short[] bits, both ways. */
class BFloat16Test {
  private Context ctx;

  @BeforeEach
  void open() {
    ctx = TestSupport.context();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  // Hand-computed: bfloat16 keeps 7 stored mantissa bits, so its step at 1.0 is 2^-7.
  static final float[] VALUES = {
    1.0f,
    1.0f + 0x1p-8f, // halfway between 1 and 1 + 2^-7: to the even one, 1
    1.0f + 3 * 0x1p-8f, // halfway between 1 + 2^-7 and 1 + 2^-6: to the even one, 1 + 2^-6
    1.0f + 0x1p-8f + 0x1p-20f, // just past halfway: up
    -2.5f,
    0.1f, // 0x3dcccccd: the dropped half 0xcccd is past halfway, up to 0x3dcd
    3.0e38f,
    3.4e38f, // past the largest finite bfloat16: infinity
    Float.NEGATIVE_INFINITY,
    1e-40f, // a float subnormal to a bfloat16 subnormal
    -0.0f,
  };
  static final short[] BITS = {
    0x3f80, 0x3f80, 0x3f82, 0x3f81, (short) 0xc020, 0x3dcd, 0x7f62, 0x7f80, (short) 0xff80,
    0x0001, (short) 0x8000,
  };

  @Test
  void roundingHelperRoundsToNearestEvenAndKeepsNan() {
    assertArrayEquals(BITS, BFloat16.fromFloats(VALUES));
    short nan = BFloat16.fromFloat(Float.intBitsToFloat(0xff800001)); // a signalling -NaN
    assertTrue(Float.isNaN(BFloat16.toFloat(nan)));
    assertEquals((short) 0xffc0, nan); // quiet, sign kept
    assertEquals(0.10009765625f, BFloat16.toFloat((short) 0x3dcd));
  }

  @Test
  void everyBitPatternWidensExactlyAndRoundsBackToItself() {
    for (int b = 0; b < 1 << 16; ++b) {
      float f = BFloat16.toFloat((short) b);
      assertEquals(b << 16, Float.floatToRawIntBits(f));
      if (!Float.isNaN(f)) assertEquals((short) b, BFloat16.fromFloat(f));
    }
  }

  @Test
  void tensorFromFloatsIsRoundedByTheLibraryAsTheHelperRounds() {
    try (Tensor t = Tensor.ofBFloat16(ctx, VALUES, VALUES.length)) {
      assertEquals(DType.BFLOAT16, t.dtype());
      assertEquals(2, t.dtype().size());
      assertArrayEquals(BITS, t.toBFloat16Bits());
      assertArrayEquals(BFloat16.toFloats(BITS), t.toFloatArray()); // exact
      assertEquals("Tensor(shape=[11], dtype=BFLOAT16, device=cpu:0)", t.toString());
    }
    try (Tensor f = Tensor.of(ctx, VALUES, VALUES.length)) {
      assertArrayEquals(BITS, f.toBFloat16Bits()); // a float32 tensor's bits, converted
    }
  }

  @Test
  void bitsGoInAndComeOutUnchanged() {
    short[] bits = {0x3f80, (short) 0xc020, 0x7fc0, 0x0001};
    try (Tensor t = Tensor.ofBFloat16Bits(ctx, Device.cpu(1), bits, 2, 2)) {
      assertEquals(Device.cpu(1), t.device());
      assertArrayEquals(new long[] {2, 2}, t.shape());
      assertArrayEquals(bits, t.toBFloat16Bits());
      t.copyFrom(new short[] {0x4000, 0x4040, 0x4080, 0x40a0});
      assertArrayEquals(new float[] {2, 3, 4, 5}, t.toFloatArray());
      assertArrayEquals(new double[] {2, 3, 4, 5}, t.toDoubleArray());
      assertEquals(DType.BFLOAT16, t.to(DType.FLOAT32).to(DType.BFLOAT16).dtype());
    }
  }

  @Test
  void shortBuffersCarryBitsBothWays() {
    ShortBuffer in = ByteBuffer.allocateDirect(6).order(ByteOrder.nativeOrder()).asShortBuffer();
    in.put(new short[] {0x3f80, 0x4000, 0x4040}).flip();
    try (Tensor copy = Tensor.copyOf(ctx, Device.cpu(0), in, 3);
         Tensor shared = Tensor.borrow(ctx, in, 3)) {
      assertEquals(DType.BFLOAT16, copy.dtype());
      assertArrayEquals(new float[] {1, 2, 3}, copy.toFloatArray());
      in.put(0, (short) 0xbf80); // -1: seen by the borrowing tensor only
      assertArrayEquals(new float[] {-1, 2, 3}, shared.toFloatArray());
      assertArrayEquals(new float[] {1, 2, 3}, copy.toFloatArray());
      ShortBuffer out =
          ByteBuffer.allocateDirect(6).order(ByteOrder.nativeOrder()).asShortBuffer();
      shared.copyTo(out);
      assertEquals((short) 0xbf80, out.get(0));
    }
  }

  @Test
  void floatsConvertToAnyDtype() {
    try (Tensor d = Tensor.of(ctx, DType.FLOAT64, Device.cpu(0), new float[] {0.1f}, 1);
         Tensor l = Tensor.of(ctx, DType.INT64, Device.cpu(0), new float[] {2.7f}, 1)) {
      assertEquals(DType.FLOAT64, d.dtype());
      assertEquals((double) 0.1f, d.item());
      assertArrayEquals(new long[] {2}, l.toLongArray());
    }
  }

  @Test
  void opsOnBfloat16RoundTheirResultOnce() {
    try (Tensor t = Tensor.ofBFloat16(ctx, new float[] {1, 0x1p-8f}, 2);
         Tensor one = Tensor.ofBFloat16(ctx, new float[] {1, 1}, 2);
         Tensor sum = t.add(one);
         Tensor nan = Tensor.ofBFloat16(ctx, new float[] {Float.NaN, Float.POSITIVE_INFINITY}, 2);
         Tensor twice = nan.mul(2.0)) {
      assertEquals(DType.BFLOAT16, sum.dtype());
      // 1 + 2^-8 is a tie: rounded to the even 1.0
      assertArrayEquals(new float[] {2, 1}, sum.toFloatArray());
      float[] special = twice.toFloatArray();
      assertTrue(Float.isNaN(special[0]));
      assertEquals(Float.POSITIVE_INFINITY, special[1]);
    }
  }

  @Test
  void wrongElementsAreRefusedByName() {
    try (Tensor f = Tensor.zeros(ctx, 2); Tensor b = Tensor.ofBFloat16(ctx, new float[2], 2)) {
      DataParallelException e =
          assertThrows(DataParallelException.class, () -> f.copyFrom(new short[2]));
      assertEquals(ErrorCode.DTYPE_MISMATCH, e.errorCode());
      assertTrue(e.getMessage().contains("FLOAT32"), e.getMessage());
      assertThrows(DataParallelException.class, () -> b.copyFrom(new float[2]));
      assertThrows(DataParallelException.class, () -> Tensor.ofBFloat16Bits(ctx, new short[3], 2));
    }
  }
}
