// The error catalog (base/error_catalog.c): every entry is complete and findable, its
// numbers are the ones in the CUDA 13.0 / cuDNN 9.19 / NCCL 2.28 headers, every cuBLAS,
// cuDNN and NCCL status is there, framework messages are found inside pasted text, every
// text of the routing corpus (explain_corpus.tsv) reaches its expected entry, advice for
// everyone names no trainer step, and the verdict speaks only where the facts decide.
// Runs without a GPU and in a build without CUDA; a CUDA build also checks names and
// strings against the libraries' own cudaGetErrorName / cudaGetErrorString.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/error_catalog.h"
#include "diagnostics/machine_facts.h"

#if defined(TRAINER_HAVE_CUDA) && __has_include(<cuda_runtime_api.h>) && \
    __has_include(<cublas_api.h>) && __has_include(<nccl.h>)
#define CHECK_AGAINST_LIBRARIES 1
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#endif

typedef struct Code {
    const char *name;
    int number;
} Code;

// Every cudaError_t of driver_types.h (CUDA 13.0) except cudaSuccess.
static const Code runtime_header[] = {
    {"cudaErrorInvalidValue", 1}, {"cudaErrorMemoryAllocation", 2},
    {"cudaErrorInitializationError", 3}, {"cudaErrorCudartUnloading", 4},
    {"cudaErrorProfilerDisabled", 5}, {"cudaErrorProfilerNotInitialized", 6},
    {"cudaErrorProfilerAlreadyStarted", 7}, {"cudaErrorProfilerAlreadyStopped", 8},
    {"cudaErrorInvalidConfiguration", 9}, {"cudaErrorInvalidPitchValue", 12},
    {"cudaErrorInvalidSymbol", 13}, {"cudaErrorInvalidHostPointer", 16},
    {"cudaErrorInvalidDevicePointer", 17}, {"cudaErrorInvalidTexture", 18},
    {"cudaErrorInvalidTextureBinding", 19}, {"cudaErrorInvalidChannelDescriptor", 20},
    {"cudaErrorInvalidMemcpyDirection", 21}, {"cudaErrorAddressOfConstant", 22},
    {"cudaErrorTextureFetchFailed", 23}, {"cudaErrorTextureNotBound", 24},
    {"cudaErrorSynchronizationError", 25}, {"cudaErrorInvalidFilterSetting", 26},
    {"cudaErrorInvalidNormSetting", 27}, {"cudaErrorMixedDeviceExecution", 28},
    {"cudaErrorNotYetImplemented", 31}, {"cudaErrorMemoryValueTooLarge", 32},
    {"cudaErrorStubLibrary", 34}, {"cudaErrorInsufficientDriver", 35},
    {"cudaErrorCallRequiresNewerDriver", 36}, {"cudaErrorInvalidSurface", 37},
    {"cudaErrorDuplicateVariableName", 43}, {"cudaErrorDuplicateTextureName", 44},
    {"cudaErrorDuplicateSurfaceName", 45}, {"cudaErrorDevicesUnavailable", 46},
    {"cudaErrorIncompatibleDriverContext", 49}, {"cudaErrorMissingConfiguration", 52},
    {"cudaErrorPriorLaunchFailure", 53}, {"cudaErrorLaunchMaxDepthExceeded", 65},
    {"cudaErrorLaunchFileScopedTex", 66}, {"cudaErrorLaunchFileScopedSurf", 67},
    {"cudaErrorSyncDepthExceeded", 68}, {"cudaErrorLaunchPendingCountExceeded", 69},
    {"cudaErrorInvalidDeviceFunction", 98}, {"cudaErrorNoDevice", 100},
    {"cudaErrorInvalidDevice", 101}, {"cudaErrorDeviceNotLicensed", 102},
    {"cudaErrorSoftwareValidityNotEstablished", 103}, {"cudaErrorStartupFailure", 127},
    {"cudaErrorInvalidKernelImage", 200}, {"cudaErrorDeviceUninitialized", 201},
    {"cudaErrorMapBufferObjectFailed", 205}, {"cudaErrorUnmapBufferObjectFailed", 206},
    {"cudaErrorArrayIsMapped", 207}, {"cudaErrorAlreadyMapped", 208},
    {"cudaErrorNoKernelImageForDevice", 209}, {"cudaErrorAlreadyAcquired", 210},
    {"cudaErrorNotMapped", 211}, {"cudaErrorNotMappedAsArray", 212},
    {"cudaErrorNotMappedAsPointer", 213}, {"cudaErrorECCUncorrectable", 214},
    {"cudaErrorUnsupportedLimit", 215}, {"cudaErrorDeviceAlreadyInUse", 216},
    {"cudaErrorPeerAccessUnsupported", 217}, {"cudaErrorInvalidPtx", 218},
    {"cudaErrorInvalidGraphicsContext", 219}, {"cudaErrorNvlinkUncorrectable", 220},
    {"cudaErrorJitCompilerNotFound", 221}, {"cudaErrorUnsupportedPtxVersion", 222},
    {"cudaErrorJitCompilationDisabled", 223}, {"cudaErrorUnsupportedExecAffinity", 224},
    {"cudaErrorUnsupportedDevSideSync", 225}, {"cudaErrorContained", 226},
    {"cudaErrorInvalidSource", 300}, {"cudaErrorFileNotFound", 301},
    {"cudaErrorSharedObjectSymbolNotFound", 302}, {"cudaErrorSharedObjectInitFailed", 303},
    {"cudaErrorOperatingSystem", 304}, {"cudaErrorInvalidResourceHandle", 400},
    {"cudaErrorIllegalState", 401}, {"cudaErrorLossyQuery", 402},
    {"cudaErrorSymbolNotFound", 500}, {"cudaErrorNotReady", 600},
    {"cudaErrorIllegalAddress", 700}, {"cudaErrorLaunchOutOfResources", 701},
    {"cudaErrorLaunchTimeout", 702}, {"cudaErrorLaunchIncompatibleTexturing", 703},
    {"cudaErrorPeerAccessAlreadyEnabled", 704}, {"cudaErrorPeerAccessNotEnabled", 705},
    {"cudaErrorSetOnActiveProcess", 708}, {"cudaErrorContextIsDestroyed", 709},
    {"cudaErrorAssert", 710}, {"cudaErrorTooManyPeers", 711},
    {"cudaErrorHostMemoryAlreadyRegistered", 712}, {"cudaErrorHostMemoryNotRegistered", 713},
    {"cudaErrorHardwareStackError", 714}, {"cudaErrorIllegalInstruction", 715},
    {"cudaErrorMisalignedAddress", 716}, {"cudaErrorInvalidAddressSpace", 717},
    {"cudaErrorInvalidPc", 718}, {"cudaErrorLaunchFailure", 719},
    {"cudaErrorCooperativeLaunchTooLarge", 720}, {"cudaErrorTensorMemoryLeak", 721},
    {"cudaErrorNotPermitted", 800}, {"cudaErrorNotSupported", 801},
    {"cudaErrorSystemNotReady", 802}, {"cudaErrorSystemDriverMismatch", 803},
    {"cudaErrorCompatNotSupportedOnDevice", 804}, {"cudaErrorMpsConnectionFailed", 805},
    {"cudaErrorMpsRpcFailure", 806}, {"cudaErrorMpsServerNotReady", 807},
    {"cudaErrorMpsMaxClientsReached", 808}, {"cudaErrorMpsMaxConnectionsReached", 809},
    {"cudaErrorMpsClientTerminated", 810}, {"cudaErrorCdpNotSupported", 811},
    {"cudaErrorCdpVersionMismatch", 812}, {"cudaErrorStreamCaptureUnsupported", 900},
    {"cudaErrorStreamCaptureInvalidated", 901}, {"cudaErrorStreamCaptureMerge", 902},
    {"cudaErrorStreamCaptureUnmatched", 903}, {"cudaErrorStreamCaptureUnjoined", 904},
    {"cudaErrorStreamCaptureIsolation", 905}, {"cudaErrorStreamCaptureImplicit", 906},
    {"cudaErrorCapturedEvent", 907}, {"cudaErrorStreamCaptureWrongThread", 908},
    {"cudaErrorTimeout", 909}, {"cudaErrorGraphExecUpdateFailure", 910},
    {"cudaErrorExternalDevice", 911}, {"cudaErrorInvalidClusterSize", 912},
    {"cudaErrorFunctionNotLoaded", 913}, {"cudaErrorInvalidResourceType", 914},
    {"cudaErrorInvalidResourceConfiguration", 915}, {"cudaErrorUnknown", 999},
};

// The runtime errors a training program hits; each must be catalogued.
static const char *const runtime_required[] = {
    "cudaErrorMemoryAllocation", "cudaErrorInitializationError", "cudaErrorInvalidDevice",
    "cudaErrorNoDevice", "cudaErrorInsufficientDriver", "cudaErrorNoKernelImageForDevice",
    "cudaErrorInvalidConfiguration", "cudaErrorInvalidValue", "cudaErrorIllegalAddress",
    "cudaErrorLaunchFailure", "cudaErrorLaunchOutOfResources", "cudaErrorLaunchTimeout",
    "cudaErrorAssert", "cudaErrorMisalignedAddress", "cudaErrorInvalidDeviceFunction",
    "cudaErrorUnsupportedPtxVersion", "cudaErrorSystemDriverMismatch",
    "cudaErrorCompatNotSupportedOnDevice", "cudaErrorDevicesUnavailable",
    "cudaErrorPeerAccessUnsupported", "cudaErrorPeerAccessNotEnabled", "cudaErrorNotPermitted",
    "cudaErrorECCUncorrectable", "cudaErrorOperatingSystem", "cudaErrorInvalidResourceHandle",
    "cudaErrorNotReady", "cudaErrorStubLibrary", "cudaErrorCallRequiresNewerDriver",
    "cudaErrorIllegalInstruction", "cudaErrorHardwareStackError",
};

// Every CUresult of cuda.h (CUDA 13.0) that the catalog may hold.
static const Code driver_header[] = {
    {"CUDA_ERROR_INVALID_VALUE", 1}, {"CUDA_ERROR_OUT_OF_MEMORY", 2},
    {"CUDA_ERROR_NOT_INITIALIZED", 3}, {"CUDA_ERROR_DEINITIALIZED", 4},
    {"CUDA_ERROR_STUB_LIBRARY", 34}, {"CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", 36},
    {"CUDA_ERROR_DEVICE_UNAVAILABLE", 46}, {"CUDA_ERROR_NO_DEVICE", 100},
    {"CUDA_ERROR_INVALID_DEVICE", 101}, {"CUDA_ERROR_DEVICE_NOT_LICENSED", 102},
    {"CUDA_ERROR_INVALID_IMAGE", 200}, {"CUDA_ERROR_INVALID_CONTEXT", 201},
    {"CUDA_ERROR_NO_BINARY_FOR_GPU", 209}, {"CUDA_ERROR_ECC_UNCORRECTABLE", 214},
    {"CUDA_ERROR_CONTEXT_ALREADY_IN_USE", 216}, {"CUDA_ERROR_INVALID_PTX", 218},
    {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222}, {"CUDA_ERROR_OPERATING_SYSTEM", 304},
    {"CUDA_ERROR_INVALID_HANDLE", 400}, {"CUDA_ERROR_NOT_FOUND", 500},
    {"CUDA_ERROR_NOT_READY", 600}, {"CUDA_ERROR_ILLEGAL_ADDRESS", 700},
    {"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701}, {"CUDA_ERROR_LAUNCH_TIMEOUT", 702},
    {"CUDA_ERROR_CONTEXT_IS_DESTROYED", 709}, {"CUDA_ERROR_ASSERT", 710},
    {"CUDA_ERROR_HARDWARE_STACK_ERROR", 714}, {"CUDA_ERROR_ILLEGAL_INSTRUCTION", 715},
    {"CUDA_ERROR_MISALIGNED_ADDRESS", 716}, {"CUDA_ERROR_LAUNCH_FAILED", 719},
    {"CUDA_ERROR_NOT_PERMITTED", 800}, {"CUDA_ERROR_NOT_SUPPORTED", 801},
    {"CUDA_ERROR_SYSTEM_NOT_READY", 802}, {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 803},
    {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 804}, {"CUDA_ERROR_UNKNOWN", 999},
};

// Every cublasStatus_t of cublas_api.h except SUCCESS: all must be catalogued.
static const Code cublas_header[] = {
    {"CUBLAS_STATUS_NOT_INITIALIZED", 1}, {"CUBLAS_STATUS_ALLOC_FAILED", 3},
    {"CUBLAS_STATUS_INVALID_VALUE", 7}, {"CUBLAS_STATUS_ARCH_MISMATCH", 8},
    {"CUBLAS_STATUS_MAPPING_ERROR", 11}, {"CUBLAS_STATUS_EXECUTION_FAILED", 13},
    {"CUBLAS_STATUS_INTERNAL_ERROR", 14}, {"CUBLAS_STATUS_NOT_SUPPORTED", 15},
    {"CUBLAS_STATUS_LICENSE_ERROR", 16},
};

// Every distinct cudnnStatus_t of cuDNN 9.19's cudnn_graph_v9.h except SUCCESS.
static const Code cudnn_header[] = {
    {"CUDNN_STATUS_NOT_INITIALIZED", 1001}, {"CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", 1002},
    {"CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH", 1003}, {"CUDNN_STATUS_DEPRECATED", 1004},
    {"CUDNN_STATUS_LICENSE_ERROR", 1005}, {"CUDNN_STATUS_RUNTIME_IN_PROGRESS", 1006},
    {"CUDNN_STATUS_RUNTIME_FP_OVERFLOW", 1007}, {"CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", 1008},
    {"CUDNN_STATUS_BAD_PARAM", 2000}, {"CUDNN_STATUS_INVALID_VALUE", 2001},
    {"CUDNN_STATUS_BAD_PARAM_NULL_POINTER", 2002},
    {"CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER", 2003},
    {"CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED", 2004}, {"CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND", 2005},
    {"CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT", 2006},
    {"CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH", 2007},
    {"CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH", 2008},
    {"CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES", 2009},
    {"CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE", 2010},
    {"CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH", 2011},
    {"CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE", 2012}, {"CUDNN_STATUS_NOT_SUPPORTED", 3000},
    {"CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN", 3001}, {"CUDNN_STATUS_NOT_SUPPORTED_SHAPE", 3002},
    {"CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE", 3003}, {"CUDNN_STATUS_NOT_SUPPORTED_LAYOUT", 3004},
    {"CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER", 3005},
    {"CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART", 3006},
    {"CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", 3007},
    {"CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING", 3008},
    {"CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE", 3009},
    {"CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT", 3010},
    {"CUDNN_STATUS_NOT_SUPPORTED_PADDING", 3011},
    {"CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM", 3012},
    {"CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API", 3013},
    {"CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE", 3014},
    {"CUDNN_STATUS_INTERNAL_ERROR", 4000}, {"CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED", 4001},
    {"CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE", 4002},
    {"CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", 4003},
    {"CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", 4004},
    {"CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM", 4005},
    {"CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED", 4006},
    {"CUDNN_STATUS_EXECUTION_FAILED", 5000}, {"CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER", 5001},
    {"CUDNN_STATUS_EXECUTION_FAILED_CUBLAS", 5002}, {"CUDNN_STATUS_EXECUTION_FAILED_CUDART", 5003},
    {"CUDNN_STATUS_EXECUTION_FAILED_CURAND", 5004},
};

// Every ncclResult_t of nccl.h (2.28) except ncclSuccess.
static const Code nccl_header[] = {
    {"ncclUnhandledCudaError", 1}, {"ncclSystemError", 2}, {"ncclInternalError", 3},
    {"ncclInvalidArgument", 4}, {"ncclInvalidUsage", 5}, {"ncclRemoteError", 6},
    {"ncclInProgress", 7},
};

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int header_number(const Code *codes, int count, const char *name) {
    for (int i = 0; i < count; i++)
        if (strcmp(codes[i].name, name) == 0) return codes[i].number;
    return -1;
}

static int nonempty(const char *text) { return text && text[0]; }

static int same_ignoring_case(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;
        char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b - 'A' + 'a') : *b;
        if (x != y) return 0;
    }
    return *a == *b;
}

static void every_entry_is_complete(void) {
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        int complete = nonempty(e->name) && nonempty(e->short_string) && nonempty(e->meaning) &&
                       nonempty(e->causes[0]) && nonempty(e->confirm) && nonempty(e->fix) &&
                       nonempty(e->pytorch) && nonempty(e->tensorflow) &&
                       e->status != STATUS_OK && e->family < ERROR_FAMILY_COUNT;
        if (!complete) fprintf(stderr, "incomplete entry: %s\n", e->name ? e->name : "(null)");
        CHECK(complete);
        for (int c = 1; c < ERROR_CAUSES_MAX; c++)
            if (e->causes[c]) CHECK(e->causes[c - 1] != NULL && nonempty(e->causes[c]));
        if (e->related && !error_catalog_lookup_name(e->related)) {
            fprintf(stderr, "%s: related '%s' is not in the catalog\n", e->name, e->related);
            CHECK(0);
        }
        if (e->family == ERROR_FAMILY_FRAMEWORK) CHECK(nonempty(e->phrases[0]));
    }
}

static void names_and_codes_are_unique(void) {
    int n = error_catalog_count();
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const ErrorEntry *a = error_catalog_at(i), *b = error_catalog_at(j);
            if (same_ignoring_case(a->name, b->name) ||
                (a->family == b->family && a->number == b->number)) {
                fprintf(stderr, "duplicate: %s and %s\n", a->name, b->name);
                CHECK(0);
            }
        }
}

// By name (any case) and by family:number: the same entry.
static void every_entry_is_found_by_name_and_code(void) {
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        char code[64], upper[128];
        error_entry_code(e, code, sizeof code);
        snprintf(upper, sizeof upper, "%s", e->name);
        for (char *c = upper; *c; c++)
            if (*c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
        CHECK(error_catalog_lookup_name(e->name) == e);
        CHECK(error_catalog_find(e->name) == e);
        CHECK(error_catalog_find(upper) == e);
        CHECK(error_catalog_lookup_code(e->family, e->number) == e);
        if (error_catalog_find(code) != e) {
            fprintf(stderr, "'%s' does not find %s\n", code, e->name);
            CHECK(0);
        }
    }
}

static void numbers_match_the_headers(void) {
    struct {
        ErrorFamily family;
        const Code *codes;
        int count;
        int all_required;
    } tables[] = {
        {ERROR_FAMILY_CUDA_RUNTIME, runtime_header, COUNT_OF(runtime_header), 0},
        {ERROR_FAMILY_CUDA_DRIVER, driver_header, COUNT_OF(driver_header), 0},
        {ERROR_FAMILY_CUBLAS, cublas_header, COUNT_OF(cublas_header), 1},
        {ERROR_FAMILY_CUDNN, cudnn_header, COUNT_OF(cudnn_header), 1},
        {ERROR_FAMILY_NCCL, nccl_header, COUNT_OF(nccl_header), 1},
    };
    int per_family[ERROR_FAMILY_COUNT] = {0};
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        per_family[e->family]++;
        for (int t = 0; t < COUNT_OF(tables); t++) {
            if (tables[t].family != e->family) continue;
            int number = header_number(tables[t].codes, tables[t].count, e->name);
            if (number != e->number) {
                fprintf(stderr, "%s is %d in the catalog, %d in the header\n", e->name,
                        e->number, number);
                CHECK(0);
            }
        }
    }
    for (int t = 0; t < COUNT_OF(tables); t++) {
        if (!tables[t].all_required) continue;
        CHECK_INT_EQ(per_family[tables[t].family], tables[t].count);
        for (int i = 0; i < tables[t].count; i++)
            if (!error_catalog_lookup_code(tables[t].family, tables[t].codes[i].number)) {
                fprintf(stderr, "missing %s\n", tables[t].codes[i].name);
                CHECK(0);
            }
    }
    CHECK(per_family[ERROR_FAMILY_CUDA_RUNTIME] >= 40);
    CHECK(per_family[ERROR_FAMILY_CUDA_DRIVER] >= 15);
    for (int i = 0; i < COUNT_OF(runtime_required); i++)
        if (!error_catalog_lookup_name(runtime_required[i])) {
            fprintf(stderr, "missing required %s\n", runtime_required[i]);
            CHECK(0);
        }
}

#ifdef CHECK_AGAINST_LIBRARIES
// The names and strings the libraries themselves return (no GPU needed for these).
static void names_and_strings_match_the_libraries(void) {
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        const char *name = NULL, *string = NULL;
        if (e->family == ERROR_FAMILY_CUDA_RUNTIME) {
            name = cudaGetErrorName((cudaError_t)e->number);
            string = cudaGetErrorString((cudaError_t)e->number);
        } else if (e->family == ERROR_FAMILY_CUBLAS) {
            name = cublasGetStatusName((cublasStatus_t)e->number);
            string = cublasGetStatusString((cublasStatus_t)e->number);
        } else if (e->family == ERROR_FAMILY_NCCL) {
            string = ncclGetErrorString((ncclResult_t)e->number);
        }
        if (name && strcmp(name, e->name) != 0) {
            fprintf(stderr, "library name %s, catalog %s\n", name, e->name);
            CHECK(0);
        }
        if (string && strcmp(string, e->short_string) != 0) {
            fprintf(stderr, "%s: library string \"%s\", catalog \"%s\"\n", e->name, string,
                    e->short_string);
            CHECK(0);
        }
    }
}
#endif

static void expect_status(const char *name, StatusCode code, int poisons) {
    const ErrorEntry *e = error_catalog_lookup_name(name);
    CHECK(e != NULL);
    if (!e) return;
    if (e->status != code || e->poisons_context != poisons) {
        fprintf(stderr, "%s: status %d poisons %d, expected %d and %d\n", name, e->status,
                e->poisons_context, code, poisons);
        CHECK(0);
    }
}

static void status_codes_and_poisoning_follow_the_docs(void) {
    expect_status("cudaErrorMemoryAllocation", STATUS_OUT_OF_MEMORY, 0);
    expect_status("CUDA_ERROR_OUT_OF_MEMORY", STATUS_OUT_OF_MEMORY, 0);
    expect_status("CUBLAS_STATUS_ALLOC_FAILED", STATUS_OUT_OF_MEMORY, 0);
    expect_status("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", STATUS_OUT_OF_MEMORY, 0);
    expect_status("cudaErrorInvalidDevice", STATUS_NO_DEVICE, 0);
    expect_status("cudaErrorNoDevice", STATUS_NO_DEVICE, 0);
    expect_status("cudaErrorInsufficientDriver", STATUS_NO_DEVICE, 0);
    expect_status("cudaErrorNoKernelImageForDevice", STATUS_NO_DEVICE, 0);
    expect_status("cudaErrorDevicesUnavailable", STATUS_NO_DEVICE, 0);
    expect_status("cudaErrorInvalidConfiguration", STATUS_RUNTIME_ERROR, 0);
    const char *poisoning[] = {"cudaErrorIllegalAddress", "cudaErrorLaunchFailure",
                               "cudaErrorMisalignedAddress", "cudaErrorIllegalInstruction",
                               "cudaErrorHardwareStackError", "cudaErrorAssert",
                               "cudaErrorECCUncorrectable", "cudaErrorLaunchTimeout",
                               "cudaErrorInvalidPc", "cudaErrorInvalidAddressSpace",
                               "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ASSERT"};
    for (int i = 0; i < COUNT_OF(poisoning); i++)
        expect_status(poisoning[i], STATUS_RUNTIME_ERROR, 1);
}

// A message as a person pastes it: a traceback line before, more text after.
static void expect_pasted(const char *message, const char *name) {
    char pasted[2048];
    snprintf(pasted, sizeof pasted,
             "Traceback (most recent call last):\n  File \"train.py\", line 42, in <module>\n"
             "%s\nCUDA kernel errors might be asynchronously reported.", message);
    const ErrorEntry *e = error_catalog_find(pasted);
    if (!e || strcmp(e->name, name) != 0) {
        fprintf(stderr, "pasted \"%s\" found %s, expected %s\n", message, e ? e->name : "nothing",
                name);
        CHECK(0);
    }
}

static void framework_messages_are_found_in_pasted_text(void) {
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        for (int p = 0; p < ERROR_PHRASES_MAX && e->phrases[p]; p++) {
            char line[1024];
            snprintf(line, sizeof line, "RuntimeError: %s (details follow)", e->phrases[p]);
            const ErrorEntry *found = error_catalog_find(line);
            if (!found || !error_entries_same_error(found, e)) {
                fprintf(stderr, "%s's phrase \"%s\" finds %s\n", e->name, e->phrases[p],
                        found ? found->name : "nothing");
                CHECK(0);
            }
        }
    }
    expect_pasted("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 "
                  "has a total capacity of 79.15 GiB", "cuda-out-of-memory");
    expect_pasted("RuntimeError: CUDA error: out of memory", "cuda-out-of-memory");
    expect_pasted("RuntimeError: CUDA error: invalid configuration argument",
                  "invalid-configuration-argument");
    expect_pasted("RuntimeError: CUDA error: no kernel image is available for execution on the "
                  "device", "no-kernel-image");
    expect_pasted("RuntimeError: CUDA error: device-side assert triggered", "device-side-assert");
    expect_pasted("Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.",
                  "cudnn-version-mismatch");
    expect_pasted("CUDA driver version is insufficient for CUDA runtime version", "driver-too-old");
    expect_pasted("RuntimeError: CUDA error: an illegal memory access was encountered",
                  "illegal-memory-access");
    expect_pasted("RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
                  "cublasCreate(handle)", "cublas-create-failed");
    expect_pasted("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear "
                  "if you passed in a non-contiguous input.", "cudnn-not-supported");
    expect_pasted("AssertionError: Found no NVIDIA driver on your system. Please check",
                  "no-nvidia-driver");
    expect_pasted("W platform_util.cc:256] unable to create StreamExecutor for CUDA:5: failed "
                  "initializing StreamExecutor for CUDA device ordinal 5: Internal: failed call "
                  "to cuDevicePrimaryCtxRetain: CUDA_ERROR_INVALID_DEVICE: invalid device ordinal",
                  "invalid-device-ordinal");
    expect_pasted("RuntimeError: Expected all tensors to be on the same device, but found at "
                  "least two devices, cuda:0 and cpu!", "tensors-on-different-devices");
    expect_pasted("RuntimeError: Expected object of scalar type Float but got Double for "
                  "argument #2 'mat2'", "dtype-mismatch");
    expect_pasted("RuntimeError: NCCL error: unhandled system error, NCCL version 2.7.8",
                  "nccl-unhandled-system-error");
    // Library names and strings inside messages no framework entry claims.
    expect_pasted("E cuda_driver.cc:318] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no "
                  "CUDA-capable device is detected", "CUDA_ERROR_NO_DEVICE");
    expect_pasted("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED_SHAPE",
                  "CUDNN_STATUS_NOT_SUPPORTED_SHAPE");
    expect_pasted("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling "
                  "`cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, "
                  "ldc)`", "CUBLAS_STATUS_EXECUTION_FAILED");
    expect_pasted("RuntimeError: CUDA error: unspecified launch failure", "cudaErrorLaunchFailure");
    expect_pasted("cudaErrorAssert", "cudaErrorAssert");
}

// ---- the routing corpus (tests/unit/explain_corpus.tsv) ---------------------------------

// "\n" and "\t" in a corpus line are a line break and a tab of the pasted text.
static void unescape(const char *in, char *out, size_t size) {
    size_t n = 0;
    for (; *in && n + 1 < size; in++) {
        if (in[0] == '\\' && (in[1] == 'n' || in[1] == 't')) {
            out[n++] = in[1] == 'n' ? '\n' : '\t';
            in++;
        } else if (*in != '\n' && *in != '\r') {
            out[n++] = *in;
        }
    }
    out[n] = '\0';
}

// Routes one corpus text; 1 when it reached `expected`, else says where it went.
static int routes_to(int line, const char *expected, const char *text) {
    ErrorCandidate got[3];
    int count = error_catalog_rank(text, got, 3);
    if (count > 0 && strcmp(got[0].entry->name, expected) == 0) return 1;
    fprintf(stderr, "corpus line %d: expected %s, got %s", line, expected,
            count ? got[0].entry->name : "nothing");
    if (count) fprintf(stderr, " (by \"%s\", specificity %d)", got[0].wording, got[0].specificity);
    for (int i = 1; i < count && i < 3; i++)
        fprintf(stderr, "; then %s (\"%s\", %d)", got[i].entry->name, got[i].wording,
                got[i].specificity);
    fprintf(stderr, "\n    text: %.160s\n", text);
    return 0;
}

static void corpus_routes_every_text(void) {
    const char *path = TRAINER_SOURCE_DIR "/tests/unit/explain_corpus.tsv";
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        CHECK(0);
        return;
    }
    char raw[8192], text[8192];
    int line = 0, total = 0, routed = 0, expected_known = 1;
    while (fgets(raw, sizeof raw, f)) {
        line++;
        char *tab = strchr(raw, '\t');
        if (raw[0] == '#' || !tab) continue;
        *tab = '\0';
        if (!error_catalog_lookup_name(raw)) {
            fprintf(stderr, "corpus line %d: no entry named %s\n", line, raw);
            expected_known = 0;
        }
        unescape(tab + 1, text, sizeof text);
        total++;
        routed += routes_to(line, raw, text);
    }
    fclose(f);
    fprintf(stderr, "corpus: %d of %d texts routed to their expected entry\n", routed, total);
    CHECK(expected_known);
    CHECK(total >= 80);
    CHECK_INT_EQ(routed, total);
}

// An entry's own "How PyTorch / TensorFlow words it" must lead back to it, or to the same
// error told another way. Fields that quote no message ("not raised", "rarely seen") route
// nowhere.
static void every_entry_routes_its_own_wordings(void) {
    int bad = 0;
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        const char *fields[2] = {e->pytorch, e->tensorflow};
        for (int f = 0; f < 2; f++) {
            ErrorCandidate got;
            if (error_catalog_rank(fields[f], &got, 1) == 0) continue;
            if (error_entries_same_error(got.entry, e)) continue;
            fprintf(stderr, "%s's %s wording leads to %s (by \"%s\"): %.120s\n", e->name,
                    f ? "TensorFlow" : "PyTorch", got.entry->name, got.wording, fields[f]);
            bad++;
        }
    }
    CHECK_INT_EQ(bad, 0);
}

// Every framework entry quotes at least one real message that leads back to it.
static void framework_entries_quote_a_message_that_finds_them(void) {
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        if (e->family != ERROR_FAMILY_FRAMEWORK) continue;
        ErrorCandidate a, b;
        int by_pytorch = error_catalog_rank(e->pytorch, &a, 1) > 0 && a.entry == e;
        int by_tensorflow = error_catalog_rank(e->tensorflow, &b, 1) > 0 && b.entry == e;
        if (!by_pytorch && !by_tensorflow) {
            fprintf(stderr, "%s: neither its PyTorch nor its TensorFlow wording finds it\n",
                    e->name);
            CHECK(0);
        }
    }
}

// Advice for anyone (meaning, causes, confirm, fix) names no trainer command or option:
// those go under "With trainer" (with_trainer), so a PyTorch or TensorFlow user is not
// told to run `trainer check MODEL` or pass --resume.
static void advice_is_framework_neutral(void) {
    static const char *const trainer_only[] = {"trainer", "--batch", "--device", "--resume",
                                               "--memory-limit", "--sync-check",
                                               "--checkpoint", "--save"};
    for (int i = 0; i < error_catalog_count(); i++) {
        const ErrorEntry *e = error_catalog_at(i);
        const char *texts[3 + ERROR_CAUSES_MAX] = {e->meaning, e->confirm, e->fix};
        for (int c = 0; c < ERROR_CAUSES_MAX; c++) texts[3 + c] = e->causes[c];
        for (int t = 0; t < 3 + ERROR_CAUSES_MAX; t++)
            for (int w = 0; texts[t] && w < COUNT_OF(trainer_only); w++)
                if (strstr(texts[t], trainer_only[w])) {
                    fprintf(stderr, "%s: \"%s\" in advice meant for everyone: %.100s\n",
                            e->name, trainer_only[w], texts[t]);
                    CHECK(0);
                }
    }
}

// A catch-all prefix loses to the wording that names the cause, and the runner-up is told.
static void the_most_specific_wording_wins(void) {
    ErrorCandidate got[4];
    int count = error_catalog_rank(
        "NCCL error in: ProcessGroupNCCL.cpp:1275, invalid usage, NCCL version 2.14.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000", got, 4);
    CHECK(count >= 1);
    CHECK(count >= 1 && strcmp(got[0].entry->name, "ncclInvalidUsage") == 0);
    CHECK(count >= 1 && strcmp(got[0].wording, "Duplicate GPU detected") == 0);
    // A framework entry that explains the winning library error comes first.
    count = error_catalog_rank("E cuda_dnn.cc:329] Could not create cudnn handle: "
                               "CUDNN_STATUS_INTERNAL_ERROR", got, 4);
    CHECK(count >= 2);
    CHECK(count >= 2 && strcmp(got[0].entry->name, "cudnn-failed-to-initialize") == 0);
    CHECK(count >= 2 && strcmp(got[1].entry->name, "CUDNN_STATUS_INTERNAL_ERROR") == 0);
}

static void codes_and_numbers(void) {
    const ErrorEntry *found[8];
    // 2 is out of memory in the runtime (and its driver twin), and a system error in NCCL.
    int count = error_catalog_search("2", found, 8);
    CHECK_INT_EQ(count, 2);
    CHECK(error_catalog_find("2") == NULL);
    // A runtime error and its driver twin under one number are one candidate.
    CHECK(error_catalog_find("710") == error_catalog_lookup_name("cudaErrorAssert"));
    CHECK(error_catalog_find("cuda:2") == error_catalog_lookup_name("cudaErrorMemoryAllocation"));
    CHECK(error_catalog_find(" driver:101 ") == error_catalog_lookup_name("CUDA_ERROR_INVALID_DEVICE"));
    CHECK(error_catalog_find("nccl:2") == error_catalog_lookup_name("ncclSystemError"));
    // cuDNN 8 numbering and names still work.
    CHECK(error_catalog_find("cudnn:9") == error_catalog_lookup_name("CUDNN_STATUS_NOT_SUPPORTED"));
    CHECK(error_catalog_find("cudnn:3000") == error_catalog_lookup_name("CUDNN_STATUS_NOT_SUPPORTED"));
    CHECK(error_catalog_find("CUDNN_STATUS_ALLOC_FAILED") ==
          error_catalog_lookup_name("CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"));
    CHECK(error_catalog_find("cuda:12345") == NULL);
    CHECK(error_catalog_find("") == NULL);
    CHECK(error_catalog_find("no such error at all") == NULL);
}

static void near_misses_get_a_suggestion(void) {
    const char *s = error_catalog_suggest("cudaErrorMemoryAlocation");
    CHECK(s && strcmp(s, "cudaErrorMemoryAllocation") == 0);
    s = error_catalog_suggest("CUDA_ERROR_MEMORY_ALLOCATION");
    CHECK(s && strcmp(s, "cudaErrorMemoryAllocation") == 0);
    s = error_catalog_suggest("CUDNN_STATUS_NOT_SUPORTED");
    CHECK(s && strcmp(s, "CUDNN_STATUS_NOT_SUPPORTED") == 0);
    CHECK(error_catalog_suggest("banana") == NULL);
    CHECK(error_catalog_suggest("this is a sentence") == NULL);
}

static void machine_facts_say_something(void) {
    ErrorFacts facts;
    error_catalog_machine_facts(NULL, &facts);
    CHECK(facts.count >= 2);  // the driver or build, and CUDA_VISIBLE_DEVICES at least
    for (int i = 0; i < facts.count; i++) CHECK(nonempty(facts.lines[i]));
    error_catalog_machine_facts(error_catalog_lookup_name("dtype-mismatch"), &facts);
    CHECK_INT_EQ(facts.count, 0);
}

// The verdict speaks only for errors about finding a GPU, and then only when this
// machine's facts decide: here, without a driver, they always do.
static void verdict_only_where_the_facts_decide(void) {
    ErrorVerdict v;
    CHECK_INT_EQ(error_catalog_verdict(error_catalog_lookup_name("dtype-mismatch"), &v), 0);
    CHECK_INT_EQ(error_catalog_verdict(error_catalog_lookup_name("cuda-out-of-memory"), &v), 0);
    CHECK_INT_EQ(error_catalog_verdict(NULL, &v), 0);
    FILE *module = fopen("/proc/driver/nvidia/version", "r");
    FILE *wsl = fopen("/dev/dxg", "r");
    if (module || wsl) {
        if (module) fclose(module);
        if (wsl) fclose(wsl);
        return;  // a driver is loaded: whether a verdict comes depends on the GPUs here
    }
    const char *finding[] = {"invalid-device-ordinal", "cudaErrorNoDevice", "gpu-not-registered",
                             "no-nvidia-driver", "driver-too-old", "CUDA_ERROR_INVALID_DEVICE"};
    for (int i = 0; i < COUNT_OF(finding); i++) {
        CHECK_INT_EQ(error_catalog_verdict(error_catalog_lookup_name(finding[i]), &v), 1);
        CHECK_CONTAINS(v.cause, "No NVIDIA driver is loaded on this machine");
        CHECK_INT_EQ(v.next_count, 2);
        CHECK(strcmp(v.next[0], "nvidia-smi") == 0 && strcmp(v.next[1], "trainer doctor") == 0);
    }
}

int main(void) {
    every_entry_is_complete();
    names_and_codes_are_unique();
    every_entry_is_found_by_name_and_code();
    numbers_match_the_headers();
#ifdef CHECK_AGAINST_LIBRARIES
    names_and_strings_match_the_libraries();
#endif
    status_codes_and_poisoning_follow_the_docs();
    framework_messages_are_found_in_pasted_text();
    corpus_routes_every_text();
    every_entry_routes_its_own_wordings();
    framework_entries_quote_a_message_that_finds_them();
    the_most_specific_wording_wins();
    advice_is_framework_neutral();
    codes_and_numbers();
    near_misses_get_a_suggestion();
    machine_facts_say_something();
    verdict_only_where_the_facts_decide();
    return test_exit_code("test_error_catalog");
}
