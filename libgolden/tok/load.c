/* Loading a Hugging Face tokenizer.json of the byte-level BPE kind: the file is read once
 * (size-checked first), hashed, and parsed by the strict document loader; every key the
 * tokenizer depends on is checked, and anything it cannot honour is refused, never ignored. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "golden/doc.h"
#include "golden/hash.h"
#include "tok/tok_int.h"

typedef struct {
    const char *path;
    golden_doc *doc;
    golden_tokenizer *t;
    golden_error *err;
    int16_t inv[0x144]; /* byte-level code point -> byte, -1 outside the alphabet */
} loader;

__attribute__((format(printf, 4, 5)))
static int bad(loader *L, const json_t *node, golden_code code, const char *fmt, ...)
{
    char where[1024];
    if (node)
        golden_doc_where(L->doc, node, where, sizeof where);
    else
        snprintf(where, sizeof where, "%s", L->path);
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return golden_fail_what(L->err, code, where, "%s", what);
}

static int oom(loader *L)
{
    return golden_fail_what(L->err, GOLDEN_ENOMEM, L->path, "out of memory");
}

/* Read the whole file, refusing one above max bytes before reading it. */
static int read_file(const char *path, size_t max, char **buf, size_t *len, golden_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "not a regular file");
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path,
                                "the file is %lld bytes, above the tokenizer limit of %zu",
                                (long long)st.st_size, max);
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *b = malloc(n + 1);
    if (!b) {
        close(fd);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got != n) {
        free(b);
        return golden_fail_what(err, GOLDEN_EIO, path, "short read (%zu of %zu bytes)", got, n);
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

/* A byte-level string (UTF-8 of alphabet code points) -> raw bytes into out (room for len);
 * the byte count, or -1 when a character is outside the alphabet (*bad_cp set). */
static long from_byte_level(const loader *L, const char *s, size_t len, unsigned char *out,
                            uint32_t *bad_cp)
{
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        size_t w = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        if (i + w > len)
            w = len - i;
        cp = w == 1 ? c : w == 2 ? c & 0x1f : w == 3 ? c & 0x0f : c & 0x07;
        for (size_t j = 1; j < w; j++)
            cp = cp << 6 | ((unsigned char)s[i + j] & 0x3f);
        if (cp >= 0x144 || L->inv[cp] < 0) {
            *bad_cp = cp;
            return -1;
        }
        out[k++] = (unsigned char)L->inv[cp];
        i += w;
    }
    return (long)k;
}

static int get_id(loader *L, const json_t *node, const char *what, int32_t *id)
{
    if (!json_is_integer(node))
        return bad(L, node, GOLDEN_EINVAL, "%s is not an integer", what);
    json_int_t v = json_integer_value(node);
    if (v < 0 || v >= GOLDEN_TOKENIZER_MAX_ID)
        return bad(L, node, GOLDEN_EINVAL, "%s %lld is outside 0..%d", what, (long long)v,
                   (int)GOLDEN_TOKENIZER_MAX_ID - 1);
    *id = (int32_t)v;
    return 0;
}

/* Set id's bytes; a second token with the same id is an error. */
static int set_token(loader *L, const json_t *node, int32_t id, const unsigned char *b, size_t n,
                     size_t *used)
{
    golden_tokenizer *t = L->t;
    if (t->off[id] != SIZE_MAX)
        return bad(L, node, GOLDEN_EINVAL, "id %d is given to two tokens", (int)id);
    memcpy(t->bytes + *used, b, n);
    t->off[id] = *used;
    t->len[id] = n;
    *used += n;
    return 0;
}

static int load_vocab(loader *L, json_t *model, json_t *added, size_t *used)
{
    golden_tokenizer *t = L->t;
    json_t *vocab = json_object_get(model, "vocab");
    if (!json_is_object(vocab))
        return bad(L, vocab ? vocab : model, GOLDEN_EINVAL,
                   vocab ? "model.vocab is not an object" : "model.vocab is missing");
    if (json_object_size(vocab) == 0)
        return bad(L, vocab, GOLDEN_EINVAL, "model.vocab is empty");
    size_t total = 0, i;
    int32_t maxid = -1, id;
    const char *key;
    json_t *v;
    json_object_foreach(vocab, key, v) {
        if (get_id(L, v, "a vocab id", &id))
            return GOLDEN_ERR;
        maxid = id > maxid ? id : maxid;
        total += strlen(key);
    }
    json_array_foreach(added, i, v) {
        json_t *c = json_object_get(v, "content");
        if (!json_is_object(v) || !json_is_string(c))
            return bad(L, v, GOLDEN_EINVAL, "added_tokens[%zu] has no string \"content\"", i);
        if (json_string_length(c) == 0)
            return bad(L, c, GOLDEN_EINVAL, "added_tokens[%zu] has an empty content", i);
        if (get_id(L, json_object_get(v, "id") ? json_object_get(v, "id") : v,
                   "an added token's id", &id))
            return GOLDEN_ERR;
        maxid = id > maxid ? id : maxid;
        total += json_string_length(c);
    }
    t->nids = (size_t)maxid + 1;
    t->bytes = malloc(total + 1);
    t->off = malloc(t->nids * sizeof *t->off);
    t->len = calloc(t->nids, sizeof *t->len);
    if (!t->bytes || !t->off || !t->len || lg_strmap_reserve(&t->vocab, json_object_size(vocab)))
        return oom(L);
    memset(t->off, 0xff, t->nids * sizeof *t->off);
    unsigned char tmp[4096];
    json_object_foreach(vocab, key, v) {
        size_t kl = strlen(key);
        unsigned char *raw = kl <= sizeof tmp ? tmp : malloc(kl);
        if (!raw)
            return oom(L);
        uint32_t cp = 0;
        long n = from_byte_level(L, key, kl, raw, &cp);
        int rc = 0;
        if (n <= 0)
            rc = n == 0 ? bad(L, v, GOLDEN_EINVAL, "the vocab has an empty token")
                        : bad(L, v, GOLDEN_EINVAL, "vocab token \"%s\" has U+%04X, outside the "
                              "byte-level alphabet", key, (unsigned)cp);
        if (!rc && !(rc = set_token(L, v, (int32_t)json_integer_value(v), raw, (size_t)n, used))) {
            id = (int32_t)json_integer_value(v);
            uint64_t prev;
            int pr = lg_strmap_put(&t->vocab, t->bytes + t->off[id], (size_t)n, (uint64_t)id, &prev);
            if (pr < 0)
                rc = oom(L);
            else if (pr == 1)
                rc = bad(L, v, GOLDEN_EINVAL, "vocab token \"%s\" has the same bytes as id %d",
                         key, (int)prev);
            if (!rc && n == 1)
                t->byte_id[raw[0]] = id;
        }
        if (raw != tmp)
            free(raw);
        if (rc)
            return rc;
    }
    for (int b = 0; b < 256; b++)
        if (t->byte_id[b] < 0)
            return bad(L, vocab, GOLDEN_EINVAL, "the vocab lacks the token of byte 0x%02X (a "
                       "byte-level BPE needs all 256)", (unsigned)b);
    return 0;
}

static int cmp_added(const void *a, const void *b)
{
    const tok_added *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->content, y->content, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int load_added(loader *L, json_t *added, size_t *used)
{
    golden_tokenizer *t = L->t;
    size_t i, n = json_array_size(added);
    json_t *v;
    t->added = calloc(n ? n : 1, sizeof *t->added);
    if (!t->added)
        return oom(L);
    json_array_foreach(added, i, v) {
        static const char *const flags[] = {"single_word", "lstrip", "rstrip"};
        for (size_t f = 0; f < 3; f++) {
            json_t *fl = json_object_get(v, flags[f]);
            if (fl && !json_is_boolean(fl))
                return bad(L, v, GOLDEN_EINVAL, "added_tokens[%zu].%s is not a boolean", i, flags[f]);
            if (json_is_true(fl))
                return bad(L, v, GOLDEN_EUNSUPPORTED, "added_tokens[%zu].%s true is not supported",
                           i, flags[f]);
        }
        json_t *c = json_object_get(v, "content");
        int32_t id = (int32_t)json_integer_value(json_object_get(v, "id"));
        const char *s = json_string_value(c);
        size_t len = json_string_length(c);
        if (t->off[id] == SIZE_MAX) {
            if (set_token(L, v, id, (const unsigned char *)s, len, used))
                return GOLDEN_ERR;
        } else if (t->len[id] != len || memcmp(t->bytes + t->off[id], s, len) != 0) {
            /* The vocab's token of that id would decode as the added content: refused. */
            return bad(L, v, GOLDEN_EINVAL, "added token \"%s\" has id %d, which the vocab gives "
                       "to another token", s, (int)id);
        }
        t->added[i].content = t->bytes + t->off[id];
        t->added[i].len = len;
        t->added[i].id = id;
    }
    t->nadded = n;
    qsort(t->added, n, sizeof *t->added, cmp_added);
    for (i = 1; i < n; i++)
        if (cmp_added(&t->added[i - 1], &t->added[i]) == 0)
            return bad(L, added, GOLDEN_EINVAL, "two added tokens have the content \"%.*s\"",
                       (int)t->added[i].len, t->added[i].content);
    return 0;
}

/* One merge's two sides as strings: "a b" or ["a", "b"]. */
static int merge_sides(loader *L, json_t *m, size_t i, const char **a, size_t *al,
                       const char **b, size_t *bl)
{
    if (json_is_string(m)) {
        const char *s = json_string_value(m), *sp = strchr(s, ' ');
        size_t n = json_string_length(m);
        if (!sp || strchr(sp + 1, ' ') || sp == s || sp + 1 == s + n)
            return bad(L, m, GOLDEN_EINVAL, "merge %zu \"%s\" is not two tokens separated by "
                       "one space", i, s);
        *a = s, *al = (size_t)(sp - s), *b = sp + 1, *bl = n - *al - 1;
        return 0;
    }
    if (json_is_array(m) && json_array_size(m) == 2 && json_is_string(json_array_get(m, 0)) &&
        json_is_string(json_array_get(m, 1))) {
        *a = json_string_value(json_array_get(m, 0)), *al = json_string_length(json_array_get(m, 0));
        *b = json_string_value(json_array_get(m, 1)), *bl = json_string_length(json_array_get(m, 1));
        return 0;
    }
    return bad(L, m, GOLDEN_EINVAL, "merge %zu is neither \"a b\" nor [\"a\", \"b\"]", i);
}

static int load_merges(loader *L, json_t *model)
{
    golden_tokenizer *t = L->t;
    json_t *merges = json_object_get(model, "merges"), *m;
    if (!json_is_array(merges))
        return bad(L, merges ? merges : model, GOLDEN_EINVAL,
                   merges ? "model.merges is not an array" : "model.merges is missing");
    size_t i, cap = 0;
    unsigned char *buf = NULL;
    int rc = 0;
    json_array_foreach(merges, i, m) {
        const char *side[2] = {NULL, NULL};
        size_t sl[2] = {0, 0};
        if ((rc = merge_sides(L, m, i, &side[0], &sl[0], &side[1], &sl[1])))
            break;
        if (sl[0] + sl[1] > cap) {
            cap = 2 * (sl[0] + sl[1]);
            unsigned char *nb = realloc(buf, cap);
            if (!nb) {
                rc = oom(L);
                break;
            }
            buf = nb;
        }
        uint64_t id[3];
        long n[2];
        uint32_t cp = 0;
        for (int k = 0; k < 2 && !rc; k++) {
            n[k] = from_byte_level(L, side[k], sl[k], buf + (k ? n[0] : 0), &cp);
            if (n[k] < 0 || !lg_strmap_get(&t->vocab, (char *)buf + (k ? n[0] : 0),
                                               (size_t)n[k], &id[k]))
                rc = bad(L, m, GOLDEN_EINVAL, "merge %zu names \"%.*s\", a token the vocab "
                         "does not have", i, (int)sl[k], side[k]);
        }
        if (!rc && !lg_strmap_get(&t->vocab, (char *)buf, (size_t)(n[0] + n[1]), &id[2]))
            rc = bad(L, m, GOLDEN_EINVAL, "merge %zu makes \"%.*s%.*s\", a token the vocab does "
                     "not have", i, (int)sl[0], side[0], (int)sl[1], side[1]);
        uint32_t r0, i0;
        if (!rc && tok_pair_get(&t->merges, (uint32_t)id[0], (uint32_t)id[1], &r0, &i0))
            rc = bad(L, m, GOLDEN_EINVAL, "merge %zu repeats merge %u", i, (unsigned)r0);
        if (!rc && tok_pair_put(&t->merges, (uint32_t)id[0], (uint32_t)id[1], (uint32_t)i,
                                (uint32_t)id[2]))
            rc = oom(L);
        if (rc)
            break;
    }
    free(buf);
    return rc;
}

static const char *type_of(const json_t *o)
{
    return json_string_value(json_object_get(o, "type"));
}

static int add_regex(loader *L, const json_t *node, const char *pat, size_t len)
{
    char msg[256];
    golden_tokenizer *t = L->t;
    if (t->nsteps >= TOK_MAX_STEPS)
        return bad(L, node, GOLDEN_EUNSUPPORTED, "more than %d pre-tokenizer steps", TOK_MAX_STEPS);
    t->steps[t->nsteps].re = tok_regex(pat, len, msg, sizeof msg);
    if (!t->steps[t->nsteps].re)
        return bad(L, node, GOLDEN_EINVAL, "the split regex does not compile: %s", msg);
    t->nsteps++;
    return 0;
}

static int load_step(loader *L, json_t *p, int *bytelevel)
{
    const char *ty = type_of(p);
    golden_tokenizer *t = L->t;
    if (ty && strcmp(ty, "ByteLevel") == 0) {
        json_t *aps = json_object_get(p, "add_prefix_space"), *ur = json_object_get(p, "use_regex");
        if (!json_is_boolean(aps))
            return bad(L, p, GOLDEN_EINVAL, "ByteLevel has no boolean add_prefix_space");
        if (ur && !json_is_boolean(ur))
            return bad(L, p, GOLDEN_EINVAL, "ByteLevel use_regex is not a boolean");
        if (t->nsteps >= TOK_MAX_STEPS)
            return bad(L, p, GOLDEN_EUNSUPPORTED, "more than %d pre-tokenizer steps", TOK_MAX_STEPS);
        if (json_is_true(aps)) /* its own step: it runs on each piece before the split */
            t->steps[t->nsteps++].prefix_space = 1;
        (*bytelevel)++;
        if (!ur || json_is_true(ur)) /* HF's default is true */
            return add_regex(L, p, tok_gpt2_pattern, strlen(tok_gpt2_pattern));
        return 0;
    }
    if (ty && strcmp(ty, "Split") == 0) {
        json_t *pat = json_object_get(p, "pattern"), *beh = json_object_get(p, "behavior");
        json_t *inv = json_object_get(p, "invert"), *re = json_object_get(pat, "Regex");
        json_t *lit = json_object_get(pat, "String");
        if (!json_is_string(beh) || strcmp(json_string_value(beh), "Isolated") != 0)
            return bad(L, p, GOLDEN_EUNSUPPORTED, "a Split pre-tokenizer must have behavior "
                       "\"Isolated\"");
        if (json_is_true(inv))
            return bad(L, p, GOLDEN_EUNSUPPORTED, "a Split pre-tokenizer with invert true is not "
                       "supported");
        if (json_is_string(re))
            return add_regex(L, p, json_string_value(re), json_string_length(re));
        if (json_is_string(lit)) { /* a literal: quote it for PCRE2 */
            size_t n = json_string_length(lit);
            char *q = malloc(n + 5);
            if (!q)
                return oom(L);
            snprintf(q, n + 5, "\\Q%s\\E", json_string_value(lit));
            int rc = strstr(json_string_value(lit), "\\E")
                         ? bad(L, lit, GOLDEN_EUNSUPPORTED, "a Split string containing \\E")
                         : add_regex(L, p, q, strlen(q));
            free(q);
            return rc;
        }
        return bad(L, p, GOLDEN_EINVAL, "a Split pre-tokenizer has no pattern.Regex or "
                   "pattern.String");
    }
    return bad(L, p, GOLDEN_EUNSUPPORTED, "the pre-tokenizer \"%s\" is not supported (ByteLevel, "
               "Split, Sequence)", ty ? ty : "(no type)");
}

static int load_pipeline(loader *L, json_t *root)
{
    golden_tokenizer *t = L->t;
    json_t *norm = json_object_get(root, "normalizer");
    if (norm && !json_is_null(norm)) {
        const char *ty = type_of(norm);
        json_t *seq = json_object_get(norm, "normalizers");
        if (ty && strcmp(ty, "Sequence") == 0 && json_array_size(seq) == 1)
            ty = type_of(json_array_get(seq, 0));
        else if (ty && strcmp(ty, "Sequence") == 0 && json_array_size(seq) == 0)
            ty = "none";
        if (!ty || (strcmp(ty, "NFC") != 0 && strcmp(ty, "none") != 0))
            return bad(L, norm, GOLDEN_EUNSUPPORTED, "the normalizer \"%s\" is not supported "
                       "(null or NFC)", ty ? ty : "(no type)");
        t->nfc = strcmp(ty, "NFC") == 0;
    }
    json_t *pre = json_object_get(root, "pre_tokenizer");
    int bytelevel = 0;
    if (!json_is_object(pre))
        return bad(L, pre ? pre : root, GOLDEN_EUNSUPPORTED, "a byte-level BPE needs a "
                   "pre_tokenizer with ByteLevel");
    const char *ty = type_of(pre);
    if (ty && strcmp(ty, "Sequence") == 0) {
        json_t *list = json_object_get(pre, "pretokenizers"), *p;
        size_t i;
        if (!json_is_array(list))
            return bad(L, pre, GOLDEN_EINVAL, "a Sequence pre-tokenizer has no pretokenizers array");
        json_array_foreach(list, i, p)
            if (load_step(L, p, &bytelevel))
                return GOLDEN_ERR;
    } else if (load_step(L, pre, &bytelevel)) {
        return GOLDEN_ERR;
    }
    if (bytelevel != 1)
        return bad(L, pre, GOLDEN_EUNSUPPORTED, "the pre-tokenizer has %d ByteLevel steps (one "
                   "is needed)", bytelevel);
    json_t *dec = json_object_get(root, "decoder");
    if (dec && !json_is_null(dec) && (!type_of(dec) || strcmp(type_of(dec), "ByteLevel") != 0))
        return bad(L, dec, GOLDEN_EUNSUPPORTED, "the decoder \"%s\" is not supported (ByteLevel)",
                   type_of(dec) ? type_of(dec) : "(no type)");
    return 0;
}

static int load_model(loader *L, json_t *root)
{
    if (!json_is_object(root))
        return bad(L, root, GOLDEN_EINVAL, "the top level is not an object");
    json_t *model = json_object_get(root, "model");
    if (!json_is_object(model))
        return bad(L, model ? model : root, GOLDEN_EINVAL,
                   model ? "\"model\" is not an object" : "\"model\" is missing");
    const char *ty = type_of(model);
    if (!ty || strcmp(ty, "BPE") != 0)
        return bad(L, model, GOLDEN_EUNSUPPORTED, "model.type is \"%s\", not \"BPE\"",
                   ty ? ty : "(missing)");
    json_t *drop = json_object_get(model, "dropout"), *bf = json_object_get(model, "byte_fallback");
    if (drop && !json_is_null(drop) && !(json_is_number(drop) && json_number_value(drop) == 0))
        return bad(L, drop, GOLDEN_EUNSUPPORTED, "BPE dropout is not supported (encodings "
                   "would not be deterministic)");
    if (json_is_true(bf))
        return bad(L, model, GOLDEN_EUNSUPPORTED, "byte_fallback true is not supported");
    static const char *const affixes[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int k = 0; k < 2; k++) {
        json_t *a = json_object_get(model, affixes[k]);
        if (a && !json_is_null(a) && !(json_is_string(a) && json_string_length(a) == 0))
            return bad(L, model, GOLDEN_EUNSUPPORTED, "model.%s is not supported", affixes[k]);
    }
    json_t *im = json_object_get(model, "ignore_merges");
    if (im && !json_is_boolean(im))
        return bad(L, model, GOLDEN_EINVAL, "model.ignore_merges is not a boolean");
    L->t->ignore_merges = json_is_true(im);
    json_t *added = json_object_get(root, "added_tokens");
    if (added && !json_is_array(added) && !json_is_null(added))
        return bad(L, added, GOLDEN_EINVAL, "added_tokens is not an array");
    if (!json_is_array(added))
        added = NULL;
    size_t used = 0;
    if (load_vocab(L, model, added, &used) || load_added(L, added, &used) ||
        load_merges(L, model) || load_pipeline(L, root))
        return GOLDEN_ERR;
    return 0;
}

int golden_tokenizer_load(const char *path, const golden_tokenizer_opts *opts,
                          golden_tokenizer **out, golden_error *err)
{
    *out = NULL;
    if (opts && opts->version != GOLDEN_TOKENIZER_OPTS_VERSION)
        return golden_fail_what(err, GOLDEN_EINVAL, path, "tokenizer options version %u is not "
                                "%u", opts->version, GOLDEN_TOKENIZER_OPTS_VERSION);
    size_t max = opts && opts->max_bytes ? opts->max_bytes : GOLDEN_TOKENIZER_MAX_BYTES;
    char *buf = NULL;
    size_t len = 0;
    if (read_file(path, max, &buf, &len, err))
        return GOLDEN_ERR;
    loader L = {.path = path, .err = err};
    memset(L.inv, 0xff, sizeof L.inv);
    for (unsigned b = 0; b < 256; b++)
        L.inv[tok_byte_char(b)] = (int16_t)b;
    int rc = 0;
    golden_tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        free(buf);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    L.t = t;
    memset(t->byte_id, 0xff, sizeof t->byte_id);
    if (rc == 0)
        rc = golden_sha256_buffer(buf, len, t->sha256, err);
    if (rc == 0)
        rc = golden_doc_load_json(path, buf, len, 1, &L.doc, err);
    free(buf);
    if (rc == 0)
        rc = load_model(&L, golden_doc_root(L.doc));
    golden_doc_free(L.doc);
    if (rc) {
        golden_tokenizer_free(t);
        return GOLDEN_ERR;
    }
    *out = t;
    return 0;
}

void golden_tokenizer_free(golden_tokenizer *t)
{
    if (!t)
        return;
    for (int k = 0; k < t->nsteps; k++)
        pcre2_code_free(t->steps[k].re);
    lg_strmap_free(&t->vocab);
    tok_pair_free(&t->merges);
    free(t->added);
    free(t->bytes);
    free(t->off);
    free(t->len);
    free(t);
}

size_t golden_tokenizer_vocab_size(const golden_tokenizer *t)
{
    return t->nids;
}

const char *golden_tokenizer_sha256(const golden_tokenizer *t)
{
    return t->sha256;
}
