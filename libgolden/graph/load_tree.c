/* The tree loader: a calculet-graph/v1 document tree (from the document layer, schema-checked)
 * read element by element into descriptions for the rules; also the streaming loader's reader
 * for any element its fast path does not take. */
#include "graph/build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/schema.h"
#include "util/suggest.h"

/* Every key of obj is one of names (NULL-terminated), or an error at the key's value: a
 * misspelt key ("raeds", "afer") would otherwise drop an access or an edge without a word. */
static int check_keys(builder *b, const json_t *obj, const char *ptr, const char *what,
                      const char *const *names)
{
    const char *key;
    size_t klen;
    json_t *val;
    json_object_keylen_foreach((json_t *)obj, key, klen, val) {
        bool ok = false;
        for (size_t k = 0; names[k] && !ok; k++)
            ok = strlen(names[k]) == klen && memcmp(names[k], key, klen) == 0;
        if (ok)
            continue;
        char list[256] = "";
        for (size_t k = 0; names[k]; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                     names[k]);
        char p[512], hint[200];
        int n = (int)(klen < 64 ? klen : 64);
        snprintf(p, sizeof p, "%s/%.*s", ptr, n, key);
        lg_suggest sg;
        lg_suggest_init(&sg, key, klen);
        for (size_t k = 0; names[k]; k++)
            lg_suggest_offer(&sg, names[k], strlen(names[k]));
        lg_suggest_text(&sg, "", hint, sizeof hint);
        return graph_fail_at(b, val, p, "%s: unknown key \"%.*s\"%s (known: %s)", what, n, key,
                             hint, list);
    }
    return GOLDEN_OK;
}

/* A string field: absent (*has = false), a string, or a type error. */
static int str_field(builder *b, const json_t *obj, const char *key, const char *ptr, slice *out,
                     bool *has)
{
    json_t *v = json_object_get(obj, key);
    *has = v != NULL;
    if (!v)
        return GOLDEN_OK;
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > UINT32_MAX) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        return graph_fail_child(b, obj, key, 0, p, "\"%s\" must be a non-empty string", key);
    }
    *out = slice_of(json_string_value(v), json_string_length(v));
    return GOLDEN_OK;
}

/* A non-negative integer field: absent, a value, or a type error. */
static int uint_field(builder *b, const json_t *obj, const char *key, const char *ptr,
                      uint64_t *out, bool *has)
{
    json_t *v = json_object_get(obj, key);
    *has = v != NULL;
    if (!v)
        return GOLDEN_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        return graph_fail_child(b, obj, key, 0, p, "\"%s\" must be a non-negative integer", key);
    }
    *out = (uint64_t)json_integer_value(v);
    return GOLDEN_OK;
}

/* An array field: absent (NULL, no error), an array, or a type error (*bad). */
static const json_t *array_field(builder *b, const json_t *obj, const char *key, const char *ptr,
                                 int *bad)
{
    json_t *v = json_object_get(obj, key);
    if (v && !json_is_array(v)) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        graph_fail_child(b, obj, key, 0, p, "\"%s\" must be an array", key);
        *bad = 1;
        return NULL;
    }
    return v;
}

/* A list of names into *arr (grown); a non-string entry is a type error saying `what`. */
static int names_field(builder *b, const json_t *arr, const char *ptr, const char *key,
                       const char *what, slice **out, size_t *n, size_t *cap)
{
    *n = 0;
    for (size_t k = 0; k < json_array_size(arr); k++) {
        const json_t *v = json_array_get(arr, k);
        if (!json_is_string(v)) {
            char p[512];
            snprintf(p, sizeof p, "%s/%s/%zu", ptr, key, k);
            return graph_fail_child(b, arr, NULL, k, p, "%s", what);
        }
        if (graph_grow((void **)out, cap, *n, sizeof **out) != 0)
            return graph_nomem(b);
        (*out)[(*n)++] = slice_of(json_string_value(v), json_string_length(v));
    }
    return GOLDEN_OK;
}

int graph_queue_from_json(builder *b, const json_t *q, size_t i)
{
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/queues/%zu", i);
    if (!json_is_object(q))
        return graph_fail_at(b, q, ptr, "a queue must be an object");
    static const char *const known[] = {"id", "chip", NULL};
    slice id = {0};
    uint64_t chip = 0;
    bool has_id, has_chip;
    if (check_keys(b, q, ptr, "a queue", known) != 0 ||
        str_field(b, q, "id", ptr, &id, &has_id) != 0 ||
        uint_field(b, q, "chip", ptr, &chip, &has_chip) != 0)
        return GOLDEN_ERR;
    if (!has_id || !has_chip)
        return graph_fail_at(b, q, ptr, "missing required \"%s\"", has_id ? "chip" : "id");
    return graph_add_queue(b, id, chip, q, i);
}

int graph_buffer_from_json(builder *b, const json_t *o, size_t i)
{
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/buffers/%zu", i);
    if (!json_is_object(o))
        return graph_fail_at(b, o, ptr, "a buffer must be an object");
    static const char *const known[] = {"id", "chip", "space", "address", "size", "live",
                                        "inplace_of", NULL};
    buffer_desc d;
    memset(&d, 0, sizeof d);
    d.node = o;
    if (check_keys(b, o, ptr, "a buffer", known) != 0 ||
        str_field(b, o, "id", ptr, &d.id, &d.has_id) != 0 ||
        str_field(b, o, "space", ptr, &d.space, &d.has_space) != 0 ||
        uint_field(b, o, "chip", ptr, &d.chip, &d.has_chip) != 0 ||
        uint_field(b, o, "address", ptr, &d.address, &d.has_address) != 0 ||
        uint_field(b, o, "size", ptr, &d.size, &d.has_size) != 0 ||
        str_field(b, o, "inplace_of", ptr, &d.inplace_of, &d.has_inplace) != 0)
        return GOLDEN_ERR;
    const json_t *live = json_object_get(o, "live");
    int rc = GOLDEN_OK;
    if ((d.has_live = live != NULL)) {
        char p[96];
        snprintf(p, sizeof p, "%s/live", ptr);
        if (!json_is_array(live) || json_array_size(live) != 2)
            return graph_fail_at(b, live, p, "\"live\" must be [first_op, last_op] (op ids)");
        rc = names_field(b, live, ptr, "live", "\"live\" must be [first_op, last_op] (op ids)",
                         &d.live, &d.nlive, &d.cap_live);
    }
    if (rc == GOLDEN_OK)
        rc = graph_check_buffer(b, &d, i, true);
    if (rc == GOLDEN_OK)
        rc = graph_build_buffer(b, &d);
    free(d.live);
    return rc;
}

/* One reads or writes list into d->acc. */
static int accesses_field(builder *b, const json_t *arr, const char *ptr, op_desc *d, bool write)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *a = json_array_get(arr, i);
        char p[256], what[160];
        snprintf(p, sizeof p, "%s/%s/%zu", ptr, write ? "writes" : "reads", i);
        if (!json_is_object(a))
            return graph_fail_at(b, a, p, "an access must be an object");
        static const char *const known[] = {"buffer", "offset", "size", NULL};
        snprintf(what, sizeof what, "op \"%.*s\": an access", (int)(d->id.n < 100 ? d->id.n : 100),
                 d->id.s);
        if (graph_grow((void **)&d->acc, &d->cap_acc, d->nacc, sizeof *d->acc) != 0)
            return graph_nomem(b);
        op_access *x = &d->acc[d->nacc++];
        memset(x, 0, sizeof *x);
        x->node = a;
        x->write = write;
        x->index = (uint32_t)i;
        bool has_buffer;
        if (check_keys(b, a, p, what, known) != 0 ||
            str_field(b, a, "buffer", p, &x->buffer, &has_buffer) != 0 ||
            uint_field(b, a, "offset", p, &x->offset, &x->has_offset) != 0 ||
            uint_field(b, a, "size", p, &x->size, &x->has_size) != 0)
            return GOLDEN_ERR;
        if (!has_buffer)
            return graph_fail_at(b, a, p, "missing required \"buffer\"");
    }
    return GOLDEN_OK;
}

static int op_desc_from_json(builder *b, const json_t *o, const char *ptr, op_desc *d)
{
    static const char *const known[] = {"id", "kind", "queue", "queues", "family", "event",
                                        "after", "reads", "writes", "data_size", NULL};
    if (check_keys(b, o, ptr, "an op", known) != 0 ||
        str_field(b, o, "id", ptr, &d->id, &d->has_id) != 0 ||
        str_field(b, o, "kind", ptr, &d->kind, &d->has_kind) != 0 ||
        str_field(b, o, "queue", ptr, &d->queue, &d->has_queue) != 0 ||
        str_field(b, o, "family", ptr, &d->family, &d->has_family) != 0 ||
        str_field(b, o, "event", ptr, &d->event, &d->has_event) != 0 ||
        uint_field(b, o, "data_size", ptr, &d->data_size, &d->has_data_size) != 0)
        return GOLDEN_ERR;
    int bad = 0;
    const json_t *rd = array_field(b, o, "reads", ptr, &bad);
    const json_t *wr = bad ? NULL : array_field(b, o, "writes", ptr, &bad);
    const json_t *af = bad ? NULL : array_field(b, o, "after", ptr, &bad);
    const json_t *qs = bad ? NULL : array_field(b, o, "queues", ptr, &bad);
    if (bad)
        return GOLDEN_ERR;
    d->has_reads = rd != NULL;
    d->has_writes = wr != NULL;
    d->has_after = af != NULL;
    d->has_queues = qs != NULL;
    char what[160];
    snprintf(what, sizeof what, "op \"%.*s\": \"after\" lists op ids",
             (int)(d->id.n < 100 ? d->id.n : 100), d->id.s);
    if (accesses_field(b, rd, ptr, d, false) != 0 || accesses_field(b, wr, ptr, d, true) != 0 ||
        names_field(b, af, ptr, "after", what, &d->after, &d->nafter, &d->cap_after) != 0)
        return GOLDEN_ERR;
    snprintf(what, sizeof what, "barrier \"%.*s\": \"queues\" lists queue ids",
             (int)(d->id.n < 100 ? d->id.n : 100), d->id.s);
    return names_field(b, qs, ptr, "queues", what, &d->queues, &d->nqueues, &d->cap_queues);
}

int graph_op_from_json(builder *b, const json_t *o, size_t i)
{
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/ops/%zu", i);
    if (!json_is_object(o))
        return graph_fail_at(b, o, ptr, "an op must be an object");
    op_desc d;
    memset(&d, 0, sizeof d);
    d.node = o;
    d.last_buf = GOLDEN_NONE;
    int rc = op_desc_from_json(b, o, ptr, &d);
    if (rc == GOLDEN_OK)
        rc = graph_check_op(b, &d, i, true);
    if (rc == GOLDEN_OK)
        rc = graph_build_op(b, &d);
    graph_op_desc_free(&d);
    return rc;
}

static const json_t *top_array(builder *b, const json_t *root, const char *key, bool required,
                               int *bad)
{
    const json_t *v = array_field(b, root, key, "", bad);
    if (!v && !*bad && required) {
        graph_fail_at(b, root, "", "missing required \"%s\"", key);
        *bad = 1;
    }
    return v;
}

int golden_graph_from_json(const json_t *root, const char *name, const golden_doc *doc,
                           golden_graph **out, golden_error *err)
{
    *out = NULL;
    builder b;
    if (graph_builder_init(&b, name, doc, err) != 0)
        return GOLDEN_ERR;
    b.keep_nodes = true;
    int rc = GOLDEN_ERR, bad = 0;
    if (!json_is_object(root)) {
        graph_fail_at(&b, root, "", "a graph must be a JSON object");
        goto done;
    }
    if (graph_check_schema_name(&b, json_object_get(root, "schema"), root) != 0)
        goto done;
    /* a misspelt top-level key ("opps") would drop a whole array without a word */
    static const char *const known[] = {"schema", "queues", "buffers", "ops", NULL};
    if (check_keys(&b, root, "", "the graph", known) != 0)
        goto done;
    const json_t *qs = top_array(&b, root, "queues", true, &bad);
    const json_t *bs = bad ? NULL : top_array(&b, root, "buffers", false, &bad);
    const json_t *os = bad ? NULL : top_array(&b, root, "ops", true, &bad);
    if (bad)
        goto done;
    b.ops_arr = os;
    for (size_t i = 0; i < json_array_size(qs); i++)
        if (graph_queue_from_json(&b, json_array_get(qs, i), i) != 0)
            goto done;
    for (size_t i = 0; i < json_array_size(bs); i++)
        if (graph_buffer_from_json(&b, json_array_get(bs, i), i) != 0)
            goto done;
    for (size_t i = 0; i < json_array_size(os); i++)
        if (graph_op_from_json(&b, json_array_get(os, i), i) != 0)
            goto done;
    rc = graph_finish(&b);
done:
    return graph_builder_finish(&b, rc, out);
}

int graph_load_tree(const char *path, golden_graph **out, golden_error *err)
{
    golden_doc *doc = NULL;
    golden_schema *schema = NULL;
    int rc = golden_doc_load_file(path, &doc, err);
    if (rc == 0)
        rc = golden_schema_load("calculet-graph/v1", &schema, err);
    if (rc == 0)
        rc = golden_schema_check(schema, doc, err);
    if (rc == 0)
        rc = golden_graph_from_json(golden_doc_root(doc), path, doc, out, err);
    golden_schema_free(schema);
    golden_doc_free(doc);
    return rc;
}
