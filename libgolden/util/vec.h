/* The one growable array of the library: room for one more (or n more) elements in a
 * realloc'ed array, doubling from a first capacity, with every size computation checked. */
#ifndef LG_UTIL_VEC_H
#define LG_UTIL_VEC_H
#include <stddef.h>

/* Make *items (a T *, passed as &items) hold at least `need` elements of `size` bytes,
 * growing *cap by doubling from `first`. 0, or -1 when out of memory or the size would
 * overflow; then *items and *cap are unchanged (and still valid). */
int vec_reserve(void *items, size_t *cap, size_t need, size_t size, size_t first);

/* Room for one more element after n: VEC_GROW(f->items, f->count, f->cap, 32). */
#define VEC_GROW(arr, n, cap, first) vec_reserve(&(arr), &(cap), (size_t)(n) + 1, sizeof *(arr), (first))

#endif
