#include "errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void bad_input(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("dp-train: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(EXIT_BAD_INPUT);
}

void check(dp_result r, const char* what) {
  if (r == DP_OK) return;
  fprintf(stderr, "dp-train: %s: %s\n", what, dp_last_error());
  exit(r == DP_ERR_INVALID_ARGUMENT || r == DP_ERR_OUT_OF_RANGE || r == DP_ERR_FORMAT ||
               r == DP_ERR_IO
           ? EXIT_BAD_INPUT
           : 1);
}
