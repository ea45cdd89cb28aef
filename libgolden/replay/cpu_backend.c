/* The built-in `cpu` backend: the golden_backend_vtable over the Qwen3-MoE reference forward
 * pass, with lanes, logits in f32 (or bf16 under dtype=bf16) and the stage marks it can honestly give. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "golden/replay.h"
#include "replay/cpu.h"
#include "replay/sample_priv.h"
#include "util/pool.h"
#include "golden/parse.h"
#include "util/suggest.h"

#define MAX_LANES 64
#define CHUNK 512 /* default positions per forward call */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void mark(cpu_backend *b, int stage, int end)
{
    if (b->hooks.mark)
        b->hooks.mark(b->hooks.ctx, stage, end, now_ns());
}

/* The message of e, and its ABI version 2 code. */
static int say(char *msg, size_t n, const golden_error *e)
{
    if (e->where[0])
        snprintf(msg, n, "%s: %s", e->where, e->what);
    else
        snprintf(msg, n, "%s", e->what);
    return e->code == GOLDEN_ENOMEM ? GOLDEN_BK_E_NOMEM
           : e->code == GOLDEN_EINVAL ? GOLDEN_BK_E_INVALID : GOLDEN_BK_E_OTHER;
}

static void cpu_close(void *self)
{
    cpu_backend *b = self;
    if (!b)
        return;
    if (b->locks)
        lg_cpu_lanes_fini(b);
    for (int i = 0; b->lanes && i < b->n_lanes; i++) {
        for (int l = 0; l < b->m.c.layers; l++) {
            if (b->lanes[i].k)
                free(b->lanes[i].k[l]);
            if (b->lanes[i].v)
                free(b->lanes[i].v[l]);
        }
        free(b->lanes[i].k);
        free(b->lanes[i].v);
        free(b->lanes[i].last_logits);
        free(b->lanes[i].hist);
        free(b->lanes[i].kept);
    }
    free(b->lanes);
    cpu_model_free(&b->m);
    free(b);
}

static const char *const fault_names[] = {
    "causal_leak", "kv_off_by_one_at_16", "kv_lane_cross", "kv_tail_stale",
    "kv_stale_after_reset", "router_duplicate", "router_unnormalized", "router_tie_high_index",
    "router_nan_silent", "topk_too_small", "mask_leak_at_129", "decode_leak_at_33",
    "kv_prefill_off_by_one_at_31", "notap_decode_kv", "kv_lane3_stale", "kv_lane2_zero",
    "taps_decode_recompute", "taps_router_last_missing", "kv_tail_off_by_one",
    "reset_all_lane0_only", "decode_past_limit_dropped", "refused_decode_drops_last",
    "router_decode_rank_swap", "nondeterministic", "logit_shift_token", "logits_bf16_truncate",
    "router_nan_silent_decode", "router_lane1_decode_swap", "router_prefill_swap_past_100",
    "logits_at_bf16", "topk_value_shift"};

static const char *const at_names[CPU_AT_COUNT] = {"timeout", "device_error", "device_lost",
                                                   "nan", "inf", "reject"};

/* NAME@N: a run-time fault at the N-th prefill or decode call. */
static int parse_fault_at(cpu_backend *b, const char *v, const char *at, char *msg, size_t n)
{
    int64_t call = 0;
    bool ok = golden_parse_int(at + 1, 1, INT64_MAX, &call) == GOLDEN_PARSE_OK;
    for (unsigned i = 0; i < CPU_AT_COUNT; i++)
        if (strlen(at_names[i]) == (size_t)(at - v) && strncmp(v, at_names[i], (size_t)(at - v)) == 0 &&
            ok) {
            b->at[i] = call;
            b->any_at = true;
            return 0;
        }
    snprintf(msg, n, "backend option inject=%s: not a run-time fault of the cpu backend (NAME@N, "
             "N >= 1; see docs/npu-replay.md)", v);
    return 1;
}

static int parse_fault(cpu_backend *b, const char *v, char *msg, size_t n)
{
    const char *at = strchr(v, '@');
    if (at)
        return parse_fault_at(b, v, at, msg, n);
    if (lg_cpu_sample_fault(v, &b->sample_fault)) /* sample_*: replay/cpu_sample.c */
        return 0;
    for (unsigned i = 0; i < sizeof fault_names / sizeof *fault_names; i++)
        if (strcmp(v, fault_names[i]) == 0) {
            b->fault |= 1u << i;
            return 0;
        }
    snprintf(msg, n, "backend option inject=%s: not a fault of the cpu backend (see docs/conformance.md)", v);
    return 1;
}

/* delay_us=N: the device-side delay of the soak (handbook section 13.2), a seeded uniform
 * [0, N] us wait inside npu_wait of every prefill and decode call; it changes no bit. */
static void device_delay(cpu_backend *b, int lane)
{
    if (b->delay_us <= 0)
        return;
    uint64_t z = (b->delay_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    uint64_t ns = (uint64_t)((double)(z >> 11) / 9007199254740992.0 * (double)b->delay_us * 1e3);
    /* in slices of at most 1 ms, so a cancel (cpu_batch.c) ends the wait soon */
    for (uint64_t left = ns; left > 0 && !lg_cpu_cancelled(b, lane);) {
        uint64_t d = left < 1000000u ? left : 1000000u;
        struct timespec ts = {0, (long)d};
        while (nanosleep(&ts, &ts) != 0)
            ;
        left -= d;
    }
}

static int parse_opts(cpu_backend *b, const golden_backend_open_args *a, char *msg, size_t n)
{
    b->n_lanes = 4;
    b->chunk = CHUNK;
    int64_t num;
    for (size_t i = 0; i < a->n_opts; i++) {
        const char *k = a->keys[i], *v = a->values[i];
        if (strcmp(k, "dtype") == 0 && (strcmp(v, "f32") == 0 || strcmp(v, "bf16") == 0)) {
            b->bf16 = strcmp(v, "bf16") == 0;
        } else if (strcmp(k, "lanes") == 0 &&
                   golden_parse_int(v, 1, MAX_LANES, &num) == GOLDEN_PARSE_OK) {
            b->n_lanes = (int)num; /* golden/parse.h: "4x", " 4" and "1e1" are refused */
        } else if (strcmp(k, "chunk") == 0 &&
                   golden_parse_int(v, 1, 1 << 20, &num) == GOLDEN_PARSE_OK) {
            b->chunk = (int)num;
        } else if (strcmp(k, "inject") == 0) {
            if (parse_fault(b, v, msg, n))
                return 1;
        } else if (strcmp(k, "delay_us") == 0 &&
                   golden_parse_int(v, 0, 10000000, &num) == GOLDEN_PARSE_OK) {
            b->delay_us = num;
        } else if (strcmp(k, "delay_seed") == 0 &&
                   golden_parse_uint(v, 0, UINT64_MAX, &b->delay_rng) == GOLDEN_PARSE_OK) {
        } else if (strcmp(k, "dtype") == 0 || strcmp(k, "lanes") == 0 || strcmp(k, "chunk") == 0 ||
                   strcmp(k, "delay_us") == 0 || strcmp(k, "delay_seed") == 0) {
            snprintf(msg, n, "backend option %s=%s: dtype takes f32 or bf16, lanes 1..%d, chunk "
                     "1..%d, delay_us 0..10000000, delay_seed an unsigned integer", k, v,
                     MAX_LANES, 1 << 20);
            return 1;
        } else {
            static const char *const known[] = {"dtype", "lanes", "chunk", "inject", "delay_us",
                                                "delay_seed"};
            lg_suggest sg;
            char hint[200];
            lg_suggest_init(&sg, k, strlen(k));
            for (size_t j = 0; j < 6; j++)
                lg_suggest_offer(&sg, known[j], strlen(known[j]));
            snprintf(msg, n, "unknown backend option '%s'%s (the cpu backend knows dtype, lanes, "
                     "chunk, inject, delay_us, delay_seed)", k,
                     lg_suggest_text(&sg, "", hint, sizeof hint));
            return 1;
        }
    }
    return 0;
}

static int cpu_open(const golden_backend_open_args *a, void **self, char *msg, size_t n)
{
    *self = NULL;
    golden_error err;
    golden_error_clear(&err);
    if (a->version != GOLDEN_BACKEND_ABI_VERSION) { /* the harness passes the table's version */
        snprintf(msg, n, "open arguments of ABI version %u, expected %u", a->version,
                 GOLDEN_BACKEND_ABI_VERSION);
        return 1;
    }
    if (!a->model_dir) {
        snprintf(msg, n, "the cpu backend needs --model DIR");
        return 1;
    }
    cpu_backend *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(msg, n, "out of memory");
        return 1;
    }
    b->threads = a->threads >= 1 ? a->threads : lg_cpu_count();
    if (parse_opts(b, a, msg, n)) {
        free(b);
        return 1;
    }
    if (b->fault & CPU_FAULT_NONDETERMINISTIC) {
        /* the one process-wide counter of the library, read by this planted fault only: two
         * opens in one process always differ (docs/design.md); the process id and the clock
         * make two opens in two backend hosts (each a process of its own) differ too */
        static atomic_uint opens;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t h = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^
                     ((uint64_t)ts.tv_sec << 20) ^ atomic_fetch_add(&opens, 1);
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
        b->jitter = 0.125f * (1.0f + (float)(h % 1000003u) / 1000003.0f);
    }
    if (cpu_model_load(a->model_dir, &b->m, &err) != 0) {
        free(b);
        return say(msg, n, &err);
    }
    b->lanes = calloc((size_t)b->n_lanes, sizeof *b->lanes);
    for (int i = 0; b->lanes && i < b->n_lanes; i++) {
        cpu_lane *L = &b->lanes[i];
        L->k = calloc((size_t)b->m.c.layers, sizeof *L->k);
        L->v = calloc((size_t)b->m.c.layers, sizeof *L->v);
        L->last_logits = malloc((size_t)b->m.c.vocab * sizeof(float));
        if (!L->k || !L->v || !L->last_logits) {
            b->n_lanes = i + 1;
            cpu_close(b);
            snprintf(msg, n, "out of memory");
            return 1;
        }
    }
    if (!b->lanes || lg_cpu_lanes_init(b) != 0) {
        cpu_close(b);
        snprintf(msg, n, "out of memory");
        return 1;
    }
    b->locks = true;
    *self = b;
    return 0;
}

static int cpu_info(void *self, golden_backend_info *o, char *msg, size_t n)
{
    (void)msg;
    (void)n;
    const cpu_backend *b = self;
    const cpu_config *c = &b->m.c;
    memset(o, 0, sizeof *o);
    o->version = GOLDEN_BACKEND_ABI_VERSION;
    o->hidden_size = c->hidden;
    o->num_layers = c->layers;
    o->num_experts = c->experts;
    o->experts_per_tok = c->topk;
    o->vocab_size = c->vocab;
    o->context_limit = c->max_pos;
    o->num_lanes = b->n_lanes;
    o->logits_dtype = b->bf16 ? GOLDEN_BK_BF16 : GOLDEN_BK_F32;
    return 0;
}

static int cpu_set_hooks(void *self, const golden_backend_hooks *h, char *msg, size_t n)
{
    (void)msg;
    (void)n;
    cpu_backend *b = self;
    if (h)
        b->hooks = *h;
    else
        memset(&b->hooks, 0, sizeof b->hooks);
    return 0;
}

static int bad_lane(const cpu_backend *b, int lane, char *msg, size_t n)
{
    if (lane >= 0 && lane < b->n_lanes)
        return 0;
    snprintf(msg, n, "lane %d does not exist (the backend has %d)", lane, b->n_lanes);
    return GOLDEN_BK_E_INVALID;
}

/* The run-time faults of call `call` that make it fail; 0 when it goes ahead. */
static int fail_at_call(const cpu_backend *b, int64_t call, char *msg, size_t n)
{
    if (call == b->at[CPU_AT_TIMEOUT])
        return snprintf(msg, n, "timeout: forward call %lld did not complete", (long long)call),
               GOLDEN_BK_E_TIMEOUT;
    if (call == b->at[CPU_AT_DEVICE_ERROR])
        return snprintf(msg, n, "device error in forward call %lld", (long long)call),
               GOLDEN_BK_E_OTHER;
    if (b->at[CPU_AT_DEVICE_LOST] && call >= b->at[CPU_AT_DEVICE_LOST])
        return snprintf(msg, n, "device lost since forward call %lld",
                        (long long)b->at[CPU_AT_DEVICE_LOST]), GOLDEN_BK_E_DEVICE_LOST;
    if (call == b->at[CPU_AT_REJECT])
        return snprintf(msg, n, "context_limit_exceeded: forward call %lld refused",
                        (long long)call), GOLDEN_BK_E_CONTEXT_LIMIT;
    return 0;
}

/* The run-time faults that spoil a successful call's logits. */
static void spoil_logits(cpu_backend *b, int64_t call, cpu_lane *L)
{
    if (call == b->at[CPU_AT_NAN])
        for (int i = 0; i < b->m.c.vocab; i++)
            L->last_logits[i] = NAN;
    if (call == b->at[CPU_AT_INF])
        L->last_logits[0] = INFINITY;
}

/* The positions a prefill_keep call keeps the logits of: checked and given to the lane. */
static int set_keep(cpu_backend *b, cpu_lane *L, int64_t pos, size_t count, const int64_t *keep,
                    size_t n_keep, char *msg, size_t n)
{
    L->n_keep = 0;
    if (n_keep > GOLDEN_BK_MAX_KEEP)
        return snprintf(msg, n, "%zu kept positions, at most %d", n_keep, GOLDEN_BK_MAX_KEEP),
               GOLDEN_BK_E_INVALID;
    for (size_t i = 0; i < n_keep; i++)
        if (keep[i] < pos || keep[i] - pos >= (int64_t)count)
            return snprintf(msg, n, "kept position %lld outside the prefill", (long long)keep[i]),
                   GOLDEN_BK_E_INVALID;
    size_t need = n_keep * (size_t)b->m.c.vocab;
    if (need > L->kept_cap) {
        float *k = realloc(L->kept, need * sizeof *k);
        if (!k)
            return snprintf(msg, n, "out of memory for kept logits"), GOLDEN_BK_E_NOMEM;
        L->kept = k;
        L->kept_cap = need;
    }
    if (n_keep)
        memcpy(L->keep_pos, keep, n_keep * sizeof *keep);
    L->n_keep = n_keep;
    return 0;
}

static int prefill_keep(cpu_backend *b, int lane, int64_t pos, const int32_t *tokens,
                        size_t count, const int64_t *keep, size_t n_keep, char *msg, size_t n)
{
    golden_error err;
    golden_error_clear(&err);
    int64_t call = ++b->calls;
    int fc;
    if (b->any_at && (fc = fail_at_call(b, call, msg, n)) != 0)
        return fc;
    if (bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    if (pos < 0 || pos > b->lanes[lane].len) {
        snprintf(msg, n, "prefill at position %lld of a lane holding %lld", (long long)pos,
                 (long long)b->lanes[lane].len);
        return GOLDEN_BK_E_INVALID;
    }
    if (count == 0) {
        snprintf(msg, n, "prefill of no tokens");
        return GOLDEN_BK_E_INVALID;
    }
    if ((int64_t)count > b->m.c.max_pos - pos && b->fault && b->in_decode) {
        if (b->fault & CPU_FAULT_DECODE_PAST_LIMIT_DROPPED)
            return 0; /* the fault: accepted, nothing done */
        if ((b->fault & CPU_FAULT_REFUSED_DECODE_DROPS_LAST) && b->lanes[lane].len > 0)
            b->lanes[lane].len--; /* the fault: the refusal damages the lane */
    }
    if ((int64_t)count > b->m.c.max_pos - pos) {
        snprintf(msg, n, "context_limit_exceeded: %lld positions past %lld, the limit is %lld",
                 (long long)count, (long long)pos, (long long)b->m.c.max_pos);
        return GOLDEN_BK_E_CONTEXT_LIMIT;
    }
    int kc = set_keep(b, &b->lanes[lane], pos, count, keep, n_keep, msg, n);
    if (kc)
        return kc;
    /* On a CPU the inputs are already where the compute is: h2d is the token copy. */
    mark(b, GOLDEN_BK_STAGE_H2D, 0);
    mark(b, GOLDEN_BK_STAGE_H2D, 1);
    mark(b, GOLDEN_BK_STAGE_NPU_WAIT, 0);
    /* Long prompts go through in chunks so scratch stays bounded (a 40,959-token prompt of
     * the real model would otherwise need ~8 GB of expert buffers); every element is summed
     * in the same order whatever the batch, so chunking changes no bit. */
    int rc = 0;
    size_t chunk = (size_t)b->chunk;
    b->call_pos = pos;
    if ((b->fault & CPU_FAULT_TAPS_DECODE_RECOMPUTE) && b->in_decode && pos > 0) {
        /* the fault: a backend without a KV cache reruns the whole context each step */
        cpu_lane *L = &b->lanes[lane];
        if (L->hist && pos < L->cap) {
            L->hist[pos] = tokens[0];
            tokens = L->hist, count = (size_t)pos + 1, pos = 0;
        }
    }
    for (size_t done = 0; rc == 0 && done < count; done += chunk)
        rc = cpu_forward(b, lane, pos + (int64_t)done, tokens + done,
                         (int64_t)(count - done < chunk ? count - done : chunk), &err);
    device_delay(b, lane);
    mark(b, GOLDEN_BK_STAGE_NPU_WAIT, 1);
    if (rc == 0 && b->any_at)
        spoil_logits(b, call, &b->lanes[lane]);
    return rc ? say(msg, n, &err) : 0;
}

static int cpu_prefill(void *self, int lane, int64_t pos, const int32_t *tokens, size_t count,
                       char *msg, size_t n)
{
    return prefill_keep(self, lane, pos, tokens, count, NULL, 0, msg, n);
}

static int cpu_prefill_keep(void *self, int lane, int64_t pos, const int32_t *tokens,
                            size_t count, const int64_t *keep, size_t n_keep, char *msg,
                            size_t n)
{
    return prefill_keep(self, lane, pos, tokens, count, keep, n_keep, msg, n);
}

static int cpu_decode(void *self, int lane, int32_t token, char *msg, size_t n)
{
    cpu_backend *b = self;
    if (bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    b->in_decode = true;
    int rc = cpu_prefill(self, lane, b->lanes[lane].len, &token, 1, msg, n);
    b->in_decode = false;
    return rc;
}

/* Version 2 decode: at the harness's count; *written is the lane's last position after it. */
static int cpu_decode_at(void *self, int lane, int64_t pos, int32_t token, int64_t *written,
                         char *msg, size_t n)
{
    cpu_backend *b = self;
    *written = -1;
    if (bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    if (pos != b->lanes[lane].len)
        return snprintf(msg, n, "decode at position %lld of a lane holding %lld", (long long)pos,
                        (long long)b->lanes[lane].len), GOLDEN_BK_E_INVALID;
    int rc = cpu_decode(self, lane, token, msg, n);
    if (rc == 0)
        *written = b->lanes[lane].len - 1;
    return rc;
}

/* Fault topk_too_small: an NPU that hands back only its top 8 logits; the rest read as -inf. */
static int topk_only(cpu_backend *b, const cpu_lane *L, int first, int count, void *dst)
{
    int V = b->m.c.vocab, top[8], nt = 0;
    for (int i = 0; i < V; i++) { /* the 8 largest, the lower index first among equals */
        int k = nt < 8 ? nt++ : 8;
        while (k > 0 && L->last_logits[i] > L->last_logits[top[k - 1]])
            k--;
        if (k < 8) {
            memmove(top + k + 1, top + k, (size_t)(nt - 1 - k) * sizeof *top);
            top[k] = i;
        }
    }
    for (int i = 0; i < count; i++) {
        float v = -INFINITY;
        for (int k = 0; k < nt; k++)
            if (top[k] == first + i)
                v = L->last_logits[first + i];
        if (b->bf16)
            ((uint16_t *)dst)[i] = golden_f32_to_bf16(v);
        else
            ((float *)dst)[i] = v;
    }
    mark(b, GOLDEN_BK_STAGE_D2H, 1);
    return 0;
}

/* The planted output faults of the golden check: the same on every path and every open, so
 * only a comparison with a reference golden sees them (docs/conformance.md). */
static float bf16_value(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float fault_value(const cpu_backend *b, int id, float f)
{
    if ((b->fault & CPU_FAULT_LOGIT_SHIFT_TOKEN) && id % 8 == 3)
        f += 0.0625f;
    if ((b->fault & CPU_FAULT_LOGITS_BF16_TRUNCATE) && !b->bf16) {
        uint32_t u;
        memcpy(&u, &f, 4);
        u &= 0xffff0000u;
        memcpy(&f, &u, 4);
    }
    return b->bf16 ? bf16_value(golden_f32_to_bf16(f)) : f;
}

/* logits(), logits_at() of a kept row and topk() all show the fault (topk through
 * fault_value), so that no self-consistency check can see it. */
static void logits_fault(const cpu_backend *b, int first, int count, void *dst)
{
    for (int i = 0; i < count; i++) {
        float f;
        if (b->bf16) {
            uint32_t u = (uint32_t)((uint16_t *)dst)[i] << 16;
            memcpy(&f, &u, 4);
        } else {
            memcpy(&f, (float *)dst + i, 4);
        }
        f = fault_value(b, first + i, f);
        if (b->bf16)
            ((uint16_t *)dst)[i] = golden_f32_to_bf16(f);
        else
            memcpy((float *)dst + i, &f, 4);
    }
}

static int cpu_logits(void *self, int lane, int first, int count, void *dst, char *msg, size_t n)
{
    cpu_backend *b = self;
    if (bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    const cpu_lane *L = &b->lanes[lane];
    if (!L->has_logits) {
        snprintf(msg, n, "lane %d has no logits (nothing processed since its last reset)", lane);
        return GOLDEN_BK_E_INVALID;
    }
    if (first < 0 || count < 0 || count > b->m.c.vocab - first) {
        snprintf(msg, n, "logits range [%d, %d) outside the vocabulary of %d", first,
                 first + count, b->m.c.vocab);
        return GOLDEN_BK_E_INVALID;
    }
    mark(b, GOLDEN_BK_STAGE_D2H, 0);
    if (b->fault & CPU_FAULT_TOPK_TOO_SMALL)
        return topk_only(b, L, first, count, dst);
    if (b->bf16) {
        uint16_t *d = dst;
        for (int i = 0; i < count; i++)
            d[i] = golden_f32_to_bf16(L->last_logits[first + i]); /* exact: already rounded */
    } else {
        memcpy(dst, L->last_logits + first, (size_t)count * sizeof(float));
    }
    if (b->fault & (CPU_FAULT_LOGIT_SHIFT_TOKEN | CPU_FAULT_LOGITS_BF16_TRUNCATE))
        logits_fault(b, first, count, dst);
    mark(b, GOLDEN_BK_STAGE_D2H, 1);
    return 0;
}

static int cpu_truncate(void *self, int lane, int64_t length, char *msg, size_t n)
{
    cpu_backend *b = self;
    if (bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    if (length < 0 || length > b->lanes[lane].len) {
        snprintf(msg, n, "cannot truncate lane %d of %lld positions to %lld", lane,
                 (long long)b->lanes[lane].len, (long long)length);
        return GOLDEN_BK_E_INVALID;
    }
    b->lanes[lane].n_keep = 0;
    if (length < b->lanes[lane].len)
        b->lanes[lane].has_logits = false;
    if ((b->fault & CPU_FAULT_KV_TAIL_OFF_BY_ONE) && length % 16 && length < b->lanes[lane].len)
        length++; /* the fault: a cut off the 16-grid keeps one position of the old tail */
    if (!(b->fault & CPU_FAULT_KV_TAIL_STALE)) /* the fault: the tail stays valid */
        b->lanes[lane].len = length;
    return 0;
}

static int cpu_reset(void *self, int lane, char *msg, size_t n)
{
    cpu_backend *b = self;
    if (lane >= 0 && bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    for (int i = lane < 0 ? 0 : lane; i < (lane < 0 ? b->n_lanes : lane + 1); i++) {
        cpu_lane *L = &b->lanes[i];
        bool keep = (b->fault & CPU_FAULT_KV_STALE_AFTER_RESET) ||
                    ((b->fault & CPU_FAULT_RESET_ALL_LANE0_ONLY) && lane < 0 && i > 0);
        if (keep && L->len > L->stale)
            L->stale = L->len; /* the fault: the old positions stay visible */
        L->len = 0;
        L->has_logits = false;
        L->n_keep = 0;
    }
    return 0;
}

static int64_t cpu_length(void *self, int lane)
{
    cpu_backend *b = self;
    return lane >= 0 && lane < b->n_lanes ? b->lanes[lane].len : -1;
}

static void put_row(const cpu_backend *b, const float *row, int first, int count, void *dst)
{
    if (b->bf16) {
        uint16_t *d = dst;
        for (int i = 0; i < count; i++)
            d[i] = golden_f32_to_bf16(row[first + i]); /* exact: already rounded */
    } else {
        memcpy(dst, row + first, (size_t)count * sizeof(float));
    }
}

static int cpu_logits_at(void *self, int lane, int64_t pos, int first, int count, void *dst,
                         char *msg, size_t n)
{
    cpu_backend *b = self;
    if (bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    const cpu_lane *L = &b->lanes[lane];
    if (L->has_logits && pos == L->len - 1)
        return cpu_logits(self, lane, first, count, dst, msg, n);
    if (first < 0 || count < 0 || count > b->m.c.vocab - first)
        return snprintf(msg, n, "logits range [%d, %d) outside the vocabulary of %d", first,
                        first + count, b->m.c.vocab), GOLDEN_BK_E_INVALID;
    for (size_t j = 0; j < L->n_keep; j++)
        if (L->keep_pos[j] == pos && pos < L->len) {
            mark(b, GOLDEN_BK_STAGE_D2H, 0);
            put_row(b, L->kept + j * (size_t)b->m.c.vocab, first, count, dst);
            if ((b->fault & CPU_FAULT_LOGITS_AT_BF16) && !b->bf16)
                for (int i = 0; i < count; i++) { /* the fault: the scoring path's cast */
                    uint32_t u;
                    memcpy(&u, (float *)dst + i, 4);
                    u &= 0xffff0000u;
                    memcpy((float *)dst + i, &u, 4);
                }
            if (b->fault & (CPU_FAULT_LOGIT_SHIFT_TOKEN | CPU_FAULT_LOGITS_BF16_TRUNCATE))
                logits_fault(b, first, count, dst);
            mark(b, GOLDEN_BK_STAGE_D2H, 1);
            return 0;
        }
    return snprintf(msg, n, "lane %d kept no logits of position %lld", lane, (long long)pos),
           GOLDEN_BK_E_INVALID;
}

typedef struct {
    float v;
    int32_t i;
} vi_pair;

/* Largest first, the lower index first among equals; a NaN before everything (so the harness
 * sees it) */
static int vi_cmp(const void *pa, const void *pb)
{
    const vi_pair *a = pa, *b = pb;
    bool na = isnan(a->v), nb = isnan(b->v);
    if (na != nb)
        return na ? -1 : 1;
    if (!na && a->v != b->v)
        return a->v > b->v ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int cpu_topk(void *self, int lane, int k, float *values, int32_t *indices, char *msg,
                    size_t n)
{
    cpu_backend *b = self;
    if (bad_lane(b, lane, msg, n))
        return GOLDEN_BK_E_INVALID;
    const cpu_lane *L = &b->lanes[lane];
    int V = b->m.c.vocab;
    if (!L->has_logits)
        return snprintf(msg, n, "lane %d has no logits (nothing processed since its last reset)",
                        lane), GOLDEN_BK_E_INVALID;
    if (k < 1 || k > V || k > GOLDEN_BK_MAX_TOPK)
        return snprintf(msg, n, "top-k of %d outside 1..%d", k,
                        V < GOLDEN_BK_MAX_TOPK ? V : GOLDEN_BK_MAX_TOPK), GOLDEN_BK_E_INVALID;
    vi_pair *p = malloc((size_t)V * sizeof *p);
    if (!p)
        return snprintf(msg, n, "out of memory for the top-k"), GOLDEN_BK_E_NOMEM;
    mark(b, GOLDEN_BK_STAGE_D2H, 0);
    bool faulty = (b->fault & (CPU_FAULT_LOGIT_SHIFT_TOKEN | CPU_FAULT_LOGITS_BF16_TRUNCATE)) != 0;
    for (int i = 0; i < V; i++)
        p[i] = (vi_pair){faulty ? fault_value(b, i, L->last_logits[i]) : L->last_logits[i], i};
    qsort(p, (size_t)V, sizeof *p, vi_cmp);
    for (int i = 0; i < k; i++) {
        values[i] = p[i].v; /* bf16 mode: already rounded, so exact either way */
        indices[i] = p[i].i;
    }
    if (b->fault & CPU_FAULT_TOPK_VALUE_SHIFT)
        values[0] += 0.0625f; /* the fault: the top-k mode's largest value off by 1/16 */
    mark(b, GOLDEN_BK_STAGE_D2H, 1);
    free(p);
    return 0;
}

/* Every lane call holds the lane's lock, so that cancel() from another thread never races it
 * (cpu_batch.c); a cancel that came during the call resets the lane and answers CANCELLED. */
#define LANE_CALL(lane, call)                                                                 \
    do {                                                                                      \
        cpu_backend *b_ = self;                                                               \
        lg_cpu_lock(b_, lane);                                                                \
        int rc_ = lg_cpu_lane_end(b_, lane, call, msg, n);                                    \
        lg_cpu_unlock(b_, lane);                                                              \
        return rc_;                                                                           \
    } while (0)

static int lk_prefill(void *self, int lane, int64_t pos, const int32_t *tokens, size_t count,
                      char *msg, size_t n)
{
    LANE_CALL(lane, cpu_prefill(self, lane, pos, tokens, count, msg, n));
}
static int lk_decode(void *self, int lane, int32_t token, char *msg, size_t n)
{
    LANE_CALL(lane, cpu_decode(self, lane, token, msg, n));
}
static int lk_logits(void *self, int lane, int first, int count, void *dst, char *msg, size_t n)
{
    LANE_CALL(lane, cpu_logits(self, lane, first, count, dst, msg, n));
}
static int lk_truncate(void *self, int lane, int64_t length, char *msg, size_t n)
{
    LANE_CALL(lane, cpu_truncate(self, lane, length, msg, n));
}
static int lk_reset(void *self, int lane, char *msg, size_t n)
{
    cpu_backend *b = self;
    lg_cpu_lock(b, lane);
    int rc = cpu_reset(self, lane, msg, n);
    lg_cpu_unlock(b, lane);
    return rc;
}
static int64_t lk_length(void *self, int lane)
{
    cpu_backend *b = self;
    lg_cpu_lock(b, lane < 0 ? b->n_lanes : lane); /* lane < 0 is no lane here: nothing locked */
    int64_t len = cpu_length(self, lane);
    lg_cpu_unlock(b, lane < 0 ? b->n_lanes : lane);
    return len;
}
static int lk_decode_at(void *self, int lane, int64_t pos, int32_t token, int64_t *written,
                        char *msg, size_t n)
{
    LANE_CALL(lane, cpu_decode_at(self, lane, pos, token, written, msg, n));
}
static int lk_prefill_keep(void *self, int lane, int64_t pos, const int32_t *tokens,
                           size_t count, const int64_t *keep, size_t n_keep, char *msg, size_t n)
{
    LANE_CALL(lane, cpu_prefill_keep(self, lane, pos, tokens, count, keep, n_keep, msg, n));
}
static int lk_logits_at(void *self, int lane, int64_t pos, int first, int count, void *dst,
                        char *msg, size_t n)
{
    LANE_CALL(lane, cpu_logits_at(self, lane, pos, first, count, dst, msg, n));
}
static int lk_topk(void *self, int lane, int k, float *values, int32_t *indices, char *msg,
                   size_t n)
{
    LANE_CALL(lane, cpu_topk(self, lane, k, values, indices, msg, n));
}
static int lk_sample(void *self, int lane, const golden_backend_sampling *s, int32_t *token,
                     char *msg, size_t n)
{
    LANE_CALL(lane, lg_cpu_sample(self, lane, s, token, msg, n));
}

static const golden_backend_vtable_v2 cpu_vtable = {
    .base = {
        .abi_version = GOLDEN_BACKEND_ABI_VERSION,
        .name = "cpu",
        .open = cpu_open,
        .close = cpu_close,
        .info = cpu_info,
        .set_hooks = cpu_set_hooks,
        .prefill = lk_prefill,
        .decode = lk_decode,
        .logits = lk_logits,
        .truncate = lk_truncate,
        .reset = lk_reset,
        .length = lk_length,
    },
    .size = sizeof(golden_backend_vtable_v2),
    .flags = 0, /* one instance shares its call counter, hooks and worker pool across lanes */
    .decode_at = lk_decode_at,
    .prefill_keep = lk_prefill_keep,
    .logits_at = lk_logits_at,
    .topk = lk_topk,
    .step_batch = lg_cpu_step_batch,
    .cancel = lg_cpu_cancel,
    .sample = lk_sample,
};

const golden_backend_vtable *golden_cpu_backend(void) { return &cpu_vtable.base; }
const golden_backend_vtable_v2 *lg_cpu_backend_v2(void) { return &cpu_vtable; }
