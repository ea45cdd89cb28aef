/* accuracy/result.json cannot say pass against itself: its numbers against the hypothesis's
 * acceptance bounds, its tiers, and the golden-diff reports it names (handbook sections 6, 17). */
#include "exp/internal.h"
#include "util/numtext.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest %g text that reads back as x, so both sides of a comparison print apart. */
static void num_show(double x, char buf[32])
{
    lg_num_shortest(x, 6, buf, 32);
}

/* "file:line" of a node, for a message that names a second place. */
static void place(const golden_doc *d, const char *ptr, char *buf, size_t n)
{
    int line = 0, col = 0;
    exp_node_pos(d, ptr, &line, &col);
    if (line > 0)
        snprintf(buf, n, "%s:%d (%s)", golden_doc_name(d), line, ptr);
    else
        snprintf(buf, n, "%s#%s", golden_doc_name(d), ptr);
}


/* One number of a passing result (or report) against one acceptance bound. */
static int bound_check(vctx *c, const golden_doc *d, const char *ptr, double value,
                       const golden_doc *h, const char *hptr, double bound, bool is_min,
                       const char *what)
{
    if (is_min ? value >= bound : value <= bound)
        return GOLDEN_OK;
    char a[32], b[32], where[1200];
    num_show(value, a);
    num_show(bound, b);
    place(h, hptr, where, sizeof where);
    return exp_add_node(c, GOLDEN_SEV_ERROR, "accuracy-agrees", d, ptr,
                    "%s: %s is %s, %s the acceptance bound %s in %s", what, ptr, a,
                    is_min ? "below" : "above", b, where);
}

/* Every numeric leaf named `stem` under node (reports are skipped: they are read on their own). */
static int stem_walk(vctx *c, const golden_doc *d, json_t *node, char *ptr, size_t cap,
                     const char *stem, const golden_doc *h, const char *hptr, double bound,
                     bool is_min, const char *what)
{
    size_t keep = strlen(ptr);
    const char *k;
    json_t *v;
    int rc = GOLDEN_OK;
    if (!json_is_object(node))
        return GOLDEN_OK;
    json_object_foreach(node, k, v) {
        if (strcmp(k, "reports") == 0 || strcmp(k, "task") == 0)
            continue;
        exp_ptr_push(ptr, cap, k);
        if (json_is_number(v) && strcmp(k, stem) == 0)
            rc = bound_check(c, d, ptr, json_number_value(v), h, hptr, bound, is_min, what);
        else if (json_is_object(v))
            rc = stem_walk(c, d, v, ptr, cap, stem, h, hptr, bound, is_min, what);
        ptr[keep] = '\0';
        if (rc)
            return rc;
    }
    return GOLDEN_OK;
}

/* acceptance.NAME_min / NAME_max bound every number called NAME; cosine_min and
 * layer_cosine_min bound the layer tier's min_cosine. */
static int acceptance_walk(vctx *c, const golden_doc *h, const golden_doc *d, json_t *node,
                           const char *base, bool is_report, const char *what)
{
    json_t *acc = exp_ptr_get(golden_doc_root(h), "/acceptance");
    const char *k;
    json_t *v;
    json_object_foreach(acc, k, v) {
        if (!json_is_number(v))
            continue;
        size_t n = strlen(k);
        bool is_min = n > 4 && strcmp(k + n - 4, "_min") == 0;
        bool is_max = n > 4 && strcmp(k + n - 4, "_max") == 0;
        if (!is_min && !is_max)
            continue;
        char stem[128], hptr[256] = "/acceptance", ptr[512];
        snprintf(ptr, sizeof ptr, "%s", base);
        snprintf(stem, sizeof stem, "%.*s", (int)(n - 4), k);
        if (strcmp(stem, "cosine") == 0 || strcmp(stem, "layer_cosine") == 0)
            snprintf(stem, sizeof stem, "%s", is_report ? "cosine" : "min_cosine");
        exp_ptr_push(hptr, sizeof hptr, k);
        if (stem_walk(c, d, node, ptr, sizeof ptr, stem, h, hptr, json_number_value(v), is_min,
                      what))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

/* The result's own tiers: a pass with a failed tier inside it is a contradiction too. */
static int tiers_agree(vctx *c, const golden_doc *a)
{
    json_t *r = golden_doc_root(a);
    static const char *const zero[] = {"/kernel/shape_mismatches", "/kernel/new_nan",
                                       "/kernel/new_inf"};
    for (size_t i = 0; i < 3; i++) {
        json_t *v = exp_ptr_get(r, zero[i]);
        if (json_is_number(v) && json_number_value(v) != 0 &&
            exp_add_node(c, GOLDEN_SEV_ERROR, "accuracy-agrees", a, zero[i],
                     "verdict is pass but %s is %g (the kernel tier allows none)", zero[i],
                     json_number_value(v)))
            return GOLDEN_ERR;
    }
    json_t *cos = exp_ptr_get(r, "/layer/min_cosine"), *thr = exp_ptr_get(r, "/layer/threshold");
    if (json_is_number(cos) && json_is_number(thr) &&
        json_number_value(cos) < json_number_value(thr)) {
        char x[32], y[32];
        num_show(json_number_value(cos), x);
        num_show(json_number_value(thr), y);
        if (exp_add_node(c, GOLDEN_SEV_ERROR, "accuracy-agrees", a, "/layer/min_cosine",
                     "verdict is pass but min_cosine %s is below the layer threshold %s "
                     "(/layer/threshold)", x, y))
            return GOLDEN_ERR;
    }
    json_t *pr = exp_ptr_get(r, "/greedy_tokens/prompts"), *ex = exp_ptr_get(r, "/greedy_tokens/exact");
    if (json_is_number(pr) && json_is_number(ex) && json_number_value(ex) < json_number_value(pr) &&
        exp_add_node(c, GOLDEN_SEV_ERROR, "accuracy-agrees", a, "/greedy_tokens/exact",
                 "verdict is pass but only %g of %g greedy sequences are exact (the token tier "
                 "wants all)", json_number_value(ex), json_number_value(pr)))
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

/* One golden-diff report the result names: its verdict and its tensors' verdicts, each tensor's
 * numbers against the hypothesis's acceptance, and layer cosines against the result's threshold. */
static int report_agrees(vctx *c, schema_cache *sc, const golden_doc *h, const golden_doc *a,
                         const char *rel, const char *refptr)
{
    char path[1024];
    exp_disp(c, rel, path, sizeof path);
    golden_doc *rep = NULL;
    golden_schema *s = exp_schema_get(sc, "calculet-diff-report/v1", c->err);
    if (!s || exp_load_doc(path, &rep, c->err) != 0 || exp_validate(c->out, s, rep, c->threads, c->err) < 0) {
        golden_doc_free(rep);
        return GOLDEN_ERR;
    }
    json_t *root = golden_doc_root(rep);
    json_t *thr = exp_ptr_get(golden_doc_root(a), "/layer/threshold");
    int rc = GOLDEN_OK;
    const char *verdict = exp_sget(root, "verdict");
    char where[1200], what[1300];
    place(a, refptr, where, sizeof where);
    snprintf(what, sizeof what, "%s says pass", where);
    if (verdict && strcmp(verdict, "pass") != 0)
        rc = exp_add_node(c, GOLDEN_SEV_ERROR, "accuracy-agrees", rep, "/verdict",
                      "this golden-diff report says %s, but %s", verdict, what);
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(root, "tensors"), i, t) {
        char tp[64];
        const char *tv = exp_sget(t, "verdict"), *tier = exp_sget(t, "tier");
        const char *name = exp_sget(t, "name") ? exp_sget(t, "name") : "?";
        snprintf(tp, sizeof tp, "/tensors/%zu", i);
        if (!rc && tv && strcmp(tv, "pass") != 0 && verdict && strcmp(verdict, "pass") == 0) {
            char vp[80];
            snprintf(vp, sizeof vp, "%s/verdict", tp);
            rc = exp_add_node(c, GOLDEN_SEV_ERROR, "accuracy-agrees", rep, vp,
                          "tensor %s fails in this report, but %s", name, what);
        }
        if (!rc && h)
            rc = acceptance_walk(c, h, rep, t, tp, true, what);
        json_t *cos = json_object_get(t, "cosine");
        if (!rc && tier && strcmp(tier, "layer") == 0 && json_is_number(cos) &&
            json_is_number(thr) && json_number_value(cos) < json_number_value(thr)) {
            char x[32], y[32], cp[80], tw[1200];
            num_show(json_number_value(cos), x);
            num_show(json_number_value(thr), y);
            snprintf(cp, sizeof cp, "%s/cosine", tp);
            place(a, "/layer/threshold", tw, sizeof tw);
            rc = exp_add_node(c, GOLDEN_SEV_ERROR, "accuracy-agrees", rep, cp,
                          "layer tensor %s has cosine %s, below the threshold %s in %s, but %s",
                          name, x, y, tw, what);
        }
        if (rc)
            break;
    }
    golden_doc_free(rep);
    return rc;
}

/* accuracy/result.json says pass: nothing it reports, nor any golden-diff report it names, may
 * say otherwise (handbook sections 6 and 17: correctness fails -> reject). */
int exp_accuracy_agrees(vctx *c, schema_cache *sc, const golden_doc *h, const golden_doc *a)
{
    json_t *r = golden_doc_root(a);
    const char *verdict = exp_sget(r, "verdict");
    if (!verdict || strcmp(verdict, "pass") != 0)
        return GOLDEN_OK; /* a failing result contradicts nothing that could pass it */
    if (tiers_agree(c, a) != 0)
        return GOLDEN_ERR;
    if (h && acceptance_walk(c, h, a, r, "", false, "verdict is pass") != 0)
        return GOLDEN_ERR;
    size_t i;
    json_t *ref;
    json_array_foreach(json_object_get(r, "reports"), i, ref) {
        const char *rel = exp_sget(ref, "path");
        char refptr[64];
        snprintf(refptr, sizeof refptr, "/reports/%zu/path", i);
        if (!rel || exp_lexically_escapes(rel) || !exp_has_asset(c, rel))
            continue; /* artifact-exists and path-escape report it */
        char full[PATH_MAX * 2], real[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", c->root, rel);
        if (!realpath(full, real) || !exp_inside_root(c, real))
            continue;
        if (report_agrees(c, sc, h, a, rel, refptr) != 0)
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}
