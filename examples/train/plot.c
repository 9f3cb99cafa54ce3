#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "output_file.h"

/* One panel: series (values over epochs) in a box at (x0, y0) of size w x h. */
static void svg_panel(FILE* f, double x0, double y0, double w, double h, const char* title,
                      const epoch_record* r, size_t n, const double* const* series,
                      const char* const* names, const char* const* colors, size_t n_series,
                      int percent) {
  double lo = 1e300, hi = -1e300;
  for (size_t s = 0; s < n_series; ++s) {
    for (size_t i = 0; i < n; ++i) {
      lo = fmin(lo, series[s][i]);
      hi = fmax(hi, series[s][i]);
    }
  }
  if (lo > hi) { /* no epoch yet: an empty box over 0..1 */
    lo = 0;
    hi = 1;
  } else if (!(hi > lo)) {
    hi = lo + 1;
    lo -= 1;
  }
  const double pad = (hi - lo) * 0.08;
  lo -= pad;
  hi += pad;
  fprintf(f, "<text x='%.0f' y='%.0f' font-size='15' font-weight='bold'>%s</text>\n", x0, y0 - 10,
          title);
  fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#999'/>\n", x0,
          y0, w, h);
  for (int t = 0; t <= 4; ++t) {
    const double v = lo + (hi - lo) * t / 4.0;
    const double y = y0 + h - h * t / 4.0;
    fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#eee'/>\n", x0, y, x0 + w, y);
    if (percent) {
      fprintf(f, "<text x='%.0f' y='%.1f' font-size='11' text-anchor='end'>%.1f%%</text>\n", x0 - 6,
              y + 4, v * 100);
    } else {
      fprintf(f, "<text x='%.0f' y='%.1f' font-size='11' text-anchor='end'>%.3f</text>\n", x0 - 6,
              y + 4, v);
    }
  }
  const double step = n > 1 ? w / (double)(n - 1) : 0;
  for (size_t i = 0; i < n; ++i) {
    fprintf(f, "<text x='%.1f' y='%.0f' font-size='11' text-anchor='middle'>%d</text>\n",
            x0 + step * (double)i + (n > 1 ? 0 : w / 2), y0 + h + 16, r[i].epoch);
  }
  fprintf(f, "<text x='%.0f' y='%.0f' font-size='12' text-anchor='middle'>epoch</text>\n",
          x0 + w / 2, y0 + h + 32);
  for (size_t s = 0; s < n_series; ++s) {
    fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' points='", colors[s]);
    for (size_t i = 0; i < n; ++i) {
      const double x = x0 + step * (double)i + (n > 1 ? 0 : w / 2);
      const double y = y0 + h - (series[s][i] - lo) / (hi - lo) * h;
      fprintf(f, "%.1f,%.1f ", x, y);
    }
    fprintf(f, "'/>\n");
    for (size_t i = 0; i < n; ++i) {
      const double x = x0 + step * (double)i + (n > 1 ? 0 : w / 2);
      const double y = y0 + h - (series[s][i] - lo) / (hi - lo) * h;
      fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n", x, y, colors[s]);
    }
    fprintf(f, "<rect x='%.0f' y='%.0f' width='12' height='3' fill='%s'/>",
            x0 + 10 + 120 * (double)s, y0 + 12, colors[s]);
    fprintf(f, "<text x='%.0f' y='%.0f' font-size='12'>%s</text>\n", x0 + 26 + 120 * (double)s,
            y0 + 17, names[s]);
  }
}

void write_plot(const char* path, const options* o, const epoch_record* r, size_t n) {
  output_file out;
  if (open_output(path, &out) != 0) {
    bad_input("cannot write --plot file %s: %s", path, strerror(errno));
  }
  FILE* f = out.f;
  double* train = (double*)malloc((n + 1) * sizeof(double));
  double* test = (double*)malloc((n + 1) * sizeof(double));
  double* acc = (double*)malloc((n + 1) * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    train[i] = r[i].train_loss;
    test[i] = r[i].test_loss;
    acc[i] = r[i].test_accuracy;
  }
  fprintf(f,
          "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='380' "
          "font-family='sans-serif'>\n<rect width='900' height='380' fill='white'/>\n"
          "<text x='450' y='24' font-size='16' text-anchor='middle'>dp-train: %s, batch %lld, "
          "%s lr %g</text>\n",
          o->model, (long long)o->batch, o->optimizer, o->lr);
  const double* loss_series[2] = {train, test};
  const char* loss_names[2] = {"train loss", "test loss"};
  const char* loss_colors[2] = {"#1f77b4", "#d62728"};
  svg_panel(f, 70, 70, 340, 240, "Loss", r, n, loss_series, loss_names, loss_colors, 2, 0);
  const double* acc_series[1] = {acc};
  const char* acc_names[1] = {"test accuracy"};
  const char* acc_colors[1] = {"#2ca02c"};
  svg_panel(f, 520, 70, 340, 240, "Test accuracy", r, n, acc_series, acc_names, acc_colors, 1, 1);
  fprintf(f, "</svg>\n");
  free(train);
  free(test);
  free(acc);
  if (close_output(&out) != 0) {
    bad_input("cannot write --plot file %s: %s", path, strerror(errno));
  }
}
