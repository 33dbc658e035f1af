// A spec's paths, as dataset_spec_next_path splits them for every reader of a spec: idx:'s
// comma-separated list however long, csv:'s file without its label= column, a comma
// inside any other path kept; and dataset_expand_spec's `~`, in each of as many parts as
// there are (its buffer was once sized for four); dataset_expand_home never cuts a path.
#define _POSIX_C_SOURCE 200809L

#include "check.h"
#include "data/dataset.h"

#include <stdlib.h>
#include <string.h>

// The spec's paths joined with '|'.
static void paths_of(const char *spec, char *out, size_t size) {
    const char *part = NULL;
    size_t length = 0, used = 0;
    out[0] = '\0';
    while (dataset_spec_next_path(spec, &part, &length)) {
        used += (size_t)snprintf(out + used, size - used, "%s%.*s", used ? "|" : "",
                                 (int)length, part);
        if (used >= size) break;
    }
}

static void paths_are_split_as_each_kind_reads_them(void) {
    char got[512];
    paths_of("fashion-mnist", got, sizeof got);
    CHECK_INT_EQ((int)strlen(got), 0);
    paths_of("idx:a,b,c,d,e,f", got, sizeof got);
    CHECK_INT_EQ(strcmp(got, "a|b|c|d|e|f"), 0);
    paths_of("idx:a,", got, sizeof got);
    CHECK_INT_EQ(strcmp(got, "a|"), 0);
    paths_of("csv:x,y.csv,label=kind", got, sizeof got);
    CHECK_INT_EQ(strcmp(got, "x,y.csv"), 0);
    paths_of("png:a,b", got, sizeof got);
    CHECK_INT_EQ(strcmp(got, "a,b"), 0);
}

static void every_tilde_is_expanded(void) {
    setenv("HOME", "/home/someone-with-a-long-name", 1);
    char *spec = dataset_expand_spec("idx:~/a,~/b,~/c,~/d,~/e,~/f,~,x~/g");
    CHECK(spec != NULL);
    if (spec) {
        const char *h = "/home/someone-with-a-long-name";
        char want[512];
        snprintf(want, sizeof want, "idx:%s/a,%s/b,%s/c,%s/d,%s/e,%s/f,%s,x~/g", h, h, h, h,
                 h, h, h);
        CHECK_INT_EQ(strcmp(spec, want), 0);
        free(spec);
    }
    spec = dataset_expand_spec("csv:~/t.csv,label=~/no");
    CHECK(spec != NULL);
    if (spec) {
        CHECK_INT_EQ(strcmp(spec, "csv:/home/someone-with-a-long-name/t.csv,label=~/no"), 0);
        free(spec);
    }
    unsetenv("HOME");
    spec = dataset_expand_spec("idx:~/a");
    CHECK(spec != NULL);
    if (spec) {
        CHECK_INT_EQ(strcmp(spec, "idx:~/a"), 0);
        free(spec);
    }
}

// dataset_expand_home into a buffer too small for the result: the path comes back whole
// (the caller's own pointer), never cut to fit, which could name another file.
static void a_path_too_long_is_never_cut(void) {
    setenv("HOME", "/home/u", 1);
    char out[16];
    CHECK_INT_EQ(strcmp(dataset_expand_home("~/a", out, sizeof out), "/home/u/a"), 0);
    const char *longer = "~/a-folder-name-past-16";
    CHECK(dataset_expand_home(longer, out, sizeof out) == longer);
    const char *plain = "/data/a-folder-name-past-16";
    CHECK(dataset_expand_home(plain, out, sizeof out) == plain);
    CHECK_INT_EQ(strcmp(dataset_expand_home("/data/short", out, sizeof out), "/data/short"), 0);
    unsetenv("HOME");
}

int main(void) {
    paths_are_split_as_each_kind_reads_them();
    every_tilde_is_expanded();
    a_path_too_long_is_never_cut();
    return test_exit_code("test_dataset_spec_paths");
}
