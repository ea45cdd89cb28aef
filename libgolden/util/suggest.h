/* "Did you mean": the one closeness rule for a misspelt name (an option, a document key), so
 * the command-line layer and the document layer suggest the same way. */
#ifndef LG_UTIL_SUGGEST_H
#define LG_UTIL_SUGGEST_H
#include <stdbool.h>
#include <stddef.h>

/* The optimal-string-alignment distance between a and b (insert, delete, substitute, swap two
 * neighbours: one each, bytes compared exactly). Names longer than 64 bytes are never close:
 * SIZE_MAX. */
size_t lg_edit_distance(const char *a, size_t al, const char *b, size_t bl);

/* Whether cand is close enough to word to suggest: a distance of at most 1 for names up to
 * 5 bytes, 2 up to 9, 3 beyond (git-like: one slip in a short name, a few in a long one),
 * and never the whole name (a 2-byte word is not "close" to a different 2-byte name by
 * 2 edits). *dist receives the distance when given. */
bool lg_name_close(const char *word, size_t wl, const char *cand, size_t cl, size_t *dist);

/* Keeps the best candidates seen so far: feed each with lg_suggest_offer, then read best[]
 * (at most LG_SUGGEST_MAX names at the smallest distance, in the order offered). */
#define LG_SUGGEST_MAX 3
typedef struct {
    const char *word;
    size_t wl;
    size_t dist;  /* SIZE_MAX: none yet */
    size_t n;     /* names kept, <= LG_SUGGEST_MAX */
    size_t ties;  /* names at the best distance (may exceed n) */
    const char *best[LG_SUGGEST_MAX];
    size_t bestlen[LG_SUGGEST_MAX];
} lg_suggest;
void lg_suggest_init(lg_suggest *s, const char *word, size_t wl);
void lg_suggest_offer(lg_suggest *s, const char *cand, size_t cl);
/* " (did you mean PREFIXa?)" or " (did you mean PREFIXa or PREFIXb?)" into buf, or "" when
 * nothing is close; prefix is "--" for options, "" for keys. Returns buf. */
const char *lg_suggest_text(const lg_suggest *s, const char *prefix, char *buf, size_t n);

#endif
