// Pixels as the model's planes, which file names are images, and the decode failures both
// decoders report: the leaf that the PNG and JPEG decoders, the image folders and predict
// share (calling nothing else of ours but base/, so that no two of them call each other in
// a loop).
#include <string.h>
#include <strings.h>

#include "data/image.h"

#include "base/escape.h"

void image_to_planes(const ImagePixels *image, int channels, float *out) {
    size_t plane = (size_t)image->width * image->height;
    int samples = image->samples;
    int color = samples >= 3;
    int alpha = samples == 2 || samples == 4;
    float scaled[256];  // v / 255, the same floats as dividing, without a division a value
    for (int v = 0; v < 256; v++) scaled[v] = v / 255.0f;
    for (size_t i = 0; i < plane; i++) {
        const unsigned char *px = image->pixels + i * (size_t)samples;
        // Composited over black: a fully opaque pixel keeps its exact value v / 255.
        float a = alpha ? scaled[px[samples - 1]] : 1.0f;
        if (channels == 1) {
            // Integer weights (exact in float): a gray pixel stored as RGB keeps v / 255.
            float v = color ? (299 * px[0] + 587 * px[1] + 114 * px[2]) / 255000.0f
                            : scaled[px[0]];
            out[i] = v * a;
        } else {
            for (int c = 0; c < 3; c++) out[c * plane + i] = scaled[px[color ? c : 0]] * a;
        }
    }
}

static int has_suffix(const char *name, const char *suffix) {
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && strcasecmp(name + n - k, suffix) == 0;
}

int image_file_name(const char *name) {
    return has_suffix(name, ".png") || has_suffix(name, ".jpg") || has_suffix(name, ".jpeg");
}

int image_decode_failed(const char *path, int rc, const char *format, const char *library,
                        const char *error, Status *st) {
    if (rc == -2) {
        char shown[4 * 256 + 8];  // the message holds 768 bytes: more would be cut anyway
        return status_out_of_host_memory(st, 0, "decoding %s",
                                         text_escape(path, strlen(path), shown, sizeof shown));
    }
    status_fail_at(st, STATUS_BAD_INPUT, path, 0, 0, "cannot decode %s: %s (%s)", format, error,
                   library);
    status_hint(st, "the file is damaged or cut short; export or download it again");
    return STATUS_BAD_INPUT;
}
