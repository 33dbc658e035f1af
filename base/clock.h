// The one clock trainer times itself with: monotonic, in seconds, unaffected by changes to
// the wall clock. Differences of two readings are what callers use.
#ifndef TRAINER_CLOCK_H
#define TRAINER_CLOCK_H

double monotonic_seconds(void);

#endif
