package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class OpsTest {
  @Test
  void multiTensorOps() {
    try (Context ctx = TestSupport.context()) {
      Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 4}, 2, 2);
      Tensor w = Tensor.of(ctx, new float[] {1, 0, 0, 1, 1, 1}, 3, 2);
      Tensor b = Tensor.of(ctx, new float[] {0, 0, 10}, 3);
      assertArrayEquals(new float[] {1, 2, 13, 3, 4, 17}, Ops.linear(x, w, b).toFloatArray());
      assertArrayEquals(new float[] {1, 2, 3, 3, 4, 7}, Ops.linear(x, w, null).toFloatArray());

      Tensor img = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, 1, 1, 3, 3);
      Tensor k = Tensor.full(ctx, 1.0, 1, 1, 2, 2);
      assertArrayEquals(
          new float[] {12, 16, 24, 28}, Ops.conv2d(img, k, null, 1, 0).toFloatArray());
      assertArrayEquals(new float[] {5}, Ops.maxPool2d(img, 2, 2, 0).toFloatArray());
      assertArrayEquals(new float[] {3}, Ops.avgPool2d(img, 2, 2, 0).toFloatArray());

      Tensor bnIn = Tensor.of(ctx, new float[] {1, 3, 1, 3}, 2, 2);
      Tensor mean = Tensor.zeros(ctx, 2);
      Tensor var = Tensor.full(ctx, 1.0, 2);
      Tensor bn = Ops.batchNorm(bnIn, mean, var, null, null, true, 0.1, 1e-5);
      TestSupport.assertClose(new float[] {0, 0, 0, 0}, bn.toFloatArray(), 1e-5);
      TestSupport.assertClose(new float[] {0.1f, 0.3f}, mean.toFloatArray(), 1e-6);

      float[] dropped = Ops.dropout(Tensor.full(ctx, 1.0, 1000), 0.5, true, 7).toFloatArray();
      int zeros = 0;
      for (float v : dropped) {
        assertTrue(v == 0 || v == 2);
        if (v == 0) ++zeros;
      }
      assertTrue(zeros > 400 && zeros < 600);

      Tensor table = Tensor.of(ctx, new float[] {0, 0, 1, 1, 2, 2}, 3, 2);
      assertArrayEquals(new float[] {2, 2, 1, 1},
          Ops.embedding(Tensor.of(ctx, new long[] {2, 1}, 2), table).toFloatArray());

      Tensor logits = Tensor.of(ctx, new float[] {0, 0, 0, 0}, 2, 2);
      Tensor target = Tensor.of(ctx, new long[] {0, 1}, 2);
      // 1e-5: the library's float32 log is a few ulps off (reported separately).
      assertEquals(Math.log(2), Ops.crossEntropy(logits, target).item(), 1e-5);
      assertEquals(Math.log(2), Ops.nllLoss(logits.logSoftmax(1), target).item(), 1e-5);
      assertEquals(7.5, Ops.mseLoss(x, Tensor.zeros(ctx, 2, 2)).item(), 1e-6);
      assertArrayEquals(new long[] {4, 2}, Ops.cat(0, x, x).shape());
    }
  }
}
