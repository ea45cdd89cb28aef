/* Fuzz target: the JSON Lines reader (line splitting, byte order marks, blank lines, one
 * document per line with its line number). */
#include "fuzz.h"

#include "golden/doc.h"

static int each_line(void *ctx, golden_doc *line_doc, size_t line_no, golden_error *err)
{
    (void)err;
    (void)line_no;
    (void)golden_doc_root(line_doc);
    (*(size_t *)ctx)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "jsonl");
    if (!path)
        return 0;
    golden_error err = {0};
    size_t lines = 0;
    (void)golden_doc_each_jsonl(path, each_line, &lines, &err);
    return 0;
}
