/* A second runtime backend for npu-replay's tests, built as a shared library and loaded with
 * dlopen: a counting "model" whose greedy next token is (7 * token + position + 3) mod vocab.
 *
 * It is also the hostile plug-in of tests/e2e/npu-replay-hostile.sh: `--backend-opt
 * hostile=WHAT@CALL[:N]` makes the N-th (default first) call named CALL (open, info, set_hooks,
 * prefill, decode, logits, truncate, reset, length) do WHAT: segv, exit0 (exit(0)), exit3
 * (_exit(3)), abort, hang, overflow (writes 8 KiB into a msg of msg_len bytes), badutf8 (fails
 * with a message of invalid UTF-8 and terminal escapes), nan (logits: every entry NaN),
 * hugevocab (info: a vocabulary of 10^9), badtap (prefill/decode: more tap rows than
 * positions), badmark (a stage mark from before the call), print (writes a line to stdout
 * and one to stderr, then goes on as usual), termparent (kill(getppid(), SIGTERM)), intgroup
 * (kill(0, SIGINT)), killparent (SIGKILL to the parent), stopparent (SIGSTOP to the parent),
 * sigioparent (fcntl F_SETOWN of the channel's socket to the parent, O_ASYNC), slow (sleeps
 * 1.25 s), flood (65 MiB on stdout), each then going on as usual; overlogits (logits:
 * writes 64 KiB past the row).
 * The call counters start at zero in
 * every process, so a fresh backend host starts counting again.
 *
 * Faults for the soak (tests/e2e/npu-replay-soak.sh): `cross=1` makes a lane's logits follow
 * the other lane's last token while that lane holds a sequence too (lanes that cross only
 * when two requests are in flight); `flaky=N` moves one logit (never the largest) of a logits
 * call now and then: about one call in N, at a phase drawn from the clock at open, never in
 * the first 40 calls (a rare nondeterministic mismatch).
 *
 * Stops (tests/e2e/npu-replay-soak-cancel.sh): `delay_us=N` makes every prefill and decode wait
 * N us first (in 1 ms slices), so a stop lands inside a call. The version 2 plug-ins' cancel
 * (test-backend-v2.c) only raises the lane's flag (it comes from another thread): a wait sees
 * it and ends the call with "cancelled" and the lane emptied; any later call on the lane (the
 * harness's length() first) empties a lane whose flag is up. `cancel_leaks=1` is the broken
 * cancel: the call still writes its positions and says "cancelled", an idle lane keeps what it
 * holds, so a cancelled lane is not empty. `cancel_late=1` is the slow cancel: a wait that sees the
 * flag goes on 5 s more before it ends the call "cancelled" (the harness gives a cancel 2 s). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "golden/backend.h"

#ifndef TEST_ABI
#define TEST_ABI GOLDEN_BACKEND_ABI_V1 /* a version 1 plug-in: it exports the version 1 entry only */
#endif
#define VOCAB 64
#define CONTEXT 48
#define LANES 2

typedef struct {
    int32_t toks[LANES][CONTEXT];
    int64_t len[LANES];
    int bf16;
    int fail_at; /* decode of this position fails (0 = never): the error path */
    int cross;   /* lanes cross while both hold a sequence */
    int flaky;   /* about one logits call in flaky is off (0 = never) */
    unsigned phase;
    long calls;
    long delay_us;       /* every prefill and decode waits this long first */
    int cancel_leaks;    /* the broken cancel: a cancelled lane keeps its positions */
    int cancel_late;     /* the slow cancel: the call ends 5 s after it */
    int cancel_req[LANES]; /* raised by cancel (another thread), __atomic */
    golden_backend_hooks hooks;
} tb;

static char hostile_what[32], hostile_call[32];
static int hostile_n = 1;

/* Whether this call is the hostile one; the misbehaviours that need no call context happen here. */
static int hostile(const char *call, char *msg, size_t n)
{
    static int count;
    if (!hostile_what[0] || strcmp(call, hostile_call) != 0 || ++count != hostile_n)
        return 0;
    if (strcmp(hostile_what, "segv") == 0) {
        volatile uintptr_t nowhere = 16; /* not a constant: the store cannot be optimised away */
        *(volatile int *)nowhere = 1;
    }
    else if (strcmp(hostile_what, "exit0") == 0)
        exit(0);
    else if (strcmp(hostile_what, "exit3") == 0)
        _exit(3);
    else if (strcmp(hostile_what, "abort") == 0)
        abort();
    else if (strcmp(hostile_what, "hang") == 0)
        for (;;)
            pause();
    else if (strcmp(hostile_what, "overflow") == 0)
        memset(msg, 'x', n + 8192);
    else if (strcmp(hostile_what, "flood") == 0) { /* 65 MiB on stdout: past the log's limit */
        static char mib[1 << 20];
        memset(mib, 'y', sizeof mib);
        for (int i = 0; i < 65; i++)
            if (fwrite(mib, 1, sizeof mib, stdout) != sizeof mib)
                break;
        fflush(stdout);
        return 0;
    }
    else if (strcmp(hostile_what, "slow") == 0) /* 1.25 s, then goes on as usual */
        return nanosleep(&(struct timespec){1, 250000000}, NULL), 0;
    else if (strcmp(hostile_what, "termparent") == 0)
        return kill(getppid(), SIGTERM), 0; /* then goes on as usual */
    else if (strcmp(hostile_what, "intgroup") == 0)
        return kill(0, SIGINT), 0;
    else if (strcmp(hostile_what, "killparent") == 0)
        return kill(getppid(), SIGKILL), 0;
    else if (strcmp(hostile_what, "stopparent") == 0)
        return kill(getppid(), SIGSTOP), 0;
    else if (strcmp(hostile_what, "sigioparent") == 0) /* SIGIO at the harness on the next call */
        return fcntl(3, F_SETOWN, getppid()), fcntl(3, F_SETFL, O_ASYNC), 0;
    else if (strcmp(hostile_what, "print") == 0)
        return printf("backend says hello on stdout\n"), fflush(stdout),
               fprintf(stderr, "backend says hello on stderr\n"), 0;
    else if (strcmp(hostile_what, "badutf8") == 0)
        return snprintf(msg, n, "bad \xff\xfe bytes \x1b[31m red \xc0\xaf end"), -1;
    return 1; /* nan, hugevocab, badtap, badmark: the call does it */
}

static int is_hostile(const char *what) { return strcmp(hostile_what, what) == 0; }

static uint64_t now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int tb_open(const golden_backend_open_args *a, void **self, char *msg, size_t n)
{
    tb *b = calloc(1, sizeof *b);
    if (!b)
        return snprintf(msg, n, "out of memory"), 1;
    for (size_t i = 0; i < a->n_opts; i++) /* hostile= first: open may be the hostile call */
        if (strcmp(a->keys[i], "hostile") == 0)
            sscanf(a->values[i], "%31[a-z0-9]@%31[a-z_]:%d", hostile_what, hostile_call, &hostile_n);
    if (hostile("open", msg, n) < 0) {
        free(b);
        return 1;
    }
    for (size_t i = 0; i < a->n_opts; i++) {
        if (strcmp(a->keys[i], "logits") == 0 && strcmp(a->values[i], "bf16") == 0)
            b->bf16 = 1;
        else if (strcmp(a->keys[i], "fail_at") == 0)
            b->fail_at = atoi(a->values[i]);
        else if (strcmp(a->keys[i], "cross") == 0)
            b->cross = atoi(a->values[i]);
        else if (strcmp(a->keys[i], "flaky") == 0 && atoi(a->values[i]) >= 2)
            b->flaky = atoi(a->values[i]);
        else if (strcmp(a->keys[i], "delay_us") == 0 && atol(a->values[i]) >= 0)
            b->delay_us = atol(a->values[i]);
        else if (strcmp(a->keys[i], "cancel_leaks") == 0)
            b->cancel_leaks = atoi(a->values[i]);
        else if (strcmp(a->keys[i], "cancel_late") == 0)
            b->cancel_late = atoi(a->values[i]);
        else if (strcmp(a->keys[i], "hostile") == 0 &&
                 sscanf(a->values[i], "%31[a-z0-9]@%31[a-z_]:%d", hostile_what, hostile_call,
                        &hostile_n) >= 2)
            continue;
        else {
            snprintf(msg, n, "unknown option %s", a->keys[i]);
            free(b);
            return 1;
        }
    }
    *self = b;
    return 0;
}

static void tb_close(void *self)
{
    if (((tb *)self)->delay_us) /* the stop tests read the log: the host closed, not killed */
        fprintf(stderr, "test-backend: closed\n");
    free(self);
}

static int tb_info(void *self, golden_backend_info *o, char *msg, size_t n)
{
    tb *b = self;
    int h = hostile("info", msg, n);
    if (h < 0)
        return 1;
    memset(o, 0, sizeof *o);
    o->version = TEST_ABI;
    o->hidden_size = 2;
    o->num_layers = 1;
    o->vocab_size = VOCAB;
    o->context_limit = CONTEXT;
    o->num_lanes = LANES;
    o->logits_dtype = b->bf16 ? GOLDEN_BK_BF16 : GOLDEN_BK_F32;
    if (h && is_hostile("hugevocab"))
        o->vocab_size = 1000000000;
    return 0;
}

static int tb_hooks(void *self, const golden_backend_hooks *h, char *msg, size_t n)
{
    if (hostile("set_hooks", msg, n) < 0)
        return 1;
    ((tb *)self)->hooks = *h;
    return 0;
}

static void mark(tb *b, int s, int e)
{
    if (b->hooks.mark)
        b->hooks.mark(b->hooks.ctx, s, e, now());
}

/* A cancel that came for the lane: taken here, on the calls' own thread (lane state is only
 * ever changed there). 1 when there was one. */
static int settle(tb *b, int lane)
{
    if (lane < 0 || lane >= LANES || !__atomic_exchange_n(&b->cancel_req[lane], 0, __ATOMIC_SEQ_CST))
        return 0;
    if (!b->cancel_leaks)
        b->len[lane] = 0;
    return 1;
}

/* delay_us, in 1 ms slices; 1 when a cancel of the lane ended it */
static int tb_wait(tb *b, int lane)
{
    for (long left = b->delay_us; left > 0; left -= 1000) {
        if (__atomic_load_n(&b->cancel_req[lane], __ATOMIC_SEQ_CST)) {
            if (b->cancel_late) /* the answer comes 5 s late */
                nanosleep(&(struct timespec){5, 0}, NULL);
            return 1;
        }
        long us = left < 1000 ? left : 1000;
        nanosleep(&(struct timespec){0, us * 1000}, NULL);
    }
    return __atomic_load_n(&b->cancel_req[lane], __ATOMIC_SEQ_CST) != 0;
}

static int prefill(tb *b, int lane, int64_t pos, const int32_t *t, size_t count, char *msg,
                   size_t n, int h)
{
    int leaked = 0;
    if (lane >= 0 && lane < LANES && settle(b, lane) == 0 && b->delay_us && tb_wait(b, lane)) {
        settle(b, lane);
        if (!b->cancel_leaks)
            return snprintf(msg, n, "cancelled"), 1;
        leaked = 1; /* the broken cancel: the positions are written all the same */
    }
    if (lane < 0 || lane >= LANES || pos < 0 || pos > b->len[lane])
        return snprintf(msg, n, "bad lane or position"), 1;
    if ((int64_t)count > CONTEXT - pos)
        return snprintf(msg, n, "context_limit_exceeded: %lld > %d", (long long)(pos + (int64_t)count), CONTEXT), 1;
    if (b->fail_at && pos + (int64_t)count - 1 >= b->fail_at && count == 1)
        return snprintf(msg, n, "device fault at position %lld", (long long)pos), 1;
    if (h && is_hostile("badmark") && b->hooks.mark)
        b->hooks.mark(b->hooks.ctx, GOLDEN_BK_STAGE_H2D, 0, 1); /* long before the call */
    mark(b, GOLDEN_BK_STAGE_H2D, 0);
    memcpy(b->toks[lane] + pos, t, count * sizeof *t);
    mark(b, GOLDEN_BK_STAGE_H2D, 1);
    mark(b, GOLDEN_BK_STAGE_NPU_WAIT, 0);
    b->len[lane] = pos + (int64_t)count;
    mark(b, GOLDEN_BK_STAGE_NPU_WAIT, 1);
    if (b->hooks.tap && b->hooks.want_taps) {
        float rows[CONTEXT + 8][2];
        memset(rows, 0, sizeof rows);
        for (size_t i = 0; i < count; i++) {
            rows[i][0] = (float)t[i];
            rows[i][1] = (float)(pos + (int64_t)i);
        }
        int64_t nr = (int64_t)count + (h && is_hostile("badtap") ? 8 : 0);
        if (b->hooks.tap(b->hooks.ctx, "layers/0/hidden", 0, GOLDEN_BK_F32, nr, 2, rows))
            return snprintf(msg, n, "tap refused"), 1;
    }
    if (leaked)
        return snprintf(msg, n, "cancelled"), 1;
    return 0;
}

static int tb_prefill(void *self, int lane, int64_t pos, const int32_t *t, size_t count, char *msg,
                      size_t n)
{
    int h = hostile("prefill", msg, n);
    return h < 0 ? 1 : prefill(self, lane, pos, t, count, msg, n, h);
}

static int tb_decode(void *self, int lane, int32_t tok, char *msg, size_t n)
{
    tb *b = self;
    int h = hostile("decode", msg, n);
    if (h < 0)
        return 1;
    if (lane < 0 || lane >= LANES)
        return snprintf(msg, n, "bad lane"), 1;
    return prefill(b, lane, b->len[lane], &tok, 1, msg, n, h);
}

static int tb_logits(void *self, int lane, int first, int count, void *dst, char *msg, size_t n)
{
    tb *b = self;
    int h = hostile("logits", msg, n);
    if (h < 0)
        return 1;
    settle(b, lane);
    if (lane < 0 || lane >= LANES || b->len[lane] == 0 || first < 0 || first + count > VOCAB)
        return snprintf(msg, n, "no logits"), 1;
    int64_t p = b->len[lane] - 1;
    int src = lane, other = 1 - lane;
    if (b->cross && b->len[other] > 0) /* the fault: the other lane's last token leaks in */
        src = other, p = b->len[other] - 1;
    int want = (int)((7 * (int64_t)b->toks[src][p] + p + 3) % VOCAB);
    if (b->flaky && !b->phase)
        b->phase = 1 + (unsigned)(now() / 1000u % (unsigned)b->flaky);
    bool off = b->flaky && ++b->calls > 40 && (b->calls + b->phase) % b->flaky == 0;
    mark(b, GOLDEN_BK_STAGE_D2H, 0);
    for (int i = 0; i < count; i++) {
        int v = first + i, d = v - want;
        float f = h && is_hostile("nan") ? (float)NAN : -(float)(d * d) / 8.0f;
        if (off && v == (want + 1) % VOCAB)
            f -= 0.125f; /* the flaky fault: a small move, the greedy token unchanged */
        if (b->bf16) {
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)dst)[i] = (uint16_t)(u >> 16); /* exact: small multiples of 1/8 */
        } else {
            ((float *)dst)[i] = f;
        }
    }
    mark(b, GOLDEN_BK_STAGE_D2H, 1);
    if (h && is_hostile("overlogits")) /* 64 KiB past the end of the row it was given */
        memset((char *)dst + (size_t)count * (b->bf16 ? 2 : 4), 0x7f, 65536);
    return 0;
}

static int tb_truncate(void *self, int lane, int64_t len, char *msg, size_t n)
{
    tb *b = self;
    if (hostile("truncate", msg, n) < 0)
        return 1;
    settle(b, lane);
    if (lane < 0 || lane >= LANES || len < 0 || len > b->len[lane])
        return snprintf(msg, n, "bad truncate"), 1;
    b->len[lane] = len;
    return 0;
}

static int tb_reset(void *self, int lane, char *msg, size_t n)
{
    tb *b = self;
    if (hostile("reset", msg, n) < 0)
        return 1;
    if (lane >= LANES)
        return snprintf(msg, n, "bad lane"), 1;
    for (int i = 0; i < LANES; i++)
        if (lane < 0 || lane == i) {
            settle(b, i);
            b->len[i] = 0;
        }
    return 0;
}

static int64_t tb_length(void *self, int lane)
{
    char msg[64];
    if (hostile("length", msg, sizeof msg) < 0)
        return -1;
    settle(self, lane);
    return lane >= 0 && lane < LANES ? ((tb *)self)->len[lane] : -1;
}

static const golden_backend_vtable vt = {TEST_ABI, "test-counting", tb_open, tb_close, tb_info,
                                         tb_hooks, tb_prefill, tb_decode, tb_logits, tb_truncate,
                                         tb_reset, tb_length};

const golden_backend_vtable *golden_backend_entry(void);
const golden_backend_vtable *golden_backend_entry(void) { return &vt; }
