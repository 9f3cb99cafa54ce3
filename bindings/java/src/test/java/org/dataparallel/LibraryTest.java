package org.dataparallel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.dataparallel.swig.CApiConstants;
import org.junit.jupiter.api.Test;

class LibraryTest {
  @Test
  void versionMatchesTheHeader() {
    Library.load();
    assertEquals(CApiConstants.DP_VERSION_MAJOR + "." + CApiConstants.DP_VERSION_MINOR + "."
            + CApiConstants.DP_VERSION_PATCH,
        Library.version());
    assertEquals(CApiConstants.DP_VERSION_NUMBER, Library.versionNumber());
  }
}
