// --sync-check pins an asynchronous kernel error to the layer that caused it (issue 5).
// A fault is planted in the forward pass of one layer, 'boom': the kernel launch succeeds
// and the illegal address surfaces only at the next synchronizing call. With
// sync_check the graph waits after every layer, so the error names 'boom', its phase and
// its model-file line. (Without it, CUDA would report the error at whatever call syncs
// next: a later layer's, or the loss read.)
//
// The planted fault leaves the CUDA context unusable, so this test runs one scenario per
// process. Skipped (77) when cuda:0 does not open.
#include <string.h>

#include "check.h"
#include "core/device.h"
#include "core/graph.h"
#include "kernels/cuda/cuda_fault.h"
#include "models/model_file.h"

static const Backend *real_backend;

// relu forward as usual, then the planted fault on the same stream.
static int faulty_activation_forward(const Backend *b, const ActivationForwardArgs *args,
                                     Status *st) {
    TRY(real_backend->activation_forward(real_backend, args, st));
    return cuda_plant_out_of_bounds_write(real_backend, st);
}

int main(void) {
    Status st;
    status_clear(&st);
    Device d;
    char notice[256];
    DeviceOptions options = {.spec = "cuda:0", .mode = ALLOC_GROW};
    if (device_open(&options, &d, notice, sizeof notice, &st)) {
        printf("SKIP: no usable GPU: %s\n", st.message);
        return 77;
    }
    ModelFile file;
    Graph g;
    int rc = model_file_parse_text("planted.model",
                                   "input shape=8\n"
                                   "dense units=16\n"
                                   "relu name=boom\n"
                                   "dense units=4\n"
                                   "loss softmax_cross_entropy\n",
                                   &file, &st);
    if (!rc) rc = graph_build(&file, &g, NULL, &st);
    if (!rc) rc = graph_init_params(&g, d.backend, &d.alloc, 1, &st);
    if (!rc) rc = graph_allocate(&g, d.backend, &d.alloc, 4, NULL, &st);
    CHECK_INT_EQ(rc, 0);
    if (rc) return test_exit_code("test_sync_check");
    // Every op as the device has it, except the activation, which plants the fault.
    real_backend = d.backend;
    Backend planted = *d.backend;
    planted.activation_forward = faulty_activation_forward;
    LayerContext ctx = {.backend = &planted, .alloc = &d.alloc, .batch = 4, .training = 1,
                        .labels = (const int32_t *)g.labels.data, .sync_check = 1};
    const int32_t labels[4] = {0, 1, 2, 3};
    CHECK_INT_EQ(d.backend->fill(d.backend, tensor_f32(&g.input->output), 0.5f, 4 * 8, &st), 0);
    CHECK_INT_EQ(d.backend->copy_to_device(d.backend, g.labels.data, labels, sizeof labels, &st), 0);
    rc = graph_forward(&g, &ctx, &st);
    char text[2400];
    status_format(&st, text, sizeof text);
    printf("%s", text);
    CHECK(rc != 0);
    CHECK_CONTAINS(st.message, "forward of layer 'boom'");
    CHECK_CONTAINS(st.message, "cudaErrorIllegalAddress");
    CHECK_INT_EQ(st.line, 3);
    // The process ends here: its CUDA context is gone, so nothing is freed on the device.
    return test_exit_code("test_sync_check");
}
