#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */

#include "output_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

/* Where `path` is or will be: the file itself, through any links, when it exists; else its
   directory's and its own name ("./out.st" and "out.st" are one file). 0 when neither
   resolves. */
static int resolve_path(const char* path, char* out, size_t size) {
  char dir[PATH_MAX], resolved[PATH_MAX];
  if (realpath(path, resolved)) {
    snprintf(out, size, "%s", resolved);
    return 1;
  }
  snprintf(dir, sizeof dir, "%s", path);
  char* slash = strrchr(dir, '/');
  const char* name = slash ? path + (slash - dir) + 1 : path;
  if (slash) {
    *slash = '\0';
    if (!*dir) snprintf(dir, sizeof dir, "/");
  } else {
    snprintf(dir, sizeof dir, ".");
  }
  if (!realpath(dir, resolved)) return 0;
  snprintf(out, size, "%s/%s", resolved, name);
  return 1;
}

/* The file an output to `path` goes to: resolve_path's, or `path` when it does not resolve
   (its directory missing, which the write then reports). */
static void output_target(const char* path, char* out, size_t size) {
  if (!resolve_path(path, out, size)) snprintf(out, size, "%s", path);
}

/* Whether `path` exists and is neither a regular file nor a directory (through links). */
static int special_file(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

int open_output(const char* path, output_file* o) {
  output_target(path, o->target, sizeof o->target);
  o->tmp[0] = '\0';
  if (special_file(o->target)) {
    o->f = fopen(o->target, "w");
    return o->f ? 0 : -1;
  }
  /* A file a killed run left under this name (its pid since reused) is skipped. */
  for (int n = 0; n < 100; ++n) {
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.%d", o->target, (long)getpid(), n);
    o->f = fopen(o->tmp, "wx");
    if (o->f || errno != EEXIST) return o->f ? 0 : -1;
  }
  return -1;
}

int close_output(output_file* o) {
  int failed = fclose(o->f) != 0;
  if (!failed && o->tmp[0]) failed = rename(o->tmp, o->target) != 0;
  if (failed && o->tmp[0]) {
    const int err = errno;
    remove(o->tmp);
    errno = err;
  }
  return failed ? -1 : 0;
}

/* Fails at start-up (exit 2) when `path` cannot be written, rather than after an epoch: an
   empty name, a directory, a device or FIFO it may not write, or a directory it cannot
   create its temporary file in (created and removed here). */
static void check_writable(const char* option, const char* path) {
  if (!*path) bad_input("%s needs a file name", option);
  char target[PATH_MAX];
  output_target(path, target, sizeof target);
  struct stat st;
  if (stat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
    bad_input("cannot write %s file %s: it is a directory", option, path);
  }
  if (special_file(target)) {
    /* Opened only when written: a FIFO's open waits for a reader. */
    if (access(target, W_OK) != 0) {
      bad_input("cannot write %s file %s: %s", option, path, strerror(errno));
    }
    return;
  }
  output_file out;
  if (open_output(path, &out) != 0) {
    bad_input("cannot write %s file %s: %s", option, path, strerror(errno));
  }
  fclose(out.f);
  remove(out.tmp);
}

/* Two of the file options naming one file would overwrite each other (a checkpoint
   replaced by a CSV). */
static int same_file(const char* a, const char* b) {
  char ra[PATH_MAX + 256], rb[PATH_MAX + 256];
  if (resolve_path(a, ra, sizeof ra) && resolve_path(b, rb, sizeof rb)) return strcmp(ra, rb) == 0;
  return strcmp(a, b) == 0;
}

static void check_distinct_files(const options* o) {
  const struct {
    const char* option;
    const char* path;
  } files[] = {{"--checkpoint", o->checkpoint},
               {"--metrics", o->metrics},
               {"--plot", o->plot},
               {"--resume", o->resume}};
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = i + 1; j < 4; ++j) {
      /* Resuming from the file the run goes on checkpointing to is the usual way. */
      if (i == 0 && j == 3) continue;
      if (files[i].path && files[j].path && same_file(files[i].path, files[j].path)) {
        bad_input("%s and %s name the same file, %s", files[i].option, files[j].option,
                  files[j].path);
      }
    }
  }
}

void check_output_paths(const options* o) {
  check_distinct_files(o);
  if (o->metrics) check_writable("--metrics", o->metrics);
  if (o->plot) check_writable("--plot", o->plot);
  if (o->checkpoint) check_writable("--checkpoint", o->checkpoint);
}
