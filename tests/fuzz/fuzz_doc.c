/* Fuzz target: the document loader. The first byte picks JSON or YAML (its low bit), the rest
 * is the document; every node's position is asked for, as error messages do. */
#include "fuzz.h"

#include "golden/doc.h"

static void walk(const golden_doc *doc, json_t *node, int depth)
{
    int line, col;
    (void)golden_doc_line(doc, node, &line, &col);
    if (depth > 64)
        return;
    if (json_is_object(node)) {
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v) walk(doc, v, depth + 1);
    } else if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) walk(doc, v, depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *name = (data[0] & 1) ? "fuzz.yaml" : "fuzz.json";
    golden_doc *doc = NULL;
    golden_error err = {0};
    if (golden_doc_load_buffer(name, (const char *)data + 1, size - 1, &doc, &err) == 0) {
        walk(doc, golden_doc_root(doc), 0);
        golden_doc_free(doc);
    }
    return 0;
}
