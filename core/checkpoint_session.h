// A training run's checkpoints: --checkpoint DIR's step files and best.safetensors,
// --save's weights, --resume and --init-from, and the folder locks that keep two runs apart.
// tools/train_checkpoints.c reads the options into a CheckpointSession and prints the
// command that resumes; what is written and checked is here. Nothing here prints: notices
// go through the session's RunNotice.
#ifndef TRAINER_CHECKPOINT_SESSION_H
#define TRAINER_CHECKPOINT_SESSION_H

#include "core/checkpoint.h"
#include "core/run.h"
#include "core/run_data.h"
#include "core/train.h"

// --resume's value and the checkpoint file it names: the value, when it is a file with bytes
// in it, else the newest step file of the folder it names. Looked up once (a stat, and for a
// folder a listing): the first function below that needs the file finds it, and the run's
// later ones take that answer.
typedef struct ResumeSource {
    const char *given;  // --resume as given, which messages name; NULL: no resume
    int found;          // `file` holds the answer
    char file[1100];
} ResumeSource;

// Finds resume->file unless found already; an empty file, a folder without a checkpoint,
// or one that cannot be read (a missing path) is STATUS_BAD_INPUT.
int checkpoints_resume_file(ResumeSource *resume, Status *st);

typedef struct CheckpointSession {
    int read_only;             // set before checkpoints_open: resume, but write nothing
                               // (the ranks of an mpirun launch other than 0)
    int processes;             // of the mpirun launch (0 or 1: none), for the resume command
    const char *model_path;    // as given: the --save check and the resume command need it
    RunNotice notice;          // lines for the user (tools/ prints them)
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

// What eval and predict need to know of the data, into s->inputs: the normalization, the
// size `train`'s images were resized to (--resize), and the class names of `train` (a
// png:DIR's folders) or of the known dataset `spec`.
void checkpoints_record_inputs(CheckpointSession *s, const Normalization *normalization,
                               const Dataset *train, const char *spec);

// The --checkpoint folder's checks that need neither model nor data, each STATUS_BAD_INPUT:
// its path leaves room for the step files' names; it is created and locked for this
// process's life (base/directories.h), refused when another trainer process holds it; it
// holds no other run's checkpoints (the file `resume` names, when resume and resume->given
// are not NULL, may be its newest). checkpoints_open runs them; train runs them before the
// data load too, for a folder that exists, so that a wrong one is refused without the wait.
int checkpoints_check_folder(const char *folder, ResumeSource *resume, Status *st);
// Before the data load, which depends on them: the inputs the checkpoint `resume` names
// (resume->file) records, read from its metadata (the resize says how its run read images):
// the file's header only (safetensors_read_header), checked as the whole read checks it.
// Free *out with checkpoint_inputs_free.
int checkpoints_read_resumed_inputs(ResumeSource *resume, LoadedInputs *out, Status *st);
// --save FILE's checks, each STATUS_BAD_INPUT: not the model file itself, a target
// atomic_file_check_target accepts, in a folder no other trainer process holds as its
// --checkpoint folder or --logdir (its shared lock is then held for this process's life).
// checkpoints_open runs them; train runs them before the data load too.
int checkpoints_check_save(const char *save_path, const char *model_path, Status *st);
// Before anything trains (the options read into *s): readies the folder (an unwritable
// one fails here) and applies --resume `resume` (NULL, or a NULL resume->given: none;
// run_resume: parameters and optimizer state into every replica, the place into
// config->start, the checkpoint's seed and batch) or --init-from `init` (NULL: none).
int checkpoints_open(CheckpointSession *s, Run *run, RunConfig *config,
                     ResumeSource *resume, const char *init, Status *st);
// After checkpoints_open, before training: a resumed run must feed its samples as the
// checkpoint's run did. Another validation split than the one it records is refused (it
// would hold samples the weights were trained on, or train on those it was validated
// on), and so is another normalization, except with `normalize auto`, which takes the
// recorded mean and std (with a notice when this run's data gives others). The classes of
// `train` (by `spec`) must have the names the checkpoint records, label for label.
// data->normalization and its source are updated when the recorded values are taken.
// Frees s->resumed_inputs.
int checkpoints_check_resumed_inputs(CheckpointSession *s, NormalizeKind normalize,
                                     RunData *data, const char *spec, Status *st);
// After a signal stopped training, with a step to checkpoint (s->folder and s->has_last):
// the checkpoint where it stopped, and --save's weights too when it stopped in the
// evaluation after an epoch; each said through s->notice.
int checkpoints_write_interrupted(CheckpointSession *s, Graph *g, Device *d, Status *st);
// Without one: --save's weights as they were when interrupted, said through s->notice.
int checkpoints_save_interrupted(CheckpointSession *s, Graph *g, Device *d, Status *st);
int checkpoints_after_step(CheckpointSession *s, const StepPlace *place, Graph *g, Device *d,
                           Status *st);
int checkpoints_after_epoch(CheckpointSession *s, const EpochReport *r, Graph *g, Device *d,
                            Status *st);
// After the run's last step, when it finished (the last epoch, or an early stop): with
// --checkpoint-every N, a step checkpoint there unless the last multiple of N was it, so
// the folder always holds where the run ended.
int checkpoints_finish(CheckpointSession *s, Graph *g, Device *d, Status *st);
// A step checkpoint at the last step taken (s->last), as a signal leaves it.
int checkpoints_write_last(CheckpointSession *s, Graph *g, Device *d, Status *st);
// The names of a dataset's classes in label order, into list (room for 256): a known
// dataset's (by its spec), or a png:DIR's folder names. Returns how many; 0 when it names
// none.
int dataset_class_name_list(const char *spec, const Dataset *ds, const char **list);
// The classes `recorded` (from `path`, a weights file or checkpoint) against `names` of the
// data at hand (`where`, e.g. "png:shirts"): the first label whose name differs (png:
// folders labelled by their sorted names shift every label after a missing folder) is
// STATUS_BAD_INPUT naming both when `refuse` (a resume would train on shifted labels), else
// said through `notice` (eval measures as asked). Names compare as `data export` writes them
// (0_T-shirt_top is T-shirt/top). Nothing to compare when either names none; fewer classes
// here than recorded, with the same names, are fine.
int check_recorded_classes(const LoadedInputs *recorded, const char *const *names, int count,
                           const char *path, const char *where, int refuse,
                           const RunNotice *notice, Status *st);

#endif
