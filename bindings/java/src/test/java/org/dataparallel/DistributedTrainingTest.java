package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * ProcessGroup and DistributedDataParallel as a job of 2 ranks: ctest runs the JUnit console
 * on this class under {@code mpirun -np 2} (elsewhere, as in the java_junit run, it skips).
 * Both ranks run the tests in the same order, so their collectives match; a rank whose
 * test fails ends its process at once, without finalising MPI, which makes the launcher
 * end the job.
 *
 * <p>The bound: DDP over 2 ranks and one process on the whole global batch compute the
 * same float32 arithmetic in different orders, so their parameters (O(0.1 .. 1)) differ by
 * rounding only: within BOUND = 1e-6 after the steps below (measured: at most 3e-8), while
 * one step with a gradient summed instead of averaged, or one rank's gradient alone, moves
 * them by more than 1e-2.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@ExtendWith(DistributedTrainingTest.EndJobOnFailure.class)
class DistributedTrainingTest {
  static final double BOUND = 1e-6;
  static final int IN = 12;
  static final int HIDDEN = 16;
  static final int CLASSES = 4;
  static final int RANK_ROWS = 4;

  private Context ctx;
  private ProcessGroup group;

  /** Ends the process on a failure without finalising MPI: the launcher ends the job. */
  static final class EndJobOnFailure implements TestWatcher {
    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
      System.out.flush();
      String rank = System.getenv("OMPI_COMM_WORLD_RANK");
      if (rank == null) rank = System.getenv("PMI_RANK");
      System.err.println(
          "rank " + rank + ": " + context.getDisplayName() + " failed; ending the job");
      cause.printStackTrace();
      System.err.flush();
      Runtime.getRuntime().halt(1);
    }
  }

  @BeforeAll
  void startGroup() {
    String ranks = System.getenv("OMPI_COMM_WORLD_SIZE");
    if (ranks == null) ranks = System.getenv("PMI_SIZE");
    Assumptions.assumeTrue("2".equals(ranks), "needs a job of 2 ranks (mpirun -np 2)");
    ctx = Context.builder().cpuDevices(2).loadCuda(false).seed(0).build();
    group = ProcessGroup.fromMpi(ctx);
  }

  @AfterAll
  void endGroup() {
    if (group != null) group.close(); // the last group: MPI is finalised
    if (ctx != null) ctx.close();
  }

  static Sequential mlp(Context ctx) {
    return Sequential.builder(ctx).linear(IN, HIDDEN).relu().linear(HIDDEN, CLASSES).build();
  }

  /** Step s's global batch of `rows` rows: the same on every rank. */
  record Batch(float[] x, long[] y, int rows) {
    static Batch global(int step, int rows) {
      Random r = new Random(1000 + step);
      float[] x = new float[rows * IN];
      long[] y = new long[rows];
      for (int i = 0; i < x.length; ++i) x[i] = (float) r.nextGaussian();
      for (int i = 0; i < rows; ++i) y[i] = r.nextInt(CLASSES);
      return new Batch(x, y, rows);
    }

    /** Rank `rank`'s RANK_ROWS rows, from row `first` on. */
    Batch rowsOf(int rank, int first) {
      int lo = first + rank * RANK_ROWS;
      return new Batch(Arrays.copyOfRange(x, lo * IN, (lo + RANK_ROWS) * IN),
          Arrays.copyOfRange(y, lo, lo + RANK_ROWS), RANK_ROWS);
    }

    Tensor input(Context ctx) {
      return Tensor.of(ctx, x, rows, IN);
    }

    Tensor labels(Context ctx) {
      return Tensor.of(ctx, y, rows);
    }
  }

  interface Forward {
    Tensor apply(Tensor x);
  }

  /** loss = cross_entropy(forward(x), y) * scale; backward (gradients accumulate). */
  static void backward(Context ctx, Forward f, Batch b, double scale) {
    Tensor loss = Ops.crossEntropy(f.apply(b.input(ctx)), b.labels(ctx));
    if (scale != 1.0) loss = loss.mul(scale);
    loss.backward();
  }

  static void step(Context ctx, Optimizer opt, Forward f, Batch b) {
    opt.zeroGrad();
    backward(ctx, f, b, 1.0);
    opt.step();
  }

  static Optimizer sgd(Module m) { return Optimizer.sgd(m).lr(0.1).momentum(0.9).build(); }

  static void copyState(Module from, Module to) {
    Map<String, Tensor> dst = to.namedParameters();
    from.namedParameters().forEach((name, t) -> dst.get(name).copyFrom(t.toFloatArray()));
  }

  static float[] flat(List<Tensor> tensors) {
    int n = 0;
    for (Tensor t : tensors) n += (int) t.numel();
    float[] all = new float[n];
    int at = 0;
    for (Tensor t : tensors) {
      float[] v = t.toFloatArray();
      System.arraycopy(v, 0, all, at, v.length);
      at += v.length;
    }
    return all;
  }

  static List<Tensor> grads(Module m) { return m.parameters().stream().map(Tensor::grad).toList(); }

  static double maxDiff(float[] a, float[] b) {
    assertEquals(a.length, b.length);
    double m = 0;
    for (int i = 0; i < a.length; ++i) m = Math.max(m, Math.abs((double) a[i] - b[i]));
    return m;
  }

  /** Every rank's `values`, row by row, through the group's allgather. */
  float[][] everyRank(float[] values) {
    float[] all = group.allgather(Tensor.of(ctx, values, values.length)).toFloatArray();
    float[][] rows = new float[group.size()][];
    for (int r = 0; r < rows.length; ++r) {
      rows[r] = Arrays.copyOfRange(all, r * values.length, (r + 1) * values.length);
    }
    return rows;
  }

  @Test
  @Order(1)
  void collectivesMatchHandComputedValues() {
    int r = group.rank();
    assertEquals(2, group.size());
    assertEquals(r, group.localRank());
    assertEquals(2, group.localSize());
    double[][] want = {{3, 6}, {1.5, 3}, {2, 4}, {1, 2}};
    ReduceOp[] ops = ReduceOp.values();
    for (int k = 0; k < ops.length; ++k) {
      Tensor t = Tensor.of(ctx, new double[] {r + 1, 2 * (r + 1)}, 2);
      assertSame(t, group.allreduce(t, ops[k]));
      assertArrayEquals(want[k], t.toDoubleArray(), ops[k].toString());
    }
    Tensor t = Tensor.of(ctx, new long[] {10L * r, 10L * r + 1}, 2);
    group.broadcast(t, 1);
    assertArrayEquals(new long[] {10, 11}, t.toLongArray());
    Tensor all = group.allgather(Tensor.of(ctx, new long[] {r, 100 + r}, 1, 2));
    assertArrayEquals(new long[] {2, 2}, all.shape());
    assertArrayEquals(new long[] {0, 100, 1, 101}, all.toLongArray());
    group.barrier();
    assertEquals("ProcessGroup(rank=" + r + ", size=2)", group.toString());
  }

  @Test
  @Order(2)
  void twoRankTrainingEqualsOneProcessOnTheGlobalBatch() {
    try (Sequential model = mlp(ctx); Sequential ref = mlp(ctx);
         DistributedDataParallel ddp = DistributedDataParallel.builder(model, group)
                                           .devices(Device.cpu(0), Device.cpu(1))
                                           .bucketBytes(512)
                                           .firstBucketBytes(64)
                                           .build();
         Optimizer opt = sgd(model); Optimizer refOpt = sgd(ref)) {
      assertTrue(ddp.bucketCount() >= 2, "several buckets: " + ddp.bucketCount());
      assertEquals(List.of(Device.cpu(0), Device.cpu(1)), ddp.devices());
      assertSame(model, ddp.module());
      assertSame(group, ddp.group());
      copyState(model, ref); // rank 0's weights, which DDP broadcast
      float[] start = flat(model.parameters());
      for (int s = 0; s < 5; ++s) {
        Batch b = Batch.global(s, 2 * RANK_ROWS);
        step(ctx, opt, ddp::forward, b.rowsOf(group.rank(), 0));
        step(ctx, refOpt, ref::forward, b);
      }
      float[] mine = flat(model.parameters());
      double diff = maxDiff(mine, flat(ref.parameters()));
      System.out.println(String.format(
          "rank %d: max |DDP - one process| = %.3g after 5 steps", group.rank(), diff));
      assertTrue(diff <= BOUND, "rank " + group.rank() + ": DDP differs by " + diff);
      assertTrue(maxDiff(mine, start) > 1e-2, "the training moved the parameters");
      float[][] both = everyRank(mine);
      assertArrayEquals(both[0], both[1], "every rank took the same steps");
    }
  }

  @Test
  @Order(3)
  void noSyncAccumulationEqualsOneStepOnTheKFoldBatch() {
    final int k = 3;
    try (Sequential model = mlp(ctx); Sequential ref = mlp(ctx);
         DistributedDataParallel ddp = DistributedDataParallel.builder(model, group).build();
         Optimizer opt = sgd(model); Optimizer refOpt = sgd(ref)) {
      copyState(model, ref);
      Batch b = Batch.global(10, k * 2 * RANK_ROWS);
      opt.zeroGrad();
      try (DistributedDataParallel.NoSync s = ddp.noSync()) {
        assertFalse(ddp.gradSync());
        for (int i = 0; i < k - 1; ++i) {
          backward(ctx, ddp::forward, b.rowsOf(group.rank(), i * 2 * RANK_ROWS), 1.0 / k);
          DistributedDataParallel.StepTimes last = ddp.stats().last();
          assertEquals(0.0, last.allreduce(), "a no_sync step allreduces nothing");
          assertEquals(0.0, last.syncWait());
          assertTrue(last.local().apply() > 0);
        }
        float[][] local = everyRank(flat(grads(model)));
        assertTrue(maxDiff(local[0], local[1]) > 1e-3, "each rank's own gradients");
      }
      assertTrue(ddp.gradSync());
      backward(ctx, ddp::forward, b.rowsOf(group.rank(), (k - 1) * 2 * RANK_ROWS), 1.0 / k);
      DistributedDataParallel.Stats stats = ddp.stats();
      assertTrue(stats.last().allreduce() > 0, "the synced step allreduces");
      assertEquals(k, stats.calls());
      assertEquals(stats.last().allreduce(), stats.total().allreduce(), 0.0);
      ddp.resetStats();
      assertEquals(0, ddp.stats().calls());
      opt.step();
      step(ctx, refOpt, ref::forward, b);
      double diff = maxDiff(flat(model.parameters()), flat(ref.parameters()));
      System.out.println(String.format(
          "rank %d: max |no_sync accumulation - one step| = %.3g", group.rank(), diff));
      assertTrue(diff <= BOUND, "rank " + group.rank() + ": accumulation differs by " + diff);
    }
  }

  @Test
  @Order(4)
  void joinTrainsUnevenInputsAsZeroGradientsOfTheRankThatRanOut() {
    // Rank 0 has 3 batches, rank 1 has 2: the third step averages rank 0's gradient with
    // rank 1's zeros (half of rank 0's), and both ranks end with rank 0's parameters.
    try (Sequential model = mlp(ctx); Sequential ref = mlp(ctx);
         DistributedDataParallel ddp = DistributedDataParallel.builder(model, group).build();
         Optimizer opt = sgd(model); Optimizer refOpt = sgd(ref)) {
      copyState(model, ref);
      ddp.setUnevenInputs(true);
      for (int s = 0; s < (group.rank() == 0 ? 3 : 2); ++s) {
        step(ctx, opt, ddp::forward, Batch.global(20 + s, 2 * RANK_ROWS).rowsOf(group.rank(), 0));
      }
      ddp.join();
      ddp.setUnevenInputs(false);
      for (int s = 0; s < 3; ++s) {
        Batch b = Batch.global(20 + s, 2 * RANK_ROWS);
        refOpt.zeroGrad();
        backward(ctx, ref::forward, s < 2 ? b : b.rowsOf(0, 0), s < 2 ? 1.0 : 0.5);
        refOpt.step();
      }
      double diff = maxDiff(flat(model.parameters()), flat(ref.parameters()));
      assertTrue(diff <= BOUND, "rank " + group.rank() + ": join's training differs by " + diff);
    }
  }

  @Test
  @Order(5)
  void badArgumentsThrowNamingTheValue() {
    try (Sequential model = mlp(ctx)) {
      Tensor t = Tensor.of(ctx, new float[] {1, 2}, 2);
      DataParallelException e =
          assertThrows(DataParallelException.class, () -> group.broadcast(t, 2));
      assertEquals(ErrorCode.OUT_OF_RANGE, e.errorCode());
      assertTrue(e.getMessage().contains("root"), e.getMessage());
      e = assertThrows(DataParallelException.class,
          () -> group.allreduce(Tensor.of(ctx, new long[] {1}, 1), ReduceOp.AVERAGE));
      assertEquals(ErrorCode.DTYPE_MISMATCH, e.errorCode());
      assertThrows(NullPointerException.class, () -> group.allreduce(null));
      assertThrows(NullPointerException.class, () -> group.allreduce(t, null));
      IllegalArgumentException bad =
          assertThrows(IllegalArgumentException.class, () -> ProcessGroup.fromMpi(ctx, -1));
      assertTrue(bad.getMessage().startsWith("timeoutSeconds = -1.0"), bad.getMessage());
      bad = assertThrows(IllegalArgumentException.class,
          () -> DistributedDataParallel.builder(model, group).bucketBytes(0));
      assertEquals("bucketBytes = 0: must be > 0", bad.getMessage());
      assertThrows(NullPointerException.class, () -> DistributedDataParallel.builder(model, null));
      DistributedDataParallel ddp = DistributedDataParallel.builder(model, group).build();
      e = assertThrows(DataParallelException.class, ddp::join);
      assertEquals(ErrorCode.STATE, e.errorCode()); // uneven inputs are off
      ddp.close();
      e = assertThrows(DataParallelException.class, () -> ddp.forward(t));
      assertEquals("DistributedDataParallel is closed", e.getMessage());
    }
  }

  /** Model's gradients, flattened, after one backward of f's mean loss on b. */
  float[] gradsAfterOneBackward(Module model, Forward f, Batch b) {
    model.zeroGrad();
    backward(ctx, f, b, 1.0);
    return flat(grads(model));
  }

  /**
   * The gradients of one backward of b through a DDP over a copy of first, built by
   * configure for FLOAT32 and then for BFLOAT16; ref gets rank 0's weights, which the
   * first DDP broadcast.
   */
  float[][] gradsForEachDtype(Batch b, Sequential first, Sequential ref,
      BiFunction<DistributedDataParallel.Builder, DType, DistributedDataParallel.Builder>
          configure) {
    DType[] dtypes = {DType.FLOAT32, DType.BFLOAT16};
    float[][] g = new float[dtypes.length][];
    for (int i = 0; i < dtypes.length; ++i) {
      try (Sequential model = mlp(ctx)) {
        copyState(first, model);
        DistributedDataParallel.Builder builder = DistributedDataParallel.builder(model, group);
        try (DistributedDataParallel ddp = configure.apply(builder, dtypes[i]).build()) {
          g[i] = gradsAfterOneBackward(model, ddp::forward, b);
          if (i == 0) copyState(model, ref);
        }
      }
    }
    return g;
  }

  /** Rows [lo, hi) of b. */
  static Batch rows(Batch b, int lo, int hi) {
    return new Batch(Arrays.copyOfRange(b.x(), lo * IN, hi * IN),
        Arrays.copyOfRange(b.y(), lo, hi), hi - lo);
  }

  @Test
  @Order(6)
  void bfloat16GradReduceInsideDdpStaysWithinTheBf16BoundOfFloat32() {
    // 2 ranks x 2 CPU devices: each rank sums its replicas' gradients g0 + g1 in bfloat16,
    // within 2^-8 (|g0| + |g1|) of float32 (dp_data_parallel_options, n = 2); the ranks
    // average in float32, so the result is within the mean of the ranks' bounds (+ 1e-6
    // for float32 rounding) of the float32 run's, and differs from it.
    Batch b = Batch.global(60, 2 * RANK_ROWS).rowsOf(group.rank(), 0);
    try (Sequential first = mlp(ctx); Sequential ref = mlp(ctx)) {
      float[][] g = gradsForEachDtype(b, first, ref,
          (builder, dtype)
              -> builder.devices(Device.cpu(0), Device.cpu(1)).gradReduceDtype(dtype));
      float[] magnitude = new float[g[0].length];
      for (int lo = 0; lo < RANK_ROWS; lo += RANK_ROWS / 2) {
        ref.zeroGrad();
        backward(ctx, ref::forward, rows(b, lo, lo + RANK_ROWS / 2), 0.5);
        float[] part = flat(grads(ref));
        for (int j = 0; j < part.length; ++j) magnitude[j] += Math.abs(part[j]);
      }
      float[][] both = everyRank(magnitude);
      double worst = 0;
      for (int j = 0; j < magnitude.length; ++j) {
        double bound = Math.pow(2, -8) * (both[0][j] + both[1][j]) / 2 + 1e-6;
        double diff = Math.abs((double) g[1][j] - g[0][j]);
        assertTrue(diff <= bound, "rank " + group.rank() + ": gradient " + j + " differs by "
            + diff + ", past the bound " + bound);
        worst = Math.max(worst, diff);
      }
      assertTrue(worst > 0, "bfloat16 gave exactly the float32 gradients: the option was lost");
      float[][] averaged = everyRank(g[1]);
      assertArrayEquals(averaged[0], averaged[1], "still averaged over the ranks");
    }
  }

  @Test
  @Order(7)
  void bfloat16AllreduceGivesBfloat16AveragesWithinTheBoundOfFloat32() {
    // allreduceDtype(BFLOAT16): each averaged gradient travelled as bfloat16 (its float32
    // bits end in 16 zeros), every rank has the same, and each lies within
    // ranks * (1.01 * 2^-8 + 2^-24) * mean_r |g_r| of the float32 average (the bfloat16
    // roundings, 1.01 for their second order, and the float32 average's own), g_r being
    // rank r's own gradient (a plain copy of the model on the rank's rows).
    Batch b = Batch.global(61, 2 * RANK_ROWS).rowsOf(group.rank(), 0);
    try (Sequential first = mlp(ctx); Sequential ref = mlp(ctx)) {
      float[][] g = gradsForEachDtype(b, first, ref,
          (builder, dtype)
              -> builder.devices(Device.cpu(0)).firstBucketBytes(64).allreduceDtype(dtype));
      float[] own = gradsAfterOneBackward(ref, ref::forward, b);
      for (int j = 0; j < own.length; ++j) own[j] = Math.abs(own[j]);
      float[][] magnitudes = everyRank(own);
      for (int j = 0; j < own.length; ++j) {
        assertEquals(0, Float.floatToRawIntBits(g[1][j]) & 0xffff, "not a bfloat16 value: " + j);
        double mean = 0;
        for (float[] m : magnitudes) mean += m[j] / magnitudes.length;
        double bound = group.size() * (1.01 * Math.pow(2, -8) + Math.pow(2, -24)) * mean;
        double diff = Math.abs((double) g[1][j] - g[0][j]);
        assertTrue(diff <= bound, "rank " + group.rank() + ": gradient " + j + " differs by "
            + diff + ", past the bound " + bound);
      }
      float[][] averaged = everyRank(g[1]);
      assertArrayEquals(averaged[0], averaged[averaged.length - 1], "the same on every rank");
    }
  }

  @Test
  @Order(8)
  void chunkSizesReachEachRankDataParallelAndKeepTheAveragedGradients() {
    // Uneven chunks {1, 3} of the rank's 4 rows give the averaged gradients of equal ones
    // within float32 rounding; chunks that do not add up to the batch fail at the forward
    // (so the sizes did reach the rank's DataParallel).
    Batch b = Batch.global(70, 2 * RANK_ROWS).rowsOf(group.rank(), 0);
    try (Sequential first = mlp(ctx)) {
      float[][] g = new float[2][];
      long[][] sizes = {null, {1, 3}};
      for (int i = 0; i < 2; ++i) {
        try (Sequential model = mlp(ctx)) {
          copyState(first, model);
          DistributedDataParallel.Builder builder =
              DistributedDataParallel.builder(model, group).devices(Device.cpu(0), Device.cpu(1));
          if (sizes[i] != null) builder.chunkSizes(sizes[i]);
          try (DistributedDataParallel ddp = builder.build()) {
            g[i] = gradsAfterOneBackward(model, ddp::forward, b);
          }
        }
      }
      double diff = maxDiff(g[0], g[1]);
      assertTrue(diff <= BOUND, "rank " + group.rank() + ": uneven chunks differ by " + diff);
      assertTrue(maxDiff(g[0], new float[g[0].length]) > 1e-2, "gradients that are not zeros");
      try (DistributedDataParallel ddp = DistributedDataParallel.builder(first, group)
                                             .devices(Device.cpu(0), Device.cpu(1))
                                             .chunkSizes(1, 2)
                                             .build()) {
        DataParallelException e =
            assertThrows(DataParallelException.class, () -> ddp.forward(b.input(ctx)));
        assertTrue(e.getMessage().contains("chunk_sizes"), e.getMessage());
      }
    }
  }

  @Test
  @Order(9)
  void badLocalOptionsThrowNamingTheValue() {
    try (Sequential model = mlp(ctx)) {
      IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
          () -> DistributedDataParallel.builder(model, group).broadcastBucketBytes(-1));
      assertEquals("broadcastBucketBytes = -1: must be >= 0 (0: 10 MiB)", bad.getMessage());
      assertThrows(NullPointerException.class,
          () -> DistributedDataParallel.builder(model, group).bufferSync(null));
      DataParallelException e = assertThrows(DataParallelException.class,
          () -> DistributedDataParallel.builder(model, group).gradReduceDtype(DType.INT64).build());
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.errorCode());
      assertTrue(e.getMessage().contains("options->local->grad_reduce_dtype = 2"), e.getMessage());
      e = assertThrows(DataParallelException.class,
          () -> DistributedDataParallel.builder(model, group).allreduceDtype(DType.INT64).build());
      assertTrue(e.getMessage().contains("options->allreduce_dtype = 2"), e.getMessage());
      e = assertThrows(DataParallelException.class,
          () -> DistributedDataParallel.builder(model, group)
                    .devices(Device.cpu(0), Device.cpu(1))
                    .chunkSizes(1, 1, 2)
                    .build());
      assertTrue(e.getMessage().contains("chunk_sizes has 3 entries but there are 2 devices"),
          e.getMessage());
      e = assertThrows(DataParallelException.class,
          () -> DistributedDataParallel.builder(model, group)
                    .devices(Device.cpu(0), Device.cpu(1))
                    .chunkSizes(-1, 5)
                    .build());
      assertTrue(e.getMessage().contains("chunk_sizes[0] = -1 is negative"), e.getMessage());
    }
  }

  @Test
  @Order(10)
  void fromMpiCommBuildsGroupsOverTheWorldAndSelfHandles() {
    // Java has no MPI binding to call MPI_Comm_c2f with: the handles are Open MPI's
    // mpif.h constants (MPI_COMM_WORLD = 0, MPI_COMM_SELF = 1, MPI_COMM_NULL = 2). MPI is
    // initialised: this class's fromMpi group started it.
    Assumptions.assumeTrue(System.getenv("OMPI_COMM_WORLD_SIZE") != null,
        "Open MPI's Fortran handles");
    try (ProcessGroup world = ProcessGroup.fromMpiComm(ctx, 0, 60)) {
      assertEquals(2, world.size());
      assertEquals(group.rank(), world.rank());
      Tensor t = Tensor.of(ctx, new float[] {world.rank() + 1.0f}, 1);
      assertArrayEquals(new float[] {3}, world.allreduce(t).toFloatArray());
    }
    try (ProcessGroup self = ProcessGroup.fromMpiComm(ctx, 1)) {
      assertEquals(1, self.size());
      assertEquals(0, self.rank());
    }
    DataParallelException e =
        assertThrows(DataParallelException.class, () -> ProcessGroup.fromMpiComm(ctx, 2));
    assertEquals(ErrorCode.BACKEND, e.errorCode());
    assertTrue(e.getMessage().contains("the communicator passed in is null"), e.getMessage());
    for (long invalid : new long[] {1L << 40, -1}) {
      e = assertThrows(DataParallelException.class, () -> ProcessGroup.fromMpiComm(ctx, invalid));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.errorCode());
      assertEquals("fortran_comm = " + invalid + " is not a Fortran communicator handle",
          e.getMessage());
    }
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
        () -> ProcessGroup.fromMpiComm(ctx, 0, Double.NaN));
    assertTrue(bad.getMessage().startsWith("timeoutSeconds = NaN"), bad.getMessage());
    assertThrows(NullPointerException.class, () -> ProcessGroup.fromMpiComm(null, 0));
  }
}
