/* The one string-keyed hash map of libgolden: keys are byte strings with a length (a NUL inside
 * a key is a byte like any other) that the caller keeps alive; values are 64-bit. */
#ifndef GOLDEN_UTIL_STRMAP_H
#define GOLDEN_UTIL_STRMAP_H
#include <stddef.h>
#include <stdint.h>

/* Open addressing with linear probing; each slot keeps its key's hash, length and value
 * beside the key pointer (one cache line for a probe, not four: issue 35), so probes and
 * growth touch the (often scattered) key bytes only on a probable match. Zero-initialise. */
typedef struct {
    uint64_t hash;
    const char *key; /* NULL: an empty slot */
    size_t len;
    uint64_t val;
} lg_strmap_slot;

typedef struct {
    lg_strmap_slot *slots;
    size_t cap, n;
} golden_strmap;

/* FNV-1a of len bytes. */
uint64_t lg_strmap_hash(const char *key, size_t len);

/* Find key: 1 and *value set when present, 0 when absent. value may be NULL. */
int lg_strmap_get(const golden_strmap *m, const char *key, size_t len, uint64_t *value);

/* Insert key -> value (the key is borrowed, not copied): 0 inserted, 1 already present (nothing
 * changed; *existing holds its value when existing is non-NULL), -1 out of memory. */
int lg_strmap_put(golden_strmap *m, const char *key, size_t len, uint64_t value,
                      uint64_t *existing);

/* Make room for n keys without further growth: 0, or -1 out of memory. */
int lg_strmap_reserve(golden_strmap *m, size_t n);

/* Free the table (never the keys) and zero the map. */
void lg_strmap_free(golden_strmap *m);

#endif
