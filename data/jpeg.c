// JPEG images through libjpeg (libjpeg-turbo on Debian), beside data/png.c.
//
// libjpeg's default error handler prints and calls exit(); ours records libjpeg's message
// and longjmps back to the one setjmp in decode(), whose only state lives in a JpegJob
// owned by its caller (as in png.c: no local of decode() changes between setjmp and
// longjmp, and the caller frees what the job holds on either path).
//
// What is decoded, and what is refused by name:
//   gray            1 sample a pixel
//   YCbCr, RGB      3 samples, converted by libjpeg (integer IDCT, fancy upsampling: the
//                   settings of djpeg and PIL, so the three give the same pixels)
//   CMYK, YCCK      converted to RGB here: R = (255 - C)(255 - K) / 255 and so on, or
//                   C * K / 255 for the inverted values Adobe's writers store (an APP14
//                   marker says so), as PIL and browsers read them
//   progressive     decoded, up to JPEG_MAX_SCANS scans (a few hundred bytes can claim
//                   thousands, each a pass over the whole image)
//   12-bit, other colour spaces, damage (any libjpeg warning: "corrupt JPEG data",
//                   "premature end of file"): STATUS_BAD_INPUT with libjpeg's words
#define _POSIX_C_SOURCE 200809L

#include "data/dataset.h"
#include "data/image.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <jerror.h>

#define JPEG_MAX_SCANS 1000  // progressive files from cameras and encoders use about 10

typedef struct JpegJob {
    const char *path;
    FILE *file;
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr errors;
    struct jpeg_progress_mgr progress;
    int created;                // jpeg_create_decompress ran: destroy it
    jmp_buf jump;
    char error[JMSG_LENGTH_MAX];
    int error_code;             // libjpeg's message code for the failure
    int want_width, want_height;  // > 0: decode only that size; 0: any up to IMAGE_MAX_PIXELS
    int header_only;
    int width, height;
    int samples;                // 1 (gray) or 3 (RGB) in pixels
    unsigned char *pixels;      // height rows of width * samples bytes
    unsigned char *row;         // one CMYK row, before conversion
} JpegJob;

static JpegJob *job_of(j_common_ptr cinfo) { return (JpegJob *)cinfo->client_data; }

static void fail_with_message(j_common_ptr cinfo) {
    JpegJob *job = job_of(cinfo);
    cinfo->err->format_message(cinfo, job->error);
    job->error_code = cinfo->err->msg_code;
    longjmp(job->jump, 1);
}

// Warnings (level -1) are damage: libjpeg fills what it could not read with gray and goes
// on, which would train on a half-gray image. Two speak only of metadata and are dropped;
// trace messages (level >= 0) are dropped too. Library code never prints.
static void on_message(j_common_ptr cinfo, int level) {
    int code = cinfo->err->msg_code;
    if (level < 0 && code != JWRN_JFIF_MAJOR && code != JWRN_BOGUS_ICC)
        fail_with_message(cinfo);
}

static void on_progress(j_common_ptr cinfo) {
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (d->input_scan_number > JPEG_MAX_SCANS) {
        JpegJob *job = job_of(cinfo);
        snprintf(job->error, sizeof job->error, "more than %d scans", JPEG_MAX_SCANS);
        job->error_code = -1;
        longjmp(job->jump, 1);
    }
}

// The colour space libjpeg is asked to give, and the samples it gives in it; 0 for one we
// do not read.
static int choose_output(j_decompress_ptr d) {
    switch (d->jpeg_color_space) {
    case JCS_GRAYSCALE: d->out_color_space = JCS_GRAYSCALE; return 1;
    case JCS_YCbCr: case JCS_RGB: d->out_color_space = JCS_RGB; return 3;
    case JCS_CMYK: case JCS_YCCK: d->out_color_space = JCS_CMYK; return 4;
    default: return 0;
    }
}

// One CMYK row to RGB; Adobe's writers store the four values inverted (255 = no ink).
static void cmyk_to_rgb(const unsigned char *cmyk, int width, int inverted,
                        unsigned char *rgb) {
    for (int x = 0; x < width; x++) {
        const unsigned char *p = cmyk + 4 * x;
        int k = inverted ? p[3] : 255 - p[3];
        for (int c = 0; c < 3; c++) {
            int v = inverted ? p[c] : 255 - p[c];
            rgb[3 * x + c] = (unsigned char)((v * k + 127) / 255);
        }
    }
}

static int read_rows(JpegJob *job, int samples_out) {
    j_decompress_ptr d = &job->cinfo;
    size_t stride = (size_t)job->width * (size_t)job->samples;
    job->pixels = malloc(stride * (size_t)job->height);
    if (samples_out == 4) job->row = malloc((size_t)job->width * 4);
    if (!job->pixels || (samples_out == 4 && !job->row)) return -2;
    while (d->output_scanline < d->output_height) {
        unsigned char *dest = job->pixels + stride * d->output_scanline;
        JSAMPROW row = samples_out == 4 ? job->row : dest;
        if (jpeg_read_scanlines(d, &row, 1) != 1) ERREXIT(d, JERR_INPUT_EMPTY);
        if (samples_out == 4) cmyk_to_rgb(job->row, job->width, d->saw_Adobe_marker, dest);
    }
    // Read to EOI, so damage after the last row is not let through.
    jpeg_finish_decompress(d);
    return 0;
}

// Reads the header and, when the size is wanted, every row. Returns 0 (job->pixels NULL:
// header only or another size), -1 after a libjpeg error (job->error), -2 out of memory,
// -4 an unsupported colour space. The only setjmp in this file; see the top.
static int decode(JpegJob *job) {
    if (setjmp(job->jump)) return -1;
    j_decompress_ptr d = &job->cinfo;
    jpeg_create_decompress(d);
    job->created = 1;
    d->client_data = job;
    d->progress = &job->progress;
    jpeg_stdio_src(d, job->file);
    jpeg_read_header(d, TRUE);
    job->width = (int)d->image_width;
    job->height = (int)d->image_height;
    int samples_out = choose_output(d);
    if (!samples_out) return -4;
    if (job->header_only) return 0;
    int fits = job->want_width > 0
                   ? job->width == job->want_width && job->height == job->want_height
                   : (long long)job->width * job->height <= IMAGE_MAX_PIXELS;
    if (!fits) return 0;
    job->samples = samples_out == 4 ? 3 : samples_out;
    d->dct_method = JDCT_ISLOW;
    d->do_fancy_upsampling = TRUE;
    jpeg_start_decompress(d);
    if (d->output_components != samples_out || (int)d->output_width != job->width ||
        (int)d->output_height != job->height)
        ERREXIT(d, JERR_BAD_LENGTH);
    return read_rows(job, samples_out);
}

static void close_jpeg(JpegJob *job) {
    if (job->created) jpeg_destroy_decompress(&job->cinfo);
    if (job->file) fclose(job->file);
    free(job->row);
    free(job->pixels);
}

static int decode_failed(const JpegJob *job, int rc, Status *st) {
    if (rc == -4) {
        status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0, "cannot decode JPEG: %d colour "
                       "components in a colour space other than gray, YCbCr, RGB or CMYK",
                       job->cinfo.num_components);
        status_hint(st, "convert the image to RGB first, e.g. `convert IMAGE -colorspace "
                        "sRGB out.png`");
        return STATUS_BAD_INPUT;
    }
    if (job->error_code == JERR_BAD_PRECISION) {
        status_fail_at(st, STATUS_BAD_INPUT, job->path, 0, 0, "cannot decode JPEG: %d-bit "
                       "samples; only 8-bit JPEG is read", job->cinfo.data_precision);
        status_hint(st, "convert the image to 8 bits first, e.g. `convert IMAGE -depth 8 "
                        "out.png`");
        return STATUS_BAD_INPUT;
    }
    return image_decode_failed(job->path, rc, "JPEG", "libjpeg", job->error, st);
}

// Opens and decodes per job's wants.
static int run_job(JpegJob *job, Status *st) {
    long long bytes = 0;
    TRY(dataset_open_regular(job->path, "a JPEG image", &job->file, &bytes, st));
    job->cinfo.err = jpeg_std_error(&job->errors);
    job->errors.error_exit = fail_with_message;
    job->errors.emit_message = on_message;
    job->progress.progress_monitor = on_progress;
    int decoded = decode(job);
    return decoded ? decode_failed(job, decoded, st) : 0;
}

int jpeg_decode(const char *path, int width, int height, ImagePixels *out, Status *st) {
    JpegJob job = {.path = path, .want_width = width, .want_height = height};
    memset(out, 0, sizeof *out);
    int rc = run_job(&job, st);
    if (!rc) {
        *out = (ImagePixels){job.width, job.height, job.samples, job.pixels};
        job.pixels = NULL;  // the caller's now
    }
    close_jpeg(&job);
    return rc;
}

int jpeg_read_size(const char *path, int *width, int *height, Status *st) {
    JpegJob job = {.path = path, .header_only = 1};
    int rc = run_job(&job, st);
    if (!rc) {
        *width = job.width;
        *height = job.height;
    }
    close_jpeg(&job);
    return rc;
}
