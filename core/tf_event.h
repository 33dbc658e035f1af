// TensorBoard event files written by hand: each record is a TensorFlow `Event` protobuf
// (wall_time = 1, step = 2, file_version = 3, summary = 5 holding Summary.Value {tag = 1,
// simple_value = 2}, session_log = 7 holding SessionLog {status = 1}) in TFRecord framing
// (u64 length, u32 masked CRC-32C of the length, the bytes, u32 masked CRC-32C of the
// bytes; little-endian), encoded by base/protobuf.h rather than a protobuf library.
#ifndef TRAINER_TF_EVENT_H
#define TRAINER_TF_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"

// A record's payload is at most this long; tags longer than fit are refused.
enum { TF_EVENT_MAX_BYTES = 512 };

// The serialized Event of one scalar; returns its length, 0 when the tag is too long.
size_t tf_event_encode_scalar(double wall_time, long step, const char *tag, float value,
                              uint8_t *out, size_t capacity);
// The first event of every file: file_version "brain.Event:2".
size_t tf_event_encode_file_version(double wall_time, uint8_t *out, size_t capacity);
// A SessionLog START event at `step`: TensorBoard drops the events of earlier files at
// this step and after it, as a run restarted from a checkpoint writes those steps again.
size_t tf_event_encode_start(double wall_time, long step, uint8_t *out, size_t capacity);
// data framed as one TFRecord into out (capacity >= size + 16); returns the framed length.
size_t tfrecord_frame(const uint8_t *data, size_t size, uint8_t *out, size_t capacity);

typedef struct EventFile {
    FILE *file;
    char path[1024];
} EventFile;

// Creates DIR/events.out.tfevents.<seconds>.<host> (.<seconds>.<host>.1, .2, ... when the
// name is taken: an existing file is never written over) and writes the file_version event.
// A name that does not fit EventFile.path is STATUS_BAD_INPUT, never cut short.
int event_file_open(EventFile *events, const char *dir, double wall_time, const char *host,
                    Status *st);
int event_file_add_scalar(EventFile *events, double wall_time, long step, const char *tag,
                          float value, Status *st);
// Writes tf_event_encode_start's event (a resumed run, at the first step it trains again).
int event_file_add_start(EventFile *events, double wall_time, long step, Status *st);
int event_file_flush(EventFile *events, Status *st);
void event_file_close(EventFile *events);

#endif
