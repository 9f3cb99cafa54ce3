package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModuleTest {
  @Test
  void everyLayerFactoryRuns() {
    try (Context ctx = TestSupport.context()) {
      Tensor img = Tensor.full(ctx, 0.5, 2, 3, 8, 8);
      assertArrayEquals(new long[] {2, 4, 8, 8},
          Module.conv2d(ctx, 3, 4, 3, 1, 1, true, Device.cpu(0)).forward(img).shape());
      assertArrayEquals(new long[] {2, 4, 6, 6}, Module.conv2d(ctx, 3, 4, 3).forward(img).shape());
      assertArrayEquals(
          new long[] {2, 3, 4, 4}, Module.maxPool2d(ctx, 2, 2, 0).forward(img).shape());
      assertArrayEquals(
          new long[] {2, 3, 4, 4}, Module.avgPool2d(ctx, 2, 2, 0).forward(img).shape());
      assertArrayEquals(new long[] {2, 192}, Module.flatten(ctx, 1, -1).forward(img).shape());
      assertArrayEquals(new long[] {2, 3, 8, 8}, Module.batchNorm2d(ctx, 3).forward(img).shape());
      Tensor x = Tensor.of(ctx, new float[] {-1, 0, 1, 2}, 2, 2);
      assertArrayEquals(new float[] {0, 0, 1, 2}, Module.relu(ctx).forward(x).toFloatArray());
      assertEquals(4, Module.gelu(ctx).forward(x).numel());
      TestSupport.assertClose(
          new float[] {(float) Math.tanh(-1), 0, (float) Math.tanh(1), (float) Math.tanh(2)},
          Module.tanh(ctx).forward(x).toFloatArray(), 1e-6);
      assertEquals(0.5f, Module.sigmoid(ctx).forward(x).toFloatArray()[1], 1e-6);
      assertArrayEquals(new long[] {2, 2}, Module.batchNorm1d(ctx, 2).forward(x).shape());
      assertArrayEquals(new long[] {2, 5}, Module.linear(ctx, 2, 5).forward(x).shape());
      Module noBias = Module.linear(ctx, 2, 5, false, Device.cpu(1));
      assertEquals(1, noBias.parameterCount());
      assertEquals(Device.cpu(1), noBias.get("weight").device());
      Module drop = Module.dropout(ctx, 0.5).eval();
      assertArrayEquals(x.toFloatArray(), drop.forward(x).toFloatArray());
      Module emb = Module.embedding(ctx, 10, 4, Device.cpu(0));
      assertArrayEquals(
          new long[] {3, 4}, emb.forward(Tensor.of(ctx, new long[] {1, 2, 3}, 3)).shape());
      assertEquals("Embedding", emb.typeName());
    }
  }

  @Test
  void sequentialBuilderNamesAndForward() {
    try (Context ctx = TestSupport.context(); Sequential mlp = Sequential.builder(ctx)
                                                                   .linear(4, 8)
                                                                   .relu()
                                                                   .dropout(0.0)
                                                                   .linear(8, 3, false)
                                                                   .gelu()
                                                                   .tanh()
                                                                   .sigmoid()
                                                                   .build()) {
      assertEquals("Sequential", mlp.typeName());
      assertEquals(
          List.of("0.weight", "0.bias", "3.weight"), List.copyOf(mlp.namedParameters().keySet()));
      assertEquals(3, mlp.parameters().size());
      assertArrayEquals(new long[] {5, 3}, mlp.forward(Tensor.zeros(ctx, 5, 4)).shape());
      Tensor[] outs = mlp.forwardAll(Tensor.zeros(ctx, 5, 4));
      assertEquals(1, outs.length);
      assertTrue(mlp.toString().startsWith("Sequential(parameters=3"));

      Sequential cnn = Sequential.builder(ctx)
                           .device(Device.cpu(1))
                           .conv2d(1, 2, 3, 1, 1)
                           .batchNorm2d(2)
                           .maxPool2d(2)
                           .avgPool2d(2)
                           .flatten()
                           .build();
      assertEquals(List.of("1.running_mean", "1.running_var", "1.num_batches_tracked"),
          List.copyOf(cnn.namedBuffers().keySet()));
      assertEquals(3, cnn.bufferCount());
      Tensor img = Tensor.zeros(ctx, DType.FLOAT32, Device.cpu(1), 2, 1, 8, 8);
      assertArrayEquals(new long[] {2, 8}, cnn.forward(img).shape());
      Sequential withEmbedding = Sequential.builder(ctx).embedding(5, 2).batchNorm1d(2).build();
      assertEquals(2, withEmbedding.forward(Tensor.of(ctx, new long[] {1, 4}, 2)).ndim());
      Sequential appended = Sequential.create(ctx);
      try (Module layer = Module.linear(ctx, 2, 2)) {
        Sequential.builder(ctx).add(layer);
        appended.append(layer);
      }
      assertEquals(2, appended.parameterCount()); // the Sequential keeps the closed layer alive
    }
  }

  @Test
  void modesDevicesGradientsAndFiles(@TempDir Path dir) throws Exception {
    try (Context ctx = TestSupport.context()) {
      Module m = Sequential.builder(ctx).linear(3, 2).dropout(0.2).build();
      assertTrue(m.isTraining());
      assertFalse(m.eval().isTraining());
      m.train(true);
      m.to(Device.cpu(1));
      assertEquals(Device.cpu(1), m.get("0.weight").device());
      Tensor loss = m.forward(Tensor.full(ctx, DType.FLOAT32, Device.cpu(1), 1.0, 4, 3)).sum();
      loss.backward();
      assertNotNull(m.get("0.weight").grad());
      m.zeroGrad();
      assertNull(m.get("0.weight").grad());

      Path file = dir.resolve("m.safetensors");
      m.save(file);
      assertTrue(Files.size(file) > 0);
      Module other =
          Sequential.builder(ctx).device(Device.cpu(1)).linear(3, 2).dropout(0.2).build();
      other.load(file);
      assertArrayEquals(m.get("0.weight").toFloatArray(), other.get("0.weight").toFloatArray());
      DataParallelException e =
          assertThrows(DataParallelException.class, () -> Module.linear(ctx, 4, 2).load(file));
      assertEquals(ErrorCode.FORMAT, e.errorCode());
    }
  }
}
