// What a --data written without its kind ("--data ~/photos") most likely is, from what
// the path holds, so that the error names the spec to write instead of a generic list.
// Only names are read (a folder's entries, one level of its subfolders), never the files:
// a guess for a hint must not cost a walk of 100,000 images or open a FIFO.
#include "data/dataset_guess.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "data/image.h"

// Entries looked at in one folder: enough to see what it is, bounded for a huge one.
enum { GUESS_ENTRIES_MAX = 4096 };

typedef struct FolderSigns {
    int entries;       // names other than . and .. (hidden ones included)
    int images;        // *.png, *.jpg, *.jpeg
    int image_folders; // subfolders holding images (class folders, or train/ and test/)
    int cifar_batches; // data_batch_N.bin, test_batch.bin, or a cifar-10-batches-bin/ folder
    int idx_files;     // names with idx1/idx3, or train-/t10k- images or labels
} FolderSigns;

static int has_suffix(const char *name, const char *suffix) {
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcasecmp(name + n - k, suffix) == 0;
}

// FOLDER/NAME into path[size]; 0 when it does not fit (such a name is not looked at).
static int join_path(char *path, size_t size, const char *folder, const char *name) {
    int n = snprintf(path, size, "%s/%s", folder, name);
    return n >= 0 && (size_t)n < size;
}

static int is_directory(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_idx_name(const char *name) {
    return strstr(name, "idx1") || strstr(name, "idx3") ||
           ((strstr(name, "train") || strstr(name, "t10k")) &&
            (strstr(name, "images") || strstr(name, "labels")));
}

// Whether `folder` (or one of its subfolders, when `depth` allows) holds an image file.
static int holds_images(const char *folder, int depth) {
    DIR *dir = opendir(folder);
    if (!dir) return 0;
    int found = 0, seen = 0;
    struct dirent *e;
    while (!found && seen++ < GUESS_ENTRIES_MAX && (e = readdir(dir))) {
        if (e->d_name[0] == '.') continue;
        if (image_file_name(e->d_name)) found = 1;
        else if (depth > 0) {
            char path[4352];
            found = join_path(path, sizeof path, folder, e->d_name) && is_directory(path) &&
                    holds_images(path, depth - 1);
        }
    }
    closedir(dir);
    return found;
}

static void read_signs(const char *folder, FolderSigns *signs) {
    memset(signs, 0, sizeof *signs);
    DIR *dir = opendir(folder);
    if (!dir) return;
    struct dirent *e;
    while (signs->entries < GUESS_ENTRIES_MAX && (e = readdir(dir))) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
        signs->entries++;
        if (name[0] == '.') continue;
        char path[4352];
        if (!join_path(path, sizeof path, folder, name)) continue;
        if (image_file_name(name)) signs->images++;
        else if (strcmp(name, "cifar-10-batches-bin") == 0 || strcmp(name, "test_batch.bin") == 0 ||
                 (strncmp(name, "data_batch_", 11) == 0 && has_suffix(name, ".bin")))
            signs->cifar_batches++;
        else if (is_idx_name(name)) signs->idx_files++;
        else if (is_directory(path) && holds_images(path, 1)) signs->image_folders++;
    }
    closedir(dir);
}

DatasetGuess dataset_guess(const char *path) {
    if (!is_directory(path)) {
        struct stat sb;
        if (stat(path, &sb) != 0) return DATASET_GUESS_NONE;
        return has_suffix(path, ".csv") ? DATASET_GUESS_CSV : DATASET_GUESS_NONE;
    }
    FolderSigns signs;
    read_signs(path, &signs);
    if (signs.entries == 0) return DATASET_GUESS_EMPTY_FOLDER;
    if (signs.cifar_batches) return DATASET_GUESS_CIFAR10;
    if (signs.idx_files) return DATASET_GUESS_IDX;
    if (signs.image_folders) return DATASET_GUESS_IMAGES;
    if (signs.images) return DATASET_GUESS_LOOSE_IMAGES;
    return DATASET_GUESS_UNKNOWN_FOLDER;
}
