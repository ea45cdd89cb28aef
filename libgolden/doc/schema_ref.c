/* Schema resources and references: documents (embedded, on disk, or registered from a
 * folder), base URIs per RFC 3986, $id at any depth, $anchor/$dynamicAnchor, JSON Pointers. */
#include "doc/schema_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define META_PREFIX "https://json-schema.org/draft/2020-12/"

static uint64_t ptr_hash(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

void *sch_ptrmap_get(const ptrmap *m, const void *k)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1, i = (size_t)ptr_hash(k) & mask;
    while (m->e[i].key) {
        if (m->e[i].key == k)
            return m->e[i].val;
        i = (i + 1) & mask;
    }
    return NULL;
}

int sch_ptrmap_put(ptrmap *m, const void *k, void *v)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        ptrmap old = *m;
        m->e = calloc(cap, sizeof *m->e);
        if (!m->e) {
            *m = old;
            return -1;
        }
        m->cap = cap;
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.e[i].key)
                sch_ptrmap_put(m, old.e[i].key, old.e[i].val);
        free(old.e);
    }
    size_t mask = m->cap - 1, i = (size_t)ptr_hash(k) & mask;
    while (m->e[i].key) {
        if (m->e[i].key == k) {
            m->e[i].val = v;
            return 0;
        }
        i = (i + 1) & mask;
    }
    m->e[i].key = k;
    m->e[i].val = v;
    m->n++;
    return 0;
}

/* ---- RFC 3986 section 5.2 ---- */

typedef struct {
    const char *scheme, *auth, *path, *query;
    size_t ls, la, lp, lq;
    int has_auth, has_query;
} uriparts;

static void uri_split(const char *s, size_t n, uriparts *u)
{
    memset(u, 0, sizeof *u);
    const char *e = s + n, *p = s;
    const char *h = memchr(s, '#', n);
    if (h)
        e = h;
    const char *q = p;
    while (q < e && (isalnum((unsigned char)*q) || *q == '+' || *q == '-' || *q == '.'))
        q++;
    if (q > p && q < e && *q == ':' && isalpha((unsigned char)*p)) {
        u->scheme = p;
        u->ls = (size_t)(q - p);
        p = q + 1;
    }
    if (e - p >= 2 && p[0] == '/' && p[1] == '/') {
        p += 2;
        const char *a = p;
        while (p < e && *p != '/' && *p != '?')
            p++;
        u->auth = a;
        u->la = (size_t)(p - a);
        u->has_auth = 1;
    }
    const char *qm = memchr(p, '?', (size_t)(e - p));
    u->path = p;
    u->lp = (size_t)((qm ? qm : e) - p);
    if (qm) {
        u->query = qm + 1;
        u->lq = (size_t)(e - qm - 1);
        u->has_query = 1;
    }
}

/* remove_dot_segments, in place over a NUL-terminated path. */
static void remove_dots(char *in)
{
    char *out = in, *r = in;
    size_t o = 0;
    while (*r) {
        if (!strncmp(r, "../", 3))
            r += 3;
        else if (!strncmp(r, "./", 2))
            r += 2;
        else if (!strncmp(r, "/./", 3))
            r += 2;
        else if (!strcmp(r, "/."))
            r[1] = '\0';
        else if (!strncmp(r, "/../", 4) || !strcmp(r, "/..")) {
            r += 3;
            if (!*r)
                *--r = '/';
            else
                r[0] = '/';
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else if (!strcmp(r, ".") || !strcmp(r, ".."))
            r += strlen(r);
        else {
            if (*r == '/')
                out[o++] = *r++;
            while (*r && *r != '/')
                out[o++] = *r++;
        }
    }
    out[o] = '\0';
}

char *sch_uri_resolve(const char *base, const char *ref, size_t reflen)
{
    uriparts b, r;
    uri_split(base ? base : "", base ? strlen(base) : 0, &b);
    uri_split(ref, reflen, &r);
    size_t cap = strlen(base ? base : "") + reflen + 8;
    char *path = malloc(cap), *out = malloc(cap + 8);
    if (!path || !out) {
        free(path);
        free(out);
        return NULL;
    }
    const uriparts *sa, *aa, *qa;
    if (r.scheme) {
        sa = &r, aa = &r, qa = &r;
        snprintf(path, cap, "%.*s", (int)r.lp, r.path);
    } else if (r.has_auth) {
        sa = &b, aa = &r, qa = &r;
        snprintf(path, cap, "%.*s", (int)r.lp, r.path);
    } else {
        sa = &b, aa = &b;
        if (r.lp == 0) {
            snprintf(path, cap, "%.*s", (int)b.lp, b.path);
            qa = r.has_query ? &r : &b;
        } else {
            qa = &r;
            if (r.path[0] == '/') {
                snprintf(path, cap, "%.*s", (int)r.lp, r.path);
            } else if (b.has_auth && b.lp == 0) {
                snprintf(path, cap, "/%.*s", (int)r.lp, r.path);
            } else {
                const char *sl = NULL;
                for (size_t i = 0; i < b.lp; i++)
                    if (b.path[i] == '/')
                        sl = b.path + i;
                size_t keep = sl ? (size_t)(sl - b.path) + 1 : 0;
                snprintf(path, cap, "%.*s%.*s", (int)keep, b.path, (int)r.lp, r.path);
            }
        }
    }
    /* a URN's path (urn:uuid:...) has no segments to clean */
    if (path[0] == '/' || (aa->has_auth))
        remove_dots(path);
    size_t o = 0;
    if (sa->scheme)
        o += (size_t)sprintf(out + o, "%.*s:", (int)sa->ls, sa->scheme);
    if (aa->has_auth)
        o += (size_t)sprintf(out + o, "//%.*s", (int)aa->la, aa->auth);
    o += (size_t)sprintf(out + o, "%s", path);
    if (qa->has_query)
        sprintf(out + o, "?%.*s", (int)qa->lq, qa->query);
    free(path);
    return out;
}

/* ---- documents and their index ---- */

void sch_resource_free(resource *r)
{
    golden_doc_free(r->doc);
    free(r->uri);
    free(r->path);
    free(r->name);
    free(r);
}

static sres *find_sres(const golden_schema *S, const char *uri)
{
    uint64_t v;
    return lg_strmap_get(&S->uris, uri, strlen(uri), &v) ? (sres *)(uintptr_t)v : NULL;
}

static sres *add_sres(golden_schema *S, const char *uri, json_t *node, resource *d)
{
    sres *x = find_sres(S, uri);
    if (x)
        return x; /* the first document to claim a URI keeps it */
    x = calloc(1, sizeof *x);
    if (!x || !(x->uri = strdup(uri))) {
        free(x);
        return NULL;
    }
    x->node = node;
    x->doc = d;
    x->next = S->sres;
    S->sres = x; /* owned by the list from here on, found through the map */
    if (lg_strmap_put(&S->uris, x->uri, strlen(x->uri), (uint64_t)(uintptr_t)x, NULL) < 0)
        return NULL;
    return x;
}

static int add_anchor(golden_schema *S, const sres *r, json_t *node, const char *name,
                      int dynamic)
{
    anchor *a = calloc(1, sizeof *a);
    if (!a)
        return -1;
    *a = (anchor){r, name, node, dynamic, S->anchors};
    S->anchors = a;
    return 0;
}

static int index_node(golden_schema *S, resource *d, const sres *base, json_t *node, int depth,
                      golden_error *err);

/* Keywords whose value is a schema, an array of schemas, or an object of schemas: only
 * these hold subschemas, so an "$id" inside enum, const or an unknown keyword is data. */
static const char *const kw_one[] = {"additionalProperties", "unevaluatedProperties", "items",
                                     "contains", "propertyNames", "not", "if", "then", "else",
                                     "unevaluatedItems", "additionalItems", NULL};
static const char *const kw_list[] = {"allOf", "anyOf", "oneOf", "prefixItems", NULL};
static const char *const kw_map[] = {"$defs", "definitions", "properties", "patternProperties",
                                     "dependentSchemas", NULL};

static int index_children(golden_schema *S, resource *d, const sres *base, json_t *node,
                          int depth, golden_error *err)
{
    for (size_t i = 0; kw_one[i]; i++) {
        json_t *v = json_object_get(node, kw_one[i]);
        if (v && index_node(S, d, base, v, depth + 1, err) < 0)
            return -1;
    }
    for (size_t i = 0; kw_list[i]; i++) {
        json_t *v = json_object_get(node, kw_list[i]), *x;
        size_t k;
        json_array_foreach(v, k, x) if (index_node(S, d, base, x, depth + 1, err) < 0) return -1;
    }
    for (size_t i = 0; kw_map[i]; i++) {
        json_t *v = json_object_get(node, kw_map[i]), *x;
        const char *k;
        if (json_is_object(v))
            json_object_foreach(v, k, x) if (index_node(S, d, base, x, depth + 1, err) < 0) return -1;
    }
    return 0;
}

static int index_node(golden_schema *S, resource *d, const sres *base, json_t *node, int depth,
                      golden_error *err)
{
    if (!json_is_object(node) && !json_is_boolean(node))
        return 0;
    if (depth > 1000)
        return sch_fail(S, NULL, node, err, "schema nested deeper than 1000 levels");
    json_t *id = json_object_get(node, "$id");
    if (json_is_string(id) && depth > 0) {
        const char *s = json_string_value(id);
        char *u = sch_uri_resolve(base->uri, s, strlen(s));
        const sres *nb = u ? add_sres(S, u, node, d) : NULL;
        free(u);
        if (!nb)
            return sch_nomem(S, NULL, node, err);
        base = nb;
    }
    if (sch_ptrmap_get(&S->bases, node))
        return 0;
    if (sch_ptrmap_put(&S->bases, node, (void *)base) < 0)
        return sch_nomem(S, NULL, node, err);
    if (!json_is_object(node))
        return 0;
    json_t *a = json_object_get(node, "$anchor");
    if (json_is_string(a) && add_anchor(S, base, node, json_string_value(a), 0) < 0)
        return sch_nomem(S, NULL, node, err);
    a = json_object_get(node, "$dynamicAnchor");
    if (json_is_string(a) && add_anchor(S, base, node, json_string_value(a), 1) < 0)
        return sch_nomem(S, NULL, node, err);
    return index_children(S, d, base, node, depth, err);
}

/* Take a loaded document in: named by its retrieval URI and by its root $id. */
static resource *resource_add(golden_schema *S, golden_doc *doc, const char *uri,
                              const char *path, const char *name, golden_error *err)
{
    resource *r = calloc(1, sizeof *r);
    if (!r) {
        golden_doc_free(doc);
        golden_fail_what(err, GOLDEN_ENOMEM, path ? path : name, "out of memory");
        return NULL;
    }
    r->doc = doc;
    r->uri = sch_uri_resolve(uri, "", 0);
    r->path = path ? strdup(path) : NULL;
    r->name = name ? strdup(name) : NULL;
    r->next = S->resources;
    S->resources = r;
    if (!r->uri || (path && !r->path) || (name && !r->name)) {
        golden_fail_what(err, GOLDEN_ENOMEM, path ? path : name, "out of memory");
        return NULL;
    }
    json_t *root = golden_doc_root(doc);
    json_t *id = json_object_get(root, "$id");
    const sres *base = add_sres(S, r->uri, root, r);
    if (base && json_is_string(id)) {
        char *u = sch_uri_resolve(r->uri, json_string_value(id), json_string_length(id));
        const sres *b2 = u ? add_sres(S, u, root, r) : NULL;
        free(u);
        base = b2;
    }
    if (!base) {
        golden_fail_what(err, GOLDEN_ENOMEM, path ? path : name, "out of memory");
        return NULL;
    }
    if (index_node(S, r, base, root, 0, err) < 0)
        return NULL;
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
    char uri[600];
    snprintf(uri, sizeof uri, "%s%s", ID_PREFIX, f->name);
    return resource_add(S, d, uri, NULL, f->name, err);
}

static resource *load_file_as(golden_schema *S, const char *path, const char *uri,
                              golden_error *err)
{
    for (resource *r = S->resources; r; r = r->next)
        if (r->path && !strcmp(r->path, path))
            return r;
    golden_doc *d;
    if (golden_doc_load_file(path, &d, err) < 0)
        return NULL;
    char buf[PATH_MAX + 16];
    if (!uri) {
        char real[PATH_MAX];
        if (!realpath(path, real))
            snprintf(real, sizeof real, "%s", path);
        snprintf(buf, sizeof buf, "file://%s", real);
        uri = buf;
    }
    return resource_add(S, d, uri, path, NULL, err);
}

resource *sch_load_path(golden_schema *S, const char *path, golden_error *err)
{
    return load_file_as(S, path, NULL, err);
}

static int is_schema_file(const char *n)
{
    size_t l = strlen(n);
    return n[0] != '.' && ((l > 5 && !strcmp(n + l - 5, ".json")) ||
                           (l > 5 && !strcmp(n + l - 5, ".yaml")) ||
                           (l > 4 && !strcmp(n + l - 4, ".yml")));
}

/* Every schema file of dir (recursive) under base. `beside`: the referring schema's own folder
 * searched for an $id, best effort: that folder only, files up to 4 MiB (a big document may
 * sit beside its schema), and what does not load is skipped. */
#define BESIDE_MAX_BYTES (4L << 20)
static int load_dir_rec(golden_schema *S, const char *dir, const char *base, int depth,
                        int beside, golden_error *err)
{
    if (depth > 32)
        return 0;
    DIR *dd = opendir(dir);
    if (!dd)
        return golden_fail_what(err, golden_code_from_errno(errno), dir,
                                "cannot read the schema folder");
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(dd))) {
        if (e->d_name[0] == '.')
            continue;
        char p[PATH_MAX], u[PATH_MAX + 600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (base)
            snprintf(u, sizeof u, "%s%s", base, e->d_name);
        struct stat st;
        if (stat(p, &st) != 0)
            continue;
        if (beside && (S_ISDIR(st.st_mode) || st.st_size > BESIDE_MAX_BYTES))
            continue;
        if (S_ISDIR(st.st_mode)) {
            char nb[PATH_MAX + 608];
            if (base)
                snprintf(nb, sizeof nb, "%s/", u);
            rc = load_dir_rec(S, p, base ? nb : NULL, depth + 1, 0, err);
        } else if (S_ISREG(st.st_mode) && is_schema_file(e->d_name)) {
            rc = load_file_as(S, p, base ? u : NULL, err) || beside ? 0 : -1;
        }
    }
    closedir(dd);
    return rc;
}

/* The base URI a plain folder is served at, read from its own files: a file whose root $id
 * ends in "/" + its path inside the folder (remotes/draft2020-12/tree.json with $id
 * http://localhost:1234/draft2020-12/tree.json) says the folder is http://localhost:1234/.
 * Files whose $id says something else are not evidence. Returns 1 with *base set when at least
 * one file says so and none disagrees, 0 when no base is inferred, -1 out of memory. */
static int infer_dir_base(golden_schema *S, const char *prefix, size_t plen, char **base)
{
    *base = NULL;
    for (resource *r = S->resources; r; r = r->next) {
        if (!r->path || strncmp(r->path, prefix, plen))
            continue;
        json_t *id = json_object_get(golden_doc_root(r->doc), "$id");
        if (!json_is_string(id))
            continue;
        char *u = sch_uri_resolve(r->uri, json_string_value(id), json_string_length(id));
        if (!u) {
            free(*base);
            *base = NULL;
            return -1;
        }
        const char *rel = r->path + plen;
        size_t ul = strlen(u), rl = strlen(rel);
        if (strncmp(u, "file:", 5) && strstr(u, "://") && ul > rl && u[ul - rl - 1] == '/' &&
            !strcmp(u + ul - rl, rel)) {
            u[ul - rl] = '\0';
            if (*base && strcmp(*base, u)) {
                free(u);
                free(*base);
                *base = NULL;
                return 0; /* two files disagree: no guess */
            }
            if (!*base) {
                *base = u;
                continue;
            }
        }
        free(u);
    }
    return *base != NULL;
}

/* A plain folder (no BASEURI=): every schema by its $id, and when its files tell the base URI
 * it is served at (infer_dir_base), every file is also named by that base + its path, as if
 * given as BASEURI=DIR: a remote reference such as http://localhost:1234/x/y.json then finds
 * DIR/x/y.json whether or not that file has an $id. */
static int load_plain_dir(golden_schema *S, const char *dir, golden_error *err)
{
    if (load_dir_rec(S, dir, NULL, 0, 0, err) < 0)
        return -1;
    char prefix[PATH_MAX];
    int plen = snprintf(prefix, sizeof prefix, "%s/", dir);
    if (plen < 0 || (size_t)plen >= sizeof prefix)
        return 0;
    char *base = NULL;
    int rc = infer_dir_base(S, prefix, (size_t)plen, &base);
    if (rc < 0)
        return golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
    for (resource *r = S->resources; rc > 0 && r; r = r->next) {
        if (!r->path || strncmp(r->path, prefix, (size_t)plen))
            continue;
        size_t n = strlen(base) + strlen(r->path + plen) + 1;
        char *u = malloc(n);
        if (u)
            snprintf(u, n, "%s%s", base, r->path + plen);
        if (!u || !add_sres(S, u, golden_doc_root(r->doc), r)) {
            free(u);
            free(base);
            return golden_fail_what(err, GOLDEN_ENOMEM, dir, "out of memory");
        }
        free(u);
    }
    free(base);
    return 0;
}

int sch_load_dir(golden_schema *S, const char *spec, golden_error *err)
{
    const char *eq = strstr(spec, "=");
    const char *colon = strstr(spec, "://");
    if (eq && colon && colon < eq) {
        char base[PATH_MAX];
        snprintf(base, sizeof base, "%.*s", (int)(eq - spec), spec);
        return load_dir_rec(S, eq + 1, base, 0, 0, err);
    }
    return load_plain_dir(S, spec, err);
}

int sch_file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int has_dotdot(const char *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (p[i] == '.' && p[i + 1] == '.' && (i == 0 || p[i - 1] == '/') &&
            (i + 2 == n || p[i + 2] == '/'))
            return 1;
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

const sres *sch_base_of(const golden_schema *S, const json_t *node)
{
    return sch_ptrmap_get(&S->bases, node);
}

json_t *sch_dynamic_anchor(const golden_schema *S, const sres *r, const char *name)
{
    for (const anchor *a = S->anchors; a; a = a->next)
        if (a->dynamic && a->res == r && !strcmp(a->name, name))
            return a->node;
    return NULL;
}

static json_t *find_anchor(const golden_schema *S, const sres *r, const char *name)
{
    for (const anchor *a = S->anchors; a; a = a->next)
        if ((a->res == r || a->res->node == r->node) && !strcmp(a->name, name))
            return a->node;
    return NULL;
}

static json_t *follow_pointer(json_t *node, char *f)
{
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
            node = *seg && !*e && (seg[0] != '0' || !seg[1]) ? json_array_get(node, idx) : NULL;
        } else {
            node = NULL;
        }
        if (!node || !end)
            return node;
        seg = end + 1;
    }
}

/* Where else a URI not yet known may be: beside the referring file (by file name, then by
 * $id among the folder's schemas), the --schema-dir folders, the embedded schemas. */
static const sres *find_elsewhere(golden_schema *S, const sres *base, const char *uri,
                                  size_t ulen, const char *abs, golden_error *err)
{
    int absolute = strstr(abs, "://") && strncmp(abs, "file://", 7) && (memchr(uri, ':', ulen) != NULL);
    const char *path = base->doc ? base->doc->path : NULL;
    if (path && !memchr(uri, ':', ulen)) {
        if (uri[0] == '/' || has_dotdot(uri, ulen))
            return golden_fail_what(err, GOLDEN_EINVAL, NULL,
                                    "leaves the schema's folder (no \"..\" or absolute paths)"),
                   NULL;
        const char *slash = strrchr(path, '/');
        size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%.*s%.*s", (int)dl, path, (int)ulen, uri);
        if (sch_file_exists(p)) {
            resource *r = sch_load_path(S, p, err);
            if (!r)
                return NULL;
            /* named by where it was found too, so the referring URI resolves */
            const sres *x = find_sres(S, abs);
            if (!x)
                x = add_sres(S, abs, golden_doc_root(r->doc), r);
            return x;
        }
    }
    if (path) {
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
        golden_error e2 = {0};
        if (load_dir_rec(S, dir, NULL, 0, 1, &e2) == 0) {
            const sres *x = find_sres(S, abs);
            if (x)
                return x;
        }
    }
    const golden_embedded_file *f = NULL;
    char name[600];
    if (!strncmp(abs, META_PREFIX, strlen(META_PREFIX))) {
        snprintf(name, sizeof name, "draft2020-12-%s.json", abs + strlen(META_PREFIX));
        for (char *q = name; *q; q++)
            if (*q == '/')
                *q = '-';
        f = lg_embedded_schema(name);
    } else if (!strncmp(abs, ID_PREFIX, strlen(ID_PREFIX)) || !absolute) {
        const char *bn = memrchr(uri, '/', ulen);
        bn = bn ? bn + 1 : uri;
        snprintf(name, sizeof name, "%.*s", (int)(uri + ulen - bn), bn);
        f = lg_embedded_schema(name);
    }
    if (f) {
        resource *r = sch_load_embedded(S, f, err);
        if (!r)
            return NULL;
        const sres *x = find_sres(S, abs);
        return x ? x : add_sres(S, abs, golden_doc_root(r->doc), r);
    }
    golden_fail_what(err, GOLDEN_ENOTFOUND, NULL,
                     "no schema \"%.*s\" (not embedded, not beside the referring schema, not "
                     "in a --schema-dir; nothing is fetched from a network)",
                     (int)ulen, uri);
    return NULL;
}

int sch_resolve_ref(golden_schema *S, const sres *base, const json_t *at, const char *ref,
                    resource **rout, json_t **nout, golden_error *err)
{
    const char *hash = strchr(ref, '#');
    size_t ulen = hash ? (size_t)(hash - ref) : strlen(ref);
    const char *frag = hash ? hash + 1 : "";
    const sres *target = base;
    resource *rdoc = base->doc;
    if (ulen) {
        char *abs = sch_uri_resolve(base->uri, ref, ulen);
        if (!abs)
            return sch_nomem(S, rdoc, at, err);
        target = find_sres(S, abs);
        if (!target) {
            golden_error e2 = {0};
            target = find_elsewhere(S, base, ref, ulen, abs, &e2);
            if (!target) {
                free(abs);
                if (e2.code == GOLDEN_ENOMEM)
                    return sch_nomem(S, rdoc, at, err);
                return sch_fail(S, rdoc, at, err, "$ref \"%s\": %s", ref, e2.what);
            }
        }
        free(abs);
    }
    json_t *node = target->node;
    char *f = pct_decode(frag, strlen(frag));
    if (!f)
        return sch_nomem(S, rdoc, at, err);
    if (f[0] == '/')
        node = follow_pointer(node, f);
    else if (f[0])
        node = find_anchor(S, target, f);
    free(f);
    if (!node)
        return sch_fail(S, rdoc, at, err, "$ref \"%s\" points at nothing", ref);
    *rout = target->doc;
    *nout = node;
    return GOLDEN_OK;
}
