package org.dataparallel;

import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_adam_options;
import org.dataparallel.swig.dp_module;
import org.dataparallel.swig.dp_optimizer;
import org.dataparallel.swig.dp_sgd_options;

/**
 * An optimizer over a module's parameters with PyTorch's update rules (SGD, Adam, AdamW).
 * Create it after moving the module; it keeps the parameters alive.
 *
 * <pre>{@code
 * Optimizer opt = Optimizer.sgd(model).lr(0.1).momentum(0.9).build();
 * }</pre>
 */
public final class Optimizer extends Handle<dp_optimizer> {
  private Optimizer(dp_optimizer handle) { super(handle); }

  public static SgdBuilder sgd(Module module) {
    return new SgdBuilder(java.util.Objects.requireNonNull(module, "module"));
  }

  public static AdamBuilder adam(Module module) {
    return new AdamBuilder(java.util.Objects.requireNonNull(module, "module"), false);
  }

  /** AdamW (decoupled weight decay; default 0.01). */
  public static AdamBuilder adamW(Module module) {
    return new AdamBuilder(java.util.Objects.requireNonNull(module, "module"), true);
  }

  /** One update of every parameter that has a gradient. */
  public void step() { CApi.dp_optimizer_step(handle()); }

  /** Sets every parameter's gradient to none. */
  public void zeroGrad() { CApi.dp_optimizer_zero_grad(handle()); }

  public double lr() { return CApi.dp_optimizer_lr(handle()); }

  public void setLr(double lr) { CApi.dp_optimizer_set_lr(handle(), lr); }

  /** torch.optim.SGD's options (defaults: lr 0.01, no momentum, decay or nesterov). */
  public static final class SgdBuilder {
    private final Module module;
    private final double[] values = {0.01, 0, 0, 0};
    private boolean nesterov;

    private SgdBuilder(Module module) { this.module = module; }

    public SgdBuilder lr(double v) {
      values[0] = v;
      return this;
    }

    public SgdBuilder momentum(double v) {
      values[1] = v;
      return this;
    }

    public SgdBuilder dampening(double v) {
      values[2] = v;
      return this;
    }

    public SgdBuilder weightDecay(double v) {
      values[3] = v;
      return this;
    }

    public SgdBuilder nesterov(boolean v) {
      nesterov = v;
      return this;
    }

    public Optimizer build() {
      dp_sgd_options o = new dp_sgd_options();
      try {
        o.setLr(values[0]);
        o.setMomentum(values[1]);
        o.setDampening(values[2]);
        o.setWeight_decay(values[3]);
        o.setNesterov(nesterov ? 1 : 0);
        return new Optimizer(CApi.dp_optimizer_sgd(Handle.of(module, "module"), o));
      } finally {
        o.delete();
      }
    }
  }

  /** torch.optim.Adam / AdamW options (defaults: lr 1e-3, betas 0.9/0.999, eps 1e-8). */
  public static final class AdamBuilder {
    private final Module module;
    private final boolean decoupled;
    private final dp_adam_options options;

    private AdamBuilder(Module module, boolean decoupled) {
      this.module = module;
      this.decoupled = decoupled;
      this.options = decoupled ? CApi.dp_adamw_default_options() : new dp_adam_options();
    }

    public AdamBuilder lr(double v) {
      options.setLr(v);
      return this;
    }

    public AdamBuilder betas(double beta1, double beta2) {
      options.setBeta1(beta1);
      options.setBeta2(beta2);
      return this;
    }

    public AdamBuilder eps(double v) {
      options.setEps(v);
      return this;
    }

    public AdamBuilder weightDecay(double v) {
      options.setWeight_decay(v);
      return this;
    }

    public Optimizer build() {
      dp_module m = Handle.of(module, "module");
      return new Optimizer(
          decoupled ? CApi.dp_optimizer_adamw(m, options) : CApi.dp_optimizer_adam(m, options));
    }
  }
}
