/* Private to libgolden/graph: the id maps of one graph (ops, buffers, queues, events). Open
 * addressing with 16-byte slots (the key's 64-bit hash, its index, its length); the key bytes
 * are the graph's own copies, found through the map's dense key table, so a probe touches the
 * key only on a full 64-bit hash match. The hash is keyed (SipHash-1-3 with a per-process
 * random key): ids made to collide under a fixed hash cannot make loading quadratic (issue 35).
 * A lookup hashes once and can hand the empty slot it stopped at to the insert that follows
 * (find-or-insert in one probe). Zero-initialise. */
#ifndef GOLDEN_GRAPH_IDMAP_H
#define GOLDEN_GRAPH_IDMAP_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t hash;
    uint32_t idx;   /* UINT32_MAX: empty */
    uint32_t len;
} lg_idslot;

typedef struct {
    lg_idslot *slots;
    const char **keys; /* keys[idx]: the key of entry idx (borrowed) */
    size_t cap, n, kcap;
} lg_idmap;

/* The keyed hash of len bytes (the same key for the whole process). */
uint64_t lg_id_hash(const char *s, size_t len);

/* Make room for one more entry (so that a lookup's slot stays valid for the insert after it):
 * 0 or -1 out of memory. */
int lg_idmap_room(lg_idmap *m);

/* Index of key (hash h = lg_id_hash(key, len)), or UINT32_MAX; *slot (may be NULL) is the
 * empty slot the probe stopped at when absent: valid for lg_idmap_insert_at until the map next
 * changes, provided lg_idmap_room succeeded before the lookup. */
uint32_t lg_idmap_find(const lg_idmap *m, const char *key, size_t len, uint64_t h, size_t *slot);

/* Insert key -> idx at the slot a lookup returned (after lg_idmap_room). idx must be the
 * number of entries so far (indices are dense, 0, 1, 2, ...): 0 or -1 out of memory. */
int lg_idmap_insert_at(lg_idmap *m, size_t slot, const char *key, size_t len, uint64_t h,
                       uint32_t idx);

/* Find-or-insert: 1 present (*idx its index), 0 inserted as entry *idx = m->n, -1 no memory. */
int lg_idmap_put(lg_idmap *m, const char *key, size_t len, uint32_t *idx);

/* Prefetch the home slot of hash h. */
void lg_idmap_prefetch(const lg_idmap *m, uint64_t h);

void lg_idmap_free(lg_idmap *m);

#endif
