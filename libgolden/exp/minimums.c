/* Rule input-minimums: the input manifest carries handbook section 5.2's minimum samples,
 * counted from what is really there: distinct prompts by the hash of their token ids (never
 * a declared count), per set and, for random and repeated tokens, per length; every expert of
 * every layer hit, proven from the router taps of the folder's goldens (golden/ *.h5), never
 * from a claim; the hypothesis's input_minimums may raise a minimum, and lower one only with an
 * input_minimums_waiver (reason, approver), which the report shows. */
#include "exp/internal.h"
#include "golden/hash.h"
#include "golden/store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

#define RULE "input-minimums"

const char *const exp_datasets[] = {"fixed_prompt", "random_tokens", "repeated_tokens",
                                    "multilingual", "code", "numeric", "moe_expert_coverage",
                                    "near_tie_logits", NULL};
enum { DS_FIXED, DS_RANDOM, DS_REPEATED, DS_MULTI, DS_CODE, DS_NUMERIC, DS_COVERAGE, DS_NEAR_TIE,
       DS_N };

int exp_dataset_index(const char *name)
{
    for (int i = 0; name && exp_datasets[i]; i++)
        if (strcmp(name, exp_datasets[i]) == 0)
            return i;
    return -1;
}

/* The minimums: hypothesis key, the set it counts, section 5.2's value. */
typedef struct {
    const char *key;
    int dataset;
    long long handbook;
    bool per_length;
} minimum;

static const minimum MINIMUMS[] = {
    {"fixed_prompt", DS_FIXED, 100, false},      {"random_per_length", DS_RANDOM, 20, true},
    {"repeated_per_length", DS_REPEATED, 10, true}, {"multilingual", DS_MULTI, 50, false},
    {"code", DS_CODE, 50, false},                {"numeric", DS_NUMERIC, 50, false},
    {"near_tie_steps", DS_NEAR_TIE, 1000, false},
};
#define NMIN (sizeof MINIMUMS / sizeof MINIMUMS[0])

/* One counted case: its set, shape and the hash of its token ids. */
typedef struct {
    int dataset;
    bool decode;
    long long len; /* prompt tokens (prefill) or past tokens (decode) */
    char hex[65];
    size_t ord;     /* the case's place in the manifest */
    bool dropped;   /* its ids already count for an earlier case of another set */
} counted;

/* One length that must carry random and repeated prompts. */
typedef struct {
    bool decode;
    long long len;
    long long have[2]; /* distinct random, repeated */
} need_len;

typedef struct {
    vctx *c;
    const golden_doc *h;
    char file[1024];   /* the input manifest as shown */
    const char *approver, *reason; /* the waiver, or NULL */
    long long want[NMIN];
    bool lowered[NMIN];
    bool coverage, coverage_lowered;
    counted *cs;
    size_t ncs, capcs;
    need_len *lens;
    size_t nlens, caplens;
    long long have[DS_N];  /* distinct prompts per set (per-length sets: over all lengths) */
    size_t no_tokens, bad_tokens;
    unsigned no_tokens_sets; /* bit per set of the cases without a token file */
} mins;

/* The ids of one token file hashed as little-endian int64s: 1 hashed, 0 not a list of ids,
 * -1 out of memory (c->err set). */
static int token_hash(vctx *c, const char *rel, char hex[65])
{
    char full[PATH_MAX * 2];
    snprintf(full, sizeof full, "%s/%s", c->root, rel);
    golden_doc *d = NULL;
    golden_error e;
    if (golden_doc_load_file(full, &d, &e) != 0) {
        if (e.code != GOLDEN_ENOMEM)
            return 0;
        if (c->err)
            *c->err = e;
        return -1;
    }
    json_t *a = golden_doc_root(d);
    int rc = json_is_array(a) && json_array_size(a) > 0;
    golden_sha256 *sh = rc ? golden_sha256_new(&e) : NULL;
    rc = rc && sh;
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        if (!rc)
            break;
        if (!json_is_integer(v) || json_integer_value(v) < 0) {
            rc = 0;
            break;
        }
        uint64_t x = (uint64_t)json_integer_value(v);
        unsigned char b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)(x >> (8 * k));
        rc = golden_sha256_update(sh, b, 8, &e) == 0;
    }
    bool oom = json_is_array(a) && json_array_size(a) > 0 && !sh;
    if (rc)
        rc = golden_sha256_final(sh, hex, &e) == 0;
    golden_sha256_free(sh);
    golden_doc_free(d);
    if (oom && c->err)
        *c->err = e;
    return oom ? -1 : rc;
}

static int add_len(mins *m, bool decode, long long len)
{
    for (size_t i = 0; i < m->nlens; i++)
        if (m->lens[i].decode == decode && m->lens[i].len == len)
            return 0;
    if (VEC_GROW(m->lens, m->nlens, m->caplens, 16) != 0)
        return golden_fail_what(m->c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    m->lens[m->nlens++] = (need_len){decode, len, {0, 0}};
    return 0;
}

static int cmp_counted(const void *pa, const void *pb)
{
    const counted *a = pa, *b = pb;
    if (a->dataset != b->dataset)
        return a->dataset < b->dataset ? -1 : 1;
    if (a->decode != b->decode)
        return a->decode ? 1 : -1;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    return strcmp(a->hex, b->hex);
}

/* By token hash, then manifest order: one prompt is one sample. */
static int cmp_hash_ord(const void *pa, const void *pb)
{
    const counted *a = pa, *b = pb;
    int h = strcmp(a->hex, b->hex);
    return h ? h : a->ord < b->ord ? -1 : a->ord > b->ord;
}

/* A prompt (the same token ids) in two sets counts once, for the set of its first case in the
 * manifest; each later case of another set is an error naming both cases. */
static int cross_set_dups(mins *m, const jl_state *s)
{
    vctx *c = m->c;
    if (m->ncs)
        qsort(m->cs, m->ncs, sizeof *m->cs, cmp_hash_ord);
    for (size_t i = 1, g = 0; i < m->ncs; i++) {
        if (strcmp(m->cs[i].hex, m->cs[g].hex) != 0) {
            g = i; /* the first case of this prompt */
            continue;
        }
        if (m->cs[i].dataset == m->cs[g].dataset)
            continue; /* within one set: counted once there (per length) */
        m->cs[i].dropped = true;
        const input_case *a = &s->cases[m->cs[i].ord], *b = &s->cases[m->cs[g].ord];
        if (golden_findings_add(c->out, GOLDEN_SEV_ERROR, RULE, m->file, (int)a->line, 1,
                                "/input", c->err,
                                "case %s (%s) has the token ids of case %s (%s): one prompt is "
                                "one sample, counted once, for %s", a->id,
                                exp_datasets[m->cs[i].dataset], b->id,
                                exp_datasets[m->cs[g].dataset], exp_datasets[m->cs[g].dataset]))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

/* Every runnable case of a known set with a readable token file, counted once per distinct
 * token hash (per length for random and repeated tokens). */
static int count_cases(mins *m, const jl_state *s)
{
    vctx *c = m->c;
    for (size_t i = 0; i < s->ncases; i++) {
        const input_case *ic = &s->cases[i];
        if (ic->rejection) /* never run: no sample of anything */
            continue;
        if (ic->dataset < 0) {
            if (golden_findings_add(c->out, GOLDEN_SEV_ERROR, RULE, m->file, (int)ic->line, 1,
                                    "/dataset", c->err,
                                    "case %s is in no section 5.2 set: counted nowhere", ic->id))
                return GOLDEN_ERR;
            continue;
        }
        long long len = ic->decode ? ic->past : ic->prompt;
        if ((ic->dataset == DS_RANDOM || ic->dataset == DS_REPEATED) &&
            add_len(m, ic->decode, len) != 0)
            return GOLDEN_ERR;
        counted k = {ic->dataset, ic->decode, len, "", i, false};
        if (!ic->input || !exp_has_asset(c, ic->input)) {
            m->no_tokens++; /* artifact-exists names a missing file; nothing to count */
            m->no_tokens_sets |= 1u << ic->dataset;
            continue;
        }
        int th = token_hash(c, ic->input, k.hex);
        if (th < 0)
            return GOLDEN_ERR;
        if (th == 0) {
            m->bad_tokens++;
            if (golden_findings_add(c->out, GOLDEN_SEV_ERROR, RULE, m->file, (int)ic->line, 1,
                                    "/input", c->err,
                                    "case %s: %s is not a list of token ids: not counted", ic->id,
                                    ic->input))
                return GOLDEN_ERR;
            continue;
        }
        if (k.dataset != DS_RANDOM && k.dataset != DS_REPEATED)
            k.decode = false, k.len = 0; /* counted over all lengths */
        if (VEC_GROW(m->cs, m->ncs, m->capcs, 256) != 0)
            return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
        m->cs[m->ncs++] = k;
    }
    if (cross_set_dups(m, s) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (m->ncs)
        qsort(m->cs, m->ncs, sizeof *m->cs, cmp_counted);
    for (size_t i = 0; i < m->ncs; i++) {
        const counted *k = &m->cs[i];
        if (k->dropped || (i > 0 && cmp_counted(k, &m->cs[i - 1]) == 0))
            continue; /* counted for another set, or the same prompt again */
        m->have[k->dataset]++;
        for (size_t j = 0; j < m->nlens; j++)
            if ((k->dataset == DS_RANDOM || k->dataset == DS_REPEATED) &&
                m->lens[j].decode == k->decode && m->lens[j].len == k->len)
                m->lens[j].have[k->dataset == DS_REPEATED]++;
    }
    return GOLDEN_OK;
}

/* The hypothesis's lengths that a case can run at must carry the per-length sets too (a prefill
 * of p tokens and one output; a decode of past tokens, one token and one step). */
static int hypothesis_lens(mins *m, long long limit)
{
    json_t *mat = m->h ? json_object_get(golden_doc_root(m->h), "matrix") : NULL;
    const char *keys[2] = {"prompt_tokens", "past_tokens"};
    for (int d = 0; d < 2; d++) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(mat, keys[d]), i, v) {
            if (!json_is_integer(v))
                continue; /* the schema says so */
            long long n = json_integer_value(v);
            if (n > 0 && n <= limit - 1 - d && add_len(m, d == 1, n) != 0)
                return GOLDEN_ERR;
        }
    }
    return GOLDEN_OK;
}

/* The minimums in force: the handbook's, raised by the hypothesis, lowered only by a waiver. */
static int read_minimums(mins *m)
{
    vctx *c = m->c;
    json_t *root = m->h ? golden_doc_root(m->h) : NULL;
    json_t *w = json_object_get(root, "input_minimums_waiver");
    const char *ap = exp_sget(w, "approver"), *re = exp_sget(w, "reason");
    if (ap && ap[0] && re && re[0]) {
        m->approver = ap;
        m->reason = re;
    }
    json_t *im = json_object_get(root, "input_minimums");
    for (size_t i = 0; i < NMIN; i++) {
        m->want[i] = MINIMUMS[i].handbook;
        long long v;
        int k = im ? exp_int_key(c, m->h, im, "/input_minimums", MINIMUMS[i].key, RULE, &v) : 0;
        if (k < 0)
            return GOLDEN_ERR;
        if (k != 1)
            continue;
        if (v >= MINIMUMS[i].handbook || m->approver) {
            m->want[i] = v < 0 ? 0 : v;
            m->lowered[i] = v < MINIMUMS[i].handbook;
            continue;
        }
        char p[128];
        snprintf(p, sizeof p, "/input_minimums/%s", MINIMUMS[i].key);
        if (exp_add_node(c, GOLDEN_SEV_ERROR, RULE, m->h, p,
                         "input_minimums.%s %lld lowers section 5.2's minimum %lld without an "
                         "input_minimums_waiver (reason and approver): the handbook's %lld holds",
                         MINIMUMS[i].key, v, MINIMUMS[i].handbook, MINIMUMS[i].handbook))
            return GOLDEN_ERR;
    }
    m->coverage = true;
    json_t *cov = json_object_get(im, "expert_coverage");
    if (json_is_false(cov)) {
        if (m->approver) {
            m->coverage = false;
            m->coverage_lowered = true;
        } else if (exp_add_node(c, GOLDEN_SEV_ERROR, RULE, m->h, "/input_minimums/expert_coverage",
                                "input_minimums.expert_coverage false drops section 5.2's "
                                "coverage of every expert without an input_minimums_waiver: "
                                "coverage is still required")) {
            return GOLDEN_ERR;
        }
    }
    return GOLDEN_OK;
}

/* A shortfall: an error against the minimum in force; a note when only a waiver lowered it. */
static int shortfall(mins *m, size_t i, const char *what, long long have)
{
    const minimum *mn = &MINIMUMS[i];
    vctx *c = m->c;
    const char *src = m->want[i] > mn->handbook ? " (raised by the hypothesis's input_minimums)"
                      : m->lowered[i]           ? " (lowered by the waiver)" : " (section 5.2)";
    if (have < m->want[i])
        return golden_findings_add(c->out, GOLDEN_SEV_ERROR, RULE, m->file, 0, 0, "", c->err,
                                   "%s: %lld distinct prompt%s (by token hash), minimum %lld%s",
                                   what, have, have == 1 ? "" : "s", m->want[i], src);
    if (have < mn->handbook)
        return golden_findings_add(c->out, GOLDEN_SEV_NOTE, RULE, m->file, 0, 0, "", c->err,
                                   "%s: %lld distinct prompt%s, under section 5.2's %lld: "
                                   "waived by %s", what, have, have == 1 ? "" : "s", mn->handbook,
                                   m->approver);
    return GOLDEN_OK;
}

static int check_counts(mins *m)
{
    for (size_t i = 0; i < NMIN; i++) {
        const minimum *mn = &MINIMUMS[i];
        if (!mn->per_length) {
            if (shortfall(m, i, exp_datasets[mn->dataset], m->have[mn->dataset]) != 0)
                return GOLDEN_ERR;
            continue;
        }
        for (size_t j = 0; j < m->nlens; j++) {
            char what[160];
            snprintf(what, sizeof what, "%s at %s length %lld", exp_datasets[mn->dataset],
                     m->lens[j].decode ? "decode past" : "prefill", m->lens[j].len);
            if (shortfall(m, i, what, m->lens[j].have[mn->dataset == DS_REPEATED]) != 0)
                return GOLDEN_ERR;
        }
    }
    vctx *c = m->c;
    if (!m->no_tokens)
        return GOLDEN_OK;
    /* a to-do (the samples are still to come), a note only when the waiver lowered the minimum
     * of every set those cases belong to (then the waiver covers them) */
    bool waived = m->approver != NULL;
    for (int d = 0; d < DS_N; d++) {
        if (!(m->no_tokens_sets & (1u << d)))
            continue;
        bool lw = d == DS_COVERAGE && m->coverage_lowered;
        for (size_t i = 0; i < NMIN; i++)
            if (MINIMUMS[i].dataset == d && m->lowered[i])
                lw = true;
        waived = waived && lw;
    }
    char tail[600] = "";
    if (waived)
        snprintf(tail, sizeof tail, "; their sets' minimums waived by %s", m->approver);
    if (golden_findings_add(c->out, waived ? GOLDEN_SEV_NOTE : GOLDEN_SEV_TODO, RULE, m->file, 0,
                            0, "", c->err,
                            "%zu runnable case%s carr%s no token file in the folder (input): "
                            "counted nowhere%s", m->no_tokens, m->no_tokens == 1 ? "" : "s",
                            m->no_tokens == 1 ? "ies" : "y", tail))
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

/* Router taps of the folder's goldens: which expert of which layer a manifest case hit. */
typedef struct {
    int layer;
    long long experts;   /* router/logits' width, -1 until seen */
    unsigned char *hit;  /* [experts] */
    bool has_ids;
} layer_hits;

typedef struct {
    layer_hits *l;
    size_t n, cap;
    size_t goldens, taps;
} coverage;

static layer_hits *layer_get(coverage *cv, int layer, golden_error *err)
{
    for (size_t i = 0; i < cv->n; i++)
        if (cv->l[i].layer == layer)
            return &cv->l[i];
    if (VEC_GROW(cv->l, cv->n, cv->cap, 8) != 0) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    cv->l[cv->n] = (layer_hits){layer, -1, NULL, false};
    return &cv->l[cv->n++];
}

/* "cases/<id>/layers/<L>/router/<what>" of a case in the manifest: 1 and layer set. */
static int router_name(const jl_state *s, const char *name, const char *what, int *layer)
{
    if (strncmp(name, "cases/", 6) != 0)
        return 0;
    const char *id = name + 6, *p = strstr(id, "/layers/");
    if (!p || (size_t)(p - id) >= 256)
        return 0;
    char cid[256];
    memcpy(cid, id, (size_t)(p - id));
    cid[p - id] = 0;
    const input_case *ic = exp_find_case(s, cid);
    if (!ic || ic->rejection)
        return 0;
    const char *end = p + 8;
    long l = 0;
    while (*end >= '0' && *end <= '9' && l <= 65535)
        l = l * 10 + (*end++ - '0');
    if (end == p + 8 || l > 65535 || strncmp(end, "/router/", 8) != 0 ||
        strcmp(end + 8, what) != 0)
        return 0;
    *layer = (int)l;
    return 1;
}

/* One golden: experts per layer from router/logits, then the hits of router/topk_ids. */
static int golden_hits(vctx *c, const jl_state *s, const char *rel, coverage *cv)
{
    char full[PATH_MAX * 2];
    snprintf(full, sizeof full, "%s/%s", c->root, rel);
    golden_reader *r = NULL;
    if (golden_reader_open(full, &r, c->err) != 0)
        return GOLDEN_ERR;
    size_t n = golden_reader_count(r);
    int rc = GOLDEN_OK, layer;
    for (int pass = 0; rc == GOLDEN_OK && pass < 2; pass++) {
        for (size_t i = 0; rc == GOLDEN_OK && i < n; i++) {
            const golden_tensor_info *t = golden_reader_tensor(r, i);
            if (!router_name(s, t->name, pass ? "topk_ids" : "logits", &layer) || t->rank != 2)
                continue;
            layer_hits *lh = layer_get(cv, layer, c->err);
            if (!lh) {
                rc = GOLDEN_ERR;
            } else if (pass == 0) {
                if (t->shape[1] == 0 || t->shape[1] > (1u << 20)) {
                    lh->experts = -2; /* no experts, or a million: nothing proven */
                } else if (lh->experts == -1) {
                    lh->experts = (long long)t->shape[1];
                    lh->hit = calloc(t->shape[1] ? t->shape[1] : 1, 1);
                    if (!lh->hit)
                        rc = golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
                } else if (lh->experts != (long long)t->shape[1]) {
                    lh->experts = -2; /* disagreeing widths: nothing is proven for the layer */
                }
            } else if (t->dtype == GOLDEN_I32 && lh->experts > 0 && t->count < (1u << 28)) {
                int32_t *ids = malloc(t->count ? t->count * sizeof *ids : 1);
                if (!ids || golden_reader_read(r, i, 0, t->count, ids, c->err) != 0) {
                    rc = ids ? GOLDEN_ERR : golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
                } else {
                    lh->has_ids = true;
                    cv->taps++;
                    for (uint64_t k = 0; k < t->count; k++)
                        if (ids[k] >= 0 && ids[k] < lh->experts)
                            lh->hit[ids[k]] = 1;
                }
                free(ids);
            }
        }
    }
    golden_reader_close(r);
    return rc;
}

/* Every expert of every routed layer hit by a manifest case, from the goldens' router taps. */
static int check_coverage(mins *m, const jl_state *s)
{
    vctx *c = m->c;
    coverage cv = {0};
    int rc = GOLDEN_OK;
    for (size_t i = 0; rc == GOLDEN_OK && i < c->nassets; i++) {
        const char *a = c->assets[i];
        size_t n = strlen(a);
        if (strncmp(a, "golden/", 7) != 0 || n < 10 || strcmp(a + n - 3, ".h5") != 0)
            continue;
        cv.goldens++;
        rc = golden_hits(c, s, a, &cv);
    }
    char msg[900] = "";
    bool proven = rc == GOLDEN_OK && cv.taps > 0;
    for (size_t i = 0; rc == GOLDEN_OK && i < cv.n && !msg[0]; i++) {
        const layer_hits *lh = &cv.l[i];
        if (lh->experts < 0 || !lh->has_ids) {
            snprintf(msg, sizeof msg, "layer %d's router taps %s: expert coverage not proven",
                     lh->layer, lh->experts == -2 ? "disagree on the number of experts"
                                : lh->experts == -1 ? "have topk_ids but no router/logits (the "
                                                      "number of experts is unknown)"
                                                    : "have logits but no readable i32 topk_ids");
            proven = false;
            continue;
        }
        long long hit = 0, first = -1;
        for (long long e = 0; e < lh->experts; e++) {
            hit += lh->hit[e];
            if (!lh->hit[e] && first < 0)
                first = e;
        }
        if (hit < lh->experts)
            snprintf(msg, sizeof msg, "layer %d: %lld of %lld experts hit by the manifest's cases "
                     "in the goldens' router taps (expert %lld never routed to)", lh->layer, hit,
                     lh->experts, first);
    }
    if (rc == GOLDEN_OK && !proven && !msg[0])
        snprintf(msg, sizeof msg, "expert coverage not proven: %s", cv.goldens
                 ? "no golden under golden/ has router taps (router/topk_ids) of a manifest case"
                 : "the folder has no golden (golden/*.h5) whose router taps could prove it");
    if (rc == GOLDEN_OK && msg[0])
        rc = m->coverage
            ? golden_findings_add(c->out, GOLDEN_SEV_ERROR, RULE, m->file, 0, 0, "", c->err,
                                  "moe_expert_coverage: %s", msg)
            : golden_findings_add(c->out, GOLDEN_SEV_NOTE, RULE, m->file, 0, 0, "", c->err,
                                  "moe_expert_coverage: %s; waived by %s", msg, m->approver);
    for (size_t i = 0; i < cv.n; i++)
        free(cv.l[i].hit);
    free(cv.l);
    return rc;
}

int exp_input_minimums_rule(jl_state *s, const golden_doc *h, const char *rel)
{
    mins m;
    memset(&m, 0, sizeof m);
    m.c = s->c;
    m.h = h;
    exp_disp(s->c, rel, m.file, sizeof m.file);
    int rc = read_minimums(&m);
    if (rc == GOLDEN_OK)
        rc = hypothesis_lens(&m, s->limit);
    if (rc == GOLDEN_OK)
        rc = count_cases(&m, s);
    if (rc == GOLDEN_OK)
        rc = check_counts(&m);
    if (rc == GOLDEN_OK)
        rc = check_coverage(&m, s);
    for (size_t i = 0; rc == GOLDEN_OK && i < NMIN; i++) /* the waiver, shown where it acts */
        if (m.lowered[i] &&
            exp_add_node(m.c, GOLDEN_SEV_NOTE, RULE, h, "/input_minimums_waiver",
                         "input_minimums.%s lowered from section 5.2's %lld to %lld by the "
                         "waiver of %s: %s", MINIMUMS[i].key, MINIMUMS[i].handbook, m.want[i],
                         m.approver, m.reason))
            rc = GOLDEN_ERR;
    if (rc == GOLDEN_OK && m.coverage_lowered &&
        exp_add_node(m.c, GOLDEN_SEV_NOTE, RULE, h, "/input_minimums_waiver",
                     "input_minimums.expert_coverage dropped by the waiver of %s: %s",
                     m.approver, m.reason))
        rc = GOLDEN_ERR;
    free(m.cs);
    free(m.lens);
    return rc;
}
