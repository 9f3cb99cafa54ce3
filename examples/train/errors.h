/* How dp-train fails: one line on stderr naming the problem, and an exit code that says
   whose the problem is. --help lists the codes. */
#ifndef DP_TRAIN_ERRORS_H_
#define DP_TRAIN_ERRORS_H_

#include <dataparallel/dataparallel.h>

#define EXIT_BAD_INPUT 2     /* options, data, devices, checkpoints, output paths */
#define EXIT_INTERRUPTED 130 /* Ctrl-C (SIGINT), as a shell reports a process it ended */
/* 0 is success and 1 any other failure (a diverged loss, memory, a library error). */

/* "dp-train: <message>" and exit EXIT_BAD_INPUT. */
void bad_input(const char* fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Nothing when r is DP_OK; else "dp-train: <what>: <the library's message>" and exit:
   EXIT_BAD_INPUT for the codes that mean the input was wrong, 1 for the others. */
void check(dp_result r, const char* what);

#endif /* DP_TRAIN_ERRORS_H_ */
