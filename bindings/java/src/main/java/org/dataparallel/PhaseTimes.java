package org.dataparallel;

import org.dataparallel.swig.dp_phase_times;

/** Seconds spent in each DataParallel phase (reduce: summed over replicas). */
public record PhaseTimes(
    double scatter, double replicate, double apply, double gather, double backward, double reduce) {
  static PhaseTimes of(dp_phase_times t) {
    return new PhaseTimes(t.getScatter(), t.getReplicate(), t.getApply(), t.getGather(),
        t.getBackward(), t.getReduce());
  }
}
