package org.dataparallel;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import org.dataparallel.swig.CApi;

/**
 * Training checkpoints: a module's state, its optimizer's and string metadata in one
 * safetensors file (written to a temporary file beside the path and renamed over it, so a
 * crash never damages an older file).
 */
public final class Checkpoint {
  private Checkpoint() {}

  /** The text of an argument named "path": a null one is a NullPointerException. */
  static String pathString(Path path) {
    return Objects.requireNonNull(path, "path").toString();
  }

  /** Saves the module, the optimizer (may be null) and metadata (may be null). */
  public static void save(
      Path path, Module module, Optimizer optimizer, Map<String, String> metadata) {
    String[] pairs = null;
    if (metadata != null) {
      pairs = new String[2 * metadata.size()];
      int i = 0;
      for (Map.Entry<String, String> e : metadata.entrySet()) {
        pairs[i++] = e.getKey();
        pairs[i++] = e.getValue();
      }
    }
    CApi.dp_checkpoint_save(
        Handle.of(module, "module"), Handle.ofNullable(optimizer), pathString(path), pairs);
  }

  /** Restores the module and the optimizer (may be null; of the kind that saved it). */
  public static void load(Path path, Module module, Optimizer optimizer) {
    CApi.dp_checkpoint_load(
        Handle.of(module, "module"), Handle.ofNullable(optimizer), pathString(path));
  }

  /** Metadata {@code key} of a checkpoint (OUT_OF_RANGE when absent). */
  public static String metadata(Path path, String key) {
    return CApi.dp_checkpoint_metadata_string(pathString(path), key);
  }
}
