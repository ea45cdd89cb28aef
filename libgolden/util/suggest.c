/* "Did you mean": edit distance (optimal string alignment) and the closeness rule shared by
 * the command-line layer's unknown options and the document layer's unknown keys. */
#include "util/suggest.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 64

size_t lg_edit_distance(const char *a, size_t al, const char *b, size_t bl)
{
    if (al > NAME_MAX_LEN || bl > NAME_MAX_LEN)
        return SIZE_MAX;
    /* three rows of the classic table: the one before last (for a swap), the last, this */
    size_t r0[NAME_MAX_LEN + 1], r1[NAME_MAX_LEN + 1], r2[NAME_MAX_LEN + 1];
    size_t *pp = r0, *prev = r1, *cur = r2;
    for (size_t j = 0; j <= bl; j++)
        prev[j] = j;
    for (size_t i = 1; i <= al; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= bl; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = prev[j - 1] + cost;           /* substitute (or keep) */
            if (prev[j] + 1 < best)
                best = prev[j] + 1;                     /* delete from a */
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;                  /* insert into a */
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                pp[j - 2] + 1 < best)
                best = pp[j - 2] + 1;                   /* swap two neighbours */
            cur[j] = best;
        }
        size_t *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[bl];
}

bool lg_name_close(const char *word, size_t wl, const char *cand, size_t cl, size_t *dist)
{
    size_t d = lg_edit_distance(word, wl, cand, cl);
    if (dist)
        *dist = d;
    if (d == 0 || d == SIZE_MAX)
        return false;
    size_t shorter = wl < cl ? wl : cl;
    size_t limit = shorter <= 5 ? 1 : shorter <= 9 ? 2 : 3;
    return d <= limit && d < (wl > cl ? wl : cl);
}

void lg_suggest_init(lg_suggest *s, const char *word, size_t wl)
{
    memset(s, 0, sizeof *s);
    s->word = word;
    s->wl = wl;
    s->dist = SIZE_MAX;
}

void lg_suggest_offer(lg_suggest *s, const char *cand, size_t cl)
{
    size_t d;
    if (!cand || !lg_name_close(s->word, s->wl, cand, cl, &d) || d > s->dist)
        return;
    for (size_t k = 0; k < s->n; k++) /* the same name offered twice counts once */
        if (s->bestlen[k] == cl && memcmp(s->best[k], cand, cl) == 0)
            return;
    if (d < s->dist) {
        s->dist = d;
        s->n = s->ties = 0;
    }
    s->ties++;
    if (s->n < LG_SUGGEST_MAX) {
        s->best[s->n] = cand;
        s->bestlen[s->n] = cl;
        s->n++;
    }
}

const char *lg_suggest_text(const lg_suggest *s, const char *prefix, char *buf, size_t n)
{
    if (!n)
        return buf;
    buf[0] = '\0';
    if (!s->n)
        return buf;
    size_t at = (size_t)snprintf(buf, n, " (did you mean ");
    for (size_t k = 0; k < s->n && at < n; k++) {
        const char *sep = k == 0 ? "" : k + 1 == s->n ? " or " : ", ";
        at += (size_t)snprintf(buf + at, n - at, "%s%s%.*s", sep, prefix, (int)s->bestlen[k],
                               s->best[k]);
    }
    if (at < n)
        snprintf(buf + at, n - at, "?)");
    return buf;
}
