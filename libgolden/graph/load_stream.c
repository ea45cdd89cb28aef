/* The streaming loader: a graph of millions of ops never becomes one tree. The top level is
 * scanned; each queue, buffer and op is read on its own (plain ones by a strict little parser,
 * the rest by the document layer's strict loader) and judged by the same rules (rules.c). */
#include "graph/build.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/pool.h"
#include "util/suggest.h"

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


/* ---- a fast path for plain ops and buffers: a strict little parser for their common shape
 * (known keys once each, ASCII strings without escapes, plain non-negative integers without
 * leading zeros, no trailing commas) into a description the rules judge quietly; anything
 * else (and anything the rules refuse) goes to the strict loader and the tree reader, so
 * there is one grammar and one message. ---- */
/* 0 = parsed; 1 = not the simple shape (the strict loader decides); -1 = out of memory */
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
    if (graph_grow(arr, cap, *n, sz) != 0)
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

static int flat_accesses(const scan *s, size_t *p, size_t hi, op_desc *f, bool write)
{
    size_t q = *p;
    uint32_t index = 0;
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
        op_access *a = &f->acc[f->nacc - 1];
        memset(a, 0, sizeof *a);
        a->write = write;
        a->index = index++;
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

/* ids: hashed as soon as they are read and their map slot prefetched, so that the probe's cache
 * miss overlaps the parsing of the rest of the op */
static int flat_parse_op(const scan *s, const builder *b, size_t p, size_t hi, op_desc *f,
                         size_t *end)
{
    /* b NULL: the reader thread of the pipeline, which must not touch the builder */
    f->has_id_hash = f->has_ev_hash = f->q_known = false;
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
                if (r == 0 && k == 0) {
                    f->id_hash = lg_id_hash(f->id.s, f->id.n);
                    f->has_id_hash = true;
                    if (b)
                        lg_idmap_prefetch(&((const graph_index *)b->g->index)->ops, f->id_hash);
                } else if (r == 0 && k == 4) {
                    f->ev_hash = lg_id_hash(f->event.s, f->event.n);
                    f->has_ev_hash = true;
                    if (b)
                        lg_idmap_prefetch(&b->events, f->ev_hash);
                }
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

static int flat_parse_buffer(const scan *s, size_t p, size_t hi, buffer_desc *f, size_t *end)
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

typedef enum { ELEM_QUEUE, ELEM_BUFFER, ELEM_OP } elem_kind;

/* An element the fast path did not take (or the rules refused quietly): the strict loader makes
 * a small tree of it and the rules speak with its file:line:col. */
static int strict_element(builder *b, const scan *s, size_t p, size_t hi, elem_kind kind,
                          size_t i, size_t *end)
{
    golden_doc *d = NULL;
    if (strict_value(s, p, hi, 2, &d) != 0)
        return GOLDEN_ERR;
    *end = skip_value(s, p, NULL);
    b->doc = d;
    int rc = kind == ELEM_QUEUE ? graph_queue_from_json(b, golden_doc_root(d), i)
             : kind == ELEM_BUFFER ? graph_buffer_from_json(b, golden_doc_root(d), i)
                                   : graph_op_from_json(b, golden_doc_root(d), i);
    b->doc = NULL;
    golden_doc_free(d);
    return rc;
}

/* ---- the ops and buffers arrays on two cores: a reader thread runs the fast parser over the elements in
 * document order into a ring of blocks of descriptions, while the caller judges and builds them
 * in the same order (the rules and the model stay on one thread). The reader never decides
 * anything: where it meets an element it does not take (not the plain shape, a separator other
 * than ',', out of memory) it stops, and the caller goes on from that element exactly as the
 * one-thread loop does, so every verdict and message (the first error in document order) is
 * the one-thread loader's. The descriptions and their vectors are allocated once per ring
 * slot and reused (no allocation crosses threads per element). Not through util/pool: the two
 * sides must run at once (a producer and a consumer), which lg_parallel_for does not promise;
 * when the thread cannot be started the one-thread loop reads the whole array. ---- */
#define PIPE_BLOCK 256
#define PIPE_NBLOCKS 8
#define PIPE_MIN_BYTES ((size_t)1 << 20)  /* less left of the file: not worth a thread */

typedef struct {
    op_desc d[PIPE_BLOCK];
    buffer_desc bd[PIPE_BLOCK]; /* the buffers array: the same ring */
    size_t start[PIPE_BLOCK], end[PIPE_BLOCK]; /* each element's bytes */
    size_t n;
    int stop;       /* 0: more blocks follow; 1: stopped before the element at stop_at;
                     * 2: after the last element comes something other than ',' */
    size_t stop_at;
} pipe_block;

typedef struct {
    const scan *s;
    const golden_graph *g;  /* read only: its queues and buffers (complete before the ops) */
    size_t p, hi;           /* the first element's start, the array's bound */
    elem_kind kind;         /* ELEM_OP or ELEM_BUFFER */
    pipe_block *blk;        /* PIPE_NBLOCKS of them */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t produced, consumed; /* blocks */
    bool cancel;
} op_pipe;

/* The reader looks up what the ops cannot change (every queue and buffer came before the ops
 * stream): an access's buffer and the op's queue, when found (the rules look again otherwise,
 * and speak). */
static void pipe_resolve(const golden_graph *g, op_desc *f, uint32_t *last)
{
    const graph_index *ix = g->index;
    for (size_t k = 0; k < f->nacc; k++) {
        op_access *a = &f->acc[k];
        slice x = a->buffer;
        if (!x.n || memchr(x.s, '\0', x.n))
            continue;
        uint32_t buf;
        if (*last < g->nbuffers && strncmp(g->buffers[*last].id, x.s, x.n) == 0 &&
            g->buffers[*last].id[x.n] == '\0')
            buf = *last;
        else
            buf = lg_idmap_find(&ix->buffers, x.s, x.n, lg_id_hash(x.s, x.n), NULL);
        if (buf != GOLDEN_NONE) {
            a->buf = *last = buf;
            a->buf_known = true;
        }
    }
    if (f->has_queue && f->queue.n) {
        f->q_pre = lg_idmap_find(&ix->queues, f->queue.s, f->queue.n,
                                 lg_id_hash(f->queue.s, f->queue.n), NULL);
        f->q_known = f->q_pre != GOLDEN_NONE;
    }
}

static void *pipe_reader(void *arg)
{
    op_pipe *pp = arg;
    const scan *s = pp->s;
    size_t p = pp->p, hi = pp->hi;
    uint32_t last = GOLDEN_NONE;
    for (;;) {
        pthread_mutex_lock(&pp->mu);
        while (!pp->cancel && pp->produced - pp->consumed >= PIPE_NBLOCKS)
            pthread_cond_wait(&pp->cv, &pp->mu);
        bool cancel = pp->cancel;
        size_t k = pp->produced;
        pthread_mutex_unlock(&pp->mu);
        if (cancel)
            return NULL;
        pipe_block *B = &pp->blk[k % PIPE_NBLOCKS];
        B->n = 0;
        B->stop = 0;
        while (B->n < PIPE_BLOCK) {
            op_desc *f = &B->d[B->n];
            size_t end = 0;
            if (pp->kind == ELEM_OP ? flat_parse_op(s, NULL, p, hi, f, &end) != 0
                                    : flat_parse_buffer(s, p, hi, &B->bd[B->n], &end) != 0) {
                B->stop = 1;
                B->stop_at = p;
                break;
            }
            if (pp->kind == ELEM_OP)
                pipe_resolve(pp->g, f, &last);
            B->start[B->n] = p;
            B->end[B->n++] = end;
            p = skip_ws(s, end);
            if (p < hi && s->buf[p] == ',') {
                p = skip_ws(s, p + 1);
                continue;
            }
            B->stop = 2;
            break;
        }
        int stop = B->stop;
        pthread_mutex_lock(&pp->mu);
        pp->produced++;
        pthread_cond_broadcast(&pp->cv);
        pthread_mutex_unlock(&pp->mu);
        if (stop)
            return NULL;
    }
}

/* Judge and build the reader's elements. Returns GOLDEN_OK with where to go on: *after false:
 * element *ip starts at *pp; *after true: element *ip ended at *endp (its separator is next).
 * 1: the thread could not be started (nothing done); GOLDEN_ERR: failed (err set). */
static int pipe_array(builder *b, const scan *s, elem_kind kind, size_t p, size_t hi,
                      uint32_t *last_buf, size_t *ip, size_t *pp_out, size_t *endp, bool *after)
{
    op_pipe pp;
    memset(&pp, 0, sizeof pp);
    pp.s = s;
    pp.g = b->g;
    pp.p = p;
    pp.hi = hi;
    pp.kind = kind;
    if (!(pp.blk = calloc(PIPE_NBLOCKS, sizeof *pp.blk)))
        return 1;
    pthread_mutex_init(&pp.mu, NULL);
    pthread_cond_init(&pp.cv, NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, pipe_reader, &pp) != 0) {
        pthread_cond_destroy(&pp.cv);
        pthread_mutex_destroy(&pp.mu);
        free(pp.blk);
        return 1;
    }
    const lg_idmap *ops = &((const graph_index *)b->g->index)->ops;
    int rc = GOLDEN_OK;
    size_t i = 0;
    for (bool done = false; !done;) {
        pthread_mutex_lock(&pp.mu);
        while (pp.produced == pp.consumed)
            pthread_cond_wait(&pp.cv, &pp.mu);
        pthread_mutex_unlock(&pp.mu);
        pipe_block *B = &pp.blk[pp.consumed % PIPE_NBLOCKS];
        for (size_t k = 0; k < B->n && rc == GOLDEN_OK; k++, i++) {
            size_t end = B->end[k];
            int r;
            if (kind == ELEM_BUFFER) {
                buffer_desc *fb = &B->bd[k];
                if ((r = graph_check_buffer(b, fb, i, false)) == 0)
                    r = graph_build_buffer(b, fb);
                else if (r < 0)
                    r = graph_nomem(b);
            } else {
                /* the op map's slot of an id a few elements on: its miss overlaps this one's
                 * work */
                if (k + 4 < B->n) {
                    lg_idmap_prefetch(ops, B->d[k + 4].id_hash);
                    if (B->d[k + 4].has_ev_hash)
                        lg_idmap_prefetch(&b->events, B->d[k + 4].ev_hash);
                }
                op_desc *f = &B->d[k];
                f->last_buf = *last_buf;
                r = graph_check_op(b, f, i, false);
                if (r == 0)
                    r = graph_build_op(b, f);
                else if (r < 0)
                    r = graph_nomem(b);
                *last_buf = f->last_buf;
            }
            /* the rules spoke (r > 0): the strict loader's own message for this element */
            if (r > 0)
                r = strict_element(b, s, B->start[k], hi, kind, i, &end);
            if (r != 0) {
                rc = GOLDEN_ERR;
                break;
            }
            if (s->progress)
                golden_progress_update(s->progress, end);
            *endp = end;
        }
        if (rc != GOLDEN_OK)
            break;
        if (B->stop == 1) {
            *after = false;
            *pp_out = B->stop_at;
            *ip = i;
            done = true;
        } else if (B->stop == 2) {
            *after = true;
            *ip = i - 1;
            done = true;
        }
        pthread_mutex_lock(&pp.mu);
        pp.consumed++;
        pthread_cond_broadcast(&pp.cv);
        pthread_mutex_unlock(&pp.mu);
    }
    pthread_mutex_lock(&pp.mu);
    pp.cancel = true;
    pthread_cond_broadcast(&pp.cv);
    pthread_mutex_unlock(&pp.mu);
    pthread_join(th, NULL);
    pthread_cond_destroy(&pp.cv);
    pthread_mutex_destroy(&pp.mu);
    for (size_t k = 0; k < PIPE_NBLOCKS; k++)
        for (size_t m = 0; m < PIPE_BLOCK; m++) {
            graph_op_desc_free(&pp.blk[k].d[m]);
            free(pp.blk[k].bd[m].live);
        }
    free(pp.blk);
    return rc;
}

/* One array of queues, buffers or ops, element by element. */
static int stream_array(builder *b, const scan *s, size_t lo, size_t hi, const char *key,
                        elem_kind kind, bool fast, size_t *endp)
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
    op_desc *f = NULL;
    buffer_desc *fb = NULL;
    if (fast && kind == ELEM_OP && !(f = calloc(1, sizeof *f)))
        return graph_nomem(b);
    if (fast && kind == ELEM_BUFFER && !(fb = calloc(1, sizeof *fb)))
        return graph_nomem(b);
    if (f)
        f->last_buf = GOLDEN_NONE;
    int rc = GOLDEN_OK;
    size_t i = 0, end = 0;
    bool after = false; /* element i is read already (by the pipeline): its separator is next */
    if ((f || fb) && hi - p >= PIPE_MIN_BYTES && lg_cpu_count() >= 2) {
        uint32_t none = GOLDEN_NONE;
        int r = pipe_array(b, s, kind, p, hi, f ? &f->last_buf : &none, &i, &p, &end, &after);
        if (r == GOLDEN_ERR)
            rc = GOLDEN_ERR;
    }
    for (; rc == GOLDEN_OK; i++) {
        if (!after) {
            int r = 1;
            /* the fast path reads the plain shape and asks the rules quietly; anything it does
             * not take (or the rules refuse) goes through the strict loader and the same rules */
            if (f) {
                r = flat_parse_op(s, b, p, hi, f, &end);
                if (r == 0 && (r = graph_check_op(b, f, i, false)) == 0)
                    r = graph_build_op(b, f);
                else if (r < 0)
                    r = graph_nomem(b);
            } else if (fb) {
                r = flat_parse_buffer(s, p, hi, fb, &end);
                if (r == 0 && (r = graph_check_buffer(b, fb, i, false)) == 0)
                    r = graph_build_buffer(b, fb);
                else if (r < 0)
                    r = graph_nomem(b);
            }
            if (r < 0) {
                rc = GOLDEN_ERR;
                break;
            }
            if (r > 0 && (rc = strict_element(b, s, p, hi, kind, i, &end)) != 0)
                break;
            if (s->progress)
                golden_progress_update(s->progress, end);
        }
        after = false;
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
        graph_op_desc_free(f);
    free(f);
    if (fb)
        free(fb->live);
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
    int r = lg_strmap_put(seen, copy, n, 0, NULL);
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
 * other value (schema, arrays that must wait) is checked by the strict loader. An unknown key
 * ("opps") is an error once its value has passed the strict loader: a misspelt array would
 * otherwise be dropped without a word. */
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
            elem_kind kind = which == 1 ? ELEM_QUEUE : which == 2 ? ELEM_BUFFER : ELEM_OP;
            if (stream_array(b, s, v, len, keys[which], kind, which > 1 && fast, &vend) != 0)
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
            if (which < 0) {
                /* its value was judged by the grammar first, as the tree path does */
                golden_doc_free(d);
                char what[400], hint[200];
                lg_suggest sg;
                lg_suggest_init(&sg, keep[nkeep - 1], strlen(keep[nkeep - 1]));
                for (size_t k = 0; k < 4; k++)
                    lg_suggest_offer(&sg, keys[k], strlen(keys[k]));
                lg_suggest_text(&sg, "", hint, sizeof hint);
                snprintf(what, sizeof what, "the graph: unknown key \"%.64s\"%s (known: schema, "
                         "queues, buffers, ops)", keep[nkeep - 1], hint);
                scan_fail(s, p, what);
                goto done;
            }
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
    lg_strmap_free(&seen);
    for (size_t k = 0; k < nkeep; k++)
        free(keep[k]);
    free(keep);
    return rc;
}

int graph_load_stream(const char *path, const char *buf, size_t len, golden_progress *progress,
                      bool fast, golden_graph **out, golden_error *err)
{
    size_t cursor[2] = {0, 1};
    scan s = {buf, len, path, err, progress, cursor};
    builder b;
    if (graph_builder_init(&b, path, NULL, err) != 0)
        return GOLDEN_ERR;
    top_level t;
    memset(&t, 0, sizeof t);
    int rc = GOLDEN_ERR;
    size_t end;
    if (scan_top(&b, &s, fast, &t) != 0 || graph_check_schema_name(&b, t.schema, NULL) != 0)
        goto done;
    for (int k = 1; k < 4; k++)
        if (!t.span[k][1] && k != 2) {
            golden_fail_what(err, GOLDEN_EINVAL, path, "missing required \"%s\"",
                             k == 1 ? "queues" : "ops");
            goto done;
        }
    /* arrays that came before what they name stream now, in dependency order */
    if ((!t.done[1] &&
         stream_array(&b, &s, t.span[1][0], t.span[1][1], "queues", ELEM_QUEUE, false, &end) != 0) ||
        (t.span[2][1] && !t.done[2] &&
         stream_array(&b, &s, t.span[2][0], t.span[2][1], "buffers", ELEM_BUFFER, fast, &end) != 0) ||
        (!t.done[3] &&
         stream_array(&b, &s, t.span[3][0], t.span[3][1], "ops", ELEM_OP, fast, &end) != 0))
        goto done;
    rc = graph_finish(&b);
done:
    json_decref(t.schema);
    return graph_builder_finish(&b, rc, out);
}

