/* Test helper: validate a JSON or YAML document against an embedded (or on-disk) schema,
 * printing every violation; used to prove that golden-diff's reports match their schema. */
#include <stdio.h>
#include <stdlib.h>

#include "golden/doc.h"
#include "golden/schema.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("Usage: schema-check SCHEMA-REF FILE\n", stderr);
        return 2;
    }
    golden_error err;
    golden_schema *s = NULL;
    golden_doc *d = NULL;
    if (golden_schema_load(argv[1], &s, &err) != 0 || golden_doc_load_file(argv[2], &d, &err) != 0) {
        golden_error_print(stderr, "schema-check", &err);
        golden_schema_free(s);
        return 2;
    }
    golden_violation *v = NULL;
    long n = golden_schema_validate(s, d, NULL, &v, &err);
    if (n < 0)
        golden_error_print(stderr, "schema-check", &err);
    for (long i = 0; i < n; i++)
        fprintf(stderr, "schema-check: %s: %s: %s (%s)\n", v[i].where, v[i].pointer, v[i].message,
                v[i].keyword);
    free(v);
    golden_doc_free(d);
    golden_schema_free(s);
    return n == 0 ? 0 : (n < 0 ? 2 : 1);
}
