package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The stage functions of {@link Parallel} against the module's own forward and backward. */
class ParallelTest {
  static final List<Device> TWO = List.of(Device.cpu(0), Device.cpu(1));

  static float[] input() {
    float[] x = new float[6 * 4];
    for (int i = 0; i < x.length; ++i) x[i] = (float) Math.sin(0.7 * i + 0.3);
    return x;
  }

  static void closeAll(AutoCloseable... objects) throws Exception {
    for (AutoCloseable o : objects) o.close();
  }

  /** The gradients of the module's parameters, in parameter order, flattened. */
  static List<float[]> grads(Module m) {
    List<float[]> g = new ArrayList<>();
    for (Tensor p : m.parameters()) {
      try (p; Tensor gp = p.grad()) {
        g.add(gp.toFloatArray());
      }
    }
    return g;
  }

  @Test
  void stagesGiveTheModulesOutputAndGradients() throws Exception {
    try (Context ctx = TestSupport.context();
         Sequential model = Sequential.builder(ctx).linear(4, 8).relu().linear(8, 3).build();
         Tensor x = Tensor.of(ctx, input(), 6, 4)) {
      // The reference: the module on the whole batch, on one device.
      float[] want;
      List<float[]> wantGrads;
      try (Tensor y = model.forward(x); Tensor s = y.sum()) {
        want = y.toFloatArray();
        s.backward();
        wantGrads = grads(model);
      }
      model.zeroGrad();

      Tensor[] chunks = Parallel.scatter(x, TWO);
      assertEquals(2, chunks.length);
      assertArrayEquals(new long[] {3, 4}, chunks[1].shape());
      assertEquals(Device.cpu(1), chunks[1].device());
      Module[] replicas = Parallel.replicate(model, TWO);
      assertEquals(2, replicas.length);
      assertEquals("Sequential", replicas[1].typeName());
      Tensor[] outs = Parallel.parallelApply(replicas, chunks, TWO);
      assertEquals(Device.cpu(1), outs[1].device());
      assertArrayEquals(new long[] {3, 3}, outs[1].shape());
      try (Tensor y = Parallel.gather(outs, Device.cpu(0), 0); Tensor s = y.sum()) {
        TestSupport.assertClose(want, y.toFloatArray(), 1e-6);
        s.backward();  // through gather, the replicas and scatter into the module's parameters
      }
      List<float[]> got = grads(model);
      assertEquals(wantGrads.size(), got.size());
      for (int i = 0; i < got.size(); ++i) {
        TestSupport.assertClose(wantGrads.get(i), got.get(i), 1e-5);
      }
      closeAll(chunks);
      closeAll(replicas);
      closeAll(outs);

      try (Tensor y = Parallel.dataParallel(model, x, TWO)) {
        TestSupport.assertClose(want, y.toFloatArray(), 1e-6);
        assertEquals(Device.cpu(0), y.device());
      }
      // No device list: every CPU device (no CUDA here), as DataParallel takes it.
      try (Tensor y = Parallel.dataParallel(model, new Tensor[] {x}, null, null, null, 0)[0]) {
        TestSupport.assertClose(want, y.toFloatArray(), 1e-6);
      }
      Tensor[] onOne = Parallel.dataParallel(model, new Tensor[] {x}, null, TWO, Device.cpu(1), 0);
      assertEquals(1, onOne.length);
      assertEquals(Device.cpu(1), onOne[0].device());
      TestSupport.assertClose(want, onOne[0].toFloatArray(), 1e-6);
      closeAll(onOne);
    }
  }

  @Test
  void scatterTakesChunkSizesAndADimension() throws Exception {
    try (Context ctx = TestSupport.context(); Tensor x = Tensor.of(ctx, input(), 6, 4)) {
      Tensor[] rows = Parallel.scatter(x, TWO, new long[] {1, 5}, 0);
      assertArrayEquals(new long[] {1, 4}, rows[0].shape());
      assertArrayEquals(new long[] {5, 4}, rows[1].shape());
      Tensor[] cols = Parallel.scatter(x, TWO, null, 1);
      assertArrayEquals(new long[] {6, 2}, cols[0].shape());
      float[] all = input();
      float[] right = cols[1].toFloatArray();
      for (int r = 0; r < 6; ++r) {
        assertEquals(all[r * 4 + 2], right[r * 2], "row " + r);
        assertEquals(all[r * 4 + 3], right[r * 2 + 1], "row " + r);
      }
      // Along dim 1 and back: the input again.
      try (Tensor back = Parallel.gather(cols, Device.cpu(0), 1)) {
        assertArrayEquals(all, back.toFloatArray());
      }
      // Two rows over two devices in torch.chunk's sizes: one each; one row: one piece.
      try (Tensor one = Tensor.of(ctx, new float[] {1, 2, 3, 4}, 1, 4)) {
        Tensor[] pieces = Parallel.scatter(one, TWO);
        assertEquals(1, pieces.length);
        closeAll(pieces);
      }
      closeAll(rows);
      closeAll(cols);
    }
  }

  @Test
  void badArgumentsAreNamed() throws Exception {
    try (Context ctx = TestSupport.context();
         Sequential model = Sequential.builder(ctx).linear(4, 3).build();
         Tensor x = Tensor.of(ctx, input(), 6, 4)) {
      DataParallelException e = assertThrows(
          DataParallelException.class, () -> Parallel.scatter(x, TWO, new long[] {6}, 0));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.errorCode());
      assertTrue(e.getMessage().contains("1 chunk_sizes for 2 devices"), e.getMessage());

      Module[] replicas = Parallel.replicate(model, TWO);
      Tensor[] chunks = Parallel.scatter(x, TWO);
      e = assertThrows(DataParallelException.class,
          () -> Parallel.parallelApply(replicas, chunks, List.of(Device.cpu(0))));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.errorCode());
      assertTrue(e.getMessage().contains("2 replicas, 1 devices"), e.getMessage());
      // Replica 1's input on cpu:0: refused before anything runs, naming the device.
      Tensor[] swapped = {chunks[0], chunks[0]};
      e = assertThrows(
          DataParallelException.class, () -> Parallel.parallelApply(replicas, swapped, TWO));
      assertEquals(ErrorCode.DEVICE_MISMATCH, e.errorCode());
      assertTrue(e.getMessage().contains("cpu:1"), e.getMessage());

      List<Device> withNull = Arrays.asList(Device.cpu(0), null);
      NullPointerException n =
          assertThrows(NullPointerException.class, () -> Parallel.scatter(x, withNull));
      assertEquals("devices[1]", n.getMessage());
      n = assertThrows(NullPointerException.class, () -> Parallel.scatter(null, TWO));
      assertEquals("input", n.getMessage());
      n = assertThrows(NullPointerException.class, () -> Parallel.replicate(null, TWO));
      assertEquals("module", n.getMessage());
      n = assertThrows(NullPointerException.class,
          () -> Parallel.parallelApply(new Module[] {replicas[0], null}, chunks, TWO));
      assertEquals("replicas[1]", n.getMessage());
      n = assertThrows(NullPointerException.class,
          () -> Parallel.gather(new Tensor[] {chunks[0], null}, Device.cpu(0), 0));
      assertEquals("tensors[1]", n.getMessage());
      n = assertThrows(NullPointerException.class, () -> Parallel.gather(chunks, null, 0));
      assertEquals("outputDevice", n.getMessage());
      List<Device> noDevice = Arrays.asList((Device) null);
      n = assertThrows(NullPointerException.class,
          () -> Parallel.dataParallel(model, new Tensor[] {x}, null, noDevice, null, 0));
      assertEquals("deviceIds[0]", n.getMessage());
      n = assertThrows(NullPointerException.class, () -> Parallel.dataParallel(model, null, TWO));
      assertEquals("input", n.getMessage());
      closeAll(replicas);
      closeAll(chunks);
    }
  }
}
