package org.dataparallel;

import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_tensor;

/**
 * The library's ops that take several tensors (the one-tensor ops are methods of
 * {@link Tensor}). Each returns a new tensor; inputs share a device and dtype; with grad
 * mode on, the result records how to backpropagate.
 */
public final class Ops {
  private Ops() {}

  /** A required tensor argument (null: a NullPointerException naming it). */
  private static dp_tensor in(Tensor t, String name) { return Handle.of(t, name); }

  /** An optional one (null passes as NULL). */
  private static dp_tensor opt(Tensor t) { return Handle.ofNullable(t); }

  /** x [..., in] @ weight[out, in]^T + bias[out] (bias may be null). */
  public static Tensor linear(Tensor x, Tensor weight, Tensor bias) {
    return new Tensor(CApi.dp_op_linear(in(x, "x"), in(weight, "weight"), opt(bias)));
  }

  /** x [N, C, H, W], weight [O, C, KH, KW], bias [O] or null -> [N, O, OH, OW]. */
  public static Tensor conv2d(Tensor x, Tensor weight, Tensor bias, int stride, int padding) {
    return new Tensor(CApi.dp_op_conv2d(
        in(x, "x"), in(weight, "weight"), opt(bias), stride, stride, padding, padding));
  }

  /** Floor mode; padding at most half the kernel. */
  public static Tensor maxPool2d(Tensor x, int kernel, int stride, int padding) {
    return new Tensor(
        CApi.dp_op_max_pool2d(in(x, "x"), kernel, kernel, stride, stride, padding, padding));
  }

  /** Floor mode; the divisor counts padding (PyTorch's default). */
  public static Tensor avgPool2d(Tensor x, int kernel, int stride, int padding) {
    return new Tensor(
        CApi.dp_op_avg_pool2d(in(x, "x"), kernel, kernel, stride, stride, padding, padding));
  }

  /** As torch.nn.functional.batch_norm (any of the [C] tensors may be null). */
  public static Tensor batchNorm(Tensor x, Tensor runningMean, Tensor runningVar, Tensor weight,
      Tensor bias, boolean training, double momentum, double eps) {
    return new Tensor(CApi.dp_op_batch_norm(in(x, "x"), opt(weight), opt(bias), opt(runningMean),
        opt(runningVar), training ? 1 : 0, momentum, eps));
  }

  /** Zeroes elements with probability p when training (the same seed, the same mask). */
  public static Tensor dropout(Tensor x, double p, boolean training, long seed) {
    return new Tensor(CApi.dp_op_dropout(in(x, "x"), p, training ? 1 : 0, seed));
  }

  /** Rows of weight [num, dim] selected by int64 indices. */
  public static Tensor embedding(Tensor indices, Tensor weight) {
    return new Tensor(CApi.dp_op_embedding(in(indices, "indices"), in(weight, "weight")));
  }

  /** Mean over N of -log_softmax(logits)[target]; logits [N, C], target [N] int64. */
  public static Tensor crossEntropy(Tensor logits, Tensor target) {
    return new Tensor(CApi.dp_op_cross_entropy(in(logits, "logits"), in(target, "target")));
  }

  public static Tensor nllLoss(Tensor logProbs, Tensor target) {
    return new Tensor(CApi.dp_op_nll_loss(in(logProbs, "logProbs"), in(target, "target")));
  }

  /** Mean of (input - target)^2. */
  public static Tensor mseLoss(Tensor input, Tensor target) {
    return new Tensor(CApi.dp_op_mse_loss(in(input, "input"), in(target, "target")));
  }

  /** Concatenates along dim onto the device of the first tensor. */
  public static Tensor cat(int dim, Tensor... tensors) {
    return new Tensor(CApi.dp_op_cat(Tensor.handles("tensors", tensors), dim));
  }
}
