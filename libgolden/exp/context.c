/* The state of one check (the folder, its real path, the findings, the hashing to do) and the
 * helpers that place a finding at a file, a document node or a path's origin. */
#include "exp/internal.h"
#include "util/pool.h"
#include "golden/parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void exp_disp(const vctx *c, const char *rel, char *buf, size_t n)
{
    if (!rel || !*rel)
        snprintf(buf, n, "%s", c->given);
    else
        snprintf(buf, n, "%s/%s", c->given, rel);
}

int exp_add_rel(vctx *c, golden_severity sev, const char *rule, const char *rel,
                   const char *fmt, ...)
{
    char file[1024];
    exp_disp(c, rel, file, sizeof file);
    va_list ap;
    va_start(ap, fmt);
    int rc = exp_findings_vadd(c->out, sev, rule, file, 0, 0, "", c->err, fmt, ap);
    va_end(ap);
    return rc;
}

/* A finding at a node of a document: position from the doc, pointer as given. */
int exp_add_node(vctx *c, golden_severity sev, const char *rule, const golden_doc *doc,
                    const char *pointer, const char *fmt, ...)
{
    int line = 0, col = 0;
    exp_node_pos(doc, pointer ? pointer : "", &line, &col);
    va_list ap;
    va_start(ap, fmt);
    int rc = exp_findings_vadd(c->out, sev, rule, golden_doc_name(doc), line, col, pointer, c->err,
                           fmt, ap);
    va_end(ap);
    return rc;
}

void exp_vctx_free(vctx *c)
{
    for (size_t i = 0; i < c->njobs; i++)
        free(c->jobs[i].rel);
    free(c->jobs);
    for (size_t i = 0; i < c->nassets; i++)
        free(c->assets[i]);
    free(c->assets);
    lg_strmap_free(&c->asset_set);
}

int exp_vctx_init(vctx *c, const char *dir, const golden_experiment_opts *opts,
                     golden_findings *out, golden_error *err)
{
    memset(c, 0, sizeof *c);
    c->given = dir;
    c->out = out;
    c->err = err;
    if (opts && opts->version > GOLDEN_EXPERIMENT_OPTS_VERSION)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, NULL,
                                "experiment options version %u is newer than this library's %d",
                                opts->version, GOLDEN_EXPERIMENT_OPTS_VERSION);
    c->threads = opts && opts->threads > 0 ? opts->threads : lg_cpu_count();
    c->tokenizer = opts && opts->version >= 2 ? opts->tokenizer : NULL;
    c->hash_files = opts && opts->version >= 3 ? opts->hash_files : NULL;
    c->hash_ctx = opts && opts->version >= 3 ? opts->hash_ctx : NULL;
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
bool exp_inside_root(const vctx *c, const char *p)
{
    size_t n = strlen(c->root);
    if (strcmp(c->root, "/") == 0)
        return true;
    return strncmp(p, c->root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

bool exp_lexically_escapes(const char *rel)
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


int exp_add_origin(vctx *c, const origin *o, const char *rule, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = exp_findings_vadd(c->out, GOLDEN_SEV_ERROR, rule, o->file, o->line, o->col, o->pointer,
                           c->err, fmt, ap);
    va_end(ap);
    return rc;
}


char *exp_xstrdup(const char *s, golden_error *err)
{
    char *d = strdup(s);
    if (!d)
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    return d;
}

/* Append a JSON Pointer token (escaping ~ and /) to buf. */
void exp_ptr_push(char *buf, size_t n, const char *token)
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

void exp_ptr_push_index(char *buf, size_t n, size_t i)
{
    char tok[32];
    snprintf(tok, sizeof tok, "%zu", i);
    exp_ptr_push(buf, n, tok);
}

/* Resolve a JSON Pointer inside root; NULL when it names nothing. */
json_t *exp_ptr_get(json_t *root, const char *ptr)
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
            uint64_t idx;
            node = golden_parse_uint(tok, 0, SIZE_MAX, &idx) == GOLDEN_PARSE_OK
                       ? json_array_get(node, (size_t)idx) : NULL;
        } else {
            node = NULL;
        }
    }
    return node;
}

/* Position of the node a pointer names. jansson shares one true, false and null between all
 * places, so positions are asked of the parent's slot rather than of the node. */
void exp_node_pos(const golden_doc *doc, const char *ptr, int *line, int *col)
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
    json_t *parent = exp_ptr_get(root, parent_ptr);
    if (json_is_object(parent) && json_object_get(parent, tok)) {
        golden_doc_child_line(doc, parent, tok, 0, line, col);
    } else if (json_is_array(parent)) {
        uint64_t idx;
        if (golden_parse_uint(tok, 0, SIZE_MAX, &idx) == GOLDEN_PARSE_OK &&
            idx < json_array_size(parent))
            golden_doc_child_line(doc, parent, NULL, (size_t)idx, line, col);
    }
    if (*line == 0 && parent) /* the slot is absent: point at its parent */
        exp_node_pos(doc, parent_ptr, line, col);
}
