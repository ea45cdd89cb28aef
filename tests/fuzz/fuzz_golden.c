/* Fuzz target: the golden reader on mutated goldens, as golden-diff and golden-dump --verify open
 * a file from outside: the isolated first walk in a child process, then the checked walk, then
 * every tensor's data re-read and re-hashed. Crashes inside libhdf5 1.10.8 itself are expected
 * while it reads data, so this harness runs in libFuzzer's fork mode
 * (tests/fuzz/fuzz_golden.options); what it looks for is our reader trusting what it should not. */
#include "fuzz.h"

#include "golden/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size, "h5");
    if (!path)
        return 0;
    golden_reader *r = NULL;
    golden_error err = {0};
    if (golden_reader_open(path, &r, &err) != 0)
        return 0;
    size_t n = golden_reader_count(r);
    for (size_t i = 0; i < n; i++) {
        const golden_tensor_info *t = golden_reader_tensor(r, i);
        char hex[65];
        (void)golden_tensor_digest(t, hex, &err);
        size_t es = golden_dtype_size(t->dtype);
        if (es == 0 || t->count > (1u << 20) / es)
            continue; /* the file's size already bounds a contiguous tensor; keep runs short */
        golden_stats st;
        (void)golden_reader_recompute(r, i, hex, &st, &err);
    }
    for (size_t i = 0; i < golden_reader_meta_count(r); i++) {
        const char *k, *v;
        golden_reader_meta_at(r, i, &k, &v);
    }
    golden_reader_close(r);
    return 0;
}
