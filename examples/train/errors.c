#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The line goes out in one write: under mpirun several ranks may fail at once, and a line
   written in pieces interleaves with theirs. One too long for the buffer goes in pieces. */
static void print_line(const char* fmt, va_list ap) {
  char line[4096];
  static const char prefix[] = "dp-train: ";
  va_list again;
  va_copy(again, ap);
  const size_t room = sizeof line - sizeof prefix; /* the prefix's '\0' makes room for '\n' */
  const int n = vsnprintf(line + sizeof prefix - 1, room, fmt, ap);
  if (n >= 0 && (size_t)n < room) {
    memcpy(line, prefix, sizeof prefix - 1);
    line[sizeof prefix - 1 + (size_t)n] = '\n';
    line[sizeof prefix + (size_t)n] = '\0';
    fputs(line, stderr);
  } else {
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, again);
    fputc('\n', stderr);
  }
  va_end(again);
}

static void print_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void print_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  print_line(fmt, ap);
  va_end(ap);
}

void bad_input(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  print_line(fmt, ap);
  va_end(ap);
  exit(EXIT_BAD_INPUT);
}

void check(dp_result r, const char* what) {
  if (r == DP_OK) return;
  print_error("%s: %s", what, dp_last_error());
  exit(r == DP_ERR_INVALID_ARGUMENT || r == DP_ERR_OUT_OF_RANGE || r == DP_ERR_FORMAT ||
               r == DP_ERR_IO
           ? EXIT_BAD_INPUT
           : 1);
}
