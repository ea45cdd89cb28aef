/* A small deterministic tokenizer.json of the Qwen kind, learnt by BPE from a text compiled
 * in: the words of the text (Qwen2's split), then, merge after merge, the most frequent
 * adjacent pair (ties: the smaller bytes of the left side, then of the right), until the
 * vocab is full or no pair occurs twice. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "tok/tok_int.h"

/* The training text: prose, code, numbers and a few scripts, so that the learnt merges look
 * like a real tokenizer's (a word, an indentation, a number, a CJK pair). */
static const char corpus[] =
    "The verification toolkit decides, with evidence, whether a compiler candidate may replace "
    "the one in production. It captures per-layer tensors into golden files, judges candidate "
    "tensors against goldens under tolerance tiers, and checks experiment folders, manifests "
    "and hashes. Every tool exits 0 when the check passed, 1 when it failed, and 2 when it "
    "could not check. A gate that passes by accident is the worst bug: the tests must be able "
    "to fail. The model is a mixture of experts: each token is routed to the top experts of "
    "every layer, and the router's choice is what a quantised candidate must not change.\n"
    "The quick brown fox jumps over the lazy dog. She said that they would not have done it, "
    "but we're sure it's what they'll do, and I'd say you've seen it too.\n"
    "Tokens per second, latency per token and memory per request are measured on the same "
    "machine, in the same run, with the same prompts, for the production calbin and the "
    "candidate alike.\n"
    "def encode(text, merges):\n"
    "    words = split(text)\n"
    "    for word in words:\n"
    "        symbols = list(word)\n"
    "        while len(symbols) > 1:\n"
    "            pairs = [(symbols[i], symbols[i + 1]) for i in range(len(symbols) - 1)]\n"
    "            best = min(pairs, key=lambda p: merges.get(p, 1 << 30))\n"
    "            if best not in merges:\n"
    "                break\n"
    "    return symbols\n"
    "\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    for (int i = 0; i < argc; i++)\n"
    "        printf(\"%d: %s\\n\", i, argv[i]);\n"
    "    return 0;\n"
    "}\n"
    "static const char *names[] = {\"layers\", \"experts\", \"router\", \"logits\"};\n"
    "if (x == NULL || n == 0) { return -1; } else { return x[n - 1] + y[n - 2]; }\n"
    "0 1 2 3 4 5 6 7 8 9 10 11 12 16 32 64 128 256 512 1024 2048 4096 8192 65536 151936\n"
    "3.14159 2.71828 1e-06 0.999 0.02 99.9% 1,000 12:30 2026-12-01 +49 30 1234567\n"
    "Die Prüfung entscheidet, ob der Kandidat die Produktion ersetzen darf. Größe, Straße.\n"
    "Le candidat doit être jugé sur les mêmes données, à la même température, déjà vérifié.\n"
    "Проверка решает, может ли кандидат заменить рабочую версию. Модель и эксперты.\n"
    "验证工具根据证据判断编译器候选版本是否可以替换生产版本。模型的每一层都有专家。\n"
    "検証ツールは、候補が本番を置き換えられるかを証拠で判断します。\n"
    "검증 도구는 후보가 운영 버전을 대체할 수 있는지 판단합니다.\n"
    "التحقق يقرر ما إذا كان المرشح يمكن أن يحل محل الإنتاج.\n"
    "Emoji too: 🙂 🚀 ✅ ❌ 👍🏽 — and symbols: → ≤ ≥ ± × ÷ € £ ¥ ©.\n"
    "The the THE tHe; the experts, the layers, the tokens; the end.\n";

#define NSPECIAL 3
static const char *const special[NSPECIAL] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};

typedef struct {
    unsigned char **tok; /* id -> bytes */
    size_t *tlen, ntok;
    golden_strmap byid;  /* bytes -> id */
    int32_t **word;      /* each distinct word as symbol ids */
    size_t *wlen, nword;
    uint64_t *count;
    uint32_t (*merge)[2];
    size_t nmerge;
} trainer;

/* The distinct words of the text in the order they first occur, with their counts. */
typedef struct {
    golden_strmap index; /* word -> its number */
    const unsigned char **p;
    size_t *len, n, cap;
    uint64_t *count;
} wordlist;

static int collect(void *ctx, const unsigned char *p, size_t n)
{
    wordlist *W = ctx;
    uint64_t k;
    if (lg_strmap_get(&W->index, (const char *)p, n, &k)) {
        W->count[k]++;
        return 0;
    }
    if (W->n == W->cap) {
        size_t c = W->cap ? 2 * W->cap : 256;
        const unsigned char **np = realloc(W->p, c * sizeof *np);
        if (np)
            W->p = np;
        size_t *nl = realloc(W->len, c * sizeof *nl);
        if (nl)
            W->len = nl;
        uint64_t *nc = realloc(W->count, c * sizeof *nc);
        if (nc)
            W->count = nc;
        if (!np || !nl || !nc)
            return -1;
        W->cap = c;
    }
    W->p[W->n] = p;
    W->len[W->n] = n;
    W->count[W->n] = 1;
    return lg_strmap_put(&W->index, (const char *)p, n, W->n++, NULL) < 0 ? -1 : 0;
}

static int bytes_less(const unsigned char *a, size_t al, const unsigned char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c < 0 || (c == 0 && al < bl);
}

/* The best pair of this round: 1 and *a, *b set, or 0 when no pair occurs twice. */
static int best_pair(trainer *T, uint32_t *a, uint32_t *b)
{
    tok_pairmap counts = {0};
    uint64_t bestc = 1;
    int found = 0;
    for (size_t w = 0; w < T->nword; w++)
        for (size_t i = 0; i + 1 < T->wlen[w]; i++) {
            uint32_t x = (uint32_t)T->word[w][i], y = (uint32_t)T->word[w][i + 1], c = 0, u;
            tok_pair_get(&counts, x, y, &c, &u);
            c += (uint32_t)T->count[w];
            if (tok_pair_put(&counts, x, y, c, 0)) {
                tok_pair_free(&counts);
                return -1;
            }
        }
    for (size_t s = 0; s < counts.cap; s++) {
        if (!counts.keys[s])
            continue;
        uint64_t k = counts.keys[s] - 1, c = counts.vals[s] >> 32;
        uint32_t x = (uint32_t)(k >> 32), y = (uint32_t)k;
        int better = c > bestc;
        if (!better && found && c == bestc) {
            if (x != *a)
                better = bytes_less(T->tok[x], T->tlen[x], T->tok[*a], T->tlen[*a]);
            else
                better = bytes_less(T->tok[y], T->tlen[y], T->tok[*b], T->tlen[*b]);
        }
        if (better) {
            bestc = c, *a = x, *b = y;
            found = 1;
        }
    }
    tok_pair_free(&counts);
    return found;
}

/* Add the merge a b: its token (reused when those bytes are a token already), then replace
 * the pair in every word, left to right. */
static int apply_merge(trainer *T, uint32_t a, uint32_t b)
{
    size_t n = T->tlen[a] + T->tlen[b];
    unsigned char *bytes = malloc(n);
    uint32_t (*mg)[2] = realloc(T->merge, (T->nmerge + 1) * sizeof *mg);
    if (mg)
        T->merge = mg;
    unsigned char **tok = realloc(T->tok, (T->ntok + 1) * sizeof *tok);
    if (tok)
        T->tok = tok;
    size_t *tl = realloc(T->tlen, (T->ntok + 1) * sizeof *tl);
    if (tl)
        T->tlen = tl;
    if (!bytes || !mg || !tok || !tl) {
        free(bytes);
        return -1;
    }
    memcpy(bytes, T->tok[a], T->tlen[a]);
    memcpy(bytes + T->tlen[a], T->tok[b], T->tlen[b]);
    uint64_t id;
    if (lg_strmap_get(&T->byid, (const char *)bytes, n, &id)) {
        free(bytes);
    } else {
        id = T->ntok;
        T->tok[T->ntok] = bytes;
        T->tlen[T->ntok++] = n;
        if (lg_strmap_put(&T->byid, (const char *)bytes, n, id, NULL) < 0)
            return -1;
    }
    T->merge[T->nmerge][0] = a;
    T->merge[T->nmerge++][1] = b;
    for (size_t w = 0; w < T->nword; w++) {
        size_t k = 0;
        for (size_t i = 0; i < T->wlen[w]; i++) {
            if (i + 1 < T->wlen[w] && (uint32_t)T->word[w][i] == a && (uint32_t)T->word[w][i + 1] == b) {
                T->word[w][k++] = (int32_t)id;
                i++;
            } else {
                T->word[w][k++] = T->word[w][i];
            }
        }
        T->wlen[w] = k;
    }
    return 0;
}

/* Bytes -> the byte-level string (UTF-8 of each byte's alphabet character). */
static char *byte_level(const unsigned char *p, size_t n)
{
    char *s = malloc(2 * n + 1), *o = s;
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = tok_byte_char(p[i]);
        if (c < 0x80) {
            *o++ = (char)c;
        } else {
            *o++ = (char)(0xc0 | c >> 6);
            *o++ = (char)(0x80 | (c & 0x3f));
        }
    }
    *o = 0;
    return s;
}

static json_t *obj(const char *k1, json_t *v1)
{
    json_t *o = json_object();
    json_object_set_new(o, k1, v1);
    return o;
}

static json_t *document(const trainer *T)
{
    json_t *root = json_object(), *added = json_array(), *vocab = json_object();
    json_t *merges = json_array(), *model = obj("type", json_string("BPE"));
    json_object_set_new(root, "version", json_string("1.0"));
    json_object_set_new(root, "truncation", json_null());
    json_object_set_new(root, "padding", json_null());
    for (size_t i = 0; i < NSPECIAL; i++) {
        json_t *a = json_object();
        json_object_set_new(a, "id", json_integer((json_int_t)(T->ntok + i)));
        json_object_set_new(a, "content", json_string(special[i]));
        json_object_set_new(a, "single_word", json_false());
        json_object_set_new(a, "lstrip", json_false());
        json_object_set_new(a, "rstrip", json_false());
        json_object_set_new(a, "normalized", json_false());
        json_object_set_new(a, "special", json_true());
        json_array_append_new(added, a);
    }
    json_object_set_new(root, "added_tokens", added);
    json_object_set_new(root, "normalizer", obj("type", json_string("NFC")));
    json_t *split = obj("type", json_string("Split"));
    json_object_set_new(split, "pattern", obj("Regex", json_string(tok_qwen2_pattern)));
    json_object_set_new(split, "behavior", json_string("Isolated"));
    json_object_set_new(split, "invert", json_false());
    json_t *bl = obj("type", json_string("ByteLevel"));
    json_object_set_new(bl, "add_prefix_space", json_false());
    json_object_set_new(bl, "trim_offsets", json_false());
    json_object_set_new(bl, "use_regex", json_false());
    json_t *seq = obj("type", json_string("Sequence")), *list = json_array();
    json_array_append_new(list, split);
    json_array_append(list, bl);
    json_object_set_new(seq, "pretokenizers", list);
    json_object_set_new(root, "pre_tokenizer", seq);
    json_object_set_new(root, "post_processor", json_deep_copy(bl));
    json_object_set_new(root, "decoder", bl);
    json_object_set_new(model, "dropout", json_null());
    json_object_set_new(model, "unk_token", json_null());
    json_object_set_new(model, "continuing_subword_prefix", json_string(""));
    json_object_set_new(model, "end_of_word_suffix", json_string(""));
    json_object_set_new(model, "fuse_unk", json_false());
    json_object_set_new(model, "byte_fallback", json_false());
    json_object_set_new(model, "ignore_merges", json_false());
    int ok = root && vocab && merges && model;
    for (size_t i = 0; i < T->ntok && ok; i++) {
        char *s = byte_level(T->tok[i], T->tlen[i]);
        ok = s && json_object_set_new(vocab, s, json_integer((json_int_t)i)) == 0;
        free(s);
    }
    for (size_t i = 0; i < T->nmerge && ok; i++) {
        char *a = byte_level(T->tok[T->merge[i][0]], T->tlen[T->merge[i][0]]);
        char *b = byte_level(T->tok[T->merge[i][1]], T->tlen[T->merge[i][1]]);
        char *m = a && b ? malloc(strlen(a) + strlen(b) + 2) : NULL;
        if (m)
            sprintf(m, "%s %s", a, b);
        ok = m && json_array_append_new(merges, json_string(m)) == 0;
        free(a);
        free(b);
        free(m);
    }
    json_object_set_new(model, "vocab", vocab);
    json_object_set_new(model, "merges", merges);
    json_object_set_new(root, "model", model);
    if (!ok) {
        json_decref(root);
        return NULL;
    }
    return root;
}

static int train(trainer *T, size_t vocab_size, golden_error *err)
{
    golden_tokenizer tk;
    memset(&tk, 0, sizeof tk);
    char msg[256];
    tk.steps[0].re = tok_regex(tok_qwen2_pattern, strlen(tok_qwen2_pattern), msg, sizeof msg);
    if (!tk.steps[0].re)
        return golden_fail_what(err, GOLDEN_EINTERNAL, "tokenizer", "the Qwen2 regex: %s", msg);
    tk.nsteps = 1;
    wordlist words;
    memset(&words, 0, sizeof words);
    int rc = tok_pretokenize(&tk, (const unsigned char *)corpus, sizeof corpus - 1, collect, &words, err);
    pcre2_code_free(tk.steps[0].re);
    /* The 256 byte tokens, in the alphabet's order (GPT-2's and Qwen's ids 0..255). */
    T->tok = malloc(256 * sizeof *T->tok);
    T->tlen = malloc(256 * sizeof *T->tlen);
    T->word = calloc(words.n ? words.n : 1, sizeof *T->word);
    T->wlen = calloc(words.n ? words.n : 1, sizeof *T->wlen);
    T->count = calloc(words.n ? words.n : 1, sizeof *T->count);
    if (!rc && (!T->tok || !T->tlen || !T->word || !T->wlen || !T->count))
        rc = -1;
    int32_t idof[256];
    for (unsigned c = 0; c < 0x144 && !rc; c++)
        for (unsigned b = 0; b < 256; b++)
            if (tok_byte_char(b) == c) {
                idof[b] = (int32_t)T->ntok;
                T->tok[T->ntok] = malloc(1);
                if (!T->tok[T->ntok])
                    rc = -1;
                else
                    T->tok[T->ntok][0] = (unsigned char)b;
                T->tlen[T->ntok++] = 1;
            }
    for (size_t i = 0; i < T->ntok && !rc; i++)
        if (lg_strmap_put(&T->byid, (const char *)T->tok[i], 1, i, NULL) < 0)
            rc = -1;
    for (size_t s = 0; s < words.n && !rc; s++) {
        size_t w = T->nword++;
        T->word[w] = malloc(words.len[s] * sizeof **T->word);
        if (!T->word[w]) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < words.len[s]; i++)
            T->word[w][i] = idof[words.p[s][i]];
        T->wlen[w] = words.len[s];
        T->count[w] = words.count[s];
    }
    lg_strmap_free(&words.index);
    free(words.p);
    free(words.len);
    free(words.count);
    while (!rc && T->ntok + NSPECIAL < vocab_size) {
        uint32_t a = 0, b = 0;
        int f = best_pair(T, &a, &b);
        if (f <= 0) {
            rc = f;
            break;
        }
        rc = apply_merge(T, a, b);
    }
    if (rc && err && err->code == GOLDEN_ENONE)
        golden_fail_what(err, GOLDEN_ENOMEM, "tokenizer", "out of memory");
    return rc ? GOLDEN_ERR : 0;
}

int golden_tokenizer_write_synthetic(const char *path, size_t vocab_size, golden_error *err)
{
    if (vocab_size < 256 + NSPECIAL)
        return golden_fail_what(err, GOLDEN_EINVAL, path, "a vocab of %zu is below the %d a "
                                "byte-level tokenizer needs", vocab_size, 256 + NSPECIAL);
    if (err)
        golden_error_clear(err);
    trainer T;
    memset(&T, 0, sizeof T);
    int rc = train(&T, vocab_size, err);
    json_t *doc = rc ? NULL : document(&T);
    if (!rc && !doc)
        rc = golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    if (!rc) {
        FILE *f = fopen(path, "w");
        if (!f) {
            rc = golden_fail_what(err, golden_code_from_errno(errno), path, "%s", strerror(errno));
        } else {
            int w = json_dumpf(doc, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
            if (fputc('\n', f) == EOF)
                w = -1;
            if (fclose(f) != 0 || w != 0) {
                unlink(path);
                rc = golden_fail_what(err, GOLDEN_EIO, path, "write failed");
            }
        }
    }
    json_decref(doc);
    for (size_t i = 0; i < T.ntok; i++)
        free(T.tok[i]);
    for (size_t i = 0; i < T.nword; i++)
        free(T.word[i]);
    free(T.tok);
    free(T.tlen);
    free(T.word);
    free(T.wlen);
    free(T.count);
    free(T.merge);
    lg_strmap_free(&T.byid);
    return rc;
}
