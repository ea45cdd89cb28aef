/* lg_parallel_for: workers take the next item index from a shared counter under a mutex
 * (items are coarse: a tensor, a chunk, a file), so no work queue is needed. */
#include "util/pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

typedef struct {
    pthread_mutex_t mu;
    size_t next, n;
    bool failed;
    size_t failed_item;
    golden_error first;
    golden_task_fn fn;
    void *ctx;
} pool_job;

typedef struct {
    pool_job *job;
    int worker;
} pool_worker;

static void *run_worker(void *arg)
{
    pool_worker *w = arg;
    pool_job *job = w->job;
    golden_error err = {0};
    for (;;) {
        pthread_mutex_lock(&job->mu);
        size_t item = job->next;
        bool stop = job->failed || item >= job->n;
        if (!stop)
            job->next++;
        pthread_mutex_unlock(&job->mu);
        if (stop)
            break;
        golden_error_clear(&err);
        if (job->fn(job->ctx, item, w->worker, &err) != 0) {
            pthread_mutex_lock(&job->mu);
            if (!job->failed || item < job->failed_item) {
                job->failed = true;
                job->failed_item = item;
                job->first = err;
            }
            pthread_mutex_unlock(&job->mu);
        }
    }
    return NULL;
}

int lg_parallel_for(size_t n, int threads, golden_task_fn fn, void *ctx, golden_error *err)
{
    if (threads < 1)
        threads = 1;
    if (threads > GOLDEN_POOL_MAX)
        threads = GOLDEN_POOL_MAX;
    if ((size_t)threads > n)
        threads = n ? (int)n : 1;
    pool_job job = {.n = n, .fn = fn, .ctx = ctx};
    pthread_mutex_init(&job.mu, NULL);
    pthread_t tid[GOLDEN_POOL_MAX];
    pool_worker workers[GOLDEN_POOL_MAX];
    /* Recursive work (validating deep documents) must reach as deep in a worker as in the
     * main thread: address space only, pages are touched as the stack grows. */
    pthread_attr_t attr;
    pthread_attr_t *attrp = NULL;
    if (threads > 1 && pthread_attr_init(&attr) == 0) {
        attrp = &attr;
        pthread_attr_setstacksize(&attr, GOLDEN_POOL_STACK);
    }
    int started = 0;
    for (int k = 1; k < threads; k++) {
        workers[k] = (pool_worker){&job, k};
        if (pthread_create(&tid[started], attrp, run_worker, &workers[k]) != 0)
            break;
        started++;
    }
    if (attrp)
        pthread_attr_destroy(attrp);
    workers[0] = (pool_worker){&job, 0};
    run_worker(&workers[0]);
    for (int k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    pthread_mutex_destroy(&job.mu);
    if (job.failed) {
        if (err)
            *err = job.first;
        return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

int lg_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)(n > GOLDEN_POOL_MAX ? GOLDEN_POOL_MAX : n) : 1;
}
