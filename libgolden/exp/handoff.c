/* Vendor hand-offs (handbook section 18): the eight deliverables indexed by handoff.json, each
 * present, missing or malformed, every file holding what its kind needs. */
#include "exp/internal.h"
#include "golden/hash.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *key;
    const char *title;
    const char *need_roles;  /* space-separated roles that must be listed */
    const char *need_format; /* a format that must be listed, or NULL */
    const char *role_format; /* the format the needed roles must be carried by, or NULL */
} handoff_spec;

static const handoff_spec handoff_specs[GOLDEN_HANDOFF_ITEMS] = {
    {"calbins", "baseline/candidate calbins and SHA-256", "baseline candidate", NULL, NULL},
    {"compile", "compile command, flags diff, compiler OCI digest, commits", "baseline candidate",
     "calculet-calbin-manifest/v1", "calculet-calbin-manifest/v1"},
    {"graph", "graph/op count, partition, memory plan diff", "", NULL, NULL},
    {"goldens", "per-op/layer goldens, input manifest, tolerances", "golden tolerances",
     "calculet-input-manifest/v1", NULL},
    {"trace", "per-op/per-chip trace and its parser", "trace parser", NULL, NULL},
    {"limits", "supported shape/dtype/quant limits and fallback", "", NULL, NULL},
    {"error_path", "error path and retest after reset", "", NULL, NULL},
    {"performance", "raw performance data", "", "calculet-raw-request/v1", NULL},
};

static void item_mark(golden_handoff_item *it, golden_item_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void item_mark(golden_handoff_item *it, golden_item_status s, const char *fmt, ...)
{
    /* missing outranks malformed: a delivery without the item is the bigger gap */
    if (it->status == GOLDEN_ITEM_MISSING || it->status == s)
        return;
    it->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->detail, sizeof it->detail, fmt, ap);
    va_end(ap);
}

/* What a hand-off run keeps: the index, the compile manifests by role, the schemas. */
typedef struct {
    vctx c;
    schema_cache sc;
    golden_doc *idx;
    char ipath[1024];
    golden_doc *manifest[2]; /* compile manifests listed as baseline [0] and candidate [1] */
} handoff_run;

/* A finding about a delivered file, placed at its entry in handoff.json (so the item that lists
 * it is marked malformed). */
static int content_finding(handoff_run *r, const origin *o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int content_finding(handoff_run *r, const origin *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = exp_findings_vadd(r->c.out, GOLDEN_SEV_ERROR, "handoff-content", o->file, o->line,
                           o->col, o->pointer, r->c.err, fmt, ap);
    va_end(ap);
    return rc;
}

/* Lines holding something other than blanks, counted up to `enough`: 0 = empty file. */
static int text_lines(const char *path, size_t enough, size_t *lines, golden_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s",
                                strerror(errno));
    *lines = 0;
    bool filled = false;
    int ch;
    while (*lines < enough && (ch = getc(f)) != EOF) {
        if (ch == '\n') {
            *lines += filled;
            filled = false;
        } else if (ch != ' ' && ch != '\t' && ch != '\r') {
            filled = true;
        }
    }
    if (filled && *lines < enough)
        (*lines)++;
    int bad = ferror(f);
    fclose(f);
    return bad ? golden_fail_what(err, GOLDEN_EIO, path, "read error") : GOLDEN_OK;
}

static int count_line(void *ctx, golden_doc *line_doc, size_t line_no, golden_error *err)
{
    (void)line_doc;
    (void)line_no;
    (void)err;
    (*(size_t *)ctx)++;
    return 0;
}

/* A deliverable without a format must still hold what its item needs: a JSON/YAML document
 * that parses and is not empty, a CSV with a header and at least one record, any other file
 * at least one byte that is not blank (docs/manifest-verify.md, "Hand-off contents"). */
static int untyped_content(handoff_run *r, const char *rel, const origin *o)
{
    char path[1024];
    exp_disp(&r->c, rel, path, sizeof path);
    if (lg_has_suffix(rel, ".json") || lg_has_suffix(rel, ".yaml") || lg_has_suffix(rel, ".yml")) {
        golden_doc *d = NULL;
        golden_error e;
        golden_error_clear(&e);
        if (exp_load_doc(path, &d, &e) != 0) {
            golden_doc_free(d);
            if (e.code == GOLDEN_ENOMEM)
                return golden_fail_what(r->c.err, GOLDEN_ENOMEM, NULL, "out of memory");
            return content_finding(r, o, "'%s' does not parse: %s", rel, e.what);
        }
        json_t *root = golden_doc_root(d);
        bool empty = !(json_is_object(root) && json_object_size(root) > 0) &&
                     !(json_is_array(root) && json_array_size(root) > 0);
        golden_doc_free(d);
        return empty ? content_finding(r, o, "'%s' holds no entry (an empty document)", rel)
                     : GOLDEN_OK;
    }
    if (lg_has_suffix(rel, ".jsonl")) {
        size_t records = 0;
        golden_error e;
        golden_error_clear(&e);
        if (golden_doc_each_jsonl(path, count_line, &records, &e) != 0) {
            if (e.code == GOLDEN_ENOMEM)
                return golden_fail_what(r->c.err, GOLDEN_ENOMEM, NULL, "out of memory");
            return content_finding(r, o, "'%s' does not parse: %s", rel, e.what);
        }
        return records ? GOLDEN_OK : content_finding(r, o, "'%s' holds no record", rel);
    }
    bool csv = lg_has_suffix(rel, ".csv");
    size_t lines = 0;
    if (text_lines(path, csv ? 2 : 1, &lines, r->c.err) != 0)
        return GOLDEN_ERR;
    if (csv && lines < 2)
        return content_finding(r, o, "'%s' holds no record (a header and at least one row)",
                               rel);
    if (lines == 0)
        return content_finding(r, o, "'%s' is empty", rel);
    return GOLDEN_OK;
}

/* A compile manifest: its own role must be the one the index gives it; kept for the pair rules. */
static int handoff_manifest(handoff_run *r, golden_doc *d, const char *rel, const char *role,
                            const origin *o)
{
    const char *own = exp_sget(golden_doc_root(d), "role");
    int line = o->line;
    if (own && role && strcmp(own, role) != 0)
        return exp_add_node(&r->c, GOLDEN_SEV_ERROR, "manifest-agrees", d, "/role",
                        "role is '%s' but %s:%d lists '%s' as role '%s'", own, o->file, line,
                        rel, role);
    int k = own && strcmp(own, "baseline") == 0 ? 0 : own && strcmp(own, "candidate") == 0 ? 1 : -1;
    if (k >= 0 && !r->manifest[k]) {
        r->manifest[k] = d;
        return 1; /* kept */
    }
    return GOLDEN_OK;
}

/* A JSON Lines record of a hand-off: validated, and its {path, sha256} references checked,
 * relative to the record file's own folder for the input manifest (its token files, as
 * npu-replay writes and reads them), else to the hand-off folder. */
typedef struct {
    plain_jl p;
    vctx *c;
    const char *base;
} handoff_jl;

static int handoff_line(void *ctx, golden_doc *line_doc, size_t line_no, golden_error *err)
{
    handoff_jl *h = ctx;
    if (exp_plain_line(&h->p, line_doc, line_no, err) != 0)
        return -1;
    return exp_doc_refs_in(h->c, line_doc, h->base) != 0 ? -1 : 0;
}

/* Validate one delivered document named with a format; the schema decides malformed, a JSON
 * Lines file must hold at least one record (a fault log may be empty: no fault). */
static int handoff_doc(handoff_run *r, const char *rel, const char *format, const char *role,
                       const origin *o)
{
    vctx *c = &r->c;
    char path[1024];
    exp_disp(c, rel, path, sizeof path);
    golden_schema *s = exp_schema_get(&r->sc, format, c->err);
    if (!s)
        return GOLDEN_ERR;
    if (lg_has_suffix(rel, ".jsonl")) {
        char base[1024] = "";
        const char *slash = strrchr(rel, '/');
        if (strcmp(format, "calculet-input-manifest/v1") == 0 && slash)
            snprintf(base, sizeof base, "%.*s", (int)(slash - rel), rel);
        handoff_jl h = {{c->out, s, 0, c->threads}, c, base};
        if (golden_doc_each_jsonl(path, handoff_line, &h, c->err) != 0)
            return GOLDEN_ERR;
        plain_jl p = h.p;
        if (p.records == 0 && strcmp(format, "calculet-fault/v1") != 0)
            return content_finding(r, o, "'%s' holds no %s record", rel, format);
        return GOLDEN_OK;
    }
    golden_doc *d = NULL;
    if (exp_load_doc(path, &d, c->err) != 0) {
        golden_doc_free(d);
        return GOLDEN_ERR;
    }
    int rc = exp_validate(c->out, s, d, c->threads, c->err) < 0 || exp_doc_refs(c, d) != 0 ? GOLDEN_ERR : GOLDEN_OK;
    if (rc == GOLDEN_OK && strcmp(format, "calculet-calbin-manifest/v1") == 0) {
        int kept = handoff_manifest(r, d, rel, role, o);
        if (kept == 1)
            d = NULL;
        rc = kept < 0 ? GOLDEN_ERR : GOLDEN_OK;
    }
    golden_doc_free(d);
    return rc;
}

/* Every needed role must be on a file, of role_format when the spec names one (a compile
 * manifest, not any file that says "candidate"). */
static bool file_has_role(json_t *files, const char *role, const char *format)
{
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *r = exp_sget(f, "role"), *fm = exp_sget(f, "format");
        if (r && strcmp(r, role) == 0 && (!format || (fm && strcmp(fm, format) == 0)))
            return true;
    }
    return false;
}

static bool file_has_format(json_t *files, const char *format)
{
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *r = exp_sget(f, "format");
        if (r && strcmp(r, format) == 0)
            return true;
    }
    return false;
}

/* The roles and format an item must list; a gap marks it missing. */
static int item_needs(handoff_run *r, const handoff_spec *sp, golden_handoff_item *it,
                      json_t *files, const char *ptr)
{
    for (const char *p = sp->need_roles; *p;) {
        const char *e = strchr(p, ' ');
        char role[32];
        size_t len = e ? (size_t)(e - p) : strlen(p);
        snprintf(role, sizeof role, "%.*s", (int)len, p);
        if (!file_has_role(files, role, sp->role_format)) {
            item_mark(it, GOLDEN_ITEM_MISSING, "no %s with role %s",
                      sp->role_format ? sp->role_format : "file", role);
            if (exp_add_node(&r->c, GOLDEN_SEV_ERROR, "handoff-missing", r->idx, ptr,
                         "item %d (%s) lists no %s with role '%s'", it->number, sp->title,
                         sp->role_format ? sp->role_format : "file", role))
                return GOLDEN_ERR;
        }
        p += len;
        while (*p == ' ')
            p++;
    }
    if (sp->need_format && !file_has_format(files, sp->need_format)) {
        item_mark(it, GOLDEN_ITEM_MISSING, "no %s document", sp->need_format);
        if (exp_add_node(&r->c, GOLDEN_SEV_ERROR, "handoff-missing", r->idx, ptr,
                     "item %d (%s) lists no %s document", it->number, sp->title,
                     sp->need_format))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

/* One listed file: inside the folder, hashed, and holding what its kind needs. */
static int item_file(handoff_run *r, golden_handoff_item *it, json_t *f, const char *ptr,
                     size_t k)
{
    vctx *c = &r->c;
    const char *path = exp_sget(f, "path"), *sha = exp_sget(f, "sha256");
    const char *format = exp_sget(f, "format"), *role = exp_sget(f, "role");
    if (!path)
        return GOLDEN_OK;
    char fp[600];
    snprintf(fp, sizeof fp, "%s/files/%zu/path", ptr, k);
    int line = 0, col = 0;
    golden_doc_line(r->idx, json_object_get(f, "path"), &line, &col);
    origin o = {r->ipath, line, col, fp};
    int pk = exp_check_path(c, path, &o, "handoff-missing");
    if (pk < 0)
        return GOLDEN_ERR;
    if (pk == 0) {
        const char *rule = c->out->items[c->out->count - 1].rule;
        item_mark(it, strcmp(rule, "handoff-missing") == 0 ? GOLDEN_ITEM_MISSING
                                                           : GOLDEN_ITEM_MALFORMED,
                  "%s", c->out->items[c->out->count - 1].message);
        return GOLDEN_OK;
    }
    if (sha && golden_is_sha256_hex(sha) && exp_add_job(c, path, sha, "artifact-hash", &o))
        return GOLDEN_ERR;
    if (format && exp_format_embedded(format))
        return handoff_doc(r, path, format, role, &o);
    return untyped_content(r, path, &o);
}

/* A broken index entry, a hash mismatch, an empty deliverable, or any finding inside a document
 * an item delivers (its own references included) makes that item malformed. */
static void mark_malformed(handoff_run *r, json_t *its, golden_handoff_item *items)
{
    golden_findings *out = r->c.out;
    for (size_t i = 0; i < out->count; i++) {
        const golden_finding *g = &out->items[i];
        if (g->severity != GOLDEN_SEV_ERROR || strcmp(g->rule, "handoff-missing") == 0)
            continue;
        for (int k = 0; k < GOLDEN_HANDOFF_ITEMS; k++) {
            bool hit = false;
            if (strcmp(g->file, r->ipath) == 0) {
                char pre[128];
                snprintf(pre, sizeof pre, "/items/%s/", handoff_specs[k].key);
                hit = strncmp(g->pointer, pre, strlen(pre)) == 0;
            } else {
                size_t j;
                json_t *f;
                json_t *files = json_object_get(json_object_get(its, handoff_specs[k].key), "files");
                json_array_foreach(files, j, f) {
                    const char *path = exp_sget(f, "path");
                    char dp[1024];
                    if (!path)
                        continue;
                    exp_disp(&r->c, path, dp, sizeof dp);
                    hit = hit || strcmp(dp, g->file) == 0;
                }
            }
            if (hit)
                item_mark(&items[k], GOLDEN_ITEM_MALFORMED, "%s", g->message);
        }
    }
}

/* The calbin each compile manifest describes is the one item 1 lists under the same role, so a
 * role cannot sit on one file while the manifest describes another. */
static int calbins_agree(handoff_run *r, json_t *its)
{
    static const char *const roles[2] = {"baseline", "candidate"};
    json_t *files = json_object_get(json_object_get(its, "calbins"), "files");
    for (int k = 0; k < 2; k++) {
        if (!r->manifest[k])
            continue;
        const char *sha = json_string_value(
            exp_ptr_get(golden_doc_root(r->manifest[k]), "/calbin/sha256"));
        bool any = false, listed = false;
        size_t i;
        json_t *f;
        json_array_foreach(files, i, f) {
            const char *role = exp_sget(f, "role"), *fsha = exp_sget(f, "sha256");
            if (!role || strcmp(role, roles[k]) != 0)
                continue;
            any = true;
            listed = listed || (sha && fsha && strcmp(sha, fsha) == 0);
        }
        if (sha && any && !listed &&
            exp_add_node(&r->c, GOLDEN_SEV_ERROR, "manifest-agrees", r->manifest[k],
                         "/calbin/sha256",
                         "the %s manifest describes calbin %.12s..., which item 1 (calbins) does "
                         "not list with role %s", roles[k], sha, roles[k]))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

static void handoff_items_init(golden_handoff_item items[GOLDEN_HANDOFF_ITEMS])
{
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
        memset(&items[i], 0, sizeof items[i]);
        items[i].number = i + 1;
        items[i].key = handoff_specs[i].key;
        items[i].title = handoff_specs[i].title;
        items[i].status = GOLDEN_ITEM_PRESENT;
    }
}

/* The index itself: -1 when it cannot be read (then nothing can be checked), 0 when loaded. */
static int handoff_index(handoff_run *r)
{
    vctx *c = &r->c;
    exp_disp(c, "handoff.json", r->ipath, sizeof r->ipath);
    origin io = {r->ipath, 0, 0, ""};
    int ok = exp_check_path(c, "handoff.json", &io, "handoff-index");
    if (ok < 0)
        return GOLDEN_ERR;
    if (ok == 0) {
        /* no usable index: the delivery cannot be checked at all */
        golden_findings *out = c->out;
        golden_fail_what(c->err, GOLDEN_EINVAL, r->ipath, "%s", out->items[out->count - 1].message);
        out->errors--;
        out->count--;
        return GOLDEN_ERR;
    }
    golden_schema *s = exp_schema_get(&r->sc, "calculet-handoff/v1", c->err);
    if (!s || exp_load_doc(r->ipath, &r->idx, c->err) != 0 || exp_validate(c->out, s, r->idx, c->threads, c->err) < 0)
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

int golden_handoff_check(const char *dir, const golden_experiment_opts *opts,
                         golden_handoff_item items[GOLDEN_HANDOFF_ITEMS], golden_findings *out,
                         golden_error *err)
{
    handoff_run r;
    memset(&r, 0, sizeof r);
    int rc = GOLDEN_ERR;
    handoff_items_init(items);
    if (exp_vctx_init(&r.c, dir, opts, out, err) != 0)
        return GOLDEN_ERR;
    if (handoff_index(&r) != 0)
        goto done;
    json_t *its = json_object_get(golden_doc_root(r.idx), "items");
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
        const handoff_spec *sp = &handoff_specs[i];
        json_t *item = json_object_get(its, sp->key);
        json_t *files = json_object_get(item, "files");
        char ptr[512] = "/items";
        exp_ptr_push(ptr, sizeof ptr, sp->key);
        if (!json_is_array(files) || json_array_size(files) == 0) {
            item_mark(&items[i], GOLDEN_ITEM_MISSING, "no files listed");
            if (exp_add_node(&r.c, GOLDEN_SEV_ERROR, "handoff-missing", r.idx, item ? ptr : "/items",
                         "item %d (%s) is missing: no files listed", items[i].number, sp->title))
                goto done;
            continue;
        }
        if (item_needs(&r, sp, &items[i], files, ptr) != 0)
            goto done;
        size_t k;
        json_t *f;
        json_array_foreach(files, k, f)
            if (item_file(&r, &items[i], f, ptr, k) != 0)
                goto done;
    }
    /* the two compile manifests: one main factor's bookkeeping and their commands */
    if (r.manifest[0] && r.manifest[1] &&
        exp_rules_manifest_pair(&r.c, NULL, r.manifest[0], r.manifest[1]) != 0)
        goto done;
    for (int k = 0; k < 2; k++)
        if (r.manifest[k] && exp_command_agrees(&r.c, r.manifest[k]) != 0)
            goto done;
    if (calbins_agree(&r, its) != 0)
        goto done;
    if (exp_run_jobs(&r.c, NULL, NULL, NULL) != 0)
        goto done;
    mark_malformed(&r, its, items);
    rc = GOLDEN_OK;
done:
    golden_doc_free(r.manifest[0]);
    golden_doc_free(r.manifest[1]);
    golden_doc_free(r.idx);
    exp_schema_cache_free(&r.sc);
    exp_vctx_free(&r.c);
    return rc;
}
