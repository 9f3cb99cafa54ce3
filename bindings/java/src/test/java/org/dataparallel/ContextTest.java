package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ContextTest {
  @Test
  void builderMakesTheRequestedCpuDevices() {
    try (Context ctx = TestSupport.context()) {
      assertEquals(2, ctx.deviceCount(DeviceType.CPU));
      assertEquals(0, ctx.deviceCount(DeviceType.CUDA));
      assertEquals(List.of(Device.cpu(0), Device.cpu(1)), ctx.devices(DeviceType.CPU));
      assertEquals("Context(cpu=2, cuda=0)", ctx.toString());
    }
  }

  @Test
  void deviceNameMemoryAndSynchronize() {
    try (Context ctx = TestSupport.context()) {
      assertTrue(ctx.deviceName(Device.cpu(1)).startsWith("cpu:1"));
      long[] memory = ctx.deviceMemory(Device.cpu(0));
      assertTrue(memory[0] > 0 && memory[0] <= memory[1]);
      ctx.synchronize(Device.cpu(0));
    }
  }

  @Test
  void defaultContextAndTensorsOutliveIt() {
    Tensor t;
    try (Context ctx = Context.create()) {
      assertTrue(ctx.deviceCount(DeviceType.CPU) >= 1);
      t = Tensor.full(ctx, 2.0, 3);
    }
    assertEquals(6.0, t.sum().item());
    t.close();
  }

  @Test
  void aMissingDeviceIsOutOfRange() {
    try (Context ctx = TestSupport.context()) {
      DataParallelException e =
          assertThrows(DataParallelException.class, () -> ctx.deviceName(Device.cpu(9)));
      assertEquals(ErrorCode.OUT_OF_RANGE, e.errorCode());
    }
  }

  /**
   * The library's messages reach a Java listener, from whichever thread logs: here the
   * start-up line that says why there are no CUDA devices (on a machine without a GPU).
   * A listener that throws changes nothing.
   */
  @Test
  void logMessagesReachTheListener() {
    List<String> messages = Collections.synchronizedList(new ArrayList<>());
    try (Context ctx =
        Context.builder()
            .cpuDevices(1)
            .loadCuda(true)
            .logLevel(LogLevel.INFO)
            .log((level, message) -> messages.add(level + " " + message))
            .build()) {
      if (ctx.deviceCount(DeviceType.CUDA) == 0) {
        assertTrue(
            messages.stream().anyMatch(m -> m.startsWith("INFO") && m.contains("CPU devices only")),
            messages.toString());
      }
      assertTrue(!messages.isEmpty());
    }
    try (Context ctx =
        Context.builder()
            .cpuDevices(1)
            .loadCuda(true)
            .logLevel(LogLevel.DEBUG)
            .log((level, message) -> { throw new IllegalStateException("listener failed"); })
            .build()) {
      assertEquals(1, ctx.deviceCount(DeviceType.CPU));
    }
  }
}
