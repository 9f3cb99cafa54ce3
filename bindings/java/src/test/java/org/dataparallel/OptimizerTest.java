package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class OptimizerTest {
  @Test
  void sgdStepIsWeightMinusLrTimesGradient() {
    try (Context ctx = TestSupport.context(); Module m = Module.linear(ctx, 2, 1)) {
      m.get("weight").copyFrom(new float[] {1, 2});
      m.get("bias").copyFrom(new float[] {0});
      try (Optimizer opt = Optimizer.sgd(m).lr(0.5).build()) {
        m.forward(Tensor.of(ctx, new float[] {3, 4}, 1, 2)).sum().backward(); // dW = x
        opt.step();
        TestSupport.assertClose(
            new float[] {1 - 1.5f, 2 - 2f}, m.get("weight").toFloatArray(), 1e-6);
        assertEquals(0.5, opt.lr());
        opt.setLr(0.25);
        assertEquals(0.25, opt.lr());
        opt.zeroGrad();
        assertEquals(null, m.get("weight").grad());
      }
    }
  }

  @Test
  void everyBuilderMakesAWorkingOptimizer() {
    try (Context ctx = TestSupport.context()) {
      Optimizer[] opts;
      Module m = Module.linear(ctx, 3, 2);
      opts = new Optimizer[] {
          Optimizer.sgd(m)
              .lr(0.1)
              .momentum(0.9)
              .dampening(0.1)
              .weightDecay(1e-4)
              .nesterov(false)
              .build(),
          Optimizer.sgd(m).momentum(0.9).nesterov(true).build(),
          Optimizer.adam(m).lr(0.01).betas(0.8, 0.99).eps(1e-7).weightDecay(0.01).build(),
          Optimizer.adamW(m).lr(0.01).build(),
      };
      assertEquals(1e-3, Optimizer.adamW(m).build().lr(), 1e-12);
      for (Optimizer opt : opts) {
        float before = m.get("weight").toFloatArray()[0];
        opt.zeroGrad();
        m.forward(Tensor.full(ctx, 1.0, 2, 3)).sum().backward();
        opt.step();
        assertNotEquals(before, m.get("weight").toFloatArray()[0]);
        opt.close();
      }
    }
  }
}
