package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class LifecycleTest {
  static void assertClosedUseThrows(String what, Executable call) {
    DataParallelException e = assertThrows(DataParallelException.class, call, what);
    assertEquals(ErrorCode.STATE, e.errorCode(), what);
    assertTrue(e.getMessage().endsWith("is closed"), e.getMessage());
  }

  @Test
  void closingATensorWhileAnotherThreadComputesWithItNeverFreesItUnderTheCall() throws Exception {
    // The library frees a handle when it is released: before, close() freed it while a
    // call on another thread still ran with it, and the JVM crashed (SIGSEGV) within a few
    // hundred tries. Now the release waits for the calls in flight, and a call that starts
    // after the close throws STATE.
    try (Context ctx = Context.builder().cpuDevices(1).build()) {
      for (int i = 0; i < 300; ++i) {
        Tensor t = Tensor.zeros(ctx, 256, 256);
        List<Throwable> unexpected = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread user = new Thread(() -> {
          try {
            for (int k = 0; k < 5; ++k) t.matmul(t).close();
          } catch (DataParallelException e) {
            if (e.errorCode() != ErrorCode.STATE) unexpected.add(e);
          } catch (Throwable e) {
            unexpected.add(e);
          }
        });
        user.start();
        Thread.sleep(0, 200_000);
        t.close();
        user.join();
        assertTrue(unexpected.isEmpty(), unexpected.toString());
      }
    }
  }

  @Test
  void nullArgumentsAreNamedWhereTheyArePassed() {
    try (Context ctx = TestSupport.context(); Module m = Module.linear(ctx, 2, 2)) {
      java.util.Map<String, Executable> calls = new java.util.LinkedHashMap<>();
      calls.put("ctx", () -> Tensor.of(null, new float[] {1}, 1));
      calls.put("data", () -> Tensor.of(ctx, (float[]) null, 1));
      calls.put("shape", () -> Tensor.of(ctx, new float[] {1}, (long[]) null));
      calls.put("device", () -> Tensor.zeros(ctx, DType.FLOAT32, null, 1));
      calls.put("module", () -> DataParallel.builder(null));
      calls.put("devices[1]", () -> DataParallel.builder(m).devices(Device.cpu(0), null));
      calls.put("sync", () -> DataParallel.builder(m).bufferSync(null));
      calls.put("level", () -> Context.builder().logLevel(null));
      for (var call : calls.entrySet()) {
        NullPointerException e = assertThrows(NullPointerException.class, call.getValue());
        assertEquals(call.getKey(), e.getMessage());
      }
      assertThrows(NullPointerException.class, () -> Optimizer.sgd(null));
      IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
          () -> DataParallel.builder(m).devices());
      assertEquals("devices() needs at least one device; leave it out for every device",
          none.getMessage());
      IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
          () -> Module.batchNorm(ctx, 7, 3, 1e-5, 0.1, Device.cpu(0)));
      assertEquals("batchNorm: dims = 7 is neither 1 nor 2", bad.getMessage());
    }
  }

  static void assertNullNamed(String name, Executable call) {
    NullPointerException e = assertThrows(NullPointerException.class, call, name);
    assertEquals(name, e.getMessage());
  }

  @Test
  void nullArgumentsOfOpsModulesAndFilesAreNamed() {
    try (Context ctx = TestSupport.context(); Module m = Module.linear(ctx, 2, 2);
         Tensor x = Tensor.zeros(ctx, 1, 2); Sequential seq = Sequential.create(ctx);
         DataParallel dp = DataParallel.builder(m).build()) {
      assertNullNamed("other", () -> x.add(null));
      assertNullNamed("other", () -> x.matmul(null));
      assertNullNamed("x", () -> Ops.linear(null, x, null));
      assertNullNamed("weight", () -> Ops.conv2d(x, null, null, 1, 0));
      assertNullNamed("target", () -> Ops.crossEntropy(x, null));
      assertNullNamed("tensors[1]", () -> Ops.cat(0, x, null));
      assertNullNamed("tensors", () -> Ops.cat(0, (Tensor[]) null));
      assertNullNamed("input", () -> m.forward(null));
      assertNullNamed("inputs[0]", () -> m.forwardAll((Tensor) null));
      assertNullNamed("input", () -> dp.forward(null));
      assertNullNamed("inputs[1]", () -> dp.forwardAll(x, null));
      assertNullNamed("ctx", () -> Module.relu(null));
      assertNullNamed("ctx", () -> Module.linear(null, 2, 2));
      assertNullNamed("device", () -> Module.linear(ctx, 2, 2, true, null));
      assertNullNamed("device", () -> m.to(null));
      assertNullNamed("device", () -> x.to((Device) null));
      assertNullNamed("device", () -> ctx.deviceName(null));
      assertNullNamed("child", () -> seq.append(null));
      assertNullNamed("module", () -> Sequential.builder(ctx).add(null));
      assertNullNamed("path", () -> m.save(null));
      assertNullNamed("path", () -> dp.load(null));
      assertNullNamed("path", () -> Checkpoint.save(null, m, null, null));
      assertNullNamed("module", () -> Checkpoint.load(Path.of("x.safetensors"), null, null));
      assertNullNamed("dtype", () -> x.to((DType) null));
      assertNullNamed("type", () -> ctx.deviceCount(null));
      assertNullNamed("type", () -> ctx.devices(null));
      assertNullNamed("destination", () -> x.copyTo(null));
      assertNullNamed("src", () -> x.copyFrom((float[]) null));
      assertNullNamed("src", () -> x.copyFrom((java.nio.Buffer) null));
    }
  }

  @Test
  void tensorsOfTwoContextsAreRefusedNamingTheArgument() {
    try (Context a = TestSupport.context(); Context b = TestSupport.context();
         Tensor x = Tensor.zeros(a, 2); Tensor y = Tensor.zeros(b, 2)) {
      DataParallelException e = assertThrows(DataParallelException.class, () -> x.add(y));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.errorCode());
      assertTrue(e.getMessage().startsWith("add: b belongs to another dp_context than a"),
          e.getMessage());
    }
  }

  @Test
  void closingTwiceIsSafeAndUseAfterCloseThrows() {
    Context ctx = TestSupport.context();
    Tensor t = Tensor.zeros(ctx, 2);
    Module m = Module.linear(ctx, 2, 2);
    Sequential s = Sequential.create(ctx);
    Optimizer opt = Optimizer.sgd(m).build();
    DataParallel dp = DataParallel.builder(m).devices(Device.cpu(0)).build();
    for (AutoCloseable c : List.<AutoCloseable>of(dp, opt, s, m, t, ctx)) {
      assertFalse(((Handle<?>) c).isClosed());
      assertDoesNotThrowTwice(c);
      assertTrue(((Handle<?>) c).isClosed());
    }
    assertClosedUseThrows("tensor", t::numel);
    assertClosedUseThrows("tensor op", () -> t.add(1));
    assertClosedUseThrows("module", () -> m.forward(t));
    assertClosedUseThrows("sequential", () -> s.append(m));
    assertClosedUseThrows("optimizer", opt::step);
    assertClosedUseThrows("data parallel", dp::devices);
    assertClosedUseThrows("data parallel module", dp::module);
    assertClosedUseThrows("context", () -> ctx.deviceCount(DeviceType.CPU));
    assertClosedUseThrows("factory on a closed context", () -> Tensor.zeros(ctx, 1));
    assertEquals("Tensor(closed)", t.toString());
    assertEquals("Module(closed)", m.toString());
    assertEquals("Context(closed)", ctx.toString());
    assertEquals("DataParallel(closed)", dp.toString());
  }

  private static void assertDoesNotThrowTwice(AutoCloseable c) {
    try {
      c.close();
      c.close();
    } catch (Exception e) {
      throw new AssertionError(c + " threw on close", e);
    }
  }

  @Test
  void guardsRestoreTheGradMode() {
    try (Context ctx = TestSupport.context()) {
      Tensor x = Tensor.of(ctx, new float[] {1}, 1).requiresGrad(true);
      assertTrue(GradMode.isEnabled());
      try (GradMode.Guard off = GradMode.disabled()) {
        assertFalse(GradMode.isEnabled());
        assertFalse(x.mul(2).requiresGrad());
        try (GradMode.Guard on = GradMode.enabled()) {
          assertTrue(x.mul(2).requiresGrad());
        }
        assertFalse(GradMode.isEnabled());
        off.close(); // closing twice is safe
      }
      assertTrue(GradMode.isEnabled());
      assertTrue(GradMode.setEnabled(false));
      assertFalse(GradMode.setEnabled(true));
    }
  }

  /** Resident memory from /proc/self/statm (pages * 4096). */
  static long rss() throws Exception {
    String[] f = Files.readString(Path.of("/proc/self/statm")).trim().split(" ");
    return Long.parseLong(f[1]) * 4096;
  }

  @Test
  void noNativeLeakOverManyCreateCloseCycles() throws Exception {
    try (Context ctx = TestSupport.context()) {
      float[] data = new float[16384]; // 64 KiB: a leak of it dwarfs the JVM's own growth
      Runnable cycle = () -> {
        try (Tensor t = Tensor.of(ctx, data, 16384); Tensor doubled = t.mul(2);
             Tensor u = doubled.add(1); Tensor sum = u.sum(); Module m = Module.linear(ctx, 4, 4);
             Tensor x = Tensor.zeros(ctx, 1, 4); Tensor y = m.forward(x)) {
          sum.item();
        }
      };
      for (int i = 0; i < 1000; ++i) cycle.run();
      long before = rss();
      for (int i = 0; i < 10000; ++i) cycle.run();
      long grown = rss() - before;
      // One leaked 64 KiB tensor per cycle would be 650 MB.
      assertTrue(grown < 64L << 20, "RSS grew by " + grown / 1e6 + " MB over 10,000 cycles");
    }
  }

  @Test
  void unreachableTensorsAreReleasedByTheCleaner() throws Exception {
    try (Context ctx = TestSupport.context()) {
      java.lang.ref.WeakReference<java.nio.FloatBuffer> buffer = borrowAndDrop(ctx);
      // The tensor's Cleaner releases the handle; the library then drops its reference to
      // the buffer, which the collector can then free.
      for (int i = 0; i < 200 && buffer.get() != null; ++i) {
        System.gc();
        Thread.sleep(10);
      }
      assertTrue(buffer.get() == null, "the borrowed buffer is still referenced");
    }
  }

  private static java.lang.ref.WeakReference<java.nio.FloatBuffer> borrowAndDrop(Context ctx) {
    java.nio.FloatBuffer buf = TensorTest.floats(256);
    Tensor t = Tensor.borrow(ctx, buf, 256);
    assertEquals(256, t.numel());
    return new java.lang.ref.WeakReference<>(buf);
  }
}
