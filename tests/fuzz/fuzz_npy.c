/* Fuzz target: the .npy reader (header parse, size checks) and the canonical-byte stream
 * (byte swapping, Fortran transposition) of whatever it accepts. */
#include "fuzz.h"

#include "golden/ingest.h"

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
            (void)golden_input_read(&l.items[i], 4096, fuzz_sink, &acc, &err);
    golden_input_list_free(&l);
    return 0;
}
