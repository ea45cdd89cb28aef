/* golden-diff's trend report (issue 25, information, never a gate): a layer metric that
 * worsens steadily along the layers while every layer passes. Tensors are put in series by
 * their name with the first all-digit component (between '/' or '.') read as the layer
 * index (`layers/7/mlp/out` -> series `layers/(star)/mlp/out`, layer 7); a series of at least
 * LG_TREND_MIN_LAYERS layer-tier tensors that all passed, with a finite metric at every
 * layer, has a trend when Kendall's tau-b between layer index and error is at least
 * LG_TREND_TAU_MIN and the last layer's error is at least LG_TREND_GROWTH times the
 * first's. Computed from the per-tensor results, so ranks' merged results give the same. */
#include "tensor/diff_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *series;          /* the name with the layer component as '*' */
    uint64_t layer;
    size_t index;          /* into the result's tensors */
} trend_item;

/* The first component made only of digits (at most 9), or false. */
static bool layer_of(const char *name, size_t *start, size_t *len, uint64_t *layer)
{
    size_t i = 0;
    while (name[i]) {
        size_t j = i;
        while (name[j] && name[j] != '/' && name[j] != '.')
            j++;
        size_t k = i;
        while (k < j && name[k] >= '0' && name[k] <= '9')
            k++;
        if (k == j && j > i && j - i <= 9) {
            *start = i;
            *len = j - i;
            *layer = strtoull(name + i, NULL, 10); /* digits only, checked above */
            return true;
        }
        i = name[j] ? j + 1 : j;
    }
    return false;
}

static int cmp_item(const void *pa, const void *pb)
{
    const trend_item *a = pa, *b = pb;
    int c = strcmp(a->series, b->series);
    return c ? c : (a->layer > b->layer) - (a->layer < b->layer);
}

/* The error of one metric of a tensor: rel_err, or 1 - cosine. */
static double metric_of(const golden_diff_tensor *t, int metric)
{
    return metric == 0 ? t->m.rel_err : 1.0 - t->m.cosine;
}

/* Kendall's tau-b of (0..n-1, v): the layers are distinct, so only v has ties. NaN when
 * every v is equal. */
double lg_diff_kendall_tau(const double *v, size_t n)
{
    double conc = 0, disc = 0, tied = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (v[j] > v[i])
                conc++;
            else if (v[j] < v[i])
                disc++;
            else
                tied++;
        }
    double n0 = (double)n * (double)(n - 1) / 2;
    if (!(n0 - tied > 0))
        return NAN;
    return (conc - disc) / sqrt(n0 * (n0 - tied));
}

static int push_trend(lg_diff_trend **out, size_t *n, const golden_diff_result *r,
                      const trend_item *g, size_t m, int metric)
{
    double *v = malloc(m * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < m; i++) {
        v[i] = metric_of(&r->tensors[g[i].index], metric);
        if (!isfinite(v[i])) {
            free(v);
            return 0;
        }
    }
    double tau = lg_diff_kendall_tau(v, m);
    if (!(tau >= LG_TREND_TAU_MIN) || !(v[m - 1] >= LG_TREND_GROWTH * v[0]) || !(v[m - 1] > 0)) {
        free(v);
        return 0;
    }
    lg_diff_trend *grown = realloc(*out, (*n + 1) * sizeof **out);
    char *series = strdup(g[0].series);
    uint64_t *layers = malloc(m * sizeof *layers);
    if (!grown || !series || !layers) {
        if (grown)
            *out = grown;
        free(series);
        free(layers);
        free(v);
        return -1;
    }
    *out = grown;
    for (size_t i = 0; i < m; i++)
        layers[i] = g[i].layer;
    lg_diff_trend *t = &grown[(*n)++];
    t->series = series;
    t->metric = metric == 0 ? "rel_err" : "1 - cosine";
    t->n = m;
    t->layers = layers;
    t->values = v;
    t->tau = tau;
    return 0;
}

static void free_items(trend_item *it, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(it[i].series);
    free(it);
}

int lg_diff_trends(const golden_diff_result *r, lg_diff_trend **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    trend_item *it = malloc((r->n ? r->n : 1) * sizeof *it);
    if (!it)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        const golden_diff_tensor *t = &r->tensors[i];
        size_t s, len;
        uint64_t layer;
        if (!t->compared || t->judge.tier != GOLDEN_TIER_LAYER ||
            !layer_of(t->name, &s, &len, &layer))
            continue;
        size_t nl = strlen(t->name);
        char *series = malloc(nl - len + 2);
        if (!series) {
            free_items(it, n);
            return -1;
        }
        memcpy(series, t->name, s);
        series[s] = '*';
        memcpy(series + s + 1, t->name + s + len, nl - s - len + 1);
        it[n++] = (trend_item){series, layer, i};
    }
    if (n)
        qsort(it, n, sizeof *it, cmp_item);
    int rc = 0;
    for (size_t a = 0; a < n && rc == 0;) {
        size_t b = a;
        bool all_pass = true;
        while (b < n && strcmp(it[b].series, it[a].series) == 0)
            all_pass &= r->tensors[it[b++].index].passed;
        if (all_pass && b - a >= LG_TREND_MIN_LAYERS)
            for (int metric = 0; metric < 2 && rc == 0; metric++)
                rc = push_trend(out, n_out, r, it + a, b - a, metric);
        a = b;
    }
    free_items(it, n);
    if (rc) {
        lg_diff_trends_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}

void lg_diff_trends_free(lg_diff_trend *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].series);
        free(t[i].layers);
        free(t[i].values);
    }
    free(t);
}
