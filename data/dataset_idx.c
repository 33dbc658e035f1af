// The idx: and fashion-mnist specs: four IDX files, found in a folder by their names'
// usual patterns or named one by one.
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"

#include "base/escape.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"
#define FASHION_MNIST_ENV "TRAINER_FASHION_MNIST_DIR"
#define FASHION_MNIST_HINT \
    "install it: apt-get install dataset-fashion-mnist (or pass --data idx:DIR)"
#define IDX_FOLDER_HINT                                                                  \
    "an idx:DIR folder must hold train-images-idx3-ubyte, train-labels-idx1-ubyte, "    \
    "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, each optionally ending in .gz "  \
    "(other names holding train/t10k/test and images/labels do too); or name the four "  \
    "files: idx:TRAIN_IMAGES,TRAIN_LABELS,TEST_IMAGES,TEST_LABELS"

static int is_directory(const char *path, int *err) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        *err = errno;
        return 0;
    }
    *err = S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
    return *err == 0;
}

const char *dataset_fashion_mnist_dir(void) {
    const char *env = getenv(FASHION_MNIST_ENV);
    return env && env[0] ? env : FASHION_MNIST_DIR;
}

// Resolves the spec to the folder that holds the IDX files, checking that it exists.
static int resolve_folder(const char *spec, char *dir, size_t size, int *is_fashion,
                          Status *st) {
    int err = 0;
    *is_fashion = 0;
    if (strcmp(spec, "fashion-mnist") == 0) {
        // The override lets tests (and people with a copy elsewhere) point at another
        // folder without touching the system one.
        const char *path = dataset_fashion_mnist_dir();
        // Named as overridden only when it points elsewhere: unsetting a variable that
        // names Debian's folder would not help.
        int overridden = strcmp(path, FASHION_MNIST_DIR) != 0;
        *is_fashion = 1;
        if ((size_t)snprintf(dir, size, "%s", path) >= size) {
            status_fail(st, STATUS_BAD_INPUT, "%s is too long (%zu characters)",
                        FASHION_MNIST_ENV, strlen(path));
            return STATUS_BAD_INPUT;
        }
        if (!is_directory(dir, &err)) {
            status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "Fashion-MNIST not found in %s",
                           dir);
            if (overridden)
                status_hint(st, "%s is set to this folder; unset it, or %s", FASHION_MNIST_ENV,
                            FASHION_MNIST_HINT);
            else
                status_hint(st, FASHION_MNIST_HINT);
            return STATUS_BAD_INPUT;
        }
        return 0;
    }
    if (strncmp(spec, "idx:", 4) == 0) {
        const char *path = spec + 4;
        if (!path[0]) {
            status_fail(st, STATUS_BAD_INPUT, "dataset 'idx:' names no folder");
            status_hint(st, "write idx:DIR, e.g. --data idx:/data/mnist");
            return STATUS_BAD_INPUT;
        }
        if ((size_t)snprintf(dir, size, "%s", path) >= size) {
            status_fail(st, STATUS_BAD_INPUT, "dataset folder path is too long (%zu characters)",
                        strlen(path));
            return STATUS_BAD_INPUT;
        }
        if (!is_directory(dir, &err)) {
            if (err == ENOTDIR)
                status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0,
                               "idx: expects a folder, but this is a file");
            else
                status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0,
                               "cannot open the dataset folder: %s", strerror(err));
            status_hint(st, "%s", IDX_FOLDER_HINT);
            return STATUS_BAD_INPUT;
        }
        return 0;
    }
    return STATUS_BAD_INPUT;  // dataset_load sends only the two forms here
}


// What a file of one role is called: the split's word ("train"; "t10k" or "test") and the
// kind's ("images" or "idx3"; "labels" or "idx1") somewhere in its name.
typedef struct IdxRole {
    const char *split_words[2];
    const char *kind_words[2];
    const char *what;       // for messages: "training images"
    const char *usual;      // the distribution's name for it, named when none is found
} IdxRole;

static const IdxRole ROLES[4] = {
    {{"train", NULL}, {"images", "idx3"}, "training images", "train-images-idx3-ubyte"},
    {{"train", NULL}, {"labels", "idx1"}, "training labels", "train-labels-idx1-ubyte"},
    {{"t10k", "test"}, {"images", "idx3"}, "test images", "t10k-images-idx3-ubyte"},
    {{"t10k", "test"}, {"labels", "idx1"}, "test labels", "t10k-labels-idx1-ubyte"},
};

static int contains_any(const char *name, const char *const words[2]) {
    for (int i = 0; i < 2; i++)
        if (words[i] && strstr(name, words[i])) return 1;
    return 0;
}

static int plays_role(const char *name, const IdxRole *role) {
    return name[0] != '.' && contains_any(name, role->split_words) &&
           contains_any(name, role->kind_words);
}

static int ends_with_gz(const char *name) {
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".gz") == 0;
}

// Whether `candidate` should replace `best`: a plain file wins over its .gz (it reads
// faster); otherwise the two are different files and the folder is ambiguous.
static int better_candidate(const char *candidate, const char *best, int *ambiguous) {
    size_t n = strlen(best);
    if (ends_with_gz(candidate) && strncmp(candidate, best, n) == 0 && strlen(candidate) == n + 3)
        return 0;
    n = strlen(candidate);
    if (ends_with_gz(best) && strncmp(best, candidate, n) == 0 && strlen(best) == n + 3) return 1;
    *ambiguous = 1;
    return 0;
}

static int fail_missing_role(const char *dir, const IdxRole *role, int is_fashion, Status *st) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, role->usual);
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "missing %s (or %s.gz) in %s, and no "
                   "other name there holds '%s' and '%s' for the %s", role->usual, role->usual,
                   dir, role->split_words[0], role->kind_words[0], role->what);
    if (is_fashion)
        status_hint(st, "the installed dataset is incomplete; reinstall it: "
                        "apt-get install --reinstall dataset-fashion-mnist");
    else
        status_hint(st, "%s", IDX_FOLDER_HINT);
    return STATUS_BAD_INPUT;
}

// A folder holding both FILE and FILE.gz is read from FILE (it reads faster). When the
// two differ, one was replaced and not the other, and the user is told which one is read.
// Only the sizes are compared, without inflating anything: FILE's against the gzip
// trailer's ISIZE, the unpacked size mod 2^32 (an IDX payload is at most 4 GiB). A .gz of
// several gzip members holds only the last one's size there, so it is named even when it
// matches: rare for IDX files, and a notice, not a refusal.
static void notice_differing_gz(const char *dir, const char *name,
                                const DatasetOptions *options) {
    char raw[1024], gz[1024];
    struct stat raw_stat;
    if (!options || !options->on_notice || ends_with_gz(name) ||
        (size_t)snprintf(gz, sizeof gz, "%s/%s.gz", dir, name) >= sizeof gz)
        return;
    snprintf(raw, sizeof raw, "%s/%s", dir, name);
    FILE *file = NULL;
    long long gz_bytes = 0;
    Status unused;
    // No FILE.gz beside FILE (the usual case), or one that is no file: FILE is read alone.
    if (stat(raw, &raw_stat) != 0 ||
        dataset_open_regular(gz, "a gzip file", &file, &gz_bytes, &unused))
        return;
    unsigned char magic[2], trailer[4] = {0};
    int is_gzip = gz_bytes >= 18 && fread(magic, 1, 2, file) == 2 && magic[0] == 0x1f &&
                  magic[1] == 0x8b && fseek(file, -4, SEEK_END) == 0 &&
                  fread(trailer, 1, 4, file) == 4;
    fclose(file);
    uint32_t unpacked = (uint32_t)trailer[0] | (uint32_t)trailer[1] << 8 |
                        (uint32_t)trailer[2] << 16 | (uint32_t)trailer[3] << 24;
    if (is_gzip && unpacked == (uint32_t)raw_stat.st_size) return;
    char shown_dir[512], shown_name[512], what_gz[64], line[2304];
    text_escape(dir, strlen(dir), shown_dir, sizeof shown_dir);
    text_escape(name, strlen(name), shown_name, sizeof shown_name);
    if (is_gzip) snprintf(what_gz, sizeof what_gz, "unpacks to %lu bytes", (unsigned long)unpacked);
    else snprintf(what_gz, sizeof what_gz, "is not gzip data");
    snprintf(line, sizeof line, "%s holds %s (%lld bytes) and %s.gz, which %s: %s is read, "
             "the .gz is not (remove the one that is out of date)", shown_dir, shown_name,
             (long long)raw_stat.st_size, shown_name, what_gz, shown_name);
    options->on_notice(options->notice_user, line);
}

// Finds the one file in DIR whose name plays `role`.
static int find_role_file(const char *dir, const IdxRole *role, int is_fashion,
                          const DatasetOptions *options, char *path, size_t size, Status *st) {
    DIR *folder = opendir(dir);
    if (!folder) {
        status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "cannot list the folder: %s",
                       strerror(errno));
        status_hint(st, "check the folder's permissions");
        return STATUS_BAD_INPUT;
    }
    char best[256] = "", other[256] = "";
    int ambiguous = 0;
    for (struct dirent *e; (e = readdir(folder));) {
        if (!plays_role(e->d_name, role) || strlen(e->d_name) >= sizeof best) continue;
        int was_ambiguous = ambiguous;
        if (!best[0] || better_candidate(e->d_name, best, &ambiguous))
            snprintf(best, sizeof best, "%s", e->d_name);
        if (ambiguous && !was_ambiguous) snprintf(other, sizeof other, "%s", e->d_name);
    }
    closedir(folder);
    if (!best[0]) return fail_missing_role(dir, role, is_fashion, st);
    // The names are the folder's bytes: escaped, as every name read from the disk is.
    char shown_best[300], shown_other[300];
    text_escape(best, strlen(best), shown_best, sizeof shown_best);
    text_escape(other, strlen(other), shown_other, sizeof shown_other);
    if (ambiguous) {
        status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "two files could be the %s: %s and "
                       "%s", role->what, shown_best, shown_other);
        status_hint(st, "name the four files: idx:TRAIN_IMAGES,TRAIN_LABELS,TEST_IMAGES,"
                        "TEST_LABELS");
        return STATUS_BAD_INPUT;
    }
    if ((size_t)snprintf(path, size, "%s/%s", dir, best) >= size) {
        status_fail_at(st, STATUS_BAD_INPUT, dir, 0, 0, "path too long to hold %s", shown_best);
        status_hint(st, "move the dataset to a shorter path");
        return STATUS_BAD_INPUT;
    }
    notice_differing_gz(dir, best, options);
    return 0;
}

// idx:A,B,C,D: the files of the four roles, in order.
static int split_file_list(const char *list, char paths[4][1024], Status *st) {
    int commas = 0;
    for (const char *p = list; *p; p++) commas += *p == ',';
    const char *p = list;
    for (int n = 0; commas == 3 && n < 4; n++) {
        size_t length = strcspn(p, ",");
        if (length == 0 || length >= sizeof paths[n]) break;
        memcpy(paths[n], p, length);
        paths[n][length] = '\0';
        p += length + (n < 3);
        if (n == 3) return 0;
    }
    status_fail(st, STATUS_BAD_INPUT, "idx:%s: expected four files separated by commas "
                "(TRAIN_IMAGES,TRAIN_LABELS,TEST_IMAGES,TEST_LABELS)", list);
    status_hint(st, "or give the folder that holds them: idx:DIR");
    return STATUS_BAD_INPUT;
}

static int read_pair(const char *images_path, const char *labels_path, Dataset *out,
                     Status *st) {
    uint8_t *images = NULL, *labels = NULL;
    int count = 0, rows = 0, cols = 0, label_count = 0;
    TRY(idx_read_images(images_path, &images, &count, &rows, &cols, st));
    int rc = idx_read_labels(labels_path, &labels, &label_count, st);
    if (rc) {
        free(images);
        return rc;
    }
    if (count != label_count) {
        free(images);
        free(labels);
        status_fail_at(st, STATUS_BAD_INPUT, images_path, 0, 0,
                       "image and label counts differ: %s holds %d images but %s holds %d "
                       "labels",
                       images_path, count, labels_path, label_count);
        status_hint(st, "the two files come from different downloads or splits; "
                        "re-install or re-download the dataset");
        return STATUS_BAD_INPUT;
    }
    out->count = count;
    out->channels = 1;
    out->height = rows;
    out->width = cols;
    out->images = images;
    out->labels = labels;
    out->label_max = dataset_largest_label(labels, count);
    return 0;
}

int dataset_load_idx(const char *spec, const char *split, const DatasetOptions *options,
                     Dataset *out, Status *st) {
    int first = strcmp(split, "test") == 0 ? 2 : 0;  // ROLES: train images, labels, test...
    char paths[4][1024];
    if (strncmp(spec, "idx:", 4) == 0 && strchr(spec, ',')) {
        TRY(split_file_list(spec + 4, paths, st));
    } else {
        char dir[512];
        int is_fashion = 0;
        TRY(resolve_folder(spec, dir, sizeof dir, &is_fashion, st));
        for (int role = first; role < first + 2; role++)
            TRY(find_role_file(dir, &ROLES[role], is_fashion, options, paths[role],
                               sizeof paths[role], st));
        dataset_set_source(out, dir);
    }
    if (!out->source[0]) dataset_set_source(out, paths[first]);
    return read_pair(paths[first], paths[first + 1], out, st);
}
