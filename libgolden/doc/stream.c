/* A large JSON document streamed: a top-level array, or an object one of whose members is an
 * array (a Chrome trace's traceEvents), read element by element. Only the structure around
 * the elements is scanned here (brackets, commas, keys); every element and every other
 * member's value is parsed by the one strict JSON reader (json.c) on its own, with the file's
 * line:col, from a bounded buffer: memory is one element (at most GOLDEN_JSONL_MAX_LINE
 * bytes, refused beyond as soon as the limit is passed) and its tree, whatever the file's
 * size. */
#include "doc/internal.h"
#include "golden/report.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    int fd;
    const char *path;
    char *buf;
    size_t cap, start, len; /* unread bytes are buf[start, len) */
    int eof;
    size_t line, col;       /* position of buf[start] (col in characters) */
    golden_error *err;
    golden_doc *doc;        /* one doc for every element, emptied between them */
    golden_arena *arena;
    golden_doc_element_fn fn;
    void *ctx;
} sreader;

#define STREAM_LIMIT GOLDEN_JSONL_MAX_LINE

static int sfail(sreader *s, const char *what)
{
    return golden_fail_where(s->err, GOLDEN_EINVAL, what, "%s:%zu:%zu", s->path, s->line, s->col);
}

/* Read more bytes after buf[len) (moving the unread ones to the front first). 0 ok (s->eof
 * set at the end), -1 error. */
static int fill(sreader *s)
{
    if (s->start > 0) {
        memmove(s->buf, s->buf + s->start, s->len - s->start);
        s->len -= s->start;
        s->start = 0;
    }
    if (s->len >= STREAM_LIMIT + 2)
        return sfail(s, "a JSON value longer than the 64 MiB limit of a streamed element");
    ssize_t r = doc_read_more(s->fd, &s->buf, &s->cap, s->len, STREAM_LIMIT + 2);
    if (r == DOC_READ_NOMEM)
        return golden_fail_what(s->err, GOLDEN_ENOMEM, s->path, "out of memory");
    if (r < 0)
        return golden_fail_what(s->err, golden_code_from_errno(errno), s->path,
                                "read error: %s", strerror(errno));
    if (r == 0)
        s->eof = 1;
    s->len += (size_t)r;
    return 0;
}

/* Consume n bytes, keeping line and column. */
static void advance(sreader *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s->buf[s->start + i];
        if (c == '\n') {
            s->line++;
            s->col = 1;
        } else if ((c & 0xC0) != 0x80) {
            s->col++;
        }
    }
    s->start += n;
}

/* Skip whitespace; the next byte, or -1 at the end of the file, -2 on a read error. */
static int peek(sreader *s)
{
    for (;;) {
        while (s->start < s->len) {
            char c = s->buf[s->start];
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
                return (unsigned char)c;
            advance(s, 1);
        }
        if (s->eof)
            return -1;
        if (fill(s) != 0)
            return -2;
    }
}

/* Length of the value starting at buf[start] (its end not looked at by the parser, only
 * found): brackets counted outside strings, a string to its closing quote, a scalar to the
 * next delimiter. At the end of the file an unfinished value is handed whole to the parser,
 * which says what is wrong with it. -1 on error. */
static int extent(sreader *s, size_t *n)
{
    for (;;) {
        const char *p = s->buf + s->start, *end = s->buf + s->len;
        size_t depth = 0;
        int in_str = 0, esc = 0, done = 0;
        const char *q = p;
        char first = *p;
        if (first == '{' || first == '[' || first == '"') {
            for (; q < end && !done; q++) {
                char c = *q;
                if (in_str) {
                    if (esc)
                        esc = 0;
                    else if (c == '\\')
                        esc = 1;
                    else if (c == '"') {
                        in_str = 0;
                        done = depth == 0;
                    }
                } else if (c == '"')
                    in_str = 1;
                else if (c == '{' || c == '[')
                    depth++;
                else if ((c == '}' || c == ']') && --depth == 0)
                    done = 1;
            }
        } else {
            while (q < end && !strchr(",]} \t\r\n", *q))
                q++;
            done = q < end;
        }
        if (done || s->eof) {
            *n = (size_t)(q - p);
            return 0;
        }
        if (fill(s) != 0)
            return -1;
    }
}

/* Parse the value at buf[start] into s->doc and hand it to fn under key (NULL: an element). */
static int value(sreader *s, const char *key)
{
    size_t n;
    if (extent(s, &n) != 0)
        return -1;
    doc_arena_use(s->arena);
    int r = doc_load_json_at(s->doc, (const unsigned char *)s->buf + s->start, n, s->line,
                             s->col, 0, s->err);
    doc_arena_use(NULL);
    if (r == GOLDEN_OK && s->fn)
        r = s->fn(s->ctx, key, s->doc, s->err);
    doc_clear(s->doc);
    doc_arena_rewind(s->arena);
    if (r == 0)
        advance(s, n);
    return r;
}

static int describe(sreader *s, int c, const char *expected)
{
    char what[96];
    if (c == -1)
        snprintf(what, sizeof what, "unexpected end of input (%s)", expected);
    else if (c >= 0x21 && c < 0x7F)
        snprintf(what, sizeof what, "expected %s, found '%c'", expected, c);
    else
        snprintf(what, sizeof what, "expected %s, found byte 0x%02X", expected, (unsigned)c);
    return sfail(s, what);
}

/* The array at buf[start] ('['), element by element. */
static int array(sreader *s)
{
    advance(s, 1);
    int c = peek(s);
    if (c == ']') {
        advance(s, 1);
        return 0;
    }
    for (;;) {
        if (c == -2)
            return -1;
        if (c == -1 || c == ']' || c == ',')
            return describe(s, c, "an array element");
        int r = value(s, NULL);
        if (r != 0)
            return r;
        c = peek(s);
        if (c == ']') {
            advance(s, 1);
            return 0;
        }
        if (c != ',')
            return c == -2 ? -1 : describe(s, c, "',' or ']' in an array");
        advance(s, 1);
        c = peek(s);
    }
}

typedef struct {
    char *key;
    size_t keycap;
    char **seen;
    size_t nseen;
} keyset;

/* The key string at buf[start] (unescaped by the strict parser), refused when seen before. */
static int member_key(sreader *s, keyset *k)
{
    size_t n, line = s->line, col = s->col;
    if (extent(s, &n) != 0)
        return -1;
    int r = doc_load_json_at(s->doc, (const unsigned char *)s->buf + s->start, n, s->line,
                             s->col, 0, s->err);
    if (r != GOLDEN_OK)
        return -1;
    json_t *v = golden_doc_root(s->doc);
    size_t len = json_string_length(v);
    int bad = memchr(json_string_value(v), 0, len) != NULL;
    for (size_t i = 0; i < k->nseen && !bad; i++)
        bad = !strcmp(k->seen[i], json_string_value(v)) ? 2 : 0;
    char *copy = bad ? NULL : strdup(json_string_value(v));
    char **ns = copy ? realloc(k->seen, (k->nseen + 1) * sizeof *ns) : NULL;
    doc_clear(s->doc);
    if (bad) {
        free(copy);
        return golden_fail_where(s->err, GOLDEN_EINVAL, bad == 2 ? "duplicate key" : "NUL in a key",
                                 "%s:%zu:%zu", s->path, line, col);
    }
    if (!ns) {
        free(copy);
        return golden_fail_what(s->err, GOLDEN_ENOMEM, s->path, "out of memory");
    }
    k->seen = ns;
    k->seen[k->nseen++] = copy;
    k->key = copy;
    advance(s, n);
    return 0;
}

static int object(sreader *s, const char *array_key)
{
    keyset k = {0};
    int rc = 0;
    advance(s, 1);
    int c = peek(s);
    if (c == '}')
        advance(s, 1);
    else
        for (;;) {
            if (c != '"') {
                rc = c == -2 ? -1 : describe(s, c, "a string key");
                break;
            }
            if ((rc = member_key(s, &k)) != 0)
                break;
            if ((c = peek(s)) != ':') {
                rc = c == -2 ? -1 : describe(s, c, "':' after an object key");
                break;
            }
            advance(s, 1);
            c = peek(s);
            if (c < 0) {
                rc = c == -2 ? -1 : describe(s, c, "a value");
                break;
            }
            if (!strcmp(k.key, array_key)) {
                rc = c == '[' ? array(s) : sfail(s, "expected an array");
            } else {
                rc = value(s, k.key);
            }
            if (rc != 0)
                break;
            c = peek(s);
            if (c == '}') {
                advance(s, 1);
                break;
            }
            if (c != ',') {
                rc = c == -2 ? -1 : describe(s, c, "',' or '}' in an object");
                break;
            }
            advance(s, 1);
            c = peek(s);
        }
    for (size_t i = 0; i < k.nseen; i++)
        free(k.seen[i]);
    free(k.seen);
    return rc;
}

int golden_doc_each_element(const char *path, const char *array_key, golden_doc_element_fn fn,
                            void *ctx, golden_error *err)
{
    sreader s = {0};
    s.path = path;
    s.err = err;
    s.fn = fn;
    s.ctx = ctx;
    s.line = s.col = 1;
    s.fd = golden_infile_open(path, GOLDEN_IN_STREAM, err); /* never blocks on a FIFO */
    if (s.fd < 0)
        return GOLDEN_ERR;
    struct stat st;
    if (fstat(s.fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(s.fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "is a directory, not a document");
    }
    s.cap = (size_t)1 << 20;
    s.buf = malloc(s.cap);
    s.doc = doc_new(path, err);
    s.arena = doc_arena_lines_new();
    int rc = 0;
    if (!s.buf || !s.doc)
        rc = s.doc ? golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory") : GOLDEN_ERR;
    while (rc == 0 && s.len < 3 && !s.eof) /* a byte order mark may open the file */
        rc = fill(&s);
    if (rc == 0 && s.len >= 3 && !memcmp(s.buf, "\xEF\xBB\xBF", 3))
        s.start = 3;
    int c = rc == 0 ? peek(&s) : -2;
    if (c == '[')
        rc = array(&s);
    else if (c == '{')
        rc = object(&s, array_key ? array_key : "");
    else if (c != -2)
        rc = describe(&s, c, "a JSON array or object");
    else
        rc = -1;
    if (rc == 0 && (c = peek(&s)) != -1)
        rc = c == -2 ? -1 : describe(&s, c, "the end of the document after the JSON value");
    free(s.buf);
    golden_doc_free(s.doc);
    doc_arena_free(s.arena);
    close(s.fd);
    return rc;
}
