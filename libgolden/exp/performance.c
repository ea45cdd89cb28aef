/* The performance files (handbook section 7): raw requests with unique ids and stages in order,
 * and a summary whose counts rest on them; the fault log's lines validated. */
#include "exp/internal.h"
#include "exp/check_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/vec.h"

/* Remember request_id at line_no: 1 = new, 0 = seen before (*first_line says where), -1 = OOM. */
static int request_id_first(jl_state *s, const char *id, size_t len, size_t line_no,
                            size_t *first_line, golden_error *err)
{
    uint64_t prev;
    if (lg_strmap_get(&s->request_ids, id, len, &prev)) {
        *first_line = (size_t)prev;
        return 0;
    }
    if (VEC_GROW(s->id_copies, s->nid_copies, s->capid_copies, 256) != 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    char *copy = malloc(len + 1);
    if (!copy)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    memcpy(copy, id, len + 1);
    s->id_copies[s->nid_copies++] = copy;
    if (lg_strmap_put(&s->request_ids, copy, len, line_no, NULL) < 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    return 1;
}



static const char *const stage_order[9] = {"client_queue", "service_queue", "input_prepare",
                                          "h2d", "npu_wait", "d2h", "logits_conversion",
                                          "sampling", "stream_flush"};

/* The stages' JSON Pointers (the names need no escaping). */
static const char *const stage_ptr[] = {"/stages/client_queue", "/stages/service_queue",
                                        "/stages/input_prepare", "/stages/h2d",
                                        "/stages/npu_wait", "/stages/d2h",
                                        "/stages/logits_conversion", "/stages/sampling",
                                        "/stages/stream_flush"};

static int request_taken(jl_state *s, golden_doc *d, size_t line_no,
                         const exp_request_slot *pre, golden_error *err);

/* The stage-order rule's loop would find nothing: every start_ns and end_ns an integer, each
 * stage ending at or after its start and starting at or after the previous one's end. */
static bool stages_plain(const json_t *root)
{
    json_t *stages = json_object_get(root, "stages");
    json_int_t prev_end = 0;
    for (size_t i = 0; i < 9; i++) {
        json_t *st = json_object_get(stages, stage_order[i]);
        json_t *a = json_object_get(st, "start_ns"), *b = json_object_get(st, "end_ns");
        if (!json_is_integer(a) || !json_is_integer(b))
            return false;
        json_int_t start = json_integer_value(a), end = json_integer_value(b);
        if (end < start || (i > 0 && start < prev_end))
            return false;
        prev_end = end;
    }
    return true;
}

/* On a worker: the line's schema check (the compiled fast path for the common shape, else
 * the generic validator, whose violations the take adds in file order). */
int exp_request_prep(void *ctx, golden_doc *d, size_t line_no, void *slot, golden_error *err)
{
    (void)line_no;
    jl_state *s = ctx;
    exp_request_slot *r = slot;
    lg_exp_raw_hook *h = s->hook;
    if (h && h->prep)
        h->prep(h->ctx, d, r->hook);
    r->stages_plain = stages_plain(golden_doc_root(d));
    if (exp_raw_request_plain(golden_doc_root(d)))
        return 0;
    golden_schema_options so = GOLDEN_SCHEMA_OPTIONS_INIT;
    so.threads = 1; /* one line on one worker (the result does not depend on it) */
    r->n = golden_schema_validate_opts(s->schema, d, NULL, &so, &r->v, err);
    return r->n < 0 ? -1 : 0;
}

int exp_request_take(void *ctx, golden_doc *d, size_t line_no, void *slot, golden_error *err)
{
    jl_state *s = ctx;
    exp_request_slot *r = slot;
    if (exp_validate_add(s->c->out, d, r->n, r->v, err) != 0)
        return -1;
    return request_taken(s, d, line_no, r, err);
}

void exp_request_slot_clear(void *slot)
{
    exp_request_slot *r = slot;
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

/* Everything after the schema check, in file order (pre: what the line's prep found, or
 * NULL). */
static int request_taken(jl_state *s, golden_doc *d, size_t line_no,
                         const exp_request_slot *pre, golden_error *err)
{
    vctx *c = s->c;
    /* the summary's reader gets the same parsed line (a line it refuses stops it; the check's
     * own findings come first: exp-gate reports its error only when the check passed) */
    lg_exp_raw_hook *h = s->hook;
    if (h && h->fn && !h->failed &&
        (pre && h->fn_slot ? h->fn_slot(h->ctx, d, line_no, pre->hook, h->err)
                         : h->fn(h->ctx, d, line_no, h->err)) != 0)
        h->failed = true;
    json_t *r = golden_doc_root(d);
    const char *id = exp_sget(r, "case_id");
    if (id && s->inputs) {
        const input_case *ic = exp_find_case(s->inputs, id);
        if (!ic && exp_add_node(c, GOLDEN_SEV_ERROR, "unknown-case", d, "/case_id",
                            "case %s is not in golden/input-manifest.jsonl", id))
            return -1;
        if (ic && ic->rejection &&
            exp_add_node(c, GOLDEN_SEV_ERROR, "rejection-submitted", d, "/case_id",
                     "case %s is a rejection case and must never reach a device", id))
            return -1;
    }
    json_t *rid = json_object_get(r, "request_id");
    if (json_is_string(rid)) {
        size_t first = 0;
        int fresh = request_id_first(s, json_string_value(rid), json_string_length(rid), line_no,
                                     &first, err);
        if (fresh < 0)
            return -1;
        if (fresh == 0)
            return exp_add_node(c, GOLDEN_SEV_ERROR, "request-unique", d, "/request_id",
                            "request_id %s repeats the one on line %zu; a copied line is not "
                            "another run", json_string_value(rid), first) ? -1 : 0;
    }
    const char *side = exp_sget(r, "side");
    uint64_t first = SIZE_MAX;
    if (id && side && !lg_strmap_get(&s->tally_index, id, strlen(id), &first))
        first = SIZE_MAX;
    /* a case's entries are per concurrency level (issue 33): a line counts for its level */
    json_t *lv = json_object_get(r, "concurrency");
    long long level = !lv ? 1 : json_is_integer(lv) ? json_integer_value(lv) : -1;
    for (size_t i = (size_t)first; id && side && i != SIZE_MAX; i = s->tally[i].next) {
        struct perf_tally *t = &s->tally[i];
        if (t->level != level)
            continue;
        int k = strcmp(side, "candidate") == 0;
        if (json_is_true(json_object_get(r, "warmup")))
            t->warmup[k]++;
        else if (json_is_false(json_object_get(r, "steady")))
            t->unsteady[k]++;
        else
            t->steady[k]++;
    }
    if (pre && pre->stages_plain)
        return 0; /* the loop below would find nothing (its prep looked) */
    json_t *stages = json_object_get(r, "stages");
    long long prev_end = -1;
    const char *prev = NULL;
    for (size_t i = 0; i < sizeof stage_order / sizeof stage_order[0]; i++) {
        json_t *st = json_object_get(stages, stage_order[i]);
        const char *p = stage_ptr[i]; /* built once: 9 snprintf a line were 5 % of decide */
        long long start, end;
        int ka = exp_int_key(c, d, st, p, "start_ns", "stage-order", &start);
        int kb = ka < 0 ? -1 : exp_int_key(c, d, st, p, "end_ns", "stage-order", &end);
        if (ka < 0 || kb < 0)
            return -1;
        if (ka != 1 || kb != 1)
            continue;
        if (end < start && exp_add_node(c, GOLDEN_SEV_ERROR, "stage-order", d, p,
                                    "stage %s ends before it starts", stage_order[i]))
            return -1;
        if (prev && start < prev_end &&
            exp_add_node(c, GOLDEN_SEV_ERROR, "stage-order", d, p,
                     "stage %s starts before %s ends (section 7 order)", stage_order[i], prev))
            return -1;
        prev_end = end;
        prev = stage_order[i];
    }
    return 0;
}

/* The summary must rest on the raw data: each of its cases ran at least warmup_runs warm-ups and
 * measured_runs_min steady runs per side, and its n is the number of steady measured runs. */
int exp_perf_tally_setup(jl_state *s, const golden_doc *sum)
{
    json_t *cases = sum ? json_object_get(golden_doc_root(sum), "cases") : NULL;
    if (!json_is_array(cases) || json_array_size(cases) == 0)
        return GOLDEN_OK;
    s->tally = calloc(json_array_size(cases), sizeof *s->tally);
    if (!s->tally)
        return golden_fail_what(s->c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    size_t i;
    json_t *cs;
    json_array_foreach(cases, i, cs) {
        const char *id = exp_sget(cs, "case_id");
        if (!id)
            continue;
        struct perf_tally *t = &s->tally[s->ntally];
        t->case_id = id;
        t->summary_index = i;
        t->next = SIZE_MAX;
        json_t *lv = json_object_get(cs, "concurrency");
        t->level = !lv ? 1 : json_is_integer(lv) ? json_integer_value(lv) : 0;
        /* one case may carry several metrics: its summary entries are chained */
        uint64_t head;
        int put = lg_strmap_put(&s->tally_index, id, strlen(id), s->ntally, &head);
        if (put < 0)
            return golden_fail_what(s->c->err, GOLDEN_ENOMEM, NULL, "out of memory");
        if (put == 1) {
            size_t k = (size_t)head;
            while (s->tally[k].next != SIZE_MAX)
                k = s->tally[k].next;
            s->tally[k].next = s->ntally;
        }
        s->ntally++;
    }
    return GOLDEN_OK;
}

int exp_perf_rules(jl_state *s, const golden_doc *sum)
{
    vctx *c = s->c;
    json_t *root = golden_doc_root(sum);
    long long warm = 10, meas = 30;
    if (exp_int_key(c, sum, root, "", "warmup_runs", "perf-runs", &warm) < 0 ||
        exp_int_key(c, sum, root, "", "measured_runs_min", "perf-runs", &meas) < 0)
        return GOLDEN_ERR;
    for (size_t i = 0; i < s->ntally; i++) {
        const struct perf_tally *t = &s->tally[i];
        char p[128], lvl[48] = "";
        snprintf(p, sizeof p, "/cases/%zu/case_id", t->summary_index);
        if (t->level != 1)
            snprintf(lvl, sizeof lvl, " at concurrency %lld", t->level);
        if (s->inputs && !exp_find_case(s->inputs, t->case_id) &&
            exp_add_node(c, GOLDEN_SEV_ERROR, "unknown-case", sum, p,
                     "case %s is not in golden/input-manifest.jsonl", t->case_id))
            return GOLDEN_ERR;
        for (int k = 0; k < 2; k++) {
            const char *side = k ? "candidate" : "baseline";
            if (t->warmup[k] < warm &&
                exp_add_node(c, GOLDEN_SEV_ERROR, "perf-runs", sum, p,
                         "case %s%s %s: %lld warm-up runs in raw-requests.jsonl, summary says %lld",
                         t->case_id, lvl, side, t->warmup[k], warm))
                return GOLDEN_ERR;
            if (t->steady[k] < meas &&
                exp_add_node(c, GOLDEN_SEV_ERROR, "perf-runs", sum, p,
                         "case %s%s %s: %lld steady measured runs in raw-requests.jsonl, at least %lld "
                         "needed", t->case_id, lvl, side, t->steady[k], meas))
                return GOLDEN_ERR;
            char np[160];
            snprintf(np, sizeof np, "/cases/%zu/%s/n", t->summary_index, side);
            long long n;
            int kn = exp_int_at(c, sum, exp_ptr_get(root, np), np, "perf-runs", &n);
            if (kn < 0)
                return GOLDEN_ERR;
            /* exp-gate keeps apart, beside the runs flagged steady:false, the runs whose
             * clock or temperature left the band (summary "unsteady"): n may be smaller than
             * the flagged-steady count, but every measured run is accounted for */
            char up[176];
            snprintf(up, sizeof up, "/cases/%zu/%s/unsteady", t->summary_index, side);
            long long un = 0;
            json_t *uj = exp_ptr_get(root, up);
            int ku = uj ? exp_int_at(c, sum, uj, up, "perf-runs", &un) : 0;
            if (ku < 0)
                return GOLDEN_ERR;
            bool accounted = ku == 1 ? n <= t->steady[k] &&
                                           n + un == t->steady[k] + t->unsteady[k]
                                     : n == t->steady[k];
            if (kn == 1 && !accounted &&
                exp_add_node(c, GOLDEN_SEV_ERROR, "perf-runs", sum, np,
                         "n is %lld (%lld kept apart) but raw-requests.jsonl has %lld steady "
                         "measured %s runs of case %s%s (%lld flagged unsteady)", n, un,
                         t->steady[k], side, t->case_id, lvl, t->unsteady[k]))
                return GOLDEN_ERR;
        }
    }
    return GOLDEN_OK;
}

int exp_fault_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)line_no;
    jl_state *s = ctx;
    return exp_validate(s->c->out, s->schema, d, s->c->threads, err) < 0 ? -1 : 0;
}
