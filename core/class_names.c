#include "core/class_names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "data/dataset.h"

enum { FASHION_MNIST_CLASSES = 10, CLASS_FILE_MAX = 1 << 20 };

void class_names_free(ClassNames *cn) {
    free(cn->names);
    free(cn->text);
    memset(cn, 0, sizeof *cn);
}

// Used unless --classes names others, even when their count is not the model's: a model
// trained on 2 folders keeps 10 outputs if its file says units=10, and those are still the
// folders' classes, not Fashion-MNIST's.
int class_names_recorded(const LoadedInputs *in, int classes, ClassNames *cn, Status *st) {
    enum { NAME_MAX = CHECKPOINT_CLASS_NAME_WRITTEN_MAX };
    class_names_free(cn);
    cn->names = malloc((size_t)classes * sizeof *cn->names);
    cn->text = malloc((size_t)classes * NAME_MAX);
    if (!cn->names || !cn->text)
        return status_out_of_host_memory(st, (size_t)classes * (sizeof *cn->names + NAME_MAX),
                                         "for %d class names", classes);
    for (int i = 0; i < classes; i++) {
        char *name = cn->text + (size_t)i * NAME_MAX;
        if (i < in->class_count) snprintf(name, NAME_MAX, "%s", in->class_names[i]);
        else snprintf(name, NAME_MAX, "class %d", i);
        cn->names[i] = name;
    }
    return 0;
}

static int read_text_file(const char *path, char **out, Status *st) {
    // Only a regular file: a FIFO would block the open, a directory read as nothing.
    FILE *f;
    long long bytes;
    if (dataset_open_regular(path, "a file of class names", &f, &bytes, st)) {
        status_hint(st, "--classes takes fashion-mnist or a file with one class name per line");
        return STATUS_BAD_INPUT;
    }
    char *text = malloc(CLASS_FILE_MAX + 1);
    size_t n = text ? fread(text, 1, CLASS_FILE_MAX + 1, f) : 0;
    int failed = !text || ferror(f);
    fclose(f);
    if (failed || n > CLASS_FILE_MAX) {
        if (!text) return status_out_of_host_memory(st, CLASS_FILE_MAX + 1, "reading %s", path);
        free(text);
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       failed ? "cannot read class names" : "class names file is over 1 MB");
        status_hint(st, "--classes takes a file with one class name per line");
        return STATUS_BAD_INPUT;
    }
    text[n] = '\0';
    // A NUL would end the names there without a word ("has 1 class names"): a text file
    // holds none.
    const char *nul = memchr(text, '\0', n);
    if (nul) {
        int line, column;
        text_line_column(text, (size_t)(nul - text), &line, &column);
        free(text);
        status_fail_at(st, STATUS_BAD_INPUT, path, line, column,
                       "a NUL byte (0x00) in the class names");
        status_hint(st, "--classes takes a text file with one class name per line");
        return STATUS_BAD_INPUT;
    }
    *out = text;
    return 0;
}

int class_names_from_file(const char *path, int classes, ClassNames *cn, Status *st) {
    TRY(read_text_file(path, &cn->text, st));
    cn->names = calloc((size_t)classes, sizeof *cn->names);
    if (!cn->names)
        return status_out_of_host_memory(st, (size_t)classes * sizeof *cn->names,
                                         "for %d class names", classes);
    int count = 0, line = 0, empty_line = 0;
    char *p = cn->text;
    while (*p) {
        char *end = strchr(p, '\n');
        char *next = end ? end + 1 : p + strlen(p);
        if (end) *end = '\0';
        line++;
        size_t len = strlen(p);
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
            p[--len] = '\0';
        if (len == 0) {
            if (!empty_line) empty_line = line;
        } else {
            if (empty_line) {
                status_fail_at(st, STATUS_BAD_INPUT, path, empty_line, 1, "empty class name");
                status_hint(st, "write one name per line, in class order, with no blank lines");
                return STATUS_BAD_INPUT;
            }
            if (count < classes) cn->names[count] = p;
            count++;
        }
        p = next;
    }
    if (count != classes) {
        status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0,
                       "has %d class names, but the model gives %d class scores", count, classes);
        status_hint(st, "write one name per line, in class order (line 1 names class 0)");
        return STATUS_BAD_INPUT;
    }
    return 0;
}

int class_names_known(const char *spec, int classes, ClassNames *cn, Status *st) {
    if (classes != FASHION_MNIST_CLASSES) {
        status_fail(st, STATUS_BAD_INPUT,
                    "--classes %s names %d classes, but the model gives %d class scores", spec,
                    FASHION_MNIST_CLASSES, classes);
        status_hint(st, "pass --classes FILE with one name per line, or leave it out to print "
                        "class indices");
        return STATUS_BAD_INPUT;
    }
    int known = 0;
    const char *const *names = dataset_known_class_names(spec, &known);
    cn->names = malloc(FASHION_MNIST_CLASSES * sizeof *cn->names);
    if (!cn->names)
        return status_out_of_host_memory(st, FASHION_MNIST_CLASSES * sizeof *cn->names,
                                         "for class names");
    for (int i = 0; i < FASHION_MNIST_CLASSES; i++) cn->names[i] = names[i];
    return 0;
}
