// `trainer check`'s report, composed here and written to the caller's TextOut: the model's
// layer table, optimizer, fusion and layouts; the memory plan in detail; the largest batch
// that fits. tools/cmd_check.c opens the run, plans and prints the precision between them.
#ifndef TRAINER_CHECK_REPORT_H
#define TRAINER_CHECK_REPORT_H

#include "base/status.h"
#include "base/text_out.h"
#include "core/device.h"
#include "core/graph.h"
#include "core/memory_plan.h"
#include "core/run_config.h"

// "model FILE: valid, ...", the layer table, the optimizer and train lines, which
// activations are fused and which layers hold NHWC. Fails only out of host memory.
int check_write_model(const TextOut *out, Graph *g, const RunConfig *config,
                      const Device *device, Status *st);
// The plan's one-line summary, then its categories and each layer's bytes. `have_data`:
// --data was read, so the dataset's device copies are planned.
void check_write_plan(const TextOut *out, const RunConfig *config, const MemoryPlan *plan,
                      int have_data);
// The largest batch for --memory-limit, or for the device's total memory less a margin.
int check_write_largest_batch(const TextOut *out, const Graph *g, const Device *device,
                              const MemoryPlanOptions *base, Status *st);

#endif
