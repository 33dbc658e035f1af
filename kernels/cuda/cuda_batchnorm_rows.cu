// Batch normalisation of channels-last rows: [rows, channels] with a row's channels next to
// each other, as BatchnormArgs gives NHWC images (rows = n * h * w, spatial 1:
// core/layers/batchnorm.c) and dense layers' features (rows = n).
//
// Why not cuda_batchnorm.cu's kernels. They give a channel to a block (or a chunk of a
// channel to each of many blocks), whose neighbouring threads read the channel's
// neighbouring values. With spatial 1 those values are `channels` floats apart, so a warp's
// 32 loads touch 32 sectors of 32 bytes for 128 useful bytes: cnn-bn at batch 1024 in NHWC
// (32 channels, 802 816 rows) ran at 0.479 of its NCHW speed on the H200, the batchnorm
// kernels reading one value per sector (docs/benchmarks.md, "NHWC images").
//
// How. A block takes a tile of `width` channels and a chunk of rows: thread t keeps channel
// t % width and walks rows t / width, t / width + lanes, ... (lanes = threads / width), so
// where the tile is every channel (up to 256 of them) a block's threads read consecutive
// values, row after row. Each thread sums its one channel; the block adds its lanes' sums
// per channel in lane order (rows_block_total) and writes a partial per (channel, chunk)
// into the context's scratch, [channels][chunks] doubles as in cuda_channel_reduce.h. A
// second launch, one block per channel, adds a channel's partials in chunk order into the
// channel's total, stored after the partials; the next pass reads the totals. Training
// forward is five launches (sums, totals, squared deviations, totals, normalise), backward
// three (the two sums, their totals, dx with dgamma and dbeta): more than the NCHW layout's
// three and two, each a pass over a channel count of doubles, not over the tensor.
// --sync-batchnorm's ops have rows versions too (a share's sums; the passes that finish
// from the sums over the ranks).
//
// Deterministic: a shape fixes the split, each thread's rows and every order of addition,
// so it gives the same bits every run (no atomics); the order differs from the CPU's
// row-by-row sums, so the two agree to rounding. The elementwise part rounds each value as
// the CPU does (cuda_batchnorm_math.h).
#include "kernels/cuda/cuda_batchnorm_math.h"
#include "kernels/cuda/cuda_batchnorm_rows.h"
#include "kernels/cuda/cuda_batchnorm_rows_split.h"
#include "kernels/cuda/cuda_channel_reduce.h"
#include "kernels/cuda/cuda_storage.h"

#define ROWS_SHARED_BYTES (ROWS_THREADS * sizeof(double))
static_assert(ROWS_MAX_BLOCKS == (long long)CUDA_MAX_BLOCKS, "the split's grid limit");
static_assert(ROWS_PARTIALS_BYTES == CUDA_PARTIALS_BYTES, "the split's scratch");

int batchnorm_rows_apply(const CudaContext *ctx, const BatchnormArgs *a) {
    if (lever_off(ctx->disabled_levers, LEVER_BATCHNORM_SPLIT)) return 0;
    return batchnorm_rows_take(a->n, a->channels, a->spatial);
}

// ---- the kernels' walk over their values -------------------------------------------------

// This thread's channel and rows [row, end) stepped by lanes. A thread past the tile's
// channels or the block's lanes gets an empty range: it still takes part in the block's
// reductions, adding zero.
struct RowCursor {
    int c;
    long long row, end;
};

__device__ static inline RowCursor row_cursor(const RowSplit &s, int channels, long long rows) {
    RowCursor cur;
    int lane = (int)threadIdx.x / s.width;
    cur.c = (int)blockIdx.y * s.width + (int)threadIdx.x % s.width;
    long long first = (long long)blockIdx.x * s.chunk_rows;
    cur.end = first + s.chunk_rows < rows ? first + s.chunk_rows : rows;
    cur.row = first + lane;
    if (lane >= s.lanes || cur.c >= channels) cur.row = cur.end;
    return cur;
}

__device__ static inline size_t row_at(const RowCursor &cur, int channels) {
    return (size_t)cur.row * (size_t)channels + (size_t)cur.c;
}

// Whether this thread writes its channel's once-per-channel results (the first lane of the
// first chunk).
__device__ static inline int row_channel_writer(const RowSplit &s, int channels) {
    return blockIdx.x == 0 && (int)threadIdx.x < s.width &&
           (int)blockIdx.y * s.width + (int)threadIdx.x < channels;
}

// The block's sum of v per channel, lane 0's value first, then lane 1's, ...: returned to
// the threads of lane 0 (the others get 0). A serial walk over the lanes: at most 128 adds
// (two channels), next to the block's 16 384 loads. Every thread must call it.
__device__ static inline double rows_block_total(double v, double *shared, const RowSplit &s) {
    shared[threadIdx.x] = v;
    __syncthreads();
    double total = 0.0;
    if ((int)threadIdx.x < s.width)
        for (int lane = 0; lane < s.lanes; lane++) total += shared[lane * s.width + threadIdx.x];
    __syncthreads();  // read before the caller's next total overwrites shared
    return total;
}

// Lane 0's store of the block's partial of its channel.
__device__ static inline void store_partial(double total, double *partials, const RowSplit &s,
                                            int channels) {
    int c = (int)blockIdx.y * s.width + (int)threadIdx.x;
    if ((int)threadIdx.x < s.width && c < channels)
        partials[(size_t)c * gridDim.x + blockIdx.x] = total;
}

// Where a reduction's totals lie: after its [channels][chunks] partials.
__host__ __device__ static inline double *row_totals(double *partials, int channels,
                                                     int chunks) {
    return partials + (size_t)channels * (size_t)chunks;
}

// y = x * scale + shift over this thread's rows (y may alias x: each element is read and
// then written by the same thread).
template <typename T>
__device__ static inline void rows_normalise(const T *x, T *y, RowCursor cur, int channels,
                                             const RowSplit &s, ChannelAffine a) {
    for (; cur.row < cur.end; cur.row += s.lanes) {
        size_t at = row_at(cur, channels);
        storage_store(y, at, normalise(storage_load(x, at), a.scale, a.shift));
    }
}

// dx over this thread's rows from its channel's constants (input_gradient), added to what
// dx holds when accumulating. dx may alias dy, as y may alias x.
template <typename T>
__device__ static inline void rows_input_gradients(const T *x, const T *dy, T *dx, RowCursor cur,
                                                   int channels, const RowSplit &s, float mean,
                                                   float invstd, float scale, float mean_dy,
                                                   float mean_dy_xhat, int accumulate_dx) {
    for (; cur.row < cur.end; cur.row += s.lanes)
        store_input_gradient(x, dy, dx, row_at(cur, channels), mean, invstd, scale, mean_dy,
                             mean_dy_xhat, accumulate_dx);
}

// ---- training forward ---------------------------------------------------------------------

// Pass 1: each (chunk, channel)'s sum.
template <typename T>
__global__ static void __launch_bounds__(ROWS_THREADS)
rows_sum_partial_kernel(const T *x, int channels, long long rows, RowSplit s, double *sums) {
    __shared__ double shared[ROWS_THREADS];
    double sum = 0.0;
    for (RowCursor cur = row_cursor(s, channels, rows); cur.row < cur.end; cur.row += s.lanes)
        sum += (double)storage_load(x, row_at(cur, channels));
    store_partial(rows_block_total(sum, shared, s), sums, s, channels);
}

// Passes 2 and 4 (and backward's 2): channel blockIdx.x's total of one or two reductions'
// partials (blockIdx.y picks first or second), in chunk order.
__global__ static void __launch_bounds__(CHANNEL_REDUCE_THREADS)
rows_totals_kernel(double *first, double *second, int channels, int chunks) {
    __shared__ double shared[CHANNEL_REDUCE_THREADS / 32];
    double *partials = blockIdx.y ? second : first;
    int c = blockIdx.x;
    double total = channel_partials_total(partials + (size_t)c * chunks, chunks, shared);
    if (threadIdx.x == 0) row_totals(partials, channels, chunks)[c] = total;
}

// Pass 3: each (chunk, channel)'s squared deviations from the channel's mean (the two-pass
// variance, as the CPU computes it).
template <typename T>
__global__ static void __launch_bounds__(ROWS_THREADS)
rows_squares_partial_kernel(const T *x, int channels, long long rows, RowSplit s,
                            const double *sum_totals, double *squares) {
    __shared__ double shared[ROWS_THREADS];
    RowCursor cur = row_cursor(s, channels, rows);
    double mean = cur.row < cur.end ? sum_totals[cur.c] / (double)rows : 0.0;
    double sum = 0.0;
    for (; cur.row < cur.end; cur.row += s.lanes) {
        double d = (double)storage_load(x, row_at(cur, channels)) - mean;
        sum += d * d;
    }
    store_partial(rows_block_total(sum, shared, s), squares, s, channels);
}

// Pass 5, and evaluation's only pass: y = x * scale + shift with the channel's constants.
// Training (sum_totals set) takes them from the batch, saves them and moves the running
// statistics; evaluation takes the running statistics and saves them where asked. y may
// alias x: each element is read and then written by the same thread.
template <typename T>
__global__ static void __launch_bounds__(ROWS_THREADS)
rows_normalise_kernel(const T *x, T *y, const float *gamma, const float *beta,
                      float *running_mean, float *running_var, float *save_mean,
                      float *save_invstd, int channels, long long rows, RowSplit s,
                      const double *sum_totals, const double *square_totals, float momentum,
                      float eps) {
    RowCursor cur = row_cursor(s, channels, rows);
    int writer = row_channel_writer(s, channels);
    if (cur.row >= cur.end && !writer) return;
    int c = cur.c;
    float mean, invstd;
    if (sum_totals) {
        double count = (double)rows, mean_double = sum_totals[c] / count;
        mean = (float)mean_double;
        invstd = (float)channel_invstd(square_totals[c], count, eps);
        if (writer)
            keep_statistics(c, mean_double, square_totals[c], count, momentum, eps, save_mean,
                            save_invstd, running_mean, running_var);
    } else {
        mean = running_mean[c];
        invstd = (float)(1.0 / sqrt((double)running_var[c] + (double)eps));
        if (writer && save_mean) save_mean[c] = mean;
        if (writer && save_invstd) save_invstd[c] = invstd;
    }
    ChannelAffine a = channel_affine(mean, invstd, gamma[c], beta[c]);
    rows_normalise(x, y, cur, channels, s, a);
}

// ---- backward -----------------------------------------------------------------------------

// Backward's pass 1, and --sync-batchnorm's share sums: each (chunk, channel)'s sum of dy
// and of dy * xhat, or, with dy NULL, of x and of x^2 (add_share_value).
template <typename T>
__global__ static void __launch_bounds__(ROWS_THREADS)
rows_pair_partial_kernel(const T *x, const T *dy, const float *save_mean,
                         const float *save_invstd, int channels, long long rows, RowSplit s,
                         double *firsts, double *seconds) {
    __shared__ double shared[ROWS_THREADS];
    RowCursor cur = row_cursor(s, channels, rows);
    float mean = 0.0f, invstd = 0.0f;
    if (dy && cur.row < cur.end) {
        mean = save_mean[cur.c];
        invstd = save_invstd[cur.c];
    }
    double first = 0.0, second = 0.0;
    for (; cur.row < cur.end; cur.row += s.lanes)
        add_share_value(x, dy, row_at(cur, channels), mean, invstd, &first, &second);
    store_partial(rows_block_total(first, shared, s), firsts, s, channels);
    store_partial(rows_block_total(second, shared, s), seconds, s, channels);
}

// Pass 3: dgamma and dbeta from the totals (the first chunk's lane 0), and, unless dx is
// NULL (then the grid is one chunk), dx over every chunk. dx may alias dy: pass 1 has read
// all of dy, and here each element is read and then written by the same thread.
template <typename T>
__global__ static void __launch_bounds__(ROWS_THREADS)
rows_backward_data_kernel(const T *x, const T *dy, const float *gamma, const float *save_mean,
                          const float *save_invstd, T *dx, float *dgamma, float *dbeta,
                          int channels, long long rows, RowSplit s, const double *totals_dy,
                          const double *totals_dy_xhat, int batch_statistics,
                          int accumulate_dx, int accumulate_params) {
    RowCursor cur = row_cursor(s, channels, rows);
    int c = cur.c;
    if (row_channel_writer(s, channels))
        write_param_gradients(c, totals_dy[c], totals_dy_xhat[c], accumulate_params, dgamma,
                              dbeta);
    if (!dx || cur.row >= cur.end) return;
    float mean = save_mean[c], invstd = save_invstd[c], scale = gamma[c] * invstd;
    float mean_dy = batch_statistics ? (float)(totals_dy[c] / (double)rows) : 0.0f;
    float mean_dy_xhat = batch_statistics ? (float)(totals_dy_xhat[c] / (double)rows) : 0.0f;
    rows_input_gradients(x, dy, dx, cur, channels, s, mean, invstd, scale, mean_dy, mean_dy_xhat,
                         accumulate_dx);
}

// ---- --sync-batchnorm: a share's sums, and the passes that finish from the summed ones -----
//
// As cuda_batchnorm.cu's: each rank sums its share, the caller adds the sums over the ranks
// (NCCL), and the elementwise passes take the statistics from the totals. A rank whose
// share is empty runs cuda_batchnorm.cu's kernels (batchnorm_rows_apply wants rows).

// The share's totals into `sums` as keep_share_sums lays them out, the count after them;
// backward (dgamma set) also writes the share's dgamma and dbeta.
__global__ static void rows_share_store_kernel(const double *first_totals,
                                               const double *second_totals, double *sums,
                                               float *dgamma, float *dbeta, int channels,
                                               long long rows, int accumulate_params) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < channels;
         c += gridDim.x * blockDim.x)
        keep_share_sums(c, channels, first_totals[c], second_totals[c], sums, dgamma, dbeta,
                        accumulate_params);
    if (blockIdx.x == 0 && threadIdx.x == 0) sums[2 * channels] = (double)rows;
}

// Training forward from the summed statistics (this rank holds rows, so the count is at
// least 1); the first lane of the first chunk saves them and moves the running ones.
template <typename T>
__global__ static void __launch_bounds__(ROWS_THREADS)
rows_normalise_with_sums_kernel(const T *x, T *y, const float *gamma, const float *beta,
                                const double *sums, float *running_mean, float *running_var,
                                float *save_mean, float *save_invstd, int channels,
                                long long rows, RowSplit s, float momentum, float eps) {
    RowCursor cur = row_cursor(s, channels, rows);
    int writer = row_channel_writer(s, channels);
    if (cur.row >= cur.end && !writer) return;
    int c = cur.c;
    double m = sums[2 * channels];
    SummedStatistics stats = summed_statistics(sums, c, channels, m, eps);
    if (writer)
        keep_summed_statistics(c, stats, m, momentum, save_mean, save_invstd, running_mean,
                               running_var);
    ChannelAffine a = channel_affine((float)stats.mean, stats.invstd, gamma[c], beta[c]);
    rows_normalise(x, y, cur, channels, s, a);
}

// dx from the summed sum dy and sum dy * xhat.
template <typename T>
__global__ static void __launch_bounds__(ROWS_THREADS)
rows_input_gradient_with_sums_kernel(const T *x, const T *dy, const float *gamma,
                                     const float *save_mean, const float *save_invstd,
                                     const double *sums, T *dx, int channels, long long rows,
                                     RowSplit s, int accumulate_dx) {
    RowCursor cur = row_cursor(s, channels, rows);
    if (cur.row >= cur.end) return;
    int c = cur.c;
    double m = sums[2 * channels];
    float mean = save_mean[c], invstd = save_invstd[c], scale = gamma[c] * invstd;
    float mean_dy = (float)(sums[c] / m), mean_dy_xhat = (float)(sums[channels + c] / m);
    rows_input_gradients(x, dy, dx, cur, channels, s, mean, invstd, scale, mean_dy, mean_dy_xhat,
                         accumulate_dx);
}

// ---- the launches -------------------------------------------------------------------------

static size_t rows_elements(const BatchnormArgs *a) {
    return (size_t)a->n * (size_t)a->channels;
}

// The split of a shape batchnorm_rows_apply accepted.
static int rows_split_for(const BatchnormArgs *a, const char *op, RowSplit *s, Status *st) {
    *s = row_split(a->n, a->channels, ROWS_ROOM);
    if (a->spatial == 1 && s->chunks >= 1) return 0;
    status_fail(st, STATUS_RUNTIME_ERROR,
                "%s: n=%d channels=%d spatial=%d is not a shape for the rows kernels", op, a->n,
                a->channels, a->spatial);
    // cuda_batchnorm.cu hands over only what batchnorm_rows_apply accepted.
    status_hint(st, "this is a bug in trainer; please report it with the model file");
    return STATUS_RUNTIME_ERROR;
}

// The totals of one reduction (second NULL) or two, from their partials.
static int rows_totals(CudaContext *ctx, const BatchnormArgs *a, const RowSplit &s,
                       double *first, double *second, Status *st) {
    dim3 grid((unsigned)a->channels, second ? 2u : 1u);
    CUDA_CHECK_CONFIG(ctx, "rows_totals_kernel", grid, CHANNEL_REDUCE_THREADS,
                      CHANNEL_REDUCE_THREADS / 32 * sizeof(double),
                      (size_t)a->channels * (size_t)s.chunks, 64);
    rows_totals_kernel<<<grid, CHANNEL_REDUCE_THREADS, 0, ctx->stream>>>(
        first, second ? second : first, a->channels, s.chunks);
    CUDA_CHECK_LAUNCH("rows_totals_kernel");
    return 0;
}

// What every launch below sets up: the shape's split, the (chunk, tile) grid, and the two
// halves of the context's scratch, where the reducing passes keep their partials.
struct RowsPass {
    RowSplit s;
    dim3 grid;
    double *first, *second;
};

static int rows_pass(CudaContext *ctx, const BatchnormArgs *a, const char *op, RowsPass *p,
                     Status *st) {
    TRY(rows_split_for(a, op, &p->s, st));
    p->grid = dim3((unsigned)p->s.chunks, (unsigned)p->s.tiles);
    p->first = (double *)ctx->partials;
    p->second = p->first + ROWS_ROOM;
    return 0;
}

// A pair of sums per channel (rows_pair_partial_kernel) into their totals, in the scratch's
// two halves.
template <typename T>
static int rows_pair_sums(CudaContext *ctx, const BatchnormArgs *a, const RowsPass &p,
                          const T *x, const T *dy, const float *save_mean,
                          const float *save_invstd, Status *st) {
    CUDA_CHECK_CONFIG(ctx, "rows_pair_partial_kernel", p.grid, p.s.threads, ROWS_SHARED_BYTES,
                      rows_elements(a), 64);
    rows_pair_partial_kernel<<<p.grid, p.s.threads, 0, ctx->stream>>>(
        x, dy, save_mean, save_invstd, a->channels, (long long)a->n, p.s, p.first, p.second);
    CUDA_CHECK_LAUNCH("rows_pair_partial_kernel");
    return rows_totals(ctx, a, p.s, p.first, p.second, st);
}

template <typename T>
static int rows_forward_training(CudaContext *ctx, const BatchnormArgs *a, const T *x, T *y,
                                 const float *gamma, const float *beta, float *running_mean,
                                 float *running_var, float *save_mean, float *save_invstd,
                                 Status *st) {
    RowsPass p;
    TRY(rows_pass(ctx, a, "batchnorm_forward_training", &p, st));
    int channels = a->channels;
    long long rows = a->n;
    const RowSplit &s = p.s;
    double *sums = p.first, *squares = p.second;
    size_t elements = rows_elements(a);
    CUDA_CHECK_CONFIG(ctx, "rows_sum_partial_kernel", p.grid, s.threads, ROWS_SHARED_BYTES,
                      elements, 64);
    rows_sum_partial_kernel<<<p.grid, s.threads, 0, ctx->stream>>>(x, channels, rows, s, sums);
    CUDA_CHECK_LAUNCH("rows_sum_partial_kernel");
    TRY(rows_totals(ctx, a, s, sums, NULL, st));
    double *sum_totals = row_totals(sums, channels, s.chunks);
    CUDA_CHECK_CONFIG(ctx, "rows_squares_partial_kernel", p.grid, s.threads,
                      ROWS_SHARED_BYTES, elements, 64);
    rows_squares_partial_kernel<<<p.grid, s.threads, 0, ctx->stream>>>(x, channels, rows, s,
                                                                           sum_totals, squares);
    CUDA_CHECK_LAUNCH("rows_squares_partial_kernel");
    TRY(rows_totals(ctx, a, s, squares, NULL, st));
    CUDA_CHECK_CONFIG(ctx, "rows_normalise_kernel", p.grid, s.threads, 0, elements, 64);
    rows_normalise_kernel<<<p.grid, s.threads, 0, ctx->stream>>>(
        x, y, gamma, beta, running_mean, running_var, save_mean, save_invstd, channels, rows, s,
        sum_totals, row_totals(squares, channels, s.chunks), a->momentum, a->eps);
    CUDA_CHECK_LAUNCH("rows_normalise_kernel");
    return 0;
}

template <typename T>
static int rows_forward_inference(CudaContext *ctx, const BatchnormArgs *a, const T *x, T *y,
                                  const float *gamma, const float *beta,
                                  const float *running_mean, const float *running_var,
                                  float *save_mean, float *save_invstd, Status *st) {
    RowsPass p;
    TRY(rows_pass(ctx, a, "batchnorm_forward_inference", &p, st));
    CUDA_CHECK_CONFIG(ctx, "rows_normalise_kernel", p.grid, p.s.threads, 0, rows_elements(a),
                      64);
    // Evaluation reads the running statistics and never writes them (sum_totals NULL).
    rows_normalise_kernel<<<p.grid, p.s.threads, 0, ctx->stream>>>(
        x, y, gamma, beta, (float *)running_mean, (float *)running_var, save_mean, save_invstd,
        a->channels, (long long)a->n, p.s, (const double *)NULL, (const double *)NULL,
        a->momentum, a->eps);
    CUDA_CHECK_LAUNCH("rows_normalise_kernel");
    return 0;
}

template <typename T>
static int rows_backward(CudaContext *ctx, const BatchnormArgs *a, const T *x, const T *dy,
                         const float *gamma, const float *save_mean, const float *save_invstd,
                         T *dx, float *dgamma, float *dbeta, Status *st) {
    RowsPass p;
    TRY(rows_pass(ctx, a, "batchnorm_backward", &p, st));
    int channels = a->channels;
    const RowSplit &s = p.s;
    TRY(rows_pair_sums(ctx, a, p, x, dy, save_mean, save_invstd, st));
    // Without dx only the first chunk's blocks have work: dgamma and dbeta.
    dim3 finish(dx ? (unsigned)s.chunks : 1u, (unsigned)s.tiles);
    CUDA_CHECK_CONFIG(ctx, "rows_backward_data_kernel", finish, s.threads, 0, rows_elements(a),
                      64);
    rows_backward_data_kernel<<<finish, s.threads, 0, ctx->stream>>>(
        x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta, channels, (long long)a->n, s,
        row_totals(p.first, channels, s.chunks), row_totals(p.second, channels, s.chunks),
        a->batch_statistics, a->accumulate_dx, a->accumulate_params);
    CUDA_CHECK_LAUNCH("rows_backward_data_kernel");
    return 0;
}

template <typename T>
static int rows_share_sums(CudaContext *ctx, const BatchnormArgs *a, const T *x, const T *dy,
                           const float *save_mean, const float *save_invstd, double *sums,
                           float *dgamma, float *dbeta, Status *st) {
    RowsPass p;
    TRY(rows_pass(ctx, a, dy ? "batchnorm_backward_channel_sums" : "batchnorm_channel_sums", &p,
                  st));
    TRY(rows_pair_sums(ctx, a, p, x, dy, save_mean, save_invstd, st));
    unsigned grid = cuda_blocks_for((size_t)a->channels);
    CUDA_CHECK_CONFIG(ctx, "rows_share_store_kernel", grid, CUDA_THREADS, 0,
                      (size_t)a->channels, 64);
    rows_share_store_kernel<<<grid, CUDA_THREADS, 0, ctx->stream>>>(
        row_totals(p.first, a->channels, p.s.chunks), row_totals(p.second, a->channels, p.s.chunks),
        sums, dgamma, dbeta, a->channels, (long long)a->n, a->accumulate_params);
    CUDA_CHECK_LAUNCH("rows_share_store_kernel");
    return 0;
}

template <typename T>
static int rows_forward_with_sums(CudaContext *ctx, const BatchnormArgs *a, const T *x, T *y,
                                  const float *gamma, const float *beta, const double *sums,
                                  float *running_mean, float *running_var, float *save_mean,
                                  float *save_invstd, Status *st) {
    RowsPass p;
    TRY(rows_pass(ctx, a, "batchnorm_forward_with_sums", &p, st));
    CUDA_CHECK_CONFIG(ctx, "rows_normalise_with_sums_kernel", p.grid, p.s.threads, 0,
                      rows_elements(a), 64);
    rows_normalise_with_sums_kernel<<<p.grid, p.s.threads, 0, ctx->stream>>>(
        x, y, gamma, beta, sums, running_mean, running_var, save_mean, save_invstd, a->channels,
        (long long)a->n, p.s, a->momentum, a->eps);
    CUDA_CHECK_LAUNCH("rows_normalise_with_sums_kernel");
    return 0;
}

template <typename T>
static int rows_backward_data_with_sums(CudaContext *ctx, const BatchnormArgs *a, const T *x,
                                        const T *dy, const float *gamma,
                                        const float *save_mean, const float *save_invstd,
                                        const double *sums, T *dx, Status *st) {
    RowsPass p;
    TRY(rows_pass(ctx, a, "batchnorm_backward_data_with_sums", &p, st));
    CUDA_CHECK_CONFIG(ctx, "rows_input_gradient_with_sums_kernel", p.grid, p.s.threads, 0,
                      rows_elements(a), 64);
    rows_input_gradient_with_sums_kernel<<<p.grid, p.s.threads, 0, ctx->stream>>>(
        x, dy, gamma, save_mean, save_invstd, sums, dx, a->channels, (long long)a->n, p.s,
        a->accumulate_dx);
    CUDA_CHECK_LAUNCH("rows_input_gradient_with_sums_kernel");
    return 0;
}

// ---- the entries, x, y, dy and dx stored as a->dtype ---------------------------------------

int batchnorm_rows_forward_training(CudaContext *ctx, const BatchnormArgs *a,
                                    const BatchnormForwardTensors *t, Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = rows_forward_training(
                                        ctx, a, (const storage_t *)t->x, (storage_t *)t->y,
                                        t->gamma, t->beta, t->running_mean, t->running_var,
                                        t->save_mean, t->save_invstd, st));
    return rc;
}

int batchnorm_rows_forward_inference(CudaContext *ctx, const BatchnormArgs *a,
                                     const BatchnormInferenceTensors *t, Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = rows_forward_inference(
                                        ctx, a, (const storage_t *)t->x, (storage_t *)t->y,
                                        t->gamma, t->beta, t->running_mean, t->running_var,
                                        t->save_mean, t->save_invstd, st));
    return rc;
}

int batchnorm_rows_backward(CudaContext *ctx, const BatchnormArgs *a, const void *x,
                            const void *dy, const float *gamma, const float *save_mean,
                            const float *save_invstd, void *dx, float *dgamma, float *dbeta,
                            Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = rows_backward(
                                        ctx, a, (const storage_t *)x, (const storage_t *)dy,
                                        gamma, save_mean, save_invstd, (storage_t *)dx, dgamma,
                                        dbeta, st));
    return rc;
}

int batchnorm_rows_share_sums(CudaContext *ctx, const BatchnormArgs *a, const void *x,
                              const void *dy, const float *save_mean, const float *save_invstd,
                              double *sums, float *dgamma, float *dbeta, Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = rows_share_sums(
                                        ctx, a, (const storage_t *)x, (const storage_t *)dy,
                                        save_mean, save_invstd, sums, dgamma, dbeta, st));
    return rc;
}

int batchnorm_rows_forward_with_sums(CudaContext *ctx, const BatchnormArgs *a, const void *x,
                                     void *y, const float *gamma, const float *beta,
                                     const double *sums, float *running_mean,
                                     float *running_var, float *save_mean, float *save_invstd,
                                     Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = rows_forward_with_sums(
                                        ctx, a, (const storage_t *)x, (storage_t *)y, gamma,
                                        beta, sums, running_mean, running_var, save_mean,
                                        save_invstd, st));
    return rc;
}

int batchnorm_rows_backward_data_with_sums(CudaContext *ctx, const BatchnormArgs *a,
                                           const void *x, const void *dy, const float *gamma,
                                           const float *save_mean, const float *save_invstd,
                                           const double *sums, void *dx, Status *st) {
    int rc = 0;
    CUDA_STORAGE_DISPATCH(a->dtype, rc = rows_backward_data_with_sums(
                                        ctx, a, (const storage_t *)x, (const storage_t *)dy,
                                        gamma, save_mean, save_invstd, sums, (storage_t *)dx,
                                        st));
    return rc;
}
