package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

class ExceptionTest {
  static DataParallelException expect(ErrorCode code, String fragment, Executable call) {
    DataParallelException e = assertThrows(DataParallelException.class, call);
    assertEquals(code, e.errorCode(), e.getMessage());
    assertEquals(code.value(), e.code());
    assertTrue(
        e.getMessage().contains(fragment), "\"" + e.getMessage() + "\" lacks \"" + fragment + "\"");
    return e;
  }

  @Test
  void libraryErrorsCarryTheirCodeAndMessage(@TempDir Path dir) throws Exception {
    try (Context ctx = TestSupport.context()) {
      expect(ErrorCode.INVALID_ARGUMENT, "shape[0] = -2 is negative", () -> Tensor.zeros(ctx, -2));
      expect(ErrorCode.OUT_OF_RANGE, "9", () -> Tensor.zeros(ctx, DType.FLOAT32, Device.cpu(9), 2));
      expect(ErrorCode.SHAPE_MISMATCH, "matmul",
          () -> Tensor.zeros(ctx, 2, 3).matmul(Tensor.zeros(ctx, 4, 5)));
      expect(ErrorCode.DTYPE_MISMATCH, "float64",
          () -> Tensor.zeros(ctx, 2).add(Tensor.zeros(ctx, DType.FLOAT64, Device.cpu(0), 2)));
      expect(ErrorCode.DEVICE_MISMATCH, "cpu:1",
          () -> Tensor.zeros(ctx, 2).add(Tensor.zeros(ctx, DType.FLOAT32, Device.cpu(1), 2)));
      Path missing = dir.resolve("missing.safetensors");
      expect(ErrorCode.IO, "missing.safetensors", () -> Module.linear(ctx, 2, 2).load(missing));
      Path corrupt = dir.resolve("corrupt.safetensors");
      Files.write(corrupt, new byte[] {16, 0, 0, 0, 0, 0, 0, 0, '{', 'x'});
      expect(ErrorCode.FORMAT, "", () -> Module.linear(ctx, 2, 2).load(corrupt));
      Tensor x = Tensor.of(ctx, new float[] {1}, 1).requiresGrad(true);
      Tensor y = x.mul(x).sum();
      y.backward();
      expect(ErrorCode.STATE, "", y::backward);
      expect(ErrorCode.OUT_OF_RANGE, "5",
          () -> Ops.crossEntropy(Tensor.zeros(ctx, 1, 3), Tensor.of(ctx, new long[] {5}, 1)));
      expect(ErrorCode.INVALID_ARGUMENT, "needs 12 bytes",
          () -> Tensor.of(ctx, new float[] {1, 2}, 3));
    }
  }

  @Test
  void codesMapBothWays() {
    for (ErrorCode c : ErrorCode.values()) assertEquals(c, ErrorCode.of(c.value()));
    assertEquals(ErrorCode.INTERNAL, ErrorCode.of(99));
    DataParallelException e = new DataParallelException(ErrorCode.CALLBACK, "boom");
    assertEquals(12, e.code());
    assertEquals("DataParallelException[CALLBACK]: boom", e.toString());
  }

  @Test
  void misuseOfTheJavaSideIsAnIllegalArgument() {
    try (Context ctx = TestSupport.context()) {
      assertThrows(IllegalArgumentException.class,
          () -> Tensor.copyOf(ctx, Device.cpu(0), java.nio.FloatBuffer.allocate(2), 2));
    }
  }
}
