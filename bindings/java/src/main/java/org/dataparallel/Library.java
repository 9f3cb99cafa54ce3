package org.dataparallel;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.dataparallel.swig.CApi;

/**
 * The native side: loads the JNI library (libdataparallel_jni.so, which links
 * libdataparallel) and reports its version. The JNI library is found, in order, at the
 * path in the system property {@code org.dataparallel.library}, beside the jar this class
 * came from, or on {@code java.library.path}.
 */
public final class Library {
  private static boolean loaded;

  private Library() {}

  /** Loads the JNI library once; the generated classes call this before any native call. */
  public static synchronized void load() {
    if (loaded) return;
    String explicit = System.getProperty("org.dataparallel.library");
    if (explicit != null) {
      System.load(explicit);
    } else {
      Path beside = besideJar();
      if (beside != null && Files.isReadable(beside)) {
        System.load(beside.toString());
      } else {
        System.loadLibrary("dataparallel_jni");
      }
    }
    loaded = true;
  }

  private static Path besideJar() {
    try {
      var source = Library.class.getProtectionDomain().getCodeSource();
      if (source == null) return null;
      Path location = Paths.get(source.getLocation().toURI());
      Path dir = Files.isDirectory(location) ? location : location.getParent();
      return dir == null ? null : dir.resolve(System.mapLibraryName("dataparallel_jni"));
    } catch (URISyntaxException | SecurityException | IllegalArgumentException e) {
      return null;
    }
  }

  /** The library's version, "major.minor.patch". */
  public static String version() { return CApi.dp_version_string(); }

  /** The library's version as major * 10000 + minor * 100 + patch. */
  public static long versionNumber() { return CApi.dp_version_number(); }
}
