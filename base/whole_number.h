#ifndef TRAINER_BASE_WHOLE_NUMBER_H
#define TRAINER_BASE_WHOLE_NUMBER_H

// text as a whole number from min to max, all of it: no leading blank (which strtol would
// skip), nothing after the digits, no overflow. 1 and *out set when it is; 0, *out
// untouched, when not.
int whole_number_in(const char *text, long min, long max, long *out);

#endif
