// core/recorded_resize.c without a file or a dataset: which size a run that reads weights
// (eval, predict) or resumes a checkpoint (train --resume) reads images at, and the words
// of a refusal. tests/e2e/images_jpeg.sh runs the same through the CLI.
#include "check.h"
#include "core/recorded_resize.h"

#include <string.h>

static char said[512];
static void remember(void *user, const char *line) {
    (void)user;
    snprintf(said, sizeof said, "%s", line);
}
static const RunNotice notice = {remember, NULL};

static LoadedInputs recorded(int h, int w, int known) {
    LoadedInputs in;
    memset(&in, 0, sizeof in);
    in.resize_height = h;
    in.resize_width = w;
    in.resize_recorded = known;
    return in;
}

static void fits_the_model_input(void) {
    Shape image = {.rank = 3, .dims = {1, 28, 28}}, flat = {.rank = 1, .dims = {784}};
    CHECK(resize_fits(&image, 28, 28));
    CHECK(!resize_fits(&image, 28, 32));
    CHECK(resize_fits(&flat, 28, 28));
    CHECK(resize_fits(&flat, 14, 56));
    CHECK(!resize_fits(&flat, 0, 0));
}

// --resize's words: model is the input's size (a flat input's square), none and no option
// are no resize, and a size the input does not take is refused with one that it does.
static void resize_option_words(void) {
    Shape image = {.rank = 3, .dims = {1, 28, 28}}, flat = {.rank = 1, .dims = {784}};
    Status st;
    status_clear(&st);
    int h = -1, w = -1;
    CHECK_INT_EQ(resize_read(NULL, &image, &h, &w, &st), 0);
    CHECK_INT_EQ(h, 0);
    h = w = -1;  // so that the check below sees "none" clear them, not the call above
    CHECK_INT_EQ(resize_read("none", &image, &h, &w, &st), 0);
    CHECK_INT_EQ(w, 0);
    CHECK_INT_EQ(resize_read("model", &image, &h, &w, &st), 0);
    CHECK_INT_EQ(h, 28);
    CHECK_INT_EQ(w, 28);
    CHECK_INT_EQ(resize_read("model", &flat, &h, &w, &st), 0);
    CHECK_INT_EQ(h, 28);
    CHECK_INT_EQ(resize_read("14x56", &flat, &h, &w, &st), 0);
    CHECK_INT_EQ(h, 14);
    CHECK_INT_EQ(w, 56);
    CHECK_INT_EQ(resize_read("big", &image, &h, &w, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--resize big: expected model, none or HxW");
    CHECK_INT_EQ(resize_read("30x30", &image, &h, &w, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "--resize 30x30 does not fit the model's input shape=1x28x28");
    CHECK_CONTAINS(st.hint, "--resize model (or 28x28)");
    CHECK_INT_EQ(resize_read("10x10", &flat, &h, &w, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.hint, "H*W = 784");
}

static void eval_and_predict_take_the_recorded_size(void) {
    Shape input = {.rank = 3, .dims = {1, 28, 28}};
    LoadedInputs in = recorded(28, 28, 1);
    Status st;
    status_clear(&st);
    int h = 0, w = 0;
    said[0] = 0;
    CHECK_INT_EQ(resize_as_recorded(&input, "w.safetensors", &in, &notice, &h, &w, &st), 0);
    CHECK_INT_EQ(h, 28);
    CHECK_INT_EQ(w, 28);
    CHECK_CONTAINS(said, "images of another size are resized to 28x28 (HxW), as w.safetensors "
                         "records its run did (--resize 28x28); --resize none reads them as "
                         "they are");
    // Nothing recorded, or none: the size stays as it was, and nothing is said.
    LoadedInputs none = recorded(0, 0, 1);
    h = w = 0;
    said[0] = 0;
    CHECK_INT_EQ(resize_as_recorded(&input, "w.safetensors", &none, &notice, &h, &w, &st), 0);
    CHECK_INT_EQ(h, 0);
    CHECK(said[0] == 0);
    // A size the model does not take is refused, naming the file.
    LoadedInputs other = recorded(32, 32, 1);
    CHECK_INT_EQ(resize_as_recorded(&input, "w.safetensors", &other, &notice, &h, &w, &st),
                 STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "'resize' is '32x32', which does not fit");
    CHECK_CONTAINS(st.file, "w.safetensors");
}

static void a_resume_refuses_another_size(void) {
    Shape input = {.rank = 3, .dims = {1, 28, 28}};
    LoadedInputs in = recorded(28, 28, 1);
    Status st;
    status_clear(&st);
    int h = 0, w = 0;  // --resize none
    CHECK_INT_EQ(resize_as_resumed(&input, "ck.safetensors", &in, "none", "m.model", &notice,
                                   &h, &w, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.message, "the checkpoint's run resized its images to 28x28 (HxW) where "
                               "another size; this run (--resize none) reads them at their "
                               "own size");
    CHECK_CONTAINS(st.hint, "resume with --resize 28x28, or without --resize");
    CHECK_CONTAINS(st.hint, "trainer train m.model --init-from ck.safetensors");
    // The same size given, or none given: taken.
    h = w = 28;
    status_clear(&st);
    CHECK_INT_EQ(resize_as_resumed(&input, "ck.safetensors", &in, "model", "m.model", &notice,
                                   &h, &w, &st), 0);
    h = w = 0;
    CHECK_INT_EQ(resize_as_resumed(&input, "ck.safetensors", &in, NULL, "m.model", &notice, &h,
                                   &w, &st), 0);
    CHECK_INT_EQ(h, 28);
    // A file recording none refuses a given size; one without the key says nothing.
    LoadedInputs none = recorded(0, 0, 1), old = recorded(0, 0, 0);
    h = w = 28;
    CHECK_INT_EQ(resize_as_resumed(&input, "ck.safetensors", &none, "model", "m.model",
                                   &notice, &h, &w, &st), STATUS_BAD_INPUT);
    CHECK_CONTAINS(st.hint, "resume without --resize");
    status_clear(&st);
    CHECK_INT_EQ(resize_as_resumed(&input, "ck.safetensors", &old, "model", "m.model", &notice,
                                   &h, &w, &st), 0);
}

// A recorded size the model does not take (its input changed, or the file was edited): no
// --resize mends a resume, since it takes no other size than the recorded one; the hint
// says what does. It once said `--resize model (or none)`, eval's way, which resume refuses.
static void a_resume_of_a_size_the_model_does_not_take_is_refused(void) {
    Shape input = {.rank = 1, .dims = {784}};
    LoadedInputs other = recorded(32, 32, 1);
    const char *given[] = {NULL, "model", "none"};
    for (int i = 0; i < 3; i++) {
        Status st;
        status_clear(&st);
        int h = given[i] && strcmp(given[i], "model") == 0 ? 28 : 0, w = h;
        CHECK_INT_EQ(resize_as_resumed(&input, "ck.safetensors", &other, given[i], "m.model",
                                       &notice, &h, &w, &st), STATUS_BAD_INPUT);
        CHECK_CONTAINS(st.message, "checkpoint metadata 'resize' is '32x32', which does not fit "
                                   "the model's input shape=784");
        CHECK_CONTAINS(st.file, "ck.safetensors");
        CHECK_CONTAINS(st.hint, "a resume reads images at the size its checkpoint records, and "
                                "no --resize changes that: start from its weights with `trainer "
                                "train m.model --init-from ck.safetensors` (and --resize model, "
                                "none or HxW)");
        CHECK(strstr(st.hint, "resume with --resize") == NULL);
        CHECK(strstr(st.hint, "(or none)") == NULL);
    }
}

int main(void) {
    fits_the_model_input();
    resize_option_words();
    eval_and_predict_take_the_recorded_size();
    a_resume_refuses_another_size();
    a_resume_of_a_size_the_model_does_not_take_is_refused();
    return test_exit_code("test_recorded_resize");
}
