#include "core/recorded_resize.h"

#include <stdio.h>
#include <string.h>

#include "base/escape.h"
#include "data/image.h"

int resize_fits(const Shape *input, int h, int w) {
    return input->rank == 3 ? h == input->dims[1] && w == input->dims[2]
           : input->rank == 1 ? h > 0 && (long)h * w == input->dims[0] : 0;
}

static int refuse_resize(const char *text, const Shape *input, Status *st) {
    char shape[64];
    status_fail(st, STATUS_BAD_INPUT, "--resize %s does not fit the model's input shape=%s",
                text, shape_format(input, shape, sizeof shape));
    if (input->rank == 3)
        status_hint(st, "--resize model (or %ldx%ld) resizes images to the model's input",
                    (long)input->dims[1], (long)input->dims[2]);
    else if (input->rank == 1)
        status_hint(st, "give --resize HxW with H*W = %ld", (long)input->dims[0]);
    else
        status_hint(st, "--resize needs an image input: shape=CxHxW or N");
    return STATUS_BAD_INPUT;
}

int resize_read(const char *text, const Shape *input, int *height, int *width, Status *st) {
    *height = *width = 0;
    if (!text || strcmp(text, "none") == 0) return 0;
    int h = 0, w = 0;
    if (strcmp(text, "model") == 0) {
        if (input->rank == 3) h = (int)input->dims[1], w = (int)input->dims[2];
        // A flat input of a square count: the square (mlp's 784 is 28x28).
        for (int side = 1; input->rank == 1 && (long)side * side <= input->dims[0]; side++)
            if ((long)side * side == input->dims[0]) h = w = side;
    } else if (!image_size_parse(text, &h, &w)) {
        status_fail(st, STATUS_BAD_INPUT, "--resize %s: expected model, none or HxW (e.g. "
                    "28x28)", text);
        status_hint(st, "--resize model resizes images to the model's input size");
        return STATUS_BAD_INPUT;
    }
    if (!resize_fits(input, h, w)) return refuse_resize(text, input, st);
    *height = h;
    *width = w;
    return 0;
}

// A recorded h x w the model does not take (its input changed since, or the file was
// edited): the message; each caller says what to do, which differs for a resume.
static int refuse_misfit(const Shape *input, const char *file, int h, int w, Status *st) {
    char shape[64];
    return status_fail_at(st, STATUS_BAD_INPUT, file, 0, 0, "checkpoint metadata 'resize' is "
                          "'%dx%d', which does not fit the model's input shape=%s", h, w,
                          shape_format(input, shape, sizeof shape));
}

// The recorded h x w taken, with a notice ending in `tail`.
static void take_recorded(const char *file, int h, int w, const char *tail,
                          const RunNotice *notice, int *height, int *width) {
    char shown[4 * 1024 + 8];
    run_notice_say(notice, "images of another size are resized to %dx%d (HxW), as %s records "
                   "its run did (--resize %dx%d)%s", h, w,
                   text_escape(file, strlen(file), shown, sizeof shown), h, w, tail);
    *height = h;
    *width = w;
}

int resize_as_recorded(const Shape *input, const char *file, const LoadedInputs *recorded,
                       const RunNotice *notice, int *height, int *width, Status *st) {
    int h = recorded->resize_height, w = recorded->resize_width;
    if (!h) return 0;
    if (!resize_fits(input, h, w)) {
        refuse_misfit(input, file, h, w, st);
        status_hint(st, "the weights were trained for another input size; give --resize "
                        "model (or none) to choose how images are read");
        return STATUS_BAD_INPUT;
    }
    take_recorded(file, h, w, "; --resize none reads them as they are", notice, height, width);
    return 0;
}

int resize_as_resumed(const Shape *input, const char *file, const LoadedInputs *recorded,
                      const char *given, const char *model_path, const RunNotice *notice,
                      int *height, int *width, Status *st) {
    int h = recorded->resize_height, w = recorded->resize_width;
    if (!recorded->resize_recorded || (!given && !h)) return 0;
    // Given or not, --resize cannot mend it: a resume takes no other size than the recorded.
    if (h && !resize_fits(input, h, w)) {
        refuse_misfit(input, file, h, w, st);
        status_hint(st, "a resume reads images at the size its checkpoint records, and no "
                    "--resize changes that: start from its weights with `trainer train %s "
                    "--init-from %s` (and --resize model, none or HxW), or resume from a "
                    "checkpoint that records a size this model takes", model_path, file);
        return STATUS_BAD_INPUT;
    }
    if (!given) {
        take_recorded(file, h, w, "", notice, height, width);
        return 0;
    }
    if (*height == h && *width == w) return 0;
    char theirs[96] = "read its images at their own size";
    char ours[64] = "reads them at their own size";
    if (h) snprintf(theirs, sizeof theirs, "resized its images to %dx%d (HxW) where another size",
                    h, w);
    if (*height) snprintf(ours, sizeof ours, "resizes them to %dx%d", *height, *width);
    status_fail_at(st, STATUS_BAD_INPUT, file, 0, 0, "the checkpoint's run %s; this run (--resize "
                   "%s) %s: the weights would see other inputs than they were trained on",
                   theirs, given, ours);
    if (h) status_hint(st, "resume with --resize %dx%d, or without --resize, which takes it; or "
                       "start from its weights with `trainer train %s --init-from %s`", h, w,
                       model_path, file);
    else status_hint(st, "resume without --resize; or start from its weights with `trainer "
                     "train %s --init-from %s`", model_path, file);
    return STATUS_BAD_INPUT;
}
