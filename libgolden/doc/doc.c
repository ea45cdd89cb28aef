/* Documents: one loader for JSON (a strict RFC 8259 parser of our own, since jansson keeps no
 * positions) and YAML (libyaml events) into jansson trees that remember every node's line:col. */
#include "golden/doc.h"

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

/* Positions live beside the tree, keyed by node address: appended while parsing (cheap,
 * sequential) and sorted on the first question (only error paths ask). */
typedef struct {
    uintptr_t key;
    uint32_t line, col;
} pos_entry;

/* true/false/null are shared singletons in jansson, so their position is kept per slot:
 * (parent address, key hash or array index). */
typedef struct {
    uintptr_t parent;
    uint64_t sub;
    uint32_t line, col;
} slot_entry;

struct golden_doc {
    char *name;
    json_t *root;
    pos_entry *pos;
    size_t npos, cappos;
    slot_entry *slots;
    size_t nslots, capslots;
    pthread_mutex_t lock;
    int sorted;
    struct golden_arena *arena; /* NULL: the tree lives on the heap */
};

/* ---------------------------------------------------------------- arena */

/* jansson allocates every node, key and hash bucket with its own malloc; for a graph of 10^7
 * nodes that costs more time than parsing and a third more memory. A program that opts in
 * (golden_doc_use_arena_allocator: jansson's allocator is process-wide, so only the program
 * may choose it) gets this: while a large document loads, this thread's jansson allocations
 * come from an arena of big chunks; the chunks lie in one reserved address range (reserved on
 * the first large load, not before), so the free hook tells arena memory (freed with the doc,
 * all at once) from heap memory (freed normally) by address. The hooks behave exactly like
 * malloc/free for everything outside a load, so json_dumps() results may still be freed with
 * free(). Without the opt-in every tree lives on the heap (docs/design.md has the cost). */
#define ARENA_CHUNK ((size_t)32 << 20)
#define ARENA_MIN_INPUT ((size_t)1 << 20) /* smaller documents use the heap */

typedef struct arena_chunk {
    struct arena_chunk *next;
} arena_chunk;

typedef struct golden_arena {
    arena_chunk *chunks; /* owned chunks, each starts with its link */
    char *cur, *end;
} golden_arena;

static char *region_base;
static size_t region_size, region_used;
static arena_chunk *region_free; /* released chunks for reuse */
static pthread_mutex_t region_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t region_once = PTHREAD_ONCE_INIT;
static _Thread_local golden_arena *current_arena;

static void region_reserve(void)
{
    /* Address space only (PROT_NONE, no reserve); fall back to smaller ranges under
     * address-space limits (ulimit -v, valgrind) and to the heap when none fits. */
    for (size_t sz = (size_t)64 << 30; sz >= ((size_t)1 << 30); sz /= 2) {
        size_t huge = (size_t)2 << 20;
        void *p = mmap(NULL, sz + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p != MAP_FAILED) {
            /* 2 MiB aligned, so that the kernel may back chunks with huge pages. */
            region_size = sz;
            char *aligned = (char *)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
            __atomic_store_n(&region_base, aligned, __ATOMIC_RELEASE);
            return;
        }
    }
}

static int in_region(const void *p)
{
    const char *b = __atomic_load_n(&region_base, __ATOMIC_ACQUIRE);
    return b && (const char *)p >= b && (const char *)p < b + region_size;
}

static arena_chunk *chunk_get(void)
{
    pthread_once(&region_once, region_reserve);
    if (!region_base)
        return NULL;
    arena_chunk *c = NULL;
    pthread_mutex_lock(&region_lock);
    if (region_free) {
        c = region_free;
        region_free = c->next;
    } else if (region_used + ARENA_CHUNK <= region_size) {
        char *p = region_base + region_used;
        if (mprotect(p, ARENA_CHUNK, PROT_READ | PROT_WRITE) == 0) {
            region_used += ARENA_CHUNK;
            c = (arena_chunk *)p;
        }
    }
    pthread_mutex_unlock(&region_lock);
    return c;
}

static void chunks_release(arena_chunk *c)
{
    while (c) {
        arena_chunk *next = c->next;
        /* Give the pages back; the address range stays ours for the next load. */
        madvise(c, ARENA_CHUNK, MADV_DONTNEED);
        pthread_mutex_lock(&region_lock);
        c->next = region_free;
        region_free = c;
        pthread_mutex_unlock(&region_lock);
        c = next;
    }
}

static void *golden_json_malloc(size_t n)
{
    golden_arena *a = current_arena;
    if (!a)
        return malloc(n);
    n = (n + 7) & ~(size_t)7; /* jansson's structs need no more than pointer alignment */
    if (n > (size_t)(a->end - a->cur)) {
        if (n > ARENA_CHUNK / 4)
            return malloc(n);
        arena_chunk *c = chunk_get();
        if (!c)
            return malloc(n);
        c->next = a->chunks;
        a->chunks = c;
        a->cur = (char *)c + 16;
        a->end = (char *)c + ARENA_CHUNK;
    }
    void *p = a->cur;
    a->cur += n;
    return p;
}

static void golden_json_free(void *p)
{
    if (p && !in_region(p))
        free(p);
}

void golden_doc_use_arena_allocator(void)
{
    json_set_alloc_funcs(golden_json_malloc, golden_json_free);
}

/* Loads use an arena only while our hooks are jansson's: a program that installed its own
 * allocator after ours gets heap trees, never arena memory handed to its free. */
static int arena_hooks_active(void)
{
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    return m == golden_json_malloc && f == golden_json_free;
}

/* ---------------------------------------------------------------- positions */

/* A slot under an object is named by its key's hash, made odd so that it never equals an
 * array slot (index_sub: even). */
static uint64_t key_hash(const char *key, size_t len)
{
    return golden_strmap_hash(key, len) | 1;
}

static uint64_t index_sub(size_t index)
{
    return (uint64_t)(index + 1) << 1;
}

static int is_singleton(const json_t *v)
{
    return json_is_true(v) || json_is_false(v) || json_is_null(v);
}

static uint32_t clamp32(size_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static int pos_add(golden_doc *d, const json_t *node, size_t line, size_t col)
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

static int slot_add(golden_doc *d, const json_t *parent, uint64_t sub, size_t line, size_t col)
{
    if (d->nslots == d->capslots) {
        size_t cap = d->capslots ? d->capslots * 2 : 256;
        slot_entry *p = realloc(d->slots, cap * sizeof *p);
        if (!p)
            return -1;
        d->slots = p;
        d->capslots = cap;
    }
    d->slots[d->nslots++] = (slot_entry){(uintptr_t)parent, sub, clamp32(line), clamp32(col)};
    return 0;
}

/* Record where `child` sits: by its own address, or by slot for shared singletons. */
static int record(golden_doc *d, const json_t *parent, uint64_t sub, const json_t *child,
                  size_t line, size_t col)
{
    if (is_singleton(child))
        return parent ? slot_add(d, parent, sub, line, col) : 0;
    return pos_add(d, child, line, col);
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
    if (!doc || !node || is_singleton(node))
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
    if (!is_singleton(child))
        return golden_doc_line(doc, child, line, col);
    if (ensure_sorted((golden_doc *)doc) != 0)
        return 0;
    const slot_entry *e =
        slot_find(doc, parent, key ? key_hash(key, strlen(key)) : index_sub(index));
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
    if (doc->arena) {
        chunks_release(doc->arena->chunks);
        free(doc->arena);
    }
    free(doc->pos);
    free(doc->slots);
    free(doc->name);
    pthread_mutex_destroy(&doc->lock);
    free(doc);
}

static golden_doc *doc_new(const char *name, golden_error *err)
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

/* ---------------------------------------------------------------- UTF-8 */

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no surrogates, at most
 * U+10FFFF), or 0 when invalid. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t n = (size_t)(end - p);
    if (c >= 0xC2 && c <= 0xDF)
        return n >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && p[1] < 0xA0)
            return 0;
        if (c == 0xED && p[1] >= 0xA0)
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && p[1] < 0x90)
            return 0;
        if (c == 0xF4 && p[1] >= 0x90)
            return 0;
        return 4;
    }
    return 0;
}

/* Reject NUL bytes and invalid UTF-8 anywhere, naming line:col (columns count characters). */
static int check_text(const char *name, const unsigned char *p, size_t len, size_t first_line,
                      golden_error *err)
{
    const unsigned char *end = p + len;
    size_t line = first_line, col = 1;
    while (p < end) {
        unsigned c = *p;
        if (c == 0)
            return golden_fail_where(err, GOLDEN_EINVAL, "NUL byte in a text document", "%s:%zu:%zu", name, line,
                                col);
        if (c < 0x80) {
            p++;
            if (c == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
            continue;
        }
        size_t n = utf8_len(p, end);
        if (!n)
            return golden_fail_where(err, GOLDEN_EINVAL, "invalid UTF-8", "%s:%zu:%zu", name, line, col);
        p += n;
        col++;
    }
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- numbers */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

/* strtod that ignores the process locale (a "," decimal point must not change documents). */
static double c_strtod(const char *s, char **end)
{
    pthread_once(&c_locale_once, make_c_locale);
    if (c_locale)
        return strtod_l(s, end, c_locale);
    return strtod(s, end);
}

/* Digits (optionally signed) that fit int64. */
static int parse_int64(const char *s, size_t len, json_int_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == len)
        return 0;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        unsigned dgt = (unsigned)(s[i] - '0');
        if (v > (limit - dgt) / 10)
            return 0;
        v = v * 10 + dgt;
    }
    *out = neg ? (json_int_t)(0 - v) : (json_int_t)v;
    return 1;
}

/* A finite double from a number token, or 0 when it overflows. */
static int parse_real(const char *s, size_t len, double *out)
{
    char small[128];
    char *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double v = c_strtod(buf, &end);
    int ok = end == buf + len && v - v == 0;
    if (buf != small)
        free(buf);
    if (!ok)
        return 0;
    *out = v;
    return 1;
}

/* ---------------------------------------------------------------- JSON */

typedef struct {
    const char *name;
    const unsigned char *p, *end;
    size_t line;
    const unsigned char *line_start;
    const unsigned char *col_line, *col_ptr; /* incremental column counter */
    size_t col_val;
    golden_doc *doc;
    golden_error *err;
    char *scratch;
    size_t scratch_cap;
    int depth;
    const unsigned char *discarded; /* input before this is no longer needed */
    int discardable;                /* the input is ours to drop page by page */
} jparser;

#define DISCARD_STEP ((size_t)64 << 20)

/* A large input is parsed from an anonymous mapping: pages already parsed are handed back
 * as the parser moves on, so the input and the tree do not both stay resident. The
 * mapping stays, so a late look back (a column on a very long line) reads zeros, never
 * faults. */
static void discard_consumed(jparser *jp)
{
    const unsigned char *upto = jp->col_ptr && jp->col_ptr < jp->p ? jp->col_ptr : jp->p;
    if (!jp->discardable) {
        jp->discarded = jp->p;
        return;
    }
    uintptr_t a = ((uintptr_t)jp->discarded + 4095) & ~(uintptr_t)4095;
    uintptr_t b = (uintptr_t)upto & ~(uintptr_t)4095;
    if (b > a)
        madvise((void *)a, b - a, MADV_DONTNEED);
    jp->discarded = upto;
}

/* Column (in characters) of q on the current line; q only moves forward, so the whole
 * document costs one extra pass at most. */
static size_t jcol(jparser *jp, const unsigned char *q)
{
    if (jp->col_line != jp->line_start || q < jp->col_ptr) {
        jp->col_line = jp->line_start;
        jp->col_ptr = jp->line_start;
        jp->col_val = 1;
    }
    for (const unsigned char *r = jp->col_ptr; r < q; r++)
        if ((*r & 0xC0) != 0x80)
            jp->col_val++;
    jp->col_ptr = q;
    return jp->col_val;
}

static json_t *jfail(jparser *jp, const unsigned char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static json_t *jfail(jparser *jp, const unsigned char *at, const char *fmt, ...)
{
    if (jp->err) {
        char msg[sizeof jp->err->what];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        golden_fail_where(jp->err, GOLDEN_EINVAL, msg, "%s:%zu:%zu", jp->name, jp->line, jcol(jp, at));
    }
    return NULL;
}

static void jskip_ws(jparser *jp)
{
    const unsigned char *p = jp->p;
    while (p < jp->end) {
        unsigned c = *p;
        if (c == ' ' || c == '\t' || c == '\r') {
            p++;
        } else if (c == '\n') {
            p++;
            jp->line++;
            jp->line_start = p;
        } else {
            break;
        }
    }
    jp->p = p;
}

static const char *describe_byte(unsigned c, char *buf, size_t n)
{
    if (c >= 0x21 && c < 0x7F)
        snprintf(buf, n, "'%c'", (char)c);
    else
        snprintf(buf, n, "byte 0x%02X", c);
    return buf;
}

static int scratch_put(jparser *jp, size_t *len, const char *s, size_t n)
{
    if (*len + n + 1 > jp->scratch_cap) {
        size_t cap = jp->scratch_cap ? jp->scratch_cap : 256;
        while (cap < *len + n + 1)
            cap *= 2;
        char *b = realloc(jp->scratch, cap);
        if (!b)
            return -1;
        jp->scratch = b;
        jp->scratch_cap = cap;
    }
    memcpy(jp->scratch + *len, s, n);
    *len += n;
    return 0;
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *out)
{
    if (end - p < 4)
        return 0;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return 0;
        v = v * 16 + d;
    }
    *out = v;
    return 1;
}

/* Scan a string at jp->p (on the opening quote). On success *s and *len point either into the
 * input (no escapes) or into jp->scratch (decoded). */
static int jstring(jparser *jp, const char **s, size_t *len)
{
    const unsigned char *start = ++jp->p, *p = start, *end = jp->end;
    /* Fast path: no escapes. */
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *s = (const char *)start;
            *len = (size_t)(p - start);
            jp->p = p + 1;
            return 0;
        }
        if (c == '\\')
            break;
        if (c < 0x20) {
            jfail(jp, p, c == 0 ? "NUL byte in a string" : c == '\n' ? "unterminated string"
                                                                      : "control character "
                                                                        "in a string (escape "
                                                                        "it)");
            return -1;
        }
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t n = utf8_len(p, end);
        if (!n) {
            jfail(jp, p, "invalid UTF-8");
            return -1;
        }
        p += n;
    }
    if (p >= end) {
        jfail(jp, start - 1, "unterminated string");
        return -1;
    }
    size_t out = 0;
    if (scratch_put(jp, &out, (const char *)start, (size_t)(p - start)) < 0) {
        jfail(jp, p, "out of memory");
        return -1;
    }
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            jp->scratch[out] = '\0';
            *s = jp->scratch;
            *len = out;
            jp->p = p + 1;
            return 0;
        }
        if (c == '\\') {
            if (p + 1 >= end)
                break;
            char ch;
            unsigned e = p[1];
            switch (e) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned cp;
                if (!hex4(p + 2, end, &cp)) {
                    jfail(jp, p, "bad \\u escape (four hex digits expected)");
                    return -1;
                }
                const unsigned char *esc = p;
                p += 6;
                if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    jfail(jp, esc, "lone low surrogate \\u%04X", cp);
                    return -1;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, end, &lo) ||
                        lo < 0xDC00 || lo > 0xDFFF) {
                        jfail(jp, esc, "lone high surrogate \\u%04X", cp);
                        return -1;
                    }
                    p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                char u[4];
                size_t un;
                if (cp < 0x80) {
                    u[0] = (char)cp;
                    un = 1;
                } else if (cp < 0x800) {
                    u[0] = (char)(0xC0 | (cp >> 6));
                    u[1] = (char)(0x80 | (cp & 0x3F));
                    un = 2;
                } else if (cp < 0x10000) {
                    u[0] = (char)(0xE0 | (cp >> 12));
                    u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    u[2] = (char)(0x80 | (cp & 0x3F));
                    un = 3;
                } else {
                    u[0] = (char)(0xF0 | (cp >> 18));
                    u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    u[3] = (char)(0x80 | (cp & 0x3F));
                    un = 4;
                }
                if (scratch_put(jp, &out, u, un) < 0) {
                    jfail(jp, p, "out of memory");
                    return -1;
                }
                continue;
            }
            default:
                jfail(jp, p, "unknown escape \\%c", e >= 0x20 && e < 0x7F ? (char)e : '?');
                return -1;
            }
            if (scratch_put(jp, &out, &ch, 1) < 0) {
                jfail(jp, p, "out of memory");
                return -1;
            }
            p += 2;
            continue;
        }
        if (c < 0x20) {
            jfail(jp, p, c == 0 ? "NUL byte in a string" : c == '\n' ? "unterminated string"
                                                                      : "control character "
                                                                        "in a string (escape "
                                                                        "it)");
            return -1;
        }
        size_t n = c < 0x80 ? 1 : utf8_len(p, end);
        if (!n) {
            jfail(jp, p, "invalid UTF-8");
            return -1;
        }
        if (scratch_put(jp, &out, (const char *)p, n) < 0) {
            jfail(jp, p, "out of memory");
            return -1;
        }
        p += n;
    }
    jfail(jp, start - 1, "unterminated string");
    return -1;
}

static json_t *jnumber(jparser *jp)
{
    const unsigned char *s = jp->p, *p = s, *end = jp->end;
    int is_int = 1;
    if (p < end && *p == '-')
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return jfail(jp, s, "bad number");
    if (*p == '0') {
        p++;
        if (p < end && *p >= '0' && *p <= '9')
            return jfail(jp, s, "bad number (leading zero)");
    } else {
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && *p == '.') {
        is_int = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return jfail(jp, s, "bad number (digit expected after '.')");
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        is_int = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return jfail(jp, s, "bad number (digit expected in exponent)");
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    size_t len = (size_t)(p - s);
    json_t *v;
    json_int_t iv;
    double dv;
    if (is_int && parse_int64((const char *)s, len, &iv)) {
        v = json_integer(iv);
    } else {
        int r = parse_real((const char *)s, len, &dv);
        if (r < 0)
            return jfail(jp, s, "out of memory");
        if (r == 0)
            return jfail(jp, s, "number out of range (beyond a double)");
        v = json_real(dv);
    }
    if (!v)
        return jfail(jp, s, "out of memory");
    jp->p = p;
    return v;
}

static json_t *jvalue(jparser *jp, size_t *line, size_t *col);

static json_t *jcontainer_fail(json_t *c)
{
    json_decref(c);
    return NULL;
}

/* Nodes record their own position as they are made, so that (in an arena) positions are
 * appended in address order and need no sorting. */
static json_t *jobject(jparser *jp, size_t line, size_t col)
{
    const unsigned char *open = jp->p;
    if (++jp->depth > GOLDEN_DOC_MAX_DEPTH)
        return jfail(jp, open, "nesting deeper than %d levels", GOLDEN_DOC_MAX_DEPTH);
    json_t *obj = json_object();
    if (!obj)
        return jfail(jp, open, "out of memory");
    if (pos_add(jp->doc, obj, line, col) < 0)
        return jcontainer_fail(obj), jfail(jp, open, "out of memory");
    jp->p++;
    jskip_ws(jp);
    if (jp->p < jp->end && *jp->p == '}') {
        jp->p++;
        jp->depth--;
        return obj;
    }
    for (;;) {
        jskip_ws(jp);
        if (jp->p >= jp->end)
            return jcontainer_fail(obj), jfail(jp, jp->p, "unterminated object");
        if (*jp->p != '"') {
            char b[16];
            return jcontainer_fail(obj),
                   jfail(jp, jp->p, "expected a string key, found %s",
                         describe_byte(*jp->p, b, sizeof b));
        }
        const unsigned char *kat = jp->p;
        size_t kline = jp->line;
        size_t kcol = jcol(jp, kat);
        const char *k;
        size_t klen;
        if (jstring(jp, &k, &klen) < 0)
            return jcontainer_fail(obj);
        /* The key sits in scratch (which the value reuses) or in the input (whose pages
         * the value's parse may hand back): copy it first. */
        char kshort[64], *kcopy = NULL;
        if (klen < sizeof kshort) {
            memcpy(kshort, k, klen);
            k = kshort;
        } else {
            kcopy = malloc(klen);
            if (!kcopy)
                return jcontainer_fail(obj), jfail(jp, kat, "out of memory");
            memcpy(kcopy, k, klen);
            k = kcopy;
        }
        jskip_ws(jp);
        if (jp->p >= jp->end || *jp->p != ':') {
            free(kcopy);
            return jcontainer_fail(obj), jfail(jp, jp->p, "expected ':' after an object key");
        }
        jp->p++;
        size_t vline, vcol;
        json_t *v = jvalue(jp, &vline, &vcol);
        if (!v) {
            free(kcopy);
            return jcontainer_fail(obj);
        }
        size_t before = json_object_size(obj);
        if (json_object_setn_new_nocheck(obj, k, klen, v) != 0) {
            free(kcopy);
            return jcontainer_fail(obj), jfail(jp, kat, "out of memory");
        }
        if (json_object_size(obj) == before) {
            if (jp->err) {
                char msg[sizeof jp->err->what];
                snprintf(msg, sizeof msg, "duplicate key \"%.*s\"", (int)(klen > 200 ? 200 : klen),
                         k);
                golden_fail_where(jp->err, GOLDEN_EINVAL, msg, "%s:%zu:%zu", jp->name, kline, kcol);
            }
            free(kcopy);
            return jcontainer_fail(obj);
        }
        if (is_singleton(v) && slot_add(jp->doc, obj, key_hash(k, klen), vline, vcol) < 0) {
            free(kcopy);
            return jcontainer_fail(obj), jfail(jp, kat, "out of memory");
        }
        free(kcopy);
        jskip_ws(jp);
        if (jp->p >= jp->end)
            return jcontainer_fail(obj), jfail(jp, jp->p, "unterminated object");
        if (*jp->p == ',') {
            jp->p++;
            continue;
        }
        if (*jp->p == '}') {
            jp->p++;
            jp->depth--;
            return obj;
        }
        char b[16];
        return jcontainer_fail(obj),
               jfail(jp, jp->p, "expected ',' or '}' in an object, found %s",
                     describe_byte(*jp->p, b, sizeof b));
    }
}

static json_t *jarray(jparser *jp, size_t line, size_t col)
{
    const unsigned char *open = jp->p;
    if (++jp->depth > GOLDEN_DOC_MAX_DEPTH)
        return jfail(jp, open, "nesting deeper than %d levels", GOLDEN_DOC_MAX_DEPTH);
    json_t *arr = json_array();
    if (!arr)
        return jfail(jp, open, "out of memory");
    if (pos_add(jp->doc, arr, line, col) < 0)
        return jcontainer_fail(arr), jfail(jp, open, "out of memory");
    jp->p++;
    jskip_ws(jp);
    if (jp->p < jp->end && *jp->p == ']') {
        jp->p++;
        jp->depth--;
        return arr;
    }
    for (size_t i = 0;; i++) {
        size_t vline, vcol;
        json_t *v = jvalue(jp, &vline, &vcol);
        if (!v)
            return jcontainer_fail(arr);
        if (json_array_append_new(arr, v) != 0)
            return jcontainer_fail(arr), jfail(jp, jp->p, "out of memory");
        if (is_singleton(v) && slot_add(jp->doc, arr, index_sub(i), vline, vcol) < 0)
            return jcontainer_fail(arr), jfail(jp, jp->p, "out of memory");
        jskip_ws(jp);
        if (jp->p >= jp->end)
            return jcontainer_fail(arr), jfail(jp, jp->p, "unterminated array");
        if (*jp->p == ',') {
            jp->p++;
            continue;
        }
        if (*jp->p == ']') {
            jp->p++;
            jp->depth--;
            return arr;
        }
        char b[16];
        return jcontainer_fail(arr),
               jfail(jp, jp->p, "expected ',' or ']' in an array, found %s",
                     describe_byte(*jp->p, b, sizeof b));
    }
}

static json_t *jliteral(jparser *jp, const char *word, json_t *v)
{
    size_t n = strlen(word);
    if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n) != 0)
        return jfail(jp, jp->p, "unknown literal (expected %s)", word);
    jp->p += n;
    return v;
}

static json_t *jscalar_done(jparser *jp, json_t *v, const unsigned char *at, size_t line,
                            size_t col)
{
    if (v && pos_add(jp->doc, v, line, col) < 0) {
        json_decref(v);
        return jfail(jp, at, "out of memory");
    }
    return v;
}

/* One value; *line and *col receive where it starts. */
static json_t *jvalue(jparser *jp, size_t *line, size_t *col)
{
    jskip_ws(jp);
    *line = jp->line;
    *col = jcol(jp, jp->p);
    if (jp->p >= jp->end)
        return jfail(jp, jp->p, "unexpected end of input (a value was expected)");
    if (jp->p - jp->discarded > (ptrdiff_t)DISCARD_STEP)
        discard_consumed(jp);
    switch (*jp->p) {
    case '{':
        return jobject(jp, *line, *col);
    case '[':
        return jarray(jp, *line, *col);
    case '"': {
        const char *s;
        size_t len;
        const unsigned char *at = jp->p;
        if (jstring(jp, &s, &len) < 0)
            return NULL;
        json_t *v = json_stringn_nocheck(s, len);
        return v ? jscalar_done(jp, v, at, *line, *col) : jfail(jp, at, "out of memory");
    }
    case 't':
        return jliteral(jp, "true", json_true());
    case 'f':
        return jliteral(jp, "false", json_false());
    case 'n':
        return jliteral(jp, "null", json_null());
    default:
        if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9')) {
            const unsigned char *at = jp->p;
            return jscalar_done(jp, jnumber(jp), at, *line, *col);
        }
        if (*jp->p == 0)
            return jfail(jp, jp->p, "NUL byte in a text document");
        {
            char b[16];
            return jfail(jp, jp->p, "unexpected %s (a JSON value was expected)",
                         describe_byte(*jp->p, b, sizeof b));
        }
    }
}

static int load_json(golden_doc *d, const unsigned char *buf, size_t len, size_t first_line,
                     int discardable, golden_error *err)
{
    jparser jp = {0};
    jp.name = d->name;
    jp.p = buf;
    jp.end = buf + len;
    jp.line = first_line;
    jp.line_start = buf;
    jp.doc = d;
    jp.err = err;
    jp.discarded = buf;
    jp.discardable = discardable;
    size_t line, col;
    json_t *root = jvalue(&jp, &line, &col);
    free(jp.scratch);
    jp.scratch = NULL;
    if (!root)
        return GOLDEN_ERR;
    jskip_ws(&jp);
    if (jp.p < jp.end) {
        json_decref(root);
        char b[16];
        jfail(&jp, jp.p, "unexpected %s after the JSON value",
              describe_byte(*jp.p, b, sizeof b));
        return GOLDEN_ERR;
    }
    d->root = root;
    return GOLDEN_OK;
}

/* ---------------------------------------------------------------- YAML */

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
        char msg[sizeof y->err->what];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        golden_fail_where(y->err, GOLDEN_EINVAL, msg, "%s:%zu:%zu", y->doc->name, m->line + 1, m->column + 1);
    }
    return GOLDEN_ERR;
}

static anchor *anchor_find(yloader *y, const char *name)
{
    uint64_t i;
    return golden_strmap_get(&y->anchor_index, name, strlen(name), &i) ? &y->anchors[i] : NULL;
}

static int anchor_set(yloader *y, const char *name, json_t *node, size_t count)
{
    anchor *a = anchor_find(y, name);
    if (a) {
        /* YAML lets a later anchor of the same name replace an earlier one. */
        json_decref(a->node);
    } else {
        if (y->nanchors == y->capanchors) {
            size_t cap = y->capanchors ? y->capanchors * 2 : 16;
            anchor *grown = realloc(y->anchors, cap * sizeof *grown);
            if (!grown)
                return -1;
            y->anchors = grown;
            y->capanchors = cap;
        }
        char *copy = strdup(name);
        if (!copy)
            return -1;
        if (golden_strmap_put(&y->anchor_index, copy, strlen(copy), y->nanchors, NULL) != 0) {
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
    return parse_int64(s, n, v) ? 1 : 2;
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
            yfail(y, &ev->start_mark, "out of memory");
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
            int pr = parse_real(s, n, &dv);
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
            yfail(y, &ev->start_mark, "out of memory");
        return v;
    }
    if (want && (!strcmp(want, "null") || !strcmp(want, "bool"))) {
        yfail(y, &ev->start_mark, "\"%.*s\" is not a valid !!%s", (int)(n > 60 ? 60 : n), s, want);
        return NULL;
    }
    /* Other tags (!!binary, !!timestamp, local tags): keep the text. */
    json_t *v = json_stringn_nocheck(s, n);
    if (!v)
        yfail(y, &ev->start_mark, "out of memory");
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
        if (!is_alias && record(y->doc, NULL, 0, v, line, col) < 0) {
            json_decref(v);
            return yfail(y, m, "out of memory");
        }
        y->root = v;
        return GOLDEN_OK;
    }
    yframe *f = &y->frames[y->nframes - 1];
    if (!f->is_map) {
        if (json_array_append_new(f->node, v) != 0)
            return yfail(y, m, "out of memory");
        if ((!is_alias || is_singleton(v)) &&
            record(y->doc, f->node, index_sub(f->index), v, line, col) < 0)
            return yfail(y, m, "out of memory");
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
        if (!entry || json_array_append_new(entry, v) != 0 ||
            json_array_append_new(entry, json_integer((json_int_t)line)) != 0 ||
            json_array_append_new(entry, json_integer((json_int_t)col)) != 0 ||
            json_array_append_new(f->merges, entry) != 0)
            return yfail(y, m, "out of memory");
        return GOLDEN_OK;
    }
    size_t before = json_object_size(f->node);
    if (json_object_setn_new_nocheck(f->node, f->key, f->key_len, v) != 0)
        return yfail(y, m, "out of memory");
    if (json_object_size(f->node) == before) {
        yaml_mark_t km = {0, f->key_line - 1, f->key_col - 1};
        return yfail(y, &km, "duplicate key \"%.*s\"", (int)(f->key_len > 200 ? 200 : f->key_len),
                     f->key);
    }
    if ((!is_alias || is_singleton(v)) &&
        record(y->doc, f->node, key_hash(f->key, f->key_len), v, line, col) < 0)
        return yfail(y, m, "out of memory");
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
        return yfail(y, m, "out of memory");
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
    if (y->nframes == y->capframes) {
        size_t cap = y->capframes ? y->capframes * 2 : 32;
        yframe *f = realloc(y->frames, cap * sizeof *f);
        if (!f)
            return yfail(y, m, "out of memory");
        y->frames = f;
        y->capframes = cap;
    }
    yframe *f = &y->frames[y->nframes];
    memset(f, 0, sizeof *f);
    f->is_map = is_map;
    f->start = *m;
    f->node = is_map ? json_object() : json_array();
    if (!f->node)
        return yfail(y, m, "out of memory");
    const yaml_char_t *a = is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    if (a && !(f->anchor = strdup((const char *)a))) {
        json_decref(f->node);
        return yfail(y, m, "out of memory");
    }
    if (is_map && !(f->merges = json_array())) {
        json_decref(f->node);
        free(f->anchor);
        return yfail(y, m, "out of memory");
    }
    y->real++;
    y->expanded++;
    f->expanded0 = y->expanded - 1;
    if (record(y->doc, NULL, 0, f->node, m->line + 1, m->column + 1) < 0) {
        json_decref(f->node);
        free(f->anchor);
        json_decref(f->merges);
        return yfail(y, m, "out of memory");
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
                        (is_singleton(v) &&
                         slot_add(y->doc, f.node, key_hash(k, kl), mline, mcol) < 0)) {
                        frame_release(&f);
                        return yfail(y, &ev->start_mark, "out of memory");
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
            return yfail(y, &ev->start_mark, "out of memory");
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
                    return yfail(y, m, "out of memory");
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
            return yfail(y, m, "out of memory");
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

static int load_yaml(golden_doc *d, const unsigned char *buf, size_t len, golden_error *err)
{
    if (check_text(d->name, buf, len, 1, err) < 0)
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
    golden_strmap_free(&y.anchor_index);
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

/* ---------------------------------------------------------------- entry points */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* line * 2^32 + col of a "file:line:col" where, for comparing how far two readings got. */
static uint64_t where_rank(const char *where)
{
    const char *c2 = strrchr(where, ':');
    if (!c2 || c2 == where)
        return 0;
    const char *c1 = c2 - 1;
    while (c1 > where && *c1 != ':')
        c1--;
    if (*c1 != ':')
        return 0;
    unsigned long line = strtoul(c1 + 1, NULL, 10), col = strtoul(c2 + 1, NULL, 10);
    return ((uint64_t)line << 32) + col;
}

static int load_any(const char *name, const char *cbuf, size_t len, int force_json,
                    size_t first_line, int discardable, golden_doc **out, golden_error *err)
{
    *out = NULL;
    const unsigned char *buf = (const unsigned char *)cbuf;
    if (len > GOLDEN_DOC_MAX_BYTES)
        return golden_fail_what(err, GOLDEN_EINVAL, name, "document larger than %zu bytes",
                           (size_t)GOLDEN_DOC_MAX_BYTES);
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF) {
        buf += 3;
        len -= 3;
    }
    int must_json = force_json || (name && has_suffix(name, ".json"));
    int looks_json = must_json;
    if (!looks_json) {
        size_t i = 0;
        while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
            i++;
        looks_json = i < len && (buf[i] == '{' || buf[i] == '[');
    }
    /* Text that looks like JSON but is not (a YAML flow mapping such as {k: v}) is read as
     * YAML; when that fails too, the JSON error is the one reported. Input pages are only
     * dropped when there will be no second reading. */
    golden_error json_err = {0};
    for (int attempt = looks_json ? 0 : 1; attempt < 2; attempt++) {
        golden_doc *d = doc_new(name, err);
        if (!d)
            return GOLDEN_ERR;
        if (len >= ARENA_MIN_INPUT && !current_arena && arena_hooks_active())
            d->arena = calloc(1, sizeof *d->arena);
        current_arena = d->arena;
        int rc = attempt == 0
                     ? load_json(d, buf, len, first_line, discardable && must_json,
                                 must_json ? err : &json_err)
                     : load_yaml(d, buf, len, err);
        current_arena = NULL;
        if (rc == GOLDEN_OK) {
            *out = d;
            return GOLDEN_OK;
        }
        golden_doc_free(d);
        if (must_json)
            return GOLDEN_ERR;
        if (attempt == 1 && looks_json) {
            /* Both failed: the reading that got further explains it better. */
            if (err && where_rank(json_err.where) >= where_rank(err->where))
                *err = json_err;
            return GOLDEN_ERR;
        }
    }
    return GOLDEN_ERR;
}

int golden_doc_load_buffer(const char *name, const char *buf, size_t len, golden_doc **out,
                           golden_error *err)
{
    return load_any(name, buf, len, 0, 1, 0, out, err);
}

int golden_doc_load_json(const char *name, const char *buf, size_t len, size_t first_line,
                         golden_doc **out, golden_error *err)
{
    return load_any(name, buf, len, 1, first_line ? first_line : 1, 0, out, err);
}

/* Read a whole file (at most GOLDEN_DOC_MAX_BYTES) into memory. read() rather than mapping
 * the file, so that a file truncated under us is a short read, not a SIGBUS. A large regular
 * file goes into an anonymous mapping (*mapped = its size) whose parsed pages the JSON parser
 * hands back as it goes. */
static int read_all(const char *path, char **out, size_t *outlen, size_t *mapped,
                    golden_error *err)
{
    *mapped = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "is a directory, not a document");
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > GOLDEN_DOC_MAX_BYTES) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "document larger than %zu bytes (the loader's limit)",
                           (size_t)GOLDEN_DOC_MAX_BYTES);
    }
    int regular = S_ISREG(st.st_mode);
    size_t cap = regular ? (size_t)st.st_size + 1 : 65536, len = 0;
    char *buf;
    if (regular && cap > ARENA_MIN_INPUT) {
        void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        buf = m == MAP_FAILED ? NULL : m;
        if (buf)
            *mapped = cap;
    } else {
        buf = malloc(cap);
    }
    if (!buf) {
        close(fd);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory reading %zu bytes", cap);
    }
    for (;;) {
        if (len == cap) {
            if (*mapped) /* the file grew while we read it: take what it was */
                break;
            if (cap > GOLDEN_DOC_MAX_BYTES) {
                free(buf);
                close(fd);
                return golden_fail_what(err, GOLDEN_EINVAL, path, "document larger than %zu bytes (the loader's limit)",
                                   (size_t)GOLDEN_DOC_MAX_BYTES);
            }
            size_t ncap = cap * 2 > GOLDEN_DOC_MAX_BYTES + 1 ? GOLDEN_DOC_MAX_BYTES + 1 : cap * 2;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                close(fd);
                return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            if (*mapped)
                munmap(buf, *mapped);
            else
                free(buf);
            close(fd);
            return golden_fail_what(err, golden_code_from_errno(e), path, "read error: %s", strerror(e));
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    if (len > GOLDEN_DOC_MAX_BYTES) {
        if (*mapped)
            munmap(buf, *mapped);
        else
            free(buf);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "document larger than %zu bytes (the loader's limit)",
                           (size_t)GOLDEN_DOC_MAX_BYTES);
    }
    *out = buf;
    *outlen = len;
    return GOLDEN_OK;
}

int golden_doc_load_file(const char *path, golden_doc **out, golden_error *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0, mapped = 0;
    if (read_all(path, &buf, &len, &mapped, err) < 0)
        return GOLDEN_ERR;
    int rc = load_any(path, buf, len, 0, 1, mapped != 0, out, err);
    if (mapped)
        munmap(buf, mapped);
    else
        free(buf);
    return rc;
}

/* JSON Lines: a bounded line buffer; a line longer than the cap is refused as soon as the
 * cap is passed, so a 1 GB line costs 64 MiB of memory, not 1 GB. */
int golden_doc_each_jsonl(const char *path, golden_jsonl_fn fn, void *ctx, golden_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "is a directory, not a document");
    }
    size_t cap = 1 << 20, start = 0, len = 0, scan = 0, line_no = 1;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    int rc = GOLDEN_OK, eof = 0;
    while (rc == GOLDEN_OK) {
        char *nl = scan < len ? memchr(buf + scan, '\n', len - scan) : NULL;
        if (!nl && !eof) {
            if (len - start > GOLDEN_JSONL_MAX_LINE) {
                rc = golden_fail_where(err, GOLDEN_EINVAL, "line longer than the 64 MiB limit of JSON Lines",
                                  "%s:%zu", path, line_no);
                break;
            }
            if (start > 0) {
                memmove(buf, buf + start, len - start);
                len -= start;
                scan -= start;
                start = 0;
            }
            if (len == cap) {
                size_t ncap = cap * 2;
                if (ncap > GOLDEN_JSONL_MAX_LINE + 2)
                    ncap = GOLDEN_JSONL_MAX_LINE + 2;
                char *nb = realloc(buf, ncap);
                if (!nb) {
                    rc = golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
                    break;
                }
                buf = nb;
                cap = ncap;
            }
            ssize_t r = read(fd, buf + len, cap - len);
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                rc = golden_fail_what(err, golden_code_from_errno(errno), path, "read error: %s", strerror(errno));
                break;
            }
            if (r == 0)
                eof = 1;
            scan = len;
            len += (size_t)r;
            continue;
        }
        size_t end = nl ? (size_t)(nl - buf) : len;
        if (!nl && start == len)
            break;
        size_t llen = end - start;
        if (llen > GOLDEN_JSONL_MAX_LINE) {
            rc = golden_fail_where(err, GOLDEN_EINVAL, "line longer than the 64 MiB limit of JSON Lines", "%s:%zu",
                              path, line_no);
            break;
        }
        if (llen && buf[start + llen - 1] == '\r')
            llen--;
        int blank = 1;
        for (size_t i = 0; i < llen && blank; i++) {
            char c = buf[start + i];
            blank = c == ' ' || c == '\t' || c == '\r';
        }
        if (!blank) {
            golden_doc *d;
            if (golden_doc_load_json(path, buf + start, llen, line_no, &d, err) < 0) {
                rc = GOLDEN_ERR;
                break;
            }
            int r = fn(ctx, d, line_no, err);
            golden_doc_free(d);
            if (r != 0) {
                rc = r;
                break;
            }
        }
        line_no++;
        start = scan = nl ? end + 1 : len;
        if (!nl)
            break;
    }
    free(buf);
    close(fd);
    return rc;
}
