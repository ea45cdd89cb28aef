/* Activation ranges per tap and domain (handbook section 16.1), exact percentiles of |x| by
 * streamed radix selection over the bits of |x| as a double (monotonic for values >= 0). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/dtype.h"
#include "golden/ranges.h"
#include "golden/store.h"

#define NP 3
#define BINS 65536u
#define CHUNK 65536u
/* the percentiles in units of 1/1000 %: 99, 99.9, 99.99 */
static const uint64_t pct_milli[NP] = {99000, 99900, 99990};
static const char *const pct_key[NP] = {"abs_p99", "abs_p99_9", "abs_p99_99"};

typedef struct {
    size_t input, tensor;
} member;

typedef struct {
    char *tap;
    const char *domain;
    member *m;
    size_t n, cap;
} group;

typedef struct {
    const golden_ranges_opts *o;
    golden_reader **r;
    double *buf;
    unsigned char *raw;
    uint64_t *hist; /* NP x BINS */
    golden_error *err;
} ctx;

static int oom(golden_error *err)
{
    return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
}

/* A number; an infinity as the string "inf" or "-inf" (never dropped); NaN as null. */
static json_t *jval(double v)
{
    return isfinite(v) ? json_real(v) : isinf(v) ? json_string(v > 0 ? "inf" : "-inf") : json_null();
}

static uint64_t key_of(double v)
{
    double a = fabs(v);
    uint64_t k;
    memcpy(&k, &a, sizeof k);
    return k;
}

static const char *tap_of(const char *name)
{
    if (strncmp(name, "cases/", 6) != 0)
        return name;
    const char *s = strchr(name + 6, '/');
    return s && s[1] ? s + 1 : name;
}

typedef struct {
    uint64_t elements, nan, outliers;
    double min, max;
} firsts;

/* Visit every element of group g: pass < 0 the first statistics and the top-16-bit
 * histograms; pass 1..3 the next 16 bits of the keys whose known prefix[p] matches. */
static int sweep(ctx *c, const group *g, int pass, const uint64_t *prefix, firsts *f)
{
    int shift = 48 - 16 * (pass < 0 ? 0 : pass);
    for (size_t t = 0; t < g->n; t++) {
        golden_reader *r = c->r[g->m[t].input];
        const golden_tensor_info *ti = golden_reader_tensor(r, g->m[t].tensor);
        for (uint64_t at = 0; at < ti->count; at += CHUNK) {
            size_t k = (size_t)(ti->count - at < CHUNK ? ti->count - at : CHUNK);
            if (golden_reader_read(r, g->m[t].tensor, at, k, c->raw, c->err) != 0)
                return -1;
            golden_convert_to_f64(ti->dtype, c->raw, k, c->buf);
            for (size_t i = 0; i < k; i++) {
                double v = c->buf[i];
                if (isnan(v)) {
                    if (pass < 0)
                        f->nan++;
                    continue;
                }
                uint64_t key = key_of(v);
                if (pass < 0) {
                    f->elements++;
                    f->min = fmin(f->min, v);
                    f->max = fmax(f->max, v);
                    f->outliers += fabs(v) > c->o->outlier_threshold;
                    c->hist[key >> 48]++;
                    continue;
                }
                for (int p = 0; p < NP; p++)
                    if (key >> (shift + 16) == prefix[p])
                        c->hist[(size_t)p * BINS + ((key >> shift) & 0xffffu)]++;
            }
        }
    }
    return 0;
}

/* The bin holding rank rank[p] (1-based) of histogram h; rank[p] becomes the rank in it. */
static uint64_t pick(const uint64_t *h, uint64_t *rank)
{
    uint64_t below = 0;
    for (uint64_t b = 0; b < BINS; b++) {
        if (below + h[b] >= *rank) {
            *rank -= below;
            return b;
        }
        below += h[b];
    }
    return BINS - 1; /* not reached: the ranks are within the counts */
}

static json_t *group_row(ctx *c, const group *g)
{
    firsts f = {0, 0, 0, INFINITY, -INFINITY};
    memset(c->hist, 0, sizeof *c->hist * NP * BINS);
    if (sweep(c, g, -1, NULL, &f) != 0)
        return NULL;
    uint64_t prefix[NP] = {0}, rank[NP];
    double val[NP] = {NAN, NAN, NAN};
    if (f.elements > 0) {
        for (int p = 0; p < NP; p++) {
            /* nearest rank: the smallest k with k >= P/100 * n, in integers */
            unsigned __int128 num = (unsigned __int128)pct_milli[p] * f.elements;
            rank[p] = (uint64_t)((num + 99999) / 100000);
            if (rank[p] == 0)
                rank[p] = 1;
            prefix[p] = pick(c->hist, &rank[p]);
        }
        for (int pass = 1; pass <= 3; pass++) {
            memset(c->hist, 0, sizeof *c->hist * NP * BINS);
            if (sweep(c, g, pass, prefix, &f) != 0)
                return NULL;
            for (int p = 0; p < NP; p++)
                prefix[p] = prefix[p] << 16 | pick(c->hist + (size_t)p * BINS, &rank[p]);
        }
        for (int p = 0; p < NP; p++)
            memcpy(&val[p], &prefix[p], sizeof val[p]);
    }
    json_t *row = json_pack("{s:s,s:s,s:I,s:I,s:I,s:o,s:o}", "tap", g->tap, "domain", g->domain,
                            "tensors", (json_int_t)g->n, "elements", (json_int_t)f.elements,
                            "nan", (json_int_t)f.nan, "min",
                            f.elements ? jval(f.min) : json_null(), "max",
                            f.elements ? jval(f.max) : json_null());
    int bad = !row;
    for (int p = 0; !bad && p < NP; p++)
        bad = json_object_set_new(row, pct_key[p], f.elements ? jval(val[p]) : json_null());
    if (!bad)
        bad = json_object_set_new(row, "outliers", json_integer((json_int_t)f.outliers)) ||
              json_object_set_new(row, "outlier_share",
                                  f.elements ? json_real((double)f.outliers / (double)f.elements)
                                             : json_null());
    if (bad) {
        json_decref(row);
        oom(c->err);
        return NULL;
    }
    return row;
}

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
    int t = strcmp(x->tap, y->tap);
    return t ? t : strcmp(x->domain, y->domain);
}

/* The group of (tap, domain), made when new. */
static group *group_for(group **gs, size_t *n, size_t *cap, const char *tap, const char *domain)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*gs)[i].tap, tap) && !strcmp((*gs)[i].domain, domain))
            return &(*gs)[i];
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        group *ng = realloc(*gs, nc * sizeof *ng);
        if (!ng)
            return NULL;
        *gs = ng;
        *cap = nc;
    }
    group *g = &(*gs)[(*n)++];
    memset(g, 0, sizeof *g);
    g->domain = domain;
    if (!(g->tap = strdup(tap))) {
        (*n)--;
        return NULL;
    }
    return g;
}

static int add_member(group *g, size_t input, size_t tensor)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 8;
        member *nm = realloc(g->m, nc * sizeof *nm);
        if (!nm)
            return -1;
        g->m = nm;
        g->cap = nc;
    }
    g->m[g->n++] = (member){input, tensor};
    return 0;
}

/* Open input i, file its float tensors into groups; its summary row into inputs. */
static int file_input(ctx *c, const golden_ranges_input *in, size_t i, const char **dom,
                      group **gs, size_t *ng, size_t *cap, json_t *inputs)
{
    if (golden_reader_open_flags(in->path, GOLDEN_READ_FOREIGN, &c->r[i], c->err) != 0)
        return -1;
    golden_reader *r = c->r[i];
    *dom = in->domain ? in->domain : golden_reader_meta(r, "domain");
    if (!*dom || !**dom)
        return golden_fail_what(c->err, GOLDEN_EINVAL, in->path,
                                "no domain: give DOMAIN=FILE or a root attribute domain");
    size_t used = 0, skipped = 0;
    for (size_t t = 0; t < golden_reader_count(r); t++) {
        const golden_tensor_info *ti = golden_reader_tensor(r, t);
        if (!golden_dtype_is_float(ti->dtype) || golden_dtype_size(ti->dtype) > 8) {
            skipped++;
            continue;
        }
        group *g = group_for(gs, ng, cap, tap_of(ti->name), *dom);
        if (!g || add_member(g, i, t) != 0)
            return oom(c->err);
        used++;
    }
    if (used == 0)
        return golden_fail_what(c->err, GOLDEN_EINVAL, in->path,
                                "no float tensor to take ranges of (%zu integer tensor(s))",
                                skipped);
    json_t *row = json_pack("{s:s,s:s,s:I,s:I}", "path", in->path, "domain", *dom, "tensors",
                            (json_int_t)used, "skipped_integer", (json_int_t)skipped);
    return !row || json_array_append_new(inputs, row) ? oom(c->err) : 0;
}

int golden_ranges_compute(const golden_ranges_input *in, size_t n, const golden_ranges_opts *o,
                          json_t **out, golden_error *err)
{
    *out = NULL;
    if (!o || o->version != GOLDEN_RANGES_OPTS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, "ranges", "options version mismatch");
    if (n == 0)
        return golden_fail_what(err, GOLDEN_EINVAL, "ranges", "no input");
    if (!(o->outlier_threshold >= 0))
        return golden_fail_what(err, GOLDEN_EINVAL, "ranges", "the outlier threshold must be >= 0");
    ctx c = {o, calloc(n, sizeof(golden_reader *)), malloc(CHUNK * sizeof(double)),
             malloc(CHUNK * 8), malloc(NP * BINS * sizeof(uint64_t)), err};
    const char **dom = calloc(n, sizeof *dom);
    group *gs = NULL;
    size_t ng = 0, cap = 0;
    json_t *doc = NULL, *inputs = json_array(), *taps = json_array(), *domains = json_array();
    int rc = !c.r || !c.buf || !c.raw || !c.hist || !dom || !inputs || !taps || !domains
                 ? oom(err) : 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = file_input(&c, &in[i], i, &dom[i], &gs, &ng, &cap, inputs);
    if (rc == 0)
        qsort(gs, ng, sizeof *gs, cmp_group);
    for (size_t i = 0; rc == 0 && i < ng; i++) {
        json_t *row = group_row(&c, &gs[i]);
        rc = !row ? -1 : json_array_append_new(taps, row) ? oom(err) : 0;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= !strcmp(dom[i], dom[j]);
        if (!seen && json_array_append_new(domains, json_string(dom[i])))
            rc = oom(err);
    }
    if (rc == 0) {
        doc = json_pack("{s:s,s:f,s:s,s:[fff],s:O,s:O,s:O}", "schema",
                        "calculet-activation-ranges/v1", "outlier_threshold", o->outlier_threshold,
                        "percentile_method", "exact nearest-rank order statistic of |x| "
                        "(numpy method=inverted_cdf), NaN excluded",
                        "percentiles", 99.0, 99.9, 99.99, "domains", domains, "inputs", inputs,
                        "taps", taps);
        if (!doc)
            rc = oom(err);
    }
    for (size_t i = 0; i < ng; i++) {
        free(gs[i].tap);
        free(gs[i].m);
    }
    free(gs);
    for (size_t i = 0; c.r && i < n; i++)
        if (c.r[i])
            golden_reader_close(c.r[i]);
    free(c.r);
    free(c.buf);
    free(c.raw);
    free(c.hist);
    free(dom);
    json_decref(inputs);
    json_decref(taps);
    json_decref(domains);
    *out = doc;
    return rc;
}

static double num(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    const char *s = json_string_value(v);
    if (s)
        return !strcmp(s, "inf") ? INFINITY : !strcmp(s, "-inf") ? -INFINITY : NAN;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

char *golden_ranges_text(const json_t *ranges, golden_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        oom(err);
        return NULL;
    }
    size_t w = 3, i;
    json_t *r;
    json_array_foreach(json_object_get(ranges, "taps"), i, r) {
        size_t l = strlen(json_string_value(json_object_get(r, "tap")));
        w = l > w ? l : w;
    }
    fprintf(f, "%-*s  %-12s %12s %6s %12s %12s %12s %12s %12s %10s\n", (int)w, "TAP", "DOMAIN",
            "ELEMENTS", "NAN", "MIN", "MAX", "|X|P99", "|X|P99.9", "|X|P99.99", "OUTLIERS%");
    json_array_foreach(json_object_get(ranges, "taps"), i, r)
        fprintf(f, "%-*s  %-12s %12lld %6lld %12.6g %12.6g %12.6g %12.6g %12.6g %10.4f\n", (int)w,
                json_string_value(json_object_get(r, "tap")),
                json_string_value(json_object_get(r, "domain")),
                (long long)json_integer_value(json_object_get(r, "elements")),
                (long long)json_integer_value(json_object_get(r, "nan")), num(r, "min"),
                num(r, "max"), num(r, "abs_p99"), num(r, "abs_p99_9"), num(r, "abs_p99_99"),
                100 * num(r, "outlier_share"));
    fprintf(f, "%zu tap x domain row(s); outliers: |x| > %g\n",
            json_array_size(json_object_get(ranges, "taps")), num(ranges, "outlier_threshold"));
    if (fclose(f) != 0) {
        free(buf);
        oom(err);
        return NULL;
    }
    return buf;
}
