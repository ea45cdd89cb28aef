/* Fuzz target: the .safetensors reader (JSON header, dtypes, offsets against the file and each
 * other) and the byte stream of every tensor it accepts. */
#include "fuzz.h"

#include "golden/ingest.h"

static int sink(void *ctx, const void *data, size_t n, golden_error *err)
{
    (void)err;
    (void)data;
    *(size_t *)ctx += n;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "safetensors");
    if (!path)
        return 0;
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    size_t total = 0;
    if (golden_ingest_safetensors(&l, path, &err) == 0 &&
        golden_input_list_finish(&l, NULL, &err) == 0)
        for (size_t i = 0; i < l.count; i++)
            (void)golden_input_read(&l.items[i], 0, sink, &total, &err);
    golden_input_list_free(&l);
    return 0;
}
