/* Builds the calculet-graph/v1 model from a document tree and checks its structure: every id
 * known and unique, every event signalled exactly once, every range inside its buffer. */
#include "golden/graph.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---- a small string -> index hash map (keys are borrowed) ---- */
typedef struct {
    const char **keys;
    uint32_t *vals;
    size_t cap, n;
} strmap;

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int strmap_grow(strmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const char **nk = calloc(ncap, sizeof *nk);
    uint32_t *nv = malloc(ncap * sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = str_hash(m->keys[i]) & (ncap - 1);
        while (nk[j])
            j = (j + 1) & (ncap - 1);
        nk[j] = m->keys[i];
        nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
    return 0;
}

static uint32_t strmap_get(const strmap *m, const char *k)
{
    if (!m->cap)
        return GOLDEN_NONE;
    size_t j = str_hash(k) & (m->cap - 1);
    while (m->keys[j]) {
        if (strcmp(m->keys[j], k) == 0)
            return m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    return GOLDEN_NONE;
}

/* Insert k -> v; returns 1 when k was already present (nothing changed), -1 on no memory. */
static int strmap_put(strmap *m, const char *k, uint32_t v)
{
    if ((m->n + 1) * 2 > m->cap && strmap_grow(m) != 0)
        return -1;
    size_t j = str_hash(k) & (m->cap - 1);
    while (m->keys[j]) {
        if (strcmp(m->keys[j], k) == 0)
            return 1;
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = k;
    m->vals[j] = v;
    m->n++;
    return 0;
}

static void strmap_free(strmap *m)
{
    free(m->keys);
    free(m->vals);
}

typedef struct {
    strmap ops, buffers, queues;
} graph_index;

/* ---- building ---- */
typedef struct {
    const char *name;
    const golden_doc *doc;
    golden_error *err;
    golden_graph *g;
    strmap events, spaces, families, domains;
    char **domain_keys;
    uint32_t ndomain_keys;
} builder;

/* Fail at a node: file:line:col when the document knows it, else name#pointer. */
static int fail_at(builder *b, const json_t *node, const char *pointer, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(builder *b, const json_t *node, const char *pointer, const char *fmt, ...)
{
    if (!b->err)
        return GOLDEN_ERR;
    (void)node;
    snprintf(b->err->where, sizeof b->err->where, "%s#%s", b->name, pointer);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err->what, sizeof b->err->what, fmt, ap);
    va_end(ap);
    return GOLDEN_ERR;
}

static int nomem(builder *b)
{
    return golden_fail(b->err, b->name, "out of memory");
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
    if (!json_is_string(v) || json_string_length(v) == 0) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", ptr, key);
        fail_at(b, v, p, "\"%s\" must be a non-empty string", key);
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

static int intern(builder *b, strmap *m, char ***arr, uint32_t *n, const char *s, uint32_t *out)
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

static int load_queues(builder *b, const json_t *arr)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    size_t n = json_array_size(arr);
    if (n >= GOLDEN_NONE)
        return fail_at(b, arr, "/queues", "too many queues");
    if (n && !(g->queues = calloc(n, sizeof *g->queues)))
        return nomem(b);
    for (size_t i = 0; i < n; i++) {
        const json_t *q = json_array_get(arr, i);
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/queues/%zu", i);
        if (!json_is_object(q))
            return fail_at(b, q, ptr, "a queue must be an object");
        int bad = 0;
        const char *id = get_string(b, q, "id", ptr, true, &bad);
        if (bad)
            return GOLDEN_ERR;
        uint64_t chip;
        if (get_uint(b, q, "chip", ptr, true, &chip) != 0)
            return GOLDEN_ERR;
        golden_queue *gq = &g->queues[g->nqueues];
        if (!(gq->id = strdup(id)))
            return nomem(b);
        gq->chip = (int64_t)chip;
        g->nqueues++;
        int r = strmap_put(&ix->queues, gq->id, (uint32_t)i);
        if (r < 0)
            return nomem(b);
        if (r > 0)
            return fail_at(b, q, ptr, "duplicate queue id \"%s\"", id);
    }
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

static int load_buffers(builder *b, const json_t *arr)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    size_t n = json_array_size(arr);
    if (n >= GOLDEN_NONE)
        return fail_at(b, arr, "/buffers", "too many buffers");
    if (n && !(g->buffers = calloc(n, sizeof *g->buffers)))
        return nomem(b);
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(arr, i);
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/buffers/%zu", i);
        if (!json_is_object(o))
            return fail_at(b, o, ptr, "a buffer must be an object");
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
        golden_buffer *gb = &g->buffers[g->nbuffers];
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
        int r = strmap_put(&ix->buffers, gb->id, (uint32_t)i);
        if (r < 0)
            return nomem(b);
        if (r > 0)
            return fail_at(b, o, ptr, "duplicate buffer id \"%s\"", id);
    }
    return GOLDEN_OK;
}

/* Second look at buffers once ops are known: live ranges and in-place declarations. */
static int link_buffers(builder *b, const json_t *arr)
{
    golden_graph *g = b->g;
    for (uint32_t i = 0; i < g->nbuffers; i++) {
        const json_t *o = json_array_get(arr, i);
        golden_buffer *gb = &g->buffers[i];
        char ptr[96];
        const json_t *live = json_object_get(o, "live");
        if (live) {
            snprintf(ptr, sizeof ptr, "/buffers/%" PRIu32 "/live", i);
            if (!json_is_array(live) || json_array_size(live) != 2 ||
                !json_is_string(json_array_get(live, 0)) ||
                !json_is_string(json_array_get(live, 1)))
                return fail_at(b, live, ptr, "\"live\" must be [first_op, last_op]");
            for (int k = 0; k < 2; k++) {
                const char *opid = json_string_value(json_array_get(live, (size_t)k));
                uint32_t op = golden_graph_find_op(g, opid);
                if (op == GOLDEN_NONE) {
                    char p2[128];
                    snprintf(p2, sizeof p2, "%s/%d", ptr, k);
                    return fail_at(b, json_array_get(live, (size_t)k), p2,
                                   "buffer \"%s\": live names unknown op \"%s\"", gb->id, opid);
                }
                if (k == 0)
                    gb->live_first = op;
                else
                    gb->live_last = op;
            }
        }
        const json_t *ip = json_object_get(o, "inplace_of");
        if (ip) {
            snprintf(ptr, sizeof ptr, "/buffers/%" PRIu32 "/inplace_of", i);
            if (!json_is_string(ip))
                return fail_at(b, ip, ptr, "\"inplace_of\" must be a buffer id");
            uint32_t other = golden_graph_find_buffer(g, json_string_value(ip));
            if (other == GOLDEN_NONE)
                return fail_at(b, ip, ptr, "buffer \"%s\": inplace_of names unknown buffer \"%s\"",
                               gb->id, json_string_value(ip));
            if (other == i)
                return fail_at(b, ip, ptr, "buffer \"%s\" is declared in place of itself", gb->id);
            gb->inplace_of = other;
        }
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

static int load_ops(builder *b, const json_t *arr)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    size_t n = json_array_size(arr);
    if (n >= GOLDEN_NONE)
        return fail_at(b, arr, "/ops", "too many ops");
    if (n && !(g->ops = calloc(n, sizeof *g->ops)))
        return nomem(b);
    /* Pass 1: ids, kinds, and how much room accesses and edges need. */
    size_t nacc = 0, naft = 0, nbq = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(arr, i);
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/ops/%zu", i);
        if (!json_is_object(o))
            return fail_at(b, o, ptr, "an op must be an object");
        int bad = 0;
        const char *id = get_string(b, o, "id", ptr, true, &bad);
        const char *kind = bad ? NULL : get_string(b, o, "kind", ptr, false, &bad);
        if (bad)
            return GOLDEN_ERR;
        golden_op *op = &g->ops[g->nops];
        if (!(op->id = strdup(id)))
            return nomem(b);
        g->nops++;
        op->kind = GOLDEN_OP_COMPUTE;
        if (kind && parse_kind(kind, &op->kind) != 0) {
            char p[96];
            snprintf(p, sizeof p, "%s/kind", ptr);
            return fail_at(b, json_object_get(o, "kind"), p,
                           "op \"%s\": unknown kind \"%s\" (compute, signal, wait or barrier)",
                           id, kind);
        }
        int r = strmap_put(&ix->ops, op->id, (uint32_t)i);
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
        nacc += json_array_size(rd) + json_array_size(wr);
        naft += json_array_size(af);
        nbq += json_array_size(qs);
    }
    if (nacc >= GOLDEN_NONE || naft >= GOLDEN_NONE || nbq >= GOLDEN_NONE)
        return fail_at(b, arr, "/ops", "too many accesses or edges");
    if ((nacc && !(g->accesses = malloc(nacc * sizeof *g->accesses))) ||
        (naft && !(g->after = malloc(naft * sizeof *g->after))) ||
        (nbq && !(g->barrier_queues = malloc(nbq * sizeof *g->barrier_queues))))
        return nomem(b);

    /* Pass 2: everything else, now that every op id resolves. */
    for (uint32_t i = 0; i < g->nops; i++) {
        const json_t *o = json_array_get(arr, i);
        golden_op *op = &g->ops[i];
        char ptr[64];
        snprintf(ptr, sizeof ptr, "/ops/%" PRIu32, i);
        int bad = 0;
        const char *qid = get_string(b, o, "queue", ptr, op->kind != GOLDEN_OP_BARRIER, &bad);
        const char *fam = bad ? NULL : get_string(b, o, "family", ptr, false, &bad);
        const char *ev = bad ? NULL : get_string(b, o, "event", ptr,
                                                 op->kind == GOLDEN_OP_SIGNAL ||
                                                     op->kind == GOLDEN_OP_WAIT, &bad);
        if (bad)
            return GOLDEN_ERR;
        op->queue = op->family = op->event = GOLDEN_NONE;
        if (op->kind == GOLDEN_OP_BARRIER && qid)
            return fail_at(b, o, ptr, "op \"%s\": a barrier lists \"queues\", not \"queue\"", op->id);
        if (qid && (op->queue = golden_graph_find_queue(g, qid)) == GOLDEN_NONE) {
            char p[96];
            snprintf(p, sizeof p, "%s/queue", ptr);
            return fail_at(b, json_object_get(o, "queue"), p, "op \"%s\": unknown queue \"%s\"",
                           op->id, qid);
        }
        if (fam && intern(b, &b->families, &g->families, &g->nfamilies, fam, &op->family) != 0)
            return GOLDEN_ERR;
        if (ev && op->kind != GOLDEN_OP_SIGNAL && op->kind != GOLDEN_OP_WAIT)
            return fail_at(b, o, ptr, "op \"%s\": only a signal or a wait names an event", op->id);
        if (ev) {
            uint32_t before = g->nevents;
            uint32_t e = strmap_get(&b->events, ev);
            if (e == GOLDEN_NONE) {
                golden_event *ne = realloc(g->events, (g->nevents + 1) * sizeof *ne);
                if (!ne)
                    return nomem(b);
                g->events = ne;
                e = g->nevents;
                ne[e].signal = GOLDEN_NONE;
                if (!(ne[e].id = strdup(ev)))
                    return nomem(b);
                g->nevents++;
                if (strmap_put(&b->events, ne[e].id, e) < 0)
                    return nomem(b);
            }
            (void)before;
            op->event = e;
            if (op->kind == GOLDEN_OP_SIGNAL) {
                if (g->events[e].signal != GOLDEN_NONE) {
                    char p[96];
                    snprintf(p, sizeof p, "%s/event", ptr);
                    return fail_at(b, json_object_get(o, "event"), p,
                                   "event \"%s\" is signalled twice (by \"%s\" and \"%s\")", ev,
                                   g->ops[g->events[e].signal].id, op->id);
                }
                g->events[e].signal = i;
            }
        }
        int64_t ds = -1;
        uint64_t dsu;
        int r = get_uint(b, o, "data_size", ptr, false, &dsu);
        if (r < 0)
            return GOLDEN_ERR;
        if (r == 0) {
            if (dsu > INT64_MAX)
                return fail_at(b, o, ptr, "op \"%s\": data_size too large", op->id);
            ds = (int64_t)dsu;
        }
        op->data_size = ds;

        op->acc_first = g->naccesses;
        char p[96];
        snprintf(p, sizeof p, "%s/reads", ptr);
        const json_t *rd = json_object_get(o, "reads");
        if (rd && load_accesses(b, rd, p, i, false) != 0)
            return GOLDEN_ERR;
        snprintf(p, sizeof p, "%s/writes", ptr);
        const json_t *wr = json_object_get(o, "writes");
        if (wr && load_accesses(b, wr, p, i, true) != 0)
            return GOLDEN_ERR;
        op->acc_count = g->naccesses - op->acc_first;

        op->after_first = g->nafter;
        const json_t *af = json_object_get(o, "after");
        for (size_t k = 0; k < json_array_size(af); k++) {
            const json_t *s = json_array_get(af, k);
            snprintf(p, sizeof p, "%s/after/%zu", ptr, k);
            uint32_t pred = json_is_string(s) ? golden_graph_find_op(g, json_string_value(s))
                                              : GOLDEN_NONE;
            if (!json_is_string(s))
                return fail_at(b, s, p, "op \"%s\": \"after\" lists op ids", op->id);
            if (pred == GOLDEN_NONE)
                return fail_at(b, s, p, "op \"%s\": after names unknown op \"%s\"", op->id,
                               json_string_value(s));
            if (pred == i)
                return fail_at(b, s, p, "op \"%s\" is listed after itself", op->id);
            g->after[g->nafter++] = pred;
        }
        op->after_count = g->nafter - op->after_first;

        op->bq_first = g->nbarrier_queues;
        const json_t *qs = json_object_get(o, "queues");
        for (size_t k = 0; k < json_array_size(qs); k++) {
            const json_t *s = json_array_get(qs, k);
            snprintf(p, sizeof p, "%s/queues/%zu", ptr, k);
            uint32_t q = json_is_string(s) ? golden_graph_find_queue(g, json_string_value(s))
                                           : GOLDEN_NONE;
            if (!json_is_string(s))
                return fail_at(b, s, p, "barrier \"%s\": \"queues\" lists queue ids", op->id);
            if (q == GOLDEN_NONE)
                return fail_at(b, s, p, "barrier \"%s\" names unknown queue \"%s\"", op->id,
                               json_string_value(s));
            for (uint32_t m = op->bq_first; m < g->nbarrier_queues; m++)
                if (g->barrier_queues[m] == q)
                    return fail_at(b, s, p, "barrier \"%s\" names queue \"%s\" twice", op->id,
                                   json_string_value(s));
            g->barrier_queues[g->nbarrier_queues++] = q;
        }
        op->bq_count = g->nbarrier_queues - op->bq_first;
        if (op->kind == GOLDEN_OP_BARRIER && op->bq_count == 0)
            return fail_at(b, o, ptr, "barrier \"%s\" names no queue", op->id);
    }
    /* Every wait needs the one signal of its event. */
    for (uint32_t i = 0; i < g->nops; i++) {
        const golden_op *op = &g->ops[i];
        if (op->kind == GOLDEN_OP_WAIT && g->events[op->event].signal == GOLDEN_NONE) {
            char ptr[96];
            snprintf(ptr, sizeof ptr, "/ops/%" PRIu32 "/event", i);
            return fail_at(b, json_object_get(json_array_get(arr, i), "event"), ptr,
                           "wait \"%s\": event \"%s\" is never signalled", op->id,
                           g->events[op->event].id);
        }
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

int golden_graph_from_json(const json_t *root, const char *name, const golden_doc *doc,
                           golden_graph **out, golden_error *err)
{
    *out = NULL;
    builder b = {.name = name ? name : "graph", .doc = doc, .err = err};
    golden_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->index = calloc(1, sizeof(graph_index))) || !(g->name = strdup(b.name))) {
        golden_graph_free(g);
        return golden_fail(err, b.name, "out of memory");
    }
    b.g = g;
    int rc = GOLDEN_ERR;
    if (!json_is_object(root)) {
        fail_at(&b, root, "", "a graph must be a JSON object");
        goto done;
    }
    const json_t *schema = json_object_get(root, "schema");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "calculet-graph/v1") != 0) {
        fail_at(&b, schema ? schema : root, schema ? "/schema" : "",
                "\"schema\" must be \"calculet-graph/v1\"");
        goto done;
    }
    int bad = 0;
    const json_t *qs = get_array(&b, root, "queues", "", true, &bad);
    const json_t *bs = bad ? NULL : get_array(&b, root, "buffers", "", false, &bad);
    const json_t *os = bad ? NULL : get_array(&b, root, "ops", "", true, &bad);
    if (bad)
        goto done;
    if (load_queues(&b, qs) != 0 || (bs && load_buffers(&b, bs) != 0) || load_ops(&b, os) != 0 ||
        (bs && link_buffers(&b, bs) != 0) || build_queue_orders(&b) != 0)
        goto done;
    rc = GOLDEN_OK;
done:
    strmap_free(&b.events);
    strmap_free(&b.spaces);
    strmap_free(&b.families);
    strmap_free(&b.domains);
    for (uint32_t i = 0; i < b.ndomain_keys; i++)
        free(b.domain_keys[i]);
    free(b.domain_keys);
    if (rc != GOLDEN_OK) {
        golden_graph_free(g);
        return rc;
    }
    *out = g;
    return GOLDEN_OK;
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
        strmap_free(&ix->ops);
        strmap_free(&ix->buffers);
        strmap_free(&ix->queues);
        free(ix);
    }
    free(g->name);
    free(g);
}

int golden_graph_load_file(const char *path, golden_graph **out, golden_error *err)
{
    *out = NULL;
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return golden_failw(err, je.text, "%s:%d:%d", path, je.line, je.column);
    int rc = golden_graph_from_json(root, path, NULL, out, err);
    json_decref(root);
    return rc;
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
