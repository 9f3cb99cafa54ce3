/* --plot: the loss and the test accuracy over the epochs, as an SVG. */
#ifndef DP_TRAIN_PLOT_H_
#define DP_TRAIN_PLOT_H_

#include <stddef.h>

#include "metrics.h"
#include "options.h"

/* Writes the n records as the SVG at path (exit EXIT_BAD_INPUT, errors.h, if it cannot),
   titled with o's model, batch, optimizer and lr. Each y axis runs between round values
   (multiples of 1, 2 or 5 times a power of ten) with a tick at each. */
void write_plot(const char* path, const options* o, const epoch_record* r, size_t n);

#endif /* DP_TRAIN_PLOT_H_ */
