// What `trainer predict` classifies, named on its command line: image files, and folders of
// them. A folder gives its images and those of its subfolders one level down (a png:DIR of
// class folders, or a plain folder of images), each folder's in name order; deeper
// folders, names starting with '.', and files of other kinds are passed over.
#ifndef TRAINER_PREDICT_INPUTS_H
#define TRAINER_PREDICT_INPUTS_H

#include "base/status.h"

typedef struct InputList {
    char **paths;
    int count, room;
} InputList;

// Each of `names` (count of them) as a file, or as the images of a folder, appended to
// *list. A folder holding no image is STATUS_BAD_INPUT naming it.
int predict_collect_inputs(const char *const *names, int count, InputList *list, Status *st);
void input_list_free(InputList *list);

#endif
