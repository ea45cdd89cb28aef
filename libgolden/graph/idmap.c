/* The id maps of a graph (see idmap.h): keyed hash, 16-byte slots, linear probing at a load
 * factor of at most one half. */
#include "graph/idmap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/vec.h"

static uint64_t sip_k0, sip_k1;
static pthread_once_t sip_once = PTHREAD_ONCE_INIT;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* The per-process key: from the kernel's random source; when that is unavailable, from the
 * clock, the process id and an address (still unknown to whoever writes the file). */
static void sip_init(void)
{
    uint64_t k[2] = {0, 0};
    if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k[0] = mix((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid());
        k[1] = mix(k[0] ^ (uint64_t)(uintptr_t)&sip_k0);
    }
    sip_k0 = k[0];
    sip_k1 = k[1];
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                                  \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                                     \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                                     \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                                  \
    } while (0)

/* SipHash-1-3 (one compression round, three finalisation rounds: what Rust's HashMap uses
 * against hash flooding), 64-bit output. */
uint64_t lg_id_hash(const char *s, size_t len)
{
    pthread_once(&sip_once, sip_init);
    uint64_t v0 = sip_k0 ^ 0x736f6d6570736575ULL, v1 = sip_k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = sip_k0 ^ 0x6c7967656e657261ULL, v3 = sip_k1 ^ 0x7465646279746573ULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t m;
        memcpy(&m, p + i, 8); /* little-endian hosts (x86-64, aarch64): the reference order */
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    switch (len - i) {
    case 7: b |= (uint64_t)p[i + 6] << 48; /* fall through */
    case 6: b |= (uint64_t)p[i + 5] << 40; /* fall through */
    case 5: b |= (uint64_t)p[i + 4] << 32; /* fall through */
    case 4: b |= (uint64_t)p[i + 3] << 24; /* fall through */
    case 3: b |= (uint64_t)p[i + 2] << 16; /* fall through */
    case 2: b |= (uint64_t)p[i + 1] << 8;  /* fall through */
    case 1: b |= (uint64_t)p[i]; break;
    default: break;
    }
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static size_t home(uint64_t h, size_t cap)
{
    return (size_t)(h & (cap - 1));
}

static int grow_to(lg_idmap *m, size_t ncap)
{
    lg_idslot *ns = malloc(ncap * sizeof *ns);
    if (!ns)
        return -1;
    /* written once (not calloc'd): a zeroed mapping would be faulted twice, read then written */
    memset(ns, 0xff, ncap * sizeof *ns);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].idx == UINT32_MAX)
            continue;
        size_t j = home(m->slots[i].hash, ncap);
        while (ns[j].idx != UINT32_MAX)
            j = (j + 1) & (ncap - 1);
        ns[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

int lg_idmap_room(lg_idmap *m)
{
    if ((m->n + 1) * 2 > m->cap && grow_to(m, m->cap ? m->cap * 2 : 64) != 0)
        return -1;
    if (m->n + 1 > m->kcap && vec_reserve(&m->keys, &m->kcap, m->n + 1, sizeof *m->keys, 64) != 0)
        return -1;
    return 0;
}

uint32_t lg_idmap_find(const lg_idmap *m, const char *key, size_t len, uint64_t h, size_t *slot)
{
    if (!m->cap) {
        if (slot)
            *slot = SIZE_MAX;
        return UINT32_MAX;
    }
    size_t j = home(h, m->cap);
    for (;; j = (j + 1) & (m->cap - 1)) {
        const lg_idslot *sl = &m->slots[j];
        if (sl->idx == UINT32_MAX)
            break;
        if (sl->hash == h && sl->len == len && memcmp(m->keys[sl->idx], key, len) == 0)
            return sl->idx;
    }
    if (slot)
        *slot = j;
    return UINT32_MAX;
}

int lg_idmap_insert_at(lg_idmap *m, size_t slot, const char *key, size_t len, uint64_t h,
                       uint32_t idx)
{
    if (slot >= m->cap || m->slots[slot].idx != UINT32_MAX || idx != m->n || m->n >= m->kcap ||
        len > UINT32_MAX) {
        /* no valid hint (the map changed, or no room was made): probe again */
        if (lg_idmap_room(m) != 0)
            return -1;
        if (lg_idmap_find(m, key, len, h, &slot) != UINT32_MAX || idx != m->n || len > UINT32_MAX)
            return -1;
    }
    m->slots[slot] = (lg_idslot){h, idx, (uint32_t)len};
    m->keys[idx] = key;
    m->n++;
    return 0;
}

int lg_idmap_put(lg_idmap *m, const char *key, size_t len, uint32_t *idx)
{
    if (lg_idmap_room(m) != 0)
        return -1;
    uint64_t h = lg_id_hash(key, len);
    size_t slot;
    uint32_t v = lg_idmap_find(m, key, len, h, &slot);
    if (v != UINT32_MAX) {
        *idx = v;
        return 1;
    }
    *idx = (uint32_t)m->n;
    return lg_idmap_insert_at(m, slot, key, len, h, (uint32_t)m->n);
}

void lg_idmap_prefetch(const lg_idmap *m, uint64_t h)
{
    if (m->cap)
        __builtin_prefetch(&m->slots[home(h, m->cap)]);
}

void lg_idmap_free(lg_idmap *m)
{
    free(m->slots);
    free(m->keys);
    memset(m, 0, sizeof *m);
}
