/* The YAML reader: libyaml events into a jansson tree with positions, YAML 1.2 core scalars,
 * anchors and merges, and limits against alias bombs. */
#include "doc/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "util/strmap.h"
#include "util/vec.h"

typedef struct {
    char *name;
    json_t *node;
    size_t count; /* nodes it expands to */
} anchor;

typedef struct {
    json_t *node;
    int is_map;
    char *anchor;      /* to register when the node ends */
    size_t expanded0;  /* expansion counter when it began */
    char *key;         /* pending mapping key (NULL: a key comes next) */
    size_t key_len;
    size_t key_line, key_col;
    int key_is_merge;
    json_t *merges;    /* values of "<<" keys, merged at the end */
    size_t index;
    yaml_mark_t start; /* where the node begins */
} yframe;

typedef struct {
    golden_doc *doc;
    golden_error *err;
    const unsigned char *buf;
    size_t len;
    yframe *frames;
    size_t nframes, capframes;
    anchor *anchors;       /* in order of first definition */
    size_t capanchors, nanchors;
    golden_strmap anchor_index; /* name -> index into anchors (keys: the anchors' names) */
    size_t real;     /* nodes written in the text */
    size_t expanded; /* nodes after alias expansion */
    json_t *root;
} yloader;

static int yfail(yloader *y, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int yfail(yloader *y, const yaml_mark_t *m, const char *fmt, ...)
{
    if (y->err) {
        va_list ap;
        va_start(ap, fmt);
        doc_failv(y->err, GOLDEN_EINVAL, y->doc->name, m->line + 1, m->column + 1, fmt, ap);
        va_end(ap);
    }
    return GOLDEN_ERR;
}

/* An allocation failed: GOLDEN_ENOMEM, with the place the reader had reached. */
static int ynomem(yloader *y, const yaml_mark_t *m)
{
    if (y->err)
        golden_fail_where(y->err, GOLDEN_ENOMEM, "out of memory", "%s:%zu:%zu", y->doc->name,
                          m->line + 1, m->column + 1);
    return GOLDEN_ERR;
}

static anchor *anchor_find(yloader *y, const char *name)
{
    uint64_t i;
    return lg_strmap_get(&y->anchor_index, name, strlen(name), &i) ? &y->anchors[i] : NULL;
}

static int anchor_set(yloader *y, const char *name, json_t *node, size_t count)
{
    anchor *a = anchor_find(y, name);
    if (a) {
        /* YAML lets a later anchor of the same name replace an earlier one. */
        json_decref(a->node);
    } else {
        if (VEC_GROW(y->anchors, y->nanchors, y->capanchors, 16) != 0)
            return -1;
        char *copy = strdup(name);
        if (!copy)
            return -1;
        if (lg_strmap_put(&y->anchor_index, copy, strlen(copy), y->nanchors, NULL) != 0) {
            free(copy);
            return -1;
        }
        a = &y->anchors[y->nanchors++];
        a->name = copy;
    }
    a->node = json_incref(node);
    a->count = count;
    return 0;
}

static const char *tag_name(const yaml_char_t *tag)
{
    return tag ? (const char *)tag : NULL;
}

static int is_yaml_null(const char *s, size_t n)
{
    return n == 0 || (n == 1 && s[0] == '~') ||
           (n == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4)));
}

static int yaml_bool(const char *s, size_t n)
{
    if (n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "True", 4) || !memcmp(s, "TRUE", 4)))
        return 1;
    if (n == 5 && (!memcmp(s, "false", 5) || !memcmp(s, "False", 5) || !memcmp(s, "FALSE", 5)))
        return 0;
    return -1;
}

static int all_in(const char *s, size_t n, const char *set)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return 0;
    return 1;
}

/* YAML 1.2 core-schema float syntax: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int is_yaml_float(const char *s, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits)
        return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t e = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++, e++;
        if (!e)
            return 0;
    }
    return i == n;
}

static int is_yaml_special_float(const char *s, size_t n)
{
    if (n && (s[0] == '-' || s[0] == '+'))
        s++, n--;
    return n == 4 && (!memcmp(s, ".inf", 4) || !memcmp(s, ".Inf", 4) || !memcmp(s, ".INF", 4) ||
                      !memcmp(s, ".nan", 4) || !memcmp(s, ".NaN", 4) || !memcmp(s, ".NAN", 4));
}

/* Integers: decimal, 0x hex, 0o octal. 1 = parsed into *v, 2 = decimal too big (real). */
static int yaml_int(const char *s, size_t n, json_int_t *v)
{
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
        int base = s[1] == 'x' ? 16 : 8;
        if (!all_in(s + 2, n - 2, base == 16 ? "0123456789abcdefABCDEF" : "01234567"))
            return 0;
        uint64_t acc = 0;
        for (size_t i = 2; i < n; i++) {
            unsigned c = (unsigned char)s[i];
            unsigned d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
            if (acc > (uint64_t)INT64_MAX / (unsigned)base)
                return 3;
            acc = acc * (unsigned)base + d;
            if (acc > (uint64_t)INT64_MAX)
                return 3;
        }
        *v = (json_int_t)acc;
        return 1;
    }
    size_t i = (n && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (!all_in(s + i, n - i, "0123456789"))
        return 0;
    return doc_parse_int64(s, n, v) ? 1 : 2;
}

#define YTAG "tag:yaml.org,2002:"

/* Resolve a scalar the way YAML 1.2's core schema does; quoted scalars stay strings. */
static json_t *yscalar(yloader *y, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = tag_name(ev->data.scalar.tag);
    const char *want = NULL; /* "str", "int", "float", "bool", "null" or NULL (resolve) */
    if (tag) {
        if (!strcmp(tag, "!"))
            want = "str";
        else if (!strncmp(tag, YTAG, strlen(YTAG)))
            want = tag + strlen(YTAG);
    }
    if (!want && ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        want = "str";
    if (want && !strcmp(want, "str")) {
        json_t *v = json_stringn_nocheck(s, n);
        if (!v)
            ynomem(y, &ev->start_mark);
        return v;
    }
    if ((!want || !strcmp(want, "null")) && is_yaml_null(s, n))
        return json_null();
    if (!want || !strcmp(want, "bool")) {
        int b = yaml_bool(s, n);
        if (b >= 0)
            return json_boolean(b);
    }
    if (!want || !strcmp(want, "int") || !strcmp(want, "float")) {
        json_int_t iv;
        int r = yaml_int(s, n, &iv);
        json_t *v = NULL;
        if (r == 1) {
            v = want && !strcmp(want, "float") ? json_real((double)iv) : json_integer(iv);
        } else if (r == 3) {
            yfail(y, &ev->start_mark, "integer %.*s does not fit 64 bits", (int)(n > 60 ? 60 : n),
                  s);
            return NULL;
        } else if (r == 2 || is_yaml_float(s, n)) {
            double dv;
            int pr = doc_parse_real(s, n, &dv);
            if (pr == 0) {
                yfail(y, &ev->start_mark, "number out of range (beyond a double)");
                return NULL;
            }
            if (pr > 0)
                v = json_real(dv);
        } else if (is_yaml_special_float(s, n)) {
            yfail(y, &ev->start_mark, "%.*s (infinity or NaN) cannot be represented in JSON",
                  (int)n, s);
            return NULL;
        } else if (want) {
            yfail(y, &ev->start_mark, "\"%.*s\" is not a valid !!%s", (int)(n > 60 ? 60 : n), s,
                  want);
            return NULL;
        } else {
            v = json_stringn_nocheck(s, n);
        }
        if (!v)
            ynomem(y, &ev->start_mark);
        return v;
    }
    if (want && (!strcmp(want, "null") || !strcmp(want, "bool"))) {
        yfail(y, &ev->start_mark, "\"%.*s\" is not a valid !!%s", (int)(n > 60 ? 60 : n), s, want);
        return NULL;
    }
    /* Other tags (!!binary, !!timestamp, local tags): keep the text. */
    json_t *v = json_stringn_nocheck(s, n);
    if (!v)
        ynomem(y, &ev->start_mark);
    return v;
}

static int bomb_check(yloader *y, const yaml_mark_t *m)
{
    if (y->expanded > (size_t)GOLDEN_YAML_MAX_EXPANSION + 10 * y->real)
        return yfail(y, m,
                     "aliases expand to more than %zu nodes from %zu written (a YAML bomb?)",
                     y->expanded, y->real);
    return GOLDEN_OK;
}

/* Attach a finished node (a new reference, stolen) to the open container or make it root. */
static int yattach(yloader *y, json_t *v, const yaml_mark_t *m, int is_alias)
{
    size_t line = m->line + 1, col = m->column + 1;
    if (!y->nframes) {
        if (!is_alias && doc_record(y->doc, NULL, 0, v, line, col) < 0) {
            json_decref(v);
            return ynomem(y, m);
        }
        y->root = v;
        return GOLDEN_OK;
    }
    yframe *f = &y->frames[y->nframes - 1];
    if (!f->is_map) {
        if (json_array_append_new(f->node, v) != 0)
            return ynomem(y, m);
        if ((!is_alias || doc_is_singleton(v)) &&
            doc_record(y->doc, f->node, doc_index_sub(f->index), v, line, col) < 0)
            return ynomem(y, m);
        f->index++;
        return GOLDEN_OK;
    }
    if (f->key_is_merge) {
        free(f->key);
        f->key = NULL;
        f->key_is_merge = 0;
        int ok = json_is_object(v);
        if (json_is_array(v)) {
            ok = 1;
            size_t i;
            json_t *it;
            json_array_foreach(v, i, it) ok = ok && json_is_object(it);
        }
        if (!ok) {
            json_decref(v);
            return yfail(y, m, "a merge key \"<<\" needs a mapping or a list of mappings");
        }
        /* kept with where the merge was written: merged true/false/null get that place */
        json_t *entry = json_array();
        if (!entry) {
            json_decref(v);
            return ynomem(y, m);
        }
        /* the _new calls take their value even when they fail */
        if (json_array_append_new(entry, v) != 0 ||
            json_array_append_new(entry, json_integer((json_int_t)line)) != 0 ||
            json_array_append_new(entry, json_integer((json_int_t)col)) != 0) {
            json_decref(entry);
            return ynomem(y, m);
        }
        if (json_array_append_new(f->merges, entry) != 0)
            return ynomem(y, m);
        return GOLDEN_OK;
    }
    size_t before = json_object_size(f->node);
    if (json_object_setn_new_nocheck(f->node, f->key, f->key_len, v) != 0)
        return ynomem(y, m);
    if (json_object_size(f->node) == before) {
        yaml_mark_t km = {0, f->key_line - 1, f->key_col - 1};
        return yfail(y, &km, "duplicate key \"%.*s\"", (int)(f->key_len > 200 ? 200 : f->key_len),
                     f->key);
    }
    if ((!is_alias || doc_is_singleton(v)) &&
        doc_record(y->doc, f->node, doc_key_sub(f->key, f->key_len), v, line, col) < 0)
        return ynomem(y, m);
    free(f->key);
    f->key = NULL;
    return GOLDEN_OK;
}

static int awaiting_key(const yloader *y)
{
    if (!y->nframes)
        return 0;
    const yframe *f = &y->frames[y->nframes - 1];
    return f->is_map && !f->key && !f->key_is_merge;
}

static int set_key(yloader *y, const char *s, size_t n, const yaml_mark_t *m, int merge)
{
    yframe *f = &y->frames[y->nframes - 1];
    f->key = malloc(n + 1);
    if (!f->key)
        return ynomem(y, m);
    memcpy(f->key, s, n);
    f->key[n] = '\0';
    f->key_len = n;
    f->key_line = m->line + 1;
    f->key_col = m->column + 1;
    f->key_is_merge = merge;
    return GOLDEN_OK;
}

static int ypush(yloader *y, const yaml_event_t *ev, int is_map)
{
    const yaml_mark_t *m = &ev->start_mark;
    if (y->nframes >= GOLDEN_DOC_MAX_DEPTH)
        return yfail(y, m, "nesting deeper than %d levels", GOLDEN_DOC_MAX_DEPTH);
    if (VEC_GROW(y->frames, y->nframes, y->capframes, 32) != 0)
        return ynomem(y, m);
    yframe *f = &y->frames[y->nframes];
    memset(f, 0, sizeof *f);
    f->is_map = is_map;
    f->start = *m;
    f->node = is_map ? json_object() : json_array();
    if (!f->node)
        return ynomem(y, m);
    const yaml_char_t *a = is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (a && !(f->anchor = strdup((const char *)a))) {
        json_decref(f->node);
        return ynomem(y, m);
    }
    if (is_map && !(f->merges = json_array())) {
        json_decref(f->node);
        free(f->anchor);
        return ynomem(y, m);
    }
    y->real++;
    y->expanded++;
    f->expanded0 = y->expanded - 1;
    if (doc_record(y->doc, NULL, 0, f->node, m->line + 1, m->column + 1) < 0) {
        json_decref(f->node);
        free(f->anchor);
        json_decref(f->merges);
        return ynomem(y, m);
    }
    y->nframes++;
    return GOLDEN_OK;
}

static void frame_release(yframe *f)
{
    json_decref(f->node);
    json_decref(f->merges);
    free(f->anchor);
    free(f->key);
}

static int ypop(yloader *y, const yaml_event_t *ev)
{
    yframe f = y->frames[--y->nframes];
    if (f.merges) {
        /* Explicit keys win over merged ones; earlier merge sources win over later ones. */
        size_t i;
        json_t *entry;
        json_array_foreach(f.merges, i, entry)
        {
            json_t *src = json_array_get(entry, 0);
            size_t mline = (size_t)json_integer_value(json_array_get(entry, 1));
            size_t mcol = (size_t)json_integer_value(json_array_get(entry, 2));
            json_t *list = json_is_array(src) ? src : NULL;
            size_t nsrc = list ? json_array_size(list) : 1;
            for (size_t j = 0; j < nsrc; j++) {
                json_t *m = list ? json_array_get(list, j) : src;
                const char *k;
                size_t kl;
                json_t *v;
                json_object_keylen_foreach(m, k, kl, v)
                {
                    if (json_object_getn(f.node, k, kl))
                        continue;
                    if (json_object_setn_nocheck(f.node, k, kl, v) != 0 ||
                        (doc_is_singleton(v) &&
                         doc_slot_add(y->doc, f.node, doc_key_sub(k, kl), mline, mcol) < 0)) {
                        frame_release(&f);
                        return ynomem(y, &ev->start_mark);
                    }
                }
            }
        }
        json_decref(f.merges);
        f.merges = NULL;
    }
    if (f.anchor) {
        int rc = anchor_set(y, f.anchor, f.node, y->expanded - f.expanded0);
        free(f.anchor);
        f.anchor = NULL;
        if (rc < 0) {
            frame_release(&f);
            return ynomem(y, &ev->start_mark);
        }
    }
    free(f.key);
    /* ypush recorded the node's own position; only its slot is left to attach. */
    return yattach(y, f.node, &f.start, 1);
}

static int yevent(yloader *y, yaml_event_t *ev, int *done, int *ndocs)
{
    const yaml_mark_t *m = &ev->start_mark;
    switch (ev->type) {
    case YAML_STREAM_START_EVENT:
    case YAML_DOCUMENT_END_EVENT:
    case YAML_NO_EVENT:
        return GOLDEN_OK;
    case YAML_STREAM_END_EVENT:
        *done = 1;
        return GOLDEN_OK;
    case YAML_DOCUMENT_START_EVENT:
        if (++*ndocs > 1)
            return yfail(y, m, "more than one YAML document in the file");
        return GOLDEN_OK;
    case YAML_SCALAR_EVENT: {
        if (awaiting_key(y)) {
            int merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                        !ev->data.scalar.tag && ev->data.scalar.length == 2 &&
                        !memcmp(ev->data.scalar.value, "<<", 2);
            if (ev->data.scalar.anchor) {
                json_t *k = json_stringn_nocheck((const char *)ev->data.scalar.value,
                                                 ev->data.scalar.length);
                if (!k || anchor_set(y, (const char *)ev->data.scalar.anchor, k, 1) < 0) {
                    json_decref(k);
                    return ynomem(y, m);
                }
                json_decref(k);
            }
            y->real++;
            y->expanded++;
            return set_key(y, (const char *)ev->data.scalar.value, ev->data.scalar.length, m,
                           merge);
        }
        json_t *v = yscalar(y, ev);
        if (!v)
            return GOLDEN_ERR;
        y->real++;
        y->expanded++;
        if (ev->data.scalar.anchor &&
            anchor_set(y, (const char *)ev->data.scalar.anchor, v, 1) < 0) {
            json_decref(v);
            return ynomem(y, m);
        }
        return yattach(y, v, m, 0);
    }
    case YAML_ALIAS_EVENT: {
        const char *name = (const char *)ev->data.alias.anchor;
        anchor *a = anchor_find(y, name);
        if (!a) {
            for (size_t i = 0; i < y->nframes; i++)
                if (y->frames[i].anchor && !strcmp(y->frames[i].anchor, name))
                    return yfail(y, m, "alias *%s refers to a node that contains it", name);
            return yfail(y, m, "unknown alias *%s", name);
        }
        if (awaiting_key(y)) {
            if (!json_is_string(a->node))
                return yfail(y, m, "alias *%s used as a key must name a string", name);
            y->expanded++;
            return set_key(y, json_string_value(a->node), json_string_length(a->node), m, 0);
        }
        y->expanded += a->count;
        if (bomb_check(y, m) < 0)
            return GOLDEN_ERR;
        return yattach(y, json_incref(a->node), m, 1);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        if (awaiting_key(y))
            return yfail(y, m, "a mapping key must be a scalar (complex keys are not supported)");
        return ypush(y, ev, ev->type == YAML_MAPPING_START_EVENT);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return ypop(y, ev);
    }
    return GOLDEN_OK;
}

/* Position of libyaml's problem as a byte pointer, to name a tab when it is the culprit. */
static int tab_at(const unsigned char *buf, size_t len, size_t line, size_t col)
{
    size_t l = 0, c = 0;
    for (size_t i = 0; i < len; i++) {
        if (l == line && c == col)
            return buf[i] == '\t';
        if (buf[i] == '\n') {
            if (l == line)
                return 0;
            l++;
            c = 0;
        } else if ((buf[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    return 0;
}

int doc_load_yaml(golden_doc *d, const unsigned char *buf, size_t len, golden_error *err)
{
    if (doc_check_text(d->name, buf, len, 1, err) < 0)
        return GOLDEN_ERR;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return golden_fail_what(err, GOLDEN_ENOMEM, d->name, "out of memory");
    yaml_parser_set_input_string(&parser, buf, len);
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    yloader y = {0};
    y.doc = d;
    y.err = err;
    y.buf = buf;
    y.len = len;
    int done = 0, ndocs = 0, rc = GOLDEN_OK;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            const yaml_mark_t *pm = &parser.problem_mark;
            const char *problem = parser.problem ? parser.problem : "YAML syntax error";
            const char *hint = tab_at(buf, len, pm->line, pm->column)
                                   ? " (tabs cannot indent YAML; use spaces)"
                                   : "";
            if (parser.context)
                yfail(&y, pm, "%s %s%s", parser.context, problem, hint);
            else
                yfail(&y, pm, "%s%s", problem, hint);
            rc = GOLDEN_ERR;
            break;
        }
        rc = yevent(&y, &ev, &done, &ndocs);
        yaml_event_delete(&ev);
        if (rc < 0)
            break;
    }
    yaml_parser_delete(&parser);
    while (y.nframes)
        frame_release(&y.frames[--y.nframes]);
    free(y.frames);
    for (size_t i = 0; i < y.nanchors; i++) {
        free(y.anchors[i].name);
        json_decref(y.anchors[i].node);
    }
    free(y.anchors);
    lg_strmap_free(&y.anchor_index);
    if (rc < 0) {
        json_decref(y.root);
        return GOLDEN_ERR;
    }
    if (!y.root) {
        /* An empty YAML stream is a null document. */
        y.root = json_null();
    }
    d->root = y.root;
    return GOLDEN_OK;
}
