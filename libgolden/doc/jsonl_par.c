/* A JSON Lines pass in a pipeline (issue 26's speed): the calling thread reads the file with
 * lines.c's one line reader and cuts it into chunks of whole lines; workers parse each chunk's
 * lines (and run the caller's prep on them); the calling thread then takes the lines in file
 * order, chunk after chunk. Nothing is merged afterwards: whatever depends on the order of the
 * lines runs in order, so the result and the first error are those of the one-thread pass. */
#include "doc/internal.h"
#include "doc/jsonl_internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_LINES 512
#define CHUNK_BYTES ((size_t)2 << 20) /* a chunk's line bytes (one longer line: alone) */
#define BIG_LINE ((size_t)1 << 20)    /* a line this long is parsed with nothing else in flight */
#define MAX_WORKERS 64

enum { CH_FREE, CH_QUEUED, CH_DONE };

typedef struct {
    char *buf;
    size_t len, cap;
    size_t *off, *llen, *lno; /* per line: offset in buf, length, line number */
    size_t n;
    size_t dirty;             /* docs still holding the trees of the chunk's last use */
    golden_doc **docs;        /* one per line slot, made on first use */
    golden_arena *arena;      /* the chunk's trees (NULL: heap), rewound when it is taken */
    unsigned char *slots;
    int state;
    size_t fail;              /* the first line that did not parse or prep (n: none) */
    golden_error err;
} chunk;

typedef struct {
    const lg_jsonl_par *p;
    const char *path;
    size_t chunk_lines;
    chunk *ch;
    size_t nch;
    size_t fill, claim, take; /* sequence numbers: filling, next to parse, next to take */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int stop;
    bool threaded, failed;    /* failed: a line's error or take's non-zero is in err */
    pthread_t tid[MAX_WORKERS];
    int nthreads;
} par;

static void *slot_of(const par *P, chunk *c, size_t i)
{
    return P->p->slot_size ? c->slots + i * P->p->slot_size : NULL;
}

/* Parse (and prep) the lines of c; stops at the first failure (c->fail). */
static void chunk_parse(par *P, chunk *c)
{
    /* the last use's trees go here, on the worker (every tree before the arena rewinds) */
    for (size_t i = 0; i < c->dirty; i++)
        if (c->docs[i])
            doc_clear(c->docs[i]);
    c->dirty = 0;
    doc_arena_rewind(c->arena);
    c->fail = c->n;
    for (size_t i = 0; i < c->n; i++) {
        if (P->threaded && __atomic_load_n(&P->stop, __ATOMIC_RELAXED)) {
            c->fail = i; /* never taken: the pass has stopped before this chunk */
            golden_fail_what(&c->err, GOLDEN_EINTERNAL, P->path, "pass stopped");
            return;
        }
        if (!c->docs[i] && !(c->docs[i] = doc_new(P->path, &c->err))) {
            c->fail = i;
            return;
        }
        const unsigned char *b = (const unsigned char *)c->buf + c->off[i];
        size_t len = c->llen[i];
        /* exactly as load.c's jsonl_line: a byte order mark may open the line (lines.c
         * refuses one on a later line) */
        if (len >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF) {
            b += 3;
            len -= 3;
        }
        doc_arena_use(c->arena);
        int r = doc_load_json(c->docs[i], b, len, c->lno[i], 0, &c->err);
        doc_arena_use(NULL);
        if (r == GOLDEN_OK && P->p->prep)
            r = P->p->prep(P->p->prep_ctx, c->docs[i], c->lno[i], slot_of(P, c, i), &c->err);
        if (r != GOLDEN_OK) {
            c->fail = i;
            return;
        }
    }
}

static void chunk_reset(par *P, chunk *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (P->p->slot_clear)
            P->p->slot_clear(slot_of(P, c, i));
    if (P->p->slot_size)
        memset(c->slots, 0, c->n * P->p->slot_size);
    /* the trees are cleared by the next parse of the chunk (or freed with it) */
    for (size_t i = 0; i < c->n; i++)
        if (c->docs[i])
            c->dirty = i + 1;
    c->n = c->len = 0;
    c->state = CH_FREE;
}

static void *worker(void *arg)
{
    par *P = arg;
    pthread_mutex_lock(&P->mu);
    while (!P->stop) {
        if (P->claim == P->fill) {
            pthread_cond_wait(&P->work, &P->mu);
            continue;
        }
        chunk *c = &P->ch[P->claim++ % P->nch];
        pthread_mutex_unlock(&P->mu);
        chunk_parse(P, c);
        pthread_mutex_lock(&P->mu);
        c->state = CH_DONE;
        pthread_cond_broadcast(&P->done);
    }
    pthread_mutex_unlock(&P->mu);
    return NULL;
}

/* Take the oldest queued chunk, in file order (waiting for its parse). -1: stop (err set). */
static int take_oldest(par *P, golden_error *err)
{
    chunk *c = &P->ch[P->take % P->nch];
    if (P->threaded) {
        pthread_mutex_lock(&P->mu);
        while (c->state != CH_DONE)
            pthread_cond_wait(&P->done, &P->mu);
        pthread_mutex_unlock(&P->mu);
    } else {
        chunk_parse(P, c);
    }
    int rc = 0;
    for (size_t i = 0; i < c->fail && rc == 0; i++)
        rc = P->p->take(P->p->take_ctx, c->docs[i], c->lno[i], slot_of(P, c, i), err);
    if (rc == 0 && c->fail < c->n) {
        *err = c->err;
        rc = -1;
    }
    chunk_reset(P, c);
    P->take++;
    if (rc != 0)
        P->failed = true;
    return rc;
}

static void submit(par *P)
{
    /* the ring is full: the slot after the last queued chunk is still the oldest queued one
     * (nothing was appended: on_line makes room first), so there is nothing to submit */
    if (P->fill - P->take >= P->nch)
        return;
    chunk *c = &P->ch[P->fill % P->nch];
    if (c->n == 0)
        return;
    pthread_mutex_lock(&P->mu);
    c->state = CH_QUEUED;
    P->fill++;
    pthread_cond_signal(&P->work);
    pthread_mutex_unlock(&P->mu);
}

static int drain(par *P, golden_error *err)
{
    while (P->take < P->fill)
        if (take_oldest(P, err) != 0)
            return -1;
    return 0;
}

/* The chunk being filled has room (a chunk is free once taken). */
static int room(par *P, golden_error *err)
{
    while (P->fill - P->take >= P->nch)
        if (take_oldest(P, err) != 0)
            return -1;
    return 0;
}

static int append(chunk *c, const char *line, size_t len, size_t line_no)
{
    if (c->len + len > c->cap) {
        size_t nc = c->cap ? c->cap : CHUNK_BYTES;
        while (nc < c->len + len)
            nc *= 2;
        char *nb = realloc(c->buf, nc);
        if (!nb)
            return -1;
        c->buf = nb;
        c->cap = nc;
    }
    memcpy(c->buf + c->len, line, len);
    c->off[c->n] = c->len;
    c->llen[c->n] = len;
    c->lno[c->n] = line_no;
    c->n++;
    c->len += len;
    return 0;
}

static int on_line(void *ctx, const char *line, size_t len, size_t line_no, golden_error *err)
{
    par *P = ctx;
    bool big = len > BIG_LINE;
    if (big) { /* alone: what is in flight first, then this line by itself */
        submit(P);
        if (drain(P, err) != 0)
            return -1;
    }
    if (room(P, err) != 0)
        return -1;
    chunk *c = &P->ch[P->fill % P->nch];
    if (c->n > 0 && (c->n == P->chunk_lines || c->len + len > CHUNK_BYTES)) {
        submit(P);
        if (room(P, err) != 0)
            return -1;
        c = &P->ch[P->fill % P->nch];
    }
    if (append(c, line, len, line_no) != 0) {
        P->failed = true;
        return golden_fail_what(err, GOLDEN_ENOMEM, P->path, "out of memory");
    }
    if (big || !P->threaded || c->n == P->chunk_lines)
        submit(P);
    if (big || !P->threaded)
        return drain(P, err);
    return 0;
}

static void chunks_free(par *P)
{
    for (size_t k = 0; P->ch && k < P->nch; k++) {
        chunk *c = &P->ch[k];
        chunk_reset(P, c);
        for (size_t i = 0; c->docs && i < P->chunk_lines; i++)
            golden_doc_free(c->docs[i]);
        free(c->docs);
        free(c->buf);
        free(c->off);
        free(c->llen);
        free(c->lno);
        free(c->slots);
        doc_arena_free(c->arena);
    }
    free(P->ch);
}

static int chunks_new(par *P)
{
    P->ch = calloc(P->nch, sizeof *P->ch);
    if (!P->ch)
        return -1;
    size_t n = P->chunk_lines, ss = P->p->slot_size;
    for (size_t k = 0; k < P->nch; k++) {
        chunk *c = &P->ch[k];
        c->docs = calloc(n, sizeof *c->docs);
        c->off = malloc(n * sizeof *c->off);
        c->llen = malloc(n * sizeof *c->llen);
        c->lno = malloc(n * sizeof *c->lno);
        c->slots = ss ? calloc(n, ss) : NULL;
        c->arena = doc_arena_lines_new();
        if (!c->docs || !c->off || !c->llen || !c->lno || (ss && !c->slots))
            return -1;
    }
    return 0;
}

static void stop_workers(par *P)
{
    pthread_mutex_lock(&P->mu);
    P->stop = 1;
    pthread_cond_broadcast(&P->work);
    pthread_mutex_unlock(&P->mu);
    for (int t = 0; t < P->nthreads; t++)
        pthread_join(P->tid[t], NULL);
    P->nthreads = 0;
}

int lg_doc_each_jsonl_par(const char *path, const lg_jsonl_par *p, golden_error *err)
{
    par P;
    memset(&P, 0, sizeof P);
    P.p = p;
    P.path = path;
    int workers = p->workers > MAX_WORKERS ? MAX_WORKERS : p->workers;
    P.threaded = workers > 1;
    /* one thread: one line at a time, as golden_doc_each_jsonl */
    P.chunk_lines = !P.threaded ? 1 : p->chunk_lines ? p->chunk_lines : CHUNK_LINES;
    P.nch = P.threaded ? 2 * (size_t)workers + 2 : 1;
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.work, NULL);
    pthread_cond_init(&P.done, NULL);
    int rc;
    if (chunks_new(&P) != 0) {
        rc = golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        goto out;
    }
    for (int t = 0; P.threaded && t < workers; t++) {
        if (pthread_create(&P.tid[t], NULL, worker, &P) != 0)
            break;
        P.nthreads++;
    }
    if (P.threaded && P.nthreads == 0) /* no thread to be had: the one-thread pass */
        P.threaded = false;
    rc = golden_doc_each_line(path, GOLDEN_JSONL_MAX_LINE, on_line, &P, err);
    if (!P.failed) {
        /* the end of the file, or the reader's own error at a later line: every line before
         * it is taken first (an error of theirs comes first, as in the one-thread pass) */
        golden_error reader = *err;
        submit(&P);
        if (drain(&P, err) != 0)
            rc = -1;
        else if (rc != 0)
            *err = reader;
    }
out:
    stop_workers(&P);
    chunks_free(&P);
    pthread_cond_destroy(&P.work);
    pthread_cond_destroy(&P.done);
    pthread_mutex_destroy(&P.mu);
    return rc;
}
