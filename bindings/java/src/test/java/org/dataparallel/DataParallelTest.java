package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataParallelTest {
  static float[] ramp(int n) {
    float[] v = new float[n];
    for (int i = 0; i < n; ++i) v[i] = (i % 7) * 0.1f - 0.3f;
    return v;
  }

  @Test
  void forwardEqualsTheModulesAndReportsDevices() {
    try (Context ctx = TestSupport.context();
         Sequential m = Sequential.builder(ctx).linear(4, 6).relu().linear(6, 2).build();
         DataParallel dp = DataParallel.builder(m).devices(Device.cpu(0), Device.cpu(1)).build()) {
      Tensor x = Tensor.of(ctx, ramp(40), 10, 4);
      TestSupport.assertClose(m.forward(x).toFloatArray(), dp.forward(x).toFloatArray(), 1e-6);
      assertEquals(List.of(Device.cpu(0), Device.cpu(1)), dp.devices());
      assertSame(m, dp.module());
      DataParallel.Stats stats = dp.stats();
      assertEquals(1, stats.calls());
      assertTrue(stats.total().apply() > 0);
      dp.resetStats();
      assertEquals(0, dp.stats().calls());
      assertTrue(dp.toString().contains("cpu:0, cpu:1"));
    }
  }

  @Test
  void moreDevicesThan1024AreListedWhole() {
    // The binding read at most 1024 devices into a fixed array and cut the list there.
    try (Context ctx = Context.builder().cpuDevices(1030).build();
         Module m = Module.linear(ctx, 2, 2);
         DataParallel dp = DataParallel.builder(m).build()) {
      List<Device> devices = dp.devices();
      assertEquals(1030, devices.size());
      assertEquals(Device.cpu(1029), devices.get(1029));
    }
  }

  @Test
  void optionsShapeTheOutputs() {
    try (Context ctx = TestSupport.context(); Module m = Module.linear(ctx, 4, 2)) {
      try (DataParallel dp = DataParallel.builder(m)
                                 .devices(Device.cpu(0), Device.cpu(1))
                                 .chunkSizes(3, 1)
                                 .gather(false)
                                 .cacheReplicas(true)
                                 .bufferSync(BufferSync.AVERAGE)
                                 .aliasCpu(false)
                                 .bucketBytes(1 << 16)
                                 .dim(0)
                                 .build()) {
        Tensor[] outs = dp.forwardAll(Tensor.zeros(ctx, 4, 4));
        assertEquals(2, outs.length);
        assertArrayEquals(new long[] {3, 2}, outs[0].shape());
        assertEquals(Device.cpu(1), outs[1].device());
      }
      try (DataParallel dp = DataParallel.builder(m)
                                 .devices(Device.cpu(0), Device.cpu(1))
                                 .outputDevice(Device.cpu(1))
                                 .build()) {
        assertEquals(Device.cpu(1), dp.forward(Tensor.zeros(ctx, 4, 4)).device());
        Tensor[] both =
            dp.forwardAll(new Tensor[] {Tensor.zeros(ctx, 4, 4)}, new boolean[] {false});
        assertEquals(1, both.length);
        DataParallelException e = assertThrows(DataParallelException.class,
            ()
                -> dp.forwardAll(
                    new Tensor[] {Tensor.zeros(ctx, 4, 4)}, new boolean[] {false, true}));
        assertTrue(e.getMessage().contains("broadcast has 2 flags"));
      }
    }
  }

  @Test
  void gradientsAreTheFullBatchGradients() {
    try (Context ctx = TestSupport.context(); Module m = Module.linear(ctx, 4, 3)) {
      Tensor x = Tensor.of(ctx, ramp(32), 8, 4);
      Tensor y = Tensor.of(ctx, new long[] {0, 1, 2, 0, 1, 2, 0, 1}, 8);
      Ops.crossEntropy(m.forward(x), y).backward();
      float[] want = m.get("weight").grad().toFloatArray();
      m.zeroGrad();
      try (
          DataParallel dp = DataParallel.builder(m).devices(Device.cpu(0), Device.cpu(1)).build()) {
        Ops.crossEntropy(dp.forward(x), y).backward();
      }
      TestSupport.assertClose(want, m.get("weight").grad().toFloatArray(), 1e-5);
    }
  }

  @Test
  void badDevicesAndFiles(@TempDir Path dir) {
    try (Context ctx = TestSupport.context(); Module m = Module.linear(ctx, 2, 2)) {
      DataParallelException e = assertThrows(DataParallelException.class,
          () -> DataParallel.builder(m).devices(Device.cpu(0), Device.cpu(4)).build());
      assertEquals(ErrorCode.OUT_OF_RANGE, e.errorCode());
      assertTrue(e.getMessage().contains("4"), e.getMessage());
      IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
          () -> DataParallel.builder(m).bucketBytes(-1));
      assertEquals("bucketBytes = -1: must be >= 0 (0: 10 MiB)", bad.getMessage());
      try (DataParallel dp = DataParallel.builder(m).build()) { // every CPU device
        assertEquals(2, dp.devices().size());
        dp.save(dir.resolve("dp.safetensors"));
        dp.load(dir.resolve("dp.safetensors"));
      }
    }
  }
}
