#define _POSIX_C_SOURCE 200809L  // pthread_sigmask
#include "data/batch_prefetch.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

void replica_share(int n, int count, int r, int *offset, int *share) {
    int base = n / count, extra = n % count;
    *share = base + (r < extra ? 1 : 0);
    *offset = r * base + (r < extra ? r : extra);
}

int schedule_next(const LoadSchedule *s, LoadCursor *cursor, const int32_t **indices,
                  int *count) {
    for (;;) {
        int n = s->samples - cursor->step_start;
        if (n > s->batch) n = s->batch;
        if (n <= 0) return 0;
        int offset, share;
        replica_share(n, s->replicas, s->replica, &offset, &share);
        if (cursor->pass_start < share) {
            int left = share - cursor->pass_start;
            *count = left < s->micro_batch ? left : s->micro_batch;
            *indices = s->order + cursor->step_start + offset + cursor->pass_start;
            cursor->pass_start += *count;
            return 1;
        }
        // This replica's share of the step is loaded (or empty: fewer samples than replicas).
        cursor->step_start += n;
        cursor->pass_start = 0;
    }
}

// ---- filling a buffer ----

// Waits until the device has copied out what the buffer held before, then gathers the
// load into it as the synchronous path always did (dataset_gather), so the floats and
// their order are the same whether or not a thread prepared them.
static int fill_load(Prefetcher *p, StagedLoad *load, const int32_t *indices, int count,
                     Status *st) {
    TRY(p->backend->pinned_wait(p->backend, load->pinned, st));
    TRY(dataset_gather(p->dataset, &p->transform, indices, count, load->images, load->labels,
                       st));
    load->first_bad = -1;
    for (int k = 0; k < count && load->first_bad < 0; k++)
        if (load->labels[k] >= p->classes) load->first_bad = k;
    load->indices = indices;
    load->count = count;
    return 0;
}

static int same_load(const StagedLoad *load, const int32_t *indices, int count) {
    return load->count == count &&
           (load->indices == indices ||
            memcmp(load->indices, indices, (size_t)count * sizeof *indices) == 0);
}

// ---- the thread ----

// Fills the buffers in turn, each once the loader has given it back, until the schedule
// ends, the loader says stop, or the backend fails.
static void *prefetch_main(void *arg) {
    Prefetcher *p = arg;
    Status st;
    status_clear(&st);
    int failed = 0;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        StagedLoad *load = &p->loads[p->fill];
        while (!p->stop && load->ready) pthread_cond_wait(&p->changed, &p->lock);
        int stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        const int32_t *indices;
        int count;
        if (stop || !schedule_next(&p->schedule, &p->cursor, &indices, &count)) break;
        failed = fill_load(p, load, indices, count, &st) != 0;
        if (failed) break;
        pthread_mutex_lock(&p->lock);
        load->ready = 1;
        p->fill ^= 1;
        pthread_cond_broadcast(&p->changed);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_lock(&p->lock);
    p->done = 1;
    p->failed = failed;
    if (failed) p->failure = st;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void prefetch_stop(Prefetcher *p) {
    if (!p->running) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    p->running = 0;
}

// With every signal blocked, so that Ctrl-C still reaches the thread that set up its
// handler and checks the flag (tools/cmd_train.c), as before there was a second thread.
static int start_thread(Prefetcher *p, Status *st) {
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    int err = pthread_create(&p->thread, NULL, prefetch_main, p);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (err)
        return status_fail(st, STATUS_RUNTIME_ERROR, "cannot start the thread that prepares "
                           "host-staged batches: %s", strerror(err));
    p->running = 1;
    return 0;
}

// ---- the loader's side ----

int prefetch_open(Prefetcher *p, const Backend *b, const Dataset *ds, int capacity, int classes,
                  Status *st) {
    memset(p, 0, sizeof *p);
    p->backend = b;
    p->dataset = ds;
    p->capacity = capacity;
    p->classes = classes;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->changed, NULL);
    if (!b->pinned_alloc || !b->pinned_free || !b->pinned_fence || !b->pinned_wait)
        return status_fail(st, STATUS_RUNTIME_ERROR, "the %s backend has no pinned host "
                           "buffers to stage batches through", b->name);
    size_t values = (size_t)capacity * dataset_sample_size(ds);
    for (int i = 0; i < 2; i++) {
        StagedLoad *load = &p->loads[i];
        TRY(b->pinned_alloc(b, values * sizeof(float) + (size_t)capacity * sizeof(int32_t),
                            &load->pinned, st));
        load->images = load->pinned;
        load->labels = (int32_t *)(load->images + values);
    }
    return 0;
}

void prefetch_close(Prefetcher *p) {
    if (!p->backend) return;
    prefetch_stop(p);
    for (int i = 0; i < 2; i++)
        if (p->loads[i].pinned) p->backend->pinned_free(p->backend, p->loads[i].pinned);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->lock);
    memset(p, 0, sizeof *p);
}

int prefetch_start(Prefetcher *p, const LoadSchedule *schedule, LoadCursor from, Status *st) {
    prefetch_stop(p);
    if (schedule->micro_batch > p->capacity || schedule->micro_batch < 1)
        return 0;  // loads this size do not fit the buffers: prefetch_take gathers them itself
    for (int i = 0; i < 2; i++) p->loads[i].ready = 0;
    p->fill = p->take;
    p->stop = p->done = p->failed = 0;
    p->schedule = *schedule;
    p->cursor = from;
    return start_thread(p, st);
}

int prefetch_take(Prefetcher *p, const int32_t *indices, int count, StagedLoad **load,
                  Status *st) {
    *load = NULL;
    if (count > p->capacity)
        return status_fail(st, STATUS_RUNTIME_ERROR, "a load of %d samples does not fit the "
                           "staging buffers of %d", count, p->capacity);
    if (p->running) {
        pthread_mutex_lock(&p->lock);
        StagedLoad *next = &p->loads[p->take];
        while (!next->ready && !p->done) pthread_cond_wait(&p->changed, &p->lock);
        int ready = next->ready, failed = !ready && p->failed;
        pthread_mutex_unlock(&p->lock);
        if (ready && same_load(next, indices, count)) {
            *load = next;
            return 0;
        }
        prefetch_stop(p);
        if (failed) {
            *st = p->failure;
            return st->code;
        }
    }
    StagedLoad *now = &p->loads[p->take];
    TRY(fill_load(p, now, indices, count, st));
    *load = now;
    return 0;
}

int prefetch_give_back(Prefetcher *p, StagedLoad *load, Status *st) {
    int rc = p->backend->pinned_fence(p->backend, load->pinned, st);
    pthread_mutex_lock(&p->lock);
    load->ready = 0;
    p->take ^= 1;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return rc;
}
