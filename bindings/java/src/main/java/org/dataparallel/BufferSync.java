package org.dataparallel;

/** What DataParallel does with buffers (BatchNorm statistics) after a training forward. */
public enum BufferSync {
  /** PyTorch's behaviour: the module keeps replica 0's updates. */
  NONE,
  /** The module's floating buffers become the mean over all replicas. */
  AVERAGE
}
