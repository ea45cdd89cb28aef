/* Documents of a check: loaded within bounded memory, validated against the embedded schemas
 * (each compiled once per process), whole or one JSON Lines line at a time. */
#include "exp/internal.h"
#include "golden/report.h"
#include "util/embed.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Formats whose schema is compiled in ("calculet-fault/v1" -> calculet-fault-v1.schema.json). */
bool exp_format_embedded(const char *format)
{
    char name[256];
    size_t n = 0;
    for (const char *p = format; *p && n + 16 < sizeof name; p++)
        name[n++] = *p == '/' ? '-' : *p;
    snprintf(name + n, sizeof name - n, ".schema.json");
    return lg_embedded_schema(name) != NULL;
}

/* The embedded schemas compiled once per process, not once per check: a compiled schema is not
 * changed by validation (manifest-verify's threads already share one), and compiling the dozen
 * schemas an experiment names took about 60% of checking a small one (perf on fuzz_experiment;
 * manifest-verify over many experiments or hand-offs pays it once). Bounded: a format beyond
 * the table is compiled per run as before. Freed when libgolden is unloaded. */
static struct {
    char *format;
    golden_schema *schema;
} shared[32];
static size_t nshared;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((destructor)) static void shared_schemas_free(void)
{
    for (size_t i = 0; i < nshared; i++) {
        golden_schema_free(shared[i].schema);
        free(shared[i].format);
    }
    nshared = 0;
}

/* The shared compiled schema of format; NULL with *per_run set when format is not embedded or
 * the table is full (the caller compiles it for its run), NULL with err set on failure. */
static golden_schema *shared_get(const char *format, golden_error *err, bool *per_run)
{
    golden_schema *s = NULL;
    *per_run = false;
    pthread_mutex_lock(&shared_lock);
    for (size_t i = 0; i < nshared && !s; i++)
        if (strcmp(shared[i].format, format) == 0)
            s = shared[i].schema;
    if (!s && (nshared == sizeof shared / sizeof shared[0] || !exp_format_embedded(format))) {
        *per_run = true;
    } else if (!s) {
        char *f = strdup(format);
        if (!f)
            golden_fail_what(err, GOLDEN_ENOMEM, format, "out of memory");
        else if (golden_schema_load(format, &s, err) != 0)
            free(f);
        else {
            shared[nshared].format = f;
            shared[nshared].schema = s;
            nshared++;
        }
    }
    pthread_mutex_unlock(&shared_lock);
    return s;
}

golden_schema *exp_schema_get(schema_cache *sc, const char *format, golden_error *err)
{
    bool per_run;
    golden_schema *s = shared_get(format, err, &per_run);
    if (s || !per_run)
        return s;
    for (size_t i = 0; i < sc->n; i++)
        if (strcmp(sc->slots[i].format, format) == 0)
            return sc->slots[i].schema;
    if (sc->n == sizeof sc->slots / sizeof sc->slots[0]) {
        golden_fail_what(err, GOLDEN_EINVAL, format, "too many schemas in one run");
        return NULL;
    }
    if (golden_schema_load(format, &s, err) != 0)
        return NULL;
    sc->slots[sc->n].format = format;
    sc->slots[sc->n].schema = s;
    sc->n++;
    return s;
}

void exp_schema_cache_free(schema_cache *sc)
{
    for (size_t i = 0; i < sc->n; i++)
        golden_schema_free(sc->slots[i].schema);
    sc->n = 0;
}

/* Every violation of doc against s becomes a "schema" finding; returns the count or -1. */
int exp_validate_add(golden_findings *out, const golden_doc *doc, long n,
                     const golden_violation *v, golden_error *err)
{
    out->documents++;
    for (long i = 0; i < n; i++) {
        int line = 0, col = 0;
        exp_node_pos(doc, v[i].pointer, &line, &col);
        if (golden_findings_add(out, GOLDEN_SEV_ERROR, "schema", golden_doc_name(doc), line, col,
                                v[i].pointer, err, "%s (%s)", v[i].message, v[i].keyword) != 0)
            return -1;
    }
    return 0;
}

long exp_validate(golden_findings *out, const golden_schema *s, const golden_doc *doc,
                  int threads, golden_error *err)
{
    golden_violation *v = NULL;
    golden_schema_options so = GOLDEN_SCHEMA_OPTIONS_INIT;
    so.threads = threads; /* manifest-verify -j bounds validation too */
    long n = golden_schema_validate_opts(s, doc, NULL, &so, &v, err);
    if (n < 0)
        return -1;
    int rc = exp_validate_add(out, doc, n, v, err);
    free(v);
    return rc < 0 ? -1 : n;
}

/* Load a whole JSON or YAML document, refusing sizes that would not fit bounded memory. Pipes
 * and other streams are read here, up to the same limit, because their size is not known. */
int exp_load_doc(const char *path, golden_doc **doc, golden_error *err)
{
    struct stat st;
    if (strcmp(path, "-") == 0) /* standard input: read as a stream below */
        st.st_mode = S_IFIFO;
    else if (stat(path, &st) != 0)
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
    FILE *f = golden_infile_fopen(path, GOLDEN_IN_STREAM, err); /* never blocks on a FIFO */
    if (!f)
        return GOLDEN_ERR;
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

int exp_plain_line(void *ctx, golden_doc *line_doc, size_t line_no, golden_error *err)
{
    (void)line_no;
    plain_jl *p = ctx;
    p->records++;
    return exp_validate(p->out, p->schema, line_doc, p->threads, err) < 0 ? -1 : 0;
}

int golden_findings_documents(const char *schema_ref, const char *const *paths, size_t n,
                            golden_findings *out, golden_error *err)
{
    return golden_findings_documents_opts(schema_ref, NULL, 0, paths, n, out, err);
}

int golden_findings_documents_opts(const char *schema_ref, const golden_schema_load_options *lo,
                                 int threads, const char *const *paths, size_t n, golden_findings *out,
                                 golden_error *err)
{
    golden_schema *s = NULL;
    if (golden_schema_load_opts(schema_ref, lo, &s, err) != 0)
        return GOLDEN_ERR;
    int rc = GOLDEN_OK;
    for (size_t i = 0; i < n && rc == GOLDEN_OK; i++) {
        if (lg_has_suffix(paths[i], ".jsonl")) {
            plain_jl p = {out, s, 0, threads};
            if (golden_doc_each_jsonl(paths[i], exp_plain_line, &p, err) != 0)
                rc = GOLDEN_ERR;
        } else {
            golden_doc *doc = NULL;
            if (exp_load_doc(paths[i], &doc, err) != 0 || exp_validate(out, s, doc, threads, err) < 0)
                rc = GOLDEN_ERR;
            golden_doc_free(doc);
        }
    }
    golden_schema_free(s);
    return rc;
}

/* Load and validate one of the folder's documents when present (NULL otherwise). */
int exp_folder_doc(vctx *c, schema_cache *sc, const char *rel, const char *format,
                      golden_doc **out)
{
    *out = NULL;
    if (!exp_has_asset(c, rel))
        return GOLDEN_OK;
    char path[1024];
    exp_disp(c, rel, path, sizeof path);
    origin o = {path, 0, 0, ""};
    int ok = exp_check_path(c, rel, &o, "layout");
    if (ok <= 0)
        return ok;
    golden_schema *s = exp_schema_get(sc, format, c->err);
    if (!s || exp_load_doc(path, out, c->err) != 0)
        return GOLDEN_ERR;
    if (exp_validate(c->out, s, *out, c->threads, c->err) < 0 || exp_doc_refs(c, *out) != 0)
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

/* The prologue both JSON Lines readers share: 1 when rel is there, its path checked and its
 * schema in st (path gets the displayed path); 0 or GOLDEN_ERR otherwise. */
static int jsonl_prologue(vctx *c, schema_cache *sc, const char *rel, const char *format,
                          jl_state *st, char *path, size_t cap)
{
    if (!exp_has_asset(c, rel))
        return GOLDEN_OK;
    exp_disp(c, rel, path, cap);
    origin o = {path, 0, 0, ""};
    int ok = exp_check_path(c, rel, &o, "layout");
    if (ok <= 0)
        return ok;
    if (!(st->schema = exp_schema_get(sc, format, c->err)))
        return GOLDEN_ERR;
    return 1;
}

int exp_folder_jsonl(vctx *c, schema_cache *sc, const char *rel, const char *format,
                        golden_jsonl_fn fn, jl_state *st, bool *seen)
{
    char path[1024];
    int ok = jsonl_prologue(c, sc, rel, format, st, path, sizeof path);
    *seen = ok == 1;
    if (!*seen)
        return ok;
    return golden_doc_each_jsonl(path, fn, st, c->err) != 0 ? GOLDEN_ERR : GOLDEN_OK;
}

int exp_folder_jsonl_par(vctx *c, schema_cache *sc, const char *rel, const char *format,
                         lg_jsonl_par *p, jl_state *st, bool *seen)
{
    char path[1024];
    int ok = jsonl_prologue(c, sc, rel, format, st, path, sizeof path);
    *seen = ok == 1;
    if (!*seen)
        return ok;
    p->prep_ctx = p->take_ctx = st;
    return lg_doc_each_jsonl_par(path, p, c->err) != 0 ? GOLDEN_ERR : GOLDEN_OK;
}
