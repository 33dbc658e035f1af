// What `trainer doctor` and `trainer lab version-report` need to know about the CUDA stack:
// the driver, the libraries this binary was built against and those actually loaded (with
// their paths), the architectures compiled in, and every visible device. Only facts, no
// verdicts: tools/cmd_doctor.c decides what is wrong and what to do about it.
//
// Implemented in cuda_doctor.cu; without CUDA, or when trainer_cuda.so did not load, the
// loader's absent answer (cuda_entries.h) says which in backend_error, and nothing but the
// kernel module and environment is filled.
#ifndef TRAINER_CUDA_DOCTOR_H
#define TRAINER_CUDA_DOCTOR_H

#include <stddef.h>
#include <stdio.h>

#include "base/status.h"
#include "kernels/device_facts.h"

#ifdef __cplusplus
extern "C" {
#endif

// Collects every fact it can; a query that fails is recorded in the report (the error
// text), not returned, so the report is complete on a broken machine. Returns nonzero
// only when the report itself cannot be produced (never today).
int cuda_doctor_collect(DoctorReport *r, Status *st);

#ifdef __cplusplus
}
#endif

#endif
