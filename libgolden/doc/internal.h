/* The document layer's private parts: the golden_doc record, the position tables both
 * readers fill, and the helpers the JSON and YAML readers share. Not installed. */
#ifndef GOLDEN_DOC_INTERNAL_H
#define GOLDEN_DOC_INTERNAL_H
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "golden/doc.h"

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

typedef struct golden_arena golden_arena;

/* tree.c: a new empty doc named name (NULL with err filled). */
golden_doc *doc_new(const char *name, golden_error *err);
/* tree.c: empty d again for its next tree (its name and table capacities stay). */
void doc_clear(golden_doc *d);
/* tree.c: the slot number of an object key (odd) or an array index (even). */
uint64_t doc_key_sub(const char *key, size_t len);
uint64_t doc_index_sub(size_t index);
/* tree.c: true/false/null, which jansson shares, so they have positions per slot only. */
int doc_is_singleton(const json_t *v);
/* tree.c: remember where a node (or a singleton's slot) sits; -1 out of memory. */
int doc_pos_add(golden_doc *d, const json_t *node, size_t line, size_t col);
int doc_slot_add(golden_doc *d, const json_t *parent, uint64_t sub, size_t line, size_t col);
int doc_record(golden_doc *d, const json_t *parent, uint64_t sub, const json_t *child,
               size_t line, size_t col);

/* text.c: length of the valid UTF-8 sequence at p, 0 when invalid. */
size_t doc_utf8_len(const unsigned char *p, const unsigned char *end);
/* text.c: refuse NUL bytes and invalid UTF-8, naming line:col. */
int doc_check_text(const char *name, const unsigned char *p, size_t len, size_t first_line,
                   golden_error *err);
/* text.c: exact integer and locale-independent real parsing; 0 ok, -1 out of range. */
int doc_parse_int64(const char *s, size_t len, json_int_t *out);
int doc_parse_real(const char *s, size_t len, double *out);

/* text.c: fill err with code, the message built from fmt and the place name:line:col. */
int doc_failv(golden_error *err, golden_code code, const char *name, size_t line, size_t col,
              const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));

/* load.c: read once into (*buf)[len, *cap), first doubling the buffer (to at most limit bytes)
 * when it is full; EINTR retried. Bytes read (0: end of file), -1 a read error (errno), or
 * DOC_READ_NOMEM. */
#define DOC_READ_NOMEM (-2)
ssize_t doc_read_more(int fd, char **buf, size_t *cap, size_t len, size_t limit);

/* arena.c: build d's tree in an arena when the program opted in and the input is large;
 * end after the load; free an arena (NULL is fine). */
void doc_arena_begin(golden_doc *d, size_t input_len);
void doc_arena_end(void);
void doc_arena_free(golden_arena *a);
/* arena.c: the arena of a JSON Lines file's line trees (NULL: heap), the calling thread's
 * current arena (NULL: none), rewinding it between lines. */
golden_arena *doc_arena_lines_new(void);
void doc_arena_use(golden_arena *a);
void doc_arena_rewind(golden_arena *a);

/* json.c / yaml.c: parse buf into d (root and positions). */
int doc_load_json(golden_doc *d, const unsigned char *buf, size_t len, size_t first_line,
                  int discardable, golden_error *err);
/* json.c: the same for a buffer that starts at column first_col (characters) of first_line. */
int doc_load_json_at(golden_doc *d, const unsigned char *buf, size_t len, size_t first_line,
                     size_t first_col, int discardable, golden_error *err);
int doc_load_yaml(golden_doc *d, const unsigned char *buf, size_t len, golden_error *err);

#endif
