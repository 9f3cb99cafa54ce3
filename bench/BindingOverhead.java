import java.util.Arrays;
import org.dataparallel.Context;
import org.dataparallel.DataParallel;
import org.dataparallel.Device;
import org.dataparallel.GradMode;
import org.dataparallel.Module;
import org.dataparallel.Tensor;

/**
 * The Java side of bench/binding_overhead.py: one forward of the tiny model (Linear 8x8,
 * batch 8, one CPU device, grad mode off) through the binding, timed as
 * dp-binding-overhead-c times the same call from C. Each output is closed at once, as the
 * C loop releases it.
 *
 *   java -cp dataparallel.jar:binding-overhead.jar BindingOverhead [--calls N] [--repeats R]
 *
 * Prints {"impl": "java", "call": "module_forward" | "data_parallel_forward", "us_per_call": X}.
 */
public class BindingOverhead {
  interface Call {
    Tensor run();
  }

  static double measure(Call call, int calls, int repeats) {
    for (int i = 0; i < Math.max(calls, 20000); ++i) { // warm up (and let the JIT compile)
      call.run().close();
    }
    double[] runs = new double[repeats];
    for (int r = 0; r < repeats; ++r) {
      long t0 = System.nanoTime();
      for (int i = 0; i < calls; ++i) call.run().close();
      runs[r] = (System.nanoTime() - t0) / 1e3 / calls;
    }
    Arrays.sort(runs);
    return runs[repeats / 2];
  }

  public static void main(String[] args) {
    int calls = 20000;
    int repeats = 7;
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (args[i].equals("--calls")) {
        calls = Integer.parseInt(args[i + 1]);
      } else if (args[i].equals("--repeats")) {
        repeats = Integer.parseInt(args[i + 1]);
      }
    }
    try (Context ctx = Context.builder().cpuDevices(1).loadCuda(false).build();
         Module linear = Module.linear(ctx, 8, 8);
         DataParallel dp = DataParallel.builder(linear).devices(Device.cpu(0)).build();
         Tensor x = Tensor.full(ctx, 0.5, 8, 8); GradMode.Guard noGrad = GradMode.disabled()) {
      System.out.printf(
          "{\"impl\": \"java\", \"call\": \"module_forward\", \"us_per_call\": %.3f}%n",
          measure(() -> linear.forward(x), calls, repeats));
      System.out.printf(
          "{\"impl\": \"java\", \"call\": \"data_parallel_forward\", \"us_per_call\": %.3f}%n",
          measure(() -> dp.forward(x), calls, repeats));
    }
  }
}
