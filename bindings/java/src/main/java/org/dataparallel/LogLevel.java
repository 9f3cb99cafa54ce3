package org.dataparallel;

/** Levels of the library's log messages (dp_log_level), least severe first. */
public enum LogLevel {
  DEBUG(0),
  INFO(1),
  WARNING(2),
  ERROR(3);

  private final int value;

  LogLevel(int value) { this.value = value; }

  /** The C enum's value. */
  public int value() { return value; }

  static LogLevel of(int value) {
    for (LogLevel l : values()) {
      if (l.value == value) return l;
    }
    return ERROR;
  }
}
