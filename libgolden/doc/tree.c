/* The loaded document: its tree, name and the positions of its nodes (appended while
 * parsing, sorted on the first question), and the accessors of golden/doc.h. */
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

#include "util/strmap.h"
#include "util/vec.h"

/* A slot under an object is named by its key's hash, made odd so that it never equals an
 * array slot (doc_index_sub: even). */
uint64_t doc_key_sub(const char *key, size_t len)
{
    return lg_strmap_hash(key, len) | 1;
}

uint64_t doc_index_sub(size_t index)
{
    return (uint64_t)(index + 1) << 1;
}

int doc_is_singleton(const json_t *v)
{
    return json_is_true(v) || json_is_false(v) || json_is_null(v);
}

static uint32_t clamp32(size_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int doc_pos_add(golden_doc *d, const json_t *node, size_t line, size_t col)
{
    if (d->npos == d->cappos) {
        size_t cap = d->cappos ? d->cappos + d->cappos / 2 : 1024;
        pos_entry *p = realloc(d->pos, cap * sizeof *p);
        if (!p)
            return -1;
        d->pos = p;
        d->cappos = cap;
    }
    d->pos[d->npos++] = (pos_entry){(uintptr_t)node, clamp32(line), clamp32(col)};
    return 0;
}

int doc_slot_add(golden_doc *d, const json_t *parent, uint64_t sub, size_t line, size_t col)
{
    if (VEC_GROW(d->slots, d->nslots, d->capslots, 256) != 0)
        return -1;
    d->slots[d->nslots++] = (slot_entry){(uintptr_t)parent, sub, clamp32(line), clamp32(col)};
    return 0;
}

/* Record where `child` sits: by its own address, or by slot for shared singletons. */
int doc_record(golden_doc *d, const json_t *parent, uint64_t sub, const json_t *child,
                  size_t line, size_t col)
{
    if (doc_is_singleton(child))
        return parent ? doc_slot_add(d, parent, sub, line, col) : 0;
    return doc_pos_add(d, child, line, col);
}

/* LSD radix sort on the address, 11 bits a pass, skipping passes where all digits agree
 * (addresses share their high bits). 10^7 entries sort in well under a second. */
static int sort_positions(pos_entry *a, size_t n)
{
    size_t k = 1;
    while (k < n && a[k - 1].key <= a[k].key)
        k++;
    if (k >= n)
        return 0; /* the arena's usual case: nodes were made in address order */
    pos_entry *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return -1;
    pos_entry *src = a, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 11) {
        size_t count[2048] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i].key >> shift) & 2047]++;
        if (count[(src[0].key >> shift) & 2047] == n)
            continue;
        size_t sum = 0;
        for (size_t i = 0; i < 2048; i++) {
            size_t c = count[i];
            count[i] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].key >> shift) & 2047]++] = src[i];
        pos_entry *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
    free(tmp);
    return 0;
}

static int slot_cmp(const void *pa, const void *pb)
{
    const slot_entry *a = pa, *b = pb;
    if (a->parent != b->parent)
        return a->parent < b->parent ? -1 : 1;
    if (a->sub != b->sub)
        return a->sub < b->sub ? -1 : 1;
    return 0;
}

static int ensure_sorted(golden_doc *d)
{
    int rc = 0;
    pthread_mutex_lock(&d->lock);
    if (!d->sorted) {
        rc = sort_positions(d->pos, d->npos);
        if (rc == 0) {
            if (d->nslots) /* qsort(NULL, 0, ...) is undefined behaviour (UBSan) */
                qsort(d->slots, d->nslots, sizeof *d->slots, slot_cmp);
            d->sorted = 1;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return rc;
}

static const pos_entry *pos_find(const golden_doc *d, const json_t *node)
{
    uintptr_t k = (uintptr_t)node;
    size_t lo = 0, hi = d->npos;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->pos[mid].key < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->npos && d->pos[lo].key == k ? &d->pos[lo] : NULL;
}

static const slot_entry *slot_find(const golden_doc *d, const json_t *parent, uint64_t sub)
{
    slot_entry k = {(uintptr_t)parent, sub, 0, 0};
    if (!d->nslots)
        return NULL;
    return bsearch(&k, d->slots, d->nslots, sizeof *d->slots, slot_cmp);
}

int golden_doc_line(const golden_doc *doc, const json_t *node, int *line, int *col)
{
    *line = 0;
    *col = 0;
    if (!doc || !node || doc_is_singleton(node))
        return 0;
    if (ensure_sorted((golden_doc *)doc) != 0)
        return 0;
    const pos_entry *e = pos_find(doc, node);
    if (!e)
        return 0;
    *line = e->line > INT32_MAX ? INT32_MAX : (int)e->line;
    *col = e->col > INT32_MAX ? INT32_MAX : (int)e->col;
    return *line;
}

int golden_doc_child_line(const golden_doc *doc, const json_t *parent, const char *key,
                          size_t index, int *line, int *col)
{
    *line = 0;
    *col = 0;
    if (!doc || !parent)
        return 0;
    const json_t *child = key ? json_object_get(parent, key) : json_array_get(parent, index);
    if (!child)
        return 0;
    if (!doc_is_singleton(child))
        return golden_doc_line(doc, child, line, col);
    if (ensure_sorted((golden_doc *)doc) != 0)
        return 0;
    const slot_entry *e =
        slot_find(doc, parent, key ? doc_key_sub(key, strlen(key)) : doc_index_sub(index));
    if (!e)
        return 0;
    *line = e->line > INT32_MAX ? INT32_MAX : (int)e->line;
    *col = e->col > INT32_MAX ? INT32_MAX : (int)e->col;
    return *line;
}

static void format_where(const golden_doc *doc, int line, int col, char *buf, size_t n)
{
    if (!n)
        return;
    const char *name = doc && doc->name ? doc->name : "";
    if (line > 0)
        snprintf(buf, n, "%s:%d:%d", name, line, col);
    else
        snprintf(buf, n, "%s", name);
}

void golden_doc_where(const golden_doc *doc, const json_t *node, char *buf, size_t n)
{
    int line, col;
    golden_doc_line(doc, node, &line, &col);
    format_where(doc, line, col, buf, n);
}

void golden_doc_child_where(const golden_doc *doc, const json_t *parent, const char *key,
                            size_t index, char *buf, size_t n)
{
    int line, col;
    golden_doc_child_line(doc, parent, key, index, &line, &col);
    format_where(doc, line, col, buf, n);
}

json_t *golden_doc_root(const golden_doc *doc)
{
    return doc ? doc->root : NULL;
}

const char *golden_doc_name(const golden_doc *doc)
{
    return doc ? doc->name : NULL;
}

void golden_doc_free(golden_doc *doc)
{
    if (!doc)
        return;
    /* The walk is cheap (arena frees are no-ops) and frees whatever a caller attached to
     * the tree after the load, or what came from the heap when the arena ran out. */
    json_decref(doc->root);
    doc_arena_free(doc->arena);
    free(doc->pos);
    free(doc->slots);
    free(doc->name);
    pthread_mutex_destroy(&doc->lock);
    free(doc);
}

void doc_clear(golden_doc *d)
{
    json_decref(d->root);
    d->root = NULL;
    d->npos = d->nslots = 0;
    d->sorted = 0;
}

golden_doc *doc_new(const char *name, golden_error *err)
{
    golden_doc *d = calloc(1, sizeof *d);
    if (!d || !(d->name = strdup(name ? name : ""))) {
        free(d);
        golden_fail_what(err, GOLDEN_ENOMEM, name, "out of memory");
        return NULL;
    }
    if (pthread_mutex_init(&d->lock, NULL) != 0) {
        free(d->name);
        free(d);
        golden_fail_what(err, GOLDEN_EIO, name, "cannot create a mutex");
        return NULL;
    }
    return d;
}
