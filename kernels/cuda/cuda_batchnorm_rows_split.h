// How cuda_batchnorm_rows.cu cuts a [rows, channels] shape over its blocks, and whether it
// takes the shape at all: plain C with no CUDA type, so that tests without a GPU check the
// cut (tests/unit/test_batchnorm_rows_split.c) and the GPU tests check that the shapes they
// give the rows kernels really reach them (with the CPU standing in, on every build).
#ifndef TRAINER_CUDA_BATCHNORM_ROWS_SPLIT_H
#define TRAINER_CUDA_BATCHNORM_ROWS_SPLIT_H

#include <stddef.h>

#define ROWS_THREADS 256
// Values per block: 64 per thread, as CHANNEL_CHUNK (cuda_channel_reduce.h), for the same
// reason: enough work to hide a block's reduction and its writes.
#define ROWS_BLOCK_VALUES ((long long)ROWS_THREADS * 64)
// Below this many values (1 MiB of floats, well inside L2) a step is launch-bound, and the
// one-block-per-channel kernel's single launch wins whatever its loads cost. A judgement
// from the launch counts, not a measurement.
#define ROWS_MIN_VALUES ((long long)1 << 18)
// The grid's y and z limit, which CUDA_MAX_BLOCKS also is (cuda_internal.h; the .cu checks
// that the two agree).
#define ROWS_MAX_BLOCKS 65535LL
// The context's scratch for partials, CUDA_PARTIALS_BYTES (checked in the .cu too). Each
// of a pass's two reductions owns half of it: [channels][chunks] partials, then the
// channels' totals.
#define ROWS_PARTIALS_BYTES ((size_t)1 << 20)
#define ROWS_ROOM (ROWS_PARTIALS_BYTES / (2 * sizeof(double)))

// How a shape is cut: gridDim = (chunks, tiles).
typedef struct RowSplit {
    int tiles;             // blocks across the channels
    int width;             // channels per tile
    int lanes;             // threads per channel in a block: ROWS_THREADS / width
    int threads;           // per block: lanes * width rounded up to whole warps
    int chunks;            // blocks down the rows; 0: the shape does not fit the scratch
    long long chunk_rows;  // rows per block (the last chunk may have fewer)
} RowSplit;

// Tiles as even as they can be (600 channels: three of 200, not 256, 256 and 88), and
// chunks of about ROWS_BLOCK_VALUES values, fewer and longer where their partials and the
// totals would not fit in `room` doubles. So past 256 channels the scratch caps a pass at
// about room / 256 = 256 blocks (a 4096-feature batchnorm at batch 4096: 240, each thread
// walking 274 rows), where the one-block-per-channel kernels would launch 4096: which is
// faster there is not measured.
static inline RowSplit row_split(long long rows, int channels, size_t room) {
    RowSplit s = {0, 0, 0, 0, 0, 0};
    if (rows <= 0 || channels <= 0) return s;
    s.tiles = (channels + ROWS_THREADS - 1) / ROWS_THREADS;
    s.width = (channels + s.tiles - 1) / s.tiles;
    s.lanes = ROWS_THREADS / s.width;
    // A tile of 129 to 256 channels has one lane: launching 256 threads would leave up to
    // 127 of them idle at every barrier.
    s.threads = (s.lanes * s.width + 31) / 32 * 32;
    long long chunk_rows = ROWS_BLOCK_VALUES / s.width;
    long long chunks = (rows + chunk_rows - 1) / chunk_rows;
    long long fit = (long long)(room / (size_t)channels) - 1;
    if (chunks > fit) chunks = fit;
    if (chunks > ROWS_MAX_BLOCKS) chunks = ROWS_MAX_BLOCKS;
    if (chunks < 1) return s;
    s.chunk_rows = (rows + chunks - 1) / chunks;
    // Rounding the chunk up may leave the last chunks empty (5377 rows in 84 chunks of 65):
    // count again, so every block has rows.
    s.chunks = (int)((rows + s.chunk_rows - 1) / s.chunk_rows);
    return s;
}

// Whether the rows kernels take a batchnorm of `n` samples, `channels` channels and
// `spatial` values per channel and sample, the batchnorm-split lever being on: spatial 1,
// several channels (up to 32 768, whose partials fit the scratch), and a tensor large
// enough to be worth their extra launches.
static inline int batchnorm_rows_take(long long n, int channels, long long spatial) {
    if (spatial != 1 || channels < 2 || n <= 0) return 0;
    if (n * channels < ROWS_MIN_VALUES) return 0;
    return row_split(n, channels, ROWS_ROOM).chunks >= 1;
}

#endif
