package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class DeviceTest {
  @Test
  void parsesAndPrints() {
    assertEquals(Device.cuda(3), Device.parse("cuda:3"));
    assertEquals(Device.cpu(0), Device.parse("cpu"));
    assertEquals("cpu:1", Device.cpu(1).toString());
    assertEquals(DeviceType.CUDA, Device.parse("cuda").type());
    assertThrows(IllegalArgumentException.class, () -> Device.parse("tpu:0"));
    assertThrows(IllegalArgumentException.class, () -> Device.parse("cpu:x"));
    for (String bad : new String[] {"cpu:-1", "cpu:+1", "cpu: 1", "cpu:"}) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> Device.parse(bad), bad);
      assertEquals("device \"" + bad + "\" has a bad index", e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> new Device(null, 0));
  }

  @Test
  void enumsCarryTheCValues() {
    assertEquals(0, DType.FLOAT32.value());
    assertEquals(2, DType.INT64.value());
    assertEquals(8, DType.FLOAT64.size());
    assertEquals(1, DeviceType.CUDA.value());
    assertEquals(1, BufferSync.AVERAGE.ordinal());
  }
}
