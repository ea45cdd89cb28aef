/* The one set of graph rules: both loaders describe each queue, buffer and op they read, and
 * these functions judge the description (ids known and unique, ranges inside buffers, ...) and
 * build the model from it. */
#include "graph/build.h"
#include "util/vec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---- */
int graph_grow(void **arr, size_t *cap, size_t n, size_t sz)
{
    return vec_reserve(arr, cap, n + 1, sz, 64); /* room for element n */
}

/* where = file:line:col of the node, or of the slot parent[key] / parent[index] (true, false and
 * null share one node each and have no place of their own), else name#pointer. */
static void fail_where(builder *b, const json_t *node, const json_t *parent, const char *key,
                       size_t index, const char *pointer)
{
    int line = 0, col = 0;
    if (b->doc && node && golden_doc_line(b->doc, node, &line, &col) && line > 0)
        golden_doc_where(b->doc, node, b->err->where, sizeof b->err->where);
    else if (b->doc && parent && golden_doc_child_line(b->doc, parent, key, index, &line, &col) &&
             line > 0)
        golden_doc_child_where(b->doc, parent, key, index, b->err->where, sizeof b->err->where);
    else
        snprintf(b->err->where, sizeof b->err->where, "%s#%s", b->name, pointer);
}

int graph_fail_at(builder *b, const json_t *node, const char *pointer, const char *fmt, ...)
{
    if (!b->err)
        return GOLDEN_ERR;
    fail_where(b, node, NULL, NULL, 0, pointer);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err->what, sizeof b->err->what, fmt, ap);
    va_end(ap);
    b->err->code = GOLDEN_EINVAL;
    return GOLDEN_ERR;
}

int graph_fail_child(builder *b, const json_t *parent, const char *key, size_t index,
                     const char *pointer, const char *fmt, ...)
{
    if (!b->err)
        return GOLDEN_ERR;
    fail_where(b, key ? json_object_get(parent, key) : json_array_get(parent, index), parent, key,
               index, pointer);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err->what, sizeof b->err->what, fmt, ap);
    va_end(ap);
    b->err->code = GOLDEN_EINVAL;
    return GOLDEN_ERR;
}

int graph_nomem(builder *b)
{
    return golden_fail_what(b->err, GOLDEN_ENOMEM, b->name, "out of memory");
}

/* A JSON pointer into buf, built only where a broken rule is said (never on the hot path). */
static const char *at(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *at(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return buf;
}

/* A rule broken: said (report) or only signalled to the fast path (1). */
#define BROKEN(node, ptr, ...) (report ? graph_fail_at(b, (node), (ptr), __VA_ARGS__) : 1)

static uint32_t lookup(const golden_strmap *m, slice k)
{
    uint64_t v;
    return lg_strmap_get(m, k.s, k.n, &v) ? (uint32_t)v : GOLDEN_NONE;
}

/* An id in one of the graph's id maps. */
static uint32_t id_lookup(const lg_idmap *m, slice k)
{
    return lg_idmap_find(m, k.s, k.n, lg_id_hash(k.s, k.n), NULL);
}

/* A NUL-terminated copy (names never hold NUL once the rules passed them). */
static char *copy(slice x)
{
    char *c = malloc((size_t)x.n + 1);
    if (c) {
        memcpy(c, x.s, x.n);
        c[x.n] = '\0';
    }
    return c;
}

/* A name is non-empty and has no NUL byte: a NUL would cut it where C strings are used and let
 * two different ids collide. */
static bool name_ok(slice x)
{
    return x.n > 0 && !memchr(x.s, '\0', x.n);
}

static const char *name_problem(slice x)
{
    return x.n ? "must not contain a NUL byte" : "must be a non-empty string";
}

static int intern(builder *b, golden_strmap *m, char ***arr, uint32_t *n, slice s, uint32_t *out)
{
    uint32_t v = lookup(m, s);
    if (v != GOLDEN_NONE) {
        *out = v;
        return 0;
    }
    char **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na)
        return graph_nomem(b);
    *arr = na;
    if (!(na[*n] = copy(s)))
        return graph_nomem(b);
    if (lg_strmap_put(m, na[*n], s.n, *n, NULL) < 0) {
        free(na[*n]); /* not counted in *n yet: nothing else would free it */
        na[*n] = NULL;
        return graph_nomem(b);
    }
    *out = (*n)++;
    return 0;
}

/* The index of event `name` (its hash h), created on first mention by op `first_op`; `known`
 * is its index when the check already looked it up (GOLDEN_NONE: look it up). */
static int intern_event(builder *b, slice name, uint64_t h, uint32_t known, uint32_t first_op,
                        uint32_t *out)
{
    golden_graph *g = b->g;
    size_t slot = SIZE_MAX;
    if (lg_idmap_room(&b->events) != 0)
        return graph_nomem(b);
    uint32_t e = known != GOLDEN_NONE ? known : lg_idmap_find(&b->events, name.s, name.n, h, &slot);
    if (e == GOLDEN_NONE) {
        if (graph_grow((void **)&g->events, &b->cap_events, g->nevents, sizeof *g->events) != 0)
            return graph_nomem(b);
        golden_event *ne = g->events;
        e = g->nevents;
        ne[e].signal = GOLDEN_NONE;
        ne[e].first_op = first_op;
        if (!(ne[e].id = graph_name_copy(g->index, name.s, name.n)))
            return graph_nomem(b);
        g->nevents++;
        if (lg_idmap_insert_at(&b->events, slot, ne[e].id, name.n, h, e) < 0)
            return graph_nomem(b);
    }
    *out = e;
    return 0;
}

static int domain_of(builder *b, int64_t chip, uint32_t space, uint32_t *out)
{
    char key[64];
    int n = snprintf(key, sizeof key, "%" PRId64 "/%" PRIu32, chip, space);
    uint32_t before = b->g->ndomains;
    if (intern(b, &b->domains, &b->domain_keys, &b->ndomain_keys, slice_of(key, (size_t)n),
               out) != 0)
        return GOLDEN_ERR;
    if (b->ndomain_keys != before) {
        golden_graph *g = b->g;
        int64_t *dc = realloc(g->domain_chip, b->ndomain_keys * sizeof *dc);
        if (!dc)
            return graph_nomem(b);
        g->domain_chip = dc;
        uint32_t *ds = realloc(g->domain_space, b->ndomain_keys * sizeof *ds);
        if (!ds)
            return graph_nomem(b);
        g->domain_space = ds;
        dc[*out] = chip;
        ds[*out] = space;
        g->ndomains = b->ndomain_keys;
    }
    return GOLDEN_OK;
}

static int add_ref(builder *b, pending_ref **v, size_t *n, size_t *cap, uint32_t owner,
                   uint32_t k, slice name, const json_t *node)
{
    if (graph_grow((void **)v, cap, *n, sizeof **v) != 0)
        return graph_nomem(b);
    pending_ref *r = &(*v)[*n];
    if (!(r->name = copy(name)))
        return graph_nomem(b);
    r->len = name.n;
    r->owner = owner;
    r->k = k;
    r->node = b->keep_nodes ? node : NULL;
    (*n)++;
    return GOLDEN_OK;
}

/* ---- queues ---- */
int graph_add_queue(builder *b, slice id, uint64_t chip, const json_t *node, size_t idx)
{
    const bool report = true;
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    char pb[64];
#define ptr at(pb, sizeof pb, "/queues/%zu", idx)
    if (!name_ok(id))
        return BROKEN(json_object_get(node, "id"), ptr, "\"id\" %s", name_problem(id));
    if (g->nqueues >= GOLDEN_NONE - 1)
        return BROKEN(node, ptr, "too many queues");
    if (graph_grow((void **)&g->queues, &b->cap_queues, g->nqueues, sizeof *g->queues) != 0)
        return graph_nomem(b);
    golden_queue *gq = &g->queues[g->nqueues];
    if (!(gq->id = copy(id)))
        return graph_nomem(b);
    gq->chip = (int64_t)chip;
    uint32_t had;
    int r = lg_idmap_put(&ix->queues, gq->id, id.n, &had);
    g->nqueues++;
    if (r < 0)
        return graph_nomem(b);
    if (r > 0)
        return BROKEN(node, ptr, "duplicate queue id \"%s\"", gq->id);
#undef ptr
    return GOLDEN_OK;
}

/* ---- buffers ---- */
int graph_check_buffer(builder *b, const buffer_desc *d, size_t idx, bool report)
{
    const golden_graph *g = b->g;
    char pb[64];
#define ptr at(pb, sizeof pb, "/buffers/%zu", idx)
    static const char *req[] = {"id", "chip", "space", "address", "size"};
    const bool has[] = {d->has_id, d->has_chip, d->has_space, d->has_address, d->has_size};
    for (int k = 0; k < 5; k++)
        if (!has[k])
            return BROKEN(d->node, ptr, "missing required \"%s\"", req[k]);
    if (!name_ok(d->id))
        return BROKEN(json_object_get(d->node, "id"), ptr, "\"id\" %s", name_problem(d->id));
    if (!name_ok(d->space))
        return BROKEN(json_object_get(d->node, "space"), ptr, "\"space\" %s",
                      name_problem(d->space));
    if (d->address + d->size < d->address)
        return BROKEN(d->node, ptr, "buffer \"%.*s\" ends beyond the address space",
                      (int)d->id.n, d->id.s);
    if (g->nbuffers >= GOLDEN_NONE - 1)
        return BROKEN(d->node, ptr, "too many buffers");
    if (id_lookup(&((graph_index *)g->index)->buffers, d->id) != GOLDEN_NONE)
        return BROKEN(d->node, ptr, "duplicate buffer id \"%.*s\"", (int)d->id.n, d->id.s);
    if (d->has_live && (d->nlive != 2 || !name_ok(d->live[0]) || !name_ok(d->live[1])))
        return BROKEN(json_object_get(d->node, "live"), ptr,
                      "\"live\" must be [first_op, last_op] (op ids)");
    if (d->has_inplace && !name_ok(d->inplace_of))
        return BROKEN(json_object_get(d->node, "inplace_of"), ptr,
                      "\"inplace_of\" must be a buffer id");
#undef ptr
    return GOLDEN_OK;
}

int graph_build_buffer(builder *b, const buffer_desc *d)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    if (graph_grow((void **)&g->buffers, &b->cap_buffers, g->nbuffers, sizeof *g->buffers) != 0)
        return graph_nomem(b);
    uint32_t bi = g->nbuffers;
    golden_buffer *gb = &g->buffers[bi];
    memset(gb, 0, sizeof *gb);
    if (!(gb->id = copy(d->id)))
        return graph_nomem(b);
    g->nbuffers++;
    gb->chip = (int64_t)d->chip;
    gb->address = d->address;
    gb->size = d->size;
    gb->live_first = gb->live_last = gb->inplace_of = GOLDEN_NONE;
    if (intern(b, &b->spaces, &g->spaces, &g->nspaces, d->space, &gb->space) != 0 ||
        domain_of(b, gb->chip, gb->space, &gb->domain) != 0)
        return GOLDEN_ERR;
    uint32_t had;
    if (lg_idmap_put(&ix->buffers, gb->id, d->id.n, &had) < 0)
        return graph_nomem(b);
    const json_t *live = json_object_get(d->node, "live");
    for (uint32_t k = 0; k < d->nlive; k++)
        if (add_ref(b, &b->buf_refs, &b->nbuf_refs, &b->cap_buf_refs, bi, k, d->live[k],
                    json_array_get(live, k)) != 0)
            return GOLDEN_ERR;
    if (d->has_inplace &&
        add_ref(b, &b->buf_refs, &b->nbuf_refs, &b->cap_buf_refs, bi, 2, d->inplace_of,
                json_object_get(d->node, "inplace_of")) != 0)
        return GOLDEN_ERR;
    return GOLDEN_OK;
}

/* ---- ops ---- */
static int parse_kind(slice s, golden_op_kind *k)
{
    static const char *names[] = {"compute", "signal", "wait", "barrier"};
    for (int i = 0; i < 4; i++)
        if (strlen(names[i]) == s.n && memcmp(s.s, names[i], s.n) == 0) {
            *k = (golden_op_kind)i;
            return 0;
        }
    return -1;
}

/* Which fields the kind asks for and allows. */
static int check_op_shape(builder *b, const op_desc *d, size_t idx, bool report)
{
    char pb[96];
#define ptr at(pb, sizeof pb, "/ops/%zu", idx)
    const char *kn = golden_op_kind_name(d->k);
    bool barrier = d->k == GOLDEN_OP_BARRIER;
    bool sync = d->k == GOLDEN_OP_SIGNAL || d->k == GOLDEN_OP_WAIT;
    if (barrier && !d->has_queues)
        return BROKEN(d->node, ptr, "missing required \"queues\"");
    if (d->k != GOLDEN_OP_COMPUTE && d->nacc)
        return BROKEN(d->node, ptr, "op \"%.*s\": a %s makes no buffer accesses", (int)d->id.n,
                      d->id.s, kn);
    if (!barrier && d->has_queues)
        return BROKEN(d->node, ptr, "op \"%.*s\": only a barrier lists \"queues\"", (int)d->id.n,
                      d->id.s);
    if (!barrier && !d->has_queue)
        return BROKEN(d->node, ptr, "missing required \"queue\"");
    if (sync && !d->has_event)
        return BROKEN(d->node, ptr, "missing required \"event\"");
    if (barrier && d->has_queue)
        return BROKEN(d->node, ptr, "op \"%.*s\": a barrier lists \"queues\", not \"queue\"",
                      (int)d->id.n, d->id.s);
    if (d->has_event && !sync)
        return BROKEN(d->node, ptr, "op \"%.*s\": only a signal or a wait names an event",
                      (int)d->id.n, d->id.s);
    static const char *names[] = {"queue", "family", "event"};
    const slice *vals[] = {&d->queue, &d->family, &d->event};
    const bool has[] = {d->has_queue, d->has_family, d->has_event};
    for (int k = 0; k < 3; k++)
        if (has[k] && !name_ok(*vals[k]))
            return BROKEN(json_object_get(d->node, names[k]),
                          at(pb, sizeof pb, "/ops/%zu/%s", idx, names[k]), "\"%s\" %s",
                          names[k], name_problem(*vals[k]));
#undef ptr
    return GOLDEN_OK;
}

/* Every access names a known buffer and stays inside it. */
static int check_accesses(builder *b, op_desc *d, size_t idx, bool report)
{
    const golden_graph *g = b->g;
    char pb[128];
    for (size_t k = 0; k < d->nacc; k++) {
        op_access *a = &d->acc[k];
#define p at(pb, sizeof pb, "/ops/%zu/%s/%" PRIu32, idx, a->write ? "writes" : "reads", a->index)
        if (!name_ok(a->buffer))
            return BROKEN(a->node, p, "\"buffer\" %s", name_problem(a->buffer));
        /* tiles of one buffer come in runs: try the last buffer before hashing */
        uint32_t buf = GOLDEN_NONE;
        if (a->buf_known)
            buf = a->buf;
        else if (d->last_buf < g->nbuffers &&
            strncmp(g->buffers[d->last_buf].id, a->buffer.s, a->buffer.n) == 0 &&
            g->buffers[d->last_buf].id[a->buffer.n] == '\0')
            buf = d->last_buf;
        else
            buf = id_lookup(&((graph_index *)g->index)->buffers, a->buffer);
        if (buf == GOLDEN_NONE)
            return BROKEN(a->node, p, "op \"%.*s\": unknown buffer \"%.*s\"", (int)d->id.n,
                          d->id.s, (int)a->buffer.n, a->buffer.s);
        d->last_buf = a->buf = buf;
        uint64_t bs = g->buffers[buf].size, off = a->has_offset ? a->offset : 0;
        uint64_t size = a->has_size ? a->size : (off <= bs ? bs - off : 0);
        if (off > bs || size > bs - off)
            return BROKEN(a->node, p,
                          "op \"%.*s\": range [%" PRIu64 ", %" PRIu64 ") is outside buffer "
                          "\"%.*s\" of %" PRIu64 " bytes", (int)d->id.n, d->id.s, off, off + size,
                          (int)a->buffer.n, a->buffer.s, bs);
        a->offset = off;
        a->size = size;
#undef p
    }
    if (g->naccesses + d->nacc >= GOLDEN_NONE - 1)
        return BROKEN(d->node, at(pb, sizeof pb, "/ops/%zu", idx), "too many accesses");
    return GOLDEN_OK;
}

/* A barrier's queues are known, each listed once; `after` entries are names. */
static int check_lists(builder *b, op_desc *d, size_t idx, bool report)
{
    const golden_graph *g = b->g;
    const json_t *ql = json_object_get(d->node, "queues"), *al = json_object_get(d->node, "after");
    char pb[160];
    for (size_t k = 0; k < d->nafter; k++)
        if (!name_ok(d->after[k]))
            return BROKEN(json_array_get(al, k), at(pb, sizeof pb, "/ops/%zu/after/%zu", idx, k),
                          "op \"%.*s\": \"after\" lists op ids", (int)d->id.n, d->id.s);
    if (graph_grow((void **)&d->qidx, &d->cap_qidx, d->nqueues, sizeof *d->qidx) != 0)
        return report ? graph_nomem(b) : -1;
    for (size_t k = 0; k < d->nqueues; k++) {
        slice x = d->queues[k];
#define p at(pb, sizeof pb, "/ops/%zu/queues/%zu", idx, k)
        if (!name_ok(x))
            return BROKEN(json_array_get(ql, k), p, "barrier \"%.*s\": \"queues\" lists queue ids",
                          (int)d->id.n, d->id.s);
        uint32_t q = id_lookup(&((graph_index *)g->index)->queues, x);
        if (q == GOLDEN_NONE)
            return BROKEN(json_array_get(ql, k), p, "barrier \"%.*s\" names unknown queue \"%.*s\"",
                          (int)d->id.n, d->id.s, (int)x.n, x.s);
        for (size_t m = 0; m < k; m++)
            if (d->qidx[m] == q)
                return BROKEN(json_array_get(ql, k), p, "barrier \"%.*s\" names queue \"%.*s\" twice",
                              (int)d->id.n, d->id.s, (int)x.n, x.s);
        d->qidx[k] = q;
#undef p
    }
    if (d->k == GOLDEN_OP_BARRIER && d->nqueues == 0)
        return BROKEN(d->node, at(pb, sizeof pb, "/ops/%zu", idx), "barrier \"%.*s\" names no queue",
                      (int)d->id.n, d->id.s);
    return GOLDEN_OK;
}

int graph_check_op(builder *b, op_desc *d, size_t idx, bool report)
{
    const golden_graph *g = b->g;
    graph_index *ix = g->index;
    char pb[96];
#define ptr at(pb, sizeof pb, "/ops/%zu", idx)
    if (!d->has_id)
        return BROKEN(d->node, ptr, "missing required \"id\"");
    if (!name_ok(d->id))
        return BROKEN(json_object_get(d->node, "id"), ptr, "\"id\" %s", name_problem(d->id));
    d->k = GOLDEN_OP_COMPUTE;
    if (d->has_kind && parse_kind(d->kind, &d->k) != 0)
        return BROKEN(json_object_get(d->node, "kind"), at(pb, sizeof pb, "/ops/%zu/kind", idx),
                      "op \"%.*s\": unknown kind \"%.*s\" (compute, signal, wait or barrier)",
                      (int)d->id.n, d->id.s, (int)d->kind.n, d->kind.s);
    if (g->nops >= GOLDEN_NONE - 1)
        return BROKEN(d->node, ptr, "too many ops");
    /* one probe for the id: the build inserts at the free slot it found (room made first, so
     * the slot stays valid; making room changes no entry) */
    if (lg_idmap_room(&ix->ops) != 0)
        return report ? graph_nomem(b) : -1;
    if (!d->has_id_hash)
        d->id_hash = lg_id_hash(d->id.s, d->id.n);
    if (lg_idmap_find(&ix->ops, d->id.s, d->id.n, d->id_hash, &d->id_slot) != GOLDEN_NONE)
        return BROKEN(d->node, ptr, "duplicate op id \"%.*s\"", (int)d->id.n, d->id.s);
    int r = check_op_shape(b, d, idx, report);
    if (r != 0)
        return r;
    d->q = GOLDEN_NONE;
    if (d->has_queue &&
        (d->q = d->q_known ? d->q_pre : id_lookup(&ix->queues, d->queue)) == GOLDEN_NONE)
        return BROKEN(json_object_get(d->node, "queue"), at(pb, sizeof pb, "/ops/%zu/queue", idx), "op \"%.*s\": unknown queue \"%.*s\"",
                      (int)d->id.n, d->id.s, (int)d->queue.n, d->queue.s);
    d->ev = GOLDEN_NONE;
    if (d->has_event) {
        if (!d->has_ev_hash)
            d->ev_hash = lg_id_hash(d->event.s, d->event.n);
        d->ev = lg_idmap_find(&b->events, d->event.s, d->event.n, d->ev_hash, NULL);
    }
    if (d->has_event && d->k == GOLDEN_OP_SIGNAL) {
        uint32_t e = d->ev;
        if (e != GOLDEN_NONE && g->events[e].signal != GOLDEN_NONE)
            return BROKEN(json_object_get(d->node, "event"), at(pb, sizeof pb, "/ops/%zu/event", idx),
                          "event \"%.*s\" is signalled twice (by \"%s\" and \"%.*s\")",
                          (int)d->event.n, d->event.s, g->ops[g->events[e].signal].id,
                          (int)d->id.n, d->id.s);
    }
    if (d->has_data_size && d->data_size > INT64_MAX)
        return BROKEN(d->node, ptr, "op \"%.*s\": data_size too large", (int)d->id.n, d->id.s);
#undef ptr
    if ((r = check_accesses(b, d, idx, report)) != 0)
        return r;
    return check_lists(b, d, idx, report);
}

/* Build a checked op (graph_check_op returned 0 for this d). */
int graph_build_op(builder *b, op_desc *d)
{
    golden_graph *g = b->g;
    graph_index *ix = g->index;
    if (graph_grow((void **)&g->ops, &b->cap_ops, g->nops, sizeof *g->ops) != 0)
        return graph_nomem(b);
    uint32_t i = g->nops;
    golden_op *op = &g->ops[i];
    memset(op, 0, sizeof *op);
    if (!(op->id = graph_name_copy(ix, d->id.s, d->id.n)))
        return graph_nomem(b);
    g->nops++;
    op->kind = d->k;
    op->queue = d->q;
    op->family = op->event = GOLDEN_NONE;
    op->acc_first = g->naccesses;
    op->after_first = (uint32_t)b->nafter_refs;
    op->bq_first = g->nbarrier_queues;
    op->data_size = d->has_data_size ? (int64_t)d->data_size : -1;
    if (lg_idmap_insert_at(&ix->ops, d->id_slot, op->id, d->id.n, d->id_hash, i) < 0)
        return graph_nomem(b);
    if (d->has_family && intern(b, &b->families, &g->families, &g->nfamilies, d->family,
                                &op->family) != 0)
        return GOLDEN_ERR;
    if (d->has_event) {
        uint32_t e = GOLDEN_NONE;
        if (intern_event(b, d->event, d->ev_hash, d->ev, i, &e) != 0)
            return GOLDEN_ERR;
        g->ops[i].event = e;
        if (d->k == GOLDEN_OP_SIGNAL)
            g->events[e].signal = i;
    }
    /* reads keep their list index, then writes theirs; an empty range touches no byte */
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < d->nacc; k++) {
            const op_access *a = &d->acc[k];
            if (a->write != (pass == 1) || !a->size)
                continue;
            if (graph_grow((void **)&g->accesses, &b->cap_acc, g->naccesses,
                           sizeof *g->accesses) != 0)
                return graph_nomem(b);
            golden_access *ga = &g->accesses[g->naccesses++];
            ga->op = i;
            ga->buffer = a->buf;
            ga->index = a->index;
            ga->write = a->write;
            ga->lo = g->buffers[a->buf].address + a->offset;
            ga->hi = ga->lo + a->size;
        }
    op = &g->ops[i];
    op->acc_count = g->naccesses - op->acc_first;
    const json_t *al = json_object_get(d->node, "after");
    for (size_t k = 0; k < d->nafter; k++)
        if (add_ref(b, &b->after_refs, &b->nafter_refs, &b->cap_after_refs, i, (uint32_t)k,
                    d->after[k], json_array_get(al, k)) != 0)
            return GOLDEN_ERR;
    op->after_count = (uint32_t)b->nafter_refs - op->after_first;
    for (size_t k = 0; k < d->nqueues; k++) {
        if (graph_grow((void **)&g->barrier_queues, &b->cap_bq, g->nbarrier_queues,
                       sizeof *g->barrier_queues) != 0)
            return graph_nomem(b);
        g->barrier_queues[g->nbarrier_queues++] = d->qidx[k];
    }
    op->bq_count = g->nbarrier_queues - op->bq_first;
    return GOLDEN_OK;
}

void graph_op_desc_free(op_desc *d)
{
    free(d->acc);
    free(d->after);
    free(d->queues);
    free(d->qidx);
}

/* ---- once every element is in ---- */
static int resolve_after(builder *b)
{
    golden_graph *g = b->g;
    const graph_index *ix = g->index;
    if (b->nafter_refs && !(g->after = malloc(b->nafter_refs * sizeof *g->after)))
        return graph_nomem(b);
    for (size_t i = 0; i < b->nafter_refs; i++) {
        const pending_ref *r = &b->after_refs[i];
        uint32_t pred = id_lookup(&ix->ops, slice_of(r->name, r->len));
        char pb[128];
#define p at(pb, sizeof pb, "/ops/%" PRIu32 "/after/%" PRIu32, r->owner, r->k)
        if (pred == GOLDEN_NONE)
            return graph_fail_at(b, r->node, p, "op \"%s\": after names unknown op \"%s\"",
                                 g->ops[r->owner].id, r->name);
        if (pred == r->owner)
            return graph_fail_at(b, r->node, p, "op \"%s\" is listed after itself",
                                 g->ops[r->owner].id);
        g->after[i] = pred;
#undef p
    }
    g->nafter = (uint32_t)b->nafter_refs;
    return GOLDEN_OK;
}

static int resolve_buffers(builder *b)
{
    golden_graph *g = b->g;
    const graph_index *ix = g->index;
    for (size_t i = 0; i < b->nbuf_refs; i++) {
        const pending_ref *r = &b->buf_refs[i];
        golden_buffer *gb = &g->buffers[r->owner];
        slice name = slice_of(r->name, r->len);
        char pb[128];
        if (r->k < 2) {
#define p at(pb, sizeof pb, "/buffers/%" PRIu32 "/live/%" PRIu32, r->owner, r->k)
            uint32_t op = id_lookup(&ix->ops, name);
            if (op == GOLDEN_NONE)
                return graph_fail_at(b, r->node, p, "buffer \"%s\": live names unknown op \"%s\"",
                                     gb->id, r->name);
            if (r->k == 0)
                gb->live_first = op;
            else
                gb->live_last = op;
#undef p
        } else {
#define p at(pb, sizeof pb, "/buffers/%" PRIu32 "/inplace_of", r->owner)
            uint32_t other = id_lookup(&ix->buffers, name);
            if (other == GOLDEN_NONE)
                return graph_fail_at(b, r->node, p,
                                     "buffer \"%s\": inplace_of names unknown buffer \"%s\"",
                                     gb->id, r->name);
            if (other == r->owner)
                return graph_fail_at(b, r->node, p, "buffer \"%s\" is declared in place of itself",
                                     gb->id);
            gb->inplace_of = other;
#undef p
        }
    }
    return GOLDEN_OK;
}

static int check_events(builder *b)
{
    golden_graph *g = b->g;
    for (uint32_t e = 0; e < g->nevents; e++)
        if (g->events[e].signal == GOLDEN_NONE) {
            char p[96];
            uint32_t w = g->events[e].first_op;
            snprintf(p, sizeof p, "/ops/%" PRIu32 "/event", w);
            const json_t *node = b->ops_arr ? json_object_get(json_array_get(b->ops_arr, w), "event")
                                            : NULL;
            return graph_fail_at(b, node, p, "wait \"%s\": event \"%s\" is never signalled",
                                 g->ops[w].id, g->events[e].id);
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
        return graph_nomem(b);
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
        return graph_nomem(b);
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

int graph_finish(builder *b)
{
    if (resolve_after(b) != 0 || resolve_buffers(b) != 0 || check_events(b) != 0)
        return GOLDEN_ERR;
    return build_queue_orders(b);
}

int graph_check_schema_name(builder *b, const json_t *schema, const json_t *root)
{
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "calculet-graph/v1") != 0 ||
        json_string_length(schema) != strlen("calculet-graph/v1"))
        return graph_fail_at(b, schema ? schema : root, schema ? "/schema" : "",
                             "\"schema\" must be \"calculet-graph/v1\"");
    return GOLDEN_OK;
}

/* ---- the builder ---- */
int graph_builder_init(builder *b, const char *name, const golden_doc *doc, golden_error *err)
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

void graph_builder_free(builder *b)
{
    lg_idmap_free(&b->events);
    lg_strmap_free(&b->spaces);
    lg_strmap_free(&b->families);
    lg_strmap_free(&b->domains);
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

int graph_builder_finish(builder *b, int rc, golden_graph **out)
{
    graph_builder_free(b);
    if (rc != GOLDEN_OK) {
        golden_graph_free(b->g);
        b->g = NULL;
        return GOLDEN_ERR;
    }
    *out = b->g;
    return GOLDEN_OK;
}
