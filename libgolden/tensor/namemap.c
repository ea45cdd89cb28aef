/* Tensor name mapping: globs are compiled to anchored POSIX regexes with one group per
 * wildcard, so both rule kinds share one matcher and one substitution routine. */
#include "golden/namemap.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "golden/doc.h"
#include "golden/schema.h"

typedef struct {
    regex_t re;
    char *to;
    bool glob; /* '*' in `to` takes the next group; else \N */
} map_rule;

struct golden_namemap {
    map_rule *rules;
    size_t n;
};

golden_namemap *golden_namemap_new(void)
{
    return calloc(1, sizeof(golden_namemap));
}

void golden_namemap_free(golden_namemap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        regfree(&m->rules[i].re);
        free(m->rules[i].to);
    }
    free(m->rules);
    free(m);
}

size_t golden_namemap_count(const golden_namemap *m)
{
    return m ? m->n : 0;
}

/* "^...$" with '*' -> "(.*)", '?' -> "(.)", '[...]' kept, everything else escaped. */
static char *glob_to_regex(const char *g)
{
    size_t len = strlen(g);
    char *out = malloc(len * 4 + 4);
    if (!out)
        return NULL;
    char *o = out;
    *o++ = '^';
    for (const char *p = g; *p; p++) {
        if (*p == '*') {
            memcpy(o, "(.*)", 4);
            o += 4;
        } else if (*p == '?') {
            memcpy(o, "(.)", 3);
            o += 3;
        } else if (*p == '[' && strchr(p + 1, ']')) {
            const char *end = strchr(p + 1, ']');
            *o++ = '[';
            p++;
            if (*p == '!') {
                *o++ = '^';
                p++;
            }
            while (p < end)
                *o++ = *p++;
            *o++ = ']';
        } else {
            if (strchr(".^$+(){}|\\[]", *p))
                *o++ = '\\';
            *o++ = *p;
        }
    }
    *o++ = '$';
    *o = '\0';
    return out;
}

int golden_namemap_add(golden_namemap *m, const char *from, const char *to, bool regex,
                       golden_error *err)
{
    char *pattern = NULL;
    if (regex) {
        size_t n = strlen(from);
        pattern = malloc(n + 5);
        if (pattern)
            snprintf(pattern, n + 5, "^(%s)$", from);
    } else {
        pattern = glob_to_regex(from);
    }
    if (!pattern)
        return golden_fail_what(err, GOLDEN_ENOMEM, from, "out of memory");
    map_rule *nr = realloc(m->rules, (m->n + 1) * sizeof *nr);
    if (!nr) {
        free(pattern);
        return golden_fail_what(err, GOLDEN_ENOMEM, from, "out of memory");
    }
    m->rules = nr;
    map_rule *r = &m->rules[m->n];
    int rc = regcomp(&r->re, pattern, REG_EXTENDED);
    free(pattern);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &r->re, msg, sizeof msg);
        return golden_fail_what(err, GOLDEN_EINVAL, from, "bad map pattern: %s", msg);
    }
    r->to = strdup(to);
    if (!r->to) {
        regfree(&r->re);
        return golden_fail_what(err, GOLDEN_ENOMEM, from, "out of memory");
    }
    r->glob = !regex;
    m->n++;
    return 0;
}

int golden_namemap_add_json(golden_namemap *m, const json_t *root, const char *where,
                            golden_error *err)
{
    json_t *map = json_object_get(root, "map");
    if (!map)
        return 0;
    if (!json_is_array(map))
        return golden_fail_where(err, GOLDEN_EINVAL, "expected an array", "%s#/map", where);
    size_t i;
    json_t *r;
    json_array_foreach(map, i, r) {
        json_t *from = json_object_get(r, "from"), *to = json_object_get(r, "to"),
               *re = json_object_get(r, "regex");
        if (!json_is_string(from) || !json_is_string(to) || (re && !json_is_boolean(re)))
            return golden_fail_where(err, GOLDEN_EINVAL, "a map rule needs strings \"from\" and \"to\"",
                                "%s#/map/%zu", where, i);
        golden_error e2;
        if (golden_namemap_add(m, json_string_value(from), json_string_value(to),
                               re && json_is_true(re), &e2) != 0)
            return golden_fail_where(err, GOLDEN_EINVAL, e2.what, "%s#/map/%zu/from", where, i);
    }
    return 0;
}

int golden_namemap_load(golden_namemap *m, const char *path, golden_error *err)
{
    golden_doc *doc = NULL;
    golden_schema *schema = NULL;
    int rc = -1;
    if (golden_doc_load_file(path, &doc, err) != 0)
        goto out;
    if (golden_schema_load("calculet-diff-policy/v1", &schema, err) != 0)
        goto out;
    if (golden_schema_check(schema, doc, err) != 0)
        goto out;
    rc = golden_namemap_add_json(m, golden_doc_root(doc), path, err);
out:
    golden_schema_free(schema);
    golden_doc_free(doc);
    return rc;
}

/* Growable string. */
typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_put(sbuf *b, const char *p, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

char *golden_namemap_apply(const golden_namemap *m, const char *name, golden_error *err)
{
    regmatch_t g[10];
    for (size_t i = 0; m && i < m->n; i++) {
        const map_rule *r = &m->rules[i];
        if (regexec(&r->re, name, 10, g, 0) != 0)
            continue;
        sbuf b = {NULL, 0, 0, false};
        int next = 1;
        /* regex patterns were wrapped in one outer group, so \N is group N + 1 */
        for (const char *p = r->to; *p; p++) {
            int grp = -1;
            if (r->glob && *p == '*')
                grp = next++;
            else if (!r->glob && *p == '\\' && p[1] >= '0' && p[1] <= '9')
                grp = (*++p - '0') + 1;
            else if (!r->glob && *p == '\\' && p[1] == '\\')
                p++;
            if (grp < 0) {
                sb_put(&b, p, 1);
            } else if (grp < 10 && g[grp].rm_so >= 0) {
                sb_put(&b, name + g[grp].rm_so, (size_t)(g[grp].rm_eo - g[grp].rm_so));
            }
        }
        sb_put(&b, "", 0);
        if (b.oom) {
            free(b.s);
            golden_fail_what(err, GOLDEN_ENOMEM, name, "out of memory");
            return NULL;
        }
        return b.s;
    }
    char *s = strdup(name);
    if (!s)
        golden_fail_what(err, GOLDEN_ENOMEM, name, "out of memory");
    return s;
}
