/* Builds the calculet-graph/v1 model from a document tree and checks its structure: every id
 * known and unique, every event signalled exactly once, every range inside its buffer. */
#include "golden/graph.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden/schema.h"
#include "util/strmap.h"


/* ---- id lookups: the library's one string map (util/strmap.h), values are indices ---- */
static uint32_t strmap_get(const golden_strmap *m, const char *k)
{
    uint64_t v;
    return golden_strmap_get(m, k, strlen(k), &v) ? (uint32_t)v : GOLDEN_NONE;
}

/* Insert k -> v; returns 1 when k was already present (nothing changed), -1 on no memory. */
static int strmap_put(golden_strmap *m, const char *k, uint32_t v)
{
    return golden_strmap_put(m, k, strlen(k), v, NULL);
}

typedef struct {
    golden_strmap ops, buffers, queues;
} graph_index;

/* ---- building ---- */
/* A reference to an op resolved once every op is known (ops may name later ops). */
typedef struct {
    uint32_t owner;       /* op (after) or buffer (live, inplace_of) index */
    uint32_t k;           /* after: entry index; live: 0 or 1; inplace_of: 2 */
    char *name;
    const json_t *node;   /* the tree's node when the tree outlives the build, else NULL */
} pending_ref;

typedef struct {
    const char *name;
    const golden_doc *doc;
    golden_error *err;
    golden_graph *g;
    golden_strmap events, spaces, families, domains;
    char **domain_keys;
    uint32_t ndomain_keys;
    size_t cap_queues, cap_buffers, cap_ops, cap_acc, cap_after, cap_bq;
    pending_ref *after_refs, *buf_refs;
    size_t nafter_refs, cap_after_refs, nbuf_refs, cap_buf_refs;
    bool keep_nodes;      /* the tree lives until the build ends (not streamed) */
    const json_t *ops_arr; /* the tree's ops, when kept */
} builder;

/* Grow *arr (element size sz) so that index n fits; 0 or -1. */
static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc <= n)
        nc *= 2;
    void *na = realloc(*arr, nc * sz);
    if (!na)
        return -1;
    *arr = na;
    *cap = nc;
    return 0;
}

/* Fail at a node: file:line:col when the document knows it, else name#pointer. */
static int fail_at(builder *b, const json_t *node, const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(builder *b, const json_t *node, const char *pointer, const char *fmt, ...)
{
    if (!b->err)
        return GOLDEN_ERR;
    if (b->doc && node)
        golden_doc_where(b->doc, node, b->err->where, sizeof b->err->where);
    else
        snprintf(b->err->where, sizeof b->err->where, "%s#%s", b->name, pointer);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err->what, sizeof b->err->what, fmt, ap);
    va_end(ap);
    return GOLDEN_ERR;
}

static int nomem(builder *b)
{
    return golden_fail_what(b->err, GOLDEN_ENOMEM, b->name, "out of memory");
}

/* A name must be a string without NUL bytes: a NUL would cut the id where C strings are used
 * and let two different ids collide. */
static bool has_nul(const json_t *v)
{
    return memchr(json_string_value(v), '\0', json_string_length(v)) != NULL;
}

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
        char p[512];
        snprintf(p, sizeof p, "%s/%.*s", ptr, (int)(klen < 64 ? klen : 64), key);
        return fail_at(b, val, p, "%s: unknown key \"%.*s\" (known: %s)", what,
                       (int)(klen < 64 ? klen : 64), key, list);
    }
    return GOLDEN_OK;
}

static const char *get_string(builder *b, const json_t *obj, const char *key, const char *ptr,
                              bool required, int *bad)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required) {
            fail_at(b, obj, ptr, "missing required \"%s\"", key);
            *bad = 1;
        }
        return NULL;
    }
    if (!json_is_string(v) || json_string_length(v) == 0 || has_nul(v)) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        fail_at(b, v, p, "\"%s\" must be a non-empty string%s", key,
                json_is_string(v) && json_string_length(v) ? " without NUL bytes" : "");
        *bad = 1;
        return NULL;
    }
    return json_string_value(v);
}

/* Non-negative integer field; returns 0 ok, 1 absent, -1 error. */
static int get_uint(builder *b, const json_t *obj, const char *key, const char *ptr,
                    bool required, uint64_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required)
            return fail_at(b, obj, ptr, "missing required \"%s\"", key);
        return 1;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        return fail_at(b, v, p, "\"%s\" must be a non-negative integer", key);
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int intern(builder *b, golden_strmap *m, char ***arr, uint32_t *n, const char *s, uint32_t *out)
{
    uint32_t v = strmap_get(m, s);
    if (v != GOLDEN_NONE) {
        *out = v;
        return 0;
    }
    char **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na)
        return nomem(b);
    *arr = na;
    if (!(na[*n] = strdup(s)))
        return nomem(b);
    if (strmap_put(m, na[*n], *n) < 0)
        return nomem(b);
    *out = (*n)++;
    return 0;
}

static const json_t *get_array(builder *b, const json_t *obj, const char *key, const char *ptr,
                               bool required, int *bad)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        if (required) {
            fail_at(b, obj, ptr, "missing required \"%s\"", key);
            *bad = 1;
        }
        return NULL;
    }
    if (!json_is_array(v)) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        fail_at(b, v, p, "\"%s\" must be an array", key);
        *bad = 1;
        return NULL;
    }
    return v;
}

/* ---- element loaders: one queue, buffer or op at a time (from a tree or a stream) ---- */
static int add_queue(builder *b, const json_t *q, size_t i)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/queues/%zu", i);
    if (!json_is_object(q))
        return fail_at(b, q, ptr, "a queue must be an object");
    static const char *const known[] = {"id", "chip", NULL};
    if (check_keys(b, q, ptr, "a queue", known) != 0)
        return GOLDEN_ERR;
    int bad = 0;
    const char *id = get_string(b, q, "id", ptr, true, &bad);
    if (bad)
        return GOLDEN_ERR;
    uint64_t chip;
    if (get_uint(b, q, "chip", ptr, true, &chip) != 0)
        return GOLDEN_ERR;
    if (g->nqueues >= GOLDEN_NONE - 1)
        return fail_at(b, q, ptr, "too many queues");
    if (grow((void **)&g->queues, &b->cap_queues, g->nqueues, sizeof *g->queues) != 0)
        return nomem(b);
    golden_queue *gq = &g->queues[g->nqueues];
    if (!(gq->id = strdup(id)))
        return nomem(b);
    gq->chip = (int64_t)chip;
    int r = strmap_put(&ix->queues, gq->id, g->nqueues);
    g->nqueues++;
    if (r < 0)
        return nomem(b);
    if (r > 0)
        return fail_at(b, q, ptr, "duplicate queue id \"%s\"", id);
    return GOLDEN_OK;
}

static int domain_of(builder *b, int64_t chip, uint32_t space, uint32_t *out)
{
    char key[64];
    snprintf(key, sizeof key, "%" PRId64 "/%" PRIu32, chip, space);
    uint32_t before = b->g->ndomains;
    if (intern(b, &b->domains, &b->domain_keys, &b->ndomain_keys, key, out) != 0)
        return GOLDEN_ERR;
    if (b->ndomain_keys != before) {
        golden_graph *g = b->g;
        int64_t *dc = realloc(g->domain_chip, b->ndomain_keys * sizeof *dc);
        if (!dc)
            return nomem(b);
        g->domain_chip = dc;
        uint32_t *ds = realloc(g->domain_space, b->ndomain_keys * sizeof *ds);
        if (!ds)
            return nomem(b);
        g->domain_space = ds;
        dc[*out] = chip;
        ds[*out] = space;
        g->ndomains = b->ndomain_keys;
    }
    return GOLDEN_OK;
}

static int add_ref(builder *b, pending_ref **v, size_t *n, size_t *cap, uint32_t owner,
                   uint32_t k, const char *name, const json_t *node)
{
    if (grow((void **)v, cap, *n, sizeof **v) != 0)
        return nomem(b);
    pending_ref *r = &(*v)[*n];
    if (!(r->name = strdup(name)))
        return nomem(b);
    r->owner = owner;
    r->k = k;
    r->node = b->keep_nodes ? node : NULL;
    (*n)++;
    return GOLDEN_OK;
}

static int add_buffer(builder *b, const json_t *o, size_t i)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    char ptr[64];
    snprintf(ptr, sizeof ptr, "/buffers/%zu", i);
    if (!json_is_object(o))
        return fail_at(b, o, ptr, "a buffer must be an object");
    static const char *const known[] = {"id", "chip", "space", "address", "size", "live",
                                        "inplace_of", NULL};
    if (check_keys(b, o, ptr, "a buffer", known) != 0)
        return GOLDEN_ERR;
    int bad = 0;
    const char *id = get_string(b, o, "id", ptr, true, &bad);
    const char *space = bad ? NULL : get_string(b, o, "space", ptr, true, &bad);
    if (bad)
        return GOLDEN_ERR;
    uint64_t chip, addr, size;
    if (get_uint(b, o, "chip", ptr, true, &chip) != 0 ||
        get_uint(b, o, "address", ptr, true, &addr) != 0 ||
        get_uint(b, o, "size", ptr, true, &size) != 0)
        return GOLDEN_ERR;
    if (addr + size < addr)
        return fail_at(b, o, ptr, "buffer \"%s\" ends beyond the address space", id);
    if (g->nbuffers >= GOLDEN_NONE - 1)
        return fail_at(b, o, ptr, "too many buffers");
    if (grow((void **)&g->buffers, &b->cap_buffers, g->nbuffers, sizeof *g->buffers) != 0)
        return nomem(b);
    uint32_t bi = g->nbuffers;
    golden_buffer *gb = &g->buffers[bi];
    memset(gb, 0, sizeof *gb);
    if (!(gb->id = strdup(id)))
        return nomem(b);
    g->nbuffers++;
    gb->chip = (int64_t)chip;
    gb->address = addr;
    gb->size = size;
    gb->live_first = gb->live_last = gb->inplace_of = GOLDEN_NONE;
    if (intern(b, &b->spaces, &g->spaces, &g->nspaces, space, &gb->space) != 0 ||
        domain_of(b, gb->chip, gb->space, &gb->domain) != 0)
        return GOLDEN_ERR;
    int r = strmap_put(&ix->buffers, gb->id, bi);
    if (r < 0)
        return nomem(b);
    if (r > 0)
        return fail_at(b, o, ptr, "duplicate buffer id \"%s\"", id);
    const json_t *live = json_object_get(o, "live");
    if (live) {
        char p[96];
        snprintf(p, sizeof p, "%s/live", ptr);
        if (!json_is_array(live) || json_array_size(live) != 2 ||
            !json_is_string(json_array_get(live, 0)) || !json_is_string(json_array_get(live, 1)) ||
            has_nul(json_array_get(live, 0)) || has_nul(json_array_get(live, 1)))
            return fail_at(b, live, p, "\"live\" must be [first_op, last_op] (op ids)");
        for (uint32_t k = 0; k < 2; k++)
            if (add_ref(b, &b->buf_refs, &b->nbuf_refs, &b->cap_buf_refs, bi, k,
                        json_string_value(json_array_get(live, k)), json_array_get(live, k)) != 0)
                return GOLDEN_ERR;
    }
    const json_t *ip = json_object_get(o, "inplace_of");
    if (ip) {
        if (!json_is_string(ip) || has_nul(ip)) {
            char p[96];
            snprintf(p, sizeof p, "%s/inplace_of", ptr);
            return fail_at(b, ip, p, "\"inplace_of\" must be a buffer id");
        }
        if (add_ref(b, &b->buf_refs, &b->nbuf_refs, &b->cap_buf_refs, bi, 2,
                    json_string_value(ip), ip) != 0)
            return GOLDEN_ERR;
    }
    return GOLDEN_OK;
}

static int parse_kind(const char *s, golden_op_kind *k)
{
    static const char *names[] = {"compute", "signal", "wait", "barrier"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *k = (golden_op_kind)i;
            return 0;
        }
    return -1;
}

const char *golden_op_kind_name(golden_op_kind k)
{
    switch (k) {
    case GOLDEN_OP_SIGNAL: return "signal";
    case GOLDEN_OP_WAIT: return "wait";
    case GOLDEN_OP_BARRIER: return "barrier";
    default: return "compute";
    }
}

static int load_accesses(builder *b, const json_t *arr, const char *ptr, uint32_t op, bool write)
{
    golden_graph *g = b->g;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *a = json_array_get(arr, i);
        char p[256];
        snprintf(p, sizeof p, "%s/%zu", ptr, i);
        if (!json_is_object(a))
            return fail_at(b, a, p, "an access must be an object");
        static const char *const known[] = {"buffer", "offset", "size", NULL};
        char what[160];
        snprintf(what, sizeof what, "op \"%.100s\": an access", g->ops[op].id);
        if (check_keys(b, a, p, what, known) != 0)
            return GOLDEN_ERR;
        int bad = 0;
        const char *bid = get_string(b, a, "buffer", p, true, &bad);
        if (bad)
            return GOLDEN_ERR;
        uint32_t buf = golden_graph_find_buffer(g, bid);
        if (buf == GOLDEN_NONE)
            return fail_at(b, a, p, "op \"%s\": unknown buffer \"%s\"", g->ops[op].id, bid);
        const golden_buffer *gb = &g->buffers[buf];
        uint64_t off = 0, size = gb->size;
        int r = get_uint(b, a, "offset", p, false, &off);
        if (r < 0)
            return GOLDEN_ERR;
        r = get_uint(b, a, "size", p, false, &size);
        if (r < 0)
            return GOLDEN_ERR;
        if (r == 1 && off <= gb->size)
            size = gb->size - off;
        if (off > gb->size || size > gb->size - off)
            return fail_at(b, a, p,
                           "op \"%s\": range [%" PRIu64 ", %" PRIu64 ") is outside buffer \"%s\" "
                           "of %" PRIu64 " bytes", g->ops[op].id, off, off + size, bid, gb->size);
        if (size == 0)
            continue; /* an empty range touches no byte and cannot conflict */
        if (g->naccesses >= GOLDEN_NONE - 1)
            return fail_at(b, a, p, "too many accesses");
        if (grow((void **)&g->accesses, &b->cap_acc, g->naccesses, sizeof *g->accesses) != 0)
            return nomem(b);
        golden_access *ga = &g->accesses[g->naccesses++];
        ga->op = op;
        ga->buffer = buf;
        ga->index = (uint32_t)i;
        ga->write = write;
        ga->lo = gb->address + off;
        ga->hi = ga->lo + size;
    }
    return GOLDEN_OK;
}

/* The index of event `name`, created on first mention by op `first_op`. Both loaders use
 * it, so events are numbered the same way whichever path built the graph. */
static int intern_event(builder *b, const char *name, uint32_t first_op, uint32_t *out)
{
    golden_graph *g = b->g;
    uint32_t e = strmap_get(&b->events, name);
    if (e == GOLDEN_NONE) {
        golden_event *ne = realloc(g->events, (g->nevents + 1) * sizeof *ne);
        if (!ne)
            return nomem(b);
        g->events = ne;
        e = g->nevents;
        ne[e].signal = GOLDEN_NONE;
        ne[e].first_op = first_op;
        if (!(ne[e].id = strdup(name)))
            return nomem(b);
        g->nevents++;
        if (strmap_put(&b->events, ne[e].id, e) < 0)
            return nomem(b);
    }
    *out = e;
    return 0;
}

static int add_op(builder *b, const json_t *o, size_t idx)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    char ptr[64], p[128];
    snprintf(ptr, sizeof ptr, "/ops/%zu", idx);
    if (!json_is_object(o))
        return fail_at(b, o, ptr, "an op must be an object");
    static const char *const known[] = {"id", "kind", "queue", "queues", "family", "event",
                                        "after", "reads", "writes", "data_size", NULL};
    if (check_keys(b, o, ptr, "an op", known) != 0)
        return GOLDEN_ERR;
    int bad = 0;
    const char *id = get_string(b, o, "id", ptr, true, &bad);
    const char *kind = bad ? NULL : get_string(b, o, "kind", ptr, false, &bad);
    if (bad)
        return GOLDEN_ERR;
    if (g->nops >= GOLDEN_NONE - 1)
        return fail_at(b, o, ptr, "too many ops");
    if (grow((void **)&g->ops, &b->cap_ops, g->nops, sizeof *g->ops) != 0)
        return nomem(b);
    uint32_t i = g->nops;
    golden_op *op = &g->ops[i];
    memset(op, 0, sizeof *op);
    if (!(op->id = strdup(id)))
        return nomem(b);
    g->nops++;
    op->kind = GOLDEN_OP_COMPUTE;
    op->queue = op->family = op->event = GOLDEN_NONE;
    op->acc_first = g->naccesses;
    op->after_first = (uint32_t)b->nafter_refs;
    op->bq_first = g->nbarrier_queues;
    if (kind && parse_kind(kind, &op->kind) != 0) {
        snprintf(p, sizeof p, "%s/kind", ptr);
        return fail_at(b, json_object_get(o, "kind"), p,
                       "op \"%s\": unknown kind \"%s\" (compute, signal, wait or barrier)", id,
                       kind);
    }
    int r = strmap_put(&ix->ops, op->id, i);
    if (r < 0)
        return nomem(b);
    if (r > 0)
        return fail_at(b, o, ptr, "duplicate op id \"%s\"", id);
    const json_t *rd = get_array(b, o, "reads", ptr, false, &bad);
    const json_t *wr = bad ? NULL : get_array(b, o, "writes", ptr, false, &bad);
    const json_t *af = bad ? NULL : get_array(b, o, "after", ptr, false, &bad);
    const json_t *qs = bad ? NULL : get_array(b, o, "queues", ptr, op->kind == GOLDEN_OP_BARRIER, &bad);
    if (bad)
        return GOLDEN_ERR;
    if (op->kind != GOLDEN_OP_COMPUTE && (json_array_size(rd) || json_array_size(wr)))
        return fail_at(b, o, ptr, "op \"%s\": a %s makes no buffer accesses", id,
                       golden_op_kind_name(op->kind));
    if (op->kind != GOLDEN_OP_BARRIER && qs)
        return fail_at(b, o, ptr, "op \"%s\": only a barrier lists \"queues\"", id);
    const char *qid = get_string(b, o, "queue", ptr, op->kind != GOLDEN_OP_BARRIER, &bad);
    const char *fam = bad ? NULL : get_string(b, o, "family", ptr, false, &bad);
    const char *ev = bad ? NULL : get_string(b, o, "event", ptr,
                                             op->kind == GOLDEN_OP_SIGNAL ||
                                                 op->kind == GOLDEN_OP_WAIT, &bad);
    if (bad)
        return GOLDEN_ERR;
    if (op->kind == GOLDEN_OP_BARRIER && qid)
        return fail_at(b, o, ptr, "op \"%s\": a barrier lists \"queues\", not \"queue\"", op->id);
    if (qid && (op->queue = golden_graph_find_queue(g, qid)) == GOLDEN_NONE) {
        snprintf(p, sizeof p, "%s/queue", ptr);
        return fail_at(b, json_object_get(o, "queue"), p, "op \"%s\": unknown queue \"%s\"",
                       op->id, qid);
    }
    if (fam && intern(b, &b->families, &g->families, &g->nfamilies, fam, &op->family) != 0)
        return GOLDEN_ERR;
    if (ev && op->kind != GOLDEN_OP_SIGNAL && op->kind != GOLDEN_OP_WAIT)
        return fail_at(b, o, ptr, "op \"%s\": only a signal or a wait names an event", op->id);
    if (ev) {
        uint32_t e;
        if (intern_event(b, ev, i, &e) != 0)
            return GOLDEN_ERR;
        op->event = e;
        if (op->kind == GOLDEN_OP_SIGNAL) {
            if (g->events[e].signal != GOLDEN_NONE) {
                snprintf(p, sizeof p, "%s/event", ptr);
                return fail_at(b, json_object_get(o, "event"), p,
                               "event \"%s\" is signalled twice (by \"%s\" and \"%s\")", ev,
                               g->ops[g->events[e].signal].id, op->id);
            }
            g->events[e].signal = i;
        }
    }
    uint64_t dsu;
    r = get_uint(b, o, "data_size", ptr, false, &dsu);
    if (r < 0)
        return GOLDEN_ERR;
    op->data_size = -1;
    if (r == 0) {
        if (dsu > INT64_MAX)
            return fail_at(b, o, ptr, "op \"%s\": data_size too large", op->id);
        op->data_size = (int64_t)dsu;
    }
    snprintf(p, sizeof p, "%s/reads", ptr);
    if (rd && load_accesses(b, rd, p, i, false) != 0)
        return GOLDEN_ERR;
    snprintf(p, sizeof p, "%s/writes", ptr);
    if (wr && load_accesses(b, wr, p, i, true) != 0)
        return GOLDEN_ERR;
    op = &g->ops[i];
    op->acc_count = g->naccesses - op->acc_first;
    for (size_t k = 0; k < json_array_size(af); k++) {
        const json_t *sv = json_array_get(af, k);
        if (!json_is_string(sv) || has_nul(sv)) {
            snprintf(p, sizeof p, "%s/after/%zu", ptr, k);
            return fail_at(b, sv, p, "op \"%s\": \"after\" lists op ids", op->id);
        }
        if (add_ref(b, &b->after_refs, &b->nafter_refs, &b->cap_after_refs, i, (uint32_t)k,
                    json_string_value(sv), sv) != 0)
            return GOLDEN_ERR;
    }
    op->after_count = (uint32_t)b->nafter_refs - op->after_first;
    for (size_t k = 0; k < json_array_size(qs); k++) {
        const json_t *sv = json_array_get(qs, k);
        snprintf(p, sizeof p, "%s/queues/%zu", ptr, k);
        uint32_t q = json_is_string(sv) ? golden_graph_find_queue(g, json_string_value(sv))
                                        : GOLDEN_NONE;
        if (!json_is_string(sv) || has_nul(sv))
            return fail_at(b, sv, p, "barrier \"%s\": \"queues\" lists queue ids", op->id);
        if (q == GOLDEN_NONE)
            return fail_at(b, sv, p, "barrier \"%s\" names unknown queue \"%s\"", op->id,
                           json_string_value(sv));
        for (uint32_t m = op->bq_first; m < g->nbarrier_queues; m++)
            if (g->barrier_queues[m] == q)
                return fail_at(b, sv, p, "barrier \"%s\" names queue \"%s\" twice", op->id,
                               json_string_value(sv));
        if (grow((void **)&g->barrier_queues, &b->cap_bq, g->nbarrier_queues,
                 sizeof *g->barrier_queues) != 0)
            return nomem(b);
        g->barrier_queues[g->nbarrier_queues++] = q;
    }
    op->bq_count = g->nbarrier_queues - op->bq_first;
    if (op->kind == GOLDEN_OP_BARRIER && op->bq_count == 0)
        return fail_at(b, o, ptr, "barrier \"%s\" names no queue", op->id);
    return GOLDEN_OK;
}

/* Once every op is known: after edges, live ranges, in-place declarations, waits' signals. */
static int resolve(builder *b)
{
    golden_graph *g = b->g;
    if (b->nafter_refs && !(g->after = malloc(b->nafter_refs * sizeof *g->after)))
        return nomem(b);
    for (size_t i = 0; i < b->nafter_refs; i++) {
        const pending_ref *r = &b->after_refs[i];
        uint32_t pred = golden_graph_find_op(g, r->name);
        char p[128];
        snprintf(p, sizeof p, "/ops/%" PRIu32 "/after/%" PRIu32, r->owner, r->k);
        if (pred == GOLDEN_NONE)
            return fail_at(b, r->node, p, "op \"%s\": after names unknown op \"%s\"",
                           g->ops[r->owner].id, r->name);
        if (pred == r->owner)
            return fail_at(b, r->node, p, "op \"%s\" is listed after itself", g->ops[r->owner].id);
        g->after[i] = pred;
    }
    g->nafter = (uint32_t)b->nafter_refs;
    for (size_t i = 0; i < b->nbuf_refs; i++) {
        const pending_ref *r = &b->buf_refs[i];
        golden_buffer *gb = &g->buffers[r->owner];
        char p[128];
        if (r->k < 2) {
            snprintf(p, sizeof p, "/buffers/%" PRIu32 "/live/%" PRIu32, r->owner, r->k);
            uint32_t op = golden_graph_find_op(g, r->name);
            if (op == GOLDEN_NONE)
                return fail_at(b, r->node, p, "buffer \"%s\": live names unknown op \"%s\"",
                               gb->id, r->name);
            if (r->k == 0)
                gb->live_first = op;
            else
                gb->live_last = op;
        } else {
            snprintf(p, sizeof p, "/buffers/%" PRIu32 "/inplace_of", r->owner);
            uint32_t other = golden_graph_find_buffer(g, r->name);
            if (other == GOLDEN_NONE)
                return fail_at(b, r->node, p, "buffer \"%s\": inplace_of names unknown buffer \"%s\"",
                               gb->id, r->name);
            if (other == r->owner)
                return fail_at(b, r->node, p, "buffer \"%s\" is declared in place of itself", gb->id);
            gb->inplace_of = other;
        }
    }
    for (uint32_t e = 0; e < g->nevents; e++)
        if (g->events[e].signal == GOLDEN_NONE) {
            char p[96];
            uint32_t w = g->events[e].first_op;
            snprintf(p, sizeof p, "/ops/%" PRIu32 "/event", w);
            const json_t *node = b->ops_arr ? json_object_get(json_array_get(b->ops_arr, w), "event")
                                            : NULL;
            return fail_at(b, node, p,
                           "wait \"%s\": event \"%s\" is never signalled", g->ops[w].id,
                           g->events[e].id);
        }
    return GOLDEN_OK;
}

static int build_queue_orders(builder *b)
{
    golden_graph *g = b->g;
    uint32_t K = g->nqueues;
    g->qops_first = calloc((size_t)K + 1, sizeof *g->qops_first);
    g->qops_count = calloc((size_t)K + 1, sizeof *g->qops_count);
    size_t total = 0;
    if (!g->qops_first || !g->qops_count)
        return nomem(b);
    for (uint32_t i = 0; i < g->nops; i++) {
        const golden_op *op = &g->ops[i];
        if (op->kind == GOLDEN_OP_BARRIER)
            for (uint32_t m = 0; m < op->bq_count; m++)
                g->qops_count[g->barrier_queues[op->bq_first + m]]++;
        else
            g->qops_count[op->queue]++;
    }
    for (uint32_t q = 0; q < K; q++) {
        g->qops_first[q] = (uint32_t)total;
        total += g->qops_count[q];
        g->qops_count[q] = 0;
    }
    if (total && !(g->qops = malloc(total * sizeof *g->qops)))
        return nomem(b);
    for (uint32_t i = 0; i < g->nops; i++) {
        const golden_op *op = &g->ops[i];
        if (op->kind == GOLDEN_OP_BARRIER)
            for (uint32_t m = 0; m < op->bq_count; m++) {
                uint32_t q = g->barrier_queues[op->bq_first + m];
                g->qops[g->qops_first[q] + g->qops_count[q]++] = i;
            }
        else
            g->qops[g->qops_first[op->queue] + g->qops_count[op->queue]++] = i;
    }
    return GOLDEN_OK;
}

static void builder_free(builder *b)
{
    golden_strmap_free(&b->events);
    golden_strmap_free(&b->spaces);
    golden_strmap_free(&b->families);
    golden_strmap_free(&b->domains);
    for (uint32_t i = 0; i < b->ndomain_keys; i++)
        free(b->domain_keys[i]);
    free(b->domain_keys);
    for (size_t i = 0; i < b->nafter_refs; i++)
        free(b->after_refs[i].name);
    free(b->after_refs);
    for (size_t i = 0; i < b->nbuf_refs; i++)
        free(b->buf_refs[i].name);
    free(b->buf_refs);
}

static int builder_init(builder *b, const char *name, const golden_doc *doc, golden_error *err)
{
    memset(b, 0, sizeof *b);
    b->name = name ? name : "graph";
    b->doc = doc;
    b->err = err;
    golden_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->index = calloc(1, sizeof(graph_index))) || !(g->name = strdup(b->name))) {
        golden_graph_free(g);
        return golden_fail_what(err, GOLDEN_ENOMEM, b->name, "out of memory");
    }
    b->g = g;
    return GOLDEN_OK;
}

static int check_schema_name(builder *b, const json_t *schema, const json_t *root)
{
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "calculet-graph/v1") != 0)
        return fail_at(b, schema ? schema : root, schema ? "/schema" : "",
                       "\"schema\" must be \"calculet-graph/v1\"");
    return GOLDEN_OK;
}

int golden_graph_from_json(const json_t *root, const char *name, const golden_doc *doc,
                           golden_graph **out, golden_error *err)
{
    *out = NULL;
    builder b;
    if (builder_init(&b, name, doc, err) != 0)
        return GOLDEN_ERR;
    b.keep_nodes = true;
    int rc = GOLDEN_ERR, bad = 0;
    if (!json_is_object(root)) {
        fail_at(&b, root, "", "a graph must be a JSON object");
        goto done;
    }
    if (check_schema_name(&b, json_object_get(root, "schema"), root) != 0)
        goto done;
    const json_t *qs = get_array(&b, root, "queues", "", true, &bad);
    const json_t *bs = bad ? NULL : get_array(&b, root, "buffers", "", false, &bad);
    const json_t *os = bad ? NULL : get_array(&b, root, "ops", "", true, &bad);
    if (bad)
        goto done;
    b.ops_arr = os;
    for (size_t i = 0; i < json_array_size(qs); i++)
        if (add_queue(&b, json_array_get(qs, i), i) != 0)
            goto done;
    for (size_t i = 0; i < json_array_size(bs); i++)
        if (add_buffer(&b, json_array_get(bs, i), i) != 0)
            goto done;
    for (size_t i = 0; i < json_array_size(os); i++)
        if (add_op(&b, json_array_get(os, i), i) != 0)
            goto done;
    if (resolve(&b) != 0 || build_queue_orders(&b) != 0)
        goto done;
    rc = GOLDEN_OK;
done:
    builder_free(&b);
    if (rc != GOLDEN_OK) {
        golden_graph_free(b.g);
        return rc;
    }
    *out = b.g;
    return GOLDEN_OK;
}

/* ---- streaming JSON: the top level is scanned here and each element of queues, buffers and
 * ops is parsed on its own, so a graph of millions of ops never becomes one tree ---- */
typedef struct {
    const char *buf;
    size_t len;
    const char *path;
    golden_error *err;
    golden_progress *progress;
    size_t *cursor;       /* [byte, line]: where line counting last stopped (it only moves on) */
} scan;

/* The 1-based line of byte p, counted on from the cursor (elements are visited in order, so
 * all the counting over a file is one pass). */
static size_t line_at(const scan *s, size_t p)
{
    size_t *c = s->cursor;
    if (p < c[0]) {
        c[0] = 0;
        c[1] = 1;
    }
    for (const char *q = s->buf + c[0], *end = s->buf + p;
         q < end && (q = memchr(q, '\n', (size_t)(end - q))) != NULL; q++)
        c[1]++;
    c[0] = p;
    return c[1];
}

static size_t skip_ws(const scan *s, size_t p)
{
    while (p < s->len && (s->buf[p] == ' ' || s->buf[p] == '\n' || s->buf[p] == '\t' ||
                          s->buf[p] == '\r'))
        p++;
    return p;
}

static int scan_fail(const scan *s, size_t at, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s->len; i++) {
        if (s->buf[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return golden_fail_where(s->err, GOLDEN_EINVAL, what, "%s:%zu:%zu", s->path, line, col);
}

/* End of the JSON value starting at p (strings and nesting skipped), or 0 on bad input. */
static size_t skip_value(const scan *s, size_t p, size_t *maxdepth)
{
    size_t depth = 0, most = 0;
    do {
        if (p >= s->len)
            return 0;
        char c = s->buf[p];
        if (c == '"') {
            for (p++; p < s->len && s->buf[p] != '"'; p++)
                if (s->buf[p] == '\\')
                    p++;
            if (p >= s->len)
                return 0;
            p++;
        } else if (c == '{' || c == '[') {
            if (++depth > most)
                most = depth;
            p++;
        } else if (c == '}' || c == ']') {
            if (!depth)
                return 0;
            depth--;
            p++;
        } else if (depth) {
            p++;
        } else {
            while (p < s->len && !strchr(",]} \t\r\n", s->buf[p]))
                p++;
        }
    } while (depth);
    if (maxdepth)
        *maxdepth = most;
    return p;
}

/* Load the JSON value at [p, hi) with the document loader, the tree path's own strict grammar
 * (RFC 8259, UTF-8, no NUL bytes, no duplicate keys, nesting limit), so that a file gets the
 * same verdict whichever path reads it. `above` is how many containers enclose the value in
 * the whole file: the nesting limit counts from the file's top. */
/* Columns of a value are exact when its line starts at most this far before it (longer lines,
 * e.g. a graph on one line, give columns counted from the value's own start). */
#define STRICT_COLUMN_SPAN 65536

static int strict_value(const scan *s, size_t p, size_t hi, size_t above, golden_doc **out)
{
    size_t depth = 0, end = skip_value(s, p, &depth);
    if (end && end <= hi && depth + above > GOLDEN_DOC_MAX_DEPTH) {
        char what[96];
        snprintf(what, sizeof what, "nesting deeper than %d levels", GOLDEN_DOC_MAX_DEPTH);
        return scan_fail(s, p, what);
    }
    /* a value whose end cannot be found is handed over whole: the loader says where it breaks */
    size_t stop = end && end <= hi ? end : hi;
    size_t line = line_at(s, p), from = p;
    while (from > 0 && s->buf[from - 1] != '\n' && p - from < STRICT_COLUMN_SPAN)
        from--;
    if (from == p || (from > 0 && s->buf[from - 1] != '\n'))
        return golden_doc_load_json(s->path, s->buf + p, stop - p, line, out, s->err);
    /* blank out the line before the value, so columns are the file's as well as lines */
    char *copy = malloc(stop - from);
    if (!copy)
        return golden_fail_what(s->err, GOLDEN_ENOMEM, s->path, "out of memory");
    memset(copy, ' ', p - from);
    memcpy(copy + (p - from), s->buf + p, stop - p);
    int rc = golden_doc_load_json(s->path, copy, stop - from, line, out, s->err);
    free(copy);
    return rc;
}

typedef int (*element_fn)(builder *b, const json_t *elem, size_t i);

/* ---- a fast path for ops in the stream: a strict little parser for the common shape of an op
 * (ASCII strings without escapes, plain non-negative integers, known keys). It checks
 * everything first and changes nothing unless the op is valid; anything else (and every
 * error) falls back to jansson and add_op, so messages and rules stay those of one code. ---- */
typedef struct {
    const char *s;
    uint32_t n;
} slice;

typedef struct {
    slice buffer;
    uint64_t offset, size;
    bool has_offset, has_size, write;
} flat_access;

typedef struct {
    slice id, kind, queue, family, event;
    bool has_id, has_kind, has_queue, has_family, has_event, has_data_size;
    bool has_reads, has_writes, has_after, has_queues;
    uint64_t data_size;
    flat_access *acc;
    size_t nacc, cap_acc;
    slice *after, *queues;
    size_t nafter, cap_after, nqueues, cap_queues;
    char *tmp[2];
    size_t tmp_cap[2];
    uint32_t last_buf;    /* the buffer the previous access named (a cache; any value is safe) */
} flat_op;

static void flat_free(flat_op *f)
{
    free(f->acc);
    free(f->after);
    free(f->queues);
    free(f->tmp[0]);
    free(f->tmp[1]);
}

/* 0 = parsed; 1 = not the simple shape (use jansson); -1 = out of memory */
static int flat_str(const scan *s, size_t *p, size_t hi, slice *out)
{
    size_t q = *p;
    if (q >= hi || s->buf[q] != '"')
        return 1;
    for (q++; q < hi && s->buf[q] != '"'; q++) {
        unsigned char c = (unsigned char)s->buf[q];
        if (c == '\\' || c < 0x20 || c >= 0x80)
            return 1;
    }
    if (q >= hi || q - *p - 1 > UINT32_MAX)
        return 1;
    out->s = s->buf + *p + 1;
    out->n = (uint32_t)(q - *p - 1);
    *p = q + 1;
    return 0;
}

static int flat_uint(const scan *s, size_t *p, size_t hi, uint64_t *out)
{
    size_t q = *p;
    uint64_t v = 0;
    while (q < hi && s->buf[q] >= '0' && s->buf[q] <= '9' && q - *p < 18)
        v = v * 10 + (uint64_t)(s->buf[q++] - '0');
    if (q == *p || q >= hi || (s->buf[*p] == '0' && q - *p > 1) ||
        !strchr(",}] \t\r\n", s->buf[q]))
        return 1;
    *out = v;
    *p = q;
    return 0;
}

static bool slice_is(slice x, const char *lit)
{
    size_t n = strlen(lit);
    return x.n == n && memcmp(x.s, lit, n) == 0;
}

static int flat_push(void **arr, size_t *n, size_t *cap, size_t sz)
{
    if (grow(arr, cap, *n, sz) != 0)
        return -1;
    (*n)++;
    return 0;
}

static int flat_str_array(const scan *s, size_t *p, size_t hi, slice **arr, size_t *n,
                          size_t *cap)
{
    size_t q = *p;
    if (q >= hi || s->buf[q] != '[')
        return 1;
    q = skip_ws(s, q + 1);
    if (q < hi && s->buf[q] == ']') {
        *p = q + 1;
        return 0;
    }
    for (;;) {
        slice x;
        if (flat_str(s, &q, hi, &x) != 0)
            return 1;
        if (flat_push((void **)arr, n, cap, sizeof **arr) != 0)
            return -1;
        (*arr)[*n - 1] = x;
        q = skip_ws(s, q);
        if (q < hi && s->buf[q] == ',') {
            q = skip_ws(s, q + 1);
            continue;
        }
        if (q < hi && s->buf[q] == ']') {
            *p = q + 1;
            return 0;
        }
        return 1;
    }
}

static int flat_accesses(const scan *s, size_t *p, size_t hi, flat_op *f, bool write)
{
    size_t q = *p;
    if (q >= hi || s->buf[q] != '[')
        return 1;
    q = skip_ws(s, q + 1);
    if (q < hi && s->buf[q] == ']') {
        *p = q + 1;
        return 0;
    }
    for (;;) {
        if (q >= hi || s->buf[q] != '{')
            return 1;
        if (flat_push((void **)&f->acc, &f->nacc, &f->cap_acc, sizeof *f->acc) != 0)
            return -1;
        flat_access *a = &f->acc[f->nacc - 1];
        memset(a, 0, sizeof *a);
        a->write = write;
        bool has_buffer = false;
        q = skip_ws(s, q + 1);
        while (q < hi && s->buf[q] != '}') {
            slice key;
            if (flat_str(s, &q, hi, &key) != 0)
                return 1;
            q = skip_ws(s, q);
            if (q >= hi || s->buf[q] != ':')
                return 1;
            q = skip_ws(s, q + 1);
            int r;
            if (slice_is(key, "buffer") && !has_buffer) {
                r = flat_str(s, &q, hi, &a->buffer);
                has_buffer = true;
            } else if (slice_is(key, "offset") && !a->has_offset) {
                r = flat_uint(s, &q, hi, &a->offset);
                a->has_offset = true;
            } else if (slice_is(key, "size") && !a->has_size) {
                r = flat_uint(s, &q, hi, &a->size);
                a->has_size = true;
            } else {
                return 1;
            }
            if (r != 0)
                return r;
            q = skip_ws(s, q);
            if (q < hi && s->buf[q] == ',') {
                q = skip_ws(s, q + 1);
                if (q >= hi || s->buf[q] != '"')
                    return 1; /* a trailing comma: the strict loader says where */
            } else if (q >= hi || s->buf[q] != '}')
                return 1;
        }
        if (q >= hi || !has_buffer)
            return 1;
        q = skip_ws(s, q + 1);
        if (q < hi && s->buf[q] == ',') {
            q = skip_ws(s, q + 1);
            continue;
        }
        if (q < hi && s->buf[q] == ']') {
            *p = q + 1;
            return 0;
        }
        return 1;
    }
}

static int flat_parse_op(const scan *s, size_t p, size_t hi, flat_op *f, size_t *end)
{
    f->has_id = f->has_kind = f->has_queue = f->has_family = f->has_event = false;
    f->has_data_size = f->has_reads = f->has_writes = f->has_after = f->has_queues = false;
    f->nacc = f->nafter = f->nqueues = 0;
    if (p >= hi || s->buf[p] != '{')
        return 1;
    size_t q = skip_ws(s, p + 1);
    while (q < hi && s->buf[q] != '}') {
        slice key;
        if (flat_str(s, &q, hi, &key) != 0)
            return 1;
        q = skip_ws(s, q);
        if (q >= hi || s->buf[q] != ':')
            return 1;
        q = skip_ws(s, q + 1);
        int r = 1;
        struct {
            const char *name;
            slice *dst;
            bool *seen;
        } strs[] = {{"id", &f->id, &f->has_id}, {"kind", &f->kind, &f->has_kind},
                    {"queue", &f->queue, &f->has_queue}, {"family", &f->family, &f->has_family},
                    {"event", &f->event, &f->has_event}};
        bool matched = false;
        for (int k = 0; k < 5 && !matched; k++)
            if (slice_is(key, strs[k].name)) {
                matched = true;
                if (*strs[k].seen)
                    return 1;
                *strs[k].seen = true;
                r = flat_str(s, &q, hi, strs[k].dst);
            }
        if (matched) {
        } else if (slice_is(key, "data_size") && !f->has_data_size) {
            f->has_data_size = true;
            r = flat_uint(s, &q, hi, &f->data_size);
        } else if (slice_is(key, "reads") && !f->has_reads) {
            f->has_reads = true;
            r = flat_accesses(s, &q, hi, f, false);
        } else if (slice_is(key, "writes") && !f->has_writes) {
            f->has_writes = true;
            r = flat_accesses(s, &q, hi, f, true);
        } else if (slice_is(key, "after") && !f->has_after) {
            f->has_after = true;
            r = flat_str_array(s, &q, hi, &f->after, &f->nafter, &f->cap_after);
        } else if (slice_is(key, "queues") && !f->has_queues) {
            f->has_queues = true;
            r = flat_str_array(s, &q, hi, &f->queues, &f->nqueues, &f->cap_queues);
        }
        if (r != 0)
            return r;
        q = skip_ws(s, q);
        if (q < hi && s->buf[q] == ',') {
            q = skip_ws(s, q + 1);
            if (q >= hi || s->buf[q] != '"')
                return 1; /* a trailing comma: the strict loader says where */
        } else if (q >= hi || s->buf[q] != '}')
            return 1;
    }
    if (q >= hi)
        return 1;
    *end = q + 1;
    return 0;
}

/* A NUL-terminated copy of x in scratch slot k (valid until the next call for that slot). */
static const char *flat_cstr(flat_op *f, int k, slice x)
{
    if (grow((void **)&f->tmp[k], &f->tmp_cap[k], x.n, 1) != 0)
        return NULL;
    memcpy(f->tmp[k], x.s, x.n);
    f->tmp[k][x.n] = '\0';
    return f->tmp[k];
}

/* 0 = added; 1 = not added, let add_op say why; -1 = out of memory (err set). */
static int add_op_flat(builder *b, flat_op *f, size_t idx)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    /* check everything first: any problem goes to add_op for its one message */
    if (!f->has_id || !f->id.n)
        return 1;
    golden_op_kind kind = GOLDEN_OP_COMPUTE;
    if (f->has_kind) {
        const char *k = flat_cstr(f, 0, f->kind);
        if (!k)
            return nomem(b);
        if (!f->kind.n || parse_kind(k, &kind) != 0)
            return 1;
    }
    const char *id = flat_cstr(f, 0, f->id);
    if (!id)
        return nomem(b);
    if (strmap_get(&ix->ops, id) != GOLDEN_NONE || g->nops >= GOLDEN_NONE - 1)
        return 1;
    bool barrier = kind == GOLDEN_OP_BARRIER, sync = kind == GOLDEN_OP_SIGNAL || kind == GOLDEN_OP_WAIT;
    if ((kind != GOLDEN_OP_COMPUTE && f->nacc) || (!barrier && f->has_queues) ||
        (barrier && (!f->has_queues || !f->nqueues || f->has_queue)) ||
        (!barrier && !f->has_queue) || (sync && !f->has_event) || (!sync && f->has_event) ||
        (f->has_queue && !f->queue.n) || (f->has_family && !f->family.n) ||
        (f->has_event && !f->event.n))
        return 1;
    uint32_t queue = GOLDEN_NONE;
    if (f->has_queue) {
        const char *qn = flat_cstr(f, 1, f->queue);
        if (!qn)
            return nomem(b);
        if ((queue = golden_graph_find_queue(g, qn)) == GOLDEN_NONE)
            return 1;
    }
    if (f->has_event && kind == GOLDEN_OP_SIGNAL) {
        const char *en = flat_cstr(f, 1, f->event);
        if (!en)
            return nomem(b);
        uint32_t e = strmap_get(&b->events, en);
        if (e != GOLDEN_NONE && g->events[e].signal != GOLDEN_NONE)
            return 1;
    }
    for (size_t k = 0; k < f->nacc; k++) {
        flat_access *a = &f->acc[k];
        /* tiles of one buffer come in runs: try the last buffer before hashing */
        uint32_t buf = GOLDEN_NONE;
        if (f->last_buf < g->nbuffers && a->buffer.n &&
            strncmp(g->buffers[f->last_buf].id, a->buffer.s, a->buffer.n) == 0 &&
            g->buffers[f->last_buf].id[a->buffer.n] == '\0') {
            buf = f->last_buf;
        } else if (a->buffer.n) {
            const char *bn = flat_cstr(f, 1, a->buffer);
            if (!bn)
                return nomem(b);
            buf = golden_graph_find_buffer(g, bn);
        }
        if (buf == GOLDEN_NONE)
            return 1;
        f->last_buf = buf;
        uint64_t bs = g->buffers[buf].size, off = a->has_offset ? a->offset : 0;
        uint64_t size = a->has_size ? a->size : (off <= bs ? bs - off : 0);
        if (off > bs || size > bs - off)
            return 1;
        a->offset = off;
        a->size = size;
        a->has_offset = true;
        a->buffer.n = buf; /* reuse: the buffer index from here on */
        a->buffer.s = NULL;
    }
    for (size_t k = 0; k < f->nqueues; k++) {
        const char *qn = flat_cstr(f, 1, f->queues[k]);
        if (!qn)
            return nomem(b);
        uint32_t q = f->queues[k].n ? golden_graph_find_queue(g, qn) : GOLDEN_NONE;
        if (q == GOLDEN_NONE)
            return 1;
        for (size_t m = 0; m < k; m++)
            if ((uint32_t)(uintptr_t)f->queues[m].s == q)
                return 1;
        f->queues[k].s = (const char *)(uintptr_t)q; /* reuse: the queue index */
    }
    for (size_t k = 0; k < f->nafter; k++)
        if (!f->after[k].n)
            return 1;
    if (g->naccesses + f->nacc >= GOLDEN_NONE - 1)
        return 1;
    /* now build, in add_op's order so interned indices come out the same */
    if (grow((void **)&g->ops, &b->cap_ops, g->nops, sizeof *g->ops) != 0)
        return nomem(b);
    uint32_t i = g->nops;
    golden_op *op = &g->ops[i];
    memset(op, 0, sizeof *op);
    if (!(op->id = strdup(id)))
        return nomem(b);
    g->nops++;
    op->kind = kind;
    op->queue = queue;
    op->family = op->event = GOLDEN_NONE;
    op->acc_first = g->naccesses;
    op->after_first = (uint32_t)b->nafter_refs;
    op->bq_first = g->nbarrier_queues;
    op->data_size = f->has_data_size ? (int64_t)f->data_size : -1;
    if (strmap_put(&ix->ops, op->id, i) < 0)
        return nomem(b);
    if (f->has_family) {
        const char *fn = flat_cstr(f, 1, f->family);
        if (!fn || intern(b, &b->families, &g->families, &g->nfamilies, fn, &op->family) != 0)
            return nomem(b);
    }
    if (f->has_event) {
        const char *en = flat_cstr(f, 1, f->event);
        if (!en)
            return nomem(b);
        uint32_t e;
        if (intern_event(b, en, i, &e) != 0)
            return GOLDEN_ERR;
        op->event = e;
        if (kind == GOLDEN_OP_SIGNAL)
            g->events[e].signal = i;
    }
    /* reads keep their list index, then writes theirs, as add_op does */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t index = 0;
        for (size_t k = 0; k < f->nacc; k++) {
            const flat_access *a = &f->acc[k];
            if (a->write != (pass == 1))
                continue;
            uint32_t at = index++;
            if (!a->size)
                continue;
            if (grow((void **)&g->accesses, &b->cap_acc, g->naccesses, sizeof *g->accesses) != 0)
                return nomem(b);
            golden_access *ga = &g->accesses[g->naccesses++];
            ga->op = i;
            ga->buffer = a->buffer.n;
            ga->index = at;
            ga->write = a->write;
            ga->lo = g->buffers[a->buffer.n].address + a->offset;
            ga->hi = ga->lo + a->size;
        }
    }
    op = &g->ops[i];
    op->acc_count = g->naccesses - op->acc_first;
    for (size_t k = 0; k < f->nafter; k++) {
        const char *an = flat_cstr(f, 1, f->after[k]);
        if (!an || add_ref(b, &b->after_refs, &b->nafter_refs, &b->cap_after_refs, i,
                           (uint32_t)k, an, NULL) != 0)
            return nomem(b);
    }
    op->after_count = (uint32_t)b->nafter_refs - op->after_first;
    for (size_t k = 0; k < f->nqueues; k++) {
        if (grow((void **)&g->barrier_queues, &b->cap_bq, g->nbarrier_queues,
                 sizeof *g->barrier_queues) != 0)
            return nomem(b);
        g->barrier_queues[g->nbarrier_queues++] = (uint32_t)(uintptr_t)f->queues[k].s;
    }
    op->bq_count = g->nbarrier_queues - op->bq_first;
    (void)idx;
    return 0;
}

typedef struct {
    slice id, space, inplace_of;
    bool has_id, has_space, has_inplace, has_chip, has_address, has_size, has_live;
    uint64_t chip, address, size;
    slice *live;
    size_t nlive, cap_live;
    char *tmp;
    size_t tmp_cap;
} flat_buffer;

static int flat_parse_buffer(const scan *s, size_t p, size_t hi, flat_buffer *f, size_t *end)
{
    f->has_id = f->has_space = f->has_inplace = f->has_chip = false;
    f->has_address = f->has_size = f->has_live = false;
    f->nlive = 0;
    if (p >= hi || s->buf[p] != '{')
        return 1;
    size_t q = skip_ws(s, p + 1);
    while (q < hi && s->buf[q] != '}') {
        slice key;
        if (flat_str(s, &q, hi, &key) != 0)
            return 1;
        q = skip_ws(s, q);
        if (q >= hi || s->buf[q] != ':')
            return 1;
        q = skip_ws(s, q + 1);
        int r = 1;
        bool *seen = NULL;
        if (slice_is(key, "id"))
            r = (seen = &f->has_id, *seen) ? 1 : flat_str(s, &q, hi, &f->id);
        else if (slice_is(key, "space"))
            r = (seen = &f->has_space, *seen) ? 1 : flat_str(s, &q, hi, &f->space);
        else if (slice_is(key, "inplace_of"))
            r = (seen = &f->has_inplace, *seen) ? 1 : flat_str(s, &q, hi, &f->inplace_of);
        else if (slice_is(key, "chip"))
            r = (seen = &f->has_chip, *seen) ? 1 : flat_uint(s, &q, hi, &f->chip);
        else if (slice_is(key, "address"))
            r = (seen = &f->has_address, *seen) ? 1 : flat_uint(s, &q, hi, &f->address);
        else if (slice_is(key, "size"))
            r = (seen = &f->has_size, *seen) ? 1 : flat_uint(s, &q, hi, &f->size);
        else if (slice_is(key, "live"))
            r = (seen = &f->has_live, *seen) ? 1
                                             : flat_str_array(s, &q, hi, &f->live, &f->nlive,
                                                              &f->cap_live);
        if (r != 0)
            return r;
        *seen = true;
        q = skip_ws(s, q);
        if (q < hi && s->buf[q] == ',') {
            q = skip_ws(s, q + 1);
            if (q >= hi || s->buf[q] != '"')
                return 1; /* a trailing comma: the strict loader says where */
        } else if (q >= hi || s->buf[q] != '}')
            return 1;
    }
    if (q >= hi)
        return 1;
    *end = q + 1;
    return 0;
}

static const char *flat_bcstr(flat_buffer *f, slice x)
{
    if (grow((void **)&f->tmp, &f->tmp_cap, x.n, 1) != 0)
        return NULL;
    memcpy(f->tmp, x.s, x.n);
    f->tmp[x.n] = '\0';
    return f->tmp;
}

/* 0 = added; 1 = not added, let add_buffer say why; -1 = out of memory (err set). */
static int add_buffer_flat(builder *b, flat_buffer *f)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    if (!f->has_id || !f->id.n || !f->has_space || !f->space.n || !f->has_chip ||
        !f->has_address || !f->has_size || (f->has_live && f->nlive != 2) ||
        g->nbuffers >= GOLDEN_NONE - 1)
        return 1;
    const char *id = flat_bcstr(f, f->id);
    if (!id)
        return nomem(b);
    if (strmap_get(&ix->buffers, id) != GOLDEN_NONE)
        return 1;
    if (grow((void **)&g->buffers, &b->cap_buffers, g->nbuffers, sizeof *g->buffers) != 0)
        return nomem(b);
    uint32_t bi = g->nbuffers;
    golden_buffer *gb = &g->buffers[bi];
    memset(gb, 0, sizeof *gb);
    if (!(gb->id = strdup(id)))
        return nomem(b);
    g->nbuffers++;
    gb->chip = (int64_t)f->chip;
    gb->address = f->address;
    gb->size = f->size;
    gb->live_first = gb->live_last = gb->inplace_of = GOLDEN_NONE;
    const char *space = flat_bcstr(f, f->space);
    if (!space)
        return nomem(b);
    if (intern(b, &b->spaces, &g->spaces, &g->nspaces, space, &gb->space) != 0 ||
        domain_of(b, gb->chip, gb->space, &gb->domain) != 0)
        return GOLDEN_ERR;
    if (strmap_put(&ix->buffers, gb->id, bi) < 0)
        return nomem(b);
    for (uint32_t k = 0; k < f->nlive; k++) {
        const char *n = flat_bcstr(f, f->live[k]);
        if (!n || add_ref(b, &b->buf_refs, &b->nbuf_refs, &b->cap_buf_refs, bi, k, n, NULL) != 0)
            return nomem(b);
    }
    if (f->has_inplace) {
        const char *n = flat_bcstr(f, f->inplace_of);
        if (!n || add_ref(b, &b->buf_refs, &b->nbuf_refs, &b->cap_buf_refs, bi, 2, n, NULL) != 0)
            return nomem(b);
    }
    return 0;
}

static int stream_array(builder *b, const scan *s, size_t lo, size_t hi, const char *key,
                        element_fn fn, bool fast, size_t *endp)
{
    size_t p = skip_ws(s, lo);
    if (p >= hi || s->buf[p] != '[') {
        char what[128];
        snprintf(what, sizeof what, "\"%s\" must be an array", key);
        return scan_fail(s, p, what);
    }
    p = skip_ws(s, p + 1);
    if (p < hi && s->buf[p] == ']') {
        *endp = p + 1;
        return GOLDEN_OK;
    }
    flat_op *f = NULL;
    flat_buffer *fb = NULL;
    bool ops = fn == add_op;
    if (fast && ops && !(f = calloc(1, sizeof *f)))
        return nomem(b);
    if (fast && fn == add_buffer && !(fb = calloc(1, sizeof *fb)))
        return nomem(b);
    int rc = GOLDEN_OK;
    for (size_t i = 0;; i++) {
        size_t end = 0;
        int r = 1;
        if (f) {
            r = flat_parse_op(s, p, hi, f, &end);
            if (r == 0)
                r = add_op_flat(b, f, i);
            else if (r < 0)
                r = nomem(b);
        } else if (fb) {
            r = flat_parse_buffer(s, p, hi, fb, &end);
            if (r == 0)
                r = add_buffer_flat(b, fb);
            else if (r < 0)
                r = nomem(b);
        }
        if (r < 0) {
            rc = GOLDEN_ERR;
            break;
        }
        if (r > 0) {
            /* not the fast path's shape: the strict loader makes a small tree of the element
             * and the rules speak with its file:line:col */
            golden_doc *d = NULL;
            if (strict_value(s, p, hi, 2, &d) != 0) {
                rc = GOLDEN_ERR;
                break;
            }
            end = skip_value(s, p, NULL);
            b->doc = d;
            rc = fn(b, golden_doc_root(d), i);
            b->doc = NULL;
            golden_doc_free(d);
            if (rc != 0)
                break;
        }
        if (s->progress)
            golden_progress_update(s->progress, end);
        p = skip_ws(s, end);
        if (p < hi && s->buf[p] == ',') {
            p = skip_ws(s, p + 1);
            continue;
        }
        if (!(p < hi && s->buf[p] == ']'))
            rc = scan_fail(s, p, "expected ',' or ']'");
        *endp = p + 1;
        break;
    }
    if (f)
        flat_free(f);
    free(f);
    if (fb) {
        free(fb->live);
        free(fb->tmp);
    }
    free(fb);
    return rc;
}

/* One top-level member: its key (decoded by the strict loader, so invalid UTF-8, escapes and
 * NULs are judged as the tree path judges them), checked against the keys seen so far. */
static int top_key(const scan *s, size_t p, size_t *kend, golden_strmap *seen, char ***keep,
                   size_t *nkeep, int *which)
{
    static const char *keys[] = {"schema", "queues", "buffers", "ops"};
    if (p >= s->len || s->buf[p] != '"')
        return scan_fail(s, p, "expected a key");
    golden_doc *d = NULL;
    if (strict_value(s, p, s->len, 1, &d) != 0)
        return GOLDEN_ERR;
    *kend = skip_value(s, p, NULL);
    const json_t *k = golden_doc_root(d);
    size_t n = json_string_length(k);
    char *copy = malloc(n + 1), **nk = realloc(*keep, (*nkeep + 1) * sizeof *nk);
    if (nk)
        *keep = nk;
    if (!copy || !nk) {
        free(copy);
        golden_doc_free(d);
        return golden_fail_what(s->err, GOLDEN_ENOMEM, s->path, "out of memory");
    }
    memcpy(copy, json_string_value(k), n + 1);
    golden_doc_free(d);
    (*keep)[(*nkeep)++] = copy;
    int r = golden_strmap_put(seen, copy, n, 0, NULL);
    if (r < 0)
        return golden_fail_what(s->err, GOLDEN_ENOMEM, s->path, "out of memory");
    if (r > 0)
        return scan_fail(s, p, "duplicate key");
    *which = -1;
    for (int m = 0; m < 4; m++)
        if (n == strlen(keys[m]) && memcmp(copy, keys[m], n) == 0)
            *which = m;
    return GOLDEN_OK;
}

typedef struct {
    size_t span[4][2];    /* schema, queues, buffers, ops: where each value is */
    bool done[4];         /* that array was streamed in place */
    json_t *schema;       /* the schema value (a deep copy) */
} top_level;

/* The top-level object: queues and buffers stream in place, ops too once both came; every
 * other value (schema, unknown keys, arrays that must wait) is checked by the strict loader. */
static int scan_top(builder *b, const scan *s, bool fast, top_level *t)
{
    static const char *keys[] = {"schema", "queues", "buffers", "ops"};
    const char *buf = s->buf;
    size_t len = s->len;
    golden_strmap seen = {0};
    char **keep = NULL;
    size_t nkeep = 0;
    int rc = GOLDEN_ERR;
    size_t p = skip_ws(s, 0);
    if (p >= len || buf[p] != '{') {
        scan_fail(s, p, "a graph must be a JSON object");
        goto done;
    }
    p = skip_ws(s, p + 1);
    while (p < len && buf[p] != '}') {
        size_t kend = 0;
        int which = -1;
        if (top_key(s, p, &kend, &seen, &keep, &nkeep, &which) != 0)
            goto done;
        size_t colon = skip_ws(s, kend);
        if (colon >= len || buf[colon] != ':') {
            scan_fail(s, colon, "expected ':'");
            goto done;
        }
        size_t v = skip_ws(s, colon + 1), vend = 0;
        bool now = which == 1 || which == 2 || (which == 3 && t->done[1] && t->done[2]);
        if (now) {
            element_fn fn = which == 1 ? add_queue : which == 2 ? add_buffer : add_op;
            if (stream_array(b, s, v, len, keys[which], fn, which > 1 && fast, &vend) != 0)
                goto done;
            t->done[which] = true;
        } else if (which == 3) {
            if (!(vend = skip_value(s, v, NULL))) {
                scan_fail(s, v, "malformed JSON value");
                goto done;
            }
        } else {
            golden_doc *d = NULL;
            if (strict_value(s, v, len, 1, &d) != 0)
                goto done;
            if (which == 0 && !(t->schema = json_deep_copy(golden_doc_root(d)))) {
                golden_doc_free(d);
                golden_fail_what(s->err, GOLDEN_ENOMEM, s->path, "out of memory");
                goto done;
            }
            golden_doc_free(d);
            vend = skip_value(s, v, NULL);
        }
        if (which >= 0) {
            t->span[which][0] = v;
            t->span[which][1] = vend;
        }
        p = skip_ws(s, vend);
        if (p < len && buf[p] == ',') {
            p = skip_ws(s, p + 1);
            if (p >= len || buf[p] != '"') {
                scan_fail(s, p, "expected a key after ','");
                goto done;
            }
        } else if (p >= len || buf[p] != '}') {
            scan_fail(s, p, "expected ',' or '}'");
            goto done;
        }
    }
    if (p >= len || skip_ws(s, p + 1) != len) {
        scan_fail(s, p, "trailing data after the graph object");
        goto done;
    }
    rc = GOLDEN_OK;
done:
    golden_strmap_free(&seen);
    for (size_t k = 0; k < nkeep; k++)
        free(keep[k]);
    free(keep);
    return rc;
}

static int stream_load(const char *path, const char *buf, size_t len, golden_progress *progress,
                       bool fast, golden_graph **out, golden_error *err)
{
    size_t cursor[2] = {0, 1};
    scan s = {buf, len, path, err, progress, cursor};
    builder b;
    if (builder_init(&b, path, NULL, err) != 0)
        return GOLDEN_ERR;
    top_level t;
    memset(&t, 0, sizeof t);
    int rc = GOLDEN_ERR;
    size_t end;
    if (scan_top(&b, &s, fast, &t) != 0 || check_schema_name(&b, t.schema, NULL) != 0)
        goto done;
    for (int k = 1; k < 4; k++)
        if (!t.span[k][1] && k != 2) {
            golden_fail_what(err, GOLDEN_EINVAL, path, "missing required \"%s\"",
                             k == 1 ? "queues" : "ops");
            goto done;
        }
    /* arrays that came before what they name stream now, in dependency order */
    if ((!t.done[1] &&
         stream_array(&b, &s, t.span[1][0], t.span[1][1], "queues", add_queue, false, &end) != 0) ||
        (t.span[2][1] && !t.done[2] &&
         stream_array(&b, &s, t.span[2][0], t.span[2][1], "buffers", add_buffer, fast, &end) != 0) ||
        (!t.done[3] &&
         stream_array(&b, &s, t.span[3][0], t.span[3][1], "ops", add_op, fast, &end) != 0))
        goto done;
    if (resolve(&b) != 0 || build_queue_orders(&b) != 0)
        goto done;
    rc = GOLDEN_OK;
done:
    json_decref(t.schema);
    builder_free(&b);
    if (rc != GOLDEN_OK) {
        golden_graph_free(b.g);
        return rc;
    }
    *out = b.g;
    return GOLDEN_OK;
}

/* Read the whole file into memory. read(), not mmap(): a file that shrinks while it is read is
 * a short read (then judged as the bytes it holds), never a SIGBUS, and the library installs
 * no signal handler. */
static int read_whole(const char *path, int fd, size_t hint, char **out, size_t *outlen,
                      golden_error *err)
{
    size_t cap = hint + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory for a %zu-byte graph", hint);
    for (;;) {
        if (n == cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return golden_fail_what(err, golden_code_from_errno(e), path, "cannot read: %s",
                                    strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = buf;
    *outlen = n;
    return GOLDEN_OK;
}

static int load_tree(const char *path, golden_graph **out, golden_error *err)
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

int golden_graph_load_file(const char *path, golden_graph **out, golden_error *err)
{
    return golden_graph_load_file_opts(path, NULL, out, err);
}

int golden_graph_load_file_progress(const char *path, golden_progress *progress,
                                    golden_graph **out, golden_error *err)
{
    golden_graph_load_options o = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, -1, false, progress};
    return golden_graph_load_file_opts(path, &o, out, err);
}

int golden_graph_load_file_opts(const char *path, const golden_graph_load_options *opts,
                                golden_graph **out, golden_error *err)
{
    *out = NULL;
    golden_graph_load_options o = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, -1, false, NULL};
    if (opts) {
        if (opts->version != GOLDEN_GRAPH_LOAD_OPTIONS_VERSION)
            return golden_fail_what(err, GOLDEN_EINVAL, path, "graph load options of version %u "
                                    "(this library knows %u)", opts->version,
                                    GOLDEN_GRAPH_LOAD_OPTIONS_VERSION);
        o = *opts;
    }
    size_t threshold = o.stream_bytes < 0 ? GOLDEN_GRAPH_STREAM_DEFAULT : (size_t)o.stream_bytes;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "%s", strerror(errno));
    struct stat st;
    char head[64];
    ssize_t nh = 0;
    bool big = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= threshold;
    if (big)
        nh = pread(fd, head, sizeof head, 0);
    ssize_t i = 0;
    while (i < nh && strchr(" \t\r\n", head[i]))
        i++;
    if (!big || i >= nh || head[i] != '{') {
        close(fd);
        return load_tree(path, out, err);
    }
    char *buf = NULL;
    size_t len = 0;
    int rc = read_whole(path, fd, (size_t)st.st_size, &buf, &len, err);
    close(fd);
    if (rc != 0)
        return rc;
    if (o.progress)
        o.progress->total = len;
    rc = stream_load(path, buf, len, o.progress, !o.no_fast_ops, out, err);
    free(buf);
    return rc;
}

void golden_graph_free(golden_graph *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->nqueues; i++)
        free(g->queues[i].id);
    for (uint32_t i = 0; i < g->nbuffers; i++)
        free(g->buffers[i].id);
    for (uint32_t i = 0; i < g->nops; i++)
        free(g->ops[i].id);
    for (uint32_t i = 0; i < g->nevents; i++)
        free(g->events[i].id);
    for (uint32_t i = 0; i < g->nspaces; i++)
        free(g->spaces[i]);
    for (uint32_t i = 0; i < g->nfamilies; i++)
        free(g->families[i]);
    free(g->queues);
    free(g->buffers);
    free(g->ops);
    free(g->accesses);
    free(g->after);
    free(g->barrier_queues);
    free(g->events);
    free(g->spaces);
    free(g->families);
    free(g->domain_chip);
    free(g->domain_space);
    free(g->qops_first);
    free(g->qops_count);
    free(g->qops);
    graph_index *ix = g->index;
    if (ix) {
        golden_strmap_free(&ix->ops);
        golden_strmap_free(&ix->buffers);
        golden_strmap_free(&ix->queues);
        free(ix);
    }
    free(g->name);
    free(g);
}

uint32_t golden_graph_find_op(const golden_graph *g, const char *id)
{
    return strmap_get(&((graph_index *)g->index)->ops, id);
}

uint32_t golden_graph_find_buffer(const golden_graph *g, const char *id)
{
    return strmap_get(&((graph_index *)g->index)->buffers, id);
}

uint32_t golden_graph_find_queue(const golden_graph *g, const char *id)
{
    return strmap_get(&((graph_index *)g->index)->queues, id);
}
