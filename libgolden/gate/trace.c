/* Reads performance/raw-device-trace.{csv,jsonl}: one row per op launch, summed per side, chip
 * and op family (cycles, bytes), and grouped_moe_dense cycles per token by section 12's buckets. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate_int.h"
#include "golden/doc.h"

const char *const gate_bucket_names[GATE_BUCKETS] = {"0", "1", "2-4", "5-8", "9-16", "17-32",
                                                     ">32"};
const char *const gate_byte_kinds[GATE_BYTE_KINDS] = {"ddr", "sram", "d2d", "pcie"};

int gate_bucket_of(unsigned long long tokens)
{
    if (tokens <= 1)
        return (int)tokens;
    if (tokens <= 4)
        return 2;
    if (tokens <= 8)
        return 3;
    if (tokens <= 16)
        return 4;
    if (tokens <= 32)
        return 5;
    return 6;
}

void gate_trace_free(gate_trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->keys[i]);
        free(t->rows[i].family);
    }
    free(t->keys);
    free(t->rows);
    free(t->path);
    for (size_t i = 0; i < t->nstalls; i++)
        free(t->stall_names[i]);
    free(t->power);
    lg_strmap_free(&t->map);
    memset(t, 0, sizeof *t);
}

/* One parsed trace line. */
typedef struct {
    int side;
    long long chip;
    const char *family;
    size_t family_len;
    unsigned long long start, end, bytes, tokens;
    int has_bytes, has_tokens;
} trace_line;

gate_trace_row *gate_trace_row_at(gate_trace *t, int side, long long chip, const char *family,
                                  size_t family_len, golden_error *err)
{
    size_t klen = family_len + 32;
    char *key = malloc(klen);
    if (!key)
        return gate_oom(err), NULL;
    int kn = snprintf(key, klen, "%d:%lld:", side, chip);
    memcpy(key + kn, family, family_len);
    size_t len = (size_t)kn + family_len;
    uint64_t idx;
    if (lg_strmap_get(&t->map, key, len, &idx))
        free(key);
    else {
        if (t->n == t->cap) {
            size_t nc = t->cap ? 2 * t->cap : 16;
            gate_trace_row *nr = realloc(t->rows, nc * sizeof *nr);
            char **nk = nr ? realloc(t->keys, nc * sizeof *nk) : NULL;
            if (nr)
                t->rows = nr;
            if (!nk) {
                free(key);
                return gate_oom(err), NULL;
            }
            t->keys = nk;
            t->cap = nc;
        }
        gate_trace_row *r = &t->rows[t->n];
        memset(r, 0, sizeof *r);
        r->side = side;
        r->chip = chip;
        if (!(r->family = strndup(family, family_len)) ||
            lg_strmap_put(&t->map, key, len, t->n, NULL) < 0) {
            free(r->family);
            free(key);
            return gate_oom(err), NULL;
        }
        t->keys[t->n] = key;
        idx = t->n++;
    }
    return &t->rows[idx];
}

static int trace_add(gate_trace *t, const trace_line *l, golden_error *err)
{
    gate_trace_row *r = gate_trace_row_at(t, l->side, l->chip, l->family, l->family_len, err);
    if (!r)
        return -1;
    unsigned long long cyc = l->end - l->start;
    if (l->side == 2)
        t->any_unsided = 1;
    r->ops++;
    r->cycles += cyc;
    if (l->has_bytes) {
        r->bytes += l->bytes;
        r->has_bytes = 1;
    }
    if (l->has_tokens && l->family_len == 17 && !memcmp(l->family, "grouped_moe_dense", 17)) {
        int b = gate_bucket_of(l->tokens);
        t->bucket_cycles[l->side][b] += cyc;
        t->bucket_tokens[l->side][b] += l->tokens;
        t->bucket_launches[l->side][b]++;
        t->has_tokens = 1;
    }
    return 0;
}

static int parse_u64(const char *s, size_t n, unsigned long long *v)
{
    if (n == 0 || n > 20)
        return -1;
    unsigned long long x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || x > (~0ull - 9) / 10)
            return -1;
        x = x * 10 + (unsigned)(s[i] - '0');
    }
    *v = x;
    return 0;
}

static int side_of(const char *s, size_t n)
{
    if (n == 8 && !memcmp(s, "baseline", 8))
        return 0;
    if (n == 9 && !memcmp(s, "candidate", 9))
        return 1;
    return -1;
}

enum { COL_SIDE, COL_CHIP, COL_FAMILY, COL_START, COL_END, COL_BYTES, COL_TOKENS, NCOLS };
static const char *const col_names[NCOLS] = {"side", "chip", "family", "start_cycle",
                                             "end_cycle", "bytes", "tokens"};

/* Split a CSV line (no quoting: trace fields are names and numbers) into at most 64 fields. */
static size_t split(char *s, size_t len, const char **f, size_t *fl)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= len && n < 64; i++)
        if (i == len || s[i] == ',') {
            f[n] = s + start;
            fl[n++] = i - start;
            start = i + 1;
        }
    return n;
}

static int csv_line(gate_trace *t, const int *col, char *buf, size_t len, const char *where,
                    golden_error *err)
{
    const char *f[64];
    size_t fl[64];
    size_t nf = split(buf, len, f, fl);
    trace_line l;
    memset(&l, 0, sizeof l);
    unsigned long long chip;
#define FIELD(c) (col[c] >= 0 && (size_t)col[c] < nf)
    if (!FIELD(COL_CHIP) || !FIELD(COL_FAMILY) || !FIELD(COL_START) || !FIELD(COL_END) ||
        parse_u64(f[col[COL_CHIP]], fl[col[COL_CHIP]], &chip) != 0 ||
        parse_u64(f[col[COL_START]], fl[col[COL_START]], &l.start) != 0 ||
        parse_u64(f[col[COL_END]], fl[col[COL_END]], &l.end) != 0 || l.end < l.start ||
        fl[col[COL_FAMILY]] == 0)
        return golden_fail_where(err, GOLDEN_EINVAL,
                                 "needs chip, family, start_cycle <= end_cycle (integers)", "%s",
                                 where);
    l.chip = (long long)chip;
    l.family = f[col[COL_FAMILY]];
    l.family_len = fl[col[COL_FAMILY]];
    l.side = 2;
    if (col[COL_SIDE] >= 0) {
        if (!FIELD(COL_SIDE) || (l.side = side_of(f[col[COL_SIDE]], fl[col[COL_SIDE]])) < 0)
            return golden_fail_where(err, GOLDEN_EINVAL, "side must be baseline or candidate",
                                     "%s", where);
    }
    if (FIELD(COL_BYTES) && fl[col[COL_BYTES]] > 0) {
        if (parse_u64(f[col[COL_BYTES]], fl[col[COL_BYTES]], &l.bytes) != 0)
            return golden_fail_where(err, GOLDEN_EINVAL, "bytes must be an integer", "%s", where);
        l.has_bytes = 1;
    }
    if (FIELD(COL_TOKENS) && fl[col[COL_TOKENS]] > 0) {
        if (parse_u64(f[col[COL_TOKENS]], fl[col[COL_TOKENS]], &l.tokens) != 0)
            return golden_fail_where(err, GOLDEN_EINVAL, "tokens must be an integer", "%s",
                                     where);
        l.has_tokens = 1;
    }
#undef FIELD
    return trace_add(t, &l, err);
}

static int jsonl_row(gate_trace *t, const golden_doc *d, golden_error *err)
{
    json_t *o = golden_doc_root(d);
    char where[1200];
    golden_doc_where(d, o, where, sizeof where);
    trace_line l;
    memset(&l, 0, sizeof l);
    json_t *c = json_object_get(o, "chip"), *fa = json_object_get(o, "family");
    json_t *s = json_object_get(o, "start_cycle"), *e = json_object_get(o, "end_cycle");
    json_t *sd = json_object_get(o, "side"), *by = json_object_get(o, "bytes");
    json_t *tk = json_object_get(o, "tokens");
    int bad = !json_is_integer(c) || !json_is_string(fa) || !json_is_integer(s) ||
              !json_is_integer(e) || json_integer_value(s) < 0 ||
              json_integer_value(e) < json_integer_value(s) || json_integer_value(c) < 0 ||
              (sd && (!json_is_string(sd) ||
                      side_of(json_string_value(sd), json_string_length(sd)) < 0)) ||
              (by && (!json_is_integer(by) || json_integer_value(by) < 0)) ||
              (tk && (!json_is_integer(tk) || json_integer_value(tk) < 0));
    int rc;
    if (bad)
        rc = golden_fail_where(err, GOLDEN_EINVAL,
                               "needs chip, family, start_cycle <= end_cycle; side, bytes and "
                               "tokens when present must be valid", "%s", where);
    else {
        l.side = sd ? side_of(json_string_value(sd), json_string_length(sd)) : 2;
        l.chip = json_integer_value(c);
        l.family = json_string_value(fa);
        l.family_len = json_string_length(fa);
        l.start = (unsigned long long)json_integer_value(s);
        l.end = (unsigned long long)json_integer_value(e);
        l.has_bytes = by != NULL;
        l.bytes = by ? (unsigned long long)json_integer_value(by) : 0;
        l.has_tokens = tk != NULL;
        l.tokens = tk ? (unsigned long long)json_integer_value(tk) : 0;
        rc = trace_add(t, &l, err);
    }
    return rc;
}

/* The one raw-device-trace.* of performance/ (NULL when none); more than one is an error. */
static int find_trace(const char *dir, char **rel, golden_error *err)
{
    *rel = NULL;
    char *pdir = gate_path(dir, "performance");
    if (!pdir)
        return gate_oom(err);
    DIR *d = opendir(pdir);
    free(pdir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "raw-device-trace.", 17) != 0)
            continue;
        if (*rel) {
            rc = golden_fail_where(err, GOLDEN_EINVAL, "more than one raw-device-trace.* file",
                                   "%s/performance", dir);
            break;
        }
        if (asprintf(rel, "performance/%s", e->d_name) < 0) {
            *rel = NULL;
            rc = gate_oom(err);
            break;
        }
    }
    closedir(d);
    if (rc) {
        free(*rel);
        *rel = NULL;
    }
    return rc;
}

/* A CSV line carries a launch: names and numbers, well under this. */
#define TRACE_MAX_LINE ((size_t)1 << 20)

typedef struct {
    gate_trace *t;
    const char *path;
    int col[NCOLS];
    int header_seen;
    size_t rows;
} trace_ctx;

static int csv_each(void *ctx, const char *line, size_t len, size_t line_no, golden_error *err)
{
    trace_ctx *c = ctx;
    if (golden_doc_check_text(c->path, line, len, line_no, err) != 0)
        return -1;
    char *buf = malloc(len + 1), where[1200];
    if (!buf)
        return gate_oom(err);
    memcpy(buf, line, len);
    buf[len] = 0;
    snprintf(where, sizeof where, "%s:%zu", c->path, line_no);
    int rc = 0;
    if (!c->header_seen) {
        const char *fv[64];
        size_t fl[64], nf = split(buf, len, fv, fl);
        for (size_t i = 0; i < nf; i++)
            for (int k = 0; k < NCOLS; k++)
                if (fl[i] == strlen(col_names[k]) && !memcmp(fv[i], col_names[k], fl[i])) {
                    if (c->col[k] >= 0)
                        rc = golden_fail_where(err, GOLDEN_EINVAL, "a column named twice in "
                                               "the header", "%s", where);
                    c->col[k] = (int)i;
                }
        c->header_seen = 1;
    } else {
        rc = csv_line(c->t, c->col, buf, len, where, err);
        c->rows++;
    }
    free(buf);
    return rc;
}

static int jsonl_each(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)line_no;
    trace_ctx *c = ctx;
    c->rows++;
    return jsonl_row(c->t, d, err);
}

int gate_trace_read(const char *dir, gate_trace *t, golden_error *err)
{
    memset(t, 0, sizeof *t);
    if (find_trace(dir, &t->path, err) != 0)
        return -1;
    if (!t->path)
        return 0;
    size_t pl = strlen(t->path);
    int csv = pl > 4 && !strcmp(t->path + pl - 4, ".csv");
    int jsonl = pl > 6 && !strcmp(t->path + pl - 6, ".jsonl");
    int chrome = pl > 5 && !strcmp(t->path + pl - 5, ".json");
    if (!csv && !jsonl && !chrome) {
        golden_fail_where(err, GOLDEN_EUNSUPPORTED, "device traces are read as .csv, .jsonl or "
                          ".json (Chrome Trace Event format)", "%s/%s", dir, t->path);
        gate_trace_free(t);
        return -1;
    }
    char *full = gate_path(dir, t->path);
    if (!full)
        return gate_oom(err);
    if (chrome) {
        int rc = gate_trace_chrome(full, t, err);
        free(full);
        if (rc != 0)
            gate_trace_free(t);
        return rc ? -1 : 0;
    }
    trace_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.path = full;
    for (int k = 0; k < NCOLS; k++)
        c.col[k] = -1;
    /* The strict readers of libgolden/doc: JSON Lines through the JSON parser (duplicate keys,
     * bad UTF-8, out-of-range numbers are errors), CSV lines bounded and checked as text. */
    int rc = csv ? golden_doc_each_line(full, TRACE_MAX_LINE, csv_each, &c, err)
                 : golden_doc_each_jsonl(full, jsonl_each, &c, err);
    t->lines = c.rows;
    t->sided = c.rows > 0 && !t->any_unsided;
    free(full);
    if (rc != 0) {
        gate_trace_free(t);
        return -1;
    }
    return 0;
}
