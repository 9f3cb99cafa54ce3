import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Random;
import java.util.zip.GZIPInputStream;
import org.dataparallel.Context;
import org.dataparallel.DataParallel;
import org.dataparallel.Device;
import org.dataparallel.DeviceType;
import org.dataparallel.GradMode;
import org.dataparallel.Module;
import org.dataparallel.Ops;
import org.dataparallel.Optimizer;
import org.dataparallel.Sequential;
import org.dataparallel.Tensor;

/**
 * Trains the MLP of the benchmark (784-512-256-10) on Fashion-MNIST for one epoch with
 * DataParallel over the CPU devices, then prints the test accuracy.
 *
 * <pre>
 *   java -cp dataparallel.jar:train-fashion-mnist.jar TrainFashionMnist \
 *       [--data DIR] [--devices N] [--batch N] [--lr X] [--limit N] [--seed N]
 * </pre>
 *
 * The data are Debian's dataset-fashion-mnist gzip'd IDX files
 * (/usr/share/datasets/fashion-mnist by default).
 */
public class TrainFashionMnist {
  private static final int PIXELS = 784;

  /** An IDX file's bytes after the header, with its dimensions. */
  record Idx(int[] dims, byte[] data) {}

  static Idx readIdx(Path path) throws IOException {
    try (InputStream raw = Files.newInputStream(path);
         DataInputStream in = new DataInputStream(new GZIPInputStream(raw, 1 << 16))) {
      int magic = in.readInt();
      if ((magic >>> 8) != 0x08) {
        throw new IOException(path + ": not an IDX file of unsigned bytes (magic "
            + Integer.toHexString(magic) + ")");
      }
      int[] dims = new int[magic & 0xff];
      long size = 1;
      for (int i = 0; i < dims.length; ++i) {
        dims[i] = in.readInt();
        size *= dims[i];
      }
      byte[] data = new byte[Math.toIntExact(size)];
      in.readFully(data);
      return new Idx(dims, data);
    }
  }

  /** Pixels / 255 as floats. */
  static float[] pixels(Idx idx) {
    float[] out = new float[idx.data().length];
    for (int i = 0; i < out.length; ++i) out[i] = (idx.data()[i] & 0xff) / 255.0f;
    return out;
  }

  static long[] labels(Idx idx) {
    long[] out = new long[idx.data().length];
    for (int i = 0; i < out.length; ++i) out[i] = idx.data()[i] & 0xff;
    return out;
  }

  public static void main(String[] args) throws IOException {
    Path data = Paths.get("/usr/share/datasets/fashion-mnist");
    int devices = 0;
    int batch = 256;
    double lr = 0.1;
    int limit = 0;
    long seed = 0;
    for (int i = 0; i < args.length; ++i) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--data" -> data = Paths.get(value);
        case "--devices" -> devices = Integer.parseInt(value);
        case "--batch" -> batch = Integer.parseInt(value);
        case "--lr" -> lr = Double.parseDouble(value);
        case "--limit" -> limit = Integer.parseInt(value);
        case "--seed" -> seed = Long.parseLong(value);
        default -> {
          System.err.println("usage: TrainFashionMnist [--data DIR] [--devices N] [--batch N] "
              + "[--lr X] [--limit N] [--seed N]");
          System.exit(2);
        }
      }
      ++i;
    }

    float[] trainX = pixels(readIdx(data.resolve("train-images-idx3-ubyte.gz")));
    long[] trainY = labels(readIdx(data.resolve("train-labels-idx1-ubyte.gz")));
    float[] testX = pixels(readIdx(data.resolve("t10k-images-idx3-ubyte.gz")));
    long[] testY = labels(readIdx(data.resolve("t10k-labels-idx1-ubyte.gz")));
    int n = limit > 0 ? Math.min(limit, trainY.length) :
          trainY.length;

          try (Context ctx =
                   Context.builder().cpuDevices(devices).loadCuda(false).seed(seed).build();
               Sequential model = Sequential.builder(ctx)
                                      .linear(PIXELS, 512)
                                      .relu()
                                      .linear(512, 256)
                                      .relu()
                                      .linear(256, 10)
                                      .build();
               DataParallel net = DataParallel.builder(model)
                                      .devices(ctx.devices(DeviceType.CPU).toArray(new Device[0]))
                                      .build();
               Optimizer opt = Optimizer.sgd(model).lr(lr).momentum(0.9).build()) {
            List<Device> used = net.devices();
            System.out.printf(
                "training the MLP on %d samples, batch %d, DataParallel over %s%n", n, batch, used);

            // A fresh permutation for the epoch; each batch is copied into one float[].
            int[] order = new int[n];
            for (int i = 0; i < n; ++i) order[i] = i;
            Random random = new Random(seed);
            for (int i = n - 1; i > 0; --i) {
              int j = random.nextInt(i + 1);
              int t = order[i];
              order[i] = order[j];
              order[j] = t;
            }
            float[] xb = new float[batch * PIXELS];
            long[] yb = new long[batch];
            long start = System.nanoTime();
            double lossSum = 0;
            int steps = 0;
            for (int first = 0; first + batch <= n; first += batch) {
              for (int k = 0; k < batch; ++k) {
                int s = order[first + k];
                System.arraycopy(trainX, s * PIXELS, xb, k * PIXELS, PIXELS);
                yb[k] = trainY[s];
              }
              try (Tensor x = Tensor.of(ctx, xb, batch, PIXELS);
                   Tensor y = Tensor.of(ctx, yb, batch); Tensor logits = net.forward(x);
                   Tensor loss = Ops.crossEntropy(logits, y)) {
                opt.zeroGrad();
                loss.backward();
                opt.step();
                lossSum += loss.item();
                ++steps;
              }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("epoch 0: mean loss %.4f, %.0f samples/s%n",
                lossSum / Math.max(steps, 1), steps * batch / seconds);

            // Test accuracy, without the graph and in evaluation mode.
            model.eval();
            long correct = 0;
            int evalBatch = 1000;
            try (GradMode.Guard g = GradMode.disabled()) {
              for (int first = 0; first < testY.length; first += evalBatch) {
                int b = Math.min(evalBatch, testY.length - first);
                float[] xs = new float[b * PIXELS];
                System.arraycopy(testX, first * PIXELS, xs, 0, b * PIXELS);
                try (Tensor x = Tensor.of(ctx, xs, b, PIXELS); Tensor logits = net.forward(x);
                     Tensor predicted = logits.argmax(1)) {
                  long[] p = predicted.toLongArray();
                  for (int k = 0; k < b; ++k) {
                    if (p[k] == testY[first + k]) ++correct;
                  }
                }
              }
            }
            System.out.printf("test accuracy %.4f%n", (double) correct / testY.length);
          }
      }
    }
