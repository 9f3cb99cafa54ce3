package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointTest {
  static void step(Context ctx, Module m, Optimizer opt) {
    opt.zeroGrad();
    Ops.mseLoss(m.forward(Tensor.full(ctx, 1.0, 4, 3)), Tensor.zeros(ctx, 4, 2)).backward();
    opt.step();
  }

  @Test
  void restoresModuleOptimizerAndMetadata(@TempDir Path dir) {
    Path file = dir.resolve("ckpt.safetensors");
    try (Context ctx = TestSupport.context(); Module a = Module.linear(ctx, 3, 2);
         Optimizer optA = Optimizer.adam(a).lr(0.1).build(); Module b = Module.linear(ctx, 3, 2);
         Optimizer optB = Optimizer.adam(b).lr(0.1).build()) {
      step(ctx, a, optA);
      Map<String, String> meta = new LinkedHashMap<>();
      meta.put("epoch", "3");
      meta.put("model", "linear");
      Checkpoint.save(file, a, optA, meta);
      assertEquals("3", Checkpoint.metadata(file, "epoch"));
      assertEquals("linear", Checkpoint.metadata(file, "model"));
      DataParallelException e =
          assertThrows(DataParallelException.class, () -> Checkpoint.metadata(file, "nope"));
      assertEquals(ErrorCode.OUT_OF_RANGE, e.errorCode());
      Checkpoint.load(file, b, optB);
      step(ctx, a, optA);
      step(ctx, b, optB);
      TestSupport.assertClose(a.get("weight").toFloatArray(), b.get("weight").toFloatArray(), 1e-6);
      Checkpoint.save(dir.resolve("plain.safetensors"), a, null, null);
      Checkpoint.load(dir.resolve("plain.safetensors"), b, null);
    }
  }
}
