// The dataset kind a path without its spec prefix looks like, for the hint of the error
// that refuses it ("--data ~/photos": "pass --data images:~/photos").
#ifndef TRAINER_DATASET_GUESS_H
#define TRAINER_DATASET_GUESS_H

typedef enum DatasetGuess {
    DATASET_GUESS_NONE,           // not there, or a file of no known kind
    DATASET_GUESS_EMPTY_FOLDER,   // a folder with nothing in it
    DATASET_GUESS_UNKNOWN_FOLDER, // a folder of nothing trainer reads
    DATASET_GUESS_IMAGES,         // class folders of images (or train/ and test/ of them)
    DATASET_GUESS_LOOSE_IMAGES,   // images, but not in class folders
    DATASET_GUESS_CIFAR10,        // CIFAR-10's binary batch files
    DATASET_GUESS_IDX,            // IDX files
    DATASET_GUESS_CSV             // a .csv file
} DatasetGuess;

// Reads names only (a folder's entries, one level of subfolders below), never file bytes.
DatasetGuess dataset_guess(const char *path);

#endif
