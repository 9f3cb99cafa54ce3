package org.dataparallel;

import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_module;

/**
 * Modules run in order; children are named "0", "1", ... Build one with {@link #builder}:
 *
 * <pre>{@code
 * Module mlp = Sequential.builder(ctx).linear(784, 512).relu().linear(512, 10).build();
 * }</pre>
 */
public final class Sequential extends Module {
  private Sequential(dp_module handle) { super(handle); }

  /** An empty Sequential. */
  public static Sequential create(Context ctx) {
    return new Sequential(CApi.dp_module_sequential(Context.nativeOf(ctx)));
  }

  /** Appends a child (the Sequential keeps its own reference). Returns this. */
  public Sequential append(Module child) {
    CApi.dp_module_append(handle(), of(child, "child"));
    return this;
  }

  public static Builder builder(Context ctx) { return new Builder(ctx); }

  /** Adds layers in order; layers with parameters go on {@link #device} (default cpu:0). */
  public static final class Builder {
    private final Context ctx;
    private final Sequential sequential;
    private Device device = Device.cpu(0);

    private Builder(Context ctx) {
      this.ctx = ctx;
      this.sequential = create(ctx);
    }

    /** The device of the layers added after this call. */
    public Builder device(Device device) {
      this.device = java.util.Objects.requireNonNull(device, "device");
      return this;
    }

    /** Appends a module (the Sequential keeps its own reference; close yours when done). */
    public Builder add(Module module) {
      sequential.append(java.util.Objects.requireNonNull(module, "module"));
      return this;
    }

    private Builder own(Module module) {
      try (module) {
        sequential.append(module);
      }
      return this;
    }

    public Builder linear(long in, long out) {
      return own(Module.linear(ctx, in, out, true, device));
    }

    public Builder linear(long in, long out, boolean bias) {
      return own(Module.linear(ctx, in, out, bias, device));
    }

    public Builder conv2d(long in, long out, int kernel, int stride, int padding) {
      return own(Module.conv2d(ctx, in, out, kernel, stride, padding, true, device));
    }

    public Builder relu() { return own(Module.relu(ctx)); }

    public Builder gelu() { return own(Module.gelu(ctx)); }

    public Builder tanh() { return own(Module.tanh(ctx)); }

    public Builder sigmoid() { return own(Module.sigmoid(ctx)); }

    public Builder dropout(double p) { return own(Module.dropout(ctx, p)); }

    public Builder batchNorm1d(long features) {
      return own(Module.batchNorm(ctx, 1, features, 1e-5, 0.1, device));
    }

    public Builder batchNorm2d(long features) {
      return own(Module.batchNorm(ctx, 2, features, 1e-5, 0.1, device));
    }

    /** Max pooling, stride = kernel, no padding. */
    public Builder maxPool2d(int kernel) { return own(Module.maxPool2d(ctx, kernel, kernel, 0)); }

    /** Average pooling, stride = kernel, no padding. */
    public Builder avgPool2d(int kernel) { return own(Module.avgPool2d(ctx, kernel, kernel, 0)); }

    /** Flattens all but the batch dimension. */
    public Builder flatten() { return own(Module.flatten(ctx, 1, -1)); }

    public Builder embedding(long num, long dim) {
      return own(Module.embedding(ctx, num, dim, device));
    }

    public Sequential build() { return sequential; }
  }
}
