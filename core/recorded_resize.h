// How a run that reads a weights file or resumes a checkpoint resizes its images: as the
// file records its run did (the `resize` key, core/checkpoint_inputs.h), so that the
// weights see the inputs they learned from; and what --resize asks for.
#ifndef TRAINER_RECORDED_RESIZE_H
#define TRAINER_RECORDED_RESIZE_H

#include "base/shape.h"
#include "base/status.h"
#include "core/checkpoint_inputs.h"
#include "core/run_options.h"

// Whether images of h x w pixels are what a model whose input is `input` takes (a flat
// input N takes any h * w = N).
int resize_fits(const Shape *input, int h, int w);

// --resize as typed (model, none, HxW; NULL: not given) for a model whose input is `input`:
// *height, *width the size images are resized to, 0 for none. STATUS_BAD_INPUT for another
// word, or a size that does not fit the input.
int resize_read(const char *text, const Shape *input, int *height, int *width, Status *st);

// eval and predict without --resize: *height, *width become the size `file` records its
// run resized images to, said through `notice`; left as they are when nothing (or none) is
// recorded. STATUS_BAD_INPUT naming the file when the size does not fit `input`.
int resize_as_recorded(const Shape *input, const char *file, const LoadedInputs *recorded,
                       const RunNotice *notice, int *height, int *width, Status *st);

// train --resume of an image folder: the run's resize is *height x *width (0: none) and
// `given` the --resize it came from (NULL when not given). Without --resize, the recorded
// size is taken as resize_as_recorded takes it; a given one that differs (none included)
// is STATUS_BAD_INPUT, since the weights would be fed other images than they learned from.
// A recorded size that does not fit `input` is STATUS_BAD_INPUT whatever is given, its hint
// saying what works instead (--init-from). A file without the key (written before it was
// recorded) says nothing either way. `model_path` is for the hints.
int resize_as_resumed(const Shape *input, const char *file, const LoadedInputs *recorded,
                      const char *given, const char *model_path, const RunNotice *notice,
                      int *height, int *width, Status *st);

#endif
