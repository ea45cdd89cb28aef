/* Fuzz target: the calculet-dump-index/v1 reader. A fixed 64-byte data file sits beside the
 * index so that entries naming it reach the size, offset and hash checks. */
#include "fuzz.h"

#include <stdio.h>

#include "golden/ingest.h"

static void write_data_file(void)
{
    static int done;
    if (done)
        return;
    char path[400];
    snprintf(path, sizeof path, "%s/0001.bin", fuzz_dir());
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    for (int i = 0; i < 64; i++)
        fputc(i * 37, f);
    fclose(f);
    done = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_dir())
        return 0;
    write_data_file();
    const char *path = fuzz_write_file(data, size, "json");
    if (!path)
        return 0;
    golden_input_list l;
    golden_input_list_init(&l);
    golden_error err = {0};
    if (golden_ingest_index(&l, path, &err) == 0)
        (void)golden_input_list_finish(&l, "p/", &err);
    golden_input_list_free(&l);
    return 0;
}
