package org.dataparallel;

import java.util.List;
import java.util.Objects;
import org.dataparallel.swig.dp_device;

/** A device: its type and its index among the context's devices of that type. */
public record Device(DeviceType type, int index) {
  public Device {
    if (type == null) throw new IllegalArgumentException("device type is null");
  }

  /** CPU device {@code index} (the context's virtual CPU devices). */
  public static Device cpu(int index) {
    return new Device(DeviceType.CPU, index);
  }

  /** CUDA device {@code index}. */
  public static Device cuda(int index) {
    return new Device(DeviceType.CUDA, index);
  }

  /** "cpu", "cpu:1", "cuda:0". */
  public static Device parse(String text) {
    String[] parts = text.split(":", 2);
    DeviceType type;
    if (parts[0].equals("cpu")) {
      type = DeviceType.CPU;
    } else if (parts[0].equals("cuda")) {
      type = DeviceType.CUDA;
    } else {
      throw new IllegalArgumentException(
          "device \"" + text + "\" is not cpu[:index] or cuda[:index]");
    }
    // Digits only: parseInt would take "-1" and "+1".
    if (parts.length > 1 && !parts[1].matches("[0-9]+")) {
      throw new IllegalArgumentException("device \"" + text + "\" has a bad index");
    }
    try {
      return new Device(type, parts.length > 1 ? Integer.parseInt(parts[1]) : 0);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("device \"" + text + "\" has a bad index", e);
    }
  }

  @Override
  public String toString() {
    return (type == DeviceType.CPU ? "cpu:" : "cuda:") + index;
  }

  /** The native struct of an argument named "device": a null one is a NullPointerException. */
  static dp_device nativeOf(Device device) { return nativeOf(device, "device"); }

  /** The native struct of an argument named {@code name}; null is a NullPointerException. */
  static dp_device nativeOf(Device device, String name) {
    return Objects.requireNonNull(device, name).toNative();
  }

  /** A device list argument named {@code name}: a null list or element is a
      NullPointerException naming it ("devices[1]"). */
  static List<Device> requireAll(String name, List<Device> devices) {
    Objects.requireNonNull(devices, name);
    for (int i = 0; i < devices.size(); ++i) {
      Objects.requireNonNull(devices.get(i), name + "[" + i + "]");
    }
    return devices;
  }

  /** A dp_device struct (owned by its proxy). */
  dp_device toNative() {
    dp_device d = new dp_device();
    d.setType(type.value());
    d.setIndex(index);
    return d;
  }

  static Device fromNative(dp_device d) {
    try {
      return new Device(DeviceType.of(d.getType()), d.getIndex());
    } finally {
      d.delete();
    }
  }

  /** (type, index) pairs, as the low-level functions take device lists. */
  static int[] pairs(List<Device> devices) {
    if (devices == null) return null;
    int[] p = new int[2 * devices.size()];
    for (int i = 0; i < devices.size(); ++i) {
      p[2 * i] = devices.get(i).type().value();
      p[2 * i + 1] = devices.get(i).index();
    }
    return p;
  }

  static List<Device> fromPairs(int[] pairs) {
    Device[] d = new Device[pairs.length / 2];
    for (int i = 0; i < d.length; ++i) {
      d[i] = new Device(DeviceType.of(pairs[2 * i]), pairs[2 * i + 1]);
    }
    return List.of(d);
  }
}
