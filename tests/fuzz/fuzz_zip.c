/* Fuzz target: the zip container reader (central directory, ZIP64, names, overlaps) under .npz
 * and .pt, chosen by content as golden_ingest_path does, and the deflated streams of whatever
 * it accepts: golden_input_read in small chunks, and lg_ingest_deflated_pread out of order. */
#include "fuzz.h"

#include "golden/ingest.h"
#include "tensor/zip_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "zip");
    if (!path)
        return 0;
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    unsigned acc = 0;
    if (golden_ingest_path(&l, path, &err) == 0 && golden_input_list_finish(&l, NULL, &err) == 0)
        for (size_t i = 0; i < l.count; i++) {
            golden_input *in = &l.items[i];
            (void)golden_input_read(in, 4096, fuzz_sink, &acc, &err);
            if (in->format == GOLDEN_INPUT_DEFLATED && in->nbytes > 0) {
                unsigned char buf[64];
                uint64_t n = in->nbytes < sizeof buf ? in->nbytes : sizeof buf;
                (void)lg_ingest_deflated_pread(in, in->nbytes - n, (size_t)n, buf, &err);
                (void)lg_ingest_deflated_pread(in, 0, (size_t)n, buf, &err);
                (void)lg_ingest_deflated_pread(in, in->nbytes / 2 - (in->nbytes / 2 > n ? n : 0) / 2, 1, buf, &err);
            }
        }
    golden_input_list_free(&l);
    return 0;
}
