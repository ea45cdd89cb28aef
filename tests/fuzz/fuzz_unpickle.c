/* Fuzz target: the restricted unpickler of PyTorch's data.pkl, on its own and inside a stored
 * zip archive (archive/data.pkl with storages archive/data/0..3 of 64 bytes) read by
 * golden_ingest_pt, so that the state_dict walk and the tensor checks see what it builds
 * (only for pickles the unpickler accepts: the others cost no file writes). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"

#include "golden/ingest.h"
#include "tensor/unpickle_private.h"

static unsigned char *zip_out;
static size_t zip_n, zip_cap;

static void put(const void *p, size_t n)
{
    if (zip_n + n > zip_cap) {
        size_t cap = (zip_n + n) * 2;
        unsigned char *b = realloc(zip_out, cap);
        if (!b)
            abort();
        zip_out = b;
        zip_cap = cap;
    }
    memcpy(zip_out + zip_n, p, n);
    zip_n += n;
}

static void put16(unsigned v) { unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)}; put(b, 2); }
static void put32(unsigned long v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    put(b, 4);
}

/* A stored zip of n members. */
static void make_zip(const char **names, const unsigned char **bodies, const size_t *lens, int n)
{
    unsigned long off[8], crc[8];
    zip_n = 0;
    for (int i = 0; i < n; i++) {
        off[i] = (unsigned long)zip_n;
        crc[i] = crc32(0, bodies[i], (uInt)lens[i]);
        put32(0x04034b50); put16(20); put16(0); put16(0); put16(0); put16(0);
        put32(crc[i]); put32((unsigned long)lens[i]); put32((unsigned long)lens[i]);
        put16((unsigned)strlen(names[i])); put16(0);
        put(names[i], strlen(names[i]));
        put(bodies[i], lens[i]);
    }
    unsigned long cd = (unsigned long)zip_n;
    for (int i = 0; i < n; i++) {
        put32(0x02014b50); put16(20); put16(20); put16(0); put16(0); put16(0); put16(0);
        put32(crc[i]); put32((unsigned long)lens[i]); put32((unsigned long)lens[i]);
        put16((unsigned)strlen(names[i])); put16(0); put16(0); put16(0); put16(0); put32(0);
        put32(off[i]);
        put(names[i], strlen(names[i]));
    }
    unsigned long cdn = (unsigned long)zip_n - cd;
    put32(0x06054b50); put16(0); put16(0); put16((unsigned)n); put16((unsigned)n);
    put32(cdn); put32(cd); put16(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    golden_error err = {0};
    lg_pickle pk;
    if (lg_unpickle(data, size, "fuzz", &pk, &err) != 0)
        return 0; /* the archive's reader would refuse it the same way: skip the file work */
    lg_pickle_free(&pk);
    static unsigned char storage[64];
    for (size_t i = 0; i < sizeof storage; i++)
        storage[i] = (unsigned char)(i * 37);
    const char *names[] = {"archive/data.pkl", "archive/data/0", "archive/data/1", "archive/data/2",
                           "archive/data/3", "archive/version"};
    const unsigned char *bodies[] = {data, storage, storage, storage, storage, (const unsigned char *)"3\n"};
    size_t lens[] = {size, 64, 16, 8, 4, 2};
    make_zip(names, bodies, lens, 6);
    const char *path = fuzz_write_file(zip_out, zip_n, "pt");
    if (!path)
        return 0;
    golden_input_list l;
    golden_input_list_init(&l);
    unsigned acc = 0;
    if (golden_ingest_pt(&l, path, &err) == 0 && golden_input_list_finish(&l, NULL, &err) == 0)
        for (size_t i = 0; i < l.count; i++)
            (void)golden_input_read(&l.items[i], 4096, fuzz_sink, &acc, &err);
    golden_input_list_free(&l);
    return 0;
}
