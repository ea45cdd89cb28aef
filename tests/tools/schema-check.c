/* Test helper: validate a JSON or YAML document against a schema compiled into libgolden.
 * Usage: schema-check FILE SCHEMA-REF; prints each violation; exit 0 valid, 1 invalid, 2 error. */
#include <stdio.h>
#include <stdlib.h>

#include "golden/doc.h"
#include "golden/schema.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: schema-check FILE SCHEMA-REF\n");
        return 2;
    }
    golden_error err;
    golden_doc *doc = NULL;
    golden_schema *s = NULL;
    if (golden_doc_load_file(argv[1], &doc, &err) != GOLDEN_OK ||
        golden_schema_load(argv[2], &s, &err) != GOLDEN_OK) {
        golden_error_print(stderr, "schema-check", &err);
        golden_doc_free(doc);
        return 2;
    }
    golden_violation *v = NULL;
    long n = golden_schema_validate(s, doc, NULL, &v, &err);
    if (n < 0)
        golden_error_print(stderr, "schema-check", &err);
    for (long i = 0; i < n; i++)
        printf("%s: %s: %s (%s)\n", v[i].where, v[i].pointer, v[i].message, v[i].keyword);
    free(v);
    golden_schema_free(s);
    golden_doc_free(doc);
    return n < 0 ? 2 : n > 0;
}
