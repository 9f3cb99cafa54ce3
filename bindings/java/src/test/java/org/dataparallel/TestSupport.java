package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Helpers shared by the tests. */
final class TestSupport {
  private TestSupport() {}

  /** Two virtual CPU devices, no CUDA. */
  static Context context() {
    return Context.builder().cpuDevices(2).loadCuda(false).seed(0).build();
  }

  static void assertClose(float[] want, float[] got, double tolerance) {
    assertEquals(want.length, got.length, "length");
    for (int i = 0; i < want.length; ++i) {
      assertEquals(want[i], got[i], tolerance * Math.max(1.0, Math.abs(want[i])), "element " + i);
    }
  }
}
