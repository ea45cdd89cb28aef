/* Fuzz target: the JSON Schema compiler and validator. The input is a schema (JSON); when it
 * compiles, it validates a fixed instance touching every JSON type, and the schema itself. */
#include "fuzz.h"

#include <string.h>

#include "golden/schema.h"

static const char instance[] =
    "{\"a\": [1, 2.5, -3, \"x\", null, true, {\"b\": {}}], \"c\": \"2026-12-01T00:00:00Z\","
    " \"d\": 1e308, \"e\": \"\\u00e9\\ud83d\\ude00\", \"f\": [[[]]], \"g\": 9007199254740993}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "schema.json");
    if (!path)
        return 0;
    golden_schema *s = NULL;
    golden_error err = {0};
    if (golden_schema_load(path, &s, &err) != 0)
        return 0;
    golden_doc *doc = NULL;
    if (golden_doc_load_buffer("instance.json", instance, strlen(instance), &doc, &err) == 0) {
        golden_violation *v = NULL;
        (void)golden_schema_validate(s, doc, NULL, &v, &err);
        free(v);
        golden_doc_free(doc);
    }
    doc = NULL;
    if (golden_doc_load_buffer("self.json", (const char *)data, size, &doc, &err) == 0) {
        golden_violation *v = NULL;
        (void)golden_schema_validate(s, doc, NULL, &v, &err);
        free(v);
        golden_doc_free(doc);
    }
    golden_schema_free(s);
    return 0;
}
