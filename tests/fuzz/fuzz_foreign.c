/* Fuzz target: the readers of inputs that are not goldens (reader_sniff.c, reader_foreign.c):
 * the kind told by content, then .npy, .safetensors, .npz/.pt (zip and unpickler), a legacy
 * pickle, plain HDF5 and folders of these, as golden-diff opens them. The first byte picks the
 * suffix the file gets (the kind must never follow it); an input starting "@@ " is a folder
 * (tests/fuzz/support/pack-folder). Each tensor read has its first and last elements read. */
#include "fuzz.h"

#include <string.h>

#include "golden/dtype.h"
#include "tensor/reader_private.h"

static const char *const suffixes[] = {"npy", "npz", "pt", "safetensors", "h5", "pth", "bin"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path;
    if (size >= 3 && memcmp(data, "@@ ", 3) == 0)
        path = fuzz_unpack_folder(data, size);
    else if (size >= 1)
        path = fuzz_write_file(data + 1, size - 1, suffixes[data[0] % 7]);
    else
        return 0;
    if (!path)
        return 0;
    lg_foreign *f = NULL;
    golden_error err = {0};
    if (lg_foreign_open(path, 0, &f, &err) != 0)
        return 0;
    unsigned char buf[1024];
    for (size_t i = 0; i < lg_foreign_count(f); i++) {
        const golden_tensor_info *t = lg_foreign_tensor(f, i);
        size_t w = golden_dtype_size(t->dtype);
        if (w == 0 || t->count == 0)
            continue;
        uint64_t n = sizeof buf / w;
        if (n > t->count)
            n = t->count;
        (void)lg_foreign_read(f, i, 0, n, buf, &err);
        (void)lg_foreign_read(f, i, t->count - n, n, buf, &err);
        (void)lg_foreign_format(f, i);
        (void)lg_foreign_stored(f, i);
    }
    (void)lg_foreign_skipped(f);
    lg_foreign_close(f);
    return 0;
}
