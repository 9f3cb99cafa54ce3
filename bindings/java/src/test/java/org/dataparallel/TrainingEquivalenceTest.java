package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Trains a small problem through the binding and compares with the same training done by
 * a C program through the C API alone (src/test/c/train_equivalence.c, whose path ctest
 * passes in DP_TRAIN_EQUIVALENCE): same weights (the same formula in both languages),
 * same data, MLP 6-8-3, SGD with momentum, four steps of DataParallel over two CPU devices.
 */
class TrainingEquivalenceTest {
  static float weightValue(long i, long salt) {
    return (float) ((((i * 37 + 11 + salt) % 101) / 101.0 - 0.5) * 0.5);
  }

  static float inputValue(long i) { return (float) ((((i * 53 + 7) % 97) / 97.0) - 0.5); }

  static void set(Module m, String name, int count, long salt) {
    float[] v = new float[count];
    for (int i = 0; i < count; ++i) v[i] = weightValue(i, salt);
    try (Tensor t = m.get(name)) {
      t.copyFrom(v);
    }
  }

  /** What the C program printed: losses per step and parameters by name. */
  record Run(List<Double> losses, Map<String, float[]> params) {}

  static Run runC() throws Exception {
    String program = System.getenv("DP_TRAIN_EQUIVALENCE");
    assertNotNull(program, "DP_TRAIN_EQUIVALENCE must name the C program (ctest sets it)");
    Process p = new ProcessBuilder(program).redirectErrorStream(true).start();
    List<Double> losses = new ArrayList<>();
    Map<String, float[]> params = new LinkedHashMap<>();
    try (BufferedReader r = new BufferedReader(
             new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null;) {
        String[] f = line.trim().split(" ");
        if (f[0].equals("loss")) {
          losses.add(Double.parseDouble(f[2]));
        } else if (f[0].equals("param")) {
          float[] v = new float[f.length - 2];
          for (int i = 0; i < v.length; ++i) v[i] = Float.parseFloat(f[i + 2]);
          params.put(f[1], v);
        } else {
          throw new AssertionError("unexpected output of the C program: " + line);
        }
      }
    }
    assertEquals(0, p.waitFor(), "the C program failed");
    return new Run(losses, params);
  }

  static Run runJava() {
    try (Context ctx = Context.builder().cpuDevices(2).loadCuda(false).build();
         Sequential model = Sequential.builder(ctx).linear(6, 8).relu().linear(8, 3).build()) {
      set(model, "0.weight", 8 * 6, 0);
      set(model, "0.bias", 8, 1);
      set(model, "2.weight", 3 * 8, 2);
      set(model, "2.bias", 3, 3);
      float[] x = new float[12 * 6];
      long[] y = new long[12];
      for (int i = 0; i < x.length; ++i) x[i] = inputValue(i);
      for (int n = 0; n < y.length; ++n) y[n] = (n * 7 + 3) % 3;
      List<Double> losses = new ArrayList<>();
      try (DataParallel dp =
               DataParallel.builder(model).devices(Device.cpu(0), Device.cpu(1)).build();
           Optimizer opt = Optimizer.sgd(model).lr(0.1).momentum(0.9).build();
           Tensor xt = Tensor.of(ctx, x, 12, 6); Tensor yt = Tensor.of(ctx, y, 12)) {
        for (int step = 0; step < 4; ++step) {
          opt.zeroGrad();
          try (Tensor logits = dp.forward(xt); Tensor loss = Ops.crossEntropy(logits, yt)) {
            loss.backward();
            opt.step();
            losses.add((double) (float) loss.item());
          }
        }
      }
      Map<String, float[]> params = new LinkedHashMap<>();
      model.namedParameters().forEach((name, t) -> params.put(name, t.toFloatArray()));
      return new Run(losses, params);
    }
  }

  @Test
  void javaTrainingMatchesTheCApi() throws Exception {
    Run c = runC();
    Run java = runJava();
    assertEquals(4, c.losses().size());
    assertEquals(c.params().keySet(), java.params().keySet());
    for (int i = 0; i < 4; ++i) {
      assertEquals(
          c.losses().get(i), java.losses().get(i), 1e-6 * Math.abs(c.losses().get(i)), "loss " + i);
    }
    assertTrue(c.losses().get(3) < c.losses().get(0), "the problem trains");
    for (String name : c.params().keySet()) {
      TestSupport.assertClose(c.params().get(name), java.params().get(name), 1e-6);
    }
  }
}
