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

static int grow_to(golden_strmap *m, size_t ncap)
{
    const char **nk = calloc(ncap, sizeof *nk);
    size_t *nl = malloc(ncap * sizeof *nl);
    uint64_t *nv = malloc(ncap * sizeof *nv);
    uint64_t *nh = malloc(ncap * sizeof *nh);
    if (!nk || !nl || !nv || !nh) {
        free(nk);
        free(nl);
        free(nv);
        free(nh);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = m->hashes[i] & (ncap - 1);
        while (nk[j])
            j = (j + 1) & (ncap - 1);
        nk[j] = m->keys[i];
        nl[j] = m->lens[i];
        nv[j] = m->vals[i];
        nh[j] = m->hashes[i];
    }
    free(m->keys);
    free(m->lens);
    free(m->vals);
    free(m->hashes);
    m->keys = nk;
    m->lens = nl;
    m->vals = nv;
    m->hashes = nh;
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
    size_t j = h & (m->cap - 1);
    while (m->keys[j]) {
        if (m->hashes[j] == h && m->lens[j] == len && memcmp(m->keys[j], key, len) == 0) {
            if (value)
                *value = m->vals[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

int lg_strmap_put(golden_strmap *m, const char *key, size_t len, uint64_t value,
                      uint64_t *existing)
{
    if ((m->n + 1) * 2 > m->cap && grow_to(m, m->cap ? m->cap * 2 : 64) != 0)
        return -1;
    uint64_t h = lg_strmap_hash(key, len);
    size_t j = h & (m->cap - 1);
    while (m->keys[j]) {
        if (m->hashes[j] == h && m->lens[j] == len && memcmp(m->keys[j], key, len) == 0) {
            if (existing)
                *existing = m->vals[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->keys[j] = len ? key : empty_key;
    m->lens[j] = len;
    m->vals[j] = value;
    m->hashes[j] = h;
    m->n++;
    return 0;
}

void lg_strmap_free(golden_strmap *m)
{
    free(m->keys);
    free(m->lens);
    free(m->vals);
    free(m->hashes);
    memset(m, 0, sizeof *m);
}
