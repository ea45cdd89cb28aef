/* Encoding and decoding: added tokens first (leftmost, longest), NFC on the valid UTF-8 of
 * the text between them, the pre-tokenizer's splits, then the BPE of each piece with a heap
 * of candidate merges ordered by (rank, position), as Hugging Face's BPE does. */
#include <stdlib.h>
#include <string.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include "tok/tok_int.h"
#include "util/utf8.h"
#include "util/vec.h"

/* Qwen2's split (its tokenizer.json) and GPT-2's (ByteLevel with use_regex). */
const char tok_qwen2_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
    "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char tok_gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

uint32_t tok_byte_char(unsigned b)
{
    /* Printable Latin-1 stands for itself; the other 68 bytes get 256, 257, ... in order. */
    if ((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff))
        return b;
    unsigned n = 0;
    for (unsigned c = 0; c < b; c++)
        if (!((c >= '!' && c <= '~') || (c >= 0xa1 && c <= 0xac) || (c >= 0xae && c <= 0xff)))
            n++;
    return 256 + n;
}

/* ---------------------------------------------------------------- the pair map */

static uint64_t pair_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

int tok_pair_put(tok_pairmap *m, uint32_t a, uint32_t b, uint32_t rank, uint32_t id)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 1024;
        uint64_t *nk = calloc(ncap, sizeof *nk), *nv = malloc(ncap * sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->keys[i])
                continue;
            size_t j = pair_hash(m->keys[i]) & (ncap - 1);
            while (nk[j])
                j = (j + 1) & (ncap - 1);
            nk[j] = m->keys[i];
            nv[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk, m->vals = nv, m->cap = ncap;
    }
    uint64_t key = ((uint64_t)a << 32 | b) + 1;
    size_t j = pair_hash(key) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->n++;
    m->keys[j] = key;
    m->vals[j] = (uint64_t)rank << 32 | id;
    return 0;
}

int tok_pair_get(const tok_pairmap *m, uint32_t a, uint32_t b, uint32_t *rank, uint32_t *id)
{
    if (!m->cap)
        return 0;
    uint64_t key = ((uint64_t)a << 32 | b) + 1;
    size_t j = pair_hash(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->keys[j] == key) {
            *rank = (uint32_t)(m->vals[j] >> 32);
            *id = (uint32_t)m->vals[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

void tok_pair_free(tok_pairmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- regex and pieces */

pcre2_code *tok_regex(const char *pattern, size_t len, char *msg, size_t msglen)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, len,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &ec, &eo, NULL);
    if (!re) {
        char buf[200];
        pcre2_get_error_message(ec, (PCRE2_UCHAR *)buf, sizeof buf);
        snprintf(msg, msglen, "%s at offset %zu", buf, (size_t)eo);
        return NULL;
    }
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* the interpreter when JIT is absent */
    return re;
}

static int match(const pcre2_code *re, const unsigned char *s, size_t n, size_t pos, uint32_t opt,
                 pcre2_match_data *md)
{
    int rc = pcre2_match(re, s, n, pos, opt, md, NULL);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) /* a very long piece: the interpreter's heap */
        rc = pcre2_match(re, s, n, pos, opt | PCRE2_NO_JIT, md, NULL);
    return rc;
}

typedef struct {
    const golden_tokenizer *t;
    pcre2_match_data *md;
    tok_piece_fn fn;
    void *ctx;
    golden_error *err;
} splitter;

static int run_step(splitter *S, int k, const unsigned char *s, size_t n)
{
    if (k == S->t->nsteps)
        return S->fn(S->ctx, s, n);
    const tok_step *st = &S->t->steps[k];
    if (st->prefix_space) {
        if (n > 0 && s[0] == ' ')
            return run_step(S, k + 1, s, n);
        unsigned char *b = malloc(n + 1);
        if (!b)
            return golden_fail_what(S->err, GOLDEN_ENOMEM, "tokenizer", "out of memory");
        b[0] = ' ';
        memcpy(b + 1, s, n);
        int rc = run_step(S, k + 1, b, n + 1);
        free(b);
        return rc;
    }
    size_t pos = 0, start = 0;
    uint32_t opt = 0;
    for (;;) {
        int rc = match(st->re, s, n, pos, opt, S->md);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            char buf[200];
            pcre2_get_error_message(rc, (PCRE2_UCHAR *)buf, sizeof buf);
            return golden_fail_what(S->err, GOLDEN_EINTERNAL, "tokenizer", "the split regex "
                                    "failed: %s", buf);
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(S->md);
        size_t ms = ov[0], me = ov[1];
        if (me == ms) { /* an empty match: look again for a non-empty one from here */
            if (ms >= n || (opt && ms == pos))
                break;
            pos = ms;
            opt = PCRE2_NOTEMPTY_ATSTART;
            continue;
        }
        if (ms > start && (rc = run_step(S, k + 1, s + start, ms - start)))
            return rc;
        if ((rc = run_step(S, k + 1, s + ms, me - ms)))
            return rc;
        start = pos = me;
        opt = 0;
    }
    return start < n ? run_step(S, k + 1, s + start, n - start) : 0;
}

int tok_pretokenize(const golden_tokenizer *t, const unsigned char *s, size_t n, tok_piece_fn fn,
                    void *ctx, golden_error *err)
{
    splitter S = {t, NULL, fn, ctx, err};
    size_t need = 1;
    for (int k = 0; k < t->nsteps; k++)
        if (t->steps[k].re) {
            uint32_t c = 0;
            pcre2_pattern_info(t->steps[k].re, PCRE2_INFO_CAPTURECOUNT, &c);
            need = c + 1 > need ? c + 1 : need;
        }
    S.md = pcre2_match_data_create((uint32_t)need, NULL);
    if (!S.md)
        return golden_fail_what(err, GOLDEN_ENOMEM, "tokenizer", "out of memory");
    int rc = n ? run_step(&S, 0, s, n) : 0;
    pcre2_match_data_free(S.md);
    return rc;
}

/* ---------------------------------------------------------------- BPE of one piece */

typedef struct {
    uint32_t rank, pos, id;
} cand;

typedef struct {
    const golden_tokenizer *t;
    int32_t **ids;
    size_t *n, *cap;
    int32_t *sym;       /* per byte position: its symbol's id (-1 once merged away) */
    uint32_t *next, *prev;
    cand *heap;
    size_t heap_n, room;
    golden_error *err;
} bpe_state;

static int cand_less(const cand *a, const cand *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->pos < b->pos);
}

static void heap_push(bpe_state *B, cand c)
{
    size_t i = B->heap_n++;
    B->heap[i] = c;
    while (i > 0 && cand_less(&B->heap[i], &B->heap[(i - 1) / 2])) {
        cand x = B->heap[i];
        B->heap[i] = B->heap[(i - 1) / 2];
        B->heap[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

static cand heap_pop(bpe_state *B)
{
    cand top = B->heap[0];
    B->heap[0] = B->heap[--B->heap_n];
    for (size_t i = 0;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < B->heap_n && cand_less(&B->heap[l], &B->heap[m]))
            m = l;
        if (r < B->heap_n && cand_less(&B->heap[r], &B->heap[m]))
            m = r;
        if (m == i)
            break;
        cand x = B->heap[i];
        B->heap[i] = B->heap[m];
        B->heap[m] = x;
        i = m;
    }
    return top;
}

static void offer(bpe_state *B, uint32_t left, uint32_t right)
{
    uint32_t rank, id;
    if (tok_pair_get(&B->t->merges, (uint32_t)B->sym[left], (uint32_t)B->sym[right], &rank, &id))
        heap_push(B, (cand){rank, left, id});
}

static int emit(bpe_state *B, int32_t id)
{
    if (VEC_GROW(*B->ids, *B->n, *B->cap, 256))
        return golden_fail_what(B->err, GOLDEN_ENOMEM, "tokenizer", "out of memory");
    (*B->ids)[(*B->n)++] = id;
    return 0;
}

static int bpe_piece(void *ctx, const unsigned char *p, size_t n)
{
    bpe_state *B = ctx;
    const golden_tokenizer *t = B->t;
    uint64_t whole;
    if (n == 1 || (t->ignore_merges && lg_strmap_get(&t->vocab, (const char *)p, n, &whole)))
        return emit(B, n == 1 ? t->byte_id[p[0]] : (int32_t)whole);
    if (n > B->room) {
        size_t r = n > 2 * B->room ? n : 2 * B->room;
        int32_t *sym = realloc(B->sym, r * sizeof *sym);
        if (sym)
            B->sym = sym;
        uint32_t *nx = realloc(B->next, r * sizeof *nx);
        if (nx)
            B->next = nx;
        uint32_t *pv = realloc(B->prev, r * sizeof *pv);
        if (pv)
            B->prev = pv;
        cand *h = realloc(B->heap, 2 * r * sizeof *h);
        if (h)
            B->heap = h;
        if (!sym || !nx || !pv || !h)
            return golden_fail_what(B->err, GOLDEN_ENOMEM, "tokenizer", "out of memory");
        B->room = r;
    }
    B->heap_n = 0;
    for (size_t i = 0; i < n; i++) {
        B->sym[i] = t->byte_id[p[i]];
        B->next[i] = (uint32_t)(i + 1);
        B->prev[i] = (uint32_t)i - 1; /* UINT32_MAX for the first */
    }
    for (size_t i = 0; i + 1 < n; i++)
        offer(B, (uint32_t)i, (uint32_t)i + 1);
    while (B->heap_n) {
        cand c = heap_pop(B);
        uint32_t l = c.pos, r = B->next[l], rank, id;
        if (B->sym[l] < 0 || r >= n) /* merged away, or nothing to its right any more */
            continue;
        if (!tok_pair_get(&t->merges, (uint32_t)B->sym[l], (uint32_t)B->sym[r], &rank, &id) ||
            id != c.id)
            continue; /* a stale candidate: a side has changed since */
        B->sym[l] = (int32_t)id;
        B->sym[r] = -1;
        B->next[l] = B->next[r];
        if (B->next[r] < n)
            B->prev[B->next[r]] = l;
        if (B->heap_n + 2 > 2 * B->room) /* cannot happen: each merge removes a symbol */
            return golden_fail_what(B->err, GOLDEN_EINTERNAL, "tokenizer", "BPE heap overflow");
        if (B->prev[l] != UINT32_MAX)
            offer(B, B->prev[l], l);
        if (B->next[l] < n)
            offer(B, l, B->next[l]);
    }
    for (size_t i = 0; i < n; i = B->next[i])
        if (emit(B, B->sym[i]))
            return GOLDEN_ERR;
    return 0;
}

/* ---------------------------------------------------------------- NFC */

/* NFC of the valid UTF-8 runs of s (invalid bytes are copied as they are) into a malloc'ed
 * *out. 0, or -1 with err set. */
static int nfc(const unsigned char *s, size_t n, unsigned char **out, size_t *outlen,
               golden_error *err)
{
    UErrorCode st = U_ZERO_ERROR;
    const UNormalizer2 *norm = unorm2_getNFCInstance(&st);
    if (U_FAILURE(st))
        return golden_fail_what(err, GOLDEN_EINTERNAL, "tokenizer", "ICU has no NFC: %s",
                                u_errorName(st));
    size_t cap = 3 * n + 16, len = 0;
    unsigned char *o = malloc(cap);
    UChar *u16 = malloc((n + 1) * 2 * sizeof *u16);
    UChar *v16 = malloc((3 * n + 4) * sizeof *v16);
    int rc = !o || !u16 || !v16 ? golden_fail_what(err, GOLDEN_ENOMEM, "tokenizer", "out of memory") : 0;
    for (size_t i = 0; i < n && rc == 0;) {
        size_t j = i;
        while (j < n && (s[j] < 0x80 || lg_utf8_seq(s + j, n - j)))
            j += s[j] < 0x80 ? 1 : lg_utf8_seq(s + j, n - j);
        if (j == i) { /* an invalid byte */
            o[len++] = s[i++];
            continue;
        }
        int32_t l16 = 0, lv = 0, l8 = 0;
        u_strFromUTF8(u16, (int32_t)((n + 1) * 2), &l16, (const char *)s + i, (int32_t)(j - i), &st);
        if (U_SUCCESS(st))
            lv = unorm2_normalize(norm, u16, l16, v16, (int32_t)(3 * n + 4), &st);
        if (U_SUCCESS(st))
            u_strToUTF8((char *)o + len, (int32_t)(cap - len), &l8, v16, lv, &st);
        if (U_FAILURE(st))
            rc = golden_fail_what(err, GOLDEN_EINTERNAL, "tokenizer", "NFC failed: %s",
                                  u_errorName(st));
        len += (size_t)l8;
        i = j;
    }
    free(u16);
    free(v16);
    if (rc) {
        free(o);
        return rc;
    }
    *out = o;
    *outlen = len;
    return 0;
}

/* ---------------------------------------------------------------- encode, decode */

static int segment(bpe_state *B, const unsigned char *s, size_t n)
{
    const golden_tokenizer *t = B->t;
    int ascii = 1;
    for (size_t i = 0; i < n && ascii; i++)
        ascii = s[i] < 0x80;
    if (!t->nfc || ascii)
        return tok_pretokenize(t, s, n, bpe_piece, B, B->err);
    unsigned char *ns = NULL;
    size_t nn = 0;
    if (nfc(s, n, &ns, &nn, B->err))
        return GOLDEN_ERR;
    int rc = tok_pretokenize(t, ns, nn, bpe_piece, B, B->err);
    free(ns);
    return rc;
}

/* The added token that starts at s (the longest), or NULL. */
static const tok_added *added_at(const golden_tokenizer *t, const unsigned char *s, size_t n,
                                 const unsigned char first[256])
{
    if (!first[s[0]])
        return NULL;
    const tok_added *best = NULL;
    for (size_t i = 0; i < t->nadded; i++) {
        const tok_added *a = &t->added[i];
        if (a->len <= n && (unsigned char)a->content[0] == s[0] &&
            memcmp(a->content, s, a->len) == 0 && (!best || a->len > best->len))
            best = a;
    }
    return best;
}

int golden_tokenizer_encode(const golden_tokenizer *t, const char *text, size_t len,
                            int32_t **ids, size_t *n, golden_error *err)
{
    *ids = NULL;
    *n = 0;
    size_t cap = 0;
    bpe_state B = {.t = t, .ids = ids, .n = n, .cap = &cap, .err = err};
    unsigned char first[256] = {0};
    for (size_t i = 0; i < t->nadded; i++)
        first[(unsigned char)t->added[i].content[0]] = 1;
    const unsigned char *s = (const unsigned char *)text;
    size_t seg = 0;
    int rc = 0;
    for (size_t i = 0; i < len && rc == 0;) {
        const tok_added *a = t->nadded ? added_at(t, s + i, len - i, first) : NULL;
        if (!a) {
            i++;
            continue;
        }
        if (i > seg)
            rc = segment(&B, s + seg, i - seg);
        if (rc == 0)
            rc = emit(&B, a->id);
        i += a->len;
        seg = i;
    }
    if (rc == 0 && seg < len)
        rc = segment(&B, s + seg, len - seg);
    free(B.sym);
    free(B.next);
    free(B.prev);
    free(B.heap);
    if (rc) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

int golden_tokenizer_decode(const golden_tokenizer *t, const int32_t *ids, size_t n, char **text,
                            size_t *len, golden_error *err)
{
    *text = NULL;
    *len = 0;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || (size_t)ids[i] >= t->nids || t->off[ids[i]] == SIZE_MAX)
            return golden_fail_what(err, GOLDEN_EINVAL, "tokenizer", "token %zu: id %ld is not "
                                    "in the vocab", i, (long)ids[i]);
        total += t->len[ids[i]];
    }
    char *o = malloc(total + 1);
    if (!o)
        return golden_fail_what(err, GOLDEN_ENOMEM, "tokenizer", "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(o + k, t->bytes + t->off[ids[i]], t->len[ids[i]]);
        k += t->len[ids[i]];
    }
    o[k] = 0;
    *text = o;
    *len = k;
    return 0;
}

int golden_tokenizer_token_id(const golden_tokenizer *t, const char *text, size_t len, int32_t *id)
{
    for (size_t i = 0; i < t->nadded; i++)
        if (t->added[i].len == len && memcmp(t->added[i].content, text, len) == 0) {
            *id = t->added[i].id;
            return 0;
        }
    uint64_t v;
    if (len && lg_strmap_get(&t->vocab, text, len, &v)) {
        *id = (int32_t)v;
        return 0;
    }
    return -1;
}
