/*
 * A small pool of POSIX threads that runs one job on every thread and waits for all of them
 * (pp_config.threads; the calling thread is worker 0). The islands of a step are independent
 * (stage_islands.c), so each worker takes a share of them (world.c run_island_job); what each
 * island produces is merged afterwards in island order, so the result does not depend on
 * which thread ran which island, nor on how many threads there are.
 */
#include "world_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/*
 * Waiting. A step posts two jobs (constraints, then time steps: world.c run_jobs) with a
 * serial stretch of the caller before each. A thread that waits first spins (reading the
 * counter it waits on, with the CPU's pause hint) for at most PP_POOL_SPIN_SECONDS of wall
 * clock, and only then sleeps on the condition variable. The caller's wait for the last
 * worker is the step's critical path, and is usually shorter than an island (the imbalance);
 * sleeping there cost a futex wake-up and a reschedule per job. The job is published by
 * an atomic counter, and the condition variables are signalled after the mutex is released
 * and only when a thread sleeps on them: a worker woken while the caller still held the mutex
 * blocked on it at once and needed a second wake-up (perf on islands100, 2 threads:
 * __lll_lock_wake on the caller's path). Measured: docs/performance.md "Threads".
 */
#define PP_POOL_SPIN_SECONDS 50e-6

struct pp_thread_pool {
    int threads;                 /* workers including the caller */
    pthread_t *tid;              /* threads - 1 */
    pthread_mutex_t mutex;
    pthread_cond_t start, done;
    atomic_uint generation;      /* incremented per job (release: job and arg are set) */
    atomic_int running;          /* workers still in the current job */
    atomic_int quit;
    int sleepers;                /* workers asleep on start (under mutex) */
    int caller_asleep;           /* the caller asleep on done (under mutex) */
    void (*job)(void *arg, int worker);
    void *arg;
};

typedef struct worker_start {
    pp_thread_pool *pool;
    int worker;
} worker_start;

static inline void cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

/* Spin until the pool's generation differs from seen or quit is set, for at most
 * PP_POOL_SPIN_SECONDS; 1 when it did. */
static int spin_for_job(pp_thread_pool *pool, unsigned seen)
{
    double until = 0.0;
    for (int i = 0;; ++i) {
        if (atomic_load_explicit(&pool->generation, memory_order_acquire) != seen ||
            atomic_load_explicit(&pool->quit, memory_order_relaxed))
            return 1;
        if ((i & 63) == 0) {
            double now = pp_now_seconds();
            if (i == 0) until = now + PP_POOL_SPIN_SECONDS;
            else if (now > until) return 0;
        }
        cpu_relax();
    }
}

/* Spin until no worker is running the job, for at most PP_POOL_SPIN_SECONDS; 1 when so. */
static int spin_for_done(pp_thread_pool *pool)
{
    double until = 0.0;
    for (int i = 0;; ++i) {
        if (atomic_load_explicit(&pool->running, memory_order_acquire) == 0) return 1;
        if ((i & 63) == 0) {
            double now = pp_now_seconds();
            if (i == 0) until = now + PP_POOL_SPIN_SECONDS;
            else if (now > until) return 0;
        }
        cpu_relax();
    }
}

static void *worker_main(void *p)
{
    worker_start start = *(worker_start *)p;
    free(p);
    pp_thread_pool *pool = start.pool;
    unsigned seen = 0;
    for (;;) {
        if (!spin_for_job(pool, seen)) {
            pthread_mutex_lock(&pool->mutex);
            while (!atomic_load_explicit(&pool->quit, memory_order_relaxed) &&
                   atomic_load_explicit(&pool->generation, memory_order_acquire) == seen) {
                pool->sleepers++;
                pthread_cond_wait(&pool->start, &pool->mutex);
                pool->sleepers--;
            }
            pthread_mutex_unlock(&pool->mutex);
        }
        if (atomic_load_explicit(&pool->quit, memory_order_relaxed)) break;
        seen = atomic_load_explicit(&pool->generation, memory_order_acquire);
        pool->job(pool->arg, start.worker);
        if (atomic_fetch_sub_explicit(&pool->running, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool->mutex);
            int wake = pool->caller_asleep;
            pthread_mutex_unlock(&pool->mutex);
            if (wake) pthread_cond_signal(&pool->done);
        }
    }
    return NULL;
}

pp_status pp_thread_pool_create(int threads, pp_thread_pool **out)
{
    *out = NULL;
    pp_thread_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return PP_ERR_NO_MEMORY;
    pool->threads = 1;
    atomic_init(&pool->generation, 0u);
    atomic_init(&pool->running, 0);
    atomic_init(&pool->quit, 0);
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->start, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->tid = calloc((size_t)(threads > 1 ? threads - 1 : 1), sizeof *pool->tid);
    if (!pool->tid) {
        pp_thread_pool_destroy(pool);
        return PP_ERR_NO_MEMORY;
    }
    for (int i = 1; i < threads; ++i) {
        worker_start *start = malloc(sizeof *start);
        if (!start) break;
        start->pool = pool;
        start->worker = i;
        if (pthread_create(&pool->tid[i - 1], NULL, worker_main, start) != 0) {
            free(start);
            break;
        }
        pool->threads = i + 1;
    }
    if (pool->threads < threads) {
        pp_log(PP_LOG_ERROR, "pp_config.threads = %d: only %d threads could be started",
               threads, pool->threads);
        pp_thread_pool_destroy(pool);
        return PP_ERR_NO_MEMORY;
    }
    *out = pool;
    return PP_OK;
}

void pp_thread_pool_destroy(pp_thread_pool *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->mutex);
    atomic_store(&pool->quit, 1);
    pthread_mutex_unlock(&pool->mutex);
    pthread_cond_broadcast(&pool->start);
    for (int i = 1; i < pool->threads; ++i) pthread_join(pool->tid[i - 1], NULL);
    pthread_mutex_destroy(&pool->mutex);
    pthread_cond_destroy(&pool->start);
    pthread_cond_destroy(&pool->done);
    free(pool->tid);
    free(pool);
}

int pp_thread_pool_size(const pp_thread_pool *pool)
{
    return pool ? pool->threads : 1;
}

void pp_thread_pool_run(pp_thread_pool *pool, void (*job)(void *arg, int worker), void *arg)
{
    if (!pool || pool->threads == 1) {
        job(arg, 0);
        return;
    }
    pool->job = job; /* no worker reads them until the generation moves (every one is done) */
    pool->arg = arg;
    atomic_store_explicit(&pool->running, pool->threads - 1, memory_order_relaxed);
    pthread_mutex_lock(&pool->mutex);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
    int wake = pool->sleepers > 0;
    pthread_mutex_unlock(&pool->mutex);
    if (wake) pthread_cond_broadcast(&pool->start);
    job(arg, 0);
    if (spin_for_done(pool)) return;
    pthread_mutex_lock(&pool->mutex);
    while (atomic_load_explicit(&pool->running, memory_order_acquire) > 0) {
        pool->caller_asleep = 1;
        pthread_cond_wait(&pool->done, &pool->mutex);
    }
    pool->caller_asleep = 0;
    pthread_mutex_unlock(&pool->mutex);
}
