/*
 * A small pool of POSIX threads that runs one job on every thread and waits for all of them
 * (pp_config.threads; the calling thread is worker 0). The islands of a step are independent
 * (stage_islands.c), so the time step hands them out with an atomic counter; what each
 * island produces is merged afterwards in island order, so the result does not depend on
 * which thread ran which island, nor on how many threads there are.
 */
#include "world_internal.h"

#include <pthread.h>
#include <stdlib.h>

struct pp_thread_pool {
    int threads;                 /* workers including the caller */
    pthread_t *tid;              /* threads - 1 */
    pthread_mutex_t mutex;
    pthread_cond_t start, done;
    unsigned generation;         /* incremented per job */
    int running;                 /* workers still in the current job */
    int quit;
    void (*job)(void *arg, int worker);
    void *arg;
};

typedef struct worker_start {
    pp_thread_pool *pool;
    int worker;
} worker_start;

static void *worker_main(void *p)
{
    worker_start start = *(worker_start *)p;
    free(p);
    pp_thread_pool *pool = start.pool;
    unsigned seen = 0;
    pthread_mutex_lock(&pool->mutex);
    for (;;) {
        while (!pool->quit && pool->generation == seen) pthread_cond_wait(&pool->start, &pool->mutex);
        if (pool->quit) break;
        seen = pool->generation;
        void (*job)(void *, int) = pool->job;
        void *arg = pool->arg;
        pthread_mutex_unlock(&pool->mutex);
        job(arg, start.worker);
        pthread_mutex_lock(&pool->mutex);
        if (--pool->running == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

pp_status pp_thread_pool_create(int threads, pp_thread_pool **out)
{
    *out = NULL;
    pp_thread_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return PP_ERR_NO_MEMORY;
    pool->threads = 1;
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
    pool->quit = 1;
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->mutex);
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
    pthread_mutex_lock(&pool->mutex);
    pool->job = job;
    pool->arg = arg;
    pool->running = pool->threads - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->start);
    pthread_mutex_unlock(&pool->mutex);
    job(arg, 0);
    pthread_mutex_lock(&pool->mutex);
    while (pool->running > 0) pthread_cond_wait(&pool->done, &pool->mutex);
    pthread_mutex_unlock(&pool->mutex);
}
