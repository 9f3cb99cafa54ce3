package org.dataparallel;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_context;
import org.dataparallel.swig.dp_device;
import org.dataparallel.swig.dp_module;

/**
 * A module: a library layer (the static factories here), a {@link Sequential} of them, or
 * a replica. Parameters are created with PyTorch's initialisation and names ("weight",
 * "bias"; "0.weight" inside a Sequential).
 */
public class Module extends Handle<dp_module> {
  Module(dp_module handle) { super(handle); }

  // ---- layers ----

  /** y = x W^T + b, on cpu:0. */
  public static Module linear(Context ctx, long inFeatures, long outFeatures) {
    return linear(ctx, inFeatures, outFeatures, true, Device.cpu(0));
  }

  public static Module linear(
      Context ctx, long inFeatures, long outFeatures, boolean bias, Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      return new Module(
          CApi.dp_module_linear(Context.nativeOf(ctx), inFeatures, outFeatures, bias ? 1 : 0, d));
    } finally {
      d.delete();
    }
  }

  /** A square-kernel convolution with bias, stride 1, no padding, on cpu:0. */
  public static Module conv2d(Context ctx, long inChannels, long outChannels, int kernel) {
    return conv2d(ctx, inChannels, outChannels, kernel, 1, 0, true, Device.cpu(0));
  }

  public static Module conv2d(Context ctx, long inChannels, long outChannels, int kernel,
      int stride, int padding, boolean bias, Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      return new Module(CApi.dp_module_conv2d(Context.nativeOf(ctx), inChannels, outChannels,
          kernel, kernel, stride, stride, padding, padding, bias ? 1 : 0, d));
    } finally {
      d.delete();
    }
  }

  public static Module relu(Context ctx) {
    return new Module(CApi.dp_module_relu(Context.nativeOf(ctx)));
  }

  /** The exact (erf) GELU. */
  public static Module gelu(Context ctx) {
    return new Module(CApi.dp_module_gelu(Context.nativeOf(ctx)));
  }

  public static Module tanh(Context ctx) {
    return new Module(CApi.dp_module_tanh(Context.nativeOf(ctx)));
  }

  public static Module sigmoid(Context ctx) {
    return new Module(CApi.dp_module_sigmoid(Context.nativeOf(ctx)));
  }

  public static Module dropout(Context ctx, double p) {
    return new Module(CApi.dp_module_dropout(Context.nativeOf(ctx), p));
  }

  /** BatchNorm over [N, C] (eps 1e-5, momentum 0.1), on cpu:0. */
  public static Module batchNorm1d(Context ctx, long numFeatures) {
    return batchNorm(ctx, 1, numFeatures, 1e-5, 0.1, Device.cpu(0));
  }

  /** BatchNorm over [N, C, H, W] (eps 1e-5, momentum 0.1), on cpu:0. */
  public static Module batchNorm2d(Context ctx, long numFeatures) {
    return batchNorm(ctx, 2, numFeatures, 1e-5, 0.1, Device.cpu(0));
  }

  /** dims 1: BatchNorm1d, 2: BatchNorm2d; any other value is an IllegalArgumentException. */
  public static Module batchNorm(
      Context ctx, int dims, long numFeatures, double eps, double momentum, Device device) {
    if (dims != 1 && dims != 2) {
      throw new IllegalArgumentException("batchNorm: dims = " + dims + " is neither 1 nor 2");
    }
    dp_context c = Context.nativeOf(ctx);
    dp_device d = Device.nativeOf(device);
    try {
      return new Module(dims == 1 ? CApi.dp_module_batchnorm1d(c, numFeatures, eps, momentum, d)
                                  : CApi.dp_module_batchnorm2d(c, numFeatures, eps, momentum, d));
    } finally {
      d.delete();
    }
  }

  public static Module maxPool2d(Context ctx, int kernel, int stride, int padding) {
    return new Module(CApi.dp_module_maxpool2d(
        Context.nativeOf(ctx), kernel, kernel, stride, stride, padding, padding));
  }

  public static Module avgPool2d(Context ctx, int kernel, int stride, int padding) {
    return new Module(CApi.dp_module_avgpool2d(
        Context.nativeOf(ctx), kernel, kernel, stride, stride, padding, padding));
  }

  /** Flattens dims startDim..endDim (PyTorch's nn.Flatten: 1, -1). */
  public static Module flatten(Context ctx, int startDim, int endDim) {
    return new Module(CApi.dp_module_flatten(Context.nativeOf(ctx), startDim, endDim));
  }

  public static Module embedding(
      Context ctx, long numEmbeddings, long embeddingDim, Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      return new Module(
          CApi.dp_module_embedding(Context.nativeOf(ctx), numEmbeddings, embeddingDim, d));
    } finally {
      d.delete();
    }
  }

  // ---- running ----

  /** One input, one output (on the worker of the module's device). */
  public Tensor forward(Tensor input) {
    return new Tensor(CApi.dp_module_forward1(handle(), of(input, "input")));
  }

  /** Any number of inputs and outputs. */
  public Tensor[] forwardAll(Tensor... inputs) {
    return Tensor.wrap(CApi.dp_module_forward(handle(), Tensor.handles("inputs", inputs)));
  }

  // ---- state ----

  /** "Linear", "Sequential", ... */
  public String typeName() { return CApi.dp_module_type_name(handle()); }

  /** Train (or evaluation) mode for the module and its children. Returns this. */
  public Module train(boolean training) {
    CApi.dp_module_train(handle(), training ? 1 : 0);
    return this;
  }

  public Module eval() { return train(false); }

  public boolean isTraining() { return CApi.dp_module_is_training(handle()); }

  /** Moves every parameter and buffer to {@code device}; create optimizers afterwards. */
  public Module to(Device device) {
    dp_device d = Device.nativeOf(device);
    try {
      CApi.dp_module_to(handle(), d);
    } finally {
      d.delete();
    }
    return this;
  }

  /** Sets every parameter's gradient to none. */
  public void zeroGrad() { CApi.dp_module_zero_grad(handle()); }

  public long parameterCount() { return CApi.dp_module_parameter_count(handle()); }

  /** Every distinct parameter by dotted name, in registration order. */
  public Map<String, Tensor> namedParameters() {
    Map<String, Tensor> m = new LinkedHashMap<>();
    for (long i = 0, n = parameterCount(); i < n; ++i) {
      String[] name = new String[1];
      Tensor t = new Tensor(CApi.dp_module_parameter(handle(), i, name));
      m.put(name[0], t);
    }
    return m;
  }

  public List<Tensor> parameters() { return new ArrayList<>(namedParameters().values()); }

  public long bufferCount() { return CApi.dp_module_buffer_count(handle()); }

  /** Every buffer (BatchNorm statistics) by dotted name. */
  public Map<String, Tensor> namedBuffers() {
    Map<String, Tensor> m = new LinkedHashMap<>();
    for (long i = 0, n = bufferCount(); i < n; ++i) {
      String[] name = new String[1];
      Tensor t = new Tensor(CApi.dp_module_buffer(handle(), i, name));
      m.put(name[0], t);
    }
    return m;
  }

  /** A parameter or buffer by dotted name ("0.weight"). */
  public Tensor get(String name) { return new Tensor(CApi.dp_module_get(handle(), name)); }

  /** Every parameter and buffer as safetensors (PyTorch reads it). */
  public void save(Path path) { CApi.dp_module_save(handle(), Checkpoint.pathString(path)); }

  /** Loads a safetensors file; names, dtypes and shapes must match (nothing changes if not). */
  public void load(Path path) { CApi.dp_module_load(handle(), Checkpoint.pathString(path)); }

  @Override
  public String toString() {
    return isClosed() ? "Module(closed)" : typeName() + "(parameters=" + parameterCount() + ")";
  }
}
