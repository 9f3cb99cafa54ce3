// The installed jar, run from outside the build tree: a forward and a backward through
// DataParallel over two CPU devices. check_install.sh runs it with `java -cp JAR`.
import org.dataparallel.*;

public class Consumer {
  public static void main(String[] args) {
    try (Context ctx = Context.builder().cpuDevices(2).build();
        Sequential model = Sequential.builder(ctx).linear(4, 3).build();
        DataParallel net = DataParallel.builder(model).devices(Device.cpu(0), Device.cpu(1)).build();
        Tensor x = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6, 7, 8}, 2, 4);
        Tensor y = Tensor.of(ctx, new long[] {0, 2}, 2);
        Tensor logits = net.forward(x);
        Tensor loss = Ops.crossEntropy(logits, y)) {
      loss.backward();
      double value = loss.item();
      if (!(value > 0) || Double.isInfinite(value)) throw new AssertionError("loss " + value);
      System.out.println("installed jar: OK (loss " + value + ")");
    }
  }
}
