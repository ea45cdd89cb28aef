/* Tensor name mapping for golden-diff: ordered rename rules (glob with captures, or POSIX
 * regex with back-references) for dumps whose names differ between runtimes. */
#ifndef GOLDEN_NAMEMAP_H
#define GOLDEN_NAMEMAP_H
#include "golden/api.h"
#include <stdbool.h>
#include <jansson.h>
#include "golden/error.h"

typedef struct golden_namemap golden_namemap;

GOLDEN_API golden_namemap *golden_namemap_new(void);
GOLDEN_API void golden_namemap_free(golden_namemap *m);

/* Append one rule. A glob's '*' and '?' capture, and each '*' of `to` takes the next
 * capture; a regex must match the whole name and `to` may use \1..\9. */
GOLDEN_API int golden_namemap_add(golden_namemap *m, const char *from, const char *to, bool regex,
                       golden_error *err);
/* Append the "map" list of a calculet-diff-policy/v1 tree (no "map": nothing added). */
GOLDEN_API int golden_namemap_add_json(golden_namemap *m, const json_t *root, const char *where,
                            golden_error *err);
/* Load a policy-schema file (YAML or JSON), validate it and append its "map". */
GOLDEN_API int golden_namemap_load(golden_namemap *m, const char *path, golden_error *err);

GOLDEN_API size_t golden_namemap_count(const golden_namemap *m);

/* The mapped name of `name` (newly allocated; the name itself when no rule matches).
 * NULL with err on ENOMEM. */
GOLDEN_API char *golden_namemap_apply(const golden_namemap *m, const char *name, golden_error *err);

#endif
