package org.dataparallel;

import java.util.List;
import java.util.Objects;
import org.dataparallel.swig.CApi;
import org.dataparallel.swig.dp_device;
import org.dataparallel.swig.dp_module;

/**
 * DataParallel's stages as functions, as torch.nn.parallel has them (scatter, replicate,
 * parallel_apply, gather and the functional data_parallel), for a forward put together by
 * hand: a different split per input, replicas kept and run several times, or outputs left
 * where their replicas ran. Every stage is differentiable: a loss computed from the
 * gathered outputs and {@link Tensor#backward()} leave the sum of the replicas' gradients
 * in the original module's parameters, as with {@link DataParallel}.
 *
 * <pre>{@code
 * List<Device> devices = List.of(Device.cpu(0), Device.cpu(1));
 * Tensor[] chunks = Parallel.scatter(x, devices);
 * Module[] replicas = Parallel.replicate(model, devices);
 * Tensor[] outputs = Parallel.parallelApply(replicas, chunks, devices);
 * Tensor y = Parallel.gather(outputs, Device.cpu(0), 0);
 * }</pre>
 *
 * <p>Every array returned holds new objects that the caller closes (the example leaves
 * that out). A batch smaller than the device list scatters into fewer chunks than
 * devices: run only as many replicas, on {@code devices.subList(0, chunks.length)}.
 */
public final class Parallel {
  private Parallel() {}

  /** Splits {@code input} along dimension 0 over the devices in torch.chunk's sizes. */
  public static Tensor[] scatter(Tensor input, List<Device> devices) {
    return scatter(input, devices, null, 0);
  }

  /**
   * Splits {@code input} along {@code dim} over the devices: chunk i goes to devices[i].
   * {@code chunkSizes} (one per device, summing to the size along dim) or null for
   * torch.chunk's sizes, which give fewer pieces than devices when the input is small.
   */
  public static Tensor[] scatter(Tensor input, List<Device> devices, long[] chunkSizes, int dim) {
    return Tensor.wrap(CApi.dp_scatter(Handle.of(input, "input"), pairs("devices", devices),
        chunkSizes == null ? null : chunkSizes.clone(), dim));
  }

  /** Concatenates the tensors (on any devices) along {@code dim} on {@code outputDevice}. */
  public static Tensor gather(Tensor[] tensors, Device outputDevice, int dim) {
    dp_device out = Device.nativeOf(outputDevice, "outputDevice");
    try {
      return new Tensor(CApi.dp_gather(Tensor.handles("tensors", tensors), out, dim));
    } finally {
      out.delete();
    }
  }

  /**
   * One replica of {@code module} (which must be on devices[0]) per device. replicas[0] is
   * the module itself (another handle to it); the others hold broadcast copies of the
   * parameters, through which gradients flow back to the module's, and copies of the
   * buffers. On CPU devices the copies share the module's memory, read-only.
   */
  public static Module[] replicate(Module module, List<Device> devices) {
    dp_module[] handles =
        CApi.dp_replicate(Handle.of(module, "module"), pairs("devices", devices));
    Module[] replicas = new Module[handles.length];
    for (int i = 0; i < handles.length; ++i) replicas[i] = new Module(handles[i]);
    return replicas;
  }

  /**
   * Runs replicas[i] on devices[i], all at once, and returns each replica's output on its
   * device. {@code inputs} holds the same number k of inputs for every replica, replica
   * by replica (replica i takes inputs[i * k .. i * k + k)), each on its replica's device.
   * On failure every replica has still finished; the exception names the lowest replica
   * that failed and its device.
   */
  public static Tensor[] parallelApply(Module[] replicas, Tensor[] inputs, List<Device> devices) {
    Objects.requireNonNull(replicas, "replicas");
    dp_module[] handles = new dp_module[replicas.length];
    for (int i = 0; i < replicas.length; ++i) {
      handles[i] = Handle.of(replicas[i], "replicas[" + i + "]");
    }
    return Tensor.wrap(CApi.dp_parallel_apply(
        handles, Tensor.handles("inputs", inputs), pairs("devices", devices)));
  }

  /** {@link #dataParallel(Module, Tensor[], boolean[], List, Device, int)} of one input, split
      along dimension 0 and gathered on the first device, for a module with one output. */
  public static Tensor dataParallel(Module module, Tensor input, List<Device> deviceIds) {
    Handle.of(input, "input");
    return Tensor.single(dataParallel(module, new Tensor[] {input}, null, deviceIds, null, 0),
        "dataParallel", "the form that returns them all");
  }

  /**
   * One DataParallel forward without a wrapper: scatter, replicate, parallel apply and
   * gather, as {@link DataParallel#forwardAll(Tensor[], boolean[])} does, but without moving
   * the module (it must be on deviceIds[0]) and without keeping replicas. {@code broadcast}
   * (null, or one flag per input) copies input i whole to every device instead of
   * splitting it; {@code deviceIds} null means every CUDA device, else every CPU device
   * (as for {@link DataParallel}); {@code outputDevice} null means deviceIds[0].
   */
  public static Tensor[] dataParallel(Module module, Tensor[] inputs, boolean[] broadcast,
      List<Device> deviceIds, Device outputDevice, int dim) {
    dp_device out = outputDevice == null ? null : outputDevice.toNative();
    try {
      return Tensor.wrap(CApi.dp_data_parallel_apply(Handle.of(module, "module"),
          Tensor.handles("inputs", inputs), broadcast,
          deviceIds == null ? null : pairs("deviceIds", deviceIds), out, dim));
    } finally {
      if (out != null) out.delete();
    }
  }

  /** The (type, index) pairs of a device list argument named {@code name}; nulls are named. */
  private static int[] pairs(String name, List<Device> devices) {
    return Device.pairs(Device.requireAll(name, devices));
  }
}
