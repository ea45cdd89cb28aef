/* The string-keyed hash map: open addressing, linear probing, load factor at most one half,
 * hashes kept per slot (see strmap.h). */
#include "util/strmap.h"

#include <stdlib.h>
#include <string.h>

uint64_t lg_strmap_hash(const char *key, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
    return h;
}

/* The first slot of a hash: FNV-1a's low bits depend on the low bits of its state only, so
 * the high half is folded in before the mask. */
static size_t home(uint64_t h, size_t cap)
{
    return (size_t)((h ^ (h >> 32)) & (cap - 1));
}

static int grow_to(golden_strmap *m, size_t ncap)
{
    lg_strmap_slot *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key)
            continue;
        size_t j = home(m->slots[i].hash, ncap);
        while (ns[j].key)
            j = (j + 1) & (ncap - 1);
        ns[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

int lg_strmap_reserve(golden_strmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 64;
    while (n * 2 > cap) {
        if (cap > SIZE_MAX / 4)
            return -1;
        cap *= 2;
    }
    return cap == m->cap ? 0 : grow_to(m, cap);
}

/* An empty key is stored as a non-NULL pointer so that an empty slot stays recognisable. */
static const char empty_key[1] = "";

int lg_strmap_get(const golden_strmap *m, const char *key, size_t len, uint64_t *value)
{
    if (!m->cap)
        return 0;
    uint64_t h = lg_strmap_hash(key, len);
    for (size_t j = home(h, m->cap); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
        const lg_strmap_slot *sl = &m->slots[j];
        if (sl->hash == h && sl->len == len && memcmp(sl->key, key, len) == 0) {
            if (value)
                *value = sl->val;
            return 1;
        }
    }
    return 0;
}

int lg_strmap_put(golden_strmap *m, const char *key, size_t len, uint64_t value,
                      uint64_t *existing)
{
    if ((m->n + 1) * 2 > m->cap && grow_to(m, m->cap ? m->cap * 2 : 64) != 0)
        return -1;
    uint64_t h = lg_strmap_hash(key, len);
    size_t j = home(h, m->cap);
    for (; m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
        const lg_strmap_slot *sl = &m->slots[j];
        if (sl->hash == h && sl->len == len && memcmp(sl->key, key, len) == 0) {
            if (existing)
                *existing = sl->val;
            return 1;
        }
    }
    m->slots[j] = (lg_strmap_slot){h, len ? key : empty_key, len, value};
    m->n++;
    return 0;
}

void lg_strmap_free(golden_strmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}
