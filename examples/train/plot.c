#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "output_file.h"

/* An axis over lo..hi: from `first` to `last` in `step`s, a round number (1, 2 or 5 times
   a power of ten) that makes 2 to 6 of them, labelled with `decimals` digits after the
   point (as many as the step needs). */
typedef struct axis {
  double first, last, step;
  int decimals;
} axis;

static axis round_axis(double lo, double hi) {
  const double wanted = (hi - lo) / 4; /* at most a few intervals more after rounding out */
  const double power = pow(10, floor(log10(wanted)));
  const double multiples[3] = {1, 2, 5};
  axis a;
  a.step = 10 * power;
  for (int i = 0; i < 3; ++i) {
    if (multiples[i] * power >= wanted) {
      a.step = multiples[i] * power;
      break;
    }
  }
  a.first = floor(lo / a.step) * a.step;
  a.last = ceil(hi / a.step) * a.step;
  const double digits = -floor(log10(a.step) + 1e-9);
  a.decimals = digits > 0 ? (int)digits : 0;
  return a;
}

/* One panel: series (values over epochs) in a box at (x0, y0) of size w x h, its y axis
   labelled in the series' values times `scale` followed by `unit` (100 and "%" for a
   fraction shown as a percentage); `top` is the largest value they can take, so scaled. */
static void svg_panel(FILE* f, double x0, double y0, double w, double h, const char* title,
                      const epoch_record* r, size_t n, const double* const* series,
                      const char* const* names, const char* const* colors, size_t n_series,
                      double scale, double top, const char* unit) {
  double lo = 1e300, hi = -1e300;
  for (size_t s = 0; s < n_series; ++s) {
    for (size_t i = 0; i < n; ++i) {
      lo = fmin(lo, series[s][i] * scale);
      hi = fmax(hi, series[s][i] * scale);
    }
  }
  /* A margin, so that a point lies on the box's edge only at a round value; one unit each
     way around a flat series. Neither takes the axis past what the values can be: below 0,
     above `top`. */
  double bottom_end = lo - (hi - lo) * 0.08, top_end = hi + (hi - lo) * 0.08;
  if (lo > hi) { /* no epoch yet: an empty box over 0..1 (0..100%) */
    bottom_end = 0;
    top_end = scale;
  } else if (!(hi > lo)) {
    bottom_end = lo - 1;
    top_end = hi + 1;
  }
  if (lo >= 0) bottom_end = fmax(0, bottom_end);
  if (hi <= top) top_end = fmin(top, top_end);
  const axis a = round_axis(bottom_end, top_end);
  lo = a.first;
  hi = a.last;
  fprintf(f, "<text x='%.0f' y='%.0f' font-size='15' font-weight='bold'>%s</text>\n", x0, y0 - 10,
          title);
  fprintf(f, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' fill='none' stroke='#999'/>\n", x0,
          y0, w, h);
  const long first = lround(a.first / a.step), ticks = lround((a.last - a.first) / a.step);
  for (long t = 0; t <= ticks; ++t) {
    const double v = (double)(first + t) * a.step; /* exact where the step is */
    const double y = y0 + h - h * (double)t / (double)ticks;
    fprintf(f, "<line x1='%.0f' y1='%.1f' x2='%.0f' y2='%.1f' stroke='#eee'/>\n", x0, y, x0 + w, y);
    fprintf(f, "<text x='%.0f' y='%.1f' font-size='11' text-anchor='end'>%.*f%s</text>\n", x0 - 6,
            y + 4, a.decimals, v, unit);
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
      const double y = y0 + h - (series[s][i] * scale - lo) / (hi - lo) * h;
      fprintf(f, "%.1f,%.1f ", x, y);
    }
    fprintf(f, "'/>\n");
    for (size_t i = 0; i < n; ++i) {
      const double x = x0 + step * (double)i + (n > 1 ? 0 : w / 2);
      const double y = y0 + h - (series[s][i] * scale - lo) / (hi - lo) * h;
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
  svg_panel(f, 70, 70, 340, 240, "Loss", r, n, loss_series, loss_names, loss_colors, 2, 1, INFINITY,
            "");
  const double* acc_series[1] = {acc};
  const char* acc_names[1] = {"test accuracy"};
  const char* acc_colors[1] = {"#2ca02c"};
  svg_panel(f, 520, 70, 340, 240, "Test accuracy", r, n, acc_series, acc_names, acc_colors, 1, 100,
            100, "%");
  fprintf(f, "</svg>\n");
  free(train);
  free(test);
  free(acc);
  if (close_output(&out) != 0) {
    bad_input("cannot write --plot file %s: %s", path, strerror(errno));
  }
}
