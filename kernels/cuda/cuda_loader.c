// The trainer's side of the CUDA backend module (cuda_entries.h says why there is one):
// each entry point opens trainer_cuda.so the first time one is called and forwards to it.
// When it cannot be opened, or this is a build without CUDA (no TRAINER_CUDA_LOADER), each
// gives the absent answer the list names, with the reason from cuda_backend_unavailable():
// which library is missing, where the module was looked for, or that CUDA was not built.
#define _DEFAULT_SOURCE  // readlink, snprintf
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/cuda/cuda_entries.h"

#ifdef TRAINER_CUDA_LOADER
#define BUILT_WITH_CUDA 1
#else
#define BUILT_WITH_CUDA 0
#endif

#ifndef TRAINER_CUDA_MODULE_BUILT
#define TRAINER_CUDA_MODULE_BUILT ""  // CMake passes where the build writes trainer_cuda.so
#endif
// Where `cmake --install` puts the module, from the folder of the installed binary:
// bin/../lib/trainer (GNUInstallDirs), so an installed tree works wherever it is moved.
#ifndef TRAINER_CUDA_MODULE_INSTALLED
#define TRAINER_CUDA_MODULE_INSTALLED "../lib/trainer"
#endif

#define MODULE_FILE "trainer_cuda.so"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const CudaModule *module;  // NULL until loaded, and when it did not load
static char why_not[1024];
static char module_path[PATH_MAX];  // the file opened, or tried last
static char what_to_do[512];

static int file_exists(const char *path) { return path[0] && access(path, F_OK) == 0; }

// The folder of the running program ("" when /proc is not mounted).
static void program_folder(char *out, size_t size) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    out[0] = '\0';
    if (n <= 0) return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash) *slash = '\0';
    snprintf(out, size, "%s", self);
}

// 1: the file starts with the ELF magic; 0: it is a readable regular file that does not
// (dlopen's "invalid ELF header" or "file too short": no library at all, and ldd has nothing
// to say about it); -1: it cannot be read as a file (a folder, no permission), which
// dlerror's own words then say.
static int elf_magic(const char *path) {
    struct stat info;
    if (stat(path, &info) != 0 || !S_ISREG(info.st_mode)) return -1;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char magic[4] = {0};
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return n == sizeof magic && memcmp(magic, "\177ELF", sizeof magic) == 0;
}

static void open_module(const char *path, int asked) {
    snprintf(module_path, sizeof module_path, "%s", path);
    // RTLD_NOW: a missing symbol is found here, where it can be reported, rather than at
    // some later call. RTLD_LOCAL: the module's copies of core stay out of our namespace.
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(why_not, sizeof why_not, "the CUDA backend did not load: %s", dlerror());
        int elf = elf_magic(path);
        if (elf == 0 && asked)
            snprintf(what_to_do, sizeof what_to_do, "%.300s is not a shared library (no ELF "
                     "header): point TRAINER_CUDA_MODULE at the " MODULE_FILE " built beside "
                     "the trainer binary, or unset it; --device cpu trains without it", path);
        else if (elf == 0)
            snprintf(what_to_do, sizeof what_to_do, "%.300s is not a shared library (no ELF "
                     "header): rebuild (scripts/build.sh) to write it again; --device cpu "
                     "trains without it", path);
        else if (elf < 0 && asked)
            snprintf(what_to_do, sizeof what_to_do, "point TRAINER_CUDA_MODULE at the "
                     MODULE_FILE " file itself, one you can read, or unset it; --device cpu "
                     "trains without it");
        else
            snprintf(what_to_do, sizeof what_to_do,
                     "`ldd %.300s` names what is missing: install it, or add the folder holding "
                     "it to LD_LIBRARY_PATH; --device cpu trains without it", path);
        return;
    }
    CudaModuleFunction table = (CudaModuleFunction)dlsym(handle, CUDA_MODULE_SYMBOL);
    const CudaModule *found = table ? table() : NULL;
    if (found && found->layout == cuda_module_layout() &&
        strcmp(found->version, TRAINER_VERSION) == 0) {
        module = found;
        return;
    }
    if (!found)
        snprintf(why_not, sizeof why_not, "%.900s is not a trainer CUDA backend: it has no "
                 CUDA_MODULE_SYMBOL, path);
    else
        snprintf(why_not, sizeof why_not, "the CUDA backend %.800s is from another build "
                 "(trainer %.40s, layout %zu), not this trainer %s's (layout %zu)", path,
                 found->version, found->layout, TRAINER_VERSION, cuda_module_layout());
    snprintf(what_to_do, sizeof what_to_do,
             "rebuild (scripts/build.sh) and keep the " MODULE_FILE " it writes beside the "
             "trainer binary, or set TRAINER_CUDA_MODULE to that file");
    dlclose(handle);
}

// TRAINER_CUDA_MODULE when set, and nothing else; else beside the program, where the build
// puts it; else where an install puts it (TRAINER_CUDA_MODULE_INSTALLED, from the program's
// folder); else where this build wrote it, for the programs in build/tests.
static void load_module(void) {
    if (!BUILT_WITH_CUDA) {
        snprintf(why_not, sizeof why_not, "this trainer was built without CUDA support");
        snprintf(what_to_do, sizeof what_to_do, "install the CUDA toolkit, cuDNN and NCCL and "
                 "rebuild (cmake -DTRAINER_CUDA=ON), or use --device cpu");
        return;
    }
    const char *asked = getenv("TRAINER_CUDA_MODULE");
    if (asked && asked[0]) {
        if (file_exists(asked)) {
            open_module(asked, 1);
            return;
        }
        snprintf(why_not, sizeof why_not, "the CUDA backend TRAINER_CUDA_MODULE names, %.900s, "
                 "does not exist", asked);
        snprintf(what_to_do, sizeof what_to_do, "point TRAINER_CUDA_MODULE at a " MODULE_FILE
                 ", or unset it to use the one beside the trainer binary");
        return;
    }
    char folder[PATH_MAX], beside[PATH_MAX + sizeof MODULE_FILE + 1];
    char installed[PATH_MAX + sizeof TRAINER_CUDA_MODULE_INSTALLED + sizeof MODULE_FILE + 2];
    program_folder(folder, sizeof folder);
    snprintf(beside, sizeof beside, "%s/" MODULE_FILE, folder);
    snprintf(installed, sizeof installed, "%s/" TRAINER_CUDA_MODULE_INSTALLED "/" MODULE_FILE,
             folder);
    const char *found = file_exists(beside)                      ? beside
                        : file_exists(installed)                 ? installed
                        : file_exists(TRAINER_CUDA_MODULE_BUILT) ? TRAINER_CUDA_MODULE_BUILT
                                                                 : NULL;
    if (found) {
        open_module(found, 0);
        return;
    }
    snprintf(why_not, sizeof why_not, "the CUDA backend " MODULE_FILE " is neither beside "
             "this program (in %.300s), in %.300s/" TRAINER_CUDA_MODULE_INSTALLED ", nor where "
             "the build wrote it (%.300s)", folder, folder, TRAINER_CUDA_MODULE_BUILT);
    snprintf(what_to_do, sizeof what_to_do, "install the trainer-cuda package (or `cmake "
             "--install` a CUDA build), or set TRAINER_CUDA_MODULE to the path of "
             MODULE_FILE "; --device cpu trains without it");
}

static const CudaModule *loaded_module(void) {
    pthread_once(&load_once, load_module);
    return module;
}

const char *cuda_backend_unavailable(const char **hint) {
    const CudaModule *loaded = loaded_module();
    if (hint) *hint = loaded ? "" : what_to_do;
    return loaded ? NULL : why_not;
}

const char *cuda_backend_module_path(void) {
    loaded_module();
    return module_path[0] ? module_path : NULL;
}

// ---- the absent answers (cuda_entries.h) ----

// Fails st with STATUS_NO_DEVICE, cuda_backend_unavailable()'s reason and its hint.
static int cuda_unavailable(Status *st) {
    const char *hint = "";
    const char *why = cuda_backend_unavailable(&hint);
    status_fail(st, STATUS_NO_DEVICE, "%s", why ? why : "the CUDA backend is not available");
    if (hint[0]) status_hint(st, "%s", hint);
    return STATUS_NO_DEVICE;
}

static void absent_versions(CudaVersions *out) {
    memset(out, 0, sizeof *out);
    out->built_with_cuda = BUILT_WITH_CUDA;
}

// The doctor's report still records what the machine has (an NVIDIA kernel module, the
// environment), so a CPU-only binary on a GPU machine can tell its user to rebuild rather
// than to install a driver, and a CUDA build whose trainer_cuda.so did not load can name
// the library that is missing.
static int absent_doctor_report(DoctorReport *r) {
    doctor_collect_environment(r);
    r->built_with_cuda = BUILT_WITH_CUDA;
    const char *hint = "";
    const char *why = cuda_backend_unavailable(&hint);
    snprintf(r->backend_error, sizeof r->backend_error, "%s", why);
    snprintf(r->backend_hint, sizeof r->backend_hint, "%s", hint);
    // The start of the reason: the field is shorter than the loader's message can be.
    snprintf(r->device_count_error, sizeof r->device_count_error, "%.*s",
             (int)sizeof r->device_count_error - 1, why);
    return 0;
}

// No lab scenario can reach a GPU, and each says so.
static int lab_unavailable(LabOutcome *out, Status *st) {
    memset(out, 0, sizeof *out);
    return cuda_unavailable(st);
}

#define CUDA_ENTRY(type, name, parameters, arguments, absent)                                \
    type name parameters {                                                                   \
        const CudaModule *loaded = loaded_module();                                          \
        return loaded ? loaded->name arguments : absent;                                     \
    }
#define CUDA_ENTRY_VOID(name, parameters, arguments, absent)                                 \
    void name parameters {                                                                   \
        const CudaModule *loaded = loaded_module();                                          \
        if (loaded)                                                                          \
            loaded->name arguments;                                                          \
        else                                                                                 \
            absent;                                                                          \
    }
CUDA_ENTRIES
