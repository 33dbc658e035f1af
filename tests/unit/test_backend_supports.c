// `supports` (kernels/backend.h) against the table of tests/supports_expected.h, for the
// CPU and GPUs of compute capability 6.0 to 9.0, without a GPU: backend_supports_on is
// the pure function both backends answer from (the CUDA backend with its card's compute
// capability). Also: the precision floors agree with the table, and a GEMM op's refusal
// (backend_matmul_check) says what `supports` says no to.
#include "check.h"
#include "supports_expected.h"

static const Layout layouts[] = {LAYOUT_NCHW, LAYOUT_NHWC};
static const Layout unknown_layout = (Layout)7;

// Every family and dtype has exactly one row, so a new dtype or family needs its answers
// written down before this passes.
static void table_is_complete(void) {
    for (int f = 0; f < OP_FAMILY_COUNT; f++)
        for (int d = 0; d < DTYPE_COUNT; d++)
            if (!supports_row((OpFamily)f, (DType)d)) {
                fprintf(stderr, "FAIL: supports_expected.h has no row for family %d, %s\n", f,
                        dtype_name((DType)d));
                test_failures++;
            }
    CHECK_INT_EQ(SUPPORTS_ROWS, OP_FAMILY_COUNT * DTYPE_COUNT);
}

static void answers_match_the_table(void) {
    for (int c = 0; c < SUPPORTS_COLUMNS; c++)
        for (int r = 0; r < SUPPORTS_ROWS; r++)
            for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
                const SupportsRow *row = &supports_expected[r];
                int got = backend_supports_on(supports_columns[c], row->family, row->dtype,
                                              layouts[l]);
                if (got == row->answer[c]) continue;
                fprintf(stderr, "FAIL: backend_supports_on(%d, family %d, %s, %s) = %d, want %d\n",
                        supports_columns[c], (int)row->family, dtype_name(row->dtype),
                        layout_name(layouts[l]), got, row->answer[c]);
                test_failures++;
            }
}

// A layout or family that is neither of the known ones is refused everywhere, even for
// what is otherwise always supported.
static void unknown_layouts_and_families_are_refused(void) {
    for (int c = 0; c < SUPPORTS_COLUMNS; c++)
        for (int d = 0; d < DTYPE_COUNT; d++) {
            CHECK_INT_EQ(backend_supports_on(supports_columns[c], OP_FAMILY_STORAGE, (DType)d,
                                             unknown_layout), 0);
            CHECK_INT_EQ(backend_supports_on(supports_columns[c], OP_FAMILY_MATMUL, (DType)d,
                                             unknown_layout), 0);
            CHECK_INT_EQ(backend_supports_on(supports_columns[c], OP_FAMILY_COUNT, (DType)d,
                                             LAYOUT_NCHW), 0);
        }
}

// The CPU backend's slot answers as the table's CPU column.
static void cpu_backend_answers_its_column(void) {
    const Backend *host = cpu_backend();
    for (int r = 0; r < SUPPORTS_ROWS; r++)
        for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
            const SupportsRow *row = &supports_expected[r];
            int got = host->supports(host, row->family, row->dtype, layouts[l]);
            if (got == row->answer[0]) continue;
            fprintf(stderr, "FAIL: cpu supports(family %d, %s, %s) = %d, want %d\n",
                    (int)row->family, dtype_name(row->dtype), layout_name(layouts[l]), got,
                    row->answer[0]);
            test_failures++;
        }
}

// What precision_check and the device opener ask: bf16 and fp16 as the table's MATMUL
// rows of their dtypes; fp32, tf32 and the default on every device.
static void precision_floors_match_the_table(void) {
    for (int c = 0; c < SUPPORTS_COLUMNS; c++) {
        int compute = supports_columns[c];
        CHECK_INT_EQ(backend_precision_supported_on(compute, PRECISION_BF16),
                     supports_row(OP_FAMILY_MATMUL, DTYPE_BF16)->answer[c]);
        CHECK_INT_EQ(backend_precision_supported_on(compute, PRECISION_FP16),
                     supports_row(OP_FAMILY_MATMUL, DTYPE_F16)->answer[c]);
        CHECK(backend_precision_supported_on(compute, PRECISION_FP32));
        CHECK(backend_precision_supported_on(compute, PRECISION_TF32));
        CHECK(backend_precision_supported_on(compute, PRECISION_DEFAULT));
    }
}

// A card the table does not list reads the newest listed column below it.
static void unlisted_cards_read_the_column_below(void) {
    CHECK_INT_EQ(supports_column(0), 0);
    CHECK_INT_EQ(supports_columns[supports_column(75)], 75);
    CHECK_INT_EQ(supports_columns[supports_column(89)], 86);
    CHECK_INT_EQ(supports_columns[supports_column(100)], 90);
    CHECK_INT_EQ(supports_columns[supports_column(120)], 90);
    CHECK_INT_EQ(supports_column(52), -1);
}

// A backend that answers `supports` as a GPU of one compute capability, as the CUDA backend
// does (cuda_backend.cu's cuda_supports, from the `compute` it fills in); the rest of the
// table is the CPU's, unused here.
static int gpu_supports(const Backend *b, OpFamily f, DType d, Layout l) {
    return backend_supports_on(b->compute, f, d, l);
}

static int matmul_check(const Backend *b, DType dtype, Status *st) {
    status_clear(st);
    return backend_matmul_check(b, dtype, "gemm", st);
}

// The CUDA GEMMs refuse what `supports` says no to, naming the op, the device with its
// compute capability, the dtype and the floor, with the device opener's hint.
static void matmul_check_refuses_what_supports_refuses(void) {
    Backend turing = *cpu_backend(), pascal = *cpu_backend();
    turing.name = "cuda:0";
    turing.compute = 75;
    turing.supports = gpu_supports;
    pascal.name = "cuda:1";
    pascal.compute = 60;
    pascal.supports = gpu_supports;
    Status st;
    CHECK_INT_EQ(matmul_check(&turing, DTYPE_F32, &st), 0);
    CHECK_INT_EQ(matmul_check(&turing, DTYPE_F16, &st), 0);
    CHECK_INT_EQ(matmul_check(&turing, DTYPE_BF16, &st), STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "gemm: cuda:0 (compute capability 7.5) cannot multiply operands "
                               "stored as bf16");
    CHECK_CONTAINS(st.message, "compute capability 8.0 or newer");
    CHECK_CONTAINS(st.hint, "use precision fp32 on this GPU, or a GPU of compute capability 8.0+");
    CHECK_INT_EQ(matmul_check(&pascal, DTYPE_F32, &st), 0);
    CHECK_INT_EQ(matmul_check(&pascal, DTYPE_F16, &st), STATUS_NO_DEVICE);
    CHECK_CONTAINS(st.message, "gemm: cuda:1 (compute capability 6.0) cannot multiply operands "
                               "stored as f16");
    CHECK_CONTAINS(st.hint, "compute capability 7.0+");
    // Every answer of the table's 6.0 and 7.5 columns, refused exactly where it says no.
    for (int d = DTYPE_F32; d <= DTYPE_BF16; d++) {
        const SupportsRow *row = supports_row(OP_FAMILY_MATMUL, (DType)d);
        CHECK_INT_EQ(matmul_check(&pascal, (DType)d, &st) == 0, row->answer[supports_column(60)]);
        CHECK_INT_EQ(matmul_check(&turing, (DType)d, &st) == 0, row->answer[supports_column(75)]);
    }
}

int main(void) {
    table_is_complete();
    answers_match_the_table();
    unknown_layouts_and_families_are_refused();
    cpu_backend_answers_its_column();
    precision_floors_match_the_table();
    unlisted_cards_read_the_column_below();
    matmul_check_refuses_what_supports_refuses();
    return test_exit_code("test_backend_supports");
}
