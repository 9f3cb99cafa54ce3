package org.dataparallel;

/** Device types (dp_device_type). */
public enum DeviceType {
  CPU(0),
  CUDA(1);

  private final int value;

  DeviceType(int value) { this.value = value; }

  /** The C enum's value. */
  public int value() { return value; }

  static DeviceType of(int value) { return value == 1 ? CUDA : CPU; }
}
