// Images between NCHW and NHWC on the GPU (the layout_convert op; CPU reference:
// cpu_layout_convert in kernels/cpu/cpu_convert.c). An image is a channels x pixels matrix
// in NCHW and its transpose in NHWC, so the op is a batched transpose. Tiles of 32 x 32
// pass through shared memory so that both the reads and the writes of a warp touch
// consecutive addresses; the tile's row pitch of 33 puts a column's values in different
// banks. Values are widened to f32 in the tile and stored once, so a sum rounds once, as
// the CPU's does.
#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_storage.h"

enum { LAYOUT_TILE = 32, LAYOUT_TILE_ROWS = 8, LAYOUT_MAX_GRID_YZ = 65535 };

// Each image of src is rows x cols; dst gets the cols x rows transpose (plus dst's own
// values when accumulating). Images beyond the grid's depth, and row tiles beyond its
// height, are taken in turn: from NHWC the rows are pixels, and an image of more than
// 65,535 tiles of 32 (about 1448 x 1448 pixels) would not fit the grid's y dimension.
template <typename T>
__global__ static void layout_transpose_kernel(const T *src, T *dst, int images, int rows,
                                               int cols, int accumulate) {
    __shared__ float tile[LAYOUT_TILE][LAYOUT_TILE + 1];
    size_t image_size = (size_t)rows * cols;
    int col0 = blockIdx.x * LAYOUT_TILE;
    for (int image = blockIdx.z; image < images; image += gridDim.z) {
        const T *in = src + image * image_size;
        T *out = dst + image * image_size;
        for (int row0 = blockIdx.y * LAYOUT_TILE; row0 < rows; row0 += gridDim.y * LAYOUT_TILE) {
            for (int k = threadIdx.y; k < LAYOUT_TILE; k += LAYOUT_TILE_ROWS) {
                int row = row0 + k, col = col0 + threadIdx.x;
                if (row < rows && col < cols)
                    tile[k][threadIdx.x] = storage_load(in, (size_t)row * cols + col);
            }
            __syncthreads();
            // The output's row is the input's column: a warp writes one output row's run.
            for (int k = threadIdx.y; k < LAYOUT_TILE; k += LAYOUT_TILE_ROWS) {
                int out_row = col0 + k, out_col = row0 + threadIdx.x;
                if (out_row < cols && out_col < rows) {
                    size_t at = (size_t)out_row * rows + out_col;
                    float value = tile[threadIdx.x][k];
                    if (accumulate) value = storage_load(out, at) + value;
                    storage_store(out, at, value);
                }
            }
            __syncthreads();  // the tile is refilled for the next row tile or image
        }
    }
}

template <typename T>
static int launch_layout_transpose(const CudaContext *ctx, const T *src, T *dst, int images,
                                   int rows, int cols, int accumulate, Status *st) {
    dim3 block(LAYOUT_TILE, LAYOUT_TILE_ROWS);
    int row_tiles = (rows + LAYOUT_TILE - 1) / LAYOUT_TILE;
    dim3 grid((unsigned)((cols + LAYOUT_TILE - 1) / LAYOUT_TILE),
              (unsigned)(row_tiles < LAYOUT_MAX_GRID_YZ ? row_tiles : LAYOUT_MAX_GRID_YZ),
              (unsigned)(images < LAYOUT_MAX_GRID_YZ ? images : LAYOUT_MAX_GRID_YZ));
    CUDA_CHECK_CONFIG(ctx, "layout_transpose_kernel", grid, block, 0,
                      (size_t)images * rows * cols, 64);
    layout_transpose_kernel<T><<<grid, block, 0, ctx->stream>>>(src, dst, images, rows, cols,
                                                                accumulate);
    CUDA_CHECK_LAUNCH("layout_transpose_kernel");
    return 0;
}

static int cuda_layout_convert(const Backend *b, const LayoutConvertArgs *args, Status *st) {
    TRY(backend_layout_convert_check(b, args->dtype, args->n, args->channels, args->pixels,
                                     args->from, st));
    if (args->n == 0 || args->channels == 0 || args->pixels == 0) return 0;
    const CudaContext *ctx = cuda_context(b);
    // NCHW -> NHWC transposes each channels x pixels image; NHWC -> NCHW the reverse.
    int rows = args->from == LAYOUT_NCHW ? args->channels : args->pixels;
    int cols = args->from == LAYOUT_NCHW ? args->pixels : args->channels;
    int rc = 0;
    CUDA_STORAGE_DISPATCH(args->dtype,
                          rc = launch_layout_transpose(ctx, (const storage_t *)args->src,
                                                       (storage_t *)args->dst, args->n, rows, cols,
                                                       args->accumulate != 0, st));
    return rc;
}

void cuda_register_layout_ops(Backend *table) { table->layout_convert = cuda_layout_convert; }
