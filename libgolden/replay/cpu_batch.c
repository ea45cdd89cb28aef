/* The cpu backend's optional version 2 calls of issue 33: step_batch (several lanes advanced in
 * one call, one after another in the order given, through the same calls as prefill and
 * decode_at, so the results are bit-identical to one call at a time) and cancel (from any
 * thread: a flag the running forward looks at between layers, the lane's lock, a reset).
 * docs/npu-replay.md, "Optional calls". */
#include <stdio.h>
#include <string.h>

#include "replay/cpu.h"

int lg_cpu_lanes_init(cpu_backend *b)
{
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) != 0)
        return 1;
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    int i = 0;
    for (; i < b->n_lanes; i++) {
        if (pthread_mutex_init(&b->lanes[i].lock, &a) != 0)
            break;
        atomic_init(&b->lanes[i].cancel, 0);
    }
    pthread_mutexattr_destroy(&a);
    if (i == b->n_lanes)
        return 0;
    while (i-- > 0)
        pthread_mutex_destroy(&b->lanes[i].lock);
    return 1;
}

void lg_cpu_lanes_fini(cpu_backend *b)
{
    for (int i = 0; i < b->n_lanes; i++)
        pthread_mutex_destroy(&b->lanes[i].lock);
}

static bool lane_ok(const cpu_backend *b, int lane) { return lane >= 0 && lane < b->n_lanes; }

void lg_cpu_lock(cpu_backend *b, int lane)
{
    if (lane < 0) {
        for (int i = 0; i < b->n_lanes; i++)
            pthread_mutex_lock(&b->lanes[i].lock);
    } else if (lane_ok(b, lane)) {
        pthread_mutex_lock(&b->lanes[lane].lock);
    }
}

void lg_cpu_unlock(cpu_backend *b, int lane)
{
    if (lane < 0) {
        for (int i = b->n_lanes; i-- > 0;)
            pthread_mutex_unlock(&b->lanes[i].lock);
    } else if (lane_ok(b, lane)) {
        pthread_mutex_unlock(&b->lanes[lane].lock);
    }
}

bool lg_cpu_cancelled(const cpu_backend *b, int lane)
{
    return lane_ok(b, lane) && atomic_load(&b->lanes[lane].cancel) != 0;
}

/* The lane's lock is held. A cancel that came during the call wins, even over a call that had
 * already done its work: the lane is reset, the flag cleared. */
int lg_cpu_lane_end(cpu_backend *b, int lane, int rc, char *msg, size_t n)
{
    if (!lg_cpu_cancelled(b, lane))
        return rc;
    char rmsg[256] = "";
    const golden_backend_vtable *vt = &lg_cpu_backend_v2()->base;
    int r = vt->reset(b, lane, rmsg, sizeof rmsg); /* the lock is recursive */
    atomic_store(&b->lanes[lane].cancel, 0);
    if (r != 0)
        return snprintf(msg, n, "lane %d: call cancelled, and its reset failed: %s", lane, rmsg),
               r;
    snprintf(msg, n, "lane %d: call cancelled; the lane is reset", lane);
    return GOLDEN_BK_E_CANCELLED;
}

int lg_cpu_cancel(void *self, int lane, char *msg, size_t n)
{
    cpu_backend *b = self;
    if (!lane_ok(b, lane))
        return snprintf(msg, n, "lane %d does not exist (the backend has %d)", lane, b->n_lanes),
               GOLDEN_BK_E_INVALID;
    cpu_lane *L = &b->lanes[lane];
    atomic_store(&L->cancel, 1); /* a running call sees it at its next layer */
    pthread_mutex_lock(&L->lock); /* ... and ends soon: then the lane is idle */
    int rc = 0;
    if (atomic_load(&L->cancel)) { /* an idle lane, or a call that ended before it looked */
        const golden_backend_vtable *vt = &lg_cpu_backend_v2()->base;
        rc = vt->reset(b, lane, msg, n);
        atomic_store(&L->cancel, 0);
    }
    pthread_mutex_unlock(&L->lock);
    return rc;
}

int lg_cpu_step_batch(void *self, golden_backend_step *steps, size_t n_steps, char *msg, size_t n)
{
    cpu_backend *b = self;
    const golden_backend_vtable_v2 *vt = lg_cpu_backend_v2();
    if (n_steps == 0)
        return snprintf(msg, n, "step_batch of no steps"), GOLDEN_BK_E_INVALID;
    for (size_t i = 0; i < n_steps; i++) {
        const golden_backend_step *s = &steps[i];
        if (!lane_ok(b, s->lane))
            return snprintf(msg, n, "step %zu: lane %d does not exist (the backend has %d)", i,
                            s->lane, b->n_lanes), GOLDEN_BK_E_INVALID;
        if ((s->kind != GOLDEN_BK_STEP_PREFILL && s->kind != GOLDEN_BK_STEP_DECODE) ||
            !s->tokens || s->n == 0 || (s->kind == GOLDEN_BK_STEP_DECODE && s->n != 1))
            return snprintf(msg, n, "step %zu (lane %d): kind %d with %zu tokens is not a "
                            "prefill or a one-token decode", i, s->lane, s->kind, s->n),
                   GOLDEN_BK_E_INVALID;
        for (size_t j = 0; j < i; j++)
            if (steps[j].lane == s->lane)
                return snprintf(msg, n, "lane %d is in the batch twice", s->lane),
                       GOLDEN_BK_E_INVALID;
    }
    bool said = false;
    for (size_t i = 0; i < n_steps; i++) {
        golden_backend_step *s = &steps[i];
        char one[512] = "";
        s->written = -1;
        if (s->kind == GOLDEN_BK_STEP_PREFILL)
            s->status = vt->prefill_keep(b, s->lane, s->pos, s->tokens, s->n, NULL, 0, one,
                                         sizeof one);
        else
            s->status = vt->decode_at(b, s->lane, s->pos, s->tokens[0], &s->written, one,
                                      sizeof one);
        if (s->status != 0 && !said) { /* the first failed step's message is the call's */
            snprintf(msg, n, "lane %d: %s", s->lane, one);
            said = true;
        }
    }
    return 0;
}
