/* dp-train's checkpoints: the library's safetensors file of model and optimizer, with the
   settings of the run that wrote it as metadata, which a resumed run takes over. */
#ifndef DP_TRAIN_CHECKPOINT_H_
#define DP_TRAIN_CHECKPOINT_H_

#include <dataparallel/dataparallel.h>

#include "options.h"

/* A run that resumes a checkpoint continues the run that wrote it: the model, optimizer,
   lr, momentum, batch, seed and limit it records are taken over unless the command line
   gives them. A model or optimizer given must match (exit EXIT_BAD_INPUT otherwise); an
   lr, momentum, batch, seed or limit given may differ, with a warning. --eval-only takes
   over the model only. Nothing happens without --resume or --eval-only. With
   --distributed every rank takes them over and rank 0 alone warns. */
void adopt_checkpoint_settings(options* o);

/* Loads --resume's checkpoint into model and optimizer and returns the first epoch to
   train (the recorded one + 1); an --lr given replaces the rate the load put back. Exits
   EXIT_BAD_INPUT for a file it cannot load. With --distributed every rank loads it, so
   that every rank's optimizer continues from the same state. */
int resume_checkpoint(const options* o, dp_module* model, dp_optimizer* opt);

/* Writes --checkpoint after `epoch`, with the settings adopt_checkpoint_settings reads
   (with --distributed, rank 0 calls it: the ranks' models and optimizers are the same). */
void save_checkpoint(const options* o, dp_module* model, dp_optimizer* opt, int epoch);

#endif /* DP_TRAIN_CHECKPOINT_H_ */
