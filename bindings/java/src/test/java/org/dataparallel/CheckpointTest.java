package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
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

  /** Paths, metadata and messages cross as UTF-8, characters past U+FFFF included. */
  @Test
  void textOutsideTheBasicMultilingualPlaneRoundTrips(@TempDir Path dir) {
    Path file = dir.resolve("model-\uD83D\uDE00.safetensors"); // U+1F600
    try (Context ctx = TestSupport.context(); Module a = Module.linear(ctx, 3, 2)) {
      Checkpoint.save(file, a, null, Map.of("note", "smile \uD83D\uDE00"));
      assertTrue(Files.exists(file), "the file has the name asked for");
      assertEquals("smile \uD83D\uDE00", Checkpoint.metadata(file, "note"));
      Path missing = dir.resolve("missing-\uD83D\uDE00.safetensors");
      DataParallelException e =
          assertThrows(DataParallelException.class, () -> Checkpoint.load(missing, a, null));
      assertTrue(e.getMessage().contains("missing-\uD83D\uDE00"), e.getMessage());
    }
  }

  @Test
  void nullMetadataAndTextWithANulAreRefusedBeforeTheCall(@TempDir Path dir) {
    try (Context ctx = TestSupport.context(); Module a = Module.linear(ctx, 3, 2)) {
      Map<String, String> meta = new HashMap<>();
      meta.put("epoch", null);
      Path file = dir.resolve("a.safetensors");
      assertThrows(IllegalArgumentException.class, () -> Checkpoint.save(file, a, null, meta));
      assertFalse(Files.exists(file));
      Checkpoint.save(file, a, null, Map.of("epoch", "1"));
      // A key cut short at the NUL would find "epoch".
      assertThrows(IllegalArgumentException.class, () -> Checkpoint.metadata(file, "epoch\0x"));
    }
  }
}
