/* The one growable array (util/vec.h): doubling growth with overflow checks, so that no
 * module writes its own realloc loop. */
#include "util/vec.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int vec_reserve(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    if (size == 0)
        return -1;
    size_t nc = *cap ? *cap : (first ? first : 1);
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return -1;
        nc *= 2;
    }
    if (nc > SIZE_MAX / size)
        return -1;
    void *old;
    memcpy(&old, items, sizeof old);
    void *grown = realloc(old, nc * size);
    if (!grown)
        return -1;
    memcpy(items, &grown, sizeof grown);
    *cap = nc;
    return 0;
}
