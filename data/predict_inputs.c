#define _POSIX_C_SOURCE 200809L  // strdup
#include "data/predict_inputs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/escape.h"
#include "data/image.h"
#include "data/result_output.h"

void input_list_free(InputList *list) {
    for (int i = 0; i < list->count; i++) free(list->paths[i]);
    free(list->paths);
    memset(list, 0, sizeof *list);
}

static int append(InputList *list, const char *path, Status *st) {
    if (list->count == list->room) {
        int room = list->room ? 2 * list->room : 64;
        char **paths = realloc(list->paths, (size_t)room * sizeof *paths);
        if (!paths)
            return status_out_of_host_memory(st, (size_t)room * sizeof *paths,
                                             "listing the inputs");
        list->paths = paths;
        list->room = room;
    }
    if (!(list->paths[list->count] = strdup(path)))
        return status_out_of_host_memory(st, strlen(path) + 1, "listing the inputs");
    list->count++;
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// The entries of `dir` not starting with '.', sorted; *names to be freed with each entry.
static int list_folder(const char *dir, char ***names, int *count, Status *st) {
    *names = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        char shown[4096];
        status_fail_at(st, STATUS_BAD_INPUT, text_escape(dir, strlen(dir), shown, sizeof shown),
                       0, 0, "cannot read the folder");
        return STATUS_BAD_INPUT;
    }
    InputList found = {0};
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));)
        if (e->d_name[0] != '.') rc = append(&found, e->d_name, st);
    closedir(d);
    if (rc) {
        input_list_free(&found);
        return rc;
    }
    if (found.count) qsort(found.paths, (size_t)found.count, sizeof *found.paths, by_name);
    *names = found.paths;
    *count = found.count;
    return 0;
}

static int is_folder(const char *path) {
    struct stat s;
    return stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

// The images of `dir`, and of its subfolders when `depth` allows one more level.
static int collect_folder(const char *dir, int depth, InputList *list, Status *st) {
    char **names;
    int count;
    TRY(list_folder(dir, &names, &count, st));
    int rc = 0;
    for (int i = 0; !rc && i < count; i++) {
        size_t size = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(size);
        if (!path) {
            rc = status_out_of_host_memory(st, size, "listing the inputs");
            break;
        }
        snprintf(path, size, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        if (is_folder(path)) {
            if (depth > 0) rc = collect_folder(path, depth - 1, list, st);
        } else if (image_file_name(names[i])) {
            rc = append(list, path, st);
        }
        free(path);
    }
    for (int i = 0; i < count; i++) free(names[i]);
    free(names);
    return rc;
}

int predict_collect_inputs(const char *const *names, int count, InputList *list, Status *st) {
    for (int i = 0; i < count; i++) {
        if (!is_folder(names[i])) {
            TRY(append(list, names[i], st));
            continue;
        }
        int before = list->count;
        TRY(collect_folder(names[i], 1, list, st));
        if (list->count > before) continue;
        char shown[4096];
        status_fail_at(st, STATUS_BAD_INPUT,
                       text_escape(names[i], strlen(names[i]), shown, sizeof shown), 0, 0,
                       "the folder holds no .png or .jpg image, nor do its subfolders");
        status_hint(st, "predict reads the .png and .jpg files of a folder and of its "
                    "subfolders one level down (class folders)");
        return STATUS_BAD_INPUT;
    }
    return 0;
}
