// The channels-last rows kernels' cut of a [rows, channels] batchnorm over blocks
// (kernels/cuda/cuda_batchnorm_rows_split.h), checked without a GPU: every shape the
// rows kernels take is covered exactly (each channel in one tile, each row in one chunk,
// no empty chunk), its partials fit the scratch, its blocks fit the grid; the shapes the
// comments and the GPU tests name are cut as they say; and the shapes below the size
// threshold, with one channel, or with spatial > 1 go to the other kernels.
#include "check.h"
#include "kernels/cuda/cuda_batchnorm_rows_split.h"

static void check_cover(long long rows, int channels) {
    RowSplit s = row_split(rows, channels, ROWS_ROOM);
    int ok = s.chunks >= 1 && s.chunks <= ROWS_MAX_BLOCKS && s.tiles >= 1 &&
             (long long)s.tiles * s.width >= channels &&
             (long long)(s.tiles - 1) * s.width < channels && s.lanes >= 1 &&
             s.lanes * s.width <= ROWS_THREADS && s.threads >= s.lanes * s.width &&
             s.threads % 32 == 0 && s.threads <= 1024 &&
             (long long)s.chunks * s.chunk_rows >= rows &&
             (long long)(s.chunks - 1) * s.chunk_rows < rows &&
             ((size_t)s.chunks + 1) * (size_t)channels <= ROWS_ROOM;
    if (!ok) {
        fprintf(stderr, "FAIL rows=%lld channels=%d: tiles %d x %d channels, %d lanes, %d "
                "threads, %d chunks of %lld rows\n", rows, channels, s.tiles, s.width, s.lanes,
                s.threads, s.chunks, s.chunk_rows);
        test_failures++;
    }
}

static void check_split(long long rows, int channels, int tiles, int width, int lanes,
                        int threads, int chunks, long long chunk_rows) {
    RowSplit s = row_split(rows, channels, ROWS_ROOM);
    if (s.tiles != tiles || s.width != width || s.lanes != lanes || s.threads != threads ||
        s.chunks != chunks || s.chunk_rows != chunk_rows) {
        fprintf(stderr, "FAIL rows=%lld channels=%d: got tiles %d width %d lanes %d threads %d "
                "chunks %d of %lld rows; want %d %d %d %d %d of %lld\n", rows, channels,
                s.tiles, s.width, s.lanes, s.threads, s.chunks, s.chunk_rows, tiles, width,
                lanes, threads, chunks, chunk_rows);
        test_failures++;
    }
    CHECK(batchnorm_rows_take(rows, channels, 1));
}

int main(void) {
    // As the comments of test_cuda_parity_batchnorm.c's bn_shapes and
    // cuda_batchnorm_rows_split.h say:
    // cnn-bn's two batchnorms in NHWC at batch 128 (196 and 98 chunks); five channels (51
    // lanes, one thread idle); 301 channels (two tiles of 151); two channels (128 lanes);
    // 4000 channels in 16 tiles, the scratch cutting 22 chunks to 15; 4096 features at
    // batch 4096 (15 chunks x 16 tiles = 240 blocks, 274 rows each).
    check_split(100352, 32, 1, 32, 8, 256, 196, 512);
    check_split(25088, 64, 1, 64, 4, 256, 98, 256);
    check_split(70000, 5, 1, 5, 51, 256, 22, 3182);
    check_split(1500, 301, 2, 151, 1, 160, 14, 108);
    check_split(131072, 2, 1, 2, 128, 256, 16, 8192);
    check_split(1400, 4000, 16, 250, 1, 256, 15, 94);
    check_split(4096, 4096, 16, 256, 1, 256, 15, 274);
    // test_cuda_parity16_batchnorm's rows shapes: 32 channels at batch 16 of 28 x 28, six
    // channels (42 lanes, four threads idle).
    check_split(12544, 32, 1, 32, 8, 256, 25, 502);
    check_split(70000, 6, 1, 6, 42, 256, 26, 2693);

    // Where the rows kernels stop: below 2^18 values, one channel, spatial > 1, more
    // channels than the scratch holds a partial and a total for (32 768).
    CHECK(!batchnorm_rows_take(50000, 3, 1));
    CHECK(!batchnorm_rows_take(128, 16, 1));
    CHECK(batchnorm_rows_take(131072, 2, 1));
    CHECK(!batchnorm_rows_take(131071, 2, 1));
    CHECK(!batchnorm_rows_take(1 << 20, 1, 1));
    CHECK(!batchnorm_rows_take(1024, 32, 784));
    CHECK(batchnorm_rows_take(64, 32768, 1));
    CHECK(!batchnorm_rows_take(64, 32769, 1));

    // Every shape on a sweep of rows and channels, from the threshold to a large NHWC
    // activation (batch 1024 of 224 x 224), is covered exactly.
    static const int channel_counts[] = {2, 3, 5, 6, 7, 31, 32, 33, 64, 100, 128, 129, 255,
                                         256, 257, 301, 600, 1000, 4000, 4096, 8191, 32767};
    static const long long row_counts[] = {131072, 131073, 250000, 802816, 1 << 20, 5377,
                                           4096, 100, 51380224LL};
    int taken = 0;
    for (size_t c = 0; c < sizeof channel_counts / sizeof *channel_counts; c++)
        for (size_t r = 0; r < sizeof row_counts / sizeof *row_counts; r++) {
            if (!batchnorm_rows_take(row_counts[r], channel_counts[c], 1)) continue;
            check_cover(row_counts[r], channel_counts[c]);
            taken++;
        }
    printf("%d of the sweep's shapes take the rows kernels; all covered exactly\n", taken);
    CHECK(taken > 150);
    return test_exit_code("test_batchnorm_rows_split");
}
