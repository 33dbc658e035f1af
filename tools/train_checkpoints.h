// `trainer train`'s checkpoints: --checkpoint DIR, --checkpoint-every, --keep-last, --resume,
// --init-from and --save, and what a signal leaves behind. Kept apart from cmd_train.c so
// the loop's options and these grow without touching each other.
#ifndef TRAINER_TRAIN_CHECKPOINTS_H
#define TRAINER_TRAIN_CHECKPOINTS_H

#include "core/checkpoint.h"
#include "core/train.h"
#include "tools/cli.h"

#define CHECKPOINT_OPTION_SPECS                                                               \
    {"--save", "FILE", "write the weights (safetensors) to FILE after every epoch"},          \
    {"--checkpoint", "DIR", "write resumable checkpoints (safetensors) into DIR"},            \
    {"--checkpoint-every", "N|epoch", "a checkpoint every N steps and at the run's last, "  \
                                      "or after every epoch (default)"},                       \
    {"--keep-last", "K", "keep the K newest step checkpoints (default 3), and best.safetensors"}, \
    {"--resume", "DIR|FILE", "continue a run from its newest checkpoint in DIR, or from FILE"}, \
    {"--init-from", "FILE", "start from the parameters in FILE that match by name and shape "  \
                            "(fine-tuning; fresh optimizer)"}

typedef struct CheckpointSession {
    int read_only;             // set before checkpoints_open: resume, but write nothing
                               // (the ranks of an mpirun launch other than 0)
    int processes;             // of the mpirun launch (0 or 1: none), for the resume command
    const char *model_path;
    const Command *command;    // the options as given, repeated in the resume command
    const ParsedArgs *args;
    const char *folder;        // --checkpoint; NULL when none
    const char *save_path;     // --save; NULL when none
    int every_steps;           // 0: after every epoch
    int keep_last;
    const OptimizerConfig *optimizer;
    const ScheduleConfig *schedule;
    long seed;
    int batch;
    double best_accuracy;      // of best.safetensors; -1 before the first
    double epoch_accuracy;     // of the last epoch evaluated; -1 before the first
    int has_last;              // a step has finished: `last` is where training stands
    StepPlace last;
    char last_written[1100];   // the newest step checkpoint this run wrote; "" before
    int saved_epoch;           // the epoch --save last got; 0 before
    // Recorded in every file written: normalization and class names (checkpoint_inputs.h).
    CheckpointInputs inputs;
    const char *class_name_list[256];
    // What the checkpoint --resume read records of its run's inputs, until
    // checkpoints_check_resumed_inputs has compared them with this run's (and freed them).
    LoadedInputs resumed_inputs;
    const char *resumed_path;  // NULL: no resume
    char resumed_file[1100];
} CheckpointSession;

// What eval and predict need to know of the data, into s->inputs: the normalization and
// the class names of `train` (a png:DIR's folders) or of the known dataset `spec`.
void checkpoints_record_inputs(CheckpointSession *s, const Normalization *normalization,
                               const Dataset *train, const char *spec);

// Reads the options; before anything trains, readies the folder (an unwritable one fails
// here) and applies --resume (parameters and optimizer state into every replica, the
// place into config->start, the checkpoint's seed and batch) or --init-from.
// The --checkpoint folder's checks that need neither model nor data, each STATUS_BAD_INPUT:
// its path leaves room for the step files' names; it is created and locked for this
// process's life (base/directories.h), refused when another trainer process holds it; it
// holds no other run's checkpoints (`resume_from`, --resume's value or NULL, may be its
// newest). checkpoints_open runs them; train runs them before the data load too, for a
// folder that exists, so that a wrong one is refused without the wait.
int checkpoints_check_folder(const char *folder, const char *resume_from, Status *st);
// --save FILE's checks, each STATUS_BAD_INPUT: not the model file itself, a target
// atomic_file_check_target accepts, in a folder no other trainer process holds as its
// --checkpoint folder or --logdir (its shared lock is then held for this process's life).
// checkpoints_open runs them; train runs them before the data load too.
int checkpoints_check_save(const char *save_path, const char *model_path, Status *st);
int checkpoints_open(const Command *cmd, const ParsedArgs *args, CheckpointSession *s,
                     Run *run, RunConfig *config, Status *st);
// After checkpoints_open, before training: a resumed run must feed its samples as the
// checkpoint's run did. Another validation split than the one it records is refused (it
// would hold samples the weights were trained on, or train on those it was validated
// on), and so is another normalization, except with `normalize auto`, which takes the
// recorded mean and std (with a notice when this run's data gives others). The classes of
// `train` (by `spec`) must have the names the checkpoint records, label for label.
// `normalization_source` is updated when the recorded values are taken. Frees
// s->resumed_inputs.
int checkpoints_check_resumed_inputs(CheckpointSession *s, const HeldOutSplit *split,
                                     NormalizeKind normalize, Normalization *normalization,
                                     char *normalization_source, size_t source_size,
                                     const Dataset *train, const char *spec, Status *st);
int checkpoints_after_step(CheckpointSession *s, const StepPlace *place, Graph *g, Device *d,
                           Status *st);
int checkpoints_after_epoch(CheckpointSession *s, const EpochReport *r, Graph *g, Device *d,
                            Status *st);
// After the run's last step, when it finished (the last epoch, or an early stop): with
// --checkpoint-every N, a step checkpoint there unless the last multiple of N was it, so
// the folder always holds where the run ended.
int checkpoints_finish(CheckpointSession *s, Graph *g, Device *d, Status *st);
// After a signal stopped training: a checkpoint where it stopped (or --save's weights),
// and the command that resumes, on stderr.
void checkpoints_interrupted(CheckpointSession *s, Graph *g, Device *d);
// After a write stopped the run (a log, a checkpoint or --save on a full disk), on stderr:
// the command that resumes from the newest checkpoint this run wrote (or the one it resumed
// from); with only --save, the epoch that file holds.
void checkpoints_print_resume(const CheckpointSession *s);

// Appends ` word` to line, quoted for the shell where it needs it: 0, or -1 (the line
// unchanged) when it would not fit.
int append_shell_word(char *line, size_t size, const char *word);
// "mpirun -np N" and the flags this machine needs to run it as printed (root, cores).
void mpirun_words(char *line, size_t size, int processes);

#endif
