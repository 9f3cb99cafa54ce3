#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "errors.h"
#include "output_file.h"

void write_metrics(const char* path, const epoch_record* r, size_t n) {
  output_file out;
  if (open_output(path, &out) != 0) {
    bad_input("cannot write --metrics file %s: %s", path, strerror(errno));
  }
  FILE* f = out.f;
  fprintf(f,
          "epoch,train_loss,test_loss,test_accuracy,samples_per_s,seconds,scatter_s,"
          "replicate_s,apply_s,gather_s,backward_s,reduce_s,optimizer_s\n");
  for (size_t i = 0; i < n; ++i) {
    fprintf(f, "%d,%.6f,%.6f,%.6f,%.1f,%.3f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", r[i].epoch,
            r[i].train_loss, r[i].test_loss, r[i].test_accuracy, r[i].samples_per_s, r[i].seconds,
            r[i].phases.scatter, r[i].phases.replicate, r[i].phases.apply, r[i].phases.gather,
            r[i].phases.backward, r[i].phases.reduce, r[i].optimizer_s);
  }
  if (close_output(&out) != 0) {
    bad_input("cannot write --metrics file %s: %s", path, strerror(errno));
  }
}

size_t read_metrics(const char* path, int before, epoch_record* r) {
  /* Only a regular file has a history: opening a FIFO to read would wait for a writer. */
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[1024];
  size_t n = 0;
  int row = 0;
  if (!fgets(line, sizeof line, f) || strncmp(line, "epoch,", 6) != 0) {
    fprintf(stderr, "dp-train: warning: %s is not a --metrics file; starting it anew\n", path);
    fclose(f);
    return 0;
  }
  while (n + 1 < (size_t)before && fgets(line, sizeof line, f)) {
    ++row;
    epoch_record e;
    memset(&e, 0, sizeof e);
    if (sscanf(line, "%d,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &e.epoch, &e.train_loss,
               &e.test_loss, &e.test_accuracy, &e.samples_per_s, &e.seconds, &e.phases.scatter,
               &e.phases.replicate, &e.phases.apply, &e.phases.gather, &e.phases.backward,
               &e.phases.reduce, &e.optimizer_s) != 13) {
      fprintf(stderr, "dp-train: warning: %s row %d does not parse; its history ends before it\n",
              path, row);
      break;
    }
    if (e.epoch >= before) break;
    if (e.epoch < 1 || (n > 0 && e.epoch <= r[n - 1].epoch)) {
      fprintf(stderr,
              "dp-train: warning: %s row %d has epoch %d after epoch %d; its history ends before "
              "it\n",
              path, row, e.epoch, n > 0 ? r[n - 1].epoch : 0);
      break;
    }
    r[n++] = e;
  }
  fclose(f);
  return n;
}
