/* SHA-256 against the FIPS 180-2 example digests, streamed and threaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_main.h"
#include "golden/hash.h"

#define ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MILLION_A "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static void test_known_digests(void)
{
    char hex[65];
    CU_ASSERT_EQUAL(golden_sha256_buffer("abc", 3, hex, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(hex, ABC);
    CU_ASSERT_EQUAL(golden_sha256_buffer("", 0, hex, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(hex, EMPTY);
}

static void test_streamed_million(void)
{
    golden_sha256 *h = golden_sha256_new(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    char chunk[977];
    memset(chunk, 'a', sizeof chunk);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof chunk ? left : sizeof chunk;
        CU_ASSERT_EQUAL(golden_sha256_update(h, chunk, n, NULL), GOLDEN_OK);
        left -= n;
    }
    char hex[65];
    CU_ASSERT_EQUAL(golden_sha256_final(h, hex, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(hex, MILLION_A);
    CU_ASSERT_EQUAL(golden_sha256_reset(h, NULL), GOLDEN_OK);
    golden_sha256_update(h, "abc", 3, NULL);
    golden_sha256_final(h, hex, NULL);
    CU_ASSERT_STRING_EQUAL(hex, ABC);
    golden_sha256_free(h);
}

static void test_files_threaded(void)
{
    char names[3][64];
    const char *paths[4];
    const char *contents[3] = {"abc", "", NULL};
    for (int i = 0; i < 3; i++) {
        snprintf(names[i], sizeof names[i], "hash-test-%d-%d.bin", (int)getpid(), i);
        FILE *f = fopen(names[i], "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        if (contents[i])
            fputs(contents[i], f);
        else
            for (int k = 0; k < 1000000; k++)
                fputc('a', f);
        fclose(f);
        paths[i] = names[i];
    }
    char hexes[3][65];
    CU_ASSERT_EQUAL(golden_sha256_files(paths, 3, hexes, 2, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(hexes[0], ABC);
    CU_ASSERT_STRING_EQUAL(hexes[1], EMPTY);
    CU_ASSERT_STRING_EQUAL(hexes[2], MILLION_A);
    char one[65];
    CU_ASSERT_EQUAL(golden_sha256_file(paths[2], one, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(one, MILLION_A);
    paths[3] = "no-such-file-here";
    char hexes4[4][65];
    golden_error err;
    CU_ASSERT_EQUAL(golden_sha256_files(paths, 4, hexes4, 2, &err), GOLDEN_ERR);
    CU_ASSERT_STRING_EQUAL(err.where, "no-such-file-here");
    CU_ASSERT_EQUAL(err.code, GOLDEN_ENOTFOUND);
    /* two missing files: whatever the thread count, the lower-numbered one is reported
     * (files start in order, so file 1 has started before file 4 fails) */
    const char *mixed[6] = {names[0], "missing-one", names[1], names[2], "missing-four",
                            names[0]};
    char hexes6[6][65];
    for (int threads = 1; threads <= 6; threads++) {
        golden_error_clear(&err);
        CU_ASSERT_EQUAL(golden_sha256_files(mixed, 6, hexes6, threads, &err), GOLDEN_ERR);
        CU_ASSERT_STRING_EQUAL(err.where, "missing-one");
    }
    /* zero files is no work and no error; 0 threads means all cores */
    CU_ASSERT_EQUAL(golden_sha256_files(mixed, 0, hexes6, 0, NULL), GOLDEN_OK);
    CU_ASSERT_EQUAL(golden_sha256_files(paths, 3, hexes, 0, NULL), GOLDEN_OK);
    CU_ASSERT_STRING_EQUAL(hexes[2], MILLION_A);
    for (int i = 0; i < 3; i++)
        unlink(names[i]);
}

static void test_hex_check(void)
{
    CU_ASSERT(golden_is_sha256_hex(ABC));
    CU_ASSERT(!golden_is_sha256_hex("ABC"));
    CU_ASSERT(!golden_is_sha256_hex(
        "BA7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    CU_ASSERT(!golden_is_sha256_hex(ABC "0"));
}

int main(void)
{
    static const golden_test tests[] = {
        {"known digests", test_known_digests},
        {"streamed million a", test_streamed_million},
        {"files on two threads", test_files_threaded},
        {"hex check", test_hex_check},
        {0, 0}};
    return golden_test_run("hash", tests);
}
