/* Red team 11: a version 2 plug-in over the built-in cpu backend whose only change is `sample`,
 * per lane or per state (tests/e2e/conform-sampling-lanes-redteam11.sh builds it against the
 * build's libgolden.a). Written from docs/conformance.md ("Sampling statistics"),
 * docs/npu-replay.md (version 2 `sample`) and golden/backend.h alone.
 *
 * Options of its own (taken out before the cpu backend's open sees the rest):
 *   rt_mode=M   what the faulty lanes do (below; default pass)
 *   rt_lanes=S  the faulty lanes: '+'-separated numbers, last, odd, even, geK, mid (not the
 *               first nor the last), all, none (default all)
 *   rt_nl=N     the fault only when the backend has N lanes
 *   rt_after=N  the fault only after the first N sample calls on that lane
 *   rt_base=B   cpu (the cpu backend's own sample, default) or indep (the chain as documented,
 *               written here: repetition penalty once per distinct token of the window, sort
 *               largest first / lower id first, top-k, softmax, top-p, min-p, temperature,
 *               softmax, one draw from a generator of its own)
 * Modes: pass, nocut (top-k, top-p and min-p ignored), temp1 (temperature taken as 1),
 * nopen (no repetition penalty), greedy2 (greedy takes the second largest), boost (half the
 * draws, chosen by the seed, become the most probable class), seedctr (a per-lane call counter
 * mixed into the seed), stream (a per-lane generator seeded on the lane's first call, the
 * seeds after it ignored), lane0 (samples lane 0's logits), nextlane (lane L samples lane
 * L-1's, lane 0 its own), stalecache (a per-lane cache of the distribution keyed on the settings only: a new
 * position reuses the old one), sharedcache (one cache that every lane fills, keyed on the
 * settings and the history length, read by the faulty lanes), lasthist (the history of the previous sample call, any lane),
 * histhalf (the penalty window is the last repeat_last_n/2), xorlane (the lane mixed into every
 * seed: the distribution and the determinism on a lane are right), cache (a correct per-lane
 * cache keyed on the logits, settings and history), batchshift (in a batch, draw i >= 8 uses
 * seeds[i-1]: every draw's distribution right, not "exactly as one call with seeds[i]"),
 * singlediff (a one-draw call uses another generator than a batch), tempfirst (temperature
 * before top-p and min-p), rarebias (the least probable kept class 1.5x, renormalised),
 * callstream (a batch's draws continue the generator of its first seed), oov (the last draw of
 * a call is the vocabulary size), err (sample fails with GOLDEN_BK_E_OTHER), pendup (the
 * penalty once per occurrence in the window, not per distinct token), hist0 (lane L > 0 uses
 * the history lane 0 last passed with the same length, when there is one), lastrow (one logits
 * buffer for the device: sample reads the row of the lane most recently advanced by prefill,
 * decode, decode_at, prefill_keep or step_batch, whatever lane it is given), switch (half the
 * draws the top class on the first sample call after a call on another lane). */
#include "golden/backend.h"
#include "golden/replay.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 4096
#define MAXI 16
#define MAXL 64

enum { M_PASS, M_NOCUT, M_TEMP1, M_NOPEN, M_GREEDY2, M_BOOST, M_SEEDCTR, M_STREAM, M_LANE0,
       M_NEXTLANE, M_STALECACHE, M_SHAREDCACHE, M_LASTHIST, M_HISTHALF, M_XORLANE, M_CACHE,
       M_BATCHSHIFT, M_SINGLEDIFF, M_TEMPFIRST, M_RAREBIAS, M_CALLSTREAM, M_OOV, M_ERR, M_PENDUP,
       M_HIST0, M_LASTROW, M_SWITCH };
static const char *const mode_names[] = {"pass", "nocut", "temp1", "nopen", "greedy2", "boost",
                                         "seedctr", "stream", "lane0", "nextlane", "stalecache",
                                         "sharedcache", "lasthist", "histhalf", "xorlane",
                                         "cache", "batchshift", "singlediff", "tempfirst",
                                         "rarebias", "callstream", "oov", "err", "pendup",
                                         "hist0", "lastrow", "switch", NULL};

typedef struct {
    int n, id[MAXV];
    double p[MAXV];
} dist;

typedef struct {
    int valid;
    float temp, top_p, min_p, rp;
    int top_k, last_n;
    size_t n_hist;
    uint64_t hist_hash, logit_hash;
    dist d;
} cache_ent;

typedef struct {
    void *self; /* the cpu backend's instance (also the handle the harness holds) */
    int mode, base, nl, vocab, dtype;
    long after;
    uint64_t mask;
    long calls[MAXL];
    uint64_t stream[MAXL];
    int stream_on[MAXL];
    cache_ent lane_cache[MAXL];
    cache_ent shared[64];
    int32_t last_hist[8192];
    size_t last_n_hist;
    int have_last;
    int32_t hist0[96][96];
    int have_hist0[96];
    int last_adv;      /* the lane most recently advanced (-1: none) */
    int last_sample;   /* the lane of the previous sample call (-1: none) */
} inst;

static inst *insts[MAXI];
static const golden_backend_vtable_v2 *cpu;
static golden_backend_vtable_v2 table;

static inst *find(void *self) {
    for (int i = 0; i < MAXI; i++)
        if (insts[i] && insts[i]->self == self) return insts[i];
    return NULL;
}

static void say(char *msg, size_t len, const char *what) {
    if (msg && len) snprintf(msg, len, "%s", what);
}

static uint64_t mix64(uint64_t z) {
    z ^= z >> 33;
    z *= 0xff51afd7ed558ccdULL;
    z ^= z >> 33;
    z *= 0xc4ceb9fe1a85ec53ULL;
    z ^= z >> 33;
    return z;
}

static uint64_t hash_bytes(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static int parse_lanes(const char *spec, int nl, uint64_t *mask) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    *mask = 0;
    for (char *t = strtok(buf, "+"); t; t = strtok(NULL, "+")) {
        for (int l = 0; l < nl && l < MAXL; l++) {
            int on = 0;
            if (!strcmp(t, "all")) on = 1;
            else if (!strcmp(t, "none")) on = 0;
            else if (!strcmp(t, "last")) on = l == nl - 1;
            else if (!strcmp(t, "odd")) on = l % 2 == 1;
            else if (!strcmp(t, "even")) on = l % 2 == 0;
            else if (!strcmp(t, "mid")) on = l > 0 && l < nl - 1;
            else if (!strncmp(t, "ge", 2)) on = l >= atoi(t + 2);
            else if (t[0] >= '0' && t[0] <= '9') on = l == atoi(t);
            else return -1;
            if (on) *mask |= 1ULL << l;
        }
    }
    return 0;
}

static int rt_open(const golden_backend_open_args *args, void **self, char *msg, size_t len) {
    const char *keys[64], *vals[64];
    size_t n = 0;
    const char *mode = "pass", *lanes = "all", *base = "cpu";
    int want_nl = 0;
    long after = 0;
    for (size_t i = 0; i < args->n_opts; i++) {
        const char *k = args->keys[i], *v = args->values[i];
        if (!strcmp(k, "rt_mode")) mode = v;
        else if (!strcmp(k, "rt_lanes")) lanes = v;
        else if (!strcmp(k, "rt_base")) base = v;
        else if (!strcmp(k, "rt_nl")) want_nl = atoi(v);
        else if (!strcmp(k, "rt_after")) after = atol(v);
        else if (n < 64) {
            keys[n] = k;
            vals[n] = v;
            n++;
        }
    }
    golden_backend_open_args a = *args;
    a.n_opts = n;
    a.keys = keys;
    a.values = vals;
    int rc = cpu->base.open(&a, self, msg, len);
    if (rc) return rc;
    golden_backend_info info;
    memset(&info, 0, sizeof info);
    rc = cpu->base.info(*self, &info, msg, len);
    if (rc) {
        cpu->base.close(*self);
        return rc;
    }
    inst *s = calloc(1, sizeof *s);
    int slot = -1;
    for (int i = 0; i < MAXI; i++)
        if (!insts[i]) {
            slot = i;
            break;
        }
    int m = -1;
    for (int i = 0; mode_names[i]; i++)
        if (!strcmp(mode, mode_names[i])) m = i;
    if (!s || slot < 0 || m < 0 || info.vocab_size > MAXV || info.num_lanes > MAXL ||
        parse_lanes(lanes, info.num_lanes, &s->mask) || (strcmp(base, "cpu") && strcmp(base, "indep"))) {
        free(s);
        cpu->base.close(*self);
        say(msg, len, "rt shim: bad rt_mode, rt_lanes, rt_base or model");
        return GOLDEN_BK_E_INVALID;
    }
    s->self = *self;
    s->mode = m;
    s->base = !strcmp(base, "indep");
    s->nl = info.num_lanes;
    s->vocab = info.vocab_size;
    s->dtype = info.logits_dtype;
    s->after = after;
    s->last_adv = -1;
    s->last_sample = -1;
    if (want_nl && want_nl != info.num_lanes) s->mask = 0;
    insts[slot] = s;
    return 0;
}

static void rt_close(void *self) {
    for (int i = 0; i < MAXI; i++)
        if (insts[i] && insts[i]->self == self) {
            free(insts[i]);
            insts[i] = NULL;
        }
    cpu->base.close(self);
}

static void advanced(void *self, int lane) {
    inst *s = find(self);
    if (s) s->last_adv = lane;
}

static int rt_prefill(void *self, int lane, int64_t pos, const int32_t *tokens, size_t n,
                      char *msg, size_t len) {
    int rc = cpu->base.prefill(self, lane, pos, tokens, n, msg, len);
    if (!rc) advanced(self, lane);
    return rc;
}

static int rt_decode(void *self, int lane, int32_t token, char *msg, size_t len) {
    int rc = cpu->base.decode(self, lane, token, msg, len);
    if (!rc) advanced(self, lane);
    return rc;
}

static int rt_decode_at(void *self, int lane, int64_t pos, int32_t token, int64_t *written,
                        char *msg, size_t len) {
    int rc = cpu->decode_at(self, lane, pos, token, written, msg, len);
    if (!rc) advanced(self, lane);
    return rc;
}

static int rt_prefill_keep(void *self, int lane, int64_t pos, const int32_t *tokens, size_t n,
                           const int64_t *keep, size_t n_keep, char *msg, size_t len) {
    int rc = cpu->prefill_keep(self, lane, pos, tokens, n, keep, n_keep, msg, len);
    if (!rc) advanced(self, lane);
    return rc;
}

static int rt_step_batch(void *self, golden_backend_step *steps, size_t n_steps, char *msg,
                         size_t len) {
    int rc = cpu->step_batch(self, steps, n_steps, msg, len);
    if (!rc)
        for (size_t i = 0; i < n_steps; i++)
            if (!steps[i].status) advanced(self, steps[i].lane);
    return rc;
}

static int read_row(inst *s, int lane, float *row, char *msg, size_t len) {
    if (s->dtype == GOLDEN_BK_BF16) {
        static uint16_t b[MAXV];
        int rc = cpu->base.logits(s->self, lane, 0, s->vocab, b, msg, len);
        if (rc) return rc;
        for (int i = 0; i < s->vocab; i++) {
            uint32_t u = (uint32_t)b[i] << 16;
            memcpy(&row[i], &u, 4);
        }
        return 0;
    }
    return cpu->base.logits(s->self, lane, 0, s->vocab, row, msg, len);
}

/* The documented chain on row (penalised here), into d; greedy: d->n = 1. */
static int g_tempfirst, g_pendup;
static void chain(const float *raw, int V, const golden_backend_sampling *sp, int last_n_div,
                  const int32_t *hist, size_t n_hist, dist *d, int greedy_rank) {
    static float l[MAXV];
    static int idx[MAXV];
    static unsigned char seen[MAXV];
    memcpy(l, raw, sizeof(float) * (size_t)V);
    if (sp->repeat_penalty != 1.0f && sp->repeat_last_n != 0) {
        size_t w = sp->repeat_last_n < 0 ? n_hist : (size_t)sp->repeat_last_n / (size_t)last_n_div;
        if (w > n_hist) w = n_hist;
        memset(seen, 0, (size_t)V);
        for (size_t i = n_hist - w; i < n_hist; i++) {
            int t = hist[i];
            if (t < 0 || t >= V || (seen[t] && !g_pendup)) continue;
            seen[t] = 1;
            if (l[t] > 0) l[t] /= sp->repeat_penalty;
            else l[t] *= sp->repeat_penalty;
        }
    }
    if (g_tempfirst && sp->temp > 0)
        for (int i = 0; i < V; i++) l[i] /= sp->temp;
    for (int i = 0; i < V; i++) idx[i] = i;
    /* insertion sort, largest first, the lower id first among equals (V <= 4096) */
    for (int i = 1; i < V; i++) {
        int x = idx[i], j = i - 1;
        while (j >= 0 && (l[idx[j]] < l[x] || (l[idx[j]] == l[x] && idx[j] > x))) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = x;
    }
    if (sp->temp <= 0) {
        d->n = 1;
        d->id[0] = idx[greedy_rank];
        d->p[0] = 1;
        return;
    }
    int n = V;
    if (sp->top_k > 0 && sp->top_k < n) n = sp->top_k;
    float p[MAXV], mx = l[idx[0]], sum = 0;
    for (int i = 0; i < n; i++) {
        p[i] = expf(l[idx[i]] - mx);
        sum += p[i];
    }
    for (int i = 0; i < n; i++) p[i] /= sum;
    if (sp->top_p < 1.0f) {
        float cum = 0;
        for (int i = 0; i < n; i++) {
            cum += p[i];
            if (cum >= sp->top_p) {
                n = i + 1;
                break;
            }
        }
    }
    if (sp->min_p > 0) {
        float thr = mx + logf(sp->min_p);
        int k = 1;
        while (k < n && l[idx[k]] >= thr) k++;
        n = k;
    }
    float tt = g_tempfirst ? 1.0f : sp->temp;
    float q[MAXV], m2 = l[idx[0]] / tt, s2 = 0;
    for (int i = 0; i < n; i++) {
        q[i] = expf(l[idx[i]] / tt - m2);
        s2 += q[i];
    }
    d->n = n;
    for (int i = 0; i < n; i++) {
        d->id[i] = idx[i];
        d->p[i] = q[i] / s2;
    }
}

static int draw(const dist *d, uint64_t seed) {
    /* a generator unlike the cpu backend's: two rounds of a 64-bit finaliser */
    uint64_t z = mix64(mix64(seed + 0x632be59bd9b4e019ULL) ^ 0x9e3779b97f4a7c15ULL);
    double u = (double)(z >> 11) * (1.0 / 9007199254740992.0), c = 0;
    for (int i = 0; i < d->n; i++) {
        c += d->p[i];
        if (u < c) return d->id[i];
    }
    return d->id[d->n - 1];
}

static int same_key(const cache_ent *c, const golden_backend_sampling *sp) {
    return c->valid && c->temp == sp->temp && c->top_k == sp->top_k && c->top_p == sp->top_p &&
           c->min_p == sp->min_p && c->rp == sp->repeat_penalty && c->last_n == sp->repeat_last_n;
}

static void set_key(cache_ent *c, const golden_backend_sampling *sp) {
    c->valid = 1;
    c->temp = sp->temp;
    c->top_k = sp->top_k;
    c->top_p = sp->top_p;
    c->min_p = sp->min_p;
    c->rp = sp->repeat_penalty;
    c->last_n = sp->repeat_last_n;
}

static int rt_sample(void *self, int lane, const golden_backend_sampling *sp, int32_t *token,
                     char *msg, size_t len) {
    inst *s = find(self);
    if (!s || lane < 0 || lane >= s->nl) {
        say(msg, len, "rt shim: no such instance or lane");
        return GOLDEN_BK_E_INVALID;
    }
    long call = s->calls[lane]++;
    int faulty = ((s->mask >> lane) & 1) && call >= s->after;
    int mode = faulty ? s->mode : M_PASS;
    int fill_shared = s->mode == M_SHAREDCACHE;
    int switched = s->last_sample >= 0 && s->last_sample != lane;
    s->last_sample = lane;
    if (mode == M_SWITCH && !switched) mode = M_PASS;
    size_t nd = sp->n_draws > 1 ? sp->n_draws : 1;
    if (nd > GOLDEN_BK_MAX_DRAWS) {
        say(msg, len, "rt shim: too many draws");
        return GOLDEN_BK_E_INVALID;
    }
    static uint64_t seeds[GOLDEN_BK_MAX_DRAWS];
    for (size_t i = 0; i < nd; i++) seeds[i] = sp->n_draws > 1 ? sp->seeds[i] : sp->seed;
    golden_backend_sampling t = *sp;
    const int32_t *hist = sp->history;
    size_t n_hist = sp->n_history;
    int src = lane, last_div = 1, grank = 0, rc;
    switch (mode) {
    case M_NOCUT: t.top_k = 0, t.top_p = 1, t.min_p = 0; break;
    case M_TEMP1: if (t.temp > 0) t.temp = 1; break;
    case M_NOPEN: t.repeat_penalty = 1; break;
    case M_GREEDY2: grank = 1; break;
    case M_LANE0: src = 0; break;
    case M_NEXTLANE: src = lane > 0 ? lane - 1 : lane; break;
    case M_LASTROW: src = s->last_adv >= 0 ? s->last_adv : lane; break;
    case M_HISTHALF: last_div = 2; break;
    case M_HIST0:
        if (lane > 0 && n_hist < 96 && s->have_hist0[n_hist]) hist = s->hist0[n_hist];
        break;
    case M_ERR:
        say(msg, len, "rt shim: the device sampler failed");
        return GOLDEN_BK_E_OTHER;
    case M_BATCHSHIFT:
        for (size_t i = nd; i-- > 8;) seeds[i] = seeds[i - 1];
        break;
    case M_SINGLEDIFF:
        if (nd == 1) seeds[0] = mix64(seeds[0] + 12345);
        break;
    case M_CALLSTREAM:
        for (size_t i = 1; i < nd; i++) seeds[i] = mix64(seeds[0] + i);
        break;
    case M_LASTHIST:
        if (s->have_last) hist = s->last_hist, n_hist = s->last_n_hist;
        break;
    case M_SEEDCTR:
        for (size_t i = 0; i < nd; i++) seeds[i] ^= mix64((uint64_t)call + 1);
        break;
    case M_XORLANE:
        for (size_t i = 0; i < nd; i++) seeds[i] = mix64(seeds[i] ^ (0x5851f42d4c957f2dULL * (uint64_t)(lane + 1)));
        break;
    case M_STREAM:
        if (!s->stream_on[lane]) s->stream_on[lane] = 1, s->stream[lane] = seeds[0];
        for (size_t i = 0; i < nd; i++) seeds[i] = mix64(s->stream[lane]++);
        break;
    default: break;
    }
    if (lane == 0 && sp->n_history < 96) {
        if (sp->n_history) memcpy(s->hist0[sp->n_history], sp->history, sp->n_history * sizeof(int32_t));
        s->have_hist0[sp->n_history] = 1;
    }
    /* remember this call's history for the next (lasthist) */
    if (sp->n_history <= sizeof s->last_hist / sizeof s->last_hist[0]) {
        if (sp->n_history) memcpy(s->last_hist, sp->history, sp->n_history * sizeof(int32_t));
        s->last_n_hist = sp->n_history;
        s->have_last = 1;
    }
    int need_dist = s->base || mode == M_GREEDY2 || mode == M_BOOST || mode == M_STALECACHE ||
                    mode == M_SHAREDCACHE || mode == M_LASTHIST || mode == M_HISTHALF ||
                    mode == M_CACHE || mode == M_NEXTLANE || mode == M_LANE0 || fill_shared ||
                    mode == M_TEMPFIRST || mode == M_RAREBIAS || mode == M_PENDUP || mode == M_HIST0 ||
                    mode == M_OOV || mode == M_LASTROW || mode == M_SWITCH;
    if (!need_dist) {
        /* the cpu backend's own sampler with the (changed) settings and seeds */
        t.n_draws = nd > 1 ? nd : sp->n_draws;
        if (nd > 1) t.seeds = seeds;
        else t.seed = seeds[0];
        t.history = hist;
        t.n_history = n_hist;
        return cpu->sample(s->self, src, &t, token, msg, len);
    }
    static float row[MAXV];
    static dist dd;
    if ((rc = read_row(s, src, row, msg, len))) return rc;
    dist *d = &dd;
    if (mode == M_STALECACHE || mode == M_CACHE) {
        cache_ent *c = &s->lane_cache[lane];
        uint64_t lh = hash_bytes(row, sizeof(float) * (size_t)s->vocab);
        uint64_t hh = hash_bytes(hist, n_hist * sizeof(int32_t));
        int hit = same_key(c, &t) &&
                  (mode == M_STALECACHE || (c->logit_hash == lh && c->hist_hash == hh && c->n_hist == n_hist));
        if (!hit) {
            chain(row, s->vocab, &t, 1, hist, n_hist, &c->d, 0);
            set_key(c, &t);
            c->logit_hash = lh, c->hist_hash = hh, c->n_hist = n_hist;
        }
        d = &c->d;
    } else if (fill_shared) {
        cache_ent *c = &s->shared[n_hist % 64];
        if (mode != M_SHAREDCACHE || !(same_key(c, &t) && c->n_hist == n_hist)) {
            chain(row, s->vocab, &t, 1, hist, n_hist, &c->d, 0);
            set_key(c, &t);
            c->n_hist = n_hist;
        }
        d = &c->d;
    } else {
        g_tempfirst = mode == M_TEMPFIRST;
        g_pendup = mode == M_PENDUP;
        chain(row, s->vocab, &t, last_div, hist, n_hist, &dd, grank);
        g_tempfirst = g_pendup = 0;
        if (mode == M_RAREBIAS && dd.n > 1) {
            dd.p[dd.n - 1] *= 1.5;
            double z = 0;
            for (int i = 0; i < dd.n; i++) z += dd.p[i];
            for (int i = 0; i < dd.n; i++) dd.p[i] /= z;
        }
    }
    for (size_t i = 0; i < nd; i++) {
        int tok = draw(d, seeds[i]);
        if ((mode == M_BOOST || mode == M_SWITCH) && (mix64(seeds[i] ^ 0xabcdef1234567ULL) & 1)) tok = d->id[0];
        token[i] = tok;
    }
    if (mode == M_OOV) token[nd - 1] = s->vocab;
    return 0;
}

GOLDEN_API const golden_backend_vtable_v2 *golden_backend_entry_v2(void);
GOLDEN_API const golden_backend_vtable_v2 *golden_backend_entry_v2(void) {
    const golden_backend_vtable *b = golden_cpu_backend();
    if (!b || b->abi_version != 2) return NULL;
    cpu = (const golden_backend_vtable_v2 *)b;
    if (!GOLDEN_BACKEND_V2_HAS(cpu, sample)) return NULL;
    table = *cpu;
    table.size = sizeof table;
    table.base.name = "rt11";
    table.base.open = rt_open;
    table.base.close = rt_close;
    table.sample = rt_sample;
    table.base.prefill = rt_prefill;
    table.base.decode = rt_decode;
    table.decode_at = rt_decode_at;
    table.prefill_keep = rt_prefill_keep;
    if (cpu->step_batch) table.step_batch = rt_step_batch;
    return &table;
}
