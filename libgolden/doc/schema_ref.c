/* Schema resources and references: embedded schemas or files, $id, $anchor and JSON Pointer
 * fragments, each resource loaded once per compiled schema. */
#include "doc/schema_internal.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void sch_resource_free(resource *r)
{
    golden_doc_free(r->doc);
    free(r->id);
    free(r->path);
    free(r->name);
    free(r);
}

static resource *resource_add(golden_schema *S, golden_doc *doc, const char *path,
                              const char *name, golden_error *err)
{
    resource *r = calloc(1, sizeof *r);
    if (!r) {
        golden_doc_free(doc);
        golden_fail_what(err, GOLDEN_ENOMEM, path ? path : name, "out of memory");
        return NULL;
    }
    r->doc = doc;
    r->path = path ? strdup(path) : NULL;
    r->name = name ? strdup(name) : NULL;
    json_t *id = json_object_get(golden_doc_root(doc), "$id");
    if (json_is_string(id))
        r->id = strdup(json_string_value(id));
    if ((path && !r->path) || (name && !r->name) || (json_is_string(id) && !r->id)) {
        sch_resource_free(r);
        golden_fail_what(err, GOLDEN_ENOMEM, path ? path : name, "out of memory");
        return NULL;
    }
    /* A trailing empty fragment is the same resource. */
    if (r->id && r->id[0] && r->id[strlen(r->id) - 1] == '#')
        r->id[strlen(r->id) - 1] = '\0';
    r->next = S->resources;
    S->resources = r;
    return r;
}

resource *sch_load_embedded(golden_schema *S, const golden_embedded_file *f, golden_error *err)
{
    for (resource *r = S->resources; r; r = r->next)
        if (r->name && !strcmp(r->name, f->name))
            return r;
    golden_doc *d;
    if (golden_doc_load_json(f->name, f->data, f->size, 1, &d, err) < 0)
        return NULL;
    return resource_add(S, d, NULL, f->name, err);
}

resource *sch_load_path(golden_schema *S, const char *path, golden_error *err)
{
    for (resource *r = S->resources; r; r = r->next)
        if (r->path && !strcmp(r->path, path))
            return r;
    golden_doc *d;
    if (golden_doc_load_file(path, &d, err) < 0)
        return NULL;
    return resource_add(S, d, path, NULL, err);
}

static const char *base_name(const char *s)
{
    const char *b = strrchr(s, '/');
    return b ? b + 1 : s;
}

int sch_file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_dotdot(const char *p)
{
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return 1;
        if (!e)
            break;
        s = e + 1;
    }
    return 0;
}

/* Percent-decoding of a URI fragment (JSON pointers in refs may be URI-escaped). */
static char *pct_decode(const char *s, size_t n)
{
    char *o = malloc(n + 1);
    if (!o)
        return NULL;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
            isxdigit((unsigned char)s[i + 2])) {
            char h[3] = {s[i + 1], s[i + 2], 0};
            o[j++] = (char)strtol(h, NULL, 16);
            i += 2;
        } else {
            o[j++] = s[i];
        }
    }
    o[j] = '\0';
    return o;
}

static json_t *find_anchor(json_t *node, const char *name, int depth)
{
    if (depth > 600)
        return NULL;
    if (json_is_object(node)) {
        json_t *a = json_object_get(node, "$anchor");
        if (json_is_string(a) && !strcmp(json_string_value(a), name))
            return node;
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v)
        {
            if (!strcmp(k, "enum") || !strcmp(k, "const"))
                continue;
            json_t *f = find_anchor(v, name, depth + 1);
            if (f)
                return f;
        }
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v)
        {
            json_t *f = find_anchor(v, name, depth + 1);
            if (f)
                return f;
        }
    }
    return NULL;
}

/* Resolve `ref` written in resource r (at node `at`) to a schema node and its resource. */
int sch_resolve_ref(golden_schema *S, resource *r, const json_t *at, const char *ref,
                       resource **rout, json_t **nout, golden_error *err)
{
    const char *hash = strchr(ref, '#');
    size_t ulen = hash ? (size_t)(hash - ref) : strlen(ref);
    const char *frag = hash ? hash + 1 : "";
    resource *target = r;
    if (ulen) {
        char *uri = strndup(ref, ulen);
        if (!uri)
            return sch_nomem(S, r, at, err);
        char *abs = NULL;
        int absolute = strstr(uri, "://") != NULL || !strncmp(uri, "urn:", 4);
        if (absolute) {
            abs = strdup(uri);
        } else if (r->id && strstr(r->id, "://")) {
            const char *slash = strrchr(r->id, '/');
            size_t bl = (size_t)(slash - r->id) + 1;
            const char *u = uri;
            while (!strncmp(u, "./", 2))
                u += 2;
            abs = malloc(bl + strlen(u) + 1);
            if (abs) {
                memcpy(abs, r->id, bl);
                strcpy(abs + bl, u);
            }
        }
        target = NULL;
        for (resource *x = S->resources; x && abs; x = x->next)
            if (x->id && !strcmp(x->id, abs))
                target = x;
        /* Beside the referring file on disk first, then among the embedded schemas. A ref
         * stays in the referring schema's folder or below: no "..", no absolute path. */
        if (!absolute && (uri[0] == '/' || has_dotdot(uri))) {
            int rc = sch_fail(S, r, at, err,
                              "$ref \"%s\" leaves the schema's folder (no \"..\" or absolute paths)",
                              ref);
            free(uri);
            free(abs);
            return rc;
        }
        if (!target && r->path && !absolute) {
            const char *slash = strrchr(r->path, '/');
            size_t dl = slash ? (size_t)(slash - r->path) + 1 : 0;
            char *p = malloc(dl + strlen(uri) + 1);
            if (!p) {
                free(uri);
                free(abs);
                return sch_nomem(S, r, at, err);
            }
            memcpy(p, r->path, dl);
            strcpy(p + dl, uri);
            if (sch_file_exists(p)) {
                target = sch_load_path(S, p, err);
                if (!target) {
                    free(p);
                    free(uri);
                    free(abs);
                    return GOLDEN_ERR;
                }
            }
            free(p);
        }
        if (!target) {
            const char *bn = base_name(uri);
            const golden_embedded_file *f = golden_embedded_schema(bn);
            if (f && (!absolute || !strncmp(uri, ID_PREFIX, strlen(ID_PREFIX)))) {
                target = sch_load_embedded(S, f, err);
                if (!target) {
                    free(uri);
                    free(abs);
                    return GOLDEN_ERR;
                }
            }
        }
        free(abs);
        if (!target) {
            int rc = sch_fail(S, r, at, err, "$ref \"%s\": no schema \"%s\" (neither embedded nor "
                                          "beside the referring schema)",
                           ref, uri);
            free(uri);
            return rc;
        }
        free(uri);
    }
    json_t *node = golden_doc_root(target->doc);
    char *f = pct_decode(frag, strlen(frag));
    if (!f)
        return sch_nomem(S, r, at, err);
    if (f[0] == '/') {
        /* JSON pointer: ~1 is '/', ~0 is '~' */
        char *seg = f + 1;
        for (;;) {
            char *end = strchr(seg, '/');
            if (end)
                *end = '\0';
            char *w = seg;
            for (char *q = seg; *q; q++) {
                if (q[0] == '~' && q[1] == '1')
                    *w++ = '/', q++;
                else if (q[0] == '~' && q[1] == '0')
                    *w++ = '~', q++;
                else
                    *w++ = *q;
            }
            *w = '\0';
            if (json_is_object(node)) {
                node = json_object_get(node, seg);
            } else if (json_is_array(node)) {
                char *e;
                unsigned long idx = strtoul(seg, &e, 10);
                node = *seg && !*e ? json_array_get(node, idx) : NULL;
            } else {
                node = NULL;
            }
            if (!node || !end)
                break;
            seg = end + 1;
        }
    } else if (f[0]) {
        node = find_anchor(node, f, 0);
    }
    free(f);
    if (!node)
        return sch_fail(S, r, at, err, "$ref \"%s\" points at nothing", ref);
    *rout = target;
    *nout = node;
    return GOLDEN_OK;
}
