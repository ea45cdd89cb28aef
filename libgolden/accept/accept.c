/* golden-accept's run: the steps in order on the delivered evidence, then one verdict. Steps
 * 1 (integrity), 2 (compile), 5 (trace), 6 (limits) and 7 (error path) live here; accuracy,
 * graph and performance have their own files. */
#include "accept/accept_int.h"
#include "golden/gate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "golden/outfile.h"

static const char *const step_names[GOLDEN_ACCEPT_STEPS] = {
    "integrity", "compile", "accuracy", "graph", "trace", "limits", "error_path", "performance",
    "runtime"};

const char *golden_step_verdict_name(golden_step_verdict v)
{
    return v == GOLDEN_STEP_PASS ? "pass" : v == GOLDEN_STEP_FAIL ? "fail" : "skipped";
}

int acc_fail(golden_accept_step *s, golden_error *err, const char *rule, const char *file,
             const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return golden_findings_add(&s->findings, GOLDEN_SEV_ERROR, rule, file ? file : "", 0, 0, "",
                               err, "%s", msg);
}

void acc_origin(acc_ctx *c, const char *work_rel, const char *from)
{
    if (c->norigins < ACC_ORIGINS && strlen(work_rel) < sizeof c->origin[0].work_rel) {
        snprintf(c->origin[c->norigins].work_rel, sizeof c->origin[0].work_rel, "%s", work_rel);
        snprintf(c->origin[c->norigins].from, sizeof c->origin[0].from, "%s", from);
        c->norigins++;
    }
}

const char *acc_delivered(const acc_ctx *c, const char *where, char *buf, size_t n)
{
    size_t wl = strlen(c->work);
    if (!where || strncmp(where, c->work, wl) != 0 || where[wl] != '/')
        return where;
    const char *rel = where + wl + 1;
    size_t best = 0, k = ACC_ORIGINS;
    for (size_t i = 0; i < c->norigins; i++) {
        const char *w = c->origin[i].work_rel;
        size_t l = strlen(w);
        bool dir = l && w[l - 1] == '/';
        if (strncmp(rel, w, l) != 0 || (!dir && rel[l] && rel[l] != ':' && rel[l] != '#'))
            continue;
        if (l > best) {
            best = l;
            k = i;
        }
    }
    if (k == ACC_ORIGINS)
        return where;
    snprintf(buf, n, "%s%s", c->origin[k].from, rel + best);
    return buf;
}

void acc_note(golden_accept_step *s, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_array_append_new(s->notes, json_string(msg));
}

int acc_mkdirs(const char *dir, golden_error *err)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *q = p + 1; *q; q++) {
        if (*q != '/')
            continue;
        *q = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return golden_fail_what(err, golden_code_from_errno(errno), p, "cannot create: %s",
                                    strerror(errno));
        *q = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return golden_fail_what(err, golden_code_from_errno(errno), p, "cannot create: %s",
                                strerror(errno));
    return 0;
}

int acc_copy(const char *from, const char *to, golden_error *err)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", to);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        if (acc_mkdirs(dir, err) != 0)
            return -1;
    }
    FILE *in = fopen(from, "rb");
    if (!in)
        return golden_fail_what(err, golden_code_from_errno(errno), from, "cannot open: %s",
                                strerror(errno));
    FILE *out = fopen(to, "wb");
    if (!out) {
        fclose(in);
        return golden_fail_what(err, golden_code_from_errno(errno), to, "cannot create: %s",
                                strerror(errno));
    }
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) {
            rc = golden_fail_what(err, GOLDEN_EIO, to, "write error");
            break;
        }
    if (ferror(in) && rc == 0)
        rc = golden_fail_what(err, GOLDEN_EIO, from, "read error");
    fclose(in);
    if (fclose(out) != 0 && rc == 0)
        rc = golden_fail_what(err, GOLDEN_EIO, to, "write error");
    return rc;
}

int acc_write_json(const char *path, const json_t *doc, golden_error *err)
{
    if (json_dump_file(doc, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot write");
    return 0;
}

static bool rel_ok(const char *rel)
{
    if (!rel || !rel[0] || rel[0] == '/')
        return false;
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return false;
        p += len;
        while (*p == '/')
            p++;
    }
    return true;
}

const char *acc_role_path(const acc_ctx *c, const char *item, const char *role,
                          const char *format, char *buf, size_t n)
{
    if (!c->idx)
        return NULL;
    json_t *files = json_object_get(
        json_object_get(json_object_get(golden_doc_root(c->idx), "items"), item), "files");
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *r = json_string_value(json_object_get(f, "role"));
        const char *fm = json_string_value(json_object_get(f, "format"));
        const char *p = json_string_value(json_object_get(f, "path"));
        if (!r || strcmp(r, role) != 0 || (format && (!fm || strcmp(fm, format) != 0)))
            continue;
        if (!rel_ok(p))
            return NULL;
        snprintf(buf, n, "%s/%s", c->o->handoff, p);
        return buf;
    }
    return NULL;
}

/* A needed deliverable: its path, or a failing finding (and NULL). */
static const char *need(acc_ctx *c, golden_accept_step *s, const char *item, const char *role,
                        const char *format, char *buf, size_t n, int *rc)
{
    const char *p = acc_role_path(c, item, role, format, buf, n);
    if (!p)
        *rc = acc_fail(s, c->err, "handoff-missing", "handoff.json",
                       "item %s lists no usable file with role %s%s%s", item, role,
                       format ? " and format " : "", format ? format : "");
    return p;
}

/* Step 1: the eight deliverables, every hash and schema (manifest-verify --handoff). */
static int step_integrity(acc_ctx *c, golden_accept_step *s)
{
    golden_experiment_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.threads = c->o->threads;
    golden_handoff_item items[GOLDEN_HANDOFF_ITEMS];
    golden_error e;
    golden_error_clear(&e);
    if (golden_handoff_check(c->o->handoff, &eo, items, &s->findings, &e) != 0) {
        if (e.code == GOLDEN_ENOMEM) {
            *c->err = e;
            return -1;
        }
        return acc_fail(s, c->err, "handoff-index", e.where[0] ? e.where : c->o->handoff, "%s",
                        e.what);
    }
    size_t present = 0;
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
        present += items[i].status == GOLDEN_ITEM_PRESENT;
        if (items[i].status != GOLDEN_ITEM_PRESENT && s->findings.errors == 0 &&
            acc_fail(s, c->err, "handoff-missing", "handoff.json", "item %d (%s) is %s: %s",
                     items[i].number, items[i].key, golden_item_status_name(items[i].status),
                     items[i].detail))
            return -1;
    }
    acc_note(s, "%zu of %d deliverables present and well formed, %zu file(s) hashed", present,
             GOLDEN_HANDOFF_ITEMS, s->findings.files_hashed);
    return 0;
}

/* Step 2: the compile manifests against each other and the team's hypothesis. */
static int step_compile(acc_ctx *c, golden_accept_step *s)
{
    golden_experiment_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.threads = c->o->threads;
    if (golden_handoff_compile_check(c->o->handoff, c->o->hypothesis, &eo, &s->findings,
                                     c->err) != 0)
        return -1;
    acc_note(s, "compile manifests, commands and flags diff checked against %s",
             c->o->hypothesis);
    return 0;
}

/* Step 5: the per-op per-chip trace is read; its parser is listed, never run. */
static int step_trace(acc_ctx *c, golden_accept_step *s)
{
    char tp[PATH_MAX], pp[PATH_MAX];
    int rc = 0;
    const char *t = need(c, s, "trace", "trace", NULL, tp, sizeof tp, &rc);
    const char *p = need(c, s, "trace", "parser", NULL, pp, sizeof pp, &rc);
    if (rc || !t)
        return rc;
    FILE *f = fopen(t, "r");
    if (!f)
        return acc_fail(s, c->err, "trace", t, "cannot open: %s", strerror(errno));
    char line[4096];
    size_t rows = 0, cols = 0, side_rows[2] = {0, 0};
    long op = -1, chip = -1, side = -1;
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        for (char *tok = strtok(line, ","); tok; tok = strtok(NULL, ","), cols++) {
            op = strcmp(tok, "op") == 0 ? (long)cols : op;
            chip = strcmp(tok, "chip") == 0 ? (long)cols : chip;
            side = strcmp(tok, "side") == 0 ? (long)cols : side;
        }
    }
    while (fgets(line, sizeof line, f)) {
        size_t k = 1;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[strspn(line, " \t")] == '\0')
            continue;
        for (const char *q = line; *q; q++)
            k += *q == ',';
        if (k != cols) {
            rc = acc_fail(s, c->err, "trace", t, "record %zu has %zu fields, the header %zu",
                          rows + 1, k, cols);
            break;
        }
        rows++;
        if (side >= 0) {
            const char *q = line;
            for (long i = 0; i < side; i++)
                q = strchr(q, ',') + 1;
            side_rows[0] += strncmp(q, "baseline,", 9) == 0 || strcmp(q, "baseline") == 0;
            side_rows[1] += strncmp(q, "candidate,", 10) == 0 || strcmp(q, "candidate") == 0;
        }
    }
    fclose(f);
    if (rc)
        return rc;
    if (rows == 0)
        return acc_fail(s, c->err, "trace", t, "the trace holds no record");
    if (chip < 0)
        return acc_fail(s, c->err, "trace", t, "the trace has no chip column (section 18 item "
                        "5 asks for a per-chip trace)");
    /* per-op attribution: an op column, and both sides traced (a side column, when there is
     * one, must name baseline and candidate rows); else only the whole graph can be compared */
    bool per_op = op >= 0 && (side < 0 || (side_rows[0] && side_rows[1]));
    s->report = json_pack("{s:s,s:I}", "attribution", per_op ? "per_op" : "whole_graph_only",
                          "records", (json_int_t)rows);
    if (!per_op)
        return acc_fail(s, c->err, "trace", t, "attribution whole_graph_only: %s (section 18 "
                        "item 5 asks for a per-op trace of both sides)",
                        op < 0 ? "no op column" : side_rows[0] ? "no candidate row"
                                                               : "no baseline row");
    acc_note(s, "%zu trace record(s) (%zu baseline, %zu candidate), attribution per_op; parser "
             "%s listed, not run", rows, side_rows[0], side_rows[1], p ? p : "?");
    return 0;
}

/* A [lo, hi] pair of the limits document; false when absent or not two integers. */
static bool range_of(json_t *lim, const char *key, long long *lo, long long *hi)
{
    json_t *v = json_object_get(lim, key);
    if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_integer(json_array_get(v, 0)) ||
        !json_is_integer(json_array_get(v, 1)))
        return false;
    *lo = json_integer_value(json_array_get(v, 0));
    *hi = json_integer_value(json_array_get(v, 1));
    return *lo <= *hi;
}

typedef struct {
    acc_ctx *c;
    golden_accept_step *s;
    json_t *lim;
    json_t *prod[2];          /* the team's production dtypes and quants (hypothesis matrix) */
    long long r[3][2], ctx;
    const char *file;
    size_t cases, rejections;
    int rc;
} limits_pass;

static const char *const limit_keys[3] = {"prompt_tokens", "past_tokens", "output_tokens"};
static const char *const type_keys[2] = {"dtypes", "quant"};

/* A non-empty list of non-empty strings. */
static bool names_ok(json_t *a)
{
    size_t i;
    json_t *x;
    if (!json_is_array(a) || json_array_size(a) == 0)
        return false;
    json_array_foreach(a, i, x) {
        if (!json_is_string(x) || !json_string_length(x))
            return false;
    }
    return true;
}

static bool has_name(json_t *a, const char *name)
{
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (json_is_string(x) && strcmp(json_string_value(x), name) == 0)
            return true;
    }
    return false;
}

/* Whether the lists share a name. */
static bool shares(json_t *a, json_t *b)
{
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (json_is_string(x) && has_name(b, json_string_value(x)))
            return true;
    }
    return false;
}

/* The dtypes and quants the cases run in (the team's hypothesis, matrix.dtypes and
 * matrix.quant) against the delivered ones; -1 (could not check) when the team's hypothesis
 * names none: a limit held to nothing would pass by accident. */
static int type_limits(limits_pass *p, golden_doc *hyp)
{
    json_t *mat = json_object_get(golden_doc_root(hyp), "matrix");
    for (int k = 0; k < 2; k++) {
        p->prod[k] = json_object_get(mat, type_keys[k]);
        if (!names_ok(p->prod[k]))
            return golden_fail_what(p->c->err, GOLDEN_EINVAL, p->c->o->hypothesis,
                                    "matrix.%s: the production %s the cases run in (a list of "
                                    "names) is needed to check the delivered limits",
                                    type_keys[k], k ? "quantisations" : "dtypes");
    }
    for (int k = 0; k < 2; k++) {
        json_t *have = json_object_get(p->lim, type_keys[k]);
        if (!names_ok(have))
            return acc_fail(p->s, p->c->err, "limits", p->file, "no %s: a list of names",
                            type_keys[k]);
        size_t i;
        json_t *x;
        json_array_foreach(p->prod[k], i, x) {
            const char *n = json_string_value(x);
            if (!has_name(have, n) &&
                acc_fail(p->s, p->c->err, "limits", p->file,
                         "every case runs in %s %s (the team's hypothesis, matrix.%s), outside "
                         "the delivered %s", k ? "quantisation" : "dtype", n, type_keys[k],
                         type_keys[k]))
                return -1;
        }
    }
    return 0;
}

static int limits_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)err;
    limits_pass *lp = ctx;
    json_t *o = golden_doc_root(d);
    const char *id = json_string_value(json_object_get(o, "case_id"));
    long long v[3];
    for (int k = 0; k < 3; k++) {
        json_t *x = json_object_get(o, limit_keys[k]);
        if (!json_is_integer(x)) {
            lp->rc = lp->rc ? lp->rc : acc_fail(lp->s, lp->c->err, "limits", lp->file,
                                                "line %zu: case %s has no integer %s", line_no,
                                                id ? id : "?", limit_keys[k]);
            return lp->rc;
        }
        v[k] = json_integer_value(x);
    }
    lp->cases++;
    bool rejection = json_is_true(json_object_get(o, "rejection"));
    long long total = v[0] + v[1] + v[2];
    if (rejection) {
        lp->rejections++;
        if (total <= lp->ctx && !lp->rc)
            lp->rc = acc_fail(lp->s, lp->c->err, "limits", lp->file,
                              "rejection case %s (%lld tokens) lies inside the delivered "
                              "context limit %lld", id ? id : "?", total, lp->ctx);
        return 0;
    }
    for (int k = 0; k < 3 && !lp->rc; k++)
        if (v[k] < lp->r[k][0] || v[k] > lp->r[k][1])
            lp->rc = acc_fail(lp->s, lp->c->err, "limits", lp->file,
                              "case %s: %s %lld is outside the delivered limits [%lld, %lld] "
                              "and the case is not a rejection case", id ? id : "?",
                              limit_keys[k], v[k], lp->r[k][0], lp->r[k][1]);
    if (!lp->rc && total > lp->ctx)
        lp->rc = acc_fail(lp->s, lp->c->err, "limits", lp->file,
                          "case %s: %lld tokens exceed the delivered context limit %lld and "
                          "the case is not a rejection case", id ? id : "?", total, lp->ctx);
    /* a CPU fallback covering a production shape (section 9: diagnosis only); one that
     * names dtypes or quants covers the case when it names one the case runs in */
    size_t i;
    json_t *fb;
    json_array_foreach(json_object_get(lp->lim, "cpu_fallback"), i, fb) {
        bool covers = true;
        for (int k = 0; k < 3; k++) {
            long long lo, hi;
            if (json_object_get(fb, limit_keys[k]) && range_of(fb, limit_keys[k], &lo, &hi))
                covers = covers && v[k] >= lo && v[k] <= hi;
        }
        for (int k = 0; k < 2; k++) {
            json_t *names = json_object_get(fb, type_keys[k]);
            if (names)
                covers = covers && shares(names, lp->prod[k]);
        }
        if (covers && !lp->rc)
            lp->rc = acc_fail(lp->s, lp->c->err, "cpu-fallback", lp->file,
                              "case %s of the input manifest is served by the declared CPU "
                              "fallback %zu (section 9: CPU fallback is for diagnosis only, "
                              "never in production)", id ? id : "?", i);
    }
    return lp->rc;
}

/* Step 6: every case of the input manifest inside the delivered limits or a rejection case. */
static int step_limits(acc_ctx *c, golden_accept_step *s)
{
    char lp_[PATH_MAX], mp[PATH_MAX];
    int rc = 0;
    const char *l = need(c, s, "limits", "limits", NULL, lp_, sizeof lp_, &rc);
    const char *m = need(c, s, "goldens", "input_manifest", "calculet-input-manifest/v1", mp,
                         sizeof mp, &rc);
    if (rc || !l || !m)
        return rc;
    golden_doc *d = NULL;
    golden_error e;
    golden_error_clear(&e);
    if (golden_doc_load_file(l, &d, &e) != 0) {
        golden_doc_free(d);
        return acc_fail(s, c->err, "limits", l, "does not parse: %s", e.what);
    }
    limits_pass p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.s = s;
    p.lim = golden_doc_root(d);
    p.file = l;
    for (int k = 0; k < 3 && !rc; k++)
        if (!range_of(p.lim, limit_keys[k], &p.r[k][0], &p.r[k][1]))
            rc = acc_fail(s, c->err, "limits", l, "no %s: [MIN, MAX] of integers", limit_keys[k]);
    json_t *cl = json_object_get(p.lim, "context_limit");
    json_t *fb = json_object_get(p.lim, "cpu_fallback");
    if (!rc && !json_is_integer(cl))
        rc = acc_fail(s, c->err, "limits", l, "no integer context_limit");
    if (!rc && fb && !json_is_array(fb))
        rc = acc_fail(s, c->err, "limits", l, "cpu_fallback is not a list");
    golden_doc *hyp = NULL;
    if (!rc && golden_doc_load_file(c->o->hypothesis, &hyp, c->err) != 0)
        rc = -1;
    size_t before = s->findings.errors;
    if (!rc)
        rc = type_limits(&p, hyp);
    if (!rc && s->findings.errors == before) {
        p.ctx = json_integer_value(cl);
        p.file = m;
        golden_error_clear(&e);
        if (golden_doc_each_jsonl(m, limits_line, &p, &e) != 0 && !p.rc)
            rc = e.code == GOLDEN_ENOMEM ? -1 : acc_fail(s, c->err, "limits", m, "%s", e.what);
        rc = rc ? rc : p.rc;
        if (!rc && p.cases == 0)
            rc = acc_fail(s, c->err, "limits", m, "the input manifest holds no case");
        if (!rc)
            acc_note(s, "%zu case(s) inside the delivered limits (%zu rejection case(s) beyond "
                     "them), %zu CPU fallback(s) declared, none for a production shape; "
                     "%zu dtype(s), %zu quant(s) of the hypothesis delivered",
                     p.cases - p.rejections, p.rejections, fb ? json_array_size(fb) : 0,
                     json_array_size(p.prod[0]), json_array_size(p.prod[1]));
    }
    golden_doc_free(hyp);
    golden_doc_free(d);
    return rc < 0 ? -1 : 0;
}

typedef struct {
    golden_accept_step *s;
    golden_error *err;
    const char *file;
    size_t faults, failed;
    int rc;
} fault_pass;

static int fault_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)err;
    fault_pass *fp = ctx;
    json_t *o = golden_doc_root(d);
    fp->faults++;
    const char *retest = json_string_value(json_object_get(o, "retest_after_reset"));
    bool recovered = json_is_true(json_object_get(o, "recovered"));
    const char *req = json_string_value(json_object_get(o, "request_id"));
    const char *kind = json_string_value(json_object_get(o, "kind"));
    if (!retest || strcmp(retest, "passed") != 0 || !recovered) {
        fp->failed++;
        if (acc_fail(fp->s, fp->err, "retest", fp->file,
                     "line %zu: fault %s of %s: retest after reset %s%s", line_no,
                     kind ? kind : "?", req ? req : "?", retest ? retest : "not done",
                     recovered ? "" : ", not recovered"))
            return fp->rc = -1;
    }
    return 0;
}

/* Step 7: every fault of the delivered log retested after reset, and passed. */
static int step_error_path(acc_ctx *c, golden_accept_step *s)
{
    char fp_[PATH_MAX], rp[PATH_MAX];
    int rc = 0;
    const char *f = need(c, s, "error_path", "faults", "calculet-fault/v1", fp_, sizeof fp_, &rc);
    need(c, s, "error_path", "retest", NULL, rp, sizeof rp, &rc);
    if (rc || !f)
        return rc;
    fault_pass p = {s, c->err, f, 0, 0, 0};
    golden_error e;
    golden_error_clear(&e);
    if (golden_doc_each_jsonl(f, fault_line, &p, &e) != 0) {
        if (p.rc || e.code == GOLDEN_ENOMEM)
            return -1;
        return acc_fail(s, c->err, "retest", f, "%s", e.what);
    }
    if (p.faults == 0)
        acc_note(s, "the fault log holds no fault: nothing to retest");
    else
        acc_note(s, "%zu fault(s) logged, %zu retested after reset and passed", p.faults,
                 p.faults - p.failed);
    return 0;
}

/* The overall verdict: the first failing step decides it (step 1: incomplete, steps 2-7:
 * reject, step 8: the section 17 label); all passing and soak_24h: accepted. */
static void verdict(golden_accept_result *r)
{
    for (int i = 0; i < r->nsteps; i++) {
        golden_accept_step *s = &r->steps[i];
        if (s->verdict != GOLDEN_STEP_FAIL)
            continue;
        const char *w = i == 0 ? "incomplete" : "reject";
        if (i == 7 && r->decision_label[0] && strcmp(r->decision_label, "soak_24h") != 0 &&
            strcmp(r->decision_label, "merge") != 0)
            w = strcmp(r->decision_label, "reject") == 0 ? "reject" : r->decision_label;
        snprintf(r->verdict, sizeof r->verdict, "%s", w);
        snprintf(r->reason, sizeof r->reason, "step %d (%s) failed: %s", i + 1, s->name, s->why);
        return;
    }
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].verdict != GOLDEN_STEP_PASS) {
            snprintf(r->verdict, sizeof r->verdict, "incomplete");
            snprintf(r->reason, sizeof r->reason, "step %d (%s) was skipped: %s", i + 1,
                     r->steps[i].name, r->steps[i].why);
            return;
        }
    if (strcmp(r->decision_label, "soak_24h") == 0 || strcmp(r->decision_label, "merge") == 0) {
        r->accepted = true;
        snprintf(r->verdict, sizeof r->verdict, "accepted");
        snprintf(r->reason, sizeof r->reason, "every step passed%s; the section 17 decision is "
                 "%s", r->nsteps == GOLDEN_ACCEPT_STEPS ? ", the team's own run of the delivered "
                 "runtime included (step 9)" : "", r->decision_label);
    } else {
        snprintf(r->verdict, sizeof r->verdict, "%s",
                 r->decision_label[0] ? r->decision_label : "incomplete");
        snprintf(r->reason, sizeof r->reason, "the section 17 decision is %s",
                 r->decision_label[0] ? r->decision_label : "missing");
    }
}

/* A step's verdict from its findings (the first one says why). */
static void settle(golden_accept_step *s)
{
    if (s->verdict == GOLDEN_STEP_SKIPPED)
        return;
    if (s->findings.errors) {
        s->verdict = GOLDEN_STEP_FAIL;
        for (size_t i = 0; i < s->findings.count; i++)
            if (s->findings.items[i].severity == GOLDEN_SEV_ERROR) {
                char where[1200];
                golden_finding_where(&s->findings.items[i], where, sizeof where);
                snprintf(s->why, sizeof s->why, "%.400s%s%.600s", where[0] ? where : "",
                         where[0] ? ": " : "", s->findings.items[i].message);
                break;
            }
    } else {
        s->verdict = GOLDEN_STEP_PASS;
    }
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The team's own inputs must be readable: else the run cannot check (-1). */
static int team_inputs(const golden_accept_opts *o, golden_error *err)
{
    const char *need_[2] = {o->golden, o->hypothesis};
    const char *what[2] = {"--golden", "--hypothesis"};
    for (int i = 0; i < 2; i++)
        if (!need_[i])
            return golden_fail_what(err, GOLDEN_EINVAL, NULL, "%s is required", what[i]);
    const char *files[4] = {o->golden, o->baseline, o->policy, o->hypothesis};
    for (int i = 0; i < 4; i++)
        if (files[i] && access(files[i], R_OK) != 0)
            return golden_fail_what(err, golden_code_from_errno(errno), files[i],
                                    "cannot read: %s", strerror(errno));
    if (golden_gate_hypothesis_check(o->hypothesis, err) != 0 ||
        acc_runtime_opts_check(o, err) != 0)
        return -1;
    struct stat st;
    /* checked before any step: step 9 writes the team's replay there */
    if (o->experiment_out && !o->force && stat(o->experiment_out, &st) == 0)
        return golden_fail_what(err, GOLDEN_EEXISTS, o->experiment_out,
                                "exists (use --force to replace its files)");
    if (!o->handoff || stat(o->handoff, &st) != 0 || !S_ISDIR(st.st_mode))
        return golden_fail_what(err, GOLDEN_EINVAL, o->handoff ? o->handoff : "", "%s",
                                "not a folder");
    return 0;
}

static void rm_tree(const char *dir);

int golden_accept_run(const golden_accept_opts *o, golden_accept_result **out, golden_error *err)
{
    *out = NULL;
    if (team_inputs(o, err) != 0)
        return -1;
    golden_accept_result *r = calloc(1, sizeof *r);
    if (!r)
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    r->handoff = dup_or_null(o->handoff);
    r->golden = dup_or_null(o->golden);
    r->baseline = dup_or_null(o->baseline);
    r->policy = dup_or_null(o->policy);
    r->hypothesis = dup_or_null(o->hypothesis);
    r->experiment = dup_or_null(o->experiment_out);
    for (int i = 0; i < GOLDEN_ACCEPT_STEPS; i++) {
        r->steps[i].name = step_names[i];
        golden_findings_init(&r->steps[i].findings);
        r->steps[i].notes = json_array();
        r->steps[i].reports = json_array();
    }
    acc_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.r = r;
    c.err = err;
    int rc = -1;
    char ip[PATH_MAX];
    snprintf(ip, sizeof ip, "%s/handoff.json", o->handoff);
    golden_error e;
    golden_error_clear(&e);
    if (golden_doc_load_file(ip, &c.idx, &e) != 0) {
        golden_doc_free(c.idx);
        c.idx = NULL;
    }
    /* the experiment folder is assembled under a temporary parent, named by the hand-off's
     * EXP_ID (manifest-verify's folder-name rule) */
    const char *tmp = getenv("TMPDIR");
    snprintf(c.base, sizeof c.base, "%s/golden-accept.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(c.base)) {
        golden_fail_what(err, golden_code_from_errno(errno), c.base, "cannot create: %s",
                         strerror(errno));
        c.base[0] = '\0';
        goto done;
    }
    const char *id = c.idx ? json_string_value(json_object_get(golden_doc_root(c.idx),
                                                               "experiment_id"))
                           : NULL;
    snprintf(c.work, sizeof c.work, "%s/%s", c.base,
             id && rel_ok(id) && !strchr(id, '/') ? id : "experiment");
    if (acc_mkdirs(c.work, err) != 0)
        goto done;
    typedef int (*step_fn)(acc_ctx *, golden_accept_step *);
    static const step_fn fns[GOLDEN_ACCEPT_STEPS] = {
        step_integrity, step_compile, acc_step_accuracy, acc_step_graph, step_trace,
        step_limits, step_error_path, acc_step_performance, acc_step_runtime};
    r->nsteps = o->version >= 2 && o->backend ? GOLDEN_ACCEPT_STEPS : GOLDEN_ACCEPT_STEPS - 1;
    for (int i = 0; i < r->nsteps; i++) {
        golden_accept_step *s = &r->steps[i];
        if (i > 0 && !c.idx) {
            s->verdict = GOLDEN_STEP_SKIPPED;
            snprintf(s->why, sizeof s->why, "handoff.json cannot be read");
            continue;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (fns[i](&c, s) != 0)
            goto done;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        s->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        settle(s);
    }
    if (o->experiment_out && acc_assemble(&c) != 0)
        goto done;
    verdict(r);
    rc = 0;
done:
    if (c.base[0])
        rm_tree(c.base);
    if (rc != 0 && o->experiment_out && c.team[0]) /* no partial experiment folder */
        rm_tree(c.out_made ? o->experiment_out : c.team);
    golden_diff_free(c.diff);
    golden_doc_free(c.idx);
    if (rc != 0)
        golden_accept_free(r);
    else
        *out = r;
    return rc;
}

#include <dirent.h>
static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                rm_tree(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

void golden_accept_free(golden_accept_result *r)
{
    if (!r)
        return;
    for (int i = 0; i < GOLDEN_ACCEPT_STEPS; i++) {
        golden_findings_free(&r->steps[i].findings);
        json_decref(r->steps[i].notes);
        json_decref(r->steps[i].reports);
        json_decref(r->steps[i].report);
    }
    json_decref(r->decision);
    json_decref(r->summary);
    json_decref(r->race_view);
    free(r->handoff);
    free(r->golden);
    free(r->baseline);
    free(r->policy);
    free(r->hypothesis);
    free(r->experiment);
    free(r);
}
