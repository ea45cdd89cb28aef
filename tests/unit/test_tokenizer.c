/* The tokenizer (golden/tokenizer.h) on a tiny hand-written tokenizer.json: every expected
 * encoding below is worked out by hand from its 12 merges and Qwen2's split (the steps are in
 * the comments), then hostile files, each one error naming the file and the problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "cunit_main.h"
#include "golden/hash.h"
#include "golden/tokenizer.h"

/* GPT-2's bytes_to_unicode, written again here: printable Latin-1 stands for itself, the
 * other bytes get U+0100, U+0101, ... in byte order. */
static unsigned byte_cp(unsigned b)
{
    unsigned n = 0;
    for (unsigned c = 0; c <= b; c++) {
        int printable = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174);
        if (c == b)
            return printable ? b : 256 + n;
        n += !printable;
    }
    return 0;
}

static void put_cp(char **o, unsigned cp)
{
    if (cp < 0x80) {
        *(*o)++ = (char)cp;
    } else {
        *(*o)++ = (char)(0xc0 | cp >> 6);
        *(*o)++ = (char)(0x80 | (cp & 0x3f));
    }
}

/* The byte-level form of a plain ASCII string ("Ġ" for a space). */
static const char *bl(const char *s, char *buf)
{
    char *o = buf;
    for (; *s; s++)
        put_cp(&o, byte_cp((unsigned char)*s));
    *o = 0;
    return buf;
}

#define QWEN2 "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+" \
              "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

/* ids 0..255: byte b is id b. Merges by rank, and the token each makes: */
static const char *const MERGES[][3] = {
    {"l", "l", "ll"},          /* 0 -> 256 */
    {"h", "e", "he"},          /* 1 -> 257 */
    {"he", "ll", "hell"},      /* 2 -> 258 */
    {"hell", "o", "hello"},    /* 3 -> 259 */
    {" ", "w", " w"},          /* 4 -> 260 */
    {"o", "r", "or"},          /* 5 -> 261 */
    {" w", "or", " wor"},      /* 6 -> 262 */
    {"l", "d", "ld"},          /* 7 -> 263 */
    {" wor", "ld", " world"},  /* 8 -> 264 */
    {" ", " ", "  "},          /* 9 -> 265, written in the [a, b] pair form */
    {"a", "a", "aa"},          /* 10 -> 266 */
    {"1", "2", "12"},          /* 11 -> 267 (never used: Qwen2 splits digits one by one) */
};
#define NMERGES 12

static json_t *base(void)
{
    json_t *vocab = json_object(), *merges = json_array();
    char buf[64], a[64], b[64];
    for (unsigned i = 0; i < 256; i++) {
        char *o = buf;
        put_cp(&o, byte_cp(i));
        *o = 0;
        json_object_set_new(vocab, buf, json_integer(i));
    }
    for (int i = 0; i < NMERGES; i++) {
        json_object_set_new(vocab, bl(MERGES[i][2], buf), json_integer(256 + i));
        if (i == 9) {
            json_t *p = json_array();
            json_array_append_new(p, json_string(bl(MERGES[i][0], a)));
            json_array_append_new(p, json_string(bl(MERGES[i][1], b)));
            json_array_append_new(merges, p);
        } else {
            snprintf(buf, sizeof buf, "%s %s", bl(MERGES[i][0], a), bl(MERGES[i][1], b));
            json_array_append_new(merges, json_string(buf));
        }
    }
    json_t *root = json_pack("{s:[{s:i,s:s,s:b},{s:i,s:s,s:b},{s:i,s:s,s:b}],s:{s:s},"
                             "s:{s:s,s:[{s:s,s:{s:s},s:s,s:b},{s:s,s:b,s:b,s:b}]},"
                             "s:{s:s,s:b},s:{s:s,s:n,s:n,s:b,s:o,s:o}}",
                             "added_tokens", "id", 300, "content", "<|end|>", "special", 1,
                             "id", 301, "content", "<a>", "special", 0,
                             "id", 302, "content", "<a>b", "special", 0,
                             "normalizer", "type", "NFC",
                             "pre_tokenizer", "type", "Sequence", "pretokenizers",
                             "type", "Split", "pattern", "Regex", QWEN2, "behavior", "Isolated",
                             "invert", 0, "type", "ByteLevel", "add_prefix_space", 0,
                             "trim_offsets", 0, "use_regex", 0,
                             "decoder", "type", "ByteLevel", "add_prefix_space", 0,
                             "model", "type", "BPE", "dropout", "unk_token", "byte_fallback", 0,
                             "vocab", vocab, "merges", merges);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    return root;
}

static char path[] = "/tmp/test-tokenizer-XXXXXX";

static void write_doc(json_t *doc)
{
    CU_ASSERT_EQUAL_FATAL(json_dump_file(doc, path, JSON_INDENT(1)), 0);
}

static golden_tokenizer *load_base(void)
{
    json_t *doc = base();
    write_doc(doc);
    json_decref(doc);
    golden_tokenizer *t = NULL;
    golden_error err;
    if (golden_tokenizer_load(path, NULL, &t, &err))
        fprintf(stderr, "%s: %s\n", err.where, err.what);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

/* encode(text) == want[0..n) and decode gives text back when `round` is set. */
static void expect(const golden_tokenizer *t, const char *text, size_t len, const int32_t *want,
                   size_t n, int round)
{
    int32_t *ids = NULL;
    size_t got = 0;
    golden_error err;
    CU_ASSERT_EQUAL_FATAL(golden_tokenizer_encode(t, text, len, &ids, &got, &err), 0);
    CU_ASSERT_EQUAL(got, n);
    int same = got == n && (n == 0 || memcmp(ids, want, n * sizeof *ids) == 0);
    if (!same) {
        fprintf(stderr, "\n'%.*s':", (int)len, text);
        for (size_t i = 0; i < got; i++)
            fprintf(stderr, " %d", (int)ids[i]);
    }
    CU_ASSERT(same);
    if (round) {
        char *back = NULL;
        size_t blen = 0;
        CU_ASSERT_EQUAL(golden_tokenizer_decode(t, ids, got, &back, &blen, &err), 0);
        CU_ASSERT(blen == len && memcmp(back, text, len) == 0);
        free(back);
    }
    free(ids);
}

#define EXPECT(t, s, round, ...)                                                            \
    do {                                                                                   \
        const int32_t w_[] = {__VA_ARGS__};                                                \
        expect(t, s, sizeof s - 1, w_, sizeof w_ / sizeof w_[0], round);                   \
    } while (0)

static void test_encode_by_hand(void)
{
    golden_tokenizer *t = load_base();
    /* "hello": h e l l o -> (l,l) rank 0 -> h e ll o -> (h,e) 1 -> he ll o -> 2 -> hell o -> 3.
     * " world": (Ġ,w) 4 -> Ġw o r l d -> (o,r) 5 -> Ġw or l d -> 6 -> Ġwor l d -> (l,d) 7 ->
     * Ġwor ld -> 8. */
    EXPECT(t, "hello world", 1, 259, 264);
    /* "aaa": two (a,a) candidates of rank 10: the leftmost merges first. */
    EXPECT(t, "aaa", 1, 266, 97);
    EXPECT(t, "aaaa", 1, 266, 266);
    /* Qwen2 splits numbers into single digits, so merge 11 never applies. */
    EXPECT(t, "12", 1, 49, 50);
    /* "x   y": \s+(?!\S) takes two of the three spaces (the third starts " y"). */
    EXPECT(t, "x   y", 1, 120, 265, 32, 121);
    /* Added tokens first, the longest at a position. */
    EXPECT(t, "hello<|end|>hello", 1, 259, 300, 259);
    EXPECT(t, "<a>bc", 1, 302, 99);
    EXPECT(t, "<a>c", 1, 301, 99);
    EXPECT(t, "<|end|>", 1, 300);
    /* "he'll": the contraction 'll is its own piece (then ' and ll: (l,l) rank 0). */
    EXPECT(t, "he'll", 1, 257, 39, 256);
    /* NFC: e + U+0301 becomes U+00E9, bytes C3 A9 (no round trip: the text is not NFC). */
    EXPECT(t, "e\xcc\x81", 0, 0xc3, 0xa9);
    /* Invalid UTF-8: 0xFF is never matched by the split regex and is a piece of its own. */
    EXPECT(t, "a\xff" "b", 1, 97, 255, 98);
    EXPECT(t, "he\xffllo", 1, 257, 255, 256, 111);
    /* A truncated character (C3 without its continuation) the same way. */
    EXPECT(t, "\xc3 a", 1, 0xc3, 32, 97);
    int32_t *ids = NULL;
    size_t n = 7;
    CU_ASSERT_EQUAL(golden_tokenizer_encode(t, "", 0, &ids, &n, NULL), 0);
    CU_ASSERT_EQUAL(n, 0);
    free(ids);
    golden_tokenizer_free(t);
}

static void test_decode_and_lookup(void)
{
    golden_tokenizer *t = load_base();
    char *s = NULL;
    size_t len = 0;
    golden_error err;
    CU_ASSERT_EQUAL(golden_tokenizer_decode(t, (const int32_t[]){259, 264, 300}, 3, &s, &len, &err), 0);
    CU_ASSERT_STRING_EQUAL(s, "hello world<|end|>");
    free(s);
    /* one byte of a two-byte character: the bytes as they are */
    CU_ASSERT_EQUAL(golden_tokenizer_decode(t, (const int32_t[]){0xc3}, 1, &s, &len, &err), 0);
    CU_ASSERT(len == 1 && (unsigned char)s[0] == 0xc3);
    free(s);
    CU_ASSERT_EQUAL(golden_tokenizer_decode(t, (const int32_t[]){259, 299}, 2, &s, &len, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "id 299"));
    CU_ASSERT_EQUAL(golden_tokenizer_decode(t, (const int32_t[]){-1}, 1, &s, &len, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_tokenizer_vocab_size(t), 303);
    int32_t id = -5;
    CU_ASSERT_EQUAL(golden_tokenizer_token_id(t, "<|end|>", 7, &id), 0);
    CU_ASSERT_EQUAL(id, 300);
    CU_ASSERT_EQUAL(golden_tokenizer_token_id(t, "hello", 5, &id), 0);
    CU_ASSERT_EQUAL(id, 259);
    CU_ASSERT_EQUAL(golden_tokenizer_token_id(t, " world", 6, &id), 0);
    CU_ASSERT_EQUAL(id, 264);
    CU_ASSERT_EQUAL(golden_tokenizer_token_id(t, "zzz", 3, &id), -1);
    char hex[65];
    CU_ASSERT_EQUAL(golden_sha256_file(path, hex, NULL), 0);
    CU_ASSERT_STRING_EQUAL(golden_tokenizer_sha256(t), hex);
    golden_tokenizer_free(t);
}

/* Load doc (a modified base), expect one error whose where names the file and whose what
 * contains `want`. */
static void hostile(json_t *doc, const char *want, golden_code code)
{
    write_doc(doc);
    json_decref(doc);
    golden_tokenizer *t = (golden_tokenizer *)1;
    golden_error err;
    CU_ASSERT_EQUAL(golden_tokenizer_load(path, NULL, &t, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_EQUAL(err.code, code);
    CU_ASSERT_EQUAL(strncmp(err.where, path, strlen(path)), 0);
    if (!strstr(err.what, want))
        fprintf(stderr, "\nwanted '%s', got '%s: %s'\n", want, err.where, err.what);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, want));
}

static json_t *model_of(json_t *d)
{
    return json_object_get(d, "model");
}

static void test_hostile(void)
{
    json_t *d = base();
    json_object_del(d, "model");
    hostile(d, "\"model\" is missing", GOLDEN_EINVAL);
    d = base();
    json_object_set_new(model_of(d), "type", json_string("WordPiece"));
    hostile(d, "not \"BPE\"", GOLDEN_EUNSUPPORTED);
    d = base();
    json_object_del(model_of(d), "merges");
    hostile(d, "model.merges is missing", GOLDEN_EINVAL);
    d = base();
    json_array_append_new(json_object_get(model_of(d), "merges"), json_string("he zz"));
    hostile(d, "names \"zz\"", GOLDEN_EINVAL);
    d = base();
    json_array_append_new(json_object_get(model_of(d), "merges"), json_string("x y"));
    hostile(d, "makes \"xy\"", GOLDEN_EINVAL);
    d = base();
    json_array_append_new(json_object_get(model_of(d), "merges"), json_string("a b c"));
    hostile(d, "not two tokens", GOLDEN_EINVAL);
    d = base();
    json_array_append_new(json_object_get(model_of(d), "merges"), json_string("l l"));
    hostile(d, "repeats merge 0", GOLDEN_EINVAL);
    d = base();
    json_object_set_new(json_object_get(model_of(d), "vocab"), "zz", json_integer(5));
    hostile(d, "id 5 is given to two tokens", GOLDEN_EINVAL);
    d = base();
    json_object_del(json_object_get(model_of(d), "vocab"), "\xc4\x80"); /* byte 0x00 */
    hostile(d, "byte 0x00", GOLDEN_EINVAL);
    d = base();
    json_object_set_new(json_object_get(model_of(d), "vocab"), "\xe2\x82\xac", json_integer(400));
    hostile(d, "outside the byte-level alphabet", GOLDEN_EINVAL);
    d = base();
    json_object_set_new(json_object_get(model_of(d), "vocab"), "zz", json_integer(1 << 30));
    hostile(d, "is outside 0..", GOLDEN_EINVAL);
    d = base();
    json_object_set_new(model_of(d), "byte_fallback", json_true());
    hostile(d, "byte_fallback", GOLDEN_EUNSUPPORTED);
    d = base();
    json_object_set_new(model_of(d), "dropout", json_real(0.1));
    hostile(d, "dropout", GOLDEN_EUNSUPPORTED);
    d = base();
    json_object_del(d, "pre_tokenizer");
    hostile(d, "needs a pre_tokenizer", GOLDEN_EUNSUPPORTED);
    d = base();
    json_object_set_new(d, "normalizer", json_pack("{s:s}", "type", "NFKC"));
    hostile(d, "\"NFKC\" is not supported", GOLDEN_EUNSUPPORTED);
    d = base();
    json_object_set_new(json_object_get(json_array_get(json_object_get(json_object_get(d,
                        "pre_tokenizer"), "pretokenizers"), 0), "pattern"), "Regex", json_string("(a"));
    hostile(d, "does not compile", GOLDEN_EINVAL);
    d = base();
    json_object_set_new(json_array_get(json_object_get(d, "added_tokens"), 0), "lstrip", json_true());
    hostile(d, "lstrip true is not supported", GOLDEN_EUNSUPPORTED);
    d = base();
    json_object_set_new(json_array_get(json_object_get(d, "added_tokens"), 1), "content",
                        json_string("<a>b"));
    hostile(d, "two added tokens", GOLDEN_EINVAL);
    d = base();
    json_object_set_new(json_array_get(json_object_get(d, "added_tokens"), 0), "id", json_integer(259));
    hostile(d, "added token \"<|end|>\" has id 259, which the vocab gives to another token",
            GOLDEN_EINVAL);
    /* Not JSON at all, and a file above the limit. */
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"model\": {\"type\": \"BPE\",}", f);
    fclose(f);
    golden_tokenizer *t = NULL;
    golden_error err;
    CU_ASSERT_EQUAL(golden_tokenizer_load(path, NULL, &t, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(strncmp(err.where, path, strlen(path)), 0);
    golden_tokenizer_opts o = GOLDEN_TOKENIZER_OPTS_INIT;
    o.max_bytes = 10;
    CU_ASSERT_EQUAL(golden_tokenizer_load(path, &o, &t, &err), GOLDEN_ERR);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.what, "above the tokenizer limit of 10"));
    o.version = 99;
    CU_ASSERT_EQUAL(golden_tokenizer_load(path, &o, &t, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(golden_tokenizer_load("/nonexistent/tokenizer.json", NULL, &t, &err), GOLDEN_ERR);
    CU_ASSERT_EQUAL(err.code, GOLDEN_ENOTFOUND);
}

/* The synthetic tokenizer: deterministic, of the asked size, and it loads. */
static void test_synthetic(void)
{
    char p2[] = "/tmp/test-tokenizer-synth-XXXXXX";
    int fd = mkstemp(p2);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    golden_error err;
    char h1[65], h2[65];
    CU_ASSERT_EQUAL_FATAL(golden_tokenizer_write_synthetic(path, 512, &err), 0);
    CU_ASSERT_EQUAL_FATAL(golden_tokenizer_write_synthetic(p2, 512, &err), 0);
    CU_ASSERT_EQUAL(golden_sha256_file(path, h1, NULL), 0);
    CU_ASSERT_EQUAL(golden_sha256_file(p2, h2, NULL), 0);
    CU_ASSERT_STRING_EQUAL(h1, h2);
    golden_tokenizer *t = NULL;
    CU_ASSERT_EQUAL_FATAL(golden_tokenizer_load(path, NULL, &t, &err), 0);
    CU_ASSERT_EQUAL(golden_tokenizer_vocab_size(t), 512);
    int32_t id;
    CU_ASSERT_EQUAL(golden_tokenizer_token_id(t, "<|im_end|>", 10, &id), 0);
    CU_ASSERT_EQUAL(id, 511);
    CU_ASSERT_EQUAL(golden_tokenizer_token_id(t, "!", 1, &id), 0);
    CU_ASSERT_EQUAL(id, 0); /* GPT-2's order: '!' first */
    CU_ASSERT_EQUAL(golden_tokenizer_token_id(t, " the", 4, &id), 0); /* learnt from the text */
    golden_tokenizer_free(t);
    CU_ASSERT_EQUAL(golden_tokenizer_write_synthetic(p2, 258, &err), GOLDEN_ERR);
    unlink(p2);
}

static void test_cleanup(void)
{
    CU_ASSERT_EQUAL(unlink(path), 0);
}

int main(void)
{
    int fd = mkstemp(path);
    if (fd < 0)
        return 2;
    close(fd);
    static const golden_test tests[] = {
        {"encode by hand", test_encode_by_hand},
        {"decode and lookup", test_decode_and_lookup},
        {"hostile files", test_hostile},
        {"synthetic", test_synthetic},
        {"cleanup", test_cleanup},
        {NULL, NULL},
    };
    return golden_test_run("tokenizer", tests);
}
