/* An interval map over byte addresses for the race sweep: disjoint segments, each holding the
 * last write and, per queue, the last read since it (FastTrack-style shadow state). */
#ifndef GOLDEN_IMAP_H
#define GOLDEN_IMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t slot; /* the reader's queue: a later read on one queue supersedes an earlier one */
    uint32_t acc;  /* the caller's access number */
} golden_imap_read;

typedef struct {
    uint64_t lo, hi;        /* [lo, hi) */
    uint32_t write;         /* last write's access number, UINT32_MAX when none */
    uint32_t nreads;
    golden_imap_read *reads;
} golden_imap_seg;

typedef struct golden_imap golden_imap;

/* Called with a segment's state before an access, and the overlap [lo, hi) with the access. */
typedef void (*golden_imap_fn)(void *ctx, const golden_imap_seg *seg, uint64_t lo, uint64_t hi);

golden_imap *lg_imap_new(void);
void lg_imap_free(golden_imap *m);

/* Record access `acc` (from queue `slot`) to [lo, hi), lo < hi. First calls fn (may be NULL)
 * for every segment with state overlapping the range, in address order; then a write replaces
 * the whole range with {write = acc, no reads}, a read sets slot's read to acc everywhere in
 * the range (bytes never touched before get {no write, that read}). Adjacent segments with
 * equal state are merged. Returns 0, or -1 when out of memory (the map is then unusable). */
int lg_imap_access(golden_imap *m, uint64_t lo, uint64_t hi, bool write, uint32_t acc,
                       uint32_t slot, golden_imap_fn fn, void *ctx);

/* Call fn for every segment overlapping [lo, hi) without changing the map. */
void lg_imap_query(const golden_imap *m, uint64_t lo, uint64_t hi, golden_imap_fn fn,
                       void *ctx);

/* Visit all segments in address order (lo, hi = the segment's own bounds). */
void lg_imap_each(const golden_imap *m, golden_imap_fn fn, void *ctx);
size_t lg_imap_count(const golden_imap *m);

#endif
