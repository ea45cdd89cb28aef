/* Files compiled into libgolden (the JSON Schemas of schemas/), so that no tool has to
 * find them on disk at run time. */
#ifndef GOLDEN_EMBED_H
#define GOLDEN_EMBED_H
#include <stddef.h>

typedef struct {
    const char *name;  /* base name, e.g. "calculet-graph-v1.schema.json"; NULL ends the list */
    const char *data;  /* NUL-terminated contents */
    size_t size;       /* bytes, without the terminating NUL */
} golden_embedded_file;

/* Every file of schemas/, ending with an entry whose name is NULL. */
extern const golden_embedded_file lg_embedded_schemas[];

/* The embedded schema with this base name, or NULL. */
const golden_embedded_file *lg_embedded_schema(const char *name);

#endif
