/* Experiment folders, seals and vendor hand-offs checked against the handbook (sections 3, 4, 5,
 * 7, 16.1, 18): every rule manifest-verify knows lives here; the tool only prints. */
#include "golden/experiment.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/doc.h"
#include "util/embed.h"
#include "golden/hash.h"
#include "golden/report.h"
#include "golden/schema.h"

/* ------------------------------------------------------------------ findings */

void golden_findings_init(golden_findings *f)
{
    memset(f, 0, sizeof *f);
}

void golden_findings_free(golden_findings *f)
{
    if (!f)
        return;
    free(f->items);
    memset(f, 0, sizeof *f);
}

static int findings_vadd(golden_findings *f, golden_severity sev, const char *rule,
                         const char *file, int line, int col, const char *pointer,
                         golden_error *err, const char *fmt, va_list ap)
{
    if (f->count == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 32;
        golden_finding *n = realloc(f->items, cap * sizeof *n);
        if (!n)
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory collecting findings");
        f->items = n;
        f->cap = cap;
    }
    golden_finding *g = &f->items[f->count++];
    memset(g, 0, sizeof *g);
    g->severity = sev;
    snprintf(g->rule, sizeof g->rule, "%s", rule);
    snprintf(g->file, sizeof g->file, "%s", file ? file : "");
    g->line = line;
    g->col = col;
    snprintf(g->pointer, sizeof g->pointer, "%s", pointer ? pointer : "");
    vsnprintf(g->message, sizeof g->message, fmt, ap);
    if (sev == GOLDEN_SEV_ERROR)
        f->errors++;
    else
        f->todos++;
    return GOLDEN_OK;
}

int golden_findings_add(golden_findings *f, golden_severity sev, const char *rule,
                        const char *file, int line, int col, const char *pointer,
                        golden_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = findings_vadd(f, sev, rule, file, line, col, pointer, err, fmt, ap);
    va_end(ap);
    return rc;
}

void golden_finding_where(const golden_finding *f, char *buf, size_t n)
{
    if (f->line > 0)
        snprintf(buf, n, "%s:%d:%d", f->file, f->line, f->col);
    else if (f->pointer[0])
        snprintf(buf, n, "%s#%s", f->file, f->pointer);
    else
        snprintf(buf, n, "%s", f->file);
}

const char *golden_item_status_name(golden_item_status s)
{
    switch (s) {
    case GOLDEN_ITEM_PRESENT: return "present";
    case GOLDEN_ITEM_MISSING: return "missing";
    default: return "malformed";
    }
}

/* ------------------------------------------------------------------ small helpers */

static char *xstrdup(const char *s, golden_error *err)
{
    char *d = strdup(s);
    if (!d)
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    return d;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Append a JSON Pointer token (escaping ~ and /) to buf. */
static void ptr_push(char *buf, size_t n, const char *token)
{
    size_t len = strlen(buf);
    if (len + 1 >= n)
        return;
    buf[len++] = '/';
    for (const char *p = token; *p && len + 2 < n; p++) {
        if (*p == '~' || *p == '/') {
            buf[len++] = '~';
            buf[len++] = *p == '~' ? '0' : '1';
        } else {
            buf[len++] = *p;
        }
    }
    buf[len] = '\0';
}

static void ptr_push_index(char *buf, size_t n, size_t i)
{
    char tok[32];
    snprintf(tok, sizeof tok, "%zu", i);
    ptr_push(buf, n, tok);
}

/* Resolve a JSON Pointer inside root; NULL when it names nothing. */
static json_t *ptr_get(json_t *root, const char *ptr)
{
    json_t *node = root;
    const char *p = ptr;
    char tok[1024];
    while (node && *p == '/') {
        p++;
        size_t len = 0;
        while (*p && *p != '/' && len + 1 < sizeof tok) {
            if (p[0] == '~' && p[1] == '0') {
                tok[len++] = '~';
                p += 2;
            } else if (p[0] == '~' && p[1] == '1') {
                tok[len++] = '/';
                p += 2;
            } else {
                tok[len++] = *p++;
            }
        }
        tok[len] = '\0';
        if (json_is_object(node)) {
            node = json_object_get(node, tok);
        } else if (json_is_array(node)) {
            char *end;
            unsigned long idx = strtoul(tok, &end, 10);
            node = (*tok && !*end) ? json_array_get(node, idx) : NULL;
        } else {
            node = NULL;
        }
    }
    return node;
}

/* Position of the node a pointer names. jansson shares one true, false and null between all
 * places, so positions are asked of the parent's slot rather than of the node. */
static void node_pos(const golden_doc *doc, const char *ptr, int *line, int *col)
{
    *line = *col = 0;
    json_t *root = golden_doc_root(doc);
    const char *slash = ptr ? strrchr(ptr, '/') : NULL;
    if (!slash) {
        golden_doc_line(doc, root, line, col);
        return;
    }
    char parent_ptr[1024], tok[1024];
    size_t plen = (size_t)(slash - ptr);
    if (plen >= sizeof parent_ptr)
        return;
    memcpy(parent_ptr, ptr, plen);
    parent_ptr[plen] = '\0';
    size_t t = 0;
    for (const char *p = slash + 1; *p && t + 1 < sizeof tok;) {
        if (p[0] == '~' && (p[1] == '0' || p[1] == '1')) {
            tok[t++] = p[1] == '0' ? '~' : '/';
            p += 2;
        } else {
            tok[t++] = *p++;
        }
    }
    tok[t] = '\0';
    json_t *parent = ptr_get(root, parent_ptr);
    if (json_is_object(parent) && json_object_get(parent, tok)) {
        golden_doc_child_line(doc, parent, tok, 0, line, col);
    } else if (json_is_array(parent)) {
        char *end;
        unsigned long idx = strtoul(tok, &end, 10);
        if (*tok && !*end && idx < json_array_size(parent))
            golden_doc_child_line(doc, parent, NULL, idx, line, col);
    }
    if (*line == 0 && parent) /* the slot is absent: point at its parent */
        node_pos(doc, parent_ptr, line, col);
}

static const char *sget(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Scalars compared by their text, so that YAML's 0.7 (a number) equals JSON's "0.7". */
static bool scalar_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%.15g", json_real_value(v));
    else if (json_is_true(v))
        snprintf(buf, n, "true");
    else if (json_is_false(v))
        snprintf(buf, n, "false");
    else
        return false;
    return true;
}

static bool value_eq(const json_t *a, const json_t *b)
{
    char x[512], y[512];
    if (scalar_text(a, x, sizeof x) && scalar_text(b, y, sizeof y))
        return strcmp(x, y) == 0;
    return a && b && json_equal((json_t *)a, (json_t *)b);
}

static void value_show(const json_t *v, char *buf, size_t n)
{
    if (!v) {
        snprintf(buf, n, "(absent)");
        return;
    }
    if (!scalar_text(v, buf, n))
        snprintf(buf, n, "(%s)", json_is_object(v) ? "object" : json_is_array(v) ? "array" : "null");
}

/* ------------------------------------------------------------------ checking context */

typedef struct {
    char *rel;          /* folder-relative path */
    char expect[65];    /* expected digest, "" when only the digest is wanted (seal) */
    const char *rule;   /* "artifact-hash", "calibration-hash" or "seal" */
    char file[1024];    /* where the expectation was written */
    int line, col;
    char pointer[256];
    size_t slot;        /* index into the unique path list */
} hash_job;

typedef struct {
    const char *given;      /* the folder as the user named it */
    char root[PATH_MAX];    /* its real path */
    golden_findings *out;
    golden_error *err;
    hash_job *jobs;
    size_t njobs, capjobs;
    char **assets;          /* regular files found by the walk (relative), for the seal */
    size_t nassets, capassets;
    int threads;
} vctx;

static void disp(const vctx *c, const char *rel, char *buf, size_t n)
{
    if (!rel || !*rel)
        snprintf(buf, n, "%s", c->given);
    else
        snprintf(buf, n, "%s/%s", c->given, rel);
}

static int add_rel(vctx *c, golden_severity sev, const char *rule, const char *rel,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int add_rel(vctx *c, golden_severity sev, const char *rule, const char *rel,
                   const char *fmt, ...)
{
    char file[1024];
    disp(c, rel, file, sizeof file);
    va_list ap;
    va_start(ap, fmt);
    int rc = findings_vadd(c->out, sev, rule, file, 0, 0, "", c->err, fmt, ap);
    va_end(ap);
    return rc;
}

/* A finding at a node of a document: position from the doc, pointer as given. */
static int add_node(vctx *c, golden_severity sev, const char *rule, const golden_doc *doc,
                    const char *pointer, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int add_node(vctx *c, golden_severity sev, const char *rule, const golden_doc *doc,
                    const char *pointer, const char *fmt, ...)
{
    int line = 0, col = 0;
    node_pos(doc, pointer ? pointer : "", &line, &col);
    va_list ap;
    va_start(ap, fmt);
    int rc = findings_vadd(c->out, sev, rule, golden_doc_name(doc), line, col, pointer, c->err,
                           fmt, ap);
    va_end(ap);
    return rc;
}

static void vctx_free(vctx *c)
{
    for (size_t i = 0; i < c->njobs; i++)
        free(c->jobs[i].rel);
    free(c->jobs);
    for (size_t i = 0; i < c->nassets; i++)
        free(c->assets[i]);
    free(c->assets);
}

static int vctx_init(vctx *c, const char *dir, const golden_experiment_opts *opts,
                     golden_findings *out, golden_error *err)
{
    memset(c, 0, sizeof *c);
    c->given = dir;
    c->out = out;
    c->err = err;
    c->threads = opts && opts->threads > 0 ? opts->threads : golden_threads();
    struct stat st;
    if (stat(dir, &st) != 0)
        return golden_fail_what(err, golden_code_from_errno(errno), dir, "cannot open folder: %s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return golden_fail_what(err, GOLDEN_EINVAL, dir, "not a folder");
    if (!realpath(dir, c->root))
        return golden_fail_what(err, golden_code_from_errno(errno), dir, "cannot resolve folder: %s", strerror(errno));
    return GOLDEN_OK;
}

/* True when real path p is root or lies under it. */
static bool inside_root(const vctx *c, const char *p)
{
    size_t n = strlen(c->root);
    if (strcmp(c->root, "/") == 0)
        return true;
    return strncmp(p, c->root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static bool lexically_escapes(const char *rel)
{
    if (rel[0] == '/')
        return true;
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

/* Where a named path was written, for findings. */
typedef struct {
    const char *file;
    int line, col;
    const char *pointer;
} origin;

static int add_origin(vctx *c, const origin *o, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_origin(vctx *c, const origin *o, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = findings_vadd(c->out, GOLDEN_SEV_ERROR, rule, o->file, o->line, o->col, o->pointer,
                           c->err, fmt, ap);
    va_end(ap);
    return rc;
}

/* Check that rel names a regular file inside the folder (no `..`, no symbolic link out).
 * 1 = usable, 0 = a finding was added, -1 = internal error. */
static int check_path(vctx *c, const char *rel, const origin *o, const char *missing_rule)
{
    if (!*rel || lexically_escapes(rel))
        return add_origin(c, o, "path-escape", "path '%s' leaves the folder", rel) ? -1 : 0;
    if (strlen(rel) >= PATH_MAX - 1 - strlen(c->root))
        return add_origin(c, o, missing_rule, "path of %zu bytes is too long", strlen(rel)) ? -1 : 0;
    char full[PATH_MAX * 2], real[PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", c->root, rel);
    struct stat st;
    if (lstat(full, &st) != 0)
        return add_origin(c, o, missing_rule, "'%s' does not exist", rel) ? -1 : 0;
    if (!realpath(full, real))
        return add_origin(c, o, "path-escape", "'%s' is a symbolic link that resolves nowhere",
                          rel) ? -1 : 0;
    if (!inside_root(c, real))
        return add_origin(c, o, "path-escape", "'%s' leaves the folder through a symbolic link",
                          rel) ? -1 : 0;
    if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
        return add_origin(c, o, missing_rule, "'%s' is not a regular file", rel) ? -1 : 0;
    return 1;
}

static int add_job(vctx *c, const char *rel, const char *expect, const char *rule,
                   const origin *o)
{
    if (c->njobs == c->capjobs) {
        size_t cap = c->capjobs ? c->capjobs * 2 : 64;
        hash_job *n = realloc(c->jobs, cap * sizeof *n);
        if (!n)
            return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
        c->jobs = n;
        c->capjobs = cap;
    }
    hash_job *j = &c->jobs[c->njobs];
    memset(j, 0, sizeof *j);
    if (!(j->rel = xstrdup(rel, c->err)))
        return GOLDEN_ERR;
    snprintf(j->expect, sizeof j->expect, "%s", expect ? expect : "");
    j->rule = rule;
    snprintf(j->file, sizeof j->file, "%s", o ? o->file : "");
    j->line = o ? o->line : 0;
    j->col = o ? o->col : 0;
    snprintf(j->pointer, sizeof j->pointer, "%s", o && o->pointer ? o->pointer : "");
    c->njobs++;
    return GOLDEN_OK;
}

/* A named file reference {path, sha256}: checked now for escapes, hashed later. */
static int check_ref(vctx *c, const char *rel, const char *sha, const origin *o,
                     const char *missing_rule, const char *hash_rule)
{
    int ok = check_path(c, rel, o, missing_rule);
    if (ok <= 0)
        return ok < 0 ? GOLDEN_ERR : GOLDEN_OK;
    if (!sha || !golden_is_sha256_hex(sha))
        return GOLDEN_OK; /* the schema reports a malformed digest */
    return add_job(c, rel, sha, hash_rule, o);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Hash every distinct file the jobs name, both cores at once, then compare. hexes_out (when
 * non-NULL) receives the sorted unique paths and their digests for the seal. */
static int run_jobs(vctx *c, char ***paths_out, char (**hexes_out)[65], size_t *n_out)
{
    int rc = GOLDEN_ERR;
    size_t n = 0;
    char **uniq = NULL, **full = NULL;
    char (*hexes)[65] = NULL;
    if (c->njobs == 0) {
        if (paths_out) {
            *paths_out = NULL;
            *hexes_out = NULL;
            *n_out = 0;
        }
        return GOLDEN_OK;
    }
    uniq = malloc(c->njobs * sizeof *uniq);
    if (!uniq)
        goto oom;
    for (size_t i = 0; i < c->njobs; i++)
        uniq[i] = c->jobs[i].rel;
    qsort(uniq, c->njobs, sizeof *uniq, cmp_str);
    for (size_t i = 0; i < c->njobs; i++)
        if (n == 0 || strcmp(uniq[n - 1], uniq[i]) != 0)
            uniq[n++] = uniq[i];
    full = calloc(n, sizeof *full);
    hexes = calloc(n, sizeof *hexes);
    if (!full || !hexes)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(c->root) + strlen(uniq[i]) + 2;
        if (!(full[i] = malloc(len)))
            goto oom;
        snprintf(full[i], len, "%s/%s", c->root, uniq[i]);
    }
    if (golden_sha256_files((const char *const *)full, n, hexes, c->threads, c->err) != 0)
        goto done;
    c->out->files_hashed += n;
    for (size_t i = 0; i < c->njobs; i++) {
        hash_job *j = &c->jobs[i];
        char **hit = bsearch(&j->rel, uniq, n, sizeof *uniq, cmp_str);
        size_t slot = (size_t)(hit - uniq);
        j->slot = slot;
        if (j->expect[0] && strcmp(j->expect, hexes[slot]) != 0) {
            origin o = {j->file, j->line, j->col, j->pointer};
            if (add_origin(c, &o, j->rule, "SHA-256 of '%s' is %s, expected %s", j->rel,
                           hexes[slot], j->expect) != 0)
                goto done;
        }
    }
    if (paths_out) {
        char **keep = malloc(n * sizeof *keep);
        if (!keep)
            goto oom;
        for (size_t i = 0; i < n; i++) {
            if (!(keep[i] = strdup(uniq[i]))) {
                for (size_t k = 0; k < i; k++)
                    free(keep[k]);
                free(keep);
                goto oom;
            }
        }
        *paths_out = keep;
        *hexes_out = hexes;
        *n_out = n;
        hexes = NULL;
    }
    rc = GOLDEN_OK;
    goto done;
oom:
    golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
done:
    if (full)
        for (size_t i = 0; i < n; i++)
            free(full[i]);
    free(full);
    free(uniq);
    free(hexes);
    return rc;
}

/* ------------------------------------------------------------------ the folder walk */

#define WALK_MAX_DEPTH 64

static int add_asset(vctx *c, const char *rel)
{
    if (c->nassets == c->capassets) {
        size_t cap = c->capassets ? c->capassets * 2 : 64;
        char **n = realloc(c->assets, cap * sizeof *n);
        if (!n)
            return golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
        c->assets = n;
        c->capassets = cap;
    }
    if (!(c->assets[c->nassets] = xstrdup(rel, c->err)))
        return GOLDEN_ERR;
    c->nassets++;
    return GOLDEN_OK;
}

/* Every regular file under the folder becomes an asset; a symbolic link that leads out of the
 * folder is a finding, one that stays inside is followed for files and never for folders. */
static int walk(vctx *c, const char *rel_dir, int depth)
{
    char path[PATH_MAX * 2];
    if (rel_dir)
        snprintf(path, sizeof path, "%s/%s", c->root, rel_dir);
    else
        snprintf(path, sizeof path, "%s", c->root);
    DIR *d = opendir(path);
    if (!d) {
        char w[1024];
        disp(c, rel_dir, w, sizeof w);
        return golden_fail_what(c->err, golden_code_from_errno(errno), w, "cannot read folder: %s", strerror(errno));
    }
    int rc = GOLDEN_OK;
    struct dirent *e;
    while (rc == GOLDEN_OK && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char rel[PATH_MAX];
        if ((rel_dir ? strlen(rel_dir) + 1 : 0) + strlen(e->d_name) + strlen(c->root) + 2 >= PATH_MAX) {
            rc = golden_fail_what(c->err, GOLDEN_EINVAL, c->given, "a path under the folder is longer than PATH_MAX");
            break;
        }
        if (rel_dir)
            snprintf(rel, sizeof rel, "%s/%s", rel_dir, e->d_name);
        else
            snprintf(rel, sizeof rel, "%s", e->d_name);
        char full[PATH_MAX * 2], real[PATH_MAX];
        snprintf(full, sizeof full, "%s/%s", c->root, rel);
        struct stat st;
        if (lstat(full, &st) != 0) {
            rc = golden_fail_what(c->err, golden_code_from_errno(errno), full, "cannot stat: %s", strerror(errno));
            break;
        }
        if (strpbrk(e->d_name, "\n\\")) {
            rc = add_rel(c, GOLDEN_SEV_ERROR, "layout", rel_dir,
                         "a file name contains a newline or backslash, which SHA256SUMS cannot hold");
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth + 1 > WALK_MAX_DEPTH)
                rc = add_rel(c, GOLDEN_SEV_ERROR, "layout", rel, "folders nest deeper than %d levels",
                             WALK_MAX_DEPTH);
            else
                rc = walk(c, rel, depth + 1);
        } else if (S_ISLNK(st.st_mode)) {
            if (!realpath(full, real)) {
                rc = add_rel(c, GOLDEN_SEV_ERROR, "path-escape", rel,
                             "symbolic link resolves nowhere");
            } else if (!inside_root(c, real)) {
                rc = add_rel(c, GOLDEN_SEV_ERROR, "path-escape", rel,
                             "symbolic link leads out of the folder");
            } else if (stat(real, &st) == 0 && S_ISREG(st.st_mode)) {
                rc = add_asset(c, rel);
            }
        } else if (S_ISREG(st.st_mode)) {
            rc = add_asset(c, rel);
        } else {
            rc = add_rel(c, GOLDEN_SEV_ERROR, "layout", rel,
                         "not a regular file (device, socket or pipe)");
        }
    }
    closedir(d);
    return rc;
}

static bool has_asset(const vctx *c, const char *rel)
{
    return c->nassets && bsearch(&rel, c->assets, c->nassets, sizeof *c->assets, cmp_str);
}

/* ------------------------------------------------------------------ documents and schemas */

typedef struct {
    const char *format;
    golden_schema *schema;
} schema_slot;

typedef struct {
    schema_slot slots[16];
    size_t n;
} schema_cache;

static golden_schema *schema_get(schema_cache *sc, const char *format, golden_error *err)
{
    for (size_t i = 0; i < sc->n; i++)
        if (strcmp(sc->slots[i].format, format) == 0)
            return sc->slots[i].schema;
    if (sc->n == sizeof sc->slots / sizeof sc->slots[0]) {
        golden_fail_what(err, GOLDEN_EINVAL, format, "too many schemas in one run");
        return NULL;
    }
    golden_schema *s = NULL;
    if (golden_schema_load(format, &s, err) != 0)
        return NULL;
    sc->slots[sc->n].format = format;
    sc->slots[sc->n].schema = s;
    sc->n++;
    return s;
}

static void schema_cache_free(schema_cache *sc)
{
    for (size_t i = 0; i < sc->n; i++)
        golden_schema_free(sc->slots[i].schema);
    sc->n = 0;
}

/* Every violation of doc against s becomes a "schema" finding; returns the count or -1. */
static long validate(golden_findings *out, const golden_schema *s, const golden_doc *doc,
                     golden_error *err)
{
    golden_violation *v = NULL;
    long n = golden_schema_validate(s, doc, NULL, &v, err);
    if (n < 0)
        return -1;
    out->documents++;
    for (long i = 0; i < n; i++) {
        int line = 0, col = 0;
        node_pos(doc, v[i].pointer, &line, &col);
        if (golden_findings_add(out, GOLDEN_SEV_ERROR, "schema", golden_doc_name(doc), line, col,
                                v[i].pointer, err, "%s (%s)", v[i].message, v[i].keyword) != 0) {
            free(v);
            return -1;
        }
    }
    free(v);
    return n;
}

/* Load a whole JSON or YAML document, refusing sizes that would not fit bounded memory. Pipes
 * and other streams are read here, up to the same limit, because their size is not known. */
static int load_doc(const char *path, golden_doc **doc, golden_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return golden_fail_what(err, GOLDEN_EINVAL, path, "is a folder, not a document");
    if (S_ISREG(st.st_mode)) {
        if ((unsigned long long)st.st_size > GOLDEN_MAX_DOCUMENT_BYTES)
            return golden_fail_what(err, GOLDEN_EINVAL, path,
                               "document is %llu bytes, more than the %u-byte limit for a whole "
                               "document (use JSON Lines for big data)",
                               (unsigned long long)st.st_size, GOLDEN_MAX_DOCUMENT_BYTES);
        return golden_doc_load_file(path, doc, err);
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = GOLDEN_OK;
    while (buf) {
        if (len == cap) {
            if (cap > GOLDEN_MAX_DOCUMENT_BYTES) {
                rc = golden_fail_what(err, GOLDEN_EINVAL, path, "document is more than the %u-byte limit for a whole "
                                 "document (use JSON Lines for big data)",
                                 GOLDEN_MAX_DOCUMENT_BYTES);
                break;
            }
            /* one byte past the limit is enough to know the document is too big */
            size_t ncap = cap * 2 > (size_t)GOLDEN_MAX_DOCUMENT_BYTES + 1
                              ? (size_t)GOLDEN_MAX_DOCUMENT_BYTES + 1 : cap * 2;
            char *n = realloc(buf, ncap);
            if (!n) {
                rc = golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
                break;
            }
            buf = n;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    if (!buf)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    else if (rc == GOLDEN_OK && ferror(f))
        rc = golden_fail_what(err, golden_code_from_errno(errno), path, "read error: %s", strerror(errno));
    else if (rc == GOLDEN_OK)
        rc = golden_doc_load_buffer(path, buf, len, doc, err);
    free(buf);
    fclose(f);
    return rc;
}

/* --schema mode: one JSONL line. */
typedef struct {
    golden_findings *out;
    const golden_schema *schema;
} plain_jl;

static int plain_line(void *ctx, golden_doc *line_doc, size_t line_no, golden_error *err)
{
    (void)line_no;
    plain_jl *p = ctx;
    return validate(p->out, p->schema, line_doc, err) < 0 ? -1 : 0;
}

int golden_verify_documents(const char *schema_ref, const char *const *paths, size_t n,
                            golden_findings *out, golden_error *err)
{
    return golden_verify_documents_opts(schema_ref, NULL, paths, n, out, err);
}

int golden_verify_documents_opts(const char *schema_ref, const golden_schema_load_options *lo,
                                 const char *const *paths, size_t n, golden_findings *out,
                                 golden_error *err)
{
    golden_schema *s = NULL;
    if (golden_schema_load_opts(schema_ref, lo, &s, err) != 0)
        return GOLDEN_ERR;
    int rc = GOLDEN_OK;
    for (size_t i = 0; i < n && rc == GOLDEN_OK; i++) {
        if (has_suffix(paths[i], ".jsonl")) {
            plain_jl p = {out, s};
            if (golden_doc_each_jsonl(paths[i], plain_line, &p, err) != 0)
                rc = GOLDEN_ERR;
        } else {
            golden_doc *doc = NULL;
            if (load_doc(paths[i], &doc, err) != 0 || validate(out, s, doc, err) < 0)
                rc = GOLDEN_ERR;
            golden_doc_free(doc);
        }
    }
    golden_schema_free(s);
    return rc;
}

/* Every {path, sha256} object anywhere in a document names an artifact. */
static int collect_refs(vctx *c, const golden_doc *doc, json_t *node, char *ptr, size_t ptrcap,
                        const char *missing_rule, const char *hash_rule)
{
    size_t keep = strlen(ptr);
    int rc = GOLDEN_OK;
    if (json_is_object(node)) {
        const char *path = sget(node, "path"), *sha = sget(node, "sha256");
        if (path && sha) {
            int line = 0, col = 0;
            json_t *pn = json_object_get(node, "path");
            golden_doc_line(doc, pn, &line, &col);
            char pp[512];
            snprintf(pp, sizeof pp, "%s", ptr);
            ptr_push(pp, sizeof pp, "path");
            origin o = {golden_doc_name(doc), line, col, pp};
            if (check_ref(c, path, sha, &o, missing_rule, hash_rule) != 0)
                return GOLDEN_ERR;
        }
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v) {
            ptr_push(ptr, ptrcap, k);
            rc = collect_refs(c, doc, v, ptr, ptrcap, missing_rule, hash_rule);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) {
            ptr_push_index(ptr, ptrcap, i);
            rc = collect_refs(c, doc, v, ptr, ptrcap, missing_rule, hash_rule);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    }
    return rc;
}

static int doc_refs(vctx *c, const golden_doc *doc)
{
    char ptr[512] = "";
    return collect_refs(c, doc, golden_doc_root(doc), ptr, sizeof ptr, "artifact-exists",
                        "artifact-hash");
}

/* ------------------------------------------------------------------ EXP_ID and families */

/* EXP_ID family -> the operator_family values it may carry (handbook sections 2, 16 and 19). */
const golden_family_row golden_family_table[] = {
    {"OP", "GEMM", "fused_matmul_add"},
    {"OP", "MATMUL", "fused_matmul_add"},
    {"OP", "RMSNORM", "fused_rmsnorm"},
    {"OP", "NORM", "fused_rmsnorm"},
    {"OP", "SYNC", "sync_d2d"},
    {"OP", "D2D", "sync_d2d dynamic_d2d gather"},
    {"OP", "GATHER", "gather"},
    {"OP", "MOE", "grouped_moe_dense moe_gate"},
    {"OP", "GATE", "moe_gate"},
    {"OP", "ROPE", "rope"},
    {"OP", "KV", "kv_scatter"},
    {"OP", "RESIDUAL", "residual_add"},
    {"OP", "FA", "flash_attention"},
    {"OP", "FUSION", "fusion fused_rmsnorm rope residual_add"},
    {"OP", "TOPK", "logits_sampling"},
    {"HOST", "LOGITS", "logits_sampling"},
    {"HOST", "SAMPLING", "logits_sampling"},
    {"HOST", "D2D", "sync_d2d dynamic_d2d"},
    {"QUANT", "W4", "quantization"},
    {"QUANT", "W8", "quantization"},
    {"QUANT", "A8", "quantization"},
    {"QUANT", "KV", "quantization kv_scatter"},
    {"QUANT", "MIXED", "quantization"},
    {NULL, NULL, NULL},
};

int golden_exp_id_parse(const char *id, char prefix[16], char family[32], int *number,
                        golden_error *err)
{
    const char *a = strchr(id, '-');
    const char *b = a ? strrchr(id, '-') : NULL;
    if (!a || b == a)
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID is not PREFIX-FAMILY-NNNN");
    size_t pl = (size_t)(a - id), fl = (size_t)(b - a - 1);
    if (pl == 0 || pl >= 16 || fl == 0 || fl >= 32)
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID is not PREFIX-FAMILY-NNNN");
    for (const char *p = id; p < a; p++)
        if (*p < 'A' || *p > 'Z')
            return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID prefix must be upper-case letters");
    for (const char *p = a + 1; p < b; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID family must be upper-case letters and digits");
    if (a[1] < 'A' || a[1] > 'Z')
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID family must start with a letter");
    if (strlen(b + 1) != 4)
        return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID must end in exactly four digits");
    for (const char *p = b + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return golden_fail_what(err, GOLDEN_EINVAL, id, "EXP_ID must end in exactly four digits");
    memcpy(prefix, id, pl);
    prefix[pl] = '\0';
    memcpy(family, a + 1, fl);
    family[fl] = '\0';
    *number = atoi(b + 1);
    return GOLDEN_OK;
}

static bool word_in(const char *words, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = words; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

int golden_exp_family_agrees(const char *prefix, const char *family, const char *operator_family)
{
    for (const golden_family_row *r = golden_family_table; r->prefix; r++)
        if (strcmp(r->prefix, prefix) == 0 && strcmp(r->family, family) == 0)
            return word_in(r->operator_families, operator_family) ? 1 : 0;
    return -1;
}

/* ------------------------------------------------------------------ hypothesis rules */

static int find_required(vctx *c, const golden_doc *doc, json_t *node, char *ptr, size_t cap,
                         bool planned)
{
    size_t keep = strlen(ptr);
    if (json_is_string(node) && strcmp(json_string_value(node), "REQUIRED") == 0) {
        if (planned)
            return add_node(c, GOLDEN_SEV_TODO, "required-filled", doc, ptr,
                            "%s is still REQUIRED: fill it before the experiment runs", ptr);
        return add_node(c, GOLDEN_SEV_ERROR, "required-filled", doc, ptr,
                        "%s is left as REQUIRED although status is past planned", ptr);
    }
    if (json_is_object(node)) {
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v) {
            ptr_push(ptr, cap, k);
            int rc = find_required(c, doc, v, ptr, cap, planned);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) {
            ptr_push_index(ptr, cap, i);
            int rc = find_required(c, doc, v, ptr, cap, planned);
            ptr[keep] = '\0';
            if (rc)
                return rc;
        }
    }
    return GOLDEN_OK;
}

static const char *folder_name(const vctx *c, char *buf, size_t n)
{
    const char *src = c->given;
    size_t len = strlen(src);
    while (len > 1 && src[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && src[start - 1] != '/')
        start--;
    snprintf(buf, n, "%.*s", (int)(len - start), src + start);
    if (strcmp(buf, ".") == 0 || strcmp(buf, "..") == 0 || !*buf) {
        const char *r = strrchr(c->root, '/');
        snprintf(buf, n, "%s", r ? r + 1 : c->root);
    }
    return buf;
}

static int rules_hypothesis(vctx *c, const golden_doc *h, bool planned)
{
    json_t *root = golden_doc_root(h);
    const char *id = sget(root, "experiment_id");
    const char *opfam = sget(root, "operator_family");
    char name[PATH_MAX];
    folder_name(c, name, sizeof name);
    if (id) {
        char prefix[16], family[32];
        int number;
        golden_error e;
        if (strcmp(name, id) != 0 &&
            add_node(c, GOLDEN_SEV_ERROR, "folder-name", h, "/experiment_id",
                     "folder is named '%s' but experiment_id is '%s'", name, id))
            return GOLDEN_ERR;
        if (golden_exp_id_parse(id, prefix, family, &number, &e) != 0) {
            if (add_node(c, GOLDEN_SEV_ERROR, "exp-id", h, "/experiment_id", "'%s': %s", id,
                         e.what))
                return GOLDEN_ERR;
        } else if (opfam) {
            int a = golden_exp_family_agrees(prefix, family, opfam);
            if (a < 0 && add_node(c, GOLDEN_SEV_ERROR, "family", h, "/experiment_id",
                                  "no family %s under prefix %s is known (see the family table "
                                  "in docs/manifest-verify.md)", family, prefix))
                return GOLDEN_ERR;
            if (a == 0 && add_node(c, GOLDEN_SEV_ERROR, "family", h, "/operator_family",
                                   "operator_family '%s' does not belong to EXP_ID family %s-%s",
                                   opfam, prefix, family))
                return GOLDEN_ERR;
        }
    }
    char ptr[512] = "";
    if (find_required(c, h, root, ptr, sizeof ptr, planned))
        return GOLDEN_ERR;
    const char *design = sget(root, "design");
    json_t *changed = json_object_get(json_object_get(root, "candidate"), "changed_flags");
    bool exempt = design && (strcmp(design, "factorial") == 0 ||
                             strcmp(design, "not_attributable") == 0);
    if (json_is_object(changed) && !exempt && json_object_size(changed) != 1 &&
        add_node(c, GOLDEN_SEV_ERROR, "one-main-factor", h, "/candidate/changed_flags",
                 "candidate changes %zu flags; one experiment changes one main factor unless "
                 "design is factorial or not_attributable", json_object_size(changed)))
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

/* ------------------------------------------------------------------ manifests against the hypothesis */

static int agree(vctx *c, const golden_doc *h, const char *hptr, const golden_doc *m,
                 const char *mptr, const char *rule, const char *what)
{
    json_t *hv = ptr_get(golden_doc_root(h), hptr);
    json_t *mv = ptr_get(golden_doc_root(m), mptr);
    if (!hv || (json_is_string(hv) && strcmp(json_string_value(hv), "REQUIRED") == 0))
        return GOLDEN_OK;
    if (value_eq(hv, mv))
        return GOLDEN_OK;
    char a[256], b[256];
    value_show(hv, a, sizeof a);
    value_show(mv, b, sizeof b);
    return add_node(c, GOLDEN_SEV_ERROR, rule, m, mv ? mptr : "", "%s is '%s' here but '%s' in %s",
                    what, b, a, golden_doc_name(h));
}

static int rules_manifest(vctx *c, const golden_doc *h, const golden_doc *m, const char *side)
{
    json_t *mr = golden_doc_root(m), *hr = golden_doc_root(h);
    const char *role = sget(mr, "role");
    char hp[128], what[128];
    if (role && strcmp(role, side) != 0 &&
        add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, "/role",
                 "role is '%s' but the manifest sits in %s/", role, side))
        return GOLDEN_ERR;
    snprintf(hp, sizeof hp, "/%s/calbin_sha256", side);
    snprintf(what, sizeof what, "%s calbin SHA-256", side);
    if (agree(c, h, hp, m, "/calbin/sha256", "manifest-agrees", what))
        return GOLDEN_ERR;
    snprintf(hp, sizeof hp, "/%s/compiler_oci_digest", side);
    snprintf(what, sizeof what, "%s compiler OCI digest", side);
    if (agree(c, h, hp, m, "/compiler/oci_digest", "manifest-agrees", what))
        return GOLDEN_ERR;
    const char *hid = sget(hr, "experiment_id"), *mid = sget(mr, "experiment_id");
    if (hid && mid && strcmp(hid, mid) != 0 &&
        add_node(c, GOLDEN_SEV_ERROR, "exp-id", m, "/experiment_id",
                 "experiment_id '%s' differs from the hypothesis's '%s'", mid, hid))
        return GOLDEN_ERR;
    /* flags the hypothesis pins for the baseline, and the candidate's changed flags */
    json_t *hflags = ptr_get(hr, strcmp(side, "baseline") == 0 ? "/baseline/compiler_flags"
                                                               : "/candidate/changed_flags");
    const char *k;
    json_t *v;
    if (json_is_object(hflags)) {
        json_object_foreach(hflags, k, v) {
            char hptr[512] = "", mptr[512] = "";
            ptr_push(hptr, sizeof hptr, side);
            ptr_push(hptr, sizeof hptr,
                     strcmp(side, "baseline") == 0 ? "compiler_flags" : "changed_flags");
            ptr_push(hptr, sizeof hptr, k);
            ptr_push(mptr, sizeof mptr, "compile");
            ptr_push(mptr, sizeof mptr, "flags");
            ptr_push(mptr, sizeof mptr, k);
            snprintf(what, sizeof what, "compile flag %s", k);
            if (agree(c, h, hptr, m, mptr, "manifest-agrees", what))
                return GOLDEN_ERR;
        }
    }
    /* controlled values: every key the hypothesis controls must be equal in the manifest */
    json_t *hc = json_object_get(hr, "controlled");
    if (json_is_object(hc)) {
        json_object_foreach(hc, k, v) {
            char hptr[512] = "", mptr[512] = "";
            ptr_push(hptr, sizeof hptr, "controlled");
            ptr_push(hptr, sizeof hptr, k);
            ptr_push(mptr, sizeof mptr, "controlled");
            ptr_push(mptr, sizeof mptr, k);
            snprintf(what, sizeof what, "controlled value %s", k);
            if (agree(c, h, hptr, m, mptr, "controlled-equal", what))
                return GOLDEN_ERR;
        }
    }
    return GOLDEN_OK;
}

/* Baseline against candidate: controlled values equal (also those the hypothesis does not name),
 * and the flags that differ are exactly the declared changed_flags. */
static int rules_manifest_pair(vctx *c, const golden_doc *b, const golden_doc *m)
{
    json_t *bc = json_object_get(golden_doc_root(b), "controlled");
    json_t *cc = json_object_get(golden_doc_root(m), "controlled");
    const char *k;
    json_t *v;
    if (json_is_object(bc) && json_is_object(cc)) {
        json_object_foreach(cc, k, v) {
            json_t *bv = json_object_get(bc, k);
            if (!value_eq(bv, v)) {
                char a[256], bb[256], p[512] = "";
                value_show(v, a, sizeof a);
                value_show(bv, bb, sizeof bb);
                ptr_push(p, sizeof p, "controlled");
                ptr_push(p, sizeof p, k);
                if (add_node(c, GOLDEN_SEV_ERROR, "controlled-equal", m, p,
                             "controlled value %s is '%s' for the candidate but '%s' for the "
                             "baseline", k, a, bb))
                    return GOLDEN_ERR;
            }
        }
        json_object_foreach(bc, k, v) {
            if (!json_object_get(cc, k)) {
                if (add_node(c, GOLDEN_SEV_ERROR, "controlled-equal", m, "/controlled",
                             "controlled value %s is set for the baseline only", k))
                    return GOLDEN_ERR;
            }
        }
    }
    json_t *bf = ptr_get(golden_doc_root(b), "/compile/flags");
    json_t *cf = ptr_get(golden_doc_root(m), "/compile/flags");
    json_t *changed = json_object_get(golden_doc_root(m), "changed_flags");
    if (!json_is_object(bf) || !json_is_object(cf) || !json_is_object(changed))
        return GOLDEN_OK;
    json_object_foreach(cf, k, v) {
        bool differs = !value_eq(json_object_get(bf, k), v);
        json_t *declared = json_object_get(changed, k);
        char p[512] = "";
        ptr_push(p, sizeof p, "compile");
        ptr_push(p, sizeof p, "flags");
        ptr_push(p, sizeof p, k);
        if (differs && !declared) {
            if (add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, p,
                         "flag %s differs from the baseline but is not in changed_flags", k))
                return GOLDEN_ERR;
        } else if (declared && !value_eq(declared, v)) {
            if (add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, p,
                         "flag %s differs from its changed_flags value", k))
                return GOLDEN_ERR;
        }
    }
    json_object_foreach(bf, k, v) {
        if (!json_object_get(cf, k) &&
            add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, "/compile/flags",
                     "baseline flag %s is missing from the candidate's flags", k))
            return GOLDEN_ERR;
    }
    json_object_foreach(changed, k, v) {
        json_t *bv = json_object_get(bf, k);
        char p[512] = "";
        ptr_push(p, sizeof p, "changed_flags");
        ptr_push(p, sizeof p, k);
        if (bv && value_eq(bv, v) &&
            add_node(c, GOLDEN_SEV_ERROR, "manifest-agrees", m, p,
                     "changed flag %s has the baseline's value", k))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

/* ------------------------------------------------------------------ JSON Lines rules */

/* Raw requests counted per case of performance/summary.json, side 0 = baseline, 1 = candidate. */
struct perf_tally {
    const char *case_id;
    size_t summary_index;
    long long warmup[2], steady[2], unsteady[2];
};

typedef struct {
    char *id;
    size_t line;
    bool rejection;
    bool decode;
    long long prompt, past, output;
} input_case;

typedef struct {
    vctx *c;
    const golden_schema *schema;
    long long limit;
    input_case *cases;
    size_t ncases, capcases;
    /* calibration */
    char **sample_ids;
    size_t *sample_lines;
    size_t nsamples, capsamples;
    char tokenizer[65];
    size_t tokenizer_line;
    const char *expected_tokenizer; /* the hypothesis's controlled tokenizer_hash, or NULL */
    /* raw requests */
    bool cases_sorted;
    struct perf_tally *tally; /* one per summary case (borrowed ids), NULL when no summary */
    size_t ntally;
} jl_state;

static long long iget(const json_t *o, const char *k, long long dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static int input_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    jl_state *s = ctx;
    vctx *c = s->c;
    if (validate(c->out, s->schema, d, err) < 0)
        return -1;
    json_t *r = golden_doc_root(d);
    const char *id = sget(r, "case_id");
    if (!id)
        return 0;
    long long p = iget(r, "prompt_tokens", 0), past = iget(r, "past_tokens", 0),
              o = iget(r, "output_tokens", 0);
    bool rej = json_is_true(json_object_get(r, "rejection"));
    long long total;
    /* hostile counts near INT64_MAX must not overflow: saturate, they exceed any limit */
    if (__builtin_add_overflow(p, past, &total) || __builtin_add_overflow(total, o, &total))
        total = LLONG_MAX;
    if (total > s->limit && !rej &&
        add_node(c, GOLDEN_SEV_ERROR, "context-limit", d, "/rejection",
                 "case %s totals %lld tokens (prompt %lld + past %lld + output %lld), over the "
                 "context limit %lld, but is not a rejection case", id, total, p, past, o,
                 s->limit))
        return -1;
    if (total <= s->limit && rej &&
        add_node(c, GOLDEN_SEV_ERROR, "context-limit", d, "/rejection",
                 "case %s totals %lld tokens, within the context limit %lld, yet is marked as a "
                 "rejection case", id, total, s->limit))
        return -1;
    if (s->ncases == s->capcases) {
        size_t cap = s->capcases ? s->capcases * 2 : 64;
        input_case *n = realloc(s->cases, cap * sizeof *n);
        if (!n)
            return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        s->cases = n;
        s->capcases = cap;
    }
    input_case *ic = &s->cases[s->ncases];
    if (!(ic->id = xstrdup(id, err)))
        return -1;
    ic->line = line_no;
    ic->rejection = rej;
    const char *phase = sget(r, "phase");
    ic->decode = phase && strcmp(phase, "decode") == 0;
    ic->prompt = p;
    ic->past = past;
    ic->output = o;
    s->ncases++;
    return 0;
}

static int cmp_case(const void *a, const void *b)
{
    const input_case *x = a, *y = b;
    int r = strcmp(x->id, y->id);
    return r ? r : (x->line < y->line ? -1 : x->line > y->line);
}

static const input_case *find_case(const jl_state *s, const char *id)
{
    input_case key = {0};
    key.id = (char *)id;
    size_t lo = 0, hi = s->ncases;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(s->cases[mid].id, key.id);
        if (r == 0)
            return &s->cases[mid];
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* After the whole input matrix is read: duplicate ids, and the hypothesis's matrix covered. */
static int input_matrix_rules(jl_state *s, const golden_doc *h, const char *rel)
{
    vctx *c = s->c;
    char file[1024];
    disp(c, rel, file, sizeof file);
    if (s->ncases)
        qsort(s->cases, s->ncases, sizeof *s->cases, cmp_case);
    s->cases_sorted = true;
    for (size_t i = 1; i < s->ncases; i++)
        if (strcmp(s->cases[i].id, s->cases[i - 1].id) == 0 &&
            golden_findings_add(c->out, GOLDEN_SEV_ERROR, "input-matrix", file,
                                (int)s->cases[i].line, 1, "", c->err,
                                "case_id %s repeats the one on line %zu", s->cases[i].id,
                                s->cases[i - 1].line))
            return GOLDEN_ERR;
    if (!h)
        return GOLDEN_OK;
    json_t *m = json_object_get(golden_doc_root(h), "matrix");
    json_t *prompts = json_object_get(m, "prompt_tokens"), *outs = json_object_get(m, "output_tokens");
    json_t *pasts = json_object_get(m, "past_tokens");
    size_t i, j;
    json_t *pv, *ov;
    json_array_foreach(prompts, i, pv) {
        json_array_foreach(outs, j, ov) {
            if (!json_is_integer(pv) || !json_is_integer(ov))
                continue;
            long long p = json_integer_value(pv), o = json_integer_value(ov);
            bool found = false;
            for (size_t k = 0; k < s->ncases && !found; k++)
                found = !s->cases[k].decode && s->cases[k].prompt == p && s->cases[k].output == o;
            if (!found && golden_findings_add(c->out, GOLDEN_SEV_ERROR, "input-matrix", file, 0, 0,
                                              "", c->err,
                                              "no prefill case with %lld prompt and %lld output "
                                              "tokens, which the hypothesis's matrix names", p, o))
                return GOLDEN_ERR;
        }
    }
    json_array_foreach(pasts, i, pv) {
        if (!json_is_integer(pv))
            continue;
        long long past = json_integer_value(pv);
        bool found = past == 0; /* prefill cases have no past */
        for (size_t k = 0; k < s->ncases && !found; k++)
            found = s->cases[k].decode && s->cases[k].past == past;
        if (!found && golden_findings_add(c->out, GOLDEN_SEV_ERROR, "input-matrix", file, 0, 0, "",
                                          c->err, "no decode case with past length %lld, which "
                                          "the hypothesis's matrix names", past))
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

static const char *const stage_order[] = {"client_queue", "service_queue", "input_prepare",
                                          "h2d", "npu_wait", "d2h", "logits_conversion",
                                          "sampling", "stream_flush"};

static int request_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)line_no;
    jl_state *s = ctx;
    vctx *c = s->c;
    if (validate(c->out, s->schema, d, err) < 0)
        return -1;
    json_t *r = golden_doc_root(d);
    const char *id = sget(r, "case_id");
    if (id && s->cases_sorted) {
        const input_case *ic = find_case(s, id);
        if (!ic && add_node(c, GOLDEN_SEV_ERROR, "unknown-case", d, "/case_id",
                            "case %s is not in golden/input-manifest.jsonl", id))
            return -1;
        if (ic && ic->rejection &&
            add_node(c, GOLDEN_SEV_ERROR, "rejection-submitted", d, "/case_id",
                     "case %s is a rejection case and must never reach a device", id))
            return -1;
    }
    const char *side = sget(r, "side");
    for (size_t i = 0; id && side && i < s->ntally; i++) {
        struct perf_tally *t = &s->tally[i];
        if (strcmp(t->case_id, id) != 0)
            continue;
        int k = strcmp(side, "candidate") == 0;
        if (json_is_true(json_object_get(r, "warmup")))
            t->warmup[k]++;
        else if (json_is_false(json_object_get(r, "steady")))
            t->unsteady[k]++;
        else
            t->steady[k]++;
    }
    json_t *stages = json_object_get(r, "stages");
    long long prev_end = -1;
    const char *prev = NULL;
    for (size_t i = 0; i < sizeof stage_order / sizeof stage_order[0]; i++) {
        json_t *st = json_object_get(stages, stage_order[i]);
        json_t *a = json_object_get(st, "start_ns"), *b = json_object_get(st, "end_ns");
        if (!json_is_integer(a) || !json_is_integer(b))
            continue;
        long long start = json_integer_value(a), end = json_integer_value(b);
        char p[128] = "/stages";
        ptr_push(p, sizeof p, stage_order[i]);
        if (end < start && add_node(c, GOLDEN_SEV_ERROR, "stage-order", d, p,
                                    "stage %s ends before it starts", stage_order[i]))
            return -1;
        if (prev && start < prev_end &&
            add_node(c, GOLDEN_SEV_ERROR, "stage-order", d, p,
                     "stage %s starts before %s ends (section 7 order)", stage_order[i], prev))
            return -1;
        prev_end = end;
        prev = stage_order[i];
    }
    return 0;
}

/* The summary must rest on the raw data: each of its cases ran at least warmup_runs warm-ups and
 * measured_runs_min steady runs per side, and its n is the number of steady measured runs. */
static int perf_tally_setup(jl_state *s, const golden_doc *sum)
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
        const char *id = sget(cs, "case_id");
        if (!id)
            continue;
        s->tally[s->ntally].case_id = id;
        s->tally[s->ntally].summary_index = i;
        s->ntally++;
    }
    return GOLDEN_OK;
}

static int perf_rules(jl_state *s, const golden_doc *sum, const jl_state *in)
{
    vctx *c = s->c;
    json_t *root = golden_doc_root(sum);
    long long warm = iget(root, "warmup_runs", 10), meas = iget(root, "measured_runs_min", 30);
    for (size_t i = 0; i < s->ntally; i++) {
        const struct perf_tally *t = &s->tally[i];
        char p[128];
        snprintf(p, sizeof p, "/cases/%zu/case_id", t->summary_index);
        if (in->cases_sorted && !find_case(in, t->case_id) &&
            add_node(c, GOLDEN_SEV_ERROR, "unknown-case", sum, p,
                     "case %s is not in golden/input-manifest.jsonl", t->case_id))
            return GOLDEN_ERR;
        for (int k = 0; k < 2; k++) {
            const char *side = k ? "candidate" : "baseline";
            if (t->warmup[k] < warm &&
                add_node(c, GOLDEN_SEV_ERROR, "perf-runs", sum, p,
                         "case %s %s: %lld warm-up runs in raw-requests.jsonl, summary says %lld",
                         t->case_id, side, t->warmup[k], warm))
                return GOLDEN_ERR;
            if (t->steady[k] < meas &&
                add_node(c, GOLDEN_SEV_ERROR, "perf-runs", sum, p,
                         "case %s %s: %lld steady measured runs in raw-requests.jsonl, at least %lld "
                         "needed", t->case_id, side, t->steady[k], meas))
                return GOLDEN_ERR;
            char np[160];
            snprintf(np, sizeof np, "/cases/%zu/%s/n", t->summary_index, side);
            json_t *n = ptr_get(root, np);
            if (json_is_integer(n) && json_integer_value(n) != t->steady[k] &&
                add_node(c, GOLDEN_SEV_ERROR, "perf-runs", sum, np,
                         "n is %lld but raw-requests.jsonl has %lld steady measured %s runs of "
                         "case %s (%lld unsteady kept apart)", (long long)json_integer_value(n),
                         t->steady[k], side, t->case_id, t->unsteady[k]))
                return GOLDEN_ERR;
        }
    }
    return GOLDEN_OK;
}

static int fault_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    (void)line_no;
    jl_state *s = ctx;
    return validate(s->c->out, s->schema, d, err) < 0 ? -1 : 0;
}

static int calibration_line(void *ctx, golden_doc *d, size_t line_no, golden_error *err)
{
    jl_state *s = ctx;
    vctx *c = s->c;
    if (validate(c->out, s->schema, d, err) < 0)
        return -1;
    json_t *r = golden_doc_root(d);
    const char *id = sget(r, "sample_id"), *tok = sget(r, "tokenizer_sha256");
    const char *pii = sget(r, "pii_review"), *path = sget(r, "path"), *sha = sget(r, "sha256");
    if (pii && strcmp(pii, "passed") != 0 &&
        add_node(c, GOLDEN_SEV_ERROR, "calibration-pii", d, "/pii_review",
                 "sample %s has pii_review '%s'; every sample must have passed", id ? id : "?",
                 pii))
        return -1;
    if (tok) {
        if (!s->tokenizer[0]) {
            snprintf(s->tokenizer, sizeof s->tokenizer, "%s", tok);
            s->tokenizer_line = line_no;
            if (s->expected_tokenizer && strcmp(s->expected_tokenizer, tok) != 0 &&
                add_node(c, GOLDEN_SEV_ERROR, "calibration-tokenizer", d, "/tokenizer_sha256",
                         "tokenizer %.12s... differs from the hypothesis's tokenizer_hash %.12s...",
                         tok, s->expected_tokenizer))
                return -1;
        } else if (strcmp(s->tokenizer, tok) != 0 &&
                   add_node(c, GOLDEN_SEV_ERROR, "calibration-tokenizer", d, "/tokenizer_sha256",
                            "tokenizer %.12s... differs from %.12s... on line %zu; one manifest "
                            "uses one tokenizer", tok, s->tokenizer, s->tokenizer_line)) {
            return -1;
        }
    }
    if (id) {
        if (s->nsamples == s->capsamples) {
            size_t cap = s->capsamples ? s->capsamples * 2 : 64;
            char **n = realloc(s->sample_ids, cap * sizeof *n);
            if (!n)
                return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            s->sample_ids = n;
            size_t *l = realloc(s->sample_lines, cap * sizeof *l);
            if (!l)
                return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            s->sample_lines = l;
            s->capsamples = cap;
        }
        if (!(s->sample_ids[s->nsamples] = xstrdup(id, err)))
            return -1;
        s->sample_lines[s->nsamples++] = line_no;
    }
    if (path && sha) {
        int line = 0, col = 0;
        golden_doc_line(d, json_object_get(r, "path"), &line, &col);
        origin o = {golden_doc_name(d), line, col, "/path"};
        if (check_ref(c, path, sha, &o, "artifact-exists", "calibration-hash") != 0)
            return -1;
    }
    return 0;
}

typedef struct {
    const char *id;
    size_t line;
} id_line;

static int cmp_id_line(const void *a, const void *b)
{
    const id_line *x = a, *y = b;
    int r = strcmp(x->id, y->id);
    return r ? r : (x->line < y->line ? -1 : x->line > y->line);
}

static int calibration_unique(jl_state *s, const char *rel)
{
    if (s->nsamples < 2)
        return GOLDEN_OK;
    id_line *v = malloc(s->nsamples * sizeof *v);
    if (!v)
        return golden_fail_what(s->c->err, GOLDEN_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < s->nsamples; i++) {
        v[i].id = s->sample_ids[i];
        v[i].line = s->sample_lines[i];
    }
    qsort(v, s->nsamples, sizeof *v, cmp_id_line);
    char file[1024];
    disp(s->c, rel, file, sizeof file);
    int rc = GOLDEN_OK;
    for (size_t i = 1; i < s->nsamples && rc == GOLDEN_OK; i++)
        if (strcmp(v[i].id, v[i - 1].id) == 0)
            rc = golden_findings_add(s->c->out, GOLDEN_SEV_ERROR, "calibration-unique", file,
                                     (int)v[i].line, 1, "", s->c->err,
                                     "sample_id %s repeats the one on line %zu", v[i].id,
                                     v[i - 1].line);
    free(v);
    return rc;
}

static void jl_state_free(jl_state *s)
{
    for (size_t i = 0; i < s->ncases; i++)
        free(s->cases[i].id);
    free(s->cases);
    for (size_t i = 0; i < s->nsamples; i++)
        free(s->sample_ids[i]);
    free(s->sample_ids);
    free(s->sample_lines);
    free(s->tally);
}

/* ------------------------------------------------------------------ seal */

#define SEAL_FILE "SHA256SUMS"

/* Read SHA256SUMS: every listed asset is hashed and compared; listed-but-gone and
 * present-but-unlisted assets are findings. */
static int seal_verify(vctx *c)
{
    char full[PATH_MAX * 2], file[1024];
    snprintf(full, sizeof full, "%s/%s", c->root, SEAL_FILE);
    disp(c, SEAL_FILE, file, sizeof file);
    FILE *f = fopen(full, "r");
    if (!f)
        return golden_fail_what(c->err, golden_code_from_errno(errno), file, "cannot open: %s", strerror(errno));
    char buf[8192];
    size_t line_no = 0;
    char **listed = NULL;
    size_t nlisted = 0, cap = 0;
    int rc = GOLDEN_OK;
    while (rc == GOLDEN_OK && fgets(buf, sizeof buf, f)) {
        line_no++;
        size_t len = strlen(buf);
        if (len && buf[len - 1] == '\n')
            buf[--len] = '\0';
        else if (!feof(f)) {
            int ch;
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 1, "",
                                     c->err, "line longer than %zu bytes", sizeof buf - 1);
            continue;
        }
        if (len == 0)
            continue;
        char hex[65];
        if (len < 67 || buf[64] != ' ' || (buf[65] != ' ' && buf[65] != '*')) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 1, "",
                                     c->err, "not a 'SHA256  path' line");
            continue;
        }
        memcpy(hex, buf, 64);
        hex[64] = '\0';
        const char *rel = buf + 66;
        while (rel[0] == '.' && rel[1] == '/') /* sha256sum ./x writes "./x" */
            rel += 2;
        if (strcmp(rel, SEAL_FILE) == 0) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 67, "",
                                     c->err, "SHA256SUMS cannot seal itself");
            continue;
        }
        if (!golden_is_sha256_hex(hex)) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 1, "",
                                     c->err, "digest is not 64 lowercase hex digits");
            continue;
        }
        origin o = {file, (int)line_no, 67, ""};
        char lfull[PATH_MAX + 8192 + 2];
        struct stat lst;
        snprintf(lfull, sizeof lfull, "%s/%s", c->root, rel);
        if (has_asset(c, rel)) {
            rc = add_job(c, rel, hex, "seal", &o);
        } else if (!lexically_escapes(rel) && lstat(lfull, &lst) != 0) {
            rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 67, "",
                                     c->err, "sealed asset '%s' has vanished", rel);
        } else {
            int ok = check_path(c, rel, &o, "seal");
            if (ok == 1)
                rc = golden_findings_add(c->out, GOLDEN_SEV_ERROR, "seal", file, (int)line_no, 67,
                                         "", c->err, "'%s' is sealed but is not an asset", rel);
            else if (ok < 0)
                rc = GOLDEN_ERR;
        }
        if (rc == GOLDEN_OK) {
            if (nlisted == cap) {
                cap = cap ? cap * 2 : 64;
                char **n = realloc(listed, cap * sizeof *n);
                if (!n) {
                    rc = golden_fail_what(c->err, GOLDEN_ENOMEM, NULL, "out of memory");
                    break;
                }
                listed = n;
            }
            if (!(listed[nlisted] = xstrdup(rel, c->err)))
                rc = GOLDEN_ERR;
            else
                nlisted++;
        }
    }
    if (rc == GOLDEN_OK && ferror(f))
        rc = golden_fail_what(c->err, GOLDEN_EIO, file, "read error");
    fclose(f);
    if (rc == GOLDEN_OK) {
        if (nlisted)
            qsort(listed, nlisted, sizeof *listed, cmp_str);
        for (size_t i = 0; i < c->nassets && rc == GOLDEN_OK; i++) {
            if (strcmp(c->assets[i], SEAL_FILE) == 0)
                continue;
            if (!nlisted || !bsearch(&c->assets[i], listed, nlisted, sizeof *listed, cmp_str))
                rc = add_rel(c, GOLDEN_SEV_ERROR, "seal", c->assets[i],
                             "asset appeared after the folder was sealed");
        }
    }
    for (size_t i = 0; i < nlisted; i++)
        free(listed[i]);
    free(listed);
    return rc;
}

static int seal_write(vctx *c, bool force, char **paths, char (*hexes)[65], size_t n)
{
    char full[PATH_MAX * 2];
    snprintf(full, sizeof full, "%s/%s", c->root, SEAL_FILE);
    golden_outfile *of = NULL;
    if (golden_outfile_open(full, force, &of, c->err) != 0)
        return GOLDEN_ERR;
    FILE *s = golden_outfile_stream(of);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(paths[i], SEAL_FILE) == 0 || !has_asset(c, paths[i]))
            continue;
        if (fprintf(s, "%s  %s\n", hexes[i], paths[i]) < 0) {
            golden_outfile_abort(of);
            return golden_fail_what(c->err, GOLDEN_EIO, full, "write error");
        }
    }
    if (golden_outfile_commit(of, c->err) != 0)
        return GOLDEN_ERR;
    c->out->sealed = true;
    return GOLDEN_OK;
}

/* ------------------------------------------------------------------ the experiment folder */

static const char *const layout_assets[] = {
    "hypothesis.yaml", "baseline/manifest.json", "candidate/manifest.json",
    "compile/baseline.log", "compile/candidate.log", "golden/input-manifest.jsonl",
    "accuracy/result.json", "performance/raw-requests.jsonl", "performance/raw-device-trace.*",
    "performance/summary.json", "stability/faults.jsonl", "decision.md",
};

static bool layout_present(const vctx *c, const char *want)
{
    size_t n = strlen(want);
    if (want[n - 1] != '*')
        return has_asset(c, want);
    for (size_t i = 0; i < c->nassets; i++)
        if (strncmp(c->assets[i], want, n - 1) == 0 && strlen(c->assets[i]) > n - 1 &&
            !strchr(c->assets[i] + n - 1, '/'))
            return true;
    return false;
}

/* Load and validate one of the folder's documents when present (NULL otherwise). */
static int folder_doc(vctx *c, schema_cache *sc, const char *rel, const char *format,
                      golden_doc **out)
{
    *out = NULL;
    if (!has_asset(c, rel))
        return GOLDEN_OK;
    char path[1024];
    disp(c, rel, path, sizeof path);
    origin o = {path, 0, 0, ""};
    int ok = check_path(c, rel, &o, "layout");
    if (ok <= 0)
        return ok;
    golden_schema *s = schema_get(sc, format, c->err);
    if (!s || load_doc(path, out, c->err) != 0)
        return GOLDEN_ERR;
    if (validate(c->out, s, *out, c->err) < 0 || doc_refs(c, *out) != 0)
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

static int folder_jsonl(vctx *c, schema_cache *sc, const char *rel, const char *format,
                        golden_jsonl_fn fn, jl_state *st, bool *seen)
{
    *seen = false;
    if (!has_asset(c, rel))
        return GOLDEN_OK;
    char path[1024];
    disp(c, rel, path, sizeof path);
    origin o = {path, 0, 0, ""};
    int ok = check_path(c, rel, &o, "layout");
    if (ok <= 0)
        return ok;
    if (!(st->schema = schema_get(sc, format, c->err)))
        return GOLDEN_ERR;
    *seen = true;
    return golden_doc_each_jsonl(path, fn, st, c->err) != 0 ? GOLDEN_ERR : GOLDEN_OK;
}

static int experiment_id_agrees(vctx *c, const golden_doc *h, const golden_doc *d)
{
    if (!h || !d)
        return GOLDEN_OK;
    const char *hid = sget(golden_doc_root(h), "experiment_id");
    const char *id = sget(golden_doc_root(d), "experiment_id");
    if (hid && id && strcmp(hid, id) != 0)
        return add_node(c, GOLDEN_SEV_ERROR, "exp-id", d, "/experiment_id",
                        "experiment_id '%s' differs from the hypothesis's '%s'", id, hid);
    return GOLDEN_OK;
}

int golden_experiment_check(const char *dir, const golden_experiment_opts *opts,
                            golden_findings *out, golden_error *err)
{
    vctx c;
    schema_cache sc = {0};
    golden_doc *h = NULL, *bm = NULL, *cm = NULL, *acc = NULL, *sum = NULL;
    jl_state in = {0}, req = {0}, flt = {0}, cal = {0};
    char **sp = NULL;
    char (*sh)[65] = NULL;
    size_t sn = 0;
    bool seal = opts && opts->seal, force = opts && opts->force;
    int rc = GOLDEN_ERR;
    if (vctx_init(&c, dir, opts, out, err) != 0)
        return GOLDEN_ERR;
    char sealpath[PATH_MAX * 2];
    snprintf(sealpath, sizeof sealpath, "%s/%s", c.root, SEAL_FILE);
    struct stat st;
    bool has_seal = lstat(sealpath, &st) == 0;
    if (seal && has_seal && !force) {
        golden_fail_what(err, GOLDEN_EEXISTS, sealpath, "already sealed; use --force to seal again");
        goto done;
    }
    if (walk(&c, NULL, 0) != 0)
        goto done;
    if (c.nassets)
        qsort(c.assets, c.nassets, sizeof *c.assets, cmp_str);

    if (folder_doc(&c, &sc, "hypothesis.yaml", "calculet-op-experiment/v1", &h) != 0)
        goto done;
    const char *status = h ? sget(golden_doc_root(h), "status") : NULL;
    bool planned = status && strcmp(status, "planned") == 0;
    for (size_t i = 0; i < sizeof layout_assets / sizeof layout_assets[0]; i++) {
        if (layout_present(&c, layout_assets[i]))
            continue;
        bool todo = planned && i > 0;
        if (add_rel(&c, todo ? GOLDEN_SEV_TODO : GOLDEN_SEV_ERROR, "layout", layout_assets[i],
                    todo ? "not there yet (status is planned)"
                         : "missing: every experiment carries this asset (section 3)"))
            goto done;
    }
    if (h && rules_hypothesis(&c, h, planned) != 0)
        goto done;
    if (folder_doc(&c, &sc, "baseline/manifest.json", "calculet-calbin-manifest/v1", &bm) != 0 ||
        folder_doc(&c, &sc, "candidate/manifest.json", "calculet-calbin-manifest/v1", &cm) != 0 ||
        folder_doc(&c, &sc, "accuracy/result.json", "calculet-accuracy-result/v1", &acc) != 0 ||
        folder_doc(&c, &sc, "performance/summary.json", "calculet-perf-summary/v1", &sum) != 0)
        goto done;
    if (h && bm && rules_manifest(&c, h, bm, "baseline") != 0)
        goto done;
    if (h && cm && rules_manifest(&c, h, cm, "candidate") != 0)
        goto done;
    if (bm && cm && rules_manifest_pair(&c, bm, cm) != 0)
        goto done;
    if (experiment_id_agrees(&c, h, acc) || experiment_id_agrees(&c, h, sum))
        goto done;

    json_t *limit = h ? ptr_get(golden_doc_root(h), "/matrix/context_limit") : NULL;
    in.c = req.c = flt.c = cal.c = &c;
    in.limit = json_is_integer(limit) ? json_integer_value(limit) : GOLDEN_CONTEXT_LIMIT;
    bool seen;
    if (folder_jsonl(&c, &sc, "golden/input-manifest.jsonl", "calculet-input-manifest/v1",
                     input_line, &in, &seen) != 0)
        goto done;
    if (seen && input_matrix_rules(&in, h, "golden/input-manifest.jsonl") != 0)
        goto done;
    req.cases = in.cases; /* borrowed for lookups; freed with `in` */
    req.ncases = in.ncases;
    req.cases_sorted = seen;
    if (perf_tally_setup(&req, sum) != 0)
        goto done;
    if (folder_jsonl(&c, &sc, "performance/raw-requests.jsonl", "calculet-raw-request/v1",
                     request_line, &req, &seen) != 0)
        goto done;
    if (seen && sum && perf_rules(&req, sum, &in) != 0)
        goto done;
    req.cases = NULL;
    req.ncases = 0;
    if (folder_jsonl(&c, &sc, "stability/faults.jsonl", "calculet-fault/v1", fault_line, &flt,
                     &seen) != 0)
        goto done;
    const char *tok = h ? json_string_value(ptr_get(golden_doc_root(h), "/controlled/tokenizer_hash"))
                        : NULL;
    cal.expected_tokenizer = tok && golden_is_sha256_hex(tok) ? tok : NULL;
    if (folder_jsonl(&c, &sc, "golden/calibration-manifest.jsonl",
                     "calculet-calibration-manifest/v1", calibration_line, &cal, &seen) != 0)
        goto done;
    if (seen && calibration_unique(&cal, "golden/calibration-manifest.jsonl") != 0)
        goto done;

    if (has_seal && !seal && seal_verify(&c) != 0)
        goto done;
    if (seal) {
        for (size_t i = 0; i < c.nassets; i++)
            if (strcmp(c.assets[i], SEAL_FILE) != 0 && add_job(&c, c.assets[i], NULL, "seal", NULL))
                goto done;
    }
    if (run_jobs(&c, seal ? &sp : NULL, seal ? &sh : NULL, &sn) != 0)
        goto done;
    if (seal && out->errors == 0 && seal_write(&c, force, sp, sh, sn) != 0)
        goto done;
    rc = GOLDEN_OK;
done:
    for (size_t i = 0; i < sn; i++)
        free(sp[i]);
    free(sp);
    free(sh);
    req.cases = NULL;
    req.ncases = 0;
    jl_state_free(&in);
    jl_state_free(&req);
    jl_state_free(&flt);
    jl_state_free(&cal);
    golden_doc_free(h);
    golden_doc_free(bm);
    golden_doc_free(cm);
    golden_doc_free(acc);
    golden_doc_free(sum);
    schema_cache_free(&sc);
    vctx_free(&c);
    return rc;
}

/* ------------------------------------------------------------------ vendor hand-off (section 18) */

typedef struct {
    const char *key;
    const char *title;
    const char *need_roles;  /* space-separated roles that must be listed */
    const char *need_format; /* a format that must be listed, or NULL */
} handoff_spec;

static const handoff_spec handoff_specs[GOLDEN_HANDOFF_ITEMS] = {
    {"calbins", "baseline/candidate calbins and SHA-256", "baseline candidate", NULL},
    {"compile", "compile command, flags diff, compiler OCI digest, commits", "baseline candidate",
     "calculet-calbin-manifest/v1"},
    {"graph", "graph/op count, partition, memory plan diff", "", NULL},
    {"goldens", "per-op/layer goldens, input manifest, tolerances", "golden tolerances",
     "calculet-input-manifest/v1"},
    {"trace", "per-op/per-chip trace and its parser", "trace parser", NULL},
    {"limits", "supported shape/dtype/quant limits and fallback", "", NULL},
    {"error_path", "error path and retest after reset", "", NULL},
    {"performance", "raw performance data", "", "calculet-raw-request/v1"},
};

/* Formats whose schema is compiled in ("calculet-fault/v1" -> calculet-fault-v1.schema.json). */
static bool format_known(const char *format)
{
    char name[256];
    size_t n = 0;
    for (const char *p = format; *p && n + 16 < sizeof name; p++)
        name[n++] = *p == '/' ? '-' : *p;
    snprintf(name + n, sizeof name - n, ".schema.json");
    return golden_embedded_schema(name) != NULL;
}

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

static bool file_has_role(json_t *files, const char *role)
{
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *r = sget(f, "role");
        if (r && strcmp(r, role) == 0)
            return true;
    }
    return false;
}

static bool file_has_format(json_t *files, const char *format)
{
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *r = sget(f, "format");
        if (r && strcmp(r, format) == 0)
            return true;
    }
    return false;
}

/* Validate one delivered document named with a format; the schema decides malformed. */
static int handoff_doc(vctx *c, schema_cache *sc, const char *rel, const char *format,
                       long *violations)
{
    char path[1024];
    disp(c, rel, path, sizeof path);
    golden_schema *s = schema_get(sc, format, c->err);
    if (!s)
        return GOLDEN_ERR;
    size_t before = c->out->errors;
    if (has_suffix(rel, ".jsonl")) {
        plain_jl p = {c->out, s};
        if (golden_doc_each_jsonl(path, plain_line, &p, c->err) != 0)
            return GOLDEN_ERR;
    } else {
        golden_doc *d = NULL;
        if (load_doc(path, &d, c->err) != 0) {
            golden_doc_free(d);
            return GOLDEN_ERR;
        }
        int rc = validate(c->out, s, d, c->err) < 0 || doc_refs(c, d) != 0 ? GOLDEN_ERR : GOLDEN_OK;
        golden_doc_free(d);
        if (rc)
            return rc;
    }
    *violations = (long)(c->out->errors - before);
    return GOLDEN_OK;
}

int golden_handoff_check(const char *dir, const golden_experiment_opts *opts,
                         golden_handoff_item items[GOLDEN_HANDOFF_ITEMS], golden_findings *out,
                         golden_error *err)
{
    vctx c;
    schema_cache sc = {0};
    golden_doc *idx = NULL;
    int rc = GOLDEN_ERR;
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
        memset(&items[i], 0, sizeof items[i]);
        items[i].number = i + 1;
        items[i].key = handoff_specs[i].key;
        items[i].title = handoff_specs[i].title;
        items[i].status = GOLDEN_ITEM_PRESENT;
    }
    if (vctx_init(&c, dir, opts, out, err) != 0)
        return GOLDEN_ERR;
    char ipath[1024];
    disp(&c, "handoff.json", ipath, sizeof ipath);
    origin io = {ipath, 0, 0, ""};
    int ok = check_path(&c, "handoff.json", &io, "handoff-index");
    if (ok < 0)
        goto done;
    if (ok == 0) {
        /* no usable index: the delivery cannot be checked at all */
        golden_fail_what(err, GOLDEN_EINVAL, ipath, "%s", out->items[out->count - 1].message);
        out->errors--;
        out->count--;
        goto done;
    }
    golden_schema *s = schema_get(&sc, "calculet-handoff/v1", err);
    if (!s || load_doc(ipath, &idx, err) != 0 || validate(out, s, idx, err) < 0)
        goto done;
    json_t *its = json_object_get(golden_doc_root(idx), "items");
    for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
        const handoff_spec *sp = &handoff_specs[i];
        golden_handoff_item *it = &items[i];
        json_t *item = json_object_get(its, sp->key);
        json_t *files = json_object_get(item, "files");
        char ptr[512] = "/items";
        ptr_push(ptr, sizeof ptr, sp->key);
        if (!json_is_array(files) || json_array_size(files) == 0) {
            item_mark(it, GOLDEN_ITEM_MISSING, "no files listed");
            if (add_node(&c, GOLDEN_SEV_ERROR, "handoff-missing", idx, item ? ptr : "/items",
                         "item %d (%s) is missing: no files listed", it->number, sp->title))
                goto done;
            continue;
        }
        for (const char *r = sp->need_roles; *r;) {
            const char *e = strchr(r, ' ');
            char role[32];
            size_t len = e ? (size_t)(e - r) : strlen(r);
            snprintf(role, sizeof role, "%.*s", (int)len, r);
            if (!file_has_role(files, role)) {
                item_mark(it, GOLDEN_ITEM_MISSING, "no file with role %s", role);
                if (add_node(&c, GOLDEN_SEV_ERROR, "handoff-missing", idx, ptr,
                             "item %d (%s) lists no file with role '%s'", it->number, sp->title,
                             role))
                    goto done;
            }
            r += len;
            while (*r == ' ')
                r++;
        }
        if (sp->need_format && !file_has_format(files, sp->need_format)) {
            item_mark(it, GOLDEN_ITEM_MISSING, "no %s document", sp->need_format);
            if (add_node(&c, GOLDEN_SEV_ERROR, "handoff-missing", idx, ptr,
                         "item %d (%s) lists no %s document", it->number, sp->title,
                         sp->need_format))
                goto done;
        }
        size_t k;
        json_t *f;
        json_array_foreach(files, k, f) {
            const char *path = sget(f, "path"), *sha = sget(f, "sha256");
            const char *format = sget(f, "format");
            if (!path)
                continue;
            char fp[600];
            snprintf(fp, sizeof fp, "%s/files/%zu/path", ptr, k);
            int line = 0, col = 0;
            golden_doc_line(idx, json_object_get(f, "path"), &line, &col);
            origin o = {ipath, line, col, fp};
            int pk = check_path(&c, path, &o, "handoff-missing");
            if (pk < 0)
                goto done;
            if (pk == 0) {
                const char *rule = out->items[out->count - 1].rule;
                item_mark(it, strcmp(rule, "handoff-missing") == 0 ? GOLDEN_ITEM_MISSING
                                                                   : GOLDEN_ITEM_MALFORMED,
                          "%s", out->items[out->count - 1].message);
                continue;
            }
            if (sha && golden_is_sha256_hex(sha) && add_job(&c, path, sha, "artifact-hash", &o))
                goto done;
            if (format && format_known(format)) {
                long viol = 0;
                if (handoff_doc(&c, &sc, path, format, &viol) != 0)
                    goto done;
                if (viol)
                    item_mark(it, GOLDEN_ITEM_MALFORMED, "%s breaks %s in %ld place(s)", path,
                              format, viol);
            }
        }
    }
    if (run_jobs(&c, NULL, NULL, NULL) != 0)
        goto done;
    /* A broken index entry or a hash mismatch makes the item that lists the file malformed;
     * so does any finding inside a document the item delivers (its own references included). */
    for (size_t i = 0; i < out->count; i++) {
        const golden_finding *g = &out->items[i];
        if (g->severity != GOLDEN_SEV_ERROR || strcmp(g->rule, "handoff-missing") == 0)
            continue;
        for (int k = 0; k < GOLDEN_HANDOFF_ITEMS; k++) {
            bool hit = false;
            if (strcmp(g->file, ipath) == 0) {
                char pre[128];
                snprintf(pre, sizeof pre, "/items/%s/", handoff_specs[k].key);
                hit = strncmp(g->pointer, pre, strlen(pre)) == 0;
            } else {
                size_t j;
                json_t *f;
                json_array_foreach(json_object_get(json_object_get(its, handoff_specs[k].key), "files"), j, f) {
                    const char *path = sget(f, "path");
                    char dp[1024];
                    if (!path)
                        continue;
                    disp(&c, path, dp, sizeof dp);
                    hit = hit || strcmp(dp, g->file) == 0;
                }
            }
            if (hit)
                item_mark(&items[k], GOLDEN_ITEM_MALFORMED, "%s", g->message);
        }
    }
    rc = GOLDEN_OK;
done:
    golden_doc_free(idx);
    schema_cache_free(&sc);
    vctx_free(&c);
    return rc;
}

/* ------------------------------------------------------------------ reports */

/* A JSON string even for bytes that are not UTF-8 (file names can be anything): those bytes
 * become '?', so the report stays valid JSON. */
static json_t *jstr(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    char *copy = strdup(s);
    if (!copy)
        return NULL;
    for (unsigned char *p = (unsigned char *)copy; *p; p++)
        if (*p >= 0x80 || *p < 0x20)
            *p = '?';
    v = json_string(copy);
    free(copy);
    return v;
}

json_t *golden_verify_report(const char *mode, const char *target, const golden_findings *f,
                             const golden_handoff_item *items, golden_error *err)
{
    json_t *doc = json_object(), *list = json_array(), *sum = json_object();
    if (!doc || !list || !sum)
        goto oom;
    char producer[64];
    snprintf(producer, sizeof producer, "manifest-verify %s", GOLDEN_VERSION);
    bool failed = f->errors > 0;
    if (items)
        for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++)
            failed = failed || items[i].status != GOLDEN_ITEM_PRESENT;
    if (json_object_set_new(doc, "schema", json_string("calculet-verify-report/v1")) ||
        json_object_set_new(doc, "producer", json_string(producer)) ||
        json_object_set_new(doc, "mode", json_string(mode)) ||
        json_object_set_new(doc, "target", jstr(target)) ||
        json_object_set_new(doc, "verdict", json_string(failed ? "fail" : "pass")) ||
        json_object_set_new(doc, "sealed", json_boolean(f->sealed)) ||
        json_object_set_new(sum, "documents", json_integer((json_int_t)f->documents)) ||
        json_object_set_new(sum, "files_hashed", json_integer((json_int_t)f->files_hashed)) ||
        json_object_set_new(sum, "errors", json_integer((json_int_t)f->errors)) ||
        json_object_set_new(sum, "todos", json_integer((json_int_t)f->todos)))
        goto oom;
    if (json_object_set_new(doc, "summary", sum)) {
        sum = NULL;
        goto oom;
    }
    sum = NULL;
    for (size_t i = 0; i < f->count; i++) {
        const golden_finding *g = &f->items[i];
        json_t *o = json_object();
        if (!o || json_array_append_new(list, o))
            goto oom;
        if (json_object_set_new(o, "severity",
                                json_string(g->severity == GOLDEN_SEV_ERROR ? "error" : "todo")) ||
            json_object_set_new(o, "rule", json_string(g->rule)) ||
            json_object_set_new(o, "file", jstr(g->file)) ||
            (g->line > 0 && (json_object_set_new(o, "line", json_integer(g->line)) ||
                             json_object_set_new(o, "col", json_integer(g->col > 0 ? g->col : 1)))) ||
            (g->pointer[0] &&
             json_object_set_new(o, "pointer", jstr(g->pointer))) ||
            json_object_set_new(o, "message", jstr(g->message)))
            goto oom;
    }
    if (json_object_set_new(doc, "findings", list)) {
        list = NULL;
        goto oom;
    }
    list = NULL;
    if (items) {
        json_t *arr = json_array();
        if (!arr || json_object_set_new(doc, "items", arr))
            goto oom;
        for (int i = 0; i < GOLDEN_HANDOFF_ITEMS; i++) {
            json_t *o = json_object();
            if (!o || json_array_append_new(arr, o) ||
                json_object_set_new(o, "number", json_integer(items[i].number)) ||
                json_object_set_new(o, "key", json_string(items[i].key)) ||
                json_object_set_new(o, "title", json_string(items[i].title)) ||
                json_object_set_new(o, "status", json_string(golden_item_status_name(items[i].status))) ||
                (items[i].detail[0] &&
                 json_object_set_new(o, "detail", jstr(items[i].detail))))
                goto oom;
        }
    }
    return doc;
oom:
    json_decref(doc);
    json_decref(list);
    json_decref(sum);
    golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory building the report");
    return NULL;
}

/* Every rule one mode can report, so that JUnit lists the passing ones too. */
static const char *const experiment_rules[] = {
    "layout", "folder-name", "exp-id", "family", "schema", "required-filled", "one-main-factor",
    "controlled-equal", "manifest-agrees", "artifact-exists", "artifact-hash", "path-escape",
    "context-limit", "input-matrix", "unknown-case", "rejection-submitted", "stage-order",
    "perf-runs",
    "calibration-unique", "calibration-hash", "calibration-tokenizer", "calibration-pii", "seal",
    NULL};

int golden_verify_junit(const char *path, bool force, const char *mode, const char *target,
                        const golden_findings *f, const golden_handoff_item *items,
                        golden_error *err)
{
    const char *schema_rules[] = {"schema", NULL};
    const char *const *rules = strcmp(mode, "experiment") == 0 ? experiment_rules : schema_rules;
    size_t nrules = 0, ncases;
    while (rules[nrules])
        nrules++;
    ncases = items ? GOLDEN_HANDOFF_ITEMS + 1 : nrules;
    golden_junit_case *cases = calloc(ncases, sizeof *cases);
    char **details = calloc(ncases, sizeof *details);
    int rc = GOLDEN_ERR;
    if (!cases || !details) {
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < ncases; i++) {
        bool item_case = items && i < GOLDEN_HANDOFF_ITEMS;
        const char *rule = items ? (item_case ? NULL : "findings") : rules[i];
        cases[i].classname = mode;
        cases[i].name = item_case ? items[i].key : rule;
        if (item_case) {
            cases[i].failed = items[i].status != GOLDEN_ITEM_PRESENT;
            cases[i].message = cases[i].failed ? items[i].detail : NULL;
            continue;
        }
        /* all findings of this rule (or all, for the hand-off's catch-all case) as the body */
        size_t len = 0;
        FILE *mem = open_memstream(&details[i], &len);
        if (!mem) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto done;
        }
        for (size_t k = 0; k < f->count; k++) {
            const golden_finding *g = &f->items[k];
            if (g->severity != GOLDEN_SEV_ERROR || (!items && strcmp(g->rule, rule) != 0))
                continue;
            char where[1200];
            golden_finding_where(g, where, sizeof where);
            fprintf(mem, "%s: %s: %s\n", where, g->rule, g->message);
            if (!cases[i].failed) {
                cases[i].failed = true;
                cases[i].message = g->message;
            }
        }
        if (fclose(mem) != 0 || !details[i]) {
            golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            goto done;
        }
        cases[i].details = details[i][0] ? details[i] : NULL;
    }
    char suite[1200];
    snprintf(suite, sizeof suite, "manifest-verify %s", target);
    rc = golden_junit_write(path, force, suite, cases, ncases, err);
done:
    if (details)
        for (size_t i = 0; i < ncases; i++)
            free(details[i]);
    free(details);
    free(cases);
    return rc;
}
