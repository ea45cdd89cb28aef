/* Lookup of the files compiled into libgolden (see ci/embed-files and the GNUmakefile). */
#include "util/embed.h"

#include <string.h>

const golden_embedded_file *lg_embedded_schema(const char *name)
{
    for (const golden_embedded_file *f = lg_embedded_schemas; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}
