package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class TensorTest {
  private Context ctx;

  @BeforeEach
  void open() {
    ctx = TestSupport.context();
  }

  @AfterEach
  void close() {
    ctx.close();
  }

  static FloatBuffer floats(int n) {
    return ByteBuffer.allocateDirect(4 * n).order(ByteOrder.nativeOrder()).asFloatBuffer();
  }

  @Test
  void arraysInAndOut() {
    Tensor f = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
    assertArrayEquals(new long[] {2, 3}, f.shape());
    assertEquals(2, f.ndim());
    assertEquals(3, f.size(-1));
    assertEquals(6, f.numel());
    assertEquals(DType.FLOAT32, f.dtype());
    assertEquals(Device.cpu(0), f.device());
    assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6}, f.toFloatArray());
    assertArrayEquals(new double[] {1, 2, 3, 4, 5, 6}, f.toDoubleArray());
    assertArrayEquals(new long[] {1, 2, 3, 4, 5, 6}, f.toLongArray());
    Tensor d = Tensor.of(ctx, new double[] {0.5, 1.5}, 2);
    assertEquals(DType.FLOAT64, d.dtype());
    Tensor l = Tensor.of(ctx, new long[] {7, 8, 9}, 3);
    assertEquals(DType.INT64, l.dtype());
    assertArrayEquals(new long[] {7, 8, 9}, l.toLongArray());
    assertEquals("Tensor(shape=[2, 3], dtype=FLOAT32, device=cpu:0)", f.toString());
  }

  @Test
  void factoriesAndDevices() {
    assertArrayEquals(new float[] {0, 0}, Tensor.zeros(ctx, 2).toFloatArray());
    Tensor z = Tensor.zeros(ctx, DType.INT64, Device.cpu(1), 2, 2);
    assertEquals(Device.cpu(1), z.device());
    assertEquals(3.5, Tensor.full(ctx, 3.5, 1).item());
    Tensor on1 = Tensor.of(ctx, Device.cpu(1), new float[] {1, 2}, 2);
    assertEquals(Device.cpu(1), on1.device());
    assertEquals(Device.cpu(0), on1.to(Device.cpu(0)).device());
    assertEquals(DType.FLOAT64, on1.to(DType.FLOAT64).dtype());
    assertEquals(DType.FLOAT64, Tensor.full(ctx, DType.FLOAT64, Device.cpu(0), 1, 3).dtype());
  }

  @Test
  void directBuffersCopyInAndOut() {
    FloatBuffer in = floats(4);
    in.put(new float[] {1, 2, 3, 4}).flip();
    Tensor t = Tensor.copyOf(ctx, Device.cpu(0), in, 4);
    in.put(0, 100);
    assertEquals(1, t.toFloatArray()[0]);
    FloatBuffer out = floats(4);
    t.copyTo(out);
    assertEquals(4, out.get(3));
    t.copyFrom(new float[] {9, 9, 9, 9});
    assertEquals(36, t.sum().item());
    FloatBuffer part = floats(6);
    part.put(new float[] {0, 0, 5, 6, 7, 8});
    part.position(2);
    t.copyFrom(part); // the remaining elements
    assertArrayEquals(new float[] {5, 6, 7, 8}, t.toFloatArray());
    Tensor dbl = Tensor.of(ctx, new double[] {1, 2}, 2).copyFrom(new double[] {3, 4});
    assertEquals(7, dbl.sum().item());
    Tensor lng = Tensor.of(ctx, new long[] {1, 2}, 2).copyFrom(new long[] {5, 6});
    assertArrayEquals(new long[] {5, 6}, lng.toLongArray());
    DoubleBuffer db = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder()).asDoubleBuffer();
    db.put(new double[] {1.5, 2.5}).flip();
    assertEquals(DType.FLOAT64, Tensor.copyOf(ctx, Device.cpu(0), db, 2).dtype());
  }

  @Test
  void borrowedBuffersShareMemoryBothWays() {
    FloatBuffer buf = floats(3);
    buf.put(new float[] {1, 2, 3}).flip();
    Tensor t = Tensor.borrow(ctx, buf, 3);
    buf.put(1, 20);
    assertArrayEquals(new float[] {1, 20, 3}, t.toFloatArray());
    t.copyFrom(new float[] {7, 8, 9});
    assertEquals(9, buf.get(2));
    LongBuffer labels = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder()).asLongBuffer();
    labels.put(new long[] {4, 5}).flip();
    assertEquals(DType.INT64, Tensor.borrow(ctx, 1, labels, 2).dtype());
  }

  @Test
  void borrowedBufferStaysAliveWithoutOtherReferences() throws InterruptedException {
    FloatBuffer buf = floats(1024);
    for (int i = 0; i < 1024; ++i) buf.put(i, i);
    Tensor t = Tensor.borrow(ctx, buf, 1024);
    buf = null;
    for (int i = 0; i < 5; ++i) {
      System.gc();
      byte[][] pressure = new byte[64][];
      for (int k = 0; k < pressure.length; ++k) pressure[k] = new byte[1 << 16];
      Thread.sleep(10);
    }
    assertEquals(1023.0 * 1024 / 2, t.sum().item());
  }

  @Test
  void badBuffersAreRejected() {
    FloatBuffer heap = FloatBuffer.allocate(4);
    assertThrows(IllegalArgumentException.class, () -> Tensor.borrow(ctx, heap, 4));
    FloatBuffer bigEndian =
        ByteBuffer.allocateDirect(16).order(ByteOrder.BIG_ENDIAN).asFloatBuffer();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Tensor.borrow(ctx, bigEndian, 4));
    assertTrue(e.getMessage().contains("native byte order"));
    DataParallelException wrongSize =
        assertThrows(DataParallelException.class, () -> Tensor.borrow(ctx, floats(4), 5));
    assertEquals(ErrorCode.INVALID_ARGUMENT, wrongSize.errorCode());
  }

  /** A read-only buffer is never written: not borrowed, and not a copy's destination. */
  @Test
  void readOnlyBuffersAreNeverWritten() {
    FloatBuffer data = floats(3);
    data.put(new float[] {1, 2, 3}).flip();
    FloatBuffer readOnly = data.asReadOnlyBuffer();
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Tensor.borrow(ctx, readOnly, 3));
    assertTrue(e.getMessage().contains("read-only"));
    Tensor t = Tensor.of(ctx, new float[] {7, 8, 9}, 3);
    assertThrows(IllegalArgumentException.class, () -> t.copyTo(readOnly));
    assertEquals(1.0f, data.get(0));
    assertEquals(3.0f, data.get(2));
    // Reading from one is fine: a copy's source.
    assertArrayEquals(new float[] {1, 2, 3}, Tensor.copyOf(ctx, Device.cpu(0), readOnly, 3)
        .toFloatArray());
  }

  /**
   * The buffer deleter attaches library threads to the JVM to drop its reference; they
   * detach when they end. Before, every closed context left its worker threads behind as
   * live, RUNNABLE Java threads.
   */
  @Test
  void threadsAttachedByTheDeleterDetachWhenTheyEnd() throws InterruptedException {
    long before = Thread.getAllStackTraces().size();
    for (int round = 0; round < 5; ++round) {
      try (Context c2 = Context.builder().cpuDevices(2).loadCuda(false).build()) {
        FloatBuffer buf = floats(4);
        buf.put(new float[] {1, 2, 3, 4}).flip();
        try (Module lin = Module.linear(c2, 2, 1);
            DataParallel dp =
                DataParallel.builder(lin).devices(Device.cpu(0), Device.cpu(1)).build()) {
          Tensor x = Tensor.borrow(c2, buf, 2, 2);
          Tensor y = dp.forward(x);
          Tensor loss = y.sum();
          // Only the graph holds the borrowed memory now: the backward lets go of it on
          // the workers' threads, where the deleter then runs.
          x.close();
          y.close();
          loss.backward();
          loss.close();
        }
      }
    }
    long after = Thread.getAllStackTraces().size();
    for (int wait = 0; wait < 100 && after > before; ++wait) {
      Thread.sleep(20);
      after = Thread.getAllStackTraces().size();
    }
    assertTrue(after <= before, before + " Java threads before, " + after + " after");
  }

  /** The same byte count of another element type would be its bits reinterpreted. */
  @Test
  void copiesOfAnotherElementTypeAreDtypeMismatches() {
    Tensor d = Tensor.of(ctx, new double[] {1, 2}, 2);
    DataParallelException e =
        assertThrows(DataParallelException.class, () -> d.copyFrom(new float[] {1, 2, 3, 4}));
    assertEquals(ErrorCode.DTYPE_MISMATCH, e.errorCode());
    assertThrows(DataParallelException.class, () -> d.copyFrom(new long[] {1, 2}));
    assertThrows(DataParallelException.class, () -> d.copyTo(floats(4)));
    assertThrows(DataParallelException.class, () -> d.copyFrom(floats(4)));
    assertArrayEquals(new double[] {1, 2}, d.toDoubleArray());
  }

  @Test
  void opsComputeWhatTheySay() {
    Tensor a = Tensor.of(ctx, new float[] {1, -2, 3, -4}, 2, 2);
    Tensor b = Tensor.of(ctx, new float[] {2, 2, 2, 2}, 2, 2);
    assertArrayEquals(new float[] {3, 0, 5, -2}, a.add(b).toFloatArray());
    assertArrayEquals(new float[] {-1, -4, 1, -6}, a.sub(b).toFloatArray());
    assertArrayEquals(new float[] {2, -4, 6, -8}, a.mul(b).toFloatArray());
    assertArrayEquals(new float[] {0.5f, -1, 1.5f, -2}, a.div(b).toFloatArray());
    assertArrayEquals(new float[] {-1, 2, -3, 4}, a.neg().toFloatArray());
    assertArrayEquals(new float[] {2, -1, 4, -3}, a.add(1).toFloatArray());
    assertArrayEquals(new float[] {3, -6, 9, -12}, a.mul(3).toFloatArray());
    assertArrayEquals(new float[] {1, 0, 3, 0}, a.relu().toFloatArray());
    assertArrayEquals(new float[] {-2, -2, -2, -2}, a.matmul(b).toFloatArray());
    assertEquals(-2, a.sum().item());
    assertArrayEquals(new float[] {-1, -1}, a.sum(1, false).toFloatArray());
    assertArrayEquals(new float[] {-0.5f}, a.mean().reshape(1).toFloatArray());
    assertArrayEquals(new float[] {2, -3}, a.mean(0, true).toFloatArray());
    assertArrayEquals(new long[] {0, 0}, a.argmax(1).toLongArray());
    assertArrayEquals(new long[] {4}, a.reshape(-1).shape());
    assertArrayEquals(new long[] {4}, a.flatten(0, -1).shape());
    Tensor[] pieces = a.split(new long[] {1, 1}, 0);
    assertEquals(2, pieces.length);
    assertArrayEquals(new float[] {3, -4}, pieces[1].toFloatArray());
    TestSupport.assertClose(
        new float[] {0.5f, 0.5f, 0.5f, 0.5f}, b.softmax(1).toFloatArray(), 1e-6);
    TestSupport.assertClose(new float[] {(float) Math.tanh(1), (float) Math.tanh(-2)},
        Tensor.of(ctx, new float[] {1, -2}, 2).tanh().toFloatArray(), 1e-6);
    TestSupport.assertClose(
        new float[] {0.5f}, Tensor.of(ctx, new float[] {0}, 1).sigmoid().toFloatArray(), 1e-6);
    TestSupport.assertClose(new float[] {(float) Math.E},
        Tensor.of(ctx, new float[] {1}, 1).exp().toFloatArray(), 1e-6);
    TestSupport.assertClose(new float[] {(float) Math.log(3)},
        Tensor.of(ctx, new float[] {3}, 1).log().toFloatArray(), 1e-5);
    TestSupport.assertClose(
        new float[] {0}, Tensor.of(ctx, new float[] {0}, 1).gelu().toFloatArray(), 1e-6);
    float half = (float) -Math.log(2);
    TestSupport.assertClose(
        new float[] {half, half, half, half}, b.logSoftmax(1).toFloatArray(), 1e-5);
  }

  @Test
  void autogradGradientsAndDetach() {
    Tensor x = Tensor.of(ctx, new float[] {1, 2, 3}, 3).requiresGrad(true);
    assertTrue(x.requiresGrad());
    assertNull(x.grad());
    Tensor y = x.mul(x).sum();
    y.backward();
    assertArrayEquals(new float[] {2, 4, 6}, x.grad().toFloatArray());
    Tensor z = x.mul(2);
    z.backward(Tensor.of(ctx, new float[] {1, 0, 1}, 3), false);
    assertArrayEquals(new float[] {4, 4, 8}, x.grad().toFloatArray());
    x.zeroGrad();
    assertNull(x.grad());
    assertFalse(x.detach().requiresGrad());
    long v = x.version();
    x.copyFrom(new float[] {0, 0, 0});
    assertTrue(x.version() > v);
  }

  @Test
  void itemNeedsOneElement() {
    DataParallelException e =
        assertThrows(DataParallelException.class, () -> Tensor.zeros(ctx, 2).item());
    assertEquals(ErrorCode.SHAPE_MISMATCH, e.errorCode());
    assertNotNull(e.getMessage());
  }
}
