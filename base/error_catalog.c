// The error catalog's table and its lookups. Numbers come from the CUDA 13.0 headers
// (driver_types.h, cuda.h, cublas_api.h), cuDNN 9.19 (cudnn_graph_v9.h) and NCCL 2.28
// (nccl.h); short strings are what cudaGetErrorString, cublasGetStatusString,
// cudnnGetErrorString and ncclGetErrorString return for them (driver errors: the string
// of their runtime twin, which cuGetErrorString matches). Explanations follow the CUDA
// Runtime API, cuBLAS, cuDNN and NCCL documentation, in our words.
#include "base/error_catalog.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"

// ---- how entries are written ----------------------------------------------------------

#define GPU_FACTS (ERROR_FACT_DRIVER | ERROR_FACT_DEVICES)
#define LIBRARY_FACTS (ERROR_FACT_DRIVER | ERROR_FACT_DEVICES | ERROR_FACT_LIBRARIES)

#define RUNTIME(num, id, string)                                                           \
    .family = ERROR_FAMILY_CUDA_RUNTIME, .number = num, .name = id, .short_string = string, \
    .facts = GPU_FACTS
#define DRIVER(num, id, string)                                                            \
    .family = ERROR_FAMILY_CUDA_DRIVER, .number = num, .name = id, .short_string = string, \
    .facts = GPU_FACTS
#define CUBLAS(num, id, string)                                                            \
    .family = ERROR_FAMILY_CUBLAS, .number = num, .name = id, .short_string = string,       \
    .facts = LIBRARY_FACTS
// cudnnGetErrorString returns the status's own name.
#define CUDNN(num, id)                                                                     \
    .family = ERROR_FAMILY_CUDNN, .number = num, .name = id, .short_string = id,            \
    .facts = LIBRARY_FACTS
#define NCCL(num, id, string)                                                              \
    .family = ERROR_FAMILY_NCCL, .number = num, .name = id, .short_string = string,         \
    .facts = LIBRARY_FACTS
// Framework entries set their own facts.
#define FRAMEWORK(num, id, phrase)                                                         \
    .family = ERROR_FAMILY_FRAMEWORK, .number = num, .name = id, .short_string = phrase

#define CAUSES(...) .causes = {__VA_ARGS__}
#define PHRASES(...) .phrases = {__VA_ARGS__}
#define FAILS_RUNTIME .status = STATUS_RUNTIME_ERROR
#define FAILS_OOM .status = STATUS_OUT_OF_MEMORY
#define FAILS_NO_DEVICE .status = STATUS_NO_DEVICE
#define FAILS_BAD_INPUT .status = STATUS_BAD_INPUT
#define POISONS .poisons_context = 1
#define FINDS_GPU .finds_gpu = 1

// How PyTorch reports any failed CUDA runtime call (c10/cuda/CUDAException.h), and how
// TensorFlow's StreamExecutor reports a failed driver call.
#define PYTORCH_CUDA(string) "RuntimeError: CUDA error: " string
#define TF_DRIVER(driver_name, string)                                                     \
    "an InternalError from the driver call that failed, e.g. \"" driver_name ": " string "\""

// Advice shared by every error that kills the context.
#define RESTART_FIX                                                                        \
    "Restart the process (the CUDA context cannot recover), from the last checkpoint if "  \
    "there is one. Then find the kernel: "
// What only applies to trainer, under its own heading (tools/cmd_explain.c adds the
// checkpoint and --sync-check steps for errors that kill the context).
#define TRAINER_BUG                                                                        \
    "In trainer this is a bug: report it with the model file and `trainer --version`."
#define TRAINER_MEMORY                                                                     \
    "`trainer check MODEL --batch N` prints the memory the model needs at batch N; lower " \
    "--batch (trainer also splits a batch into micro-batches on its own), raise or drop "  \
    "--memory-limit, or pick another GPU with --device cuda:N."
#define TRAINER_DEVICES                                                                    \
    "`trainer devices` lists the GPUs trainer can use, with their ordinals and compute "   \
    "capabilities; choose one with --device cuda:N, or train on the CPU with --device cpu."
#define TRAINER_VERSIONS                                                                   \
    "`trainer --version` prints the CUDA runtime, driver, cuBLAS, cuDNN and NCCL versions " \
    "trainer uses; `trainer doctor` checks them against each other."
#define TRAINER_CUDNN_REASON                                                               \
    "trainer adds cuDNN's own reason (cudnnGetLastErrorString) to its message."
#define PIN_THE_KERNEL                                                                     \
    "Run again with CUDA_LAUNCH_BLOCKING=1 so the error is "                               \
    "reported by the kernel that caused it, and under `compute-sanitizer` to see the "     \
    "faulting thread and address."

// ---- bodies shared by a runtime error and its driver twin -------------------------------

#define BODY_INVALID_VALUE                                                                 \
    .meaning = "An argument of the call is out of range: a null or wrong pointer, a zero "  \
               "or negative size, a flag the call does not take.",                          \
    CAUSES("A size computed as zero or negative (an empty batch, an overflowed product).",  \
           "A pointer from another device, already freed, or never allocated.",             \
           "A copy whose size is larger than either buffer.",                               \
           "Mixing up host and device pointers in cudaMemcpy.",                             \
           "At a kernel launch, from CUDA 13 on: a block past the device's limits (over "  \
           "1024 threads, blockDim.z over 64), which CUDA 12 and earlier reported as "      \
           "\"invalid configuration argument\" (cudaErrorInvalidConfiguration)."),           \
    .confirm = "Print the arguments of the failing call; run under compute-sanitizer "      \
               "--tool memcheck, which names the bad argument.",                            \
    .fix = "Correct the argument at the call that failed.",                                \
    .with_trainer = TRAINER_BUG,                                                            \
    .pytorch = PYTORCH_CUDA("invalid argument"),                                            \
    .tensorflow = TF_DRIVER("CUDA_ERROR_INVALID_VALUE", "invalid argument"), FAILS_RUNTIME

#define BODY_OUT_OF_MEMORY                                                                 \
    .meaning = "The GPU could not provide the memory the call asked for. The request was "  \
               "refused; nothing else is broken, so a smaller request can still succeed.",  \
    CAUSES("The batch is too large: activations grow with the batch size.",                 \
           "Other processes hold GPU memory (another training job, a notebook kernel left " \
           "running, a display server).",                                                   \
           "The model's parameters, gradients and optimizer state alone do not fit.",       \
           "A memory cap (a framework's memory fraction or limit) below what the step needs.", \
           "Fragmentation: free memory exists but not in one piece large enough."),          \
    .confirm = "nvidia-smi shows the memory in use and the processes holding it.",         \
    .fix = "Lower the batch size, stop the other processes on the GPU, raise or drop the "  \
           "memory cap, or use a GPU with more memory.",                                    \
    .with_trainer = TRAINER_MEMORY,                                                         \
    .pytorch = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "   \
               "GPU 0 has a total capacity of 15.77 GiB of which 1.05 GiB is free. (memory " \
               "taken outside PyTorch's caching allocator: \"RuntimeError: CUDA error: out " \
               "of memory\")",                                                              \
    .tensorflow = "ResourceExhaustedError: OOM when allocating tensor with shape[...] and " \
                  "type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator " \
                  "GPU_0_bfc; at start-up: \"failed to allocate ... from device: "          \
                  "CUDA_ERROR_OUT_OF_MEMORY: out of memory\"",                              \
    FAILS_OOM

#define BODY_INITIALIZATION                                                                \
    .meaning = "The CUDA driver and runtime could not be initialized, so no GPU work can "  \
               "start in this process.",                                                    \
    CAUSES("The driver's kernel module is not loaded or does not match the user-space "     \
           "libcuda (the driver was upgraded without a reboot).",                           \
           "A container started without GPU access (no --gpus / NVIDIA Container Toolkit).", \
           "The process forked after CUDA was initialized and the child used CUDA.",        \
           "The GPU is in a bad state after an Xid error and needs a reset."),               \
    .confirm = "Run nvidia-smi: if it fails too, the driver is the problem; `dmesg | grep " \
               "-i nvrm` shows driver and Xid messages.",                                   \
    .fix = "Reboot after a driver upgrade, or reload the nvidia kernel module; start "      \
           "containers with GPU access; initialize CUDA after fork (or use spawn).",        \
    .pytorch = PYTORCH_CUDA("initialization error") " (often from a DataLoader worker "     \
               "forked after CUDA was initialized)",                                        \
    .tensorflow = "\"failed call to cuInit: CUDA_ERROR_NOT_INITIALIZED: initialization "    \
                  "error\", after which TensorFlow lists no GPU",                           \
    FAILS_RUNTIME, FINDS_GPU

#define BODY_DEINITIALIZED                                                                 \
    .meaning = "The call came while the process was exiting, after the CUDA driver had "    \
               "already been unloaded.",                                                    \
    CAUSES("A destructor or atexit handler freed GPU memory after CUDA shut down.",         \
           "A background thread still issued CUDA calls during exit."),                     \
    .confirm = "The error appears only at exit, after the last useful output.",             \
    .fix = "Release GPU resources before returning from main and join threads first; the " \
           "results computed before exit are not affected.",                                \
    .pytorch = "usually silent at interpreter exit; otherwise " PYTORCH_CUDA("driver shutting down"), \
    .tensorflow = TF_DRIVER("CUDA_ERROR_DEINITIALIZED", "driver shutting down") " during "  \
                  "shutdown",                                                               \
    FAILS_RUNTIME

#define BODY_STUB_LIBRARY                                                                  \
    .meaning = "The libcuda.so that was loaded is the toolkit's stub, which exists only to " \
               "link against and fails every call; the real driver library was not found.", \
    CAUSES("LD_LIBRARY_PATH puts /usr/local/cuda/lib64/stubs before the driver's libcuda.", \
           "The NVIDIA driver is not installed, so only the stub exists.",                  \
           "A container image has the toolkit but was started without the driver mounted."), \
    .confirm = "`ldconfig -p | grep libcuda` lists the libcuda files the loader finds and " \
               "`echo $LD_LIBRARY_PATH` what comes first; a path ending in /stubs/ is the " \
               "problem.",                                                                  \
    .with_trainer = "`trainer doctor` names the libcuda trainer loaded.",                  \
    .fix = "Remove the stubs directory from LD_LIBRARY_PATH, install the NVIDIA driver, or " \
           "start the container with GPU access.",                                          \
    .pytorch = "torch.cuda.is_available() returns False; a CUDA call raises "               \
               PYTORCH_CUDA("CUDA driver is a stub library"),                               \
    .tensorflow = "\"failed call to cuInit: CUDA_ERROR_STUB_LIBRARY: CUDA driver is a stub " \
                  "library\", and no GPU is listed",                                        \
    FAILS_NO_DEVICE, FINDS_GPU

#define BODY_NEWER_DRIVER                                                                  \
    .meaning = "This API call exists in the CUDA runtime but the installed driver is too "  \
               "old to carry it out.",                                                      \
    CAUSES("The program was built with a newer CUDA toolkit than the driver supports, and " \
           "uses a feature added since (minor-version compatibility covers the rest).",     \
           "A forward-compatibility package is missing on a data-center system."),          \
    .confirm = "nvidia-smi prints the highest CUDA version the driver supports; compare "  \
               "the CUDA version the program was built with (PyTorch: torch.version.cuda).", \
    .with_trainer = TRAINER_VERSIONS,                                                       \
    .fix = "Update the NVIDIA driver to one that supports the runtime's CUDA version, or "  \
           "build with an older toolkit.",                                                  \
    .pytorch = PYTORCH_CUDA("API call is not supported in the installed CUDA driver"),      \
    .tensorflow = TF_DRIVER("CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",                        \
                            "API call is not supported in the installed CUDA driver"),      \
    FAILS_RUNTIME

#define BODY_DEVICES_UNAVAILABLE                                                           \
    .meaning = "Every GPU this process may use is busy or unavailable, so no context could " \
               "be created on it.",                                                         \
    CAUSES("The GPU is in Exclusive_Process compute mode and another process already has "  \
           "a context on it.",                                                              \
           "The GPU is in Prohibited compute mode.",                                        \
           "The GPU is full of long-running work or memory from other processes.",          \
           "The GPU was reserved by a scheduler (SLURM, Kubernetes) for another job."),      \
    .confirm = "`nvidia-smi -q -d COMPUTE` shows the compute mode; nvidia-smi lists the "   \
               "processes on each GPU.",                                                    \
    .fix = "Wait for or stop the other process, choose another GPU (CUDA_VISIBLE_DEVICES " \
           "or the framework's device index), or have an administrator set `nvidia-smi -c " \
           "DEFAULT`.",                                                                     \
    .with_trainer = TRAINER_DEVICES,                                                        \
    .pytorch = PYTORCH_CUDA("CUDA-capable device(s) is/are busy or unavailable"),           \
    .tensorflow = "\"failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_DEVICE_UNAVAILABLE: " \
                  "CUDA-capable device(s) is/are busy or unavailable\"",                    \
    FAILS_NO_DEVICE

#define BODY_NO_DEVICE                                                                     \
    .meaning = "The driver is installed and running but sees no CUDA-capable GPU.",         \
    CAUSES("CUDA_VISIBLE_DEVICES is empty, \"-1\" or names GPUs that do not exist, which "  \
           "hides every GPU.",                                                              \
           "A container or job was started without GPUs assigned to it.",                   \
           "The GPU fell off the bus (Xid 79) or is disabled.",                             \
           "The machine simply has no NVIDIA GPU (a cloud instance type without one)."),     \
    .confirm = "nvidia-smi -L lists the GPUs the driver sees; `echo "                       \
               "$CUDA_VISIBLE_DEVICES` shows what this process may see.",                   \
    .fix = "Unset or correct CUDA_VISIBLE_DEVICES, start the container with --gpus, or "    \
           "train on the CPU.",                                                             \
    .with_trainer = TRAINER_DEVICES,                                                        \
    .pytorch = "\"RuntimeError: No CUDA GPUs are available\", or "                          \
               PYTORCH_CUDA("no CUDA-capable device is detected"),                          \
    .tensorflow = "\"failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device "  \
                  "is detected\", then training silently runs on the CPU",                  \
    FAILS_NO_DEVICE, FINDS_GPU

#define BODY_INVALID_DEVICE                                                                \
    .meaning = "The device ordinal asked for does not name a GPU this process can see, or " \
               "the action is not valid for that GPU.",                                     \
    CAUSES("The ordinal is at least the number of visible GPUs (cuda:3 on a 2-GPU "         \
           "machine).",                                                                     \
           "CUDA_VISIBLE_DEVICES renumbers the visible GPUs from 0: with "                  \
           "CUDA_VISIBLE_DEVICES=3 the only GPU is cuda:0, not cuda:3.",                    \
           "A launcher (torchrun, mpirun, SLURM) already restricted each process to one "   \
           "GPU, and the code selects its local rank again.",                               \
           "A GPU dropped out after an Xid error, so fewer are visible than expected."),     \
    .confirm = "nvidia-smi -L together with $CUDA_VISIBLE_DEVICES gives the GPUs this "     \
               "process can use (PyTorch: torch.cuda.device_count()).",                     \
    .fix = "Use an ordinal below the number of visible GPUs; under CUDA_VISIBLE_DEVICES "   \
           "count from 0 within the listed GPUs.",                                          \
    .with_trainer = TRAINER_DEVICES,                                                        \
    .pytorch = PYTORCH_CUDA("invalid device ordinal"),                                      \
    .tensorflow = "\"failed call to cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_DEVICE: "  \
                  "invalid device ordinal\", or \"Invalid device ordinal value (1). Valid " \
                  "range is [0, 0].\"",                                                     \
    FAILS_NO_DEVICE, FINDS_GPU

#define BODY_INVALID_IMAGE                                                                 \
    .meaning = "A GPU code module (cubin or fatbinary) loaded by the program is corrupt or " \
               "was not built for CUDA.",                                                   \
    CAUSES("A truncated or corrupted binary or shared library (an interrupted download or " \
           "copy).",                                                                        \
           "A module compiled by a much newer toolkit than the driver understands."),        \
    .confirm = "`cuobjdump --list-elf BINARY` fails or lists nothing for a corrupt file.",  \
    .fix = "Reinstall or rebuild the program or library; update the driver if the module "  \
           "is from a newer toolkit.",                                                      \
    .pytorch = PYTORCH_CUDA("device kernel image is invalid"),                              \
    .tensorflow = TF_DRIVER("CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"),  \
    FAILS_RUNTIME

#define BODY_INVALID_CONTEXT                                                               \
    .meaning = "There is no valid CUDA context for the calling thread, or the one passed "  \
               "was destroyed.",                                                            \
    CAUSES("The context was destroyed (cudaDeviceReset) while still in use.",               \
           "A thread uses a driver-API context that was never made current on it.",          \
           "Driver-API and runtime-API code disagree about which context is current."),     \
    .confirm = "Check for cudaDeviceReset or cuCtxDestroy calls before the failure.",       \
    .fix = "Do not reset the device while work or handles remain; make the context current " \
           "on each thread (cudaSetDevice) before using it.",                               \
    .pytorch = PYTORCH_CUDA("invalid device context"),                                      \
    .tensorflow = TF_DRIVER("CUDA_ERROR_INVALID_CONTEXT", "invalid device context"),        \
    FAILS_RUNTIME

#define BODY_NO_KERNEL_IMAGE                                                               \
    .meaning = "The program holds no GPU code this GPU can run: no machine code (SASS) for " \
               "its compute capability and no PTX the driver could compile for it.",        \
    CAUSES("The binary was built for other architectures: a new GPU (e.g. compute 12.0) "   \
           "with an older build, or an old GPU (e.g. compute 5.x) that a newer build "      \
           "dropped.",                                                                      \
           "A custom extension or kernel library was built with a narrow architecture list " \
           "(TORCH_CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES).",                             \
           "The build includes PTX, but the driver is too old to compile it.",               \
           "The wrong wheel was installed (a CUDA 11.x build on a GPU that needs 12.x)."),  \
    .confirm = "`nvidia-smi --query-gpu=name,compute_cap --format=csv` gives the GPU's "    \
               "compute capability; `cuobjdump --list-elf BINARY` lists the sm_XX the "     \
               "binary carries (PyTorch: torch.cuda.get_arch_list()).",                     \
    .fix = "Rebuild with the GPU's architecture, e.g. cmake -DCMAKE_CUDA_ARCHITECTURES=86 " \
           "for compute 8.6, or install a build that lists it.",                            \
    .with_trainer = "trainer's default build covers compute 7.5 to 12.0 plus PTX; `trainer " \
                    "doctor` says which kernel image each GPU gets.",                       \
    .pytorch = "a warning \"NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not "    \
               "compatible with the current PyTorch installation.\", then "                 \
               PYTORCH_CUDA("no kernel image is available for execution on the device"),    \
    .tensorflow = "\"CUDA_ERROR_NO_BINARY_FOR_GPU\", or \"Non-OK-status: GpuLaunchKernel(...) " \
                  "status: INTERNAL: no kernel image is available for execution on the "    \
                  "device\"",                                                               \
    FAILS_NO_DEVICE

#define BODY_ECC_UNCORRECTABLE                                                             \
    .meaning = "The GPU's memory reported an error that ECC could not correct; data on the " \
               "GPU may be corrupt, so the context is shut down.",                          \
    CAUSES("A failing memory cell or GPU (repeated errors on the same board).",             \
           "Overheating or a power problem.",                                               \
           "A one-off event; pending page retirement needs a GPU reset to take effect."),   \
    .confirm = "`nvidia-smi -q -d ECC,PAGE_RETIREMENT` shows ECC error counts and retired " \
               "pages; dmesg shows Xid 48 or 63/64.",                                       \
    .fix = RESTART_FIX "none is at fault. Reset the GPU (nvidia-smi -r) or reboot; if the " \
           "counts keep rising, have the GPU replaced.",                                    \
    .pytorch = PYTORCH_CUDA("uncorrectable ECC error encountered"),                         \
    .tensorflow = TF_DRIVER("CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"), \
    FAILS_RUNTIME, POISONS

#define BODY_INVALID_PTX                                                                   \
    .meaning = "The driver tried to compile PTX (the portable GPU code) for this GPU and "  \
               "the compilation failed.",                                                   \
    CAUSES("The binary has no machine code for this GPU, so the driver fell back to PTX "   \
           "that it cannot compile.",                                                       \
           "The PTX is corrupt or uses features the driver's compiler lacks."),             \
    .confirm = "`cuobjdump --list-elf --list-ptx BINARY` shows which architectures have "   \
               "machine code and which only PTX.",                                          \
    .fix = "Build machine code for the GPU's architecture (CMAKE_CUDA_ARCHITECTURES), or "  \
           "update the driver.",                                                            \
    .pytorch = PYTORCH_CUDA("a PTX JIT compilation failed"),                                \
    .tensorflow = TF_DRIVER("CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"),      \
    FAILS_RUNTIME

#define BODY_UNSUPPORTED_PTX                                                               \
    .meaning = "The program's PTX was generated by a newer compiler than this driver's PTX " \
               "JIT supports, so the GPU code cannot be built.",                            \
    CAUSES("The driver is older than the CUDA toolkit the program was built with, and the " \
           "binary has no machine code for this GPU (only PTX).",                           \
           "A library built with a newer toolkit (e.g. Triton or a custom extension)."),    \
    .confirm = "Compare nvidia-smi's \"CUDA Version\" with `nvcc --version`; the driver's "  \
               "must be at least the toolkit's.",                                           \
    .with_trainer = TRAINER_VERSIONS,                                                       \
    .fix = "Update the NVIDIA driver, or rebuild with machine code for this GPU "           \
           "(CMAKE_CUDA_ARCHITECTURES) so no PTX compilation is needed.",                   \
    .pytorch = PYTORCH_CUDA("the provided PTX was compiled with an unsupported toolchain."), \
    .tensorflow = TF_DRIVER("CUDA_ERROR_UNSUPPORTED_PTX_VERSION",                            \
                            "the provided PTX was compiled with an unsupported toolchain."), \
    FAILS_NO_DEVICE

#define BODY_OPERATING_SYSTEM                                                              \
    .meaning = "A system call that CUDA relies on failed, or the operation is not "         \
               "supported on this operating system.",                                       \
    CAUSES("Pinned (page-locked) host memory beyond the memlock limit (ulimit -l).",        \
           "/dev/shm too small in a container for CUDA IPC.",                               \
           "Insufficient permissions on /dev/nvidia* device files.",                         \
           "An operation Windows (WDDM) or WSL does not support."),                         \
    .confirm = "Check `ulimit -l`, `df -h /dev/shm` and `ls -l /dev/nvidia*`; strace shows " \
               "the failing system call.",                                                  \
    .fix = "Raise the memlock limit, enlarge /dev/shm (docker --shm-size), or fix the "      \
           "device-file permissions.",                                                      \
    .pytorch = PYTORCH_CUDA("OS call failed or operation not supported on this OS"),        \
    .tensorflow = TF_DRIVER("CUDA_ERROR_OPERATING_SYSTEM",                                   \
                            "OS call failed or operation not supported on this OS"),        \
    FAILS_RUNTIME

#define BODY_INVALID_HANDLE                                                                \
    .meaning = "A stream, event, graph or other CUDA handle passed to the call is not "     \
               "valid.",                                                                    \
    CAUSES("The handle was destroyed and used again (use after free).",                     \
           "The handle belongs to another device or context than the current one.",         \
           "The handle was never created (uninitialized variable)."),                       \
    .confirm = "Trace the handle's creation and destruction; compute-sanitizer reports "    \
               "API errors with a backtrace.",                                              \
    .fix = "Create handles on the device that uses them and destroy them only after the "   \
           "last use.",                                                                     \
    .with_trainer = TRAINER_BUG,                                                            \
    .pytorch = PYTORCH_CUDA("invalid resource handle") " (often a stream or event used on " \
               "another device)",                                                           \
    .tensorflow = TF_DRIVER("CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"),        \
    FAILS_RUNTIME

#define BODY_NOT_FOUND                                                                     \
    .meaning = "A named symbol (a kernel, a global or constant variable) was not found in " \
               "the loaded GPU code.",                                                      \
    CAUSES("The GPU code was built without the symbol (a device function behind an #if for " \
           "another architecture).",                                                        \
           "A library version mismatch: the host code expects a symbol from a newer "       \
           "library."),                                                                     \
    .confirm = "`cuobjdump -symbols BINARY` lists the symbols the GPU code carries.",        \
    .fix = "Rebuild so host and device code come from the same sources and versions.",      \
    .pytorch = PYTORCH_CUDA("named symbol not found"),                                      \
    .tensorflow = TF_DRIVER("CUDA_ERROR_NOT_FOUND", "named symbol not found"),              \
    FAILS_RUNTIME

#define BODY_NOT_READY                                                                     \
    .meaning = "Work queued earlier has not finished yet. It is the answer of a query "     \
               "(cudaStreamQuery, cudaEventQuery), not a failure.",                         \
    CAUSES("Code treats every non-success value as an error, including a query's \"not "    \
           "finished yet\"."),                                                              \
    .confirm = "The failing call is a query (cudaStreamQuery, cudaEventQuery).",            \
    .fix = "Treat it as \"not done\": poll again later or synchronize.",                    \
    .with_trainer = TRAINER_BUG,                                                            \
    .pytorch = "not raised: torch.cuda.Event.query() returns False",                        \
    .tensorflow = "not raised: StreamExecutor polls the event again",                       \
    FAILS_RUNTIME

#define BODY_ILLEGAL_ADDRESS                                                               \
    .meaning = "A kernel read or wrote memory at an address it does not own. The CUDA "     \
               "context is now unusable: every later call returns this error.",             \
    CAUSES("An index out of bounds in a kernel (wrong size, off-by-one, an unchecked label " \
           "or embedding index).",                                                          \
           "Memory used after it was freed, or a pointer from another device.",             \
           "32-bit index overflow on a tensor with more than 2^31 elements.",               \
           "A race between streams (memory freed while a kernel still reads it).",          \
           "Rarely, a driver or hardware fault (see Xid 13/31 in dmesg)."),                 \
    .confirm = PIN_THE_KERNEL,                                                              \
    .fix = RESTART_FIX "fix the indexing it reports.",                                      \
    .with_trainer = TRAINER_BUG,                                                            \
    .pytorch = PYTORCH_CUDA("an illegal memory access was encountered") " CUDA kernel "     \
               "errors might be asynchronously reported at some other API call, so the "    \
               "stacktrace below might be incorrect.",                                      \
    .tensorflow = "\"CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered\" " \
                  "(often in \"error polling for event status: failed to query event\")",   \
    FAILS_RUNTIME, POISONS

#define BODY_LAUNCH_OUT_OF_RESOURCES                                                       \
    .meaning = "The kernel could not be launched because it needs more registers (or "      \
               "other per-block resources) than a multiprocessor has for the block size "   \
               "requested.",                                                                \
    CAUSES("Too many threads per block for the kernel's register use (e.g. 1024 threads "   \
           "and more than 64 registers per thread).",                                       \
           "Code built for one architecture and launched with a block size that only fits " \
           "another.",                                                                      \
           "A debug build (-G) that uses many more registers."),                            \
    .confirm = "Compile with -Xptxas -v to print registers per thread; multiply by the "    \
               "block size and compare with the device's registers per block.",             \
    .fix = "Launch fewer threads per block, or cap registers with __launch_bounds__ or "    \
           "-maxrregcount.",                                                                \
    .with_trainer = TRAINER_BUG,                                                            \
    .pytorch = PYTORCH_CUDA("too many resources requested for launch"),                     \
    .tensorflow = TF_DRIVER("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",                            \
                            "too many resources requested for launch"),                     \
    FAILS_RUNTIME

#define BODY_LAUNCH_TIMEOUT                                                                \
    .meaning = "A kernel ran longer than the watchdog allows and was killed. The CUDA "     \
               "context is unusable afterwards.",                                           \
    CAUSES("The GPU also drives a display, whose watchdog kills kernels after a few "       \
           "seconds (Windows TDR, X server).",                                              \
           "A kernel that loops forever or waits on a flag that never changes.",            \
           "A huge single kernel on a slow GPU."),                                          \
    .confirm = "`nvidia-smi -q | grep -i timeout` or cudaDevAttrKernelExecTimeout shows "   \
               "whether a watchdog applies; the failing kernel is the long one.",           \
    .fix = RESTART_FIX "split the work into shorter kernels, use a GPU with no display "    \
           "attached, or raise the TDR delay on Windows.",                                  \
    .pytorch = PYTORCH_CUDA("the launch timed out and was terminated"),                     \
    .tensorflow = TF_DRIVER("CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"), \
    FAILS_RUNTIME, POISONS

#define BODY_CONTEXT_DESTROYED                                                             \
    .meaning = "The context current to this thread was destroyed, or is a primary context " \
               "that was never initialized.",                                               \
    CAUSES("cudaDeviceReset was called while other code still used the device.",           \
           "Work issued from an exit handler after the context was torn down."),            \
    .confirm = "Look for cudaDeviceReset / cuCtxDestroy before the failure.",               \
    .fix = "Do not reset or destroy the context while handles or memory are in use.",        \
    .pytorch = PYTORCH_CUDA("context is destroyed"),                                        \
    .tensorflow = TF_DRIVER("CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"),     \
    FAILS_RUNTIME

#define BODY_ASSERT                                                                        \
    .meaning = "An assert() inside a GPU kernel failed. The CUDA context is unusable and "  \
               "all GPU memory of the process is lost; the process must restart.",          \
    CAUSES("A class label outside [0, classes) reached the loss (labels 1..N instead of "   \
           "0..N-1, too few output units, -1 used as padding).",                            \
           "An index out of range in an embedding, gather or index_select.",                \
           "A binary cross-entropy input or target outside [0, 1] (NaN or unsquashed "      \
           "scores).",                                                                      \
           "An assert in a custom kernel."),                                                \
    .confirm = "The line just above the error names the kernel and the failed condition "   \
               "(e.g. `t >= 0 && t < n_classes`). Check labels' min and max; running on "   \
               "the CPU turns it into an ordinary error that names the bad value.",         \
    .fix = RESTART_FIX "fix the data so every index is in range (a stray label is a data "  \
           "error); only if the data really has more classes, widen the last layer to the " \
           "largest label + 1.",                                                            \
    .with_trainer = "trainer checks label ranges before the first step and reports a bad "  \
                    "label as a data error, naming the sample and its label.",              \
    .pytorch = "\"../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: " \
               "block: [0,0,0], thread: [3,0,0] Assertion `t >= 0 && t < n_classes` "       \
               "failed.\" then " PYTORCH_CUDA("device-side assert triggered"),              \
    .tensorflow = "no device-side asserts: on the GPU an out-of-range label silently gives " \
                  "NaN loss; on the CPU \"InvalidArgumentError: Received a label value of " \
                  "10 which is outside the valid range of [0, 10).\"",                      \
    FAILS_RUNTIME, POISONS

#define BODY_HARDWARE_STACK                                                                \
    .meaning = "A kernel corrupted or overflowed its call stack. The CUDA context is "      \
               "unusable afterwards.",                                                      \
    CAUSES("Deep or unbounded recursion in device code.",                                   \
           "Large local arrays in device functions exceeding the stack size limit.",        \
           "Stack corruption from an out-of-bounds write to a local array."),               \
    .confirm = PIN_THE_KERNEL,                                                              \
    .fix = RESTART_FIX "reduce recursion or local arrays, or raise cudaLimitStackSize.",    \
    .pytorch = PYTORCH_CUDA("hardware stack error"),                                        \
    .tensorflow = TF_DRIVER("CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"),     \
    FAILS_RUNTIME, POISONS

#define BODY_ILLEGAL_INSTRUCTION                                                           \
    .meaning = "A kernel executed an instruction the GPU cannot execute. The CUDA context " \
               "is unusable afterwards.",                                                   \
    CAUSES("Jumping through a corrupted function pointer or virtual table in device code.", \
           "Code built for a newer architecture run on an older one through a bad path.",   \
           "A compiler or driver bug."),                                                    \
    .confirm = PIN_THE_KERNEL,                                                              \
    .fix = RESTART_FIX "rebuild for the right architecture and update the driver; report "  \
           "it if it persists.",                                                            \
    .pytorch = PYTORCH_CUDA("an illegal instruction was encountered"),                      \
    .tensorflow = TF_DRIVER("CUDA_ERROR_ILLEGAL_INSTRUCTION",                                \
                            "an illegal instruction was encountered"),                      \
    FAILS_RUNTIME, POISONS

#define BODY_MISALIGNED_ADDRESS                                                            \
    .meaning = "A kernel loaded or stored a value at an address not aligned to its size "   \
               "(e.g. a float4 at an address not divisible by 16). The CUDA context is "    \
               "unusable afterwards.",                                                      \
    CAUSES("A vectorized kernel given a tensor view that starts at an odd offset.",         \
           "Pointer arithmetic in bytes cast to a wider type.",                             \
           "A buffer carved out of a pool without rounding offsets up."),                   \
    .confirm = PIN_THE_KERNEL,                                                              \
    .fix = RESTART_FIX "align the buffer or use the unvectorized path for views.",          \
    .with_trainer = TRAINER_BUG,                                                            \
    .pytorch = PYTORCH_CUDA("misaligned address"),                                          \
    .tensorflow = TF_DRIVER("CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"),         \
    FAILS_RUNTIME, POISONS

#define BODY_LAUNCH_FAILURE                                                                \
    .meaning = "A kernel hit an exception while running, without a more specific code. "   \
               "The CUDA context is unusable afterwards.",                                  \
    CAUSES("Dereferencing an invalid device pointer (null, freed, or from another "         \
           "device).",                                                                      \
           "Out-of-bounds shared memory access.",                                           \
           "A kernel killed by the system (e.g. after an Xid error or a GPU reset)."),      \
    .confirm = PIN_THE_KERNEL " dmesg shows Xid errors for system causes.",                 \
    .fix = RESTART_FIX "fix the pointer or indexing it reports.",                           \
    .pytorch = PYTORCH_CUDA("unspecified launch failure"),                                  \
    .tensorflow = TF_DRIVER("CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"),      \
    FAILS_RUNTIME, POISONS

#define BODY_NOT_PERMITTED                                                                 \
    .meaning = "The operation is not permitted in the current state or configuration.",      \
    CAUSES("A call that is illegal during stream capture or inside a callback.",            \
           "Changing settings that only a privileged user may change (clocks, "             \
           "persistence mode).",                                                            \
           "MPS or MIG restrictions on what a client may do."),                             \
    .confirm = "Check whether the call runs during graph capture, in a host callback, or "  \
               "under MPS/MIG.",                                                            \
    .fix = "Move the call out of the capture or callback, or run with the needed "          \
           "privileges.",                                                                   \
    .pytorch = PYTORCH_CUDA("operation not permitted"),                                     \
    .tensorflow = TF_DRIVER("CUDA_ERROR_NOT_PERMITTED", "operation not permitted"),         \
    FAILS_RUNTIME

#define BODY_NOT_SUPPORTED                                                                 \
    .meaning = "The operation is not supported on this system or GPU.",                     \
    CAUSES("A feature the GPU lacks (e.g. managed-memory prefetch on some systems, peer "   \
           "access between unlike GPUs).",                                                  \
           "A feature not available under WSL, MIG or vGPU."),                              \
    .confirm = "Query the matching device attribute (cudaDeviceGetAttribute) on this GPU.", \
    .fix = "Take the code path without the feature, or use a GPU or system that has it.",   \
    .pytorch = PYTORCH_CUDA("operation not supported"),                                     \
    .tensorflow = TF_DRIVER("CUDA_ERROR_NOT_SUPPORTED", "operation not supported"),         \
    FAILS_RUNTIME

#define BODY_SYSTEM_NOT_READY                                                              \
    .meaning = "The system is not ready for CUDA work yet: a driver daemon it needs is not " \
               "running.",                                                                  \
    CAUSES("On NVSwitch systems (HGX/DGX) the Fabric Manager service is not running or "    \
           "not the driver's version.",                                                     \
           "The GPUs are still initializing after boot."),                                  \
    .confirm = "`systemctl status nvidia-fabricmanager`; `nvidia-smi -q | grep -i fabric`.", \
    .fix = "Start nvidia-fabricmanager with the same version as the driver, then retry.",   \
    .pytorch = PYTORCH_CUDA("system not yet initialized"),                                  \
    .tensorflow = "\"failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet "   \
                  "initialized\"",                                                          \
    FAILS_RUNTIME

#define BODY_SYSTEM_DRIVER_MISMATCH                                                        \
    .meaning = "The kernel-mode display driver and the user-mode CUDA driver (libcuda) "    \
               "have different versions.",                                                  \
    CAUSES("The driver was upgraded but the machine not rebooted (the old kernel module is " \
           "still loaded).",                                                                \
           "A container ships its own libcuda that does not match the host's driver.",      \
           "A forward-compatibility package installed on a system that does not need it."), \
    .confirm = "`cat /proc/driver/nvidia/version` (kernel module) versus `nvidia-smi` or "  \
               "`ls -l $(ldconfig -p | grep libcuda.so.1 | head -1 | awk '{print $NF}')`.", \
    .fix = "Reboot (or reload the nvidia module) after a driver upgrade; do not ship "      \
           "libcuda inside containers.",                                                    \
    .pytorch = "torch.cuda.is_available() warns \"CUDA initialization: ... system has "     \
               "unsupported display driver / cuda driver combination\" and returns False",  \
    .tensorflow = "\"failed call to cuInit: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has " \
                  "unsupported display driver / cuda driver combination\"",                 \
    FAILS_NO_DEVICE

#define BODY_COMPAT_NOT_SUPPORTED                                                          \
    .meaning = "The system uses the CUDA forward-compatibility package, but a visible GPU " \
               "is not one the package supports (it targets data-center GPUs).",            \
    CAUSES("The cuda-compat package is on the library path of a machine with a GeForce or " \
           "other unsupported GPU.",                                                        \
           "A container image with cuda-compat run on a workstation."),                     \
    .confirm = "`ldconfig -p | grep libcuda` shows a libcuda from /usr/local/cuda/compat.",  \
    .fix = "Remove the compat libraries from the library path and update the regular "      \
           "driver instead, or hide unsupported GPUs with CUDA_VISIBLE_DEVICES.",           \
    .pytorch = PYTORCH_CUDA("forward compatibility was attempted on non supported HW"),     \
    .tensorflow = "\"failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: "    \
                  "forward compatibility was attempted on non supported HW\"",              \
    FAILS_NO_DEVICE

#define BODY_UNKNOWN                                                                       \
    .meaning = "CUDA failed for a reason it does not classify.",                            \
    CAUSES("A driver problem or a GPU in a bad state (Xid errors).",                        \
           "A driver and kernel module mismatch after an upgrade.",                         \
           "A bug in the driver."),                                                         \
    .confirm = "dmesg | grep -i nvrm shows Xid messages; nvidia-smi shows the GPU's state.", \
    .fix = "Update or reinstall the driver, reset the GPU (nvidia-smi -r) or reboot.",      \
    .pytorch = PYTORCH_CUDA("unknown error"),                                               \
    .tensorflow = "\"failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\"",           \
    FAILS_RUNTIME

// ---- wording shared by the cuBLAS, cuDNN and NCCL entries ----------------------------------

#define PYTORCH_CUBLAS(id) "RuntimeError: CUDA error: " id " when calling `cublasSgemm( handle, ...)`"
#define TF_CUBLAS(id) "\"Blas GEMM launch failed\" (or \"Blas xGEMMBatched launch failed\"), " \
                      "after a log line naming " id

#define PYTORCH_CUDNN(id) "RuntimeError: cuDNN error: " id
#define TF_CUDNN(id) "the status inside a DNN error from cuda_dnn.cc, e.g. \"" id "\" in "   \
                     "\"cuDNN launch failure\" or \"No algorithm worked!\""
#define CUDNN_LOG_CONFIRM                                                                  \
    "CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr makes cuDNN print why it refused."

#define CUDNN_BAD_PARAM_BODY(what)                                                         \
    .meaning = "A parameter of the cuDNN call is invalid: " what ".",                       \
    CAUSES("A tensor or filter descriptor that disagrees with the data (wrong dimensions, " \
           "strides or data type).",                                                        \
           "A workspace or buffer smaller than cuDNN asked for.",                           \
           "A backend descriptor used before it was finalized, or with the wrong type."),  \
    .confirm = CUDNN_LOG_CONFIRM,                                                           \
    .fix = "Correct the descriptor or argument cuDNN names in its log.",                   \
    .with_trainer = TRAINER_CUDNN_REASON " " TRAINER_BUG,                                   \
    FAILS_RUNTIME
#define CUDNN_NOT_SUPPORTED_BODY(what)                                                     \
    .meaning = "cuDNN has no engine for this problem: " what ".",                          \
    CAUSES("A shape, data type or layout no cuDNN kernel implements (very large tensors, "  \
           "unusual padding, dilation or groups).",                                          \
           "A non-contiguous input or one not aligned to 16 bytes.",                        \
           "This GPU or cuDNN version lacks the engine (an old GPU, a partial install)."),  \
    .confirm = CUDNN_LOG_CONFIRM,                                                           \
    .fix = "Change the configuration (pad channels to a multiple of 8, use fp32, a smaller " \
           "batch), make inputs contiguous, or run the op without cuDNN.",                  \
    .with_trainer = TRAINER_CUDNN_REASON,                                                   \
    FAILS_RUNTIME
#define CUDNN_INTERNAL_BODY(what)                                                          \
    .meaning = "An operation inside cuDNN failed: " what ".",                              \
    CAUSES("Out of GPU memory for cuDNN's workspace or its runtime-compiled kernels.",      \
           "An earlier asynchronous CUDA error surfacing inside cuDNN.",                     \
           "Mixed cuDNN sub-libraries or a driver too old for this cuDNN."),                \
    .confirm = CUDNN_LOG_CONFIRM " nvidia-smi shows free memory.",                          \
    .fix = "Free GPU memory (a smaller batch), fix earlier errors (CUDA_LAUNCH_BLOCKING=1), " \
           "and install one complete cuDNN matching the CUDA runtime.",                     \
    .with_trainer = TRAINER_CUDNN_REASON,                                                   \
    FAILS_RUNTIME
#define CUDNN_EXECUTION_BODY(what)                                                         \
    .meaning = "A cuDNN GPU kernel failed to run: " what ".",                              \
    CAUSES("An earlier asynchronous error (an illegal address, an assert) surfacing here.", \
           "Input or workspace pointers that are invalid or on another device.",            \
           "A GPU or driver fault."),                                                       \
    .confirm = "Run with CUDA_LAUNCH_BLOCKING=1 to pin the kernel that failed first. "     \
               CUDNN_LOG_CONFIRM,                                                           \
    .with_trainer = TRAINER_CUDNN_REASON " --sync-check pins the kernel as "                \
                    "CUDA_LAUNCH_BLOCKING=1 does.",                                         \
    .fix = "Fix the earlier failure; if none, check pointers and the driver; restart the "  \
           "process if the context was poisoned.",                                          \
    FAILS_RUNTIME

#define PYTORCH_NCCL(string, detail)                                                       \
    "torch.distributed.DistBackendError: NCCL error in: .../ProcessGroupNCCL.cpp:..., "    \
    string ", NCCL version 2.x.x " detail
#define NCCL_DEBUG_CONFIRM                                                                 \
    "Run every rank with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=ALL for more): NCCL logs the " \
    "call that failed and why."

// ---- the table --------------------------------------------------------------------------

static const ErrorEntry catalog[] = {
    // ---- CUDA runtime: cudaError_t (driver_types.h) ----
    // PyTorch's words for it: the bare library string is too common to search for.
    {RUNTIME(1, "cudaErrorInvalidValue", "invalid argument"), BODY_INVALID_VALUE,
     PHRASES("CUDA error: invalid argument"), .related = "CUDA_ERROR_INVALID_VALUE"},
    {RUNTIME(2, "cudaErrorMemoryAllocation", "out of memory"), BODY_OUT_OF_MEMORY,
     .related = "CUDA_ERROR_OUT_OF_MEMORY"},
    {RUNTIME(3, "cudaErrorInitializationError", "initialization error"), BODY_INITIALIZATION,
     PHRASES("Cannot re-initialize CUDA in forked subprocess",
             "CUDA driver initialization failed, you might not have a CUDA gpu"),
     .related = "CUDA_ERROR_NOT_INITIALIZED"},
    {RUNTIME(4, "cudaErrorCudartUnloading", "driver shutting down"), BODY_DEINITIALIZED,
     .related = "CUDA_ERROR_DEINITIALIZED"},
    {RUNTIME(9, "cudaErrorInvalidConfiguration", "invalid configuration argument"),
     .meaning = "A kernel launch asked for a configuration this GPU can never run: too many "
                "threads per block, a grid dimension past its limit, or more shared memory "
                "per block than allowed. The kernel did not run; the context is fine. From "
                "CUDA 13 on, a block past the limits is reported as cudaErrorInvalidValue "
                "(1, \"invalid argument\") instead.",
     CAUSES("A grid dimension past its limit: gridDim.y and gridDim.z stop at 65535, so a "
            "batch or channel count mapped onto them overflows.",
            "More than 1024 threads per block, or blockDim.z above 64.",
            "More than 48 KiB of dynamic shared memory without opting in with "
            "cudaFuncSetAttribute.",
            "A grid of zero blocks, from an empty tensor or a size that rounded down to 0."),
     .confirm = "Run with CUDA_LAUNCH_BLOCKING=1 to pin it to the launch, and print the grid, "
                "block and shared-memory size; compare with the limits (1024 threads per "
                "block, grid y/z 65535).",
     .fix = "Change the launch: loop over the dimension that overflows (grid-stride loops), "
            "cap threads per block at 1024, or opt in to large shared memory.",
     .with_trainer = "trainer checks every launch on the host first and names the kernel and "
                     "the dimension (CUDA 13's \"invalid argument\" at a launch is explained "
                     "as this); if it still reaches the GPU, report it.",
     .pytorch = PYTORCH_CUDA("invalid configuration argument"),
     .tensorflow = "\"Non-OK-status: GpuLaunchKernel(...) status: INTERNAL: invalid "
                   "configuration argument\"",
     FAILS_RUNTIME},
    {RUNTIME(17, "cudaErrorInvalidDevicePointer", "invalid device pointer"),
     .meaning = "A pointer passed as device memory is not a device allocation of this "
                "process (deprecated since CUDA 10.1: current runtimes report "
                "cudaErrorInvalidValue instead).",
     CAUSES("Freeing a pointer twice, or one that cudaMalloc did not return.",
            "Passing a host pointer where device memory is expected."),
     .confirm = "compute-sanitizer --tool memcheck reports the bad free or copy.",
     .fix = "Free each allocation once, and only what cudaMalloc returned.",
     .pytorch = PYTORCH_CUDA("invalid device pointer"),
     .tensorflow = "rarely seen: TensorFlow's allocator owns every device pointer",
     FAILS_RUNTIME},
    {RUNTIME(21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"),
     .meaning = "The copy direction passed to cudaMemcpy is not a cudaMemcpyKind.",
     CAUSES("Arguments to cudaMemcpy swapped or a wrong constant passed as the kind."),
     .confirm = "Read the failing cudaMemcpy call's last argument.",
     .fix = "Pass cudaMemcpyHostToDevice, DeviceToHost, DeviceToDevice or Default.",
     .pytorch = PYTORCH_CUDA("invalid copy direction for memcpy"),
     .tensorflow = "not seen: TensorFlow copies through its own stream executor",
     FAILS_RUNTIME},
    {RUNTIME(34, "cudaErrorStubLibrary", "CUDA driver is a stub library"), BODY_STUB_LIBRARY,
     .related = "CUDA_ERROR_STUB_LIBRARY"},
    {RUNTIME(35, "cudaErrorInsufficientDriver",
             "CUDA driver version is insufficient for CUDA runtime version"),
     .meaning = "The NVIDIA driver is older than the CUDA runtime this program uses, or there "
                "is no driver at all: the runtime reports a missing libcuda this way too.",
     CAUSES("No NVIDIA driver is installed or loaded (a machine or container without a GPU "
            "driver).",
            "The driver is older than the CUDA toolkit the program was built with (a CUDA 13 "
            "build needs a driver that supports CUDA 13).",
            "A container was started without the NVIDIA Container Toolkit, so the host's "
            "driver is not mounted."),
     .confirm = "nvidia-smi prints the driver version and the highest CUDA version it "
                "supports (or fails when no driver is loaded).",
     .fix = "Install or update the NVIDIA driver to one that supports this CUDA version, run "
            "containers with --gpus, or train on the CPU.",
     .with_trainer = TRAINER_VERSIONS " --device cpu trains on the CPU.",
     .pytorch = "\"RuntimeError: The NVIDIA driver on your system is too old (found version "
                "11040).\", or torch.cuda.is_available() False with \"Found no NVIDIA driver "
                "on your system\"",
     .tensorflow = "\"CUDA driver version is insufficient for CUDA runtime version\", or "
                   "\"kernel version X does not match DSO version Y -- cannot find working "
                   "devices in this configuration\"",
     FAILS_NO_DEVICE},
    {RUNTIME(36, "cudaErrorCallRequiresNewerDriver",
             "API call is not supported in the installed CUDA driver"),
     BODY_NEWER_DRIVER, .related = "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
    {RUNTIME(46, "cudaErrorDevicesUnavailable",
             "CUDA-capable device(s) is/are busy or unavailable"),
     BODY_DEVICES_UNAVAILABLE, PHRASES("all CUDA-capable devices are busy or unavailable"),
     .related = "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {RUNTIME(49, "cudaErrorIncompatibleDriverContext", "incompatible driver context"),
     .meaning = "A context created through the driver API is not one the runtime can use.",
     CAUSES("Code mixes the driver API and the runtime API, and the driver context is not "
            "the primary context or was destroyed."),
     .confirm = "Look for cuCtxCreate / cuCtxSetCurrent in the program or its libraries.",
     .fix = "Use the primary context (cuDevicePrimaryCtxRetain) when mixing the two APIs.",
     .pytorch = PYTORCH_CUDA("incompatible driver context"),
     .tensorflow = "rarely seen: TensorFlow manages its own primary contexts",
     FAILS_RUNTIME},
    {RUNTIME(52, "cudaErrorMissingConfiguration", "__global__ function call is not configured"),
     .meaning = "A kernel was launched without a launch configuration.",
     CAUSES("A launch through cudaLaunchKernel with a function or configuration that was "
            "never set up; usually a mismatch between the runtime and the compiler."),
     .confirm = "Check that nvcc and the linked libcudart come from the same toolkit.",
     .fix = "Rebuild everything with one toolkit.",
     .pytorch = PYTORCH_CUDA("__global__ function call is not configured"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(53, "cudaErrorPriorLaunchFailure", "unspecified launch failure in prior launch"),
     .meaning = "An earlier kernel launch failed (deprecated code; current runtimes report "
                "the original error, e.g. cudaErrorLaunchFailure).",
     CAUSES("An earlier kernel crashed and this call is the first to notice."),
     .confirm = PIN_THE_KERNEL,
     .fix = RESTART_FIX "fix the earlier kernel.",
     .pytorch = PYTORCH_CUDA("unspecified launch failure in prior launch"),
     .tensorflow = "rarely seen with current CUDA",
     FAILS_RUNTIME, POISONS},
    {RUNTIME(98, "cudaErrorInvalidDeviceFunction", "invalid device function"),
     .meaning = "The kernel asked for does not exist in the loaded GPU code, or not for this "
                "GPU's architecture.",
     CAUSES("The binary was built without machine code or PTX for this GPU's architecture "
            "(older CUDA reported a missing architecture this way).",
            "A kernel compiled only for a newer architecture behind __CUDA_ARCH__ guards.",
            "Host and device code built from different versions."),
     .confirm = "`cuobjdump --list-elf BINARY` against `nvidia-smi "
                "--query-gpu=compute_cap --format=csv`.",
     .fix = "Rebuild with the GPU's architecture in CMAKE_CUDA_ARCHITECTURES (or "
            "TORCH_CUDA_ARCH_LIST for extensions).",
     .pytorch = PYTORCH_CUDA("invalid device function"),
     .tensorflow = "\"Non-OK-status: GpuLaunchKernel(...) status: INTERNAL: invalid device "
                   "function\"",
     FAILS_RUNTIME},
    {RUNTIME(100, "cudaErrorNoDevice", "no CUDA-capable device is detected"), BODY_NO_DEVICE,
     PHRASES("No CUDA GPUs are available"), .related = "CUDA_ERROR_NO_DEVICE"},
    {RUNTIME(101, "cudaErrorInvalidDevice", "invalid device ordinal"), BODY_INVALID_DEVICE,
     .related = "CUDA_ERROR_INVALID_DEVICE"},
    {RUNTIME(102, "cudaErrorDeviceNotLicensed", "device doesn't have valid Grid license"),
     .meaning = "A virtual GPU (NVIDIA vGPU / GRID) has no valid license, so CUDA is "
                "restricted on it.",
     CAUSES("The vGPU license server is unreachable or the license expired.",
            "The guest's licensing client is not configured."),
     .confirm = "`nvidia-smi -q | grep -i license` in the virtual machine.",
     .fix = "Configure the NVIDIA licensing client (gridd) and make the license server "
            "reachable.",
     .pytorch = PYTORCH_CUDA("device doesn't have valid Grid license"),
     .tensorflow = "\"CUDA_ERROR_DEVICE_NOT_LICENSED\" from cuInit or context creation",
     FAILS_NO_DEVICE},
    {RUNTIME(103, "cudaErrorSoftwareValidityNotEstablished", "integrity checks failed"),
     .meaning = "The self-tests the runtime runs on itself and the driver at start-up "
                "failed, so neither can be trusted.",
     CAUSES("A corrupted or tampered CUDA runtime or driver installation.",
            "Mixed files from different driver or toolkit versions."),
     .confirm = "Reinstalling the driver and toolkit makes it go away.",
     .fix = "Reinstall the NVIDIA driver and the CUDA toolkit from one release.",
     .pytorch = PYTORCH_CUDA("integrity checks failed"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(127, "cudaErrorStartupFailure", "startup failure in cuda runtime"),
     .meaning = "The CUDA runtime failed internally while starting up.",
     CAUSES("A broken installation, or an environment (sandbox, seccomp) that blocks what "
            "the runtime needs at start-up."),
     .confirm = "A minimal CUDA program (deviceQuery) fails the same way.",
     .fix = "Reinstall the toolkit and driver; run outside the sandbox.",
     .pytorch = PYTORCH_CUDA("startup failure in cuda runtime"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(200, "cudaErrorInvalidKernelImage", "device kernel image is invalid"),
     BODY_INVALID_IMAGE, .related = "CUDA_ERROR_INVALID_IMAGE"},
    {RUNTIME(201, "cudaErrorDeviceUninitialized", "invalid device context"),
     BODY_INVALID_CONTEXT, .related = "CUDA_ERROR_INVALID_CONTEXT"},
    {RUNTIME(209, "cudaErrorNoKernelImageForDevice",
             "no kernel image is available for execution on the device"),
     BODY_NO_KERNEL_IMAGE, .related = "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {RUNTIME(214, "cudaErrorECCUncorrectable", "uncorrectable ECC error encountered"),
     BODY_ECC_UNCORRECTABLE, .related = "CUDA_ERROR_ECC_UNCORRECTABLE"},
    {RUNTIME(215, "cudaErrorUnsupportedLimit", "limit is not supported on this architecture"),
     .meaning = "cudaDeviceSetLimit was given a limit this GPU does not support.",
     CAUSES("A device-runtime limit (sync depth) set on a GPU of compute 9.0 or newer, "
            "which no longer supports it."),
     .confirm = "The failing call is cudaDeviceSetLimit / cudaDeviceGetLimit.",
     .fix = "Skip the limit on GPUs that do not support it.",
     .pytorch = PYTORCH_CUDA("limit is not supported on this architecture"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(216, "cudaErrorDeviceAlreadyInUse",
             "exclusive-thread device already in use by a different thread"),
     PHRASES("CUDA_ERROR_CONTEXT_ALREADY_IN_USE"),
     .meaning = "The GPU is in an exclusive compute mode and another thread or process "
                "already holds it.",
     CAUSES("Two processes (or two workers) placed on one GPU that an administrator set to "
            "Exclusive_Process.",
            "A stale process still holds the GPU."),
     .confirm = "`nvidia-smi -q -d COMPUTE` shows the mode; nvidia-smi lists the holder.",
     .fix = "Use one process per GPU, stop the stale process, or set the compute mode to "
            "DEFAULT.",
     .pytorch = PYTORCH_CUDA("exclusive-thread device already in use by a different thread"),
     .tensorflow = "\"CUDA_ERROR_CONTEXT_ALREADY_IN_USE\" from context creation",
     FAILS_RUNTIME},
    {RUNTIME(217, "cudaErrorPeerAccessUnsupported",
             "peer access is not supported between these two devices"),
     .meaning = "Direct GPU-to-GPU access (P2P over NVLink or PCIe) is not possible between "
                "these two GPUs.",
     CAUSES("The GPUs sit under different PCIe root complexes or CPU sockets.",
            "P2P is disabled on consumer GPUs or by the platform (IOMMU, virtualization).",
            "Different GPU models that cannot peer."),
     .confirm = "`nvidia-smi topo -m` shows the link between each pair; "
                "cudaDeviceCanAccessPeer answers for a pair.",
     .fix = "Check cudaDeviceCanAccessPeer and copy through the host when it is 0; for NCCL, "
            "NCCL_P2P_DISABLE=1 makes it do the same.",
     .pytorch = PYTORCH_CUDA("peer access is not supported between these two devices"),
     .tensorflow = "a warning that peer access is not supported between the devices, and "
                   "copies through the host",
     FAILS_RUNTIME},
    {RUNTIME(218, "cudaErrorInvalidPtx", "a PTX JIT compilation failed"), BODY_INVALID_PTX,
     .related = "CUDA_ERROR_INVALID_PTX"},
    {RUNTIME(220, "cudaErrorNvlinkUncorrectable",
             "uncorrectable NVLink error detected during the execution"),
     .meaning = "An NVLink connection between GPUs reported an error it could not correct. "
                "The CUDA context is unusable afterwards.",
     CAUSES("A faulty NVLink bridge, cable or GPU.", "Overheating or power problems."),
     .confirm = "`nvidia-smi nvlink -e` shows error counters; dmesg shows Xid 74.",
     .fix = RESTART_FIX "none is at fault. Reset the GPUs or reboot; have the link checked "
            "if it repeats.",
     .pytorch = PYTORCH_CUDA("uncorrectable NVLink error detected during the execution"),
     .tensorflow = "\"CUDA_ERROR_NVLINK_UNCORRECTABLE\"",
     FAILS_RUNTIME, POISONS},
    {RUNTIME(221, "cudaErrorJitCompilerNotFound", "PTX JIT compiler library not found"),
     .meaning = "The driver needed to compile PTX for this GPU but its JIT compiler library "
                "(libnvidia-ptxjitcompiler) is missing.",
     CAUSES("A partial driver installation, or a container that mounts libcuda but not the "
            "JIT compiler.",
            "The binary lacks machine code for this GPU, which is why PTX is compiled."),
     .confirm = "`ldconfig -p | grep ptxjitcompiler` finds nothing.",
     .fix = "Install the full driver (or mount its libraries), or build machine code for the "
            "GPU's architecture.",
     .pytorch = PYTORCH_CUDA("PTX JIT compiler library not found"),
     .tensorflow = "\"CUDA_ERROR_JIT_COMPILER_NOT_FOUND\"",
     FAILS_RUNTIME},
    {RUNTIME(222, "cudaErrorUnsupportedPtxVersion",
             "the provided PTX was compiled with an unsupported toolchain."),
     BODY_UNSUPPORTED_PTX, .related = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {RUNTIME(223, "cudaErrorJitCompilationDisabled", "PTX JIT compilation was disabled"),
     .meaning = "The binary has only PTX for this GPU, and PTX compilation is turned off.",
     CAUSES("CUDA_DISABLE_PTX_JIT=1 is set in the environment.",
            "The binary lacks machine code for this GPU's architecture."),
     .confirm = "`env | grep CUDA_DISABLE_PTX_JIT`.",
     .fix = "Unset CUDA_DISABLE_PTX_JIT, or build machine code for the GPU.",
     .pytorch = PYTORCH_CUDA("PTX JIT compilation was disabled"),
     .tensorflow = "\"CUDA_ERROR_JIT_COMPILATION_DISABLED\"",
     FAILS_RUNTIME},
    {RUNTIME(226, "cudaErrorContained",
             "Invalid access of peer GPU memory over nvlink or a hardware error"),
     .meaning = "The GPU contained an error (a bad peer-memory access over NVLink or a "
                "hardware error). The CUDA context is unusable afterwards.",
     CAUSES("A kernel accessed another GPU's memory through NVLink at an invalid address.",
            "A hardware error the GPU isolated to this process."),
     .confirm = "dmesg shows Xid errors; compute-sanitizer for the invalid-access case.",
     .fix = RESTART_FIX "fix the peer access, or have the hardware checked.",
     .pytorch = PYTORCH_CUDA("Invalid access of peer GPU memory over nvlink or a hardware error"),
     .tensorflow = "\"CUDA_ERROR_CONTAINED\"",
     FAILS_RUNTIME, POISONS},
    {RUNTIME(303, "cudaErrorSharedObjectInitFailed", "shared object initialization failed"),
     .meaning = "A shared library the CUDA runtime depends on failed to initialize.",
     CAUSES("A mismatched or broken libcuda / libcudart installation.",
            "The driver's kernel module is not loaded."),
     .confirm = "nvidia-smi fails too, or ldd shows libraries from two CUDA versions.",
     .fix = "Reinstall the driver; keep one CUDA version on the library path.",
     .pytorch = PYTORCH_CUDA("shared object initialization failed"),
     .tensorflow = "\"failed call to cuInit: CUDA_ERROR_SHARED_OBJECT_INIT_FAILED\"",
     FAILS_RUNTIME},
    {RUNTIME(304, "cudaErrorOperatingSystem",
             "OS call failed or operation not supported on this OS"),
     BODY_OPERATING_SYSTEM, .related = "CUDA_ERROR_OPERATING_SYSTEM"},
    {RUNTIME(400, "cudaErrorInvalidResourceHandle", "invalid resource handle"),
     BODY_INVALID_HANDLE, .related = "CUDA_ERROR_INVALID_HANDLE"},
    {RUNTIME(401, "cudaErrorIllegalState",
             "the operation cannot be performed in the present state"),
     .meaning = "A resource the call needs is not in a state that allows the operation.",
     CAUSES("Using a CUDA graph or stream in the middle of capture or after it was "
            "invalidated.",
            "Calling an API in an order the runtime does not allow."),
     .confirm = "Check the state of the graph, stream or event used by the failing call.",
     .fix = "Complete or restart the capture, then retry.",
     .pytorch = PYTORCH_CUDA("the operation cannot be performed in the present state"),
     .tensorflow = "\"CUDA_ERROR_ILLEGAL_STATE\"",
     FAILS_RUNTIME},
    {RUNTIME(500, "cudaErrorSymbolNotFound", "named symbol not found"), BODY_NOT_FOUND,
     .related = "CUDA_ERROR_NOT_FOUND"},
    {RUNTIME(600, "cudaErrorNotReady", "device not ready"), BODY_NOT_READY,
     .related = "CUDA_ERROR_NOT_READY"},
    {RUNTIME(700, "cudaErrorIllegalAddress", "an illegal memory access was encountered"),
     BODY_ILLEGAL_ADDRESS, .related = "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {RUNTIME(701, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"),
     BODY_LAUNCH_OUT_OF_RESOURCES, .related = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {RUNTIME(702, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"),
     BODY_LAUNCH_TIMEOUT, .related = "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {RUNTIME(704, "cudaErrorPeerAccessAlreadyEnabled", "peer access is already enabled"),
     .meaning = "cudaDeviceEnablePeerAccess was called for a pair that already has it.",
     CAUSES("Two libraries (e.g. NCCL and the program) both enable peer access."),
     .confirm = "The failing call is cudaDeviceEnablePeerAccess.",
     .fix = "Harmless: clear it with cudaGetLastError and go on.",
     .pytorch = "handled inside PyTorch; not raised",
     .tensorflow = "handled inside TensorFlow; not raised",
     FAILS_RUNTIME},
    {RUNTIME(705, "cudaErrorPeerAccessNotEnabled", "peer access has not been enabled"),
     .meaning = "Peer access was disabled, or used, for a pair that never enabled it.",
     CAUSES("A direct copy or kernel access between GPUs without "
            "cudaDeviceEnablePeerAccess first."),
     .confirm = "Check cudaDeviceCanAccessPeer and the enable call for the pair.",
     .fix = "Enable peer access first, or copy through cudaMemcpyPeer.",
     .pytorch = PYTORCH_CUDA("peer access has not been enabled"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(708, "cudaErrorSetOnActiveProcess", "cannot set while device is active in this process"),
     .meaning = "A device setting that must come first (flags, valid devices) was changed "
                "after CUDA was already in use in this process.",
     CAUSES("cudaSetDeviceFlags called after memory was allocated or a kernel launched."),
     .confirm = "The failing call is cudaSetDeviceFlags / cudaSetValidDevices.",
     .fix = "Set device flags before any other CUDA work in the process.",
     .pytorch = PYTORCH_CUDA("cannot set while device is active in this process"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(709, "cudaErrorContextIsDestroyed", "context is destroyed"),
     BODY_CONTEXT_DESTROYED, .related = "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {RUNTIME(710, "cudaErrorAssert", "device-side assert triggered"), BODY_ASSERT,
     .related = "CUDA_ERROR_ASSERT"},
    {RUNTIME(711, "cudaErrorTooManyPeers", "peer mapping resources exhausted"),
     .meaning = "Enabling peer access would exceed the hardware's limit of peers per GPU.",
     CAUSES("More than 8 GPUs enabling peer access to one another over PCIe."),
     .confirm = "Count the peers enabled for the GPU; `nvidia-smi topo -m`.",
     .fix = "Enable peer access only between GPUs that exchange data.",
     .pytorch = PYTORCH_CUDA("peer mapping resources exhausted"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(714, "cudaErrorHardwareStackError", "hardware stack error"), BODY_HARDWARE_STACK,
     .related = "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {RUNTIME(715, "cudaErrorIllegalInstruction", "an illegal instruction was encountered"),
     BODY_ILLEGAL_INSTRUCTION, .related = "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {RUNTIME(716, "cudaErrorMisalignedAddress", "misaligned address"),
     BODY_MISALIGNED_ADDRESS, .related = "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {RUNTIME(717, "cudaErrorInvalidAddressSpace",
             "operation not supported on global/shared address space"),
     .meaning = "A kernel used an instruction on memory of the wrong kind (e.g. a "
                "shared-memory atomic on a global address). The CUDA context is unusable "
                "afterwards.",
     CAUSES("A generic pointer that points elsewhere than the instruction expects.",
            "Corrupted pointers in device code."),
     .confirm = PIN_THE_KERNEL,
     .fix = RESTART_FIX "fix the pointer it reports.",
     .pytorch = PYTORCH_CUDA("operation not supported on global/shared address space"),
     .tensorflow = "\"CUDA_ERROR_INVALID_ADDRESS_SPACE\"",
     FAILS_RUNTIME, POISONS},
    {RUNTIME(718, "cudaErrorInvalidPc", "invalid program counter"),
     .meaning = "A kernel jumped to an invalid instruction address. The CUDA context is "
                "unusable afterwards.",
     CAUSES("A corrupted function pointer or return address in device code.",
            "A stack overflow that overwrote a return address."),
     .confirm = PIN_THE_KERNEL,
     .fix = RESTART_FIX "fix the corruption it reports.",
     .pytorch = PYTORCH_CUDA("invalid program counter"),
     .tensorflow = "\"CUDA_ERROR_INVALID_PC\"",
     FAILS_RUNTIME, POISONS},
    {RUNTIME(719, "cudaErrorLaunchFailure", "unspecified launch failure"), BODY_LAUNCH_FAILURE,
     .related = "CUDA_ERROR_LAUNCH_FAILED"},
    {RUNTIME(720, "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"),
     .meaning = "A cooperative kernel asked for more blocks than can be resident on the GPU "
                "at once.",
     CAUSES("The grid was sized for a larger GPU, or occupancy is lower than assumed "
            "(more registers or shared memory per block)."),
     .confirm = "Compare the grid with cudaOccupancyMaxActiveBlocksPerMultiprocessor times "
                "the multiprocessor count.",
     .fix = "Size the grid from the occupancy query on the GPU it runs on.",
     .pytorch = PYTORCH_CUDA("too many blocks in cooperative launch"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(721, "cudaErrorTensorMemoryLeak", "tensor memory not completely freed"),
     .meaning = "A kernel using tensor memory (compute 10.0+) exited without freeing all of "
                "it. The CUDA context is unusable afterwards.",
     CAUSES("A custom kernel on a Blackwell GPU that allocates tensor memory and misses a "
            "deallocation on some path."),
     .confirm = PIN_THE_KERNEL,
     .fix = RESTART_FIX "free tensor memory on every exit path of the kernel.",
     .pytorch = PYTORCH_CUDA("tensor memory not completely freed"),
     .tensorflow = "\"CUDA_ERROR_TENSOR_MEMORY_LEAK\"",
     FAILS_RUNTIME, POISONS},
    {RUNTIME(800, "cudaErrorNotPermitted", "operation not permitted"), BODY_NOT_PERMITTED,
     .related = "CUDA_ERROR_NOT_PERMITTED"},
    {RUNTIME(801, "cudaErrorNotSupported", "operation not supported"), BODY_NOT_SUPPORTED,
     .related = "CUDA_ERROR_NOT_SUPPORTED"},
    {RUNTIME(802, "cudaErrorSystemNotReady", "system not yet initialized"),
     BODY_SYSTEM_NOT_READY, .related = "CUDA_ERROR_SYSTEM_NOT_READY"},
    {RUNTIME(803, "cudaErrorSystemDriverMismatch",
             "system has unsupported display driver / cuda driver combination"),
     BODY_SYSTEM_DRIVER_MISMATCH, .related = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
    {RUNTIME(804, "cudaErrorCompatNotSupportedOnDevice",
             "forward compatibility was attempted on non supported HW"),
     BODY_COMPAT_NOT_SUPPORTED, .related = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
    {RUNTIME(805, "cudaErrorMpsConnectionFailed",
             "MPS client failed to connect to the MPS control daemon or the MPS server"),
     .meaning = "The process is set up to use MPS (Multi-Process Service) but cannot reach "
                "its daemon.",
     CAUSES("CUDA_MPS_PIPE_DIRECTORY points to a directory with no running MPS daemon.",
            "The MPS daemon runs as another user or crashed."),
     .confirm = "`ps aux | grep nvidia-cuda-mps`; `env | grep CUDA_MPS`.",
     .fix = "Start nvidia-cuda-mps-control -d, or unset the MPS variables to run without "
            "it.",
     .pytorch = PYTORCH_CUDA("MPS client failed to connect to the MPS control daemon or the "
                             "MPS server"),
     .tensorflow = "\"CUDA_ERROR_MPS_CONNECTION_FAILED\"",
     FAILS_RUNTIME},
    {RUNTIME(807, "cudaErrorMpsServerNotReady",
             "MPS server is not ready to accept new MPS client requests"),
     .meaning = "The MPS server is recovering from a failure and refuses new clients for "
                "now.",
     CAUSES("Another MPS client crashed with a fatal GPU error and the server is "
            "restarting."),
     .confirm = "The MPS control daemon's log (/var/log/nvidia-mps/control.log).",
     .fix = "Retry after the server has recovered; fix the client that crashed.",
     .pytorch = PYTORCH_CUDA("MPS server is not ready to accept new MPS client requests"),
     .tensorflow = "\"CUDA_ERROR_MPS_SERVER_NOT_READY\"",
     FAILS_RUNTIME},
    {RUNTIME(810, "cudaErrorMpsClientTerminated", "the MPS client has been terminated by the server"),
     .meaning = "The MPS server ended this client, usually because another client hit a "
                "fatal GPU error. The process must restart to use CUDA again.",
     CAUSES("A fatal error (illegal address, assert) in another process sharing the GPU "
            "through MPS.",
            "An administrator terminated the client."),
     .confirm = "The MPS server log names the client that faulted.",
     .fix = RESTART_FIX "there is none in this process if another client faulted.",
     .pytorch = PYTORCH_CUDA("the MPS client has been terminated by the server"),
     .tensorflow = "\"CUDA_ERROR_MPS_CLIENT_TERMINATED\"",
     FAILS_RUNTIME, POISONS},
    {RUNTIME(900, "cudaErrorStreamCaptureUnsupported",
             "operation not permitted when stream is capturing"),
     .meaning = "A call that cannot be recorded into a CUDA graph (a synchronization, a "
                "cudaMalloc, a query) was made while a stream was being captured.",
     CAUSES("cudaDeviceSynchronize, cudaMalloc or a blocking copy inside the captured "
            "region (e.g. a data-dependent size read back to the host).",
            "A library call that synchronizes internally."),
     .confirm = "The failing call sits between cudaStreamBeginCapture and EndCapture.",
     .fix = "Move allocations and host synchronization out of the captured step.",
     .pytorch = PYTORCH_CUDA("operation not permitted when stream is capturing"),
     .tensorflow = "rarely seen (XLA manages graph capture)",
     FAILS_RUNTIME},
    {RUNTIME(901, "cudaErrorStreamCaptureInvalidated",
             "operation failed due to a previous error during capture"),
     .meaning = "An earlier error during stream capture invalidated the graph being "
                "recorded.",
     CAUSES("An unsupported call earlier in the capture (see cudaErrorStreamCaptureUnsupported)."),
     .confirm = "Check the first error reported after cudaStreamBeginCapture.",
     .fix = "Fix the first error, end the capture, and capture again.",
     .pytorch = PYTORCH_CUDA("operation failed due to a previous error during capture"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(904, "cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work"),
     .meaning = "Capture ended while work forked onto another stream was not joined back.",
     CAUSES("A side stream waited on an event from the capture but the origin stream never "
            "waited on the side stream's work."),
     .confirm = "Review event records and waits between the streams in the captured region.",
     .fix = "Record an event on each side stream and make the origin stream wait on it "
            "before ending capture.",
     .pytorch = PYTORCH_CUDA("capturing stream has unjoined work"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(906, "cudaErrorStreamCaptureImplicit",
             "operation would make the legacy stream depend on a capturing blocking stream"),
     .meaning = "Work on the legacy default stream would implicitly depend on a stream "
                "being captured.",
     CAUSES("A call on the default stream (stream 0) while another blocking stream is "
            "capturing."),
     .confirm = "Look for calls without an explicit stream during capture.",
     .fix = "Pass an explicit stream everywhere, or create streams with "
            "cudaStreamNonBlocking.",
     .pytorch = PYTORCH_CUDA("operation would make the legacy stream depend on a capturing "
                             "blocking stream"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(908, "cudaErrorStreamCaptureWrongThread",
             "attempt to terminate a thread-local capture sequence from another thread"),
     .meaning = "Capture was ended from a different thread than the one that began it.",
     CAUSES("Capture begun in thread-local mode and ended from a worker thread."),
     .confirm = "Compare the threads that call Begin and EndCapture.",
     .fix = "End capture on the same thread, or use cudaStreamCaptureModeRelaxed.",
     .pytorch = PYTORCH_CUDA("attempt to terminate a thread-local capture sequence from "
                             "another thread"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(909, "cudaErrorTimeout", "wait operation timed out"),
     .meaning = "A wait with a time limit ran out before the work finished.",
     CAUSES("A hung kernel or collective (a peer that never arrived).",
            "A timeout set too short for the work."),
     .confirm = "nvidia-smi shows the GPU still busy; py-spy or gdb shows where it waits.",
     .fix = "Find the hung peer or kernel; lengthen the timeout if the work is just slow.",
     .pytorch = PYTORCH_CUDA("wait operation timed out"),
     .tensorflow = "\"CUDA_ERROR_TIMEOUT\"",
     FAILS_RUNTIME},
    {RUNTIME(910, "cudaErrorGraphExecUpdateFailure",
             "the graph update was not performed because it included changes which violated "
             "constraints specific to instantiated graph update"),
     .meaning = "An instantiated CUDA graph could not be updated in place because the new "
                "graph differs in structure.",
     CAUSES("A changed shape or batch size altered the kernels or their order.",
            "Different memory nodes or a different device."),
     .confirm = "cudaGraphExecUpdate's result info names the node that differs.",
     .fix = "Instantiate a new graph for the new shape (cache one per shape).",
     .pytorch = PYTORCH_CUDA("the graph update was not performed because it included changes "
                             "which violated constraints specific to instantiated graph update"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(912, "cudaErrorInvalidClusterSize",
             "a kernel launch error has occurred due to cluster misconfiguration"),
     .meaning = "A kernel launched with thread-block clusters (compute 9.0+) asked for a "
                "cluster size or shape the GPU does not allow.",
     CAUSES("A cluster larger than 8 blocks without the non-portable attribute.",
            "A grid not divisible by the cluster dimensions."),
     .confirm = "Print the cluster dimensions and cudaOccupancyMaxPotentialClusterSize.",
     .fix = "Use a cluster size that divides the grid and that the GPU supports.",
     .pytorch = PYTORCH_CUDA("a kernel launch error has occurred due to cluster "
                             "misconfiguration"),
     .tensorflow = "rarely seen",
     FAILS_RUNTIME},
    {RUNTIME(999, "cudaErrorUnknown", "unknown error"), BODY_UNKNOWN,
     PHRASES("CUDA error: unknown error"),
     .related = "CUDA_ERROR_UNKNOWN"},

    // ---- CUDA driver: CUresult (cuda.h); TensorFlow reports these names ----
    {DRIVER(1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"), BODY_INVALID_VALUE,
     .related = "cudaErrorInvalidValue"},
    {DRIVER(2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"), BODY_OUT_OF_MEMORY,
     .related = "cudaErrorMemoryAllocation"},
    {DRIVER(3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"), BODY_INITIALIZATION,
     .related = "cudaErrorInitializationError"},
    {DRIVER(4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"), BODY_DEINITIALIZED,
     .related = "cudaErrorCudartUnloading"},
    {DRIVER(34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"), BODY_STUB_LIBRARY,
     .related = "cudaErrorStubLibrary"},
    {DRIVER(36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
            "API call is not supported in the installed CUDA driver"),
     BODY_NEWER_DRIVER, .related = "cudaErrorCallRequiresNewerDriver"},
    {DRIVER(46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
            "CUDA-capable device(s) is/are busy or unavailable"),
     BODY_DEVICES_UNAVAILABLE, .related = "cudaErrorDevicesUnavailable"},
    {DRIVER(100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"), BODY_NO_DEVICE,
     .related = "cudaErrorNoDevice"},
    {DRIVER(101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"), BODY_INVALID_DEVICE,
     .related = "cudaErrorInvalidDevice"},
    {DRIVER(200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"),
     BODY_INVALID_IMAGE, .related = "cudaErrorInvalidKernelImage"},
    {DRIVER(201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"), BODY_INVALID_CONTEXT,
     .related = "cudaErrorDeviceUninitialized"},
    {DRIVER(209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
            "no kernel image is available for execution on the device"),
     BODY_NO_KERNEL_IMAGE, .related = "cudaErrorNoKernelImageForDevice"},
    {DRIVER(214, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"),
     BODY_ECC_UNCORRECTABLE, .related = "cudaErrorECCUncorrectable"},
    {DRIVER(218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"), BODY_INVALID_PTX,
     .related = "cudaErrorInvalidPtx"},
    {DRIVER(222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "the provided PTX was compiled with an unsupported toolchain."),
     BODY_UNSUPPORTED_PTX, .related = "cudaErrorUnsupportedPtxVersion"},
    {DRIVER(304, "CUDA_ERROR_OPERATING_SYSTEM",
            "OS call failed or operation not supported on this OS"),
     BODY_OPERATING_SYSTEM, .related = "cudaErrorOperatingSystem"},
    {DRIVER(400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"), BODY_INVALID_HANDLE,
     .related = "cudaErrorInvalidResourceHandle"},
    {DRIVER(500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"), BODY_NOT_FOUND,
     .related = "cudaErrorSymbolNotFound"},
    {DRIVER(600, "CUDA_ERROR_NOT_READY", "device not ready"), BODY_NOT_READY,
     .related = "cudaErrorNotReady"},
    {DRIVER(700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"),
     BODY_ILLEGAL_ADDRESS, .related = "cudaErrorIllegalAddress"},
    {DRIVER(701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"),
     BODY_LAUNCH_OUT_OF_RESOURCES, .related = "cudaErrorLaunchOutOfResources"},
    {DRIVER(702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"),
     BODY_LAUNCH_TIMEOUT, .related = "cudaErrorLaunchTimeout"},
    {DRIVER(709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"),
     BODY_CONTEXT_DESTROYED, .related = "cudaErrorContextIsDestroyed"},
    {DRIVER(710, "CUDA_ERROR_ASSERT", "device-side assert triggered"), BODY_ASSERT,
     .related = "cudaErrorAssert"},
    {DRIVER(714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"),
     BODY_HARDWARE_STACK, .related = "cudaErrorHardwareStackError"},
    {DRIVER(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"),
     BODY_ILLEGAL_INSTRUCTION, .related = "cudaErrorIllegalInstruction"},
    {DRIVER(716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"),
     BODY_MISALIGNED_ADDRESS, .related = "cudaErrorMisalignedAddress"},
    {DRIVER(719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"), BODY_LAUNCH_FAILURE,
     .related = "cudaErrorLaunchFailure"},
    {DRIVER(800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"), BODY_NOT_PERMITTED,
     .related = "cudaErrorNotPermitted"},
    {DRIVER(801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"), BODY_NOT_SUPPORTED,
     .related = "cudaErrorNotSupported"},
    {DRIVER(802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"),
     BODY_SYSTEM_NOT_READY, .related = "cudaErrorSystemNotReady"},
    {DRIVER(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
            "system has unsupported display driver / cuda driver combination"),
     BODY_SYSTEM_DRIVER_MISMATCH, .related = "cudaErrorSystemDriverMismatch"},
    {DRIVER(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
            "forward compatibility was attempted on non supported HW"),
     BODY_COMPAT_NOT_SUPPORTED, .related = "cudaErrorCompatNotSupportedOnDevice"},
    {DRIVER(999, "CUDA_ERROR_UNKNOWN", "unknown error"), BODY_UNKNOWN,
     .related = "cudaErrorUnknown"},

    // ---- cuBLAS: cublasStatus_t (cublas_api.h), every status ----
    {CUBLAS(1, "CUBLAS_STATUS_NOT_INITIALIZED", "the library was not initialized"),
     .meaning = "cuBLAS could not set itself up: creating the handle failed, or the handle "
                "used was never created.",
     CAUSES("The GPU was out of memory when cublasCreate allocated its workspace (it needs "
            "some free memory even for a tiny model).",
            "An earlier CUDA error (an illegal address, an assert) left the context broken, "
            "and cuBLAS is the first to notice.",
            "The driver is too old for this cuBLAS, or cuBLAS comes from another CUDA "
            "version than the runtime.",
            "A handle used after cublasDestroy, or never created."),
     .confirm = "nvidia-smi shows the memory free at start-up; CUDA_LAUNCH_BLOCKING=1 shows "
                "whether an earlier error came first.",
     .with_trainer = TRAINER_VERSIONS,
     .fix = "Free GPU memory (other processes, a smaller batch) so the handle can be "
            "created; fix the earlier error if there is one; install cuBLAS from the same "
            "CUDA release as the runtime and update the driver.",
     .pytorch = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
                "`cublasCreate(handle)`",
     .tensorflow = "\"failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED\", then "
                   "\"InternalError: Blas GEMM launch failed\"",
     FAILS_RUNTIME},
    {CUBLAS(3, "CUBLAS_STATUS_ALLOC_FAILED", "the resource allocation failed"),
     .meaning = "cuBLAS could not allocate GPU memory it needs (a workspace, a handle's "
                "buffers); usually cudaMalloc failed inside it.",
     CAUSES("The GPU is full: the batch, the model, or other processes use the memory.",
            "Memory held by a caching allocator leaves too little for cuBLAS's own "
            "allocations."),
     .confirm = "nvidia-smi shows the memory in use.",
     .fix = "Lower the batch size, cap the framework's memory to leave room for the "
            "libraries, or free the GPU of other processes.",
     .with_trainer = TRAINER_MEMORY,
     .pytorch = "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
                "`cublasCreate(handle)`",
     .tensorflow = "\"failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED\"",
     FAILS_OOM},
    {CUBLAS(7, "CUBLAS_STATUS_INVALID_VALUE",
            "an unsupported value or parameter was passed to the function"),
     .meaning = "An argument to the cuBLAS call is invalid: a negative dimension, a leading "
                "dimension smaller than the matrix, a null pointer, an unsupported type "
                "combination.",
     CAUSES("A matrix dimension wrong for the data (e.g. a dense layer whose input size "
            "does not match the previous layer).",
            "A dimension past 2^31-1 that does not fit cuBLAS's 32-bit int.",
            "lda/ldb/ldc smaller than the rows of the (transposed) matrix."),
     .confirm = "Print m, n, k and the leading dimensions of the failing call.",
     .fix = "Fix the shapes; split matrices larger than 2^31 elements.",
     .with_trainer = "trainer checks shapes when it builds the graph. " TRAINER_BUG,
     .pytorch = PYTORCH_CUBLAS("CUBLAS_STATUS_INVALID_VALUE"),
     .tensorflow = TF_CUBLAS("CUBLAS_STATUS_INVALID_VALUE"),
     FAILS_RUNTIME},
    {CUBLAS(8, "CUBLAS_STATUS_ARCH_MISMATCH",
            "the function requires an architectural feature absent from the device"),
     .meaning = "The call needs a GPU feature this GPU does not have.",
     CAUSES("A data type the GPU lacks in hardware (FP8 before compute 8.9, BF16 tensor "
            "cores before 8.0).",
            "A cuBLAS build that no longer supports this GPU's architecture."),
     .confirm = "nvidia-smi --query-gpu=compute_cap --format=csv shows the compute "
                "capability.",
     .with_trainer = TRAINER_DEVICES,
     .fix = "Use a data type the GPU supports (fp32 or fp16 on older GPUs) or a newer GPU.",
     .pytorch = PYTORCH_CUBLAS("CUBLAS_STATUS_ARCH_MISMATCH"),
     .tensorflow = TF_CUBLAS("CUBLAS_STATUS_ARCH_MISMATCH"),
     FAILS_RUNTIME},
    {CUBLAS(11, "CUBLAS_STATUS_MAPPING_ERROR", "an access to GPU memory space failed"),
     .meaning = "cuBLAS could not access GPU memory, usually when binding a texture.",
     CAUSES("An earlier error left the memory or context in a bad state.",
            "A pointer that is not device memory."),
     .confirm = "CUDA_LAUNCH_BLOCKING=1 shows whether an earlier error came first.",
     .fix = "Fix the earlier error or the pointer; restart the process.",
     .pytorch = PYTORCH_CUBLAS("CUBLAS_STATUS_MAPPING_ERROR"),
     .tensorflow = TF_CUBLAS("CUBLAS_STATUS_MAPPING_ERROR"),
     FAILS_RUNTIME},
    {CUBLAS(13, "CUBLAS_STATUS_EXECUTION_FAILED", "the function failed to launch on the GPU"),
     .meaning = "cuBLAS's GPU kernel failed to launch or run.",
     CAUSES("An earlier asynchronous error (an out-of-range index, an illegal address) "
            "surfaced at this GEMM.",
            "Input pointers that are invalid or on another device.",
            "No cuBLAS kernel for this GPU (an architecture the build lacks)."),
     .confirm = "Run with CUDA_LAUNCH_BLOCKING=1 to see whether an earlier kernel failed; "
                "compute-sanitizer for invalid pointers.",
     .with_trainer = "--sync-check pins the kernel as CUDA_LAUNCH_BLOCKING=1 does.",
     .fix = "Fix the earlier kernel if there is one; otherwise check the inputs' device and "
            "that cuBLAS supports the GPU.",
     .pytorch = PYTORCH_CUBLAS("CUBLAS_STATUS_EXECUTION_FAILED"),
     .tensorflow = TF_CUBLAS("CUBLAS_STATUS_EXECUTION_FAILED"),
     FAILS_RUNTIME},
    {CUBLAS(14, "CUBLAS_STATUS_INTERNAL_ERROR", "an internal operation failed"),
     .meaning = "An operation inside cuBLAS failed, usually a CUDA call it made (a copy, an "
                "allocation).",
     CAUSES("Out of GPU memory for cuBLAS's workspace.",
            "An earlier asynchronous error surfacing inside cuBLAS.",
            "Mismatched cuBLAS and cuBLASLt libraries, or a driver too old for them."),
     .confirm = "CUBLAS_LOGINFO_DBG=1 CUBLAS_LOGDEST_DBG=stderr prints cuBLAS's own log; "
                "nvidia-smi shows free memory.",
     .fix = "Free GPU memory, fix earlier errors, and install cuBLAS and cuBLASLt from one "
            "CUDA release.",
     .pytorch = PYTORCH_CUBLAS("CUBLAS_STATUS_INTERNAL_ERROR"),
     .tensorflow = TF_CUBLAS("CUBLAS_STATUS_INTERNAL_ERROR"),
     FAILS_RUNTIME},
    {CUBLAS(15, "CUBLAS_STATUS_NOT_SUPPORTED", "the requested functionality is not supported"),
     .meaning = "cuBLAS has no implementation for this combination of parameters.",
     CAUSES("A data type and compute type pair cuBLAS does not offer.",
            "A layout, alignment or size a cuBLASLt kernel does not support.",
            "A math mode the GPU lacks."),
     .confirm = "Check the cuBLAS documentation's table of supported type combinations for "
                "the call.",
     .fix = "Use a supported combination (e.g. fp32 compute for fp16 inputs) or align "
            "buffers to 16 bytes.",
     .pytorch = PYTORCH_CUBLAS("CUBLAS_STATUS_NOT_SUPPORTED"),
     .tensorflow = TF_CUBLAS("CUBLAS_STATUS_NOT_SUPPORTED"),
     FAILS_RUNTIME},
    {CUBLAS(16, "CUBLAS_STATUS_LICENSE_ERROR", "the license check failed"),
     .meaning = "A cuBLAS feature that needs a license found none (rare; some cuBLAS-XT "
                "features).",
     CAUSES("The feature's license file is missing or expired."),
     .confirm = "The failing call belongs to a licensed feature.",
     .fix = "Install the license or use the unlicensed API.",
     .pytorch = PYTORCH_CUBLAS("CUBLAS_STATUS_LICENSE_ERROR"),
     .tensorflow = TF_CUBLAS("CUBLAS_STATUS_LICENSE_ERROR"),
     FAILS_RUNTIME},

    // ---- cuDNN: cudnnStatus_t (cudnn_graph_v9.h), every status of cuDNN 9 ----

    {CUDNN(1001, "CUDNN_STATUS_NOT_INITIALIZED"), .old_number = 1,
     .meaning = "cuDNN was not initialized: cudnnCreate failed or was never called.",
     CAUSES("The GPU was out of memory when cudnnCreate set up its handle.",
            "The CUDA runtime itself failed to initialize (no driver, driver too old).",
            "An earlier CUDA error left the context broken."),
     .confirm = "nvidia-smi shows free memory and the driver version.",
     .with_trainer = TRAINER_VERSIONS,
     .fix = "Free GPU memory, update the driver, fix earlier errors; create the handle once "
            "per device before use.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_INITIALIZED"),
     .tensorflow = "\"Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\", then "
                   "\"Failed to get convolution algorithm. This is probably because cuDNN "
                   "failed to initialize\"",
     FAILS_RUNTIME},
    {CUDNN(1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"),
     .old_name = "CUDNN_STATUS_VERSION_MISMATCH", .old_number = 14,
     .meaning = "cuDNN's pieces (libcudnn, libcudnn_ops, libcudnn_cnn, libcudnn_adv, the "
                "engine libraries) come from different versions.",
     CAUSES("Two cuDNN installs mixed on the library path (a system cuDNN and a pip "
            "nvidia-cudnn wheel, or a conda one).",
            "A partial upgrade that replaced some of the libraries."),
     .confirm = "`ldconfig -p | grep cudnn` and LD_LIBRARY_PATH show every libcudnn* found; "
                "their version suffixes must match.",
     .fix = "Keep one complete cuDNN on the library path; remove the stale directory from "
            "LD_LIBRARY_PATH.",
     .pytorch = "\"RuntimeError: cuDNN version incompatibility: PyTorch was compiled against "
                "(9, 1, 0) but found runtime version (8, 9, 2).\" or "
                PYTORCH_CUDNN("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"),
     .tensorflow = "\"Loaded runtime CuDNN library: 8.0.5 but source was compiled with: "
                   "8.1.0. CuDNN library needs to have matching major version and equal or "
                   "higher minor version.\" then \"DNN library initialization failed\"",
     FAILS_RUNTIME},
    {CUDNN(1003, "CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"),
     .meaning = "A serialized cuDNN execution plan or graph was written by another cuDNN "
                "version and cannot be loaded.",
     CAUSES("A plan cache saved on disk by an older cuDNN."),
     .confirm = "The failing call deserializes a plan.",
     .fix = "Delete the cache and let cuDNN build the plans again.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH"),
     FAILS_RUNTIME},
    {CUDNN(1004, "CUDNN_STATUS_DEPRECATED"),
     .meaning = "The call uses functionality this cuDNN has deprecated and reports as an "
                "error.",
     CAUSES("Code written for cuDNN 8 using APIs cuDNN 9 dropped or restricted."),
     .confirm = CUDNN_LOG_CONFIRM,
     .fix = "Move to the replacement API named in cuDNN's release notes.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_DEPRECATED"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_DEPRECATED"),
     FAILS_RUNTIME},
    {CUDNN(1005, "CUDNN_STATUS_LICENSE_ERROR"), .old_number = 10,
     .meaning = "A cuDNN feature that needs a license found none or an expired one.",
     CAUSES("NVIDIA_LICENSE_FILE unset or pointing to a missing file (historical cuDNN "
            "builds)."),
     .confirm = "`echo $NVIDIA_LICENSE_FILE`.",
     .fix = "Install the license or use a cuDNN build without license checks.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_LICENSE_ERROR"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_LICENSE_ERROR"),
     FAILS_RUNTIME},
    {CUDNN(1006, "CUDNN_STATUS_RUNTIME_IN_PROGRESS"), .old_number = 12,
     .meaning = "Work queued on the stream has not finished, so cudnnQueryRuntimeError "
                "cannot answer yet. Not a failure.",
     CAUSES("Querying runtime errors without synchronizing the stream first."),
     .confirm = "The call is cudnnQueryRuntimeError in non-blocking mode.",
     .fix = "Synchronize the stream, or query in blocking mode.",
     .pytorch = "not raised by PyTorch",
     .tensorflow = "not raised by TensorFlow",
     FAILS_RUNTIME},
    {CUDNN(1007, "CUDNN_STATUS_RUNTIME_FP_OVERFLOW"), .old_number = 13,
     .meaning = "A cuDNN kernel detected a numerical overflow while running (reported by "
                "cudnnQueryRuntimeError).",
     CAUSES("Training diverged: activations or gradients grew past the type's range (a "
            "learning rate too high, fp16 without loss scaling).",
            "Input data not normalized."),
     .confirm = "Print the loss per step; it rises or turns inf/NaN before the error.",
     .fix = "Lower --lr, normalize inputs, use fp32 or loss scaling.",
     .pytorch = "not raised: PyTorch shows inf/NaN losses instead",
     .tensorflow = "not raised: TensorFlow shows inf/NaN losses instead",
     FAILS_RUNTIME},
    {CUDNN(1008, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"),
     .meaning = "cuDNN could not load one of its sub-libraries (cuDNN 9 is split into "
                "libcudnn_ops, libcudnn_cnn, libcudnn_adv, libcudnn_engines_* and "
                "libcudnn_graph).",
     CAUSES("An incomplete install: only libcudnn.so.9 copied, not the other "
            "libcudnn_*.so.9 files.",
            "The sub-libraries are in a directory that is not on the library path.",
            "A sub-library needs another library (nvrtc, cublasLt) that is missing."),
     .confirm = "`ls $(dirname $(ldconfig -p | grep 'libcudnn.so.9 ' | awk '{print $NF}'))"
                "/libcudnn_*` lists the pieces; `ldd` on each shows what is missing.",
     .fix = "Install the complete cuDNN package (or the whole nvidia-cudnn wheel) and put "
            "its lib directory on LD_LIBRARY_PATH.",
     .pytorch = "\"Could not load library libcudnn_cnn_infer.so.8\" / \"Unable to load any "
                "of {libcudnn_cnn.so.9...}\" then "
                PYTORCH_CUDNN("CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"),
     .tensorflow = "\"Could not load dynamic library 'libcudnn_cnn.so.9'\"",
     .related = "library-not-loaded", FAILS_RUNTIME},
    {CUDNN(2000, "CUDNN_STATUS_BAD_PARAM"), .old_number = 3,
     CUDNN_BAD_PARAM_BODY("a value out of range, or descriptors that disagree"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM")},
    {CUDNN(2001, "CUDNN_STATUS_INVALID_VALUE"), .old_number = 5,
     CUDNN_BAD_PARAM_BODY("an invalid value (deprecated code; cuDNN 9 reports "
                          "CUDNN_STATUS_BAD_PARAM)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_INVALID_VALUE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_INVALID_VALUE")},
    {CUDNN(2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER"),
     CUDNN_BAD_PARAM_BODY("a null pointer where one is required (a missing workspace, an "
                          "unallocated tensor)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_NULL_POINTER"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_NULL_POINTER")},
    {CUDNN(2003, "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER"),
     CUDNN_BAD_PARAM_BODY("a pointer not aligned as the engine requires (usually 16 bytes)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER")},
    {CUDNN(2004, "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED"),
     CUDNN_BAD_PARAM_BODY("a backend descriptor used before cudnnBackendFinalize"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED")},
    {CUDNN(2005, "CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND"),
     CUDNN_BAD_PARAM_BODY("a value outside its allowed range (a dimension index, an "
                          "algorithm number)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND")},
    {CUDNN(2006, "CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"),
     CUDNN_BAD_PARAM_BODY("a buffer (workspace, output array) smaller than needed"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT")},
    {CUDNN(2007, "CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH"),
     CUDNN_BAD_PARAM_BODY("the stream given does not match the one the plan or handle "
                          "expects"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH")},
    {CUDNN(2008, "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH"),
     CUDNN_BAD_PARAM_BODY("tensor shapes that do not fit together (e.g. an output "
                          "descriptor that is not the convolution's output shape)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH")},
    {CUDNN(2009, "CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES"),
     CUDNN_BAD_PARAM_BODY("duplicated entries, such as two tensors with the same unique id "
                          "in a graph"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES")},
    {CUDNN(2010, "CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE"),
     CUDNN_BAD_PARAM_BODY("a backend attribute set with the wrong type"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE")},
    {CUDNN(2011, "CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH"),
     CUDNN_BAD_PARAM_BODY("a CUDA graph that is not the one cuDNN built for this plan"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH")},
    {CUDNN(2012, "CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE"),
     CUDNN_BAD_PARAM_BODY("a descriptor of the wrong type for the call"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE")},
    {CUDNN(3000, "CUDNN_STATUS_NOT_SUPPORTED"), .old_number = 9,
     CUDNN_NOT_SUPPORTED_BODY("no engine supports this combination of shape, data type, "
                              "layout and parameters"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED") ". This error may appear if you "
                "passed in a non-contiguous input.",
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED")},
    {CUDNN(3001, "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN"),
     CUDNN_NOT_SUPPORTED_BODY("the operation graph (a fusion pattern) matches no engine"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN")},
    {CUDNN(3002, "CUDNN_STATUS_NOT_SUPPORTED_SHAPE"),
     CUDNN_NOT_SUPPORTED_BODY("the tensor shapes are outside what the engines handle"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_SHAPE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_SHAPE")},
    {CUDNN(3003, "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE"),
     CUDNN_NOT_SUPPORTED_BODY("the data type (or the mix of input, output and compute "
                              "types) is unsupported"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE")},
    {CUDNN(3004, "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT"),
     CUDNN_NOT_SUPPORTED_BODY("the memory layout (strides, NCHW vs NHWC) is unsupported"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_LAYOUT"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_LAYOUT")},
    {CUDNN(3005, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"),
     .meaning = "The NVIDIA driver is too old for this cuDNN.",
     CAUSES("cuDNN was updated (e.g. with a pip wheel) but the driver was not.",
            "A container's cuDNN needs a newer driver than the host has."),
     .confirm = "nvidia-smi's \"CUDA Version\" versus the CUDA version cuDNN was built for.",
     .with_trainer = TRAINER_VERSIONS,
     .fix = "Update the NVIDIA driver, or install the cuDNN built for the CUDA version the "
            "driver supports.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER"),
     FAILS_RUNTIME},
    {CUDNN(3006, "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART"),
     .meaning = "The CUDA runtime in use is not one this cuDNN supports (each cuDNN build "
                "targets one CUDA major version).",
     CAUSES("A cuDNN for CUDA 12 loaded by a program built with CUDA 13, or the reverse.",
            "Two CUDA runtimes on the library path."),
     .confirm = "`ldd BINARY | grep -E 'cudart|cudnn'` shows which runtime and cuDNN are "
                "loaded; cudnnGetCudartVersion gives the runtime cuDNN was built with.",
     .fix = "Install the cuDNN build for the program's CUDA major version.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART"),
     FAILS_RUNTIME},
    {CUDNN(3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"),
     .old_name = "CUDNN_STATUS_ARCH_MISMATCH", .old_number = 6,
     .meaning = "This cuDNN does not support the GPU's architecture (compute capability).",
     CAUSES("An old GPU that this cuDNN release dropped.",
            "A feature (e.g. FP8, some fused engines) that needs a newer GPU."),
     .confirm = "nvidia-smi --query-gpu=compute_cap --format=csv shows the compute "
                "capability; the cuDNN support matrix lists the ones each release supports.",
     .with_trainer = TRAINER_DEVICES,
     .fix = "Use a cuDNN release that supports the GPU, avoid the feature, or use a newer "
            "GPU.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_ARCH_MISMATCH"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_ARCH_MISMATCH"),
     FAILS_RUNTIME},
    {CUDNN(3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING"),
     .old_name = "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", .old_number = 11,
     .meaning = "A library cuDNN needs at run time (libcuda, NVRTC, cuBLASLt) could not be "
                "found.",
     CAUSES("NVRTC (libnvrtc) is not installed or not on the library path; cuDNN 9 "
            "compiles some kernels at run time with it.",
            "The driver's libcuda is not found (see cudaErrorStubLibrary)."),
     .confirm = "`ldconfig -p | grep -E 'nvrtc|cublasLt|libcuda'`.",
     .fix = "Install the CUDA runtime libraries (NVRTC, cuBLAS) of the matching release and "
            "put them on the library path.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING"),
     FAILS_RUNTIME},
    {CUDNN(3009, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"),
     .meaning = "The cuDNN sub-library that implements this operation is not installed.",
     CAUSES("A slimmed-down install that left out libcudnn_cnn, libcudnn_adv or an engine "
            "library."),
     .confirm = "List the libcudnn_* files next to libcudnn.so.9.",
     .fix = "Install the complete cuDNN package.",
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE"),
     FAILS_RUNTIME},
    {CUDNN(3010, "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT"),
     CUDNN_NOT_SUPPORTED_BODY("the engine needs more shared memory per block than this GPU "
                              "has"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT")},
    {CUDNN(3011, "CUDNN_STATUS_NOT_SUPPORTED_PADDING"),
     CUDNN_NOT_SUPPORTED_BODY("the padding (asymmetric, larger than the kernel) is "
                              "unsupported"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_PADDING"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_PADDING")},
    {CUDNN(3012, "CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM"),
     CUDNN_NOT_SUPPORTED_BODY("the engine's launch configuration is invalid for this "
                              "problem on this GPU (e.g. a grid past the GPU's limits)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM")},
    {CUDNN(3013, "CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API"),
     CUDNN_NOT_SUPPORTED_BODY("the engine cannot be captured through the native CUDA graph "
                              "API"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API")},
    {CUDNN(3014, "CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE"),
     CUDNN_NOT_SUPPORTED_BODY("the dynamic-shape specification is invalid or unsupported"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE")},
    {CUDNN(4000, "CUDNN_STATUS_INTERNAL_ERROR"), .old_number = 4,
     CUDNN_INTERNAL_BODY("often a CUDA call it made, such as an allocation"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_INTERNAL_ERROR"),
     .tensorflow = "\"Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\", then "
                   "\"Failed to get convolution algorithm. This is probably because cuDNN "
                   "failed to initialize\""},
    {CUDNN(4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED"),
     CUDNN_INTERNAL_BODY("compiling a kernel at run time (NVRTC) failed"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED")},
    {CUDNN(4002, "CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE"),
     CUDNN_INTERNAL_BODY("an internal check saw a value it did not expect"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE")},
    {CUDNN(4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"),
     .old_name = "CUDNN_STATUS_ALLOC_FAILED", .old_number = 2,
     .meaning = "cuDNN could not allocate memory it needs (cuDNN 8's ALLOC_FAILED maps "
                "here).",
     CAUSES("The host or GPU is out of memory (cuDNN 8 reported both as ALLOC_FAILED).",
            "A memory limit (cgroup, ulimit -v) on the process."),
     .confirm = "free -h and nvidia-smi show the memory left.",
     .fix = "Lower the batch size, free memory, or raise the process's memory limit.",
     .with_trainer = TRAINER_MEMORY,
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_ALLOC_FAILED"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_ALLOC_FAILED"),
     FAILS_OOM},
    {CUDNN(4004, "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"),
     .meaning = "cuDNN could not allocate GPU memory it needs (a workspace, a plan's "
                "buffers).",
     CAUSES("The GPU is full: the batch, the model or other processes use the memory.",
            "A large workspace for a fast convolution algorithm does not fit next to the "
            "model."),
     .confirm = "nvidia-smi shows the memory in use.",
     .fix = "Lower the batch size, cap the framework's memory to leave room for cuDNN, or "
            "free the GPU.",
     .with_trainer = TRAINER_MEMORY,
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"),
     FAILS_OOM},
    {CUDNN(4005, "CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM"),
     CUDNN_INTERNAL_BODY("an internal kernel launch had an invalid configuration"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM")},
    {CUDNN(4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED"),
     .old_name = "CUDNN_STATUS_MAPPING_ERROR", .old_number = 7,
     CUDNN_INTERNAL_BODY("creating a texture over GPU memory failed (cuDNN 8's "
                         "MAPPING_ERROR)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_MAPPING_ERROR"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_MAPPING_ERROR")},
    {CUDNN(5000, "CUDNN_STATUS_EXECUTION_FAILED"), .old_number = 8,
     CUDNN_EXECUTION_BODY("the GPU program failed to execute"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_EXECUTION_FAILED"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_EXECUTION_FAILED")},
    {CUDNN(5001, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER"),
     CUDNN_EXECUTION_BODY("a CUDA driver call inside cuDNN failed"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER")},
    {CUDNN(5002, "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS"),
     CUDNN_EXECUTION_BODY("a cuBLAS call inside cuDNN failed"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CUBLAS"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CUBLAS")},
    {CUDNN(5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDART"),
     CUDNN_EXECUTION_BODY("a CUDA runtime call inside cuDNN failed"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CUDART"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CUDART")},
    {CUDNN(5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND"),
     CUDNN_EXECUTION_BODY("a cuRAND call inside cuDNN failed (dropout's random numbers)"),
     .pytorch = PYTORCH_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CURAND"),
     .tensorflow = TF_CUDNN("CUDNN_STATUS_EXECUTION_FAILED_CURAND")},

    // ---- NCCL: ncclResult_t (nccl.h), every result ----
    {NCCL(1, "ncclUnhandledCudaError", "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"),
     PHRASES("unhandled cuda error"),
     .meaning = "A CUDA call made by NCCL failed.",
     CAUSES("An earlier CUDA error on this GPU (an illegal address, an assert) that NCCL "
            "ran into.",
            "Out of GPU memory while NCCL allocated its buffers.",
            "Peer-to-peer access that the platform blocks (PCIe ACS, IOMMU, virtual "
            "machines).",
            "Ranks mapped to GPUs inconsistently (CUDA_VISIBLE_DEVICES differs per rank)."),
     .confirm = NCCL_DEBUG_CONFIRM " nvidia-smi topo -m shows how the GPUs connect.",
     .fix = "Fix the first CUDA error; leave GPU memory for NCCL; try NCCL_P2P_DISABLE=1 to "
            "confirm a P2P problem, then fix ACS/IOMMU settings.",
     .pytorch = PYTORCH_NCCL("unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
                             "ncclUnhandledCudaError: Call to CUDA function failed."),
     .tensorflow = "an InternalError carrying \"NCCL: unhandled cuda error\"",
     FAILS_RUNTIME},
    {NCCL(2, "ncclSystemError", "unhandled system error (run with NCCL_DEBUG=INFO for details)"),
     PHRASES("unhandled system error"),
     .meaning = "A system call (socket, shared memory, allocation) or an external library "
                "call made by NCCL failed, or a device reported an error.",
     CAUSES("/dev/shm too small inside a container (Docker's default is 64 MB).",
            "NCCL picked a network interface the ranks cannot reach each other on "
            "(docker0, a VPN).",
            "InfiniBand/RoCE misconfigured, or the memlock limit too low for RDMA.",
            "A firewall blocking the ports between machines."),
     .confirm = NCCL_DEBUG_CONFIRM " It names the failing call (e.g. \"Call to connect "
                "returned Connection refused\", \"Error while creating shared memory "
                "segment\").",
     .fix = "Run containers with --shm-size=1g (or --ipc=host), set NCCL_SOCKET_IFNAME to "
            "the right interface, raise ulimit -l, or NCCL_IB_DISABLE=1 to fall back to "
            "sockets.",
     .pytorch = PYTORCH_NCCL("unhandled system error (run with NCCL_DEBUG=INFO for details)",
                             "ncclSystemError: System call (e.g. socket, malloc) or external "
                             "library call failed or device error."),
     .tensorflow = "an InternalError carrying \"NCCL: unhandled system error\"",
     FAILS_RUNTIME},
    {NCCL(3, "ncclInternalError", "internal error - please report this issue to the NCCL developers"),
     PHRASES("internal error - please report this issue to the NCCL developers",
             "NCCL: internal error"),
     .meaning = "An internal consistency check in NCCL failed.",
     CAUSES("Memory corruption in the process (e.g. an out-of-bounds write elsewhere).",
            "A network plugin (e.g. for AWS EFA or InfiniBand) that does not match NCCL's "
            "version.",
            "A bug in NCCL."),
     .confirm = NCCL_DEBUG_CONFIRM,
     .fix = "Update NCCL and its network plugin together; run with compute-sanitizer to "
            "rule out corruption; report it to NCCL with the log.",
     .pytorch = PYTORCH_NCCL("internal error - please report this issue to the NCCL "
                             "developers", "ncclInternalError: Internal check failed."),
     .tensorflow = "an InternalError carrying \"NCCL: internal error\"",
     FAILS_RUNTIME},
    {NCCL(4, "ncclInvalidArgument", "invalid argument (run with NCCL_DEBUG=WARN for details)"),
     // Before NCCL 2.8 the text had no "(run with ...)": PyTorch then printed
     // "NCCL error in: FILE:LINE, invalid argument, NCCL version 2.7.8".
     PHRASES("NCCL: invalid argument", "invalid argument, NCCL version",
             "invalid argument (run with NCCL_DEBUG"),
     .meaning = "An argument to the NCCL call is invalid.",
     CAUSES("A buffer on another GPU than the communicator's device.",
            "A null buffer, a negative count, an unknown data type or reduction.",
            "A rank number outside [0, nranks)."),
     .confirm = "NCCL_DEBUG=WARN prints which argument is wrong.",
     .fix = "Pass buffers on the communicator's device with valid counts and types.",
     .pytorch = PYTORCH_NCCL("invalid argument (run with NCCL_DEBUG=WARN for details)",
                             "ncclInvalidArgument: Invalid value for an argument."),
     .tensorflow = "an InternalError carrying \"NCCL: invalid argument\"",
     FAILS_RUNTIME},
    {NCCL(5, "ncclInvalidUsage", "invalid usage (run with NCCL_DEBUG=WARN for details)"),
     PHRASES("Duplicate GPU detected", "invalid usage (run with NCCL_DEBUG",
             "NCCL: invalid usage", "invalid usage, NCCL version"),
     .meaning = "NCCL was used in a way it does not allow.",
     CAUSES("Two ranks on the same GPU (\"Duplicate GPU detected\"): every rank selected "
            "GPU 0, or CUDA_VISIBLE_DEVICES gave them the same device.",
            "Ranks calling collectives in different orders or with different counts.",
            "Unbalanced ncclGroupStart / ncclGroupEnd."),
     .confirm = "NCCL_DEBUG=WARN names the misuse; print each rank's device and the "
                "sequence of collectives.",
     .fix = "Give each rank its own GPU (set the device from the local rank before "
            "creating the communicator) and issue the same collectives in the same order "
            "on every rank.",
     .pytorch = PYTORCH_NCCL("invalid usage (run with NCCL_DEBUG=WARN for details)",
                             "ncclInvalidUsage: This usually reflects invalid usage of NCCL "
                             "library. Duplicate GPU detected : rank 1 and rank 0 both on "
                             "CUDA device 1000"),
     .tensorflow = "an InternalError carrying \"NCCL: invalid usage\"",
     FAILS_RUNTIME},
    {NCCL(6, "ncclRemoteError", "remote process exited or there was a network error"),
     PHRASES("remote process exited or there was a network error"),
     .meaning = "Another rank died or the network between ranks failed during a "
                "collective.",
     CAUSES("Another rank crashed first (out of memory, an exception, the OOM killer); its "
            "own log holds the real error.",
            "A network link or switch failed, or a machine rebooted."),
     .confirm = "Read the logs of every rank and find the first to fail; dmesg on each "
                "machine for OOM kills.",
     .fix = "Fix the rank that failed first; then restart the job from the last checkpoint.",
     .pytorch = PYTORCH_NCCL("remote process exited or there was a network error",
                             "ncclRemoteError: A call failed possibly due to a network error "
                             "or a remote process exiting prematurely."),
     .tensorflow = "an InternalError carrying \"NCCL: remote process exited or there was a "
                   "network error\"",
     FAILS_RUNTIME},
    {NCCL(7, "ncclInProgress", "NCCL operation in progress"),
     .meaning = "A non-blocking NCCL operation has not finished. Not a failure.",
     CAUSES("Using a communicator created with blocking=0 and treating \"in progress\" as "
            "an error."),
     .confirm = "The communicator was created non-blocking (ncclCommInitRankConfig).",
     .fix = "Poll ncclCommGetAsyncError until it returns ncclSuccess.",
     .pytorch = "not raised: PyTorch waits for non-blocking communicators",
     .tensorflow = "not raised",
     FAILS_RUNTIME},

    // ---- messages PyTorch and TensorFlow print, found by a key phrase in pasted text ----
    {FRAMEWORK(1, "cuda-out-of-memory", "CUDA out of memory. Tried to allocate"),
     PHRASES("CUDA out of memory", "CUDA error: out of memory", "OOM when allocating tensor",
             "CUDA_ERROR_OUT_OF_MEMORY: out of memory", "ResourceExhaustedError",
             "ran out of memory trying to allocate", "Cuda failure 'out of memory'",
             "Physical devices cannot be modified after being initialized"),
     .related = "cudaErrorMemoryAllocation", .facts = GPU_FACTS,
     .meaning = "The framework asked the GPU for memory and none was left: the failed "
                "request is named (\"Tried to allocate 2.00 GiB\"). The process is fine; a "
                "smaller request can succeed.",
     CAUSES("The batch is too large for this GPU: activations grow with the batch size.",
            "Other processes hold GPU memory (another job, a stale notebook kernel).",
            "Tensors kept alive across steps: accumulating the loss tensor instead of "
            "loss.item(), or storing outputs with their graph.",
            "Fragmentation: the caching allocator holds free blocks too small for the "
            "request (\"reserved but unallocated\" is large).",
            "Evaluation without torch.no_grad() keeps activations for a backward that "
            "never comes."),
     .confirm = "nvidia-smi lists the processes and their memory; in PyTorch, "
                "torch.cuda.memory_summary() shows allocated versus reserved; in TensorFlow, "
                "tf.config.experimental.get_memory_info('GPU:0').",
     .fix = "Lower the batch size, free the GPU of other processes, wrap evaluation in "
            "torch.no_grad(), and for fragmentation set "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. TensorFlow reserves nearly "
            "all GPU memory at start-up: tf.config.experimental.set_memory_growth(gpu, True) "
            "for each GPU before any op runs (or TF_FORCE_GPU_ALLOW_GROWTH=true) lets it "
            "grow on demand and shows what the model really uses.",
     .with_trainer = TRAINER_MEMORY,
     .pytorch = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU "
                "0 has a total capacity of 15.77 GiB of which 1.05 GiB is free. Of the "
                "allocated memory 13.2 GiB is allocated by PyTorch, and 0.9 GiB is reserved "
                "by PyTorch but unallocated.",
     .tensorflow = "ResourceExhaustedError: OOM when allocating tensor with shape[128,64,"
                   "112,112] and type float on /job:localhost/replica:0/task:0/device:GPU:0 "
                   "by allocator GPU_0_bfc",
     FAILS_OOM},
    {FRAMEWORK(2, "invalid-configuration-argument", "invalid configuration argument"),
     PHRASES("invalid configuration argument"),
     .related = "cudaErrorInvalidConfiguration", .facts = GPU_FACTS,
     .meaning = "A kernel was launched with a grid, block or shared-memory size the GPU can "
                "never run; the framework's launch code did not guard a size it was given.",
     CAUSES("A dimension of the input (batch, channels, sequence length) mapped onto "
            "gridDim.y or z, which stop at 65535: a batch of 70000 to a kernel that puts the "
            "batch there.",
            "An empty tensor (a zero-sized batch) giving a grid of 0 blocks.",
            "A custom CUDA extension launching more than 1024 threads per block."),
     .confirm = "Run with CUDA_LAUNCH_BLOCKING=1 to see the op; check whether a dimension "
                "of its input exceeds 65535 or is 0.",
     .fix = "Split the batch or the offending dimension into chunks below 65535, skip empty "
            "batches, or upgrade the framework (such limits get fixed with grid-stride "
            "loops).",
     .with_trainer = "trainer checks every launch on the host and reports the kernel and the "
                     "dimension instead.",
     .pytorch = PYTORCH_CUDA("invalid configuration argument"),
     .tensorflow = "\"Non-OK-status: GpuLaunchKernel(...) status: INTERNAL: invalid "
                   "configuration argument\", which aborts the process",
     FAILS_RUNTIME},
    {FRAMEWORK(3, "no-kernel-image", "no kernel image is available for execution on the device"),
     PHRASES("no kernel image is available for execution on the device",
             "is not compatible with the current PyTorch installation",
             "The minimum required Cuda capability is"),
     .related = "cudaErrorNoKernelImageForDevice", .facts = GPU_FACTS,
     BODY_NO_KERNEL_IMAGE},
    {FRAMEWORK(4, "device-side-assert", "device-side assert triggered"),
     PHRASES("device-side assert triggered", "Assertion `t >= 0 && t < n_classes` failed",
             "srcIndex < srcSelectDimSize", "Assertion `", "Received a label value of"),
     .related = "cudaErrorAssert", .facts = 0, BODY_ASSERT},
    {FRAMEWORK(5, "cudnn-version-mismatch", "Loaded runtime CuDNN library"),
     PHRASES("Loaded runtime CuDNN library", "cuDNN version incompatibility",
             "CuDNN library needs to have matching major version"),
     .related = "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", .facts = LIBRARY_FACTS,
     .meaning = "The cuDNN loaded at run time is not the one the framework was compiled "
                "against: an older minor version, or another major version.",
     CAUSES("LD_LIBRARY_PATH (or a conda environment) puts an older system cuDNN before "
            "the one the framework ships or expects.",
            "A framework upgrade without upgrading the separately installed cuDNN (common "
            "with TensorFlow, which expects cuDNN from the system or pip).",
            "Two frameworks in one environment pinning different nvidia-cudnn wheels."),
     .confirm = "`python -c \"import torch; print(torch.backends.cudnn.version())\"`, `pip "
                "list | grep cudnn`, `ldconfig -p | grep cudnn` and `echo $LD_LIBRARY_PATH` "
                "show which cuDNN is found first.",
     .with_trainer = TRAINER_VERSIONS,
     .fix = "Install the cuDNN version the framework names (pip install "
            "nvidia-cudnn-cu12==X for TensorFlow), or remove the older cuDNN directory from "
            "LD_LIBRARY_PATH so the framework's own copy is found.",
     .pytorch = "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against "
                "(9, 1, 0) but found runtime version (8, 9, 2). PyTorch already comes "
                "bundled with cuDNN. ... Looks like your LD_LIBRARY_PATH contains "
                "incompatible version of cudnn.",
     .tensorflow = "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: "
                   "8.1.0. CuDNN library needs to have matching major version and equal or "
                   "higher minor version. (then \"DNN library is not found\" or \"Failed to "
                   "get convolution algorithm\")",
     FAILS_RUNTIME},
    {FRAMEWORK(6, "driver-too-old",
               "CUDA driver version is insufficient for CUDA runtime version"),
     PHRASES("CUDA driver version is insufficient for CUDA runtime version",
             "The NVIDIA driver on your system is too old"), FINDS_GPU,
     .related = "cudaErrorInsufficientDriver", .facts = GPU_FACTS,
     .meaning = "The framework's CUDA runtime needs a newer NVIDIA driver than the one "
                "installed (or there is no driver at all, which the runtime reports the "
                "same way).",
     CAUSES("A framework build for a newer CUDA (e.g. a cu128 PyTorch wheel) on a machine "
            "whose driver supports an older CUDA.",
            "No NVIDIA driver loaded (a container started without GPU access, a machine "
            "without a GPU).",
            "The driver was upgraded but the kernel module not reloaded (then the versions "
            "disagree, see driver-library-mismatch)."),
     .confirm = "nvidia-smi's header shows \"CUDA Version\", the newest the driver "
                "supports; torch.version.cuda (or tf.sysconfig.get_build_info()) the CUDA the "
                "framework needs.",
     .with_trainer = TRAINER_VERSIONS,
     .fix = "Update the NVIDIA driver, or install the framework build for the CUDA version "
            "the driver supports (e.g. a cu118 wheel on a CUDA 11.8 driver).",
     .pytorch = "RuntimeError: The NVIDIA driver on your system is too old (found version "
                "11040). Please update your GPU driver by downloading and installing a new "
                "version from the URL: http://www.nvidia.com/Download/index.aspx",
     .tensorflow = "InternalError: cudaGetDevice() failed. Status: CUDA driver version is "
                   "insufficient for CUDA runtime version",
     FAILS_NO_DEVICE},
    {FRAMEWORK(7, "illegal-memory-access", "an illegal memory access was encountered"),
     PHRASES("an illegal memory access was encountered"),
     .related = "cudaErrorIllegalAddress", .facts = 0, BODY_ILLEGAL_ADDRESS},
    {FRAMEWORK(8, "cublas-create-failed",
               "CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"),
     PHRASES("CUBLAS_STATUS_NOT_INITIALIZED when calling", "failed to create cublas handle",
             "Blas GEMM launch failed", "Blas xGEMMBatched launch failed",
             "Blas SGEMM launch failed"),
     .related = "CUBLAS_STATUS_NOT_INITIALIZED", .facts = LIBRARY_FACTS,
     .meaning = "The framework's first matrix multiply on this GPU tried to create a cuBLAS "
                "handle and failed. It rarely means cuBLAS is broken: something left it no "
                "room or no working context.",
     CAUSES("The GPU was (nearly) full: the model and batch, or another process, left too "
            "little memory for cuBLAS's workspace.",
            "An earlier asynchronous error, most often a device-side assert from a label or "
            "index out of range, broke the context before the first GEMM.",
            "Running on the wrong GPU, or several processes sharing one GPU.",
            "A cuBLAS from another CUDA version than the framework's runtime."),
     .confirm = "Run with CUDA_LAUNCH_BLOCKING=1: if an assert or illegal access appears "
                "first, that is the cause. Run the same code on the CPU to surface bad "
                "labels; watch nvidia-smi for memory.",
     .fix = "Fix the earlier error if there is one; otherwise lower the batch size, free "
            "the GPU, or set the memory fraction so cuBLAS has room.",
     .pytorch = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
                "`cublasCreate(handle)`",
     .tensorflow = "\"failed to create cublas handle: CUBLAS_STATUS_NOT_INITIALIZED\" then "
                   "\"InternalError: Blas GEMM launch failed : a.shape=(...), "
                   "b.shape=(...)\"",
     FAILS_RUNTIME},
    {FRAMEWORK(9, "cudnn-not-supported", "cuDNN error: CUDNN_STATUS_NOT_SUPPORTED"),
     PHRASES("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED"),
     .related = "CUDNN_STATUS_NOT_SUPPORTED", .facts = LIBRARY_FACTS,
     .meaning = "cuDNN has no algorithm for this convolution (or other op) with these "
                "shapes, data type and memory layout on this GPU.",
     CAUSES("An input that is not contiguous (a transposed or sliced view passed to a "
            "convolution); PyTorch's message says so.",
            "A tensor too large for cuDNN's 32-bit indexing (more than 2^31 elements, e.g. "
            "a huge batch of large images).",
            "An unusual configuration: large dilation, asymmetric padding, odd channel "
            "counts in fp16, some grouped convolutions.",
            "A cuDNN too old for the op or the GPU."),
     .confirm = "Check x.is_contiguous() and x.numel() for the failing layer; try a smaller "
                "batch: if it then works, the size was the cause. "
                "CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr prints cuDNN's reason.",
     .fix = "Call .contiguous() on the input, split the batch, change the configuration, or "
            "disable cuDNN for that op (torch.backends.cudnn.enabled = False) to use the "
            "slower native kernel.",
     .pytorch = "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may "
                "appear if you passed in a non-contiguous input.",
     .tensorflow = "\"No algorithm worked!\" or a cuda_dnn.cc error naming "
                   "CUDNN_STATUS_NOT_SUPPORTED, with the input and filter shapes",
     FAILS_RUNTIME},
    {FRAMEWORK(10, "no-nvidia-driver", "Found no NVIDIA driver on your system"),
     PHRASES("Found no NVIDIA driver on your system",
             "couldn't communicate with the NVIDIA driver",
             "kernel driver does not appear to be running on this host",
             "UNKNOWN ERROR (303)", "libcuda.so.1: cannot open shared object file"), FINDS_GPU,
     .related = "cudaErrorInsufficientDriver", .facts = GPU_FACTS,
     .meaning = "The framework found no NVIDIA driver: libcuda could not be loaded or the "
                "kernel module is not running, so no GPU can be used.",
     CAUSES("The machine has no NVIDIA GPU, or the driver was never installed.",
            "A container started without GPU access (docker run without --gpus, no NVIDIA "
            "Container Toolkit).",
            "The driver was installed or upgraded and the machine not rebooted (Secure Boot "
            "can also block the module).",
            "The process runs where the driver is hidden (WSL without GPU support, a "
            "sandbox)."),
     .confirm = "nvidia-smi fails with \"couldn't communicate with the NVIDIA driver\"; "
                "`lsmod | grep nvidia` is empty.",
     .fix = "Install the NVIDIA driver and reboot (sign the module under Secure Boot), start "
            "containers with --gpus all, or train on the CPU.",
     .with_trainer = "`trainer doctor` says whether a driver is loaded and what to install; "
                     "--device cpu trains on the CPU.",
     .pytorch = "AssertionError: Found no NVIDIA driver on your system. Please check that "
                "you have an NVIDIA GPU and installed a driver from "
                "http://www.nvidia.com/Download/index.aspx",
     .tensorflow = "\"failed call to cuInit: UNKNOWN ERROR (303)\" and \"kernel driver does "
                   "not appear to be running on this host\", then training runs on the CPU",
     FAILS_NO_DEVICE},
    {FRAMEWORK(11, "invalid-device-ordinal", "CUDA_ERROR_INVALID_DEVICE: invalid device ordinal"),
     PHRASES("CUDA_ERROR_INVALID_DEVICE: invalid device ordinal",
             "cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_DEVICE",
             "CUDA error: invalid device ordinal", "Invalid device ordinal value",
             "Invalid device id", "but torch.cuda.device_count() is"), FINDS_GPU,
     .related = "CUDA_ERROR_INVALID_DEVICE", .facts = GPU_FACTS,
     .meaning = "The framework was asked for a GPU number this process cannot see. "
                "TensorFlow hits it while creating a context on each GPU it was told about "
                "(cuDevicePrimaryCtxRetain), PyTorch at .to('cuda:N').",
     CAUSES("CUDA_VISIBLE_DEVICES renumbers the GPUs from 0: with CUDA_VISIBLE_DEVICES=2 "
            "the only GPU is cuda:0 (TensorFlow: /GPU:0), not cuda:2.",
            "A launcher (mpirun, Horovod, SLURM, torchrun) already gave each process one GPU, "
            "and the code also selects GPU local_rank.",
            "The ordinal is simply larger than the number of GPUs on the machine.",
            "A GPU dropped off the bus (Xid 79), so fewer are visible than configured."),
     .confirm = "`nvidia-smi -L` and `echo $CUDA_VISIBLE_DEVICES` in the same environment as "
                "the job; torch.cuda.device_count() or tf.config.list_physical_devices('GPU') "
                "inside it.",
     .fix = "Select GPUs in one place only: either CUDA_VISIBLE_DEVICES (then count from 0) "
            "or the device index, not both.",
     .with_trainer = TRAINER_DEVICES,
     .pytorch = "RuntimeError: CUDA error: invalid device ordinal",
     .tensorflow = "InternalError: failed initializing StreamExecutor for CUDA device "
                   "ordinal 1: INTERNAL: failed call to cuDevicePrimaryCtxRetain: "
                   "CUDA_ERROR_INVALID_DEVICE: invalid device ordinal",
     FAILS_NO_DEVICE},
    {FRAMEWORK(12, "tensors-on-different-devices", "Expected all tensors to be on the same device"),
     PHRASES("Expected all tensors to be on the same device",
             "Input type (torch.FloatTensor) and weight type (torch.cuda",
             "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor)",
             "but expected it to be on GPU", "expected device cuda"),
     .facts = ERROR_FACT_DEVICES,
     .meaning = "One operation received tensors that live on different devices (a GPU and "
                "the CPU, or two GPUs); frameworks do not move them implicitly for you.",
     CAUSES("The model was moved to the GPU but the batch (or the labels) was not, or the "
            "reverse.",
            "A tensor created inside forward() without device= lands on the CPU.",
            "A layer stored as a plain list instead of nn.ModuleList, so model.to() missed "
            "it.",
            "Loading a checkpoint with map_location to another device than the model."),
     .confirm = "Print .device of every input of the failing op; the message names the two "
                "devices.",
     .fix = "Move inputs, labels and the model to one device (x.to(device)), create new "
            "tensors with device=x.device, register sub-layers with nn.ModuleList.",
     .with_trainer = "trainer places the whole model and every batch on the one --device.",
     .pytorch = "RuntimeError: Expected all tensors to be on the same device, but found at "
                "least two devices, cuda:0 and cpu!",
     .tensorflow = "not raised: TensorFlow copies tensors between devices itself (a GPU it "
                   "never registered is gpu-not-registered)",
     FAILS_RUNTIME},
    {FRAMEWORK(13, "dtype-mismatch", "Expected object of scalar type Float but got Double"),
     PHRASES("Expected object of scalar type", "expected scalar type",
             "must have the same dtype", "that does not match type"),
     .facts = 0,
     .meaning = "An operation received tensors of different data types (float32 and "
                "float64, float and integer) and frameworks do not convert them implicitly.",
     CAUSES("Inputs built with NumPy, which defaults to float64, fed to a float32 model.",
            "Labels of the wrong type: floats where class indices (int64) are expected, or "
            "the reverse for regression losses.",
            "Raw uint8 images fed to the model without conversion to float.",
            "Mixed precision where one operand was not cast."),
     .confirm = "Print .dtype of the operands of the failing op; the message names both "
                "types.",
     .fix = "Convert once at the input: x.float() / torch.from_numpy(a).float() / "
            "tf.cast(x, tf.float32), and labels to int64 for classification.",
     .with_trainer = "trainer checks dtypes when it builds the graph (e.g. a u8 input into a "
                     "dense layer) and reports the layer and line before training.",
     .pytorch = "RuntimeError: Expected object of scalar type Float but got scalar type "
                "Double for argument #2 'mat2' (newer versions: \"expected scalar type Float "
                "but found Double\", \"mat1 and mat2 must have the same dtype\")",
     .tensorflow = "TypeError: Input 'b' of 'MatMul' Op has type float64 that does not match "
                   "type float32 of argument 'a'.",
     FAILS_BAD_INPUT},
    {FRAMEWORK(14, "nccl-unhandled-system-error", "NCCL error: unhandled system error"),
     PHRASES("unhandled system error", "NCCL: unhandled system error",
             "Error while creating shared memory segment", "failed to extend /dev/shm"),
     .related = "ncclSystemError", .facts = LIBRARY_FACTS,
     .meaning = "A collective (all-reduce, broadcast) failed because a system call NCCL "
                "made failed: shared memory, sockets, RDMA or an allocation.",
     CAUSES("Docker's default 64 MB /dev/shm is too small for NCCL's shared-memory "
            "transport between GPUs of one machine.",
            "NCCL chose a network interface the ranks cannot reach each other on (docker0, "
            "a VPN, a down link).",
            "InfiniBand/RoCE misconfigured, or a memlock limit too low for RDMA.",
            "Different NCCL versions on different machines."),
     .confirm = "Rerun with NCCL_DEBUG=INFO: the lines before the error name the call that "
                "failed (e.g. \"Error while creating shared memory segment\", \"Call to "
                "connect returned Connection refused\").",
     .fix = "docker run --shm-size=1g (or --ipc=host); NCCL_SOCKET_IFNAME=eth0 (the "
            "interface the machines share); ulimit -l unlimited for RDMA or NCCL_IB_DISABLE=1; "
            "the same NCCL everywhere.",
     .pytorch = "torch.distributed.DistBackendError: NCCL error in: "
                ".../ProcessGroupNCCL.cpp:1275, unhandled system error (run with "
                "NCCL_DEBUG=INFO for details), NCCL version 2.18.1 ncclSystemError: System "
                "call (e.g. socket, malloc) or external library call failed or device error.",
     .tensorflow = "an InternalError from the collective op carrying \"NCCL: unhandled "
                   "system error\"",
     FAILS_RUNTIME},
    {FRAMEWORK(15, "torch-not-compiled-with-cuda", "Torch not compiled with CUDA enabled"),
     PHRASES("Torch not compiled with CUDA enabled", "built without CUDA"),
     .facts = ERROR_FACT_DRIVER,
     .meaning = "The installed framework build has no CUDA support at all, so it cannot use "
                "any GPU, whatever the driver.",
     CAUSES("pip installed the CPU-only wheel (the default index on some platforms, or a "
            "dependency pulled it in).",
            "An environment other than the intended one is active."),
     .confirm = "`python -c \"import torch; print(torch.version.cuda)\"` prints None.",
     .fix = "Install the CUDA build (pip install torch --index-url "
            "https://download.pytorch.org/whl/cu128).",
     .with_trainer = "`trainer --version` prints \"CUDA: not built in\" for a CPU-only "
                     "trainer: install the CUDA toolkit, cuDNN and NCCL and rebuild with "
                     "-DTRAINER_CUDA=ON.",
     .pytorch = "AssertionError: Torch not compiled with CUDA enabled",
     .tensorflow = "tf.test.is_built_with_cuda() is False and tf.config.list_physical_devices"
                   "('GPU') is empty; training silently runs on the CPU",
     FAILS_NO_DEVICE},
    {FRAMEWORK(16, "cudnn-failed-to-initialize", "Failed to get convolution algorithm"),
     PHRASES("Failed to get convolution algorithm", "Could not create cudnn handle",
             "DNN library initialization failed", "cuDNN failed to initialize",
             "Fail to find the dnn implementation", "No algorithm worked"),
     .related = "CUDNN_STATUS_INTERNAL_ERROR", .facts = LIBRARY_FACTS,
     .meaning = "cuDNN could not create its handle or find any algorithm, so the first "
                "convolution fails. Despite the wording it is usually about memory or "
                "versions, not the convolution.",
     CAUSES("TensorFlow (or another process) already reserved nearly all GPU memory, "
            "leaving none for cuDNN's handle and workspace.",
            "The cuDNN found at run time does not match the framework (see "
            "cudnn-version-mismatch).",
            "The driver is too old for the cuDNN in use."),
     .confirm = "nvidia-smi during start-up shows memory nearly full; the log lines before "
                "it say \"Loaded runtime CuDNN library\" on a version mismatch.",
     .fix = "Let the framework grow memory on demand (TensorFlow: "
            "tf.config.experimental.set_memory_growth(gpu, True) or "
            "TF_FORCE_GPU_ALLOW_GROWTH=true), free the GPU, or install the matching cuDNN.",
     .pytorch = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR at the first "
                "convolution",
     .tensorflow = "UnknownError: Failed to get convolution algorithm. This is probably "
                   "because cuDNN failed to initialize, so try looking to see if a warning "
                   "log message was printed above.",
     FAILS_RUNTIME},
    {FRAMEWORK(17, "library-not-loaded", "Could not load dynamic library"),
     PHRASES("cannot open shared object file", "Could not load dynamic library",
             "Cannot dlopen some GPU libraries", "Could not find cuda drivers on your machine",
             "Could not load library libcudnn", "DNN library is not found",
             "Ignore above cudart dlerror", "symbol not found"),
     .facts = LIBRARY_FACTS,
     .meaning = "A CUDA library the framework needs (libcudart, libcublas, libcudnn, libnccl) "
                "could not be loaded: it is missing, not on the loader's path, or another "
                "version than the framework was built for. TensorFlow then runs on the CPU "
                "without a GPU; PyTorch fails at import.",
     CAUSES("The libraries are not installed in the version the framework wants: TensorFlow "
            "asks for exact file names (libcudart.so.11.0, libcudnn.so.8), so CUDA 12 does "
            "not satisfy a build for CUDA 11.",
            "They are installed but the loader does not look there: a toolkit in "
            "/usr/local/cuda-X/lib64 missing from LD_LIBRARY_PATH and ldconfig, or pip's "
            "nvidia-* packages in another environment.",
            "TensorFlow installed without its CUDA libraries (since 2.14: pip install "
            "tensorflow[and-cuda]), or a CPU-only build.",
            "Two copies in different versions: an older libcublas or libcudnn on "
            "LD_LIBRARY_PATH shadows the framework's own (\"undefined symbol\", \"symbol not "
            "found\").",
            "Only TensorRT's libnvinfer is missing: a warning, and the GPU is still used."),
     .confirm = "`ldconfig -p | grep -E 'libcudart|libcublas|libcudnn|libnccl'` lists the "
                "versions the loader finds, `echo $LD_LIBRARY_PATH` where else it looks, and "
                "`ldd LIBRARY | grep 'not found'` what a library (e.g. the framework's "
                "libtorch_cuda.so) cannot find; tf.sysconfig.get_build_info() names the "
                "CUDA and cuDNN TensorFlow was built for.",
     .fix = "Install the versions the framework was built for where the loader finds them "
            "(add their folder to LD_LIBRARY_PATH, or to /etc/ld.so.conf.d and run ldconfig). "
            "TensorFlow: 1.13-2.0 CUDA 10.0 + cuDNN 7.4; 2.1-2.3 CUDA 10.1 + cuDNN 7.6; 2.4 "
            "CUDA 11.0 + cuDNN 8.0; 2.5-2.11 CUDA 11.2 + cuDNN 8.1; 2.12-2.13 CUDA 11.8 + "
            "cuDNN 8.6; 2.14 CUDA 11.8 + cuDNN 8.7; 2.15 CUDA 12.2 + cuDNN 8.9; 2.16-2.17 "
            "CUDA 12.3 + cuDNN 8.9; 2.18 CUDA 12.5 + cuDNN 9.3 (on Linux, pip install "
            "tensorflow[and-cuda] brings them). PyTorch wheels bring their own: reinstall "
            "the wheel and remove older CUDA folders from LD_LIBRARY_PATH.",
     .with_trainer = "`trainer --version` names the CUDA libraries trainer loaded and where "
                     "from; `trainer doctor` compares each with the version trainer was "
                     "built with.",
     .pytorch = "ImportError: libcudart.so.12: cannot open shared object file: No such file "
                "or directory (at import torch), or OSError: libcudnn.so.8: cannot open "
                "shared object file",
     .tensorflow = "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: "
                   "cannot open shared object file: No such file or directory, then \"Cannot "
                   "dlopen some GPU libraries. ... Skipping registering GPU devices...\" "
                   "(2.11 and later: \"Could not find cuda drivers on your machine, GPU will "
                   "not be used.\")",
     FAILS_NO_DEVICE},
    {FRAMEWORK(18, "gpu-not-registered", "no devices matching that specification are registered"),
     PHRASES("no devices matching that specification are registered",
             "Could not satisfy explicit device specification",
             "Cannot assign a device for operation", "Operation was explicitly assigned to",
             "torch.cuda.is_available() is False",
             "no supported kernel for GPU devices is available"),
     .facts = GPU_FACTS, FINDS_GPU,
     .meaning = "Work was placed on a GPU the framework never registered: at start-up it "
                "found no usable GPU (or fewer than the number asked for), so "
                "'/device:GPU:0', or a tensor saved on cuda:0, has nowhere to go.",
     CAUSES("The framework found no GPU at start-up: its CUDA libraries did not load "
            "(TensorFlow logs \"Cannot dlopen some GPU libraries\" above), no driver is "
            "loaded, or CUDA_VISIBLE_DEVICES hides every GPU.",
            "A CPU-only build of the framework (tensorflow-cpu, a CPU wheel of PyTorch).",
            "The device number is past the GPUs this process sees ('/device:GPU:1' on a "
            "one-GPU machine, or under CUDA_VISIBLE_DEVICES=0).",
            "The op has no GPU kernel (\"no supported kernel for GPU devices is available\") "
            "and soft placement is off.",
            "A checkpoint saved on a GPU loaded where none is visible (PyTorch: torch.load "
            "without map_location)."),
     .confirm = "Read the start-up log above the error for the first failure (a library that "
                "did not load, cuInit failing); tf.config.list_physical_devices('GPU') or "
                "torch.cuda.device_count() in the same environment; nvidia-smi -L.",
     .fix = "Fix why no GPU was registered first (see library-not-loaded and "
            "no-nvidia-driver); use a device number below the count; "
            "tf.config.set_soft_device_placement(True) for ops without a GPU kernel; "
            "torch.load(..., map_location='cpu') where there is no GPU.",
     .pytorch = "RuntimeError: Attempting to deserialize object on a CUDA device but "
                "torch.cuda.is_available() is False. If you are running on a CPU-only "
                "machine, please use torch.load with map_location=torch.device('cpu')",
     .tensorflow = "InvalidArgumentError: Could not satisfy explicit device specification "
                   "'/device:GPU:0' because no devices matching that specification are "
                   "registered in this process; available devices: "
                   "/job:localhost/replica:0/task:0/device:CPU:0",
     FAILS_NO_DEVICE},
    {FRAMEWORK(19, "nccl-watchdog-timeout", "Watchdog caught collective operation timeout"),
     PHRASES("Watchdog caught collective operation timeout",
             "Some NCCL operations have failed or timed out", "NCCL communicator was aborted",
             "retrieving ncclUniqueId from", "milliseconds before timing out"),
     .facts = ERROR_FACT_LIBRARIES,
     .meaning = "A collective (all-reduce, broadcast, barrier) did not finish within the "
                "process group's timeout, so the watchdog aborted the communicator and "
                "stopped the process. The timeout is the symptom: some rank never joined "
                "that collective.",
     CAUSES("Another rank failed or hung first (an exception, out of memory, a stuck data "
            "loader); its own log holds the real error.",
            "Ranks ran different collectives or in a different order: a branch on the rank, "
            "uneven data giving one rank an extra step, rank 0 saving or evaluating while "
            "the others wait in a collective.",
            "One rank is legitimately slower than the timeout allows (a long evaluation or "
            "checkpoint on rank 0).",
            "The network between machines stalled, or NCCL uses an interface the ranks "
            "cannot reach each other on.",
            "At start-up (\"retrieving ncclUniqueId ... Socket Timeout\"): rank 0 was not "
            "reachable at MASTER_ADDR:MASTER_PORT or started late."),
     .confirm = "The watchdog line names the collective (OpType) and its sequence number "
                "(SeqNum): the rank whose last SeqNum is lower is the one that lagged. "
                "NCCL_DEBUG=INFO and TORCH_DISTRIBUTED_DEBUG=DETAIL log each rank's "
                "collectives; py-spy dump shows where a stuck rank waits.",
     .fix = "Fix the rank that failed or went its own way; make every rank run the same "
            "collectives in the same order (equal batches per rank, drop_last); raise the "
            "timeout (init_process_group(timeout=...)) only for work that is really slow; "
            "set NCCL_SOCKET_IFNAME for network trouble.",
     .pytorch = "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1283, "
                "OpType=ALLREDUCE, NumelIn=2049, NumelOut=2049, Timeout(ms)=1800000) ran for "
                "1800404 milliseconds before timing out.",
     .tensorflow = "usually a hang: MultiWorkerMirroredStrategy waits without a timeout "
                   "unless CommunicationOptions(timeout_seconds=...) sets one",
     FAILS_RUNTIME},
    {FRAMEWORK(20, "driver-library-mismatch", "does not match DSO version"),
     PHRASES("does not match DSO version", "Driver/library version mismatch",
             "CUDA unknown error - this may be due to an incorrectly set up environment",
             "system has unsupported display driver / cuda driver combination",
             "API mismatch"),
     .related = "cudaErrorSystemDriverMismatch", .facts = GPU_FACTS,
     .meaning = "The NVIDIA kernel module that is running and the driver's libraries "
                "(libcuda, libnvidia-ml) are different versions, so no program can use the "
                "GPU. It follows an update; the driver is neither missing nor too old.",
     CAUSES("The driver package was updated (often by unattended upgrades) while the old "
            "kernel module stayed loaded: the new libraries cannot talk to it.",
            "After suspend and resume the nvidia_uvm module is in a bad state (PyTorch: "
            "\"CUDA unknown error - this may be due to an incorrectly set up "
            "environment\").",
            "A container or environment ships its own libcuda that does not match the "
            "host's kernel module."),
     .confirm = "`cat /proc/driver/nvidia/version` shows the loaded module's version; "
                "nvidia-smi fails with \"Driver/library version mismatch\"; `dmesg | grep -i "
                "nvrm` shows \"API mismatch\" with both versions.",
     .fix = "Reboot; or, with nothing using the GPU, reload the modules: `sudo rmmod "
            "nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia nvidia_uvm` "
            "(after suspend, reloading nvidia_uvm alone is enough). Do not ship libcuda in "
            "containers; hold the driver package against unattended upgrades.",
     .pytorch = "UserWarning: CUDA initialization: CUDA unknown error - this may be due to "
                "an incorrectly set up environment, e.g. changing env variable "
                "CUDA_VISIBLE_DEVICES after program start. Setting the available devices to "
                "be zero.",
     .tensorflow = "kernel version 470.57.2 does not match DSO version 470.63.1 -- cannot "
                   "find working devices in this configuration",
     FAILS_NO_DEVICE},
};

enum { CATALOG_SIZE = sizeof catalog / sizeof catalog[0] };

// ---- families -----------------------------------------------------------------------------

typedef struct FamilyInfo {
    const char *title, *type, *prefix;
    const char *aliases[4];  // more prefixes `trainer explain` accepts
} FamilyInfo;

static const FamilyInfo families[ERROR_FAMILY_COUNT] = {
    [ERROR_FAMILY_CUDA_RUNTIME] = {"CUDA runtime", "cudaError_t", "cuda",
                                   {"runtime", "cudart", "cudaError"}},
    [ERROR_FAMILY_CUDA_DRIVER] = {"CUDA driver", "CUresult", "driver",
                                  {"cu", "curesult", "CUDA_ERROR"}},
    [ERROR_FAMILY_CUBLAS] = {"cuBLAS", "cublasStatus_t", "cublas", {"CUBLAS_STATUS"}},
    [ERROR_FAMILY_CUDNN] = {"cuDNN", "cudnnStatus_t", "cudnn", {"CUDNN_STATUS"}},
    [ERROR_FAMILY_NCCL] = {"NCCL", "ncclResult_t", "nccl", {"ncclResult"}},
    [ERROR_FAMILY_FRAMEWORK] = {"framework messages", "PyTorch / TensorFlow", "framework",
                                {"fw", "pytorch", "tensorflow"}},
};

const char *error_family_title(ErrorFamily family) { return families[family].title; }
const char *error_family_type(ErrorFamily family) { return families[family].type; }
const char *error_family_prefix(ErrorFamily family) { return families[family].prefix; }

void error_entry_code(const ErrorEntry *entry, char *buf, size_t size) {
    snprintf(buf, size, "%s:%d", error_family_prefix(entry->family), entry->number);
}

int error_catalog_count(void) { return CATALOG_SIZE; }

const ErrorEntry *error_catalog_at(int index) {
    return index >= 0 && index < CATALOG_SIZE ? &catalog[index] : NULL;
}

// ---- exact lookups ---------------------------------------------------------------------

static int same_text(const char *a, const char *b, size_t length) {
    for (size_t i = 0; i < length; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return 0;
    return 1;
}

static int same_word(const char *a, size_t length, const char *word) {
    return word && strlen(word) == length && same_text(a, word, length);
}

const ErrorEntry *error_catalog_lookup_code(ErrorFamily family, int number) {
    for (int i = 0; i < CATALOG_SIZE; i++)
        if (catalog[i].family == family && catalog[i].number == number) return &catalog[i];
    return NULL;
}

static const ErrorEntry *lookup_name_span(const char *name, size_t length) {
    for (int i = 0; i < CATALOG_SIZE; i++)
        if (same_word(name, length, catalog[i].name) ||
            same_word(name, length, catalog[i].old_name))
            return &catalog[i];
    return NULL;
}

const ErrorEntry *error_catalog_lookup_name(const char *name) {
    return name ? lookup_name_span(name, strlen(name)) : NULL;
}

// cuDNN 8 and older numbered statuses 1-14; a traceback from those versions says
// "cudnn:9" for what cuDNN 9 calls 3000.
static const ErrorEntry *lookup_old_cudnn_number(int number) {
    for (int i = 0; i < CATALOG_SIZE; i++)
        if (catalog[i].family == ERROR_FAMILY_CUDNN && catalog[i].old_number == number)
            return &catalog[i];
    return NULL;
}

// ---- reading what the user typed ----------------------------------------------------------

static int parse_number(const char *text, size_t length, int *out) {
    if (length == 0 || length > 9) return 0;
    int value = 0;
    for (size_t i = 0; i < length; i++) {
        if (!isdigit((unsigned char)text[i])) return 0;
        value = value * 10 + (text[i] - '0');
    }
    *out = value;
    return 1;
}

static int parse_family(const char *text, size_t length, ErrorFamily *out) {
    for (int f = 0; f < ERROR_FAMILY_COUNT; f++) {
        int match = same_word(text, length, families[f].prefix);
        for (int a = 0; a < 4 && !match; a++) match = same_word(text, length, families[f].aliases[a]);
        if (match) {
            *out = (ErrorFamily)f;
            return 1;
        }
    }
    return 0;
}

// Appends an entry once; keeps counting past max so callers learn the true number.
static void add_found(const ErrorEntry *entry, const ErrorEntry **found, int max, int *count) {
    for (int i = 0; i < *count && i < max; i++)
        if (found[i] == entry) return;
    if (*count < max) found[*count] = entry;
    (*count)++;
}

// "cuda:2", "cudnn:9": 1 when the text has that form (even if no entry matches).
static int search_family_code(const char *text, const ErrorEntry **found, int max, int *count) {
    const char *colon = strchr(text, ':');
    ErrorFamily family;
    int number;
    if (!colon || !parse_family(text, (size_t)(colon - text), &family) ||
        !parse_number(colon + 1, strlen(colon + 1), &number))
        return 0;
    const ErrorEntry *entry = error_catalog_lookup_code(family, number);
    if (!entry && family == ERROR_FAMILY_CUDNN) entry = lookup_old_cudnn_number(number);
    if (entry) add_found(entry, found, max, count);
    return 1;
}

// A driver error whose runtime twin has the same number is the same error told by the
// other API: one candidate, not two.
static int is_runtime_twin_number(const ErrorEntry *e) {
    if (e->family != ERROR_FAMILY_CUDA_DRIVER || !e->related) return 0;
    const ErrorEntry *twin = error_catalog_lookup_name(e->related);
    return twin && twin->family == ERROR_FAMILY_CUDA_RUNTIME && twin->number == e->number;
}

// A bare number: every library family that uses it (a framework number means nothing
// without its prefix). cuDNN 8 numbers only when nothing current matches.
static void search_bare_number(int number, const ErrorEntry **found, int max, int *count) {
    for (int i = 0; i < CATALOG_SIZE; i++)
        if (catalog[i].family != ERROR_FAMILY_FRAMEWORK && catalog[i].number == number &&
            !is_runtime_twin_number(&catalog[i]))
            add_found(&catalog[i], found, max, count);
    if (*count == 0) {
        const ErrorEntry *old = lookup_old_cudnn_number(number);
        if (old) add_found(old, found, max, count);
    }
}

// ---- finding an entry inside a pasted message ----------------------------------------------

static int identifier_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

// Where `needle` first occurs in `text`, ignoring case, as a whole word at any end that
// is a word character (so CUDNN_STATUS_NOT_SUPPORTED does not match inside
// CUDNN_STATUS_NOT_SUPPORTED_SHAPE); -1 when it does not.
static long find_phrase(const char *text, const char *needle) {
    size_t length = strlen(needle), text_length = strlen(text);
    if (length == 0 || length > text_length) return -1;
    for (size_t at = 0; at + length <= text_length; at++) {
        if (!same_text(text + at, needle, length)) continue;
        if (identifier_char(needle[0]) && at > 0 && identifier_char(text[at - 1])) continue;
        if (identifier_char(needle[length - 1]) && identifier_char(text[at + length])) continue;
        return (long)at;
    }
    return -1;
}

// Runtime strings shorter than this ("invalid argument", "unknown error") appear in too
// many unrelated messages to identify an error.
#define SHORT_STRING_MIN 18

int error_entry_wordings(const ErrorEntry *e, const char **out, int max) {
    int n = 0;
    for (int p = 0; p < ERROR_PHRASES_MAX && e->phrases[p] && n < max; p++) out[n++] = e->phrases[p];
    if (e->family != ERROR_FAMILY_FRAMEWORK && n < max) out[n++] = e->name;
    if (e->old_name && n < max) out[n++] = e->old_name;
    if (e->family == ERROR_FAMILY_CUDA_RUNTIME && strlen(e->short_string) >= SHORT_STRING_MIN &&
        n < max)
        out[n++] = e->short_string;
    return n;
}

// An error's own name is an identifier no other error shares, so it tells more than a
// phrase of the same length ("NCCL error in:" starts every NCCL failure PyTorch reports).
// NCCL's "Last error:" line names the cause the lines above it only report.
enum { NAME_BONUS = 16, LAST_ERROR_BONUS = 1000 };

typedef struct Ranked {
    ErrorCandidate candidate;
    long at;  // where the wording first occurs: earlier wins a tie
} Ranked;

static void squash(const char *text, char *out, size_t size);

// TensorFlow names the driver's CUresult (CUDA_ERROR_NVLINK_UNCORRECTABLE) where the
// catalog holds only the runtime's twin (cudaErrorNvlinkUncorrectable). The two spell the
// same words, so a runtime entry also matches the driver spelling of its name when no
// entry has that name. Returns where it occurs (-1 when not) and its length.
static long find_driver_spelling(const ErrorEntry *e, const char *text, size_t *length) {
    if (e->family != ERROR_FAMILY_CUDA_RUNTIME) return -1;
    char mine[128], theirs[128];
    squash(e->name, mine, sizeof mine);
    for (const char *at = strstr(text, "CUDA_ERROR_"); at; at = strstr(at + 1, "CUDA_ERROR_")) {
        size_t n = 0;
        while (identifier_char(at[n])) n++;
        if (n >= sizeof theirs || (at > text && identifier_char(at[-1])) ||
            lookup_name_span(at, n))
            continue;
        memcpy(theirs, at, n);
        theirs[n] = '\0';
        squash(theirs, theirs, sizeof theirs);
        if (strcmp(mine, theirs) == 0) {
            *length = n;
            return (long)(at - text);
        }
    }
    return -1;
}

int error_entries_same_error(const ErrorEntry *a, const ErrorEntry *b) {
    return a == b || (a->related && strcmp(a->related, b->name) == 0) ||
           (b->related && strcmp(b->related, a->name) == 0) ||
           (a->related && b->related && strcmp(a->related, b->related) == 0);
}

static int is_name(const ErrorEntry *e, const char *wording) {
    return wording == e->name || wording == e->old_name;
}

// The entry's most specific wording in `text` (tail: the text after "Last error:", or
// NULL); 0 when none of its wordings occurs.
static int best_wording(const ErrorEntry *e, const char *text, const char *tail, Ranked *out) {
    const char *wordings[ERROR_WORDINGS_MAX];
    int count = error_entry_wordings(e, wordings, ERROR_WORDINGS_MAX), found = 0;
    for (int w = 0; w < count; w++) {
        long at = find_phrase(text, wordings[w]);
        if (at < 0) continue;
        int score = (int)strlen(wordings[w]) + (is_name(e, wordings[w]) ? NAME_BONUS : 0);
        if (tail && find_phrase(tail, wordings[w]) >= 0) score += LAST_ERROR_BONUS;
        if (!found || score > out->candidate.specificity ||
            (score == out->candidate.specificity && at < out->at))
            *out = (Ranked){{e, wordings[w], score}, at};
        found = 1;
    }
    size_t length;
    long at = find_driver_spelling(e, text, &length);
    if (at >= 0 && (!found || (int)length + NAME_BONUS > out->candidate.specificity)) {
        *out = (Ranked){{e, e->name, (int)length + NAME_BONUS}, at};
        found = 1;
    }
    return found;
}

static int ranked_before(const Ranked *a, const Ranked *b) {
    if (a->candidate.specificity != b->candidate.specificity)
        return a->candidate.specificity > b->candidate.specificity;
    return a->at < b->at;
}

// A framework entry that explains the winner for framework users ("cuDNN error:
// CUDNN_STATUS_NOT_SUPPORTED" → cudnn-not-supported) and matched too goes first.
static void prefer_framework_twin(Ranked *ranked, int count) {
    if (count < 2 || ranked[0].candidate.entry->family == ERROR_FAMILY_FRAMEWORK) return;
    const ErrorEntry *top = ranked[0].candidate.entry;
    for (int i = 1; i < count; i++) {
        const ErrorEntry *e = ranked[i].candidate.entry;
        if (e->family != ERROR_FAMILY_FRAMEWORK || !error_entries_same_error(e, top)) continue;
        Ranked moved = ranked[i];
        memmove(&ranked[1], &ranked[0], (size_t)i * sizeof *ranked);
        ranked[0] = moved;
        return;
    }
}

int error_catalog_rank(const char *text, ErrorCandidate *out, int max) {
    if (!text) return 0;
    long last_error = find_phrase(text, "Last error:");
    const char *tail = last_error >= 0 ? text + last_error : NULL;
    Ranked ranked[CATALOG_SIZE];
    int count = 0;
    for (int i = 0; i < CATALOG_SIZE; i++) {
        Ranked r;
        if (!best_wording(&catalog[i], text, tail, &r)) continue;
        int at = count++;  // insertion sort: few entries match any one text
        while (at > 0 && ranked_before(&r, &ranked[at - 1])) {
            ranked[at] = ranked[at - 1];
            at--;
        }
        ranked[at] = r;
    }
    prefer_framework_twin(ranked, count);
    for (int i = 0; i < count && i < max; i++) out[i] = ranked[i].candidate;
    return count;
}

static const ErrorEntry *search_pasted(const char *text) {
    ErrorCandidate best;
    return error_catalog_rank(text, &best, 1) > 0 ? best.entry : NULL;
}

static void trim(const char *text, char *out, size_t size) {
    while (isspace((unsigned char)*text)) text++;
    snprintf(out, size, "%s", text);
    size_t n = strlen(out);
    while (n > 0 && isspace((unsigned char)out[n - 1])) out[--n] = '\0';
}

int error_catalog_search(const char *text, const ErrorEntry **found, int max) {
    if (!text) return 0;
    char word[4096];
    trim(text, word, sizeof word);
    if (!word[0]) return 0;
    int count = 0, number;
    const ErrorEntry *named = error_catalog_lookup_name(word);
    if (named) {
        add_found(named, found, max, &count);
        return count;
    }
    if (search_family_code(word, found, max, &count)) return count;
    if (parse_number(word, strlen(word), &number)) {
        search_bare_number(number, found, max, &count);
        return count;
    }
    const ErrorEntry *pasted = search_pasted(word);
    if (pasted) add_found(pasted, found, max, &count);
    return count;
}

const ErrorEntry *error_catalog_find(const char *text) {
    const ErrorEntry *found[2];
    return error_catalog_search(text, found, 2) == 1 ? found[0] : NULL;
}

// ---- did you mean ---------------------------------------------------------------------------

// Lowercase without '_' and '-', so CUDA_ERROR_MEMORY_ALLOCATION meets
// cudaErrorMemoryAllocation and cuda_error_invalid_device meets CUDA_ERROR_INVALID_DEVICE.
static void squash(const char *text, char *out, size_t size) {
    size_t n = 0;  // out may be text: it never runs ahead of it
    for (; *text && n + 1 < size; text++)
        if (*text != '_' && *text != '-') out[n++] = (char)tolower((unsigned char)*text);
    out[n] = '\0';
}

const char *error_catalog_suggest(const char *text) {
    if (!text) return NULL;
    char word[256], squashed[256], other[256];
    trim(text, word, sizeof word);
    if (!word[0] || strchr(word, ' ')) return NULL;  // a pasted sentence is nobody's typo
    squash(word, squashed, sizeof squashed);
    for (int i = 0; i < CATALOG_SIZE; i++) {
        squash(catalog[i].name, other, sizeof other);
        if (strcmp(squashed, other) == 0) return catalog[i].name;
    }
    const char *names[CATALOG_SIZE + 1];
    for (int i = 0; i < CATALOG_SIZE; i++) names[i] = catalog[i].name;
    names[CATALOG_SIZE] = NULL;
    return suggest(word, names);
}
