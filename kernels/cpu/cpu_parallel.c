#include "kernels/cpu/cpu_parallel.h"

#include <cblas.h>
#include <pthread.h>

// Work below this many floats touched runs on the calling thread: waking a worker and
// waiting for it costs ~10 us, the time to stream ~100k floats.
#define PARALLEL_MIN_WORK ((size_t)1 << 17)
#define PARALLEL_MAX_THREADS 16

typedef struct Pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    pthread_mutex_t caller;   // one loop at a time
    int started;              // workers running
    unsigned long generation; // bumped once per loop
    int pending;              // workers yet to finish this loop
    CpuRangeFn fn;
    void *arg;
    size_t n;
    int parts;                // ranges in this loop; part 0 is the caller's
} Pool;

static Pool pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER,
                    .done = PTHREAD_COND_INITIALIZER, .caller = PTHREAD_MUTEX_INITIALIZER};

static void run_part(const Pool *p, int part) {
    size_t begin = p->n * (size_t)part / (size_t)p->parts;
    size_t end = p->n * (size_t)(part + 1) / (size_t)p->parts;
    if (begin < end) p->fn(p->arg, begin, end);
}

static void *worker(void *index_ptr) {
    int index = (int)(size_t)index_ptr;  // 1-based: part 0 is the caller's
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (pool.generation == seen) pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.generation;
        if (index >= pool.parts) continue;  // this loop needs fewer threads
        pthread_mutex_unlock(&pool.lock);
        run_part(&pool, index);
        pthread_mutex_lock(&pool.lock);
        if (--pool.pending == 0) pthread_cond_signal(&pool.done);
    }
    return NULL;
}

// Starts workers up to `threads` - 1; returns how many threads (caller included) exist.
static int ensure_workers(int threads) {
    while (pool.started + 1 < threads && pool.started + 1 < PARALLEL_MAX_THREADS) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &attr, worker, (void *)(size_t)(pool.started + 1));
        pthread_attr_destroy(&attr);
        if (rc != 0) break;  // run with the threads we have
        pool.started++;
    }
    return pool.started + 1;
}

void cpu_parallel_for(size_t n, size_t cost_per_item, CpuRangeFn fn, void *arg) {
    int threads = openblas_get_num_threads();
    if (threads > PARALLEL_MAX_THREADS) threads = PARALLEL_MAX_THREADS;
    if ((size_t)threads > n) threads = (int)n;
    if (threads <= 1 || n * (cost_per_item ? cost_per_item : 1) < PARALLEL_MIN_WORK) {
        if (n) fn(arg, 0, n);
        return;
    }
    pthread_mutex_lock(&pool.caller);
    pthread_mutex_lock(&pool.lock);
    threads = ensure_workers(threads);
    pool.fn = fn;
    pool.arg = arg;
    pool.n = n;
    pool.parts = threads;
    pool.pending = threads - 1;
    pool.generation++;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    run_part(&pool, 0);
    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool.caller);
}
