package org.dataparallel;

/** How {@link ProcessGroup#allreduce} combines the ranks' tensors (dp_reduce_op). */
public enum ReduceOp {
  SUM,
  /** The sum divided by the group's size (floating tensors only). */
  AVERAGE,
  MAX,
  MIN
}
