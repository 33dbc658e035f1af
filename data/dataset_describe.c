// `trainer data info`'s description of one split, written to the caller's TextOut.
#include <string.h>

#include "base/escape.h"
#include "base/utf8.h"
#include "data/dataset_stats.h"
#include "data/transform.h"

// Every named class, also those with no sample (an empty folder last in a png:DIR).
static void classes_text(const TextOut *out, const Dataset *ds, const DatasetStats *stats,
                         const char *const *names, int named) {
    int last = named - 1 > ds->label_max ? named - 1 : ds->label_max;
    for (int c = 0; c <= last; c++) {
        char name[DATASET_SHOWN_NAME];
        const char *raw = c < named ? names[c] : "";
        text_escape(raw, strlen(raw), name, sizeof name);
        // Padded to 16 columns, not bytes: "Größe" is 7 bytes and 5 columns, "猫" 3 and 2.
        int pad = 16 - utf8_display_columns(name);
        text_printf(out, "  class %3d %s%*s %8d\n", c, name, pad > 0 ? pad : 0, "",
                    stats->per_class[c]);
    }
}

// Per channel, as a `normalize` statement takes them (CSV features are too many to list).
static void normalize_text(const TextOut *out, const Dataset *ds) {
    Normalization per_channel;
    Status ignored;
    if (ds->features || ds->count == 0 || normalization_compute(ds, &per_channel, NULL, &ignored))
        return;
    char mean[160], std[160];
    normalization_format(per_channel.mean, per_channel.count, 4, mean, sizeof mean);
    normalization_format(per_channel.std, per_channel.count, 4, std, sizeof std);
    text_printf(out, "  per channel: normalize mean=%s std=%s\n", mean, std);
    normalization_free(&per_channel);
}

void dataset_describe(const TextOut *out, const char *split, const Dataset *ds,
                      const char *const *names, int named, int skipped) {
    DatasetStats stats;
    dataset_stats(ds, &stats);
    text_printf(out, "%s: %d sample%s of %dx%dx%d from %s%s\n", split, stats.count,
                stats.count == 1 ? "" : "s", ds->channels, ds->height, ds->width, ds->source,
                ds->features ? " (f32 features)" : "");
    classes_text(out, ds, &stats, names, named);
    text_printf(out, "  values %.4f to %.4f, mean %.4f, std %.4f\n", stats.min, stats.max,
                stats.mean, stats.std);
    normalize_text(out, ds);
    if (skipped)
        text_printf(out, "  skipped %d unreadable sample%s\n", skipped, skipped == 1 ? "" : "s");
}
