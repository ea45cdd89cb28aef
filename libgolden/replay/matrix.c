/* npu-replay matrix: the input matrix of handbook section 5 (lengths x content sets), each
 * case's token ids in a file referenced with its hash; rejection cases never submitted. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/doc.h"
#include "golden/hash.h"
#include "golden/replay_run.h"
#include "golden/report.h"
#include "golden/tokenizer.h"

/* Section 5.1's boundaries. */
static const int64_t PREFILL_LENS[] = {1, 2, 15, 16, 17, 31, 32, 33, 127, 128, 129, 511, 512,
                                       513, 1024, 2048, 4096, 8192, 16384, 32768, 40959};
static const int64_t DECODE_PASTS[] = {0, 1, 15, 16, 17, 127, 128, 1023, 1024, 4095, 4096,
                                       8191, 16383, 32767, 40959};

typedef struct {
    int64_t *v;
    size_t n;
} lens;

typedef struct {
    const golden_replay_matrix_opts *o;
    const golden_backend_info *info;
    FILE *man;
    char *dir;        /* the manifest's folder */
    golden_replay_matrix_result *res;
    int32_t *buf;
    size_t cap;
    uint64_t rng;
    int64_t limit;    /* the backend's context limit, or the hypothesis' when smaller */
    char **made;      /* token files this run created: removed when it fails */
    size_t n_made, cap_made;
    uint64_t *seen;   /* hashes of the token lists written so far (every set, every length) */
    size_t n_seen, cap_seen;
} mx;

/* FNV-1a over the count and the ids: one list of token ids, one value. */
static uint64_t ids_hash(const int32_t *ids, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t i = -1; i < n; i++) {
        uint64_t x = i < 0 ? (uint64_t)n : (uint64_t)(uint32_t)ids[i];
        for (int k = 0; k < 8; k++)
            h = (h ^ ((x >> (8 * k)) & 0xff)) * 0x100000001b3ull;
    }
    return h;
}

static bool seen_ids(const mx *m, uint64_t h)
{
    for (size_t i = 0; i < m->n_seen; i++)
        if (m->seen[i] == h)
            return true;
    return false;
}

/* Note a token file created by this run (removed again if the run fails). */
static int note_made(mx *m, const char *path, golden_error *err)
{
    if (m->n_made == m->cap_made) {
        size_t nc = m->cap_made ? 2 * m->cap_made : 64;
        char **n = realloc(m->made, nc * sizeof *n);
        if (!n)
            return golden_fail_what(err, GOLDEN_ENOMEM, m->o->out, "out of memory");
        m->made = n;
        m->cap_made = nc;
    }
    if (!(m->made[m->n_made] = strdup(path)))
        return golden_fail_what(err, GOLDEN_ENOMEM, m->o->out, "out of memory");
    m->n_made++;
    return 0;
}

static uint64_t next64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int32_t rand_token(mx *m) { return (int32_t)(next64(&m->rng) % (uint64_t)m->info->vocab_size); }

static int reserve(mx *m, size_t n, golden_error *err)
{
    if (n <= m->cap)
        return 0;
    int32_t *nb = realloc(m->buf, n * sizeof *nb);
    if (!nb)
        return golden_fail_what(err, GOLDEN_ENOMEM, m->o->out, "out of memory");
    m->buf = nb;
    m->cap = n;
    return 0;
}

static int write_tokens(mx *m, const char *rel, const char *path, const int32_t *ids, int64_t n,
                        golden_error *err);

/* Write ids to inputs/<case>.json and one manifest line pointing at it with its hash. */
static int emit(mx *m, const char *id, const char *dataset, bool decode, int64_t prompt,
                int64_t past, int64_t out, const int32_t *ids, golden_error *err)
{
    bool reject = past + prompt + out > m->limit;
    fprintf(m->man,
            "{\"schema\":\"calculet-input-manifest/v1\",\"case_id\":\"%s\",\"phase\":\"%s\","
            "\"prompt_tokens\":%lld,\"past_tokens\":%lld,\"output_tokens\":%lld,\"concurrency\":1,"
            "\"dataset\":\"%s\",\"seed\":%llu,\"rejection\":%s",
            id, decode ? "decode" : "prefill", (long long)prompt, (long long)past, (long long)out,
            dataset, (unsigned long long)m->o->seed, reject ? "true" : "false");
    m->res->cases++;
    if (reject) {
        m->res->rejections++;
        fputs(",\"expected_error\":\"context_limit_exceeded\"}\n", m->man);
        return 0;
    }
    if (m->n_seen == m->cap_seen) {
        size_t nc = m->cap_seen ? 2 * m->cap_seen : 256;
        uint64_t *n = realloc(m->seen, nc * sizeof *n);
        if (!n)
            return golden_fail_what(err, GOLDEN_ENOMEM, m->o->out, "out of memory");
        m->seen = n;
        m->cap_seen = nc;
    }
    m->seen[m->n_seen++] = ids_hash(ids, past + prompt);
    char rel[300], path[8192];
    snprintf(rel, sizeof rel, "inputs/%s.json", id);
    snprintf(path, sizeof path, "%s/%s", m->dir, rel);
    return write_tokens(m, rel, path, ids, past + prompt, err);
}

/* The token file of one case, and its manifest reference. A file already there (another
 * manifest's in the same folder, or an earlier run's) is kept when it holds the same ids; with
 * other ids it is an error unless --force: overwriting it would break the other manifest's hash. */
static int write_tokens(mx *m, const char *rel, const char *path, const int32_t *ids, int64_t n,
                        golden_error *err)
{
    char *text = NULL, hex[65], old[65];
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    fputc('[', mem);
    for (int64_t i = 0; i < n; i++)
        fprintf(mem, "%s%d", i ? "," : "", ids[i]);
    fputs("]\n", mem);
    int rc = fclose(mem) != 0 ? golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory") : 0;
    if (rc == 0)
        rc = golden_sha256_buffer(text, len, hex, err);
    bool exists = rc == 0 && access(path, F_OK) == 0;
    if (exists && !m->o->force) {
        rc = golden_sha256_file(path, old, err);
        if (rc == 0 && strcmp(old, hex) != 0)
            rc = golden_fail_what(err, GOLDEN_EEXISTS, path, "exists with other token ids (another "
                                  "manifest's input?): --force overwrites it, or write the manifest "
                                  "into another folder");
    } else if (rc == 0) {
        if (!exists)
            rc = note_made(m, path, err);
        FILE *f = rc == 0 ? fopen(path, "w") : NULL;
        if (rc == 0 && !f)
            rc = golden_fail_what(err, golden_code_from_errno(errno), path, "%s", strerror(errno));
        if (f) {
            bool short_write = fwrite(text, 1, len, f) != len;
            if ((fclose(f) != 0) || short_write)
                rc = golden_fail_what(err, GOLDEN_EIO, path, "write failed");
        }
    }
    free(text);
    if (rc != 0)
        return GOLDEN_ERR;
    fprintf(m->man, ",\"input\":{\"path\":\"%s\",\"sha256\":\"%s\"}}\n", rel, hex);
    return 0;
}

/* Random legal tokens and repeated / low-entropy ones for one shape. */
static int content_sets(mx *m, bool decode, int64_t len, int64_t out, golden_error *err)
{
    const golden_replay_matrix_opts *o = m->o;
    /* version 2: 0 is none (--random 0); version 1: 0 was the default */
    int nr = o->random_per_len > 0 || (o->version >= 2 && o->random_per_len == 0)
                 ? o->random_per_len : 20;
    int np = o->repeated_per_len > 0 || (o->version >= 2 && o->repeated_per_len == 0)
                 ? o->repeated_per_len : 10;
    int64_t prompt = decode ? 0 : len, past = decode ? len : 0;
    if (!decode && len == 0)
        return 0;
    if (decode && len == 0) /* a decode with no past still needs one token to start from */
        prompt = 1;
    if (reserve(m, (size_t)(prompt + past) + 1, err))
        return GOLDEN_ERR;
    char id[200];
    bool reject = past + prompt + out > m->limit; /* no token file: nothing to keep distinct */
    for (int i = 0; i < nr + np; i++) {
        bool rep = i >= nr;
        /* each prompt distinct from every one written before (section 5.2 counts distinct
         * prompts by token hash): drawn again when it repeats one (a vocabulary too small for
         * that many gives up after 256 draws, and manifest-verify reports the shortfall) */
        for (int tries = 0; tries < 256; tries++) {
            int32_t a = rand_token(m), b = rand_token(m);
            int period = 1 + (int)(next64(&m->rng) % 4);
            for (int64_t t = 0; t < prompt + past; t++)
                m->buf[t] = !rep ? rand_token(m) : (i - nr) % 2 == 0 ? a : (t % period ? a : b);
            if (reject || !seen_ids(m, ids_hash(m->buf, prompt + past)))
                break;
        }
        snprintf(id, sizeof id, "%s-%s-%s%lld-o%lld-%02d", rep ? "repeated" : "random",
                 decode ? "decode" : "prefill", decode ? "past" : "p", (long long)len,
                 (long long)out, rep ? i - nr : i);
        if (emit(m, id, rep ? "repeated_tokens" : "random_tokens", decode, prompt, past, out,
                 m->buf, err))
            return GOLDEN_ERR;
    }
    return 0;
}

static int read_list(json_t *mat, const char *key, const char *where, lens *l, golden_error *err)
{
    json_t *a = json_object_get(mat, key);
    if (!a)
        return 0;
    size_t i;
    json_t *v;
    if (!json_is_array(a))
        return golden_fail_where(err, GOLDEN_EINVAL, "must be a list of token counts", "%s#/matrix/%s", where, key);
    free(l->v);
    l->v = malloc((json_array_size(a) + 1) * sizeof *l->v);
    l->n = 0;
    if (!l->v)
        return golden_fail_what(err, GOLDEN_ENOMEM, where, "out of memory");
    json_array_foreach(a, i, v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return golden_fail_where(err, GOLDEN_EINVAL, "must be a token count >= 0",
                                     "%s#/matrix/%s/%zu", where, key, i);
        l->v[l->n++] = json_integer_value(v);
    }
    return 0;
}

static int lens_set(lens *l, const int64_t *v, size_t n)
{
    l->v = malloc(n * sizeof *l->v);
    if (!l->v)
        return -1;
    memcpy(l->v, v, n * sizeof *v);
    l->n = n;
    return 0;
}

/* Fixed prompts: one JSON array of ids a line, read by the document layer's strict JSON Lines
 * reader (invalid UTF-8, NUL, over-long lines and bad JSON are errors at file:line:col). */
typedef struct {
    mx *m;
    const lens *outs;
    int k;
} prompt_ctx;

static int prompt_line(void *ctx, golden_doc *d, size_t lno, golden_error *err)
{
    prompt_ctx *pc = ctx;
    mx *m = pc->m;
    const json_t *a = golden_doc_root(d);
    char where[1200];
    golden_doc_where(d, a, where, sizeof where);
    if (!json_is_array(a) || json_array_size(a) == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, where, "line %zu is not a list of token ids",
                                lno);
    size_t n = json_array_size(a);
    if (reserve(m, n, err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= m->info->vocab_size) {
            golden_doc_child_where(d, a, NULL, i, where, sizeof where);
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "line %zu: item %zu is not a token id of this model", lno, i);
        }
        m->buf[i] = (int32_t)json_integer_value(v);
    }
    for (size_t j = 0; j < pc->outs->n; j++) {
        char id[200];
        snprintf(id, sizeof id, "fixed-%04d-o%lld", pc->k, (long long)pc->outs->v[j]);
        if (emit(m, id, "fixed_prompt", false, (int64_t)n, 0, pc->outs->v[j] ? pc->outs->v[j] : 1,
                 m->buf, err) != 0)
            return -1;
    }
    pc->k++;
    return 0;
}

static int fixed_prompts(mx *m, const lens *outs, golden_error *err)
{
    prompt_ctx pc = {m, outs, 0};
    return golden_doc_each_jsonl(m->o->prompts, prompt_line, &pc, err) != 0 ? -1 : 0;
}

/* Labelled texts (--texts): one JSON object a line, {"domain": D, "text": T}, D one of the
 * section 5.2 sets that come from text; T encoded with the tokenizer, each id checked against
 * the model's vocabulary; one case per output length, its dataset the domain. */
static const char *const TEXT_DOMAINS[] = {"fixed_prompt", "multilingual", "code", "numeric", NULL};

typedef struct {
    mx *m;
    const lens *outs;
    golden_tokenizer *tok;
    int k[4]; /* texts so far per domain */
} text_ctx;

static int text_line(void *ctx, golden_doc *d, size_t lno, golden_error *err)
{
    text_ctx *tc = ctx;
    mx *m = tc->m;
    const json_t *o = golden_doc_root(d);
    char where[1200];
    golden_doc_where(d, o, where, sizeof where);
    if (!json_is_object(o))
        return golden_fail_what(err, GOLDEN_EINVAL, where,
                                "line %zu is not an object {\"domain\": ..., \"text\": ...}", lno);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        if (strcmp(key, "domain") != 0 && strcmp(key, "text") != 0) {
            golden_doc_where(d, v, where, sizeof where);
            return golden_fail_what(err, GOLDEN_EINVAL, where,
                                    "line %zu: unknown key '%s' (domain and text only)", lno, key);
        }
    }
    json_t *dv = json_object_get(o, "domain"), *tv = json_object_get(o, "text");
    int di = -1;
    for (int i = 0; dv && json_is_string(dv) && TEXT_DOMAINS[i]; i++)
        if (strcmp(json_string_value(dv), TEXT_DOMAINS[i]) == 0)
            di = i;
    if (di < 0) {
        golden_doc_where(d, dv ? dv : o, where, sizeof where);
        return golden_fail_what(err, GOLDEN_EINVAL, where, "line %zu: domain must be one of "
                                "fixed_prompt, multilingual, code, numeric", lno);
    }
    if (!json_is_string(tv) || json_string_length(tv) == 0) {
        golden_doc_where(d, tv ? tv : o, where, sizeof where);
        return golden_fail_what(err, GOLDEN_EINVAL, where, "line %zu: text must be a non-empty "
                                "string", lno);
    }
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = golden_tokenizer_encode(tc->tok, json_string_value(tv), json_string_length(tv), &ids,
                                     &n, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->info->vocab_size) {
            golden_doc_where(d, tv, where, sizeof where);
            rc = golden_fail_what(err, GOLDEN_EINVAL, where, "line %zu: token %d is not an id of "
                                  "the model (vocabulary %d): the tokenizer is not the model's",
                                  lno, ids[i], m->info->vocab_size);
        }
    if (rc == 0 && n == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, where, "line %zu: the text encodes to no token", lno);
    if (rc == 0)
        rc = reserve(m, n, err);
    if (rc == 0)
        memcpy(m->buf, ids, n * sizeof *ids);
    free(ids);
    for (size_t j = 0; rc == 0 && j < tc->outs->n; j++) {
        char id[200];
        int64_t out = tc->outs->v[j] ? tc->outs->v[j] : 1;
        snprintf(id, sizeof id, "%s-%04d-o%lld", TEXT_DOMAINS[di], tc->k[di], (long long)out);
        rc = emit(m, id, TEXT_DOMAINS[di], false, (int64_t)n, 0, out, m->buf, err);
    }
    if (rc == 0) {
        tc->k[di]++;
        m->res->texts++;
    }
    return rc ? -1 : 0;
}

static int text_sets(mx *m, const lens *outs, golden_error *err)
{
    text_ctx tc = {m, outs, NULL, {0, 0, 0, 0}};
    golden_tokenizer_opts to = GOLDEN_TOKENIZER_OPTS_INIT;
    if (golden_tokenizer_load(m->o->tokenizer, &to, &tc.tok, err) != 0)
        return -1;
    int rc = golden_doc_each_jsonl(m->o->texts, text_line, &tc, err) != 0 ? -1 : 0;
    if (rc == 0 && tc.k[0] + tc.k[1] + tc.k[2] + tc.k[3] == 0)
        rc = golden_fail_what(err, GOLDEN_EINVAL, m->o->texts, "no text in the file");
    golden_tokenizer_free(tc.tok);
    return rc;
}

/* Router taps during coverage search: which expert of which layer was hit. */
typedef struct {
    unsigned char *hit; /* [layers][experts] */
    int layers, experts;
    bool seen;          /* any router tap at all: a backend without them cannot prove coverage */
} cov;

static int cov_tap(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols,
                   const void *data)
{
    cov *c = ctx;
    size_t nl = strlen(name);
    if (nl < 8 || strcmp(name + nl - 8, "topk_ids") != 0 || dtype != GOLDEN_BK_I32 ||
        layer < 0 || layer >= c->layers)
        return 0;
    const int32_t *ids = data;
    c->seen = true;
    for (int64_t i = 0; i < rows * cols; i++)
        if (ids[i] >= 0 && ids[i] < c->experts)
            c->hit[(size_t)layer * (size_t)c->experts + (size_t)ids[i]] = 1;
    return 0;
}

/* Random 32-token prompts until every expert of every layer has been routed to, proven from the
 * backend's router taps (at most 4096 prompts). */
static int coverage(mx *m, golden_error *err)
{
    const golden_backend_info *in = m->info;
    if (in->num_experts < 1 || !m->o->backend)
        return 0;
    cov c = {calloc((size_t)in->num_layers * (size_t)in->num_experts, 1), in->num_layers,
             in->num_experts, false};
    if (!c.hit)
        return golden_fail_what(err, GOLDEN_ENOMEM, "matrix", "out of memory");
    golden_backend_hooks h = {&c, cov_tap, NULL, 1};
    int rc = golden_backend_set_hooks(m->o->backend, &h, err);
    int64_t len = in->context_limit > 33 ? 32 : in->context_limit - 1;
    if (rc == 0)
        rc = reserve(m, (size_t)len, err);
    size_t total = (size_t)in->num_layers * (size_t)in->num_experts, covered = 0;
    for (int k = 0; rc == 0 && covered < total && k < 4096 && len > 0; k++) {
        for (int64_t t = 0; t < len; t++)
            m->buf[t] = rand_token(m);
        size_t before = covered;
        rc = golden_backend_reset(m->o->backend, 0, err);
        if (rc == 0)
            rc = golden_backend_prefill(m->o->backend, 0, 0, m->buf, (size_t)len, err);
        if (rc == 0 && !c.seen)
            break; /* no router taps: coverage cannot be proven, and is reported as not reached */
        covered = 0;
        for (size_t i = 0; i < total; i++)
            covered += c.hit[i];
        if (rc == 0 && covered > before) { /* only prompts that add coverage are kept */
            char id[200];
            snprintf(id, sizeof id, "coverage-p%lld-%04d", (long long)len, k);
            rc = emit(m, id, "moe_expert_coverage", false, len, 0, 1, m->buf, err);
            m->res->coverage_cases++;
        }
    }
    m->res->experts_covered = covered == total;
    golden_backend_hooks none = {NULL, NULL, NULL, 0};
    golden_error e2;
    golden_backend_set_hooks(m->o->backend, &none, &e2);
    free(c.hit);
    return rc;
}

/* Greedy reference steps from random 16-token prompts; every step whose top-2 logit margin is
 * below the threshold becomes a case: its ids so far, one output token (section 6). */
static int near_ties(mx *m, golden_error *err)
{
    const golden_backend_info *in = m->info;
    int budget = m->o->near_tie_steps;
    double margin = m->o->near_tie_margin > 0 ? m->o->near_tie_margin : 1e-3;
    if (budget < 1 || !m->o->backend)
        return 0;
    int64_t plen = 16, maxlen = in->context_limit - 1;
    float *row = malloc((size_t)in->vocab_size * 4);
    void *raw = malloc((size_t)in->vocab_size * 4);
    int rc = row && raw ? reserve(m, (size_t)maxlen + 1, err)
                        : golden_fail_what(err, GOLDEN_ENOMEM, "matrix", "out of memory");
    for (int k = 0; rc == 0 && budget > 0 && plen < maxlen; k++) {
        int64_t n = plen;
        for (int64_t t = 0; t < n; t++)
            m->buf[t] = rand_token(m);
        rc = golden_backend_reset(m->o->backend, 0, err);
        if (rc == 0)
            rc = golden_backend_prefill(m->o->backend, 0, 0, m->buf, (size_t)n, err);
        for (int s = 0; rc == 0 && s < 64 && budget > 0 && n < maxlen; s++, budget--) {
            rc = golden_backend_logits(m->o->backend, 0, 0, in->vocab_size, raw, err);
            if (rc)
                break;
            if (in->logits_dtype == GOLDEN_BK_BF16)
                golden_logits_bf16_to_f32(raw, 0, (size_t)in->vocab_size, row);
            else
                memcpy(row, raw, (size_t)in->vocab_size * 4);
            int best = 0;
            float b1 = row[0], b2 = -INFINITY;
            for (int v = 1; v < in->vocab_size; v++) {
                if (row[v] > b1) {
                    b2 = b1;
                    b1 = row[v];
                    best = v;
                } else if (row[v] > b2) {
                    b2 = row[v];
                }
            }
            if ((double)b1 - (double)b2 < margin) {
                char id[200];
                snprintf(id, sizeof id, "near-tie-p%lld-%04d-%02d", (long long)n, k, s);
                rc = emit(m, id, "near_tie_logits", false, n, 0, 1, m->buf, err);
                m->res->near_ties++;
            }
            m->buf[n++] = best;
            if (rc == 0)
                rc = golden_backend_decode(m->o->backend, 0, best, err);
        }
    }
    free(row);
    free(raw);
    return rc;
}

static bool keep(const mx *m, int64_t n) { return m->o->max_len <= 0 || n <= m->o->max_len; }

static int matrix_body(mx *m, golden_error *err)
{
    const golden_replay_matrix_opts *o = m->o;
    lens pre = {0}, past = {0}, outs = {0};
    int rc = 0;
    int64_t one = 1;
    if (lens_set(&pre, PREFILL_LENS, sizeof PREFILL_LENS / sizeof *PREFILL_LENS) ||
        lens_set(&past, DECODE_PASTS, sizeof DECODE_PASTS / sizeof *DECODE_PASTS) ||
        lens_set(&outs, &one, 1))
        rc = golden_fail_what(err, GOLDEN_ENOMEM, o->out, "out of memory");
    if (rc == 0 && o->hypothesis) {
        golden_doc *d = NULL;
        rc = golden_doc_load_file(o->hypothesis, &d, err);
        json_t *mat = rc == 0 ? json_object_get(golden_doc_root(d), "matrix") : NULL;
        if (rc == 0 && !json_is_object(mat))
            rc = golden_fail_where(err, GOLDEN_EINVAL, "needs a matrix object", "%s#/matrix", o->hypothesis);
        if (rc == 0)
            rc = read_list(mat, "prompt_tokens", o->hypothesis, &pre, err);
        if (rc == 0)
            rc = read_list(mat, "past_tokens", o->hypothesis, &past, err);
        if (rc == 0)
            rc = read_list(mat, "output_tokens", o->hypothesis, &outs, err);
        json_t *cl = rc == 0 ? json_object_get(mat, "context_limit") : NULL;
        if (cl && (!json_is_integer(cl) || json_integer_value(cl) < 1))
            rc = golden_fail_where(err, GOLDEN_EINVAL, "must be a positive token count",
                                   "%s#/matrix/context_limit", o->hypothesis);
        else if (cl && json_integer_value(cl) < m->limit)
            m->limit = json_integer_value(cl);
        golden_doc_free(d);
    }
    int64_t steps = o->decode_steps > 1 ? o->decode_steps : 8;
    for (size_t i = 0; rc == 0 && i < pre.n; i++)
        for (size_t j = 0; rc == 0 && j < outs.n; j++)
            if (keep(m, pre.v[i]))
                rc = content_sets(m, false, pre.v[i], outs.v[j] ? outs.v[j] : 1, err);
    for (size_t i = 0; rc == 0 && i < past.n; i++)
        if (keep(m, past.v[i]))
            rc = content_sets(m, true, past.v[i], steps, err);
    if (rc == 0 && o->prompts)
        rc = fixed_prompts(m, &outs, err);
    if (rc == 0 && o->version >= 3 && (o->texts || o->tokenizer)) {
        if (!o->texts || !o->tokenizer)
            rc = golden_fail_what(err, GOLDEN_EINVAL, o->texts ? o->texts : o->tokenizer,
                                  "labelled texts need both the texts file and the tokenizer");
        else
            rc = text_sets(m, &outs, err);
    }
    if (rc == 0)
        rc = coverage(m, err);
    if (rc == 0)
        rc = near_ties(m, err);
    free(pre.v);
    free(past.v);
    free(outs.v);
    return rc;
}

int golden_replay_matrix(const golden_replay_matrix_opts *o, golden_replay_matrix_result *res,
                         golden_error *err)
{
    memset(res, 0, o->version >= 3 ? sizeof *res : offsetof(golden_replay_matrix_result, texts));
    mx m = {o, golden_backend_get_info(o->backend), NULL, NULL, res, NULL, 0, o->seed, 0, NULL, 0, 0,
            NULL, 0, 0};
    m.limit = m.info->context_limit;
    char *copy = strdup(o->out);
    m.dir = copy ? strdup(dirname(copy)) : NULL;
    free(copy);
    if (!m.dir)
        return golden_fail_what(err, GOLDEN_ENOMEM, o->out, "out of memory");
    char inputs[8192];
    snprintf(inputs, sizeof inputs, "%s/inputs", m.dir);
    int rc = 0;
    bool made_dir = mkdir(inputs, 0777) == 0;
    if (!made_dir && errno != EEXIST)
        rc = golden_fail_what(err, golden_code_from_errno(errno), inputs, "%s", strerror(errno));
    golden_outfile *of = NULL;
    if (rc == 0)
        rc = golden_outfile_open(o->out, o->force, &of, err);
    if (rc == 0) {
        m.man = golden_outfile_stream(of);
        rc = matrix_body(&m, err);
    }
    if (rc == 0)
        rc = golden_outfile_commit(of, err);
    else
        golden_outfile_abort(of);
    for (size_t i = 0; i < m.n_made; i++) { /* a failed matrix leaves no token file behind */
        if (rc != 0)
            unlink(m.made[i]);
        free(m.made[i]);
    }
    if (rc != 0 && made_dir)
        rmdir(inputs);
    free(m.made);
    free(m.seen);
    free(m.buf);
    free(m.dir);
    return rc;
}
