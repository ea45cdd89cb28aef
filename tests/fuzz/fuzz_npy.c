/* Fuzz target: the .npy reader (header parse, size checks) and the canonical-byte stream
 * (byte swapping, Fortran transposition) of whatever it accepts. */
#include "fuzz.h"

#include "golden/ingest.h"

static int sink(void *ctx, const void *data, size_t n, golden_error *err)
{
    (void)err;
    const unsigned char *p = data;
    unsigned *acc = ctx;
    for (size_t i = 0; i < n; i += 97)
        *acc += p[i];
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "npy");
    if (!path)
        return 0;
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    unsigned acc = 0;
    if (golden_ingest_npy(&l, path, "t", &err) == 0 && golden_input_list_finish(&l, NULL, &err) == 0)
        for (size_t i = 0; i < l.count; i++)
            (void)golden_input_read(&l.items[i], 4096, sink, &acc, &err);
    golden_input_list_free(&l);
    return 0;
}
