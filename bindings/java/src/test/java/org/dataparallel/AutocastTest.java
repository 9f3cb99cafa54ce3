package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Autocast: the per-thread switch, what runs in which dtype, gradients, the device query. */
class AutocastTest {
  @Test
  void tryWithResourcesRestoresTheSettingItFound() {
    assertEquals(DType.FLOAT32, Autocast.dtype());
    assertFalse(Autocast.isEnabled());
    try (Autocast on = Autocast.bfloat16()) {
      assertEquals(DType.BFLOAT16, Autocast.dtype());
      try (Autocast off = Autocast.disabled()) {
        assertFalse(Autocast.isEnabled());
        try (Autocast again = Autocast.of(DType.BFLOAT16, true)) {
          assertTrue(Autocast.isEnabled());
        }
        assertFalse(Autocast.isEnabled());
      }
      assertTrue(Autocast.isEnabled());
      on.close();
      assertFalse(Autocast.isEnabled());
      on.close(); // twice: nothing (try-with-resources closes it a second time)
    }
    assertFalse(Autocast.isEnabled());
  }

  @Test
  void anExceptionStillRestoresTheSetting() {
    assertThrows(ArithmeticException.class, () -> {
      try (Autocast a = Autocast.bfloat16()) {
        assertTrue(Autocast.isEnabled());
        throw new ArithmeticException("inside");
      }
    });
    assertFalse(Autocast.isEnabled());
  }

  @Test
  void onlyBfloat16IsAnAutocastDtype() {
    DataParallelException e =
        assertThrows(DataParallelException.class, () -> Autocast.of(DType.FLOAT64, true));
    assertEquals(ErrorCode.INVALID_ARGUMENT, e.errorCode());
    assertTrue(e.getMessage().contains("FLOAT64"), e.getMessage());
    assertThrows(NullPointerException.class, () -> Autocast.of(null, true));
    try (Autocast off = Autocast.of(DType.BFLOAT16, false)) {
      assertFalse(Autocast.isEnabled());
    }
    assertFalse(Autocast.isEnabled());
  }

  @Test
  void theSettingBelongsToTheThread() throws Exception {
    AtomicReference<DType> seen = new AtomicReference<>();
    AtomicReference<Autocast> opened = new AtomicReference<>();
    try (Autocast a = Autocast.bfloat16()) {
      Thread t = new Thread(() -> {
        seen.set(Autocast.dtype());
        opened.set(Autocast.bfloat16());
      });
      t.start();
      t.join();
      assertEquals(DType.FLOAT32, seen.get());
      // Closing another thread's Autocast here would switch this thread's setting.
      IllegalStateException e = assertThrows(IllegalStateException.class, opened.get()::close);
      assertTrue(e.getMessage().contains("per thread"), e.getMessage());
      assertTrue(Autocast.isEnabled());
    }
  }

  @Test
  void linearRunsInBfloat16AndTheLossInFloat32WithFloat32Gradients() {
    try (Context ctx = TestSupport.context();
         Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
         Tensor w = Tensor.of(ctx, new float[] {0.1f, 0.2f, 0.3f, -0.4f, 0.5f, -0.6f}, 2, 3);
         Tensor b = Tensor.of(ctx, new float[] {0.25f, -1}, 2);
         Tensor y = Tensor.of(ctx, new long[] {0, 1}, 2)) {
      w.requiresGrad(true);
      b.requiresGrad(true);
      Tensor out;
      Tensor loss;
      Tensor sum;
      try (Autocast a = Autocast.bfloat16()) {
        out = Ops.linear(x, w, b);
        loss = Ops.crossEntropy(out, y);
        sum = out.sum();
      }
      assertEquals(DType.BFLOAT16, out.dtype());
      assertEquals(DType.FLOAT32, loss.dtype());
      assertEquals(DType.FLOAT32, sum.dtype());
      // Against double math on the bfloat16-rounded inputs: within bfloat16's rounding of
      // the result (2^-8 relative) plus float32 accumulation (K + 1 = 4 terms of 2^-24).
      float[] got = out.toFloatArray();
      float[] xs = x.toFloatArray();
      float[] ws = w.toFloatArray();
      float[] bs = b.toFloatArray();
      for (int n = 0; n < 2; ++n) {
        for (int o = 0; o < 2; ++o) {
          double ref = r(bs[o]);
          double mag = Math.abs(r(bs[o]));
          for (int k = 0; k < 3; ++k) {
            ref += r(xs[n * 3 + k]) * r(ws[o * 3 + k]);
            mag += Math.abs(r(xs[n * 3 + k]) * r(ws[o * 3 + k]));
          }
          double bound = 0x1p-8 * Math.abs(ref) + (1 + 0x1p-8) * 4 * 0x1p-24 * mag;
          assertTrue(Math.abs(got[n * 2 + o] - ref) <= bound, "out[" + n + "," + o + "]");
        }
      }
      loss.backward();
      try (Tensor gw = w.grad(); Tensor gb = b.grad()) {
        assertNotNull(gw);
        assertEquals(DType.FLOAT32, gw.dtype());
        assertEquals(DType.FLOAT32, gb.dtype());
      }
      assertEquals(DType.FLOAT32, w.dtype()); // master weights stay float32
      out.close();
      loss.close();
      sum.close();
    }
  }

  /** A float rounded to bfloat16, as a double. */
  private static double r(float v) {
    return BFloat16.toFloat(BFloat16.fromFloat(v));
  }

  @Test
  void dataParallelReplicasRunUnderTheCallersAutocast() {
    try (Context ctx = TestSupport.context();
         Sequential m = Sequential.builder(ctx).linear(4, 6).relu().linear(6, 2).build();
         DataParallel dp = DataParallel.builder(m).devices(Device.cpu(0), Device.cpu(1)).build();
         Tensor x = Tensor.full(ctx, 0.5, 4, 4)) {
      try (Autocast a = Autocast.bfloat16(); Tensor out = dp.forward(x)) {
        assertEquals(DType.BFLOAT16, out.dtype());
      }
      try (Tensor out = dp.forward(x)) {
        assertEquals(DType.FLOAT32, out.dtype());
      }
    }
  }

  @Test
  void aBfloat16GradientReduceIsAnOptionAndOtherDtypesAreRefused() {
    try (Context ctx = TestSupport.context();
         Sequential m = Sequential.builder(ctx).linear(4, 6).relu().linear(6, 2).build();
         DataParallel dp = DataParallel.builder(m)
                               .devices(Device.cpu(0), Device.cpu(1))
                               .gradReduceDtype(DType.BFLOAT16)
                               .build();
         Tensor x = Tensor.full(ctx, 0.5, 4, 4);
         Tensor out = dp.forward(x);
         Tensor loss = out.mean()) {
      loss.backward();
      DataParallelException e = assertThrows(DataParallelException.class,
          ()
              -> DataParallel.builder(m)
                     .devices(Device.cpu(0), Device.cpu(1))
                     .gradReduceDtype(DType.INT64)
                     .build());
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.errorCode());
      assertTrue(e.getMessage().contains("grad_reduce_dtype = 2"), e.getMessage());
    }
  }

  @Test
  void bf16NativeReportsTheProcessor() throws Exception {
    String flags = Files.readString(Path.of("/proc/cpuinfo"));
    boolean expected = flags.contains(" avx512_bf16") || flags.contains(" amx_bf16");
    try (Context ctx = TestSupport.context()) {
      assertEquals(expected, ctx.bf16Native(Device.cpu(0)));
      assertEquals(expected, ctx.bf16Native(Device.cpu(1)));
      DataParallelException e =
          assertThrows(DataParallelException.class, () -> ctx.bf16Native(Device.cpu(9)));
      assertEquals(ErrorCode.OUT_OF_RANGE, e.errorCode());
      assertThrows(NullPointerException.class, () -> ctx.bf16Native(null));
    }
  }
}
