// `trainer train`'s checkpoints: --checkpoint DIR, --checkpoint-every, --keep-last, --resume,
// --init-from and --save, and what a signal leaves behind. Kept apart from cmd_train.c so
// the loop's options and these grow without touching each other.
#ifndef TRAINER_TRAIN_CHECKPOINTS_H
#define TRAINER_TRAIN_CHECKPOINTS_H

#include "core/checkpoint_session.h"
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

// --checkpoint, --save, --checkpoint-every, --keep-last and the model path into *s, its
// notices printed; --resume with --init-from is refused.
int checkpoints_read_options(const Command *cmd, const ParsedArgs *args, const char *model_path,
                             CheckpointSession *s, Status *st);
// After a signal stopped training: a checkpoint where it stopped (or --save's weights),
// and the command that resumes, on stderr.
void checkpoints_interrupted(CheckpointSession *s, Graph *g, Device *d, const Command *cmd,
                             const ParsedArgs *args);
// After a write stopped the run (a log, a checkpoint or --save on a full disk), on stderr:
// the command that resumes from the newest checkpoint this run wrote (or the one it resumed
// from); with only --save, the epoch that file holds.
void checkpoints_print_resume(const CheckpointSession *s, const Command *cmd,
                              const ParsedArgs *args);

// Appends ` word` to line, quoted for the shell where it needs it: 0, or -1 (the line
// unchanged) when it would not fit.
int append_shell_word(char *line, size_t size, const char *word);
// "mpirun -np N" and the flags this machine needs to run it as printed (root, cores).
void mpirun_words(char *line, size_t size, int processes);

#endif
