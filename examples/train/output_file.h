/* How dp-train writes its own files (--metrics, --plot), and the start-up checks of every
   output path, the library's --checkpoint included. */
#ifndef DP_TRAIN_OUTPUT_FILE_H_
#define DP_TRAIN_OUTPUT_FILE_H_

#include <limits.h>
#include <stdio.h>

#include "options.h"

/* A file option's output. A regular file, or none yet, is written to a temporary file of
   this process's own beside it (an existing path.tmp, or another run's, is left alone) and
   renamed over it, so a reader never sees half of it; through a symbolic link, beside the
   file the link names, which stays a link. Anything else (a device such as /dev/null, a
   FIFO) is written directly: nothing can be renamed over it. */
typedef struct {
  char target[PATH_MAX];   /* where the output goes, through any links */
  char tmp[PATH_MAX + 64]; /* the temporary file; "" when writing the target directly */
  FILE* f;
} output_file;

/* Opens out->f for writing `path`; 0, or -1 with errno set. */
int open_output(const char* path, output_file* out);

/* Closes out->f and puts the temporary file in place; 0, or -1 with errno set (the
   temporary file then removed). */
int close_output(output_file* out);

/* Fails at start-up (exit EXIT_BAD_INPUT, errors.h) rather than after an epoch when an
   output path cannot be written, or when two of the file options name one file. */
void check_output_paths(const options* o);

#endif /* DP_TRAIN_OUTPUT_FILE_H_ */
