/* Arena-built document trees, for programs that opt in (golden_doc_use_arena_allocator):
 * jansson's allocation hooks, chunks in one reserved address range, released with the doc. */
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

void doc_arena_begin(golden_doc *d, size_t input_len)
{
    if (input_len >= ARENA_MIN_INPUT && !current_arena && arena_hooks_active())
        d->arena = calloc(1, sizeof *d->arena);
    current_arena = d->arena;
}

void doc_arena_end(void)
{
    current_arena = NULL;
}

void doc_arena_free(golden_arena *a)
{
    if (!a)
        return;
    chunks_release(a->chunks);
    free(a);
}

/* JSON Lines: one arena for all the lines of a file, rewound after each line's callback (the
 * callbacks keep no node of a line doc: golden/doc.h says so, and every one in the library
 * copies what it keeps). NULL when the program did not opt in: the lines use the heap. */
golden_arena *doc_arena_lines_new(void)
{
    return arena_hooks_active() ? calloc(1, sizeof(golden_arena)) : NULL;
}

void doc_arena_use(golden_arena *a)
{
    current_arena = a;
}

/* Forget everything allocated in a: the first chunk stays for the next line (its touched pages
 * too, so a long line's pages stay until the file is done), the others are given back. */
void doc_arena_rewind(golden_arena *a)
{
    if (!a || !a->chunks)
        return;
    arena_chunk *keep = a->chunks, *rest = NULL;
    while (keep->next) { /* the list is newest first: keep the oldest */
        arena_chunk *n = keep->next;
        keep->next = rest;
        rest = keep;
        keep = n;
    }
    chunks_release(rest);
    a->chunks = keep;
    a->cur = (char *)keep + 16;
    a->end = (char *)keep + ARENA_CHUNK;
}
