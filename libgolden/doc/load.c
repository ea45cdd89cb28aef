/* Loading documents: files and buffers, JSON or YAML by name and content, JSON Lines; the
 * entry points of golden/doc.h. */
#include "doc/internal.h"
#include "golden/report.h"
#include "util/str.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Inputs of at least this size are read into an anonymous mapping whose parsed pages the JSON
 * parser gives back as it goes (smaller ones use the heap). */
#define MAPPED_MIN_INPUT ((size_t)1 << 20)

/* line * 2^32 + col of a "file:line:col" where, for comparing how far two readings got. */
static uint64_t where_rank(const char *where)
{
    const char *c2 = strrchr(where, ':');
    if (!c2 || c2 == where)
        return 0;
    const char *c1 = c2 - 1;
    while (c1 > where && *c1 != ':')
        c1--;
    if (*c1 != ':')
        return 0;
    unsigned long line = strtoul(c1 + 1, NULL, 10), col = strtoul(c2 + 1, NULL, 10);
    return ((uint64_t)line << 32) + col;
}

static int load_any(const char *name, const char *cbuf, size_t len, int force_json,
                    size_t first_line, int discardable, golden_doc **out, golden_error *err)
{
    *out = NULL;
    const unsigned char *buf = (const unsigned char *)cbuf;
    if (len > GOLDEN_DOC_MAX_BYTES)
        return golden_fail_what(err, GOLDEN_EINVAL, name, "document larger than %zu bytes",
                                (size_t)GOLDEN_DOC_MAX_BYTES);
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF) {
        buf += 3;
        len -= 3;
    }
    int must_json = force_json || (name && lg_has_suffix(name, ".json"));
    int looks_json = must_json;
    if (!looks_json) {
        size_t i = 0;
        while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
            i++;
        looks_json = i < len && (buf[i] == '{' || buf[i] == '[');
    }
    /* Only a file named as YAML may be a YAML flow mapping that looks like JSON: any other name
     * (stdin's "-", no suffix) that looks like JSON is JSON, so the same bytes never mean one
     * thing in a .json file and another on a pipe (0100 is not octal 64 there, a trailing comma
     * is not YAML's). */
    if (looks_json && !(name && (lg_has_suffix(name, ".yaml") || lg_has_suffix(name, ".yml"))))
        must_json = 1;
    /* Text that looks like JSON but is not (a YAML flow mapping such as {k: v}) is read as
     * YAML; when that fails too, the JSON error is the one reported. Input pages are only
     * dropped when there will be no second reading. */
    golden_error json_err = {0};
    for (int attempt = looks_json ? 0 : 1; attempt < 2; attempt++) {
        golden_doc *d = doc_new(name, err);
        if (!d)
            return GOLDEN_ERR;
        doc_arena_begin(d, len);
        int rc = attempt == 0
                     ? doc_load_json(d, buf, len, first_line, discardable && must_json,
                                     must_json ? err : &json_err)
                     : doc_load_yaml(d, buf, len, err);
        doc_arena_end();
        if (rc == GOLDEN_OK) {
            *out = d;
            return GOLDEN_OK;
        }
        golden_doc_free(d);
        if (must_json)
            return GOLDEN_ERR;
        if (attempt == 1 && looks_json) {
            /* Both failed: the reading that got further explains it better. */
            if (err && where_rank(json_err.where) >= where_rank(err->where))
                *err = json_err;
            return GOLDEN_ERR;
        }
    }
    return GOLDEN_ERR;
}

int golden_doc_load_buffer(const char *name, const char *buf, size_t len, golden_doc **out,
                           golden_error *err)
{
    return load_any(name, buf, len, 0, 1, 0, out, err);
}

int golden_doc_load_json(const char *name, const char *buf, size_t len, size_t first_line,
                         golden_doc **out, golden_error *err)
{
    return load_any(name, buf, len, 1, first_line ? first_line : 1, 0, out, err);
}

/* Read once into (*buf)[len, *cap), first doubling the buffer (to at most limit bytes) when it
 * is full; EINTR is retried. Bytes read (0: end of file), -1 a read error (errno says which),
 * or DOC_READ_NOMEM. Callers refuse input before the buffer reaches limit, so it always grows. */
ssize_t doc_read_more(int fd, char **buf, size_t *cap, size_t len, size_t limit)
{
    if (len == *cap) {
        size_t ncap = *cap * 2 > limit ? limit : *cap * 2;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return DOC_READ_NOMEM;
        *buf = nb;
        *cap = ncap;
    }
    for (;;) {
        ssize_t r = read(fd, *buf + len, *cap - len);
        if (r >= 0 || errno != EINTR)
            return r;
    }
}

/* Read a whole file (at most GOLDEN_DOC_MAX_BYTES) into memory. read() rather than mapping
 * the file, so that a file truncated under us is a short read, not a SIGBUS. A large regular
 * file goes into an anonymous mapping (*mapped = its size) whose parsed pages the JSON parser
 * hands back as it goes. */
static int read_all(const char *path, char **out, size_t *outlen, size_t *mapped,
                    golden_error *err)
{
    *mapped = 0;
    int fd = golden_infile_open(path, GOLDEN_IN_STREAM, err); /* never blocks on a FIFO */
    if (fd < 0)
        return GOLDEN_ERR;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "is a directory, not a document");
    }
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > GOLDEN_DOC_MAX_BYTES) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "document larger than %zu bytes (the loader's limit)",
                                (size_t)GOLDEN_DOC_MAX_BYTES);
    }
    int regular = S_ISREG(st.st_mode);
    size_t cap = regular ? (size_t)st.st_size + 1 : 65536, len = 0;
    char *buf;
    if (regular && cap > MAPPED_MIN_INPUT) {
        void *m = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        buf = m == MAP_FAILED ? NULL : m;
        if (buf)
            *mapped = cap;
    } else {
        buf = malloc(cap);
    }
    if (!buf) {
        close(fd);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory reading %zu bytes", cap);
    }
    for (;;) {
        if (len == cap) {
            if (*mapped) /* the file grew while we read it: take what it was */
                break;
            if (cap > GOLDEN_DOC_MAX_BYTES) {
                free(buf);
                close(fd);
                return golden_fail_what(err, GOLDEN_EINVAL, path, "document larger than %zu bytes (the loader's limit)",
                                        (size_t)GOLDEN_DOC_MAX_BYTES);
            }
        }
        ssize_t r = doc_read_more(fd, &buf, &cap, len, GOLDEN_DOC_MAX_BYTES + 1);
        if (r == DOC_READ_NOMEM) {
            free(buf);
            close(fd);
            return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
        }
        if (r < 0) {
            int e = errno;
            if (*mapped)
                munmap(buf, *mapped);
            else
                free(buf);
            close(fd);
            return golden_fail_what(err, golden_code_from_errno(e), path, "read error: %s", strerror(e));
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    if (len > GOLDEN_DOC_MAX_BYTES) {
        if (*mapped)
            munmap(buf, *mapped);
        else
            free(buf);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "document larger than %zu bytes (the loader's limit)",
                                (size_t)GOLDEN_DOC_MAX_BYTES);
    }
    *out = buf;
    *outlen = len;
    return GOLDEN_OK;
}

int golden_doc_load_file(const char *path, golden_doc **out, golden_error *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0, mapped = 0;
    if (read_all(path, &buf, &len, &mapped, err) < 0)
        return GOLDEN_ERR;
    int rc = load_any(path, buf, len, 0, 1, mapped != 0, out, err);
    if (mapped)
        munmap(buf, mapped);
    else
        free(buf);
    return rc;
}

/* JSON Lines: each non-blank line through the strict JSON reader, on lines.c's bounded line
 * reader (the one reader of line files: a line longer than the cap is refused as soon as the
 * cap is passed, so a 1 GB line costs 64 MiB of memory, not 1 GB). */
typedef struct {
    golden_jsonl_fn fn;
    void *ctx;
    golden_doc *doc;     /* one doc for every line: emptied, never freed, between lines */
    golden_arena *arena; /* the lines' trees (NULL: the heap), rewound between lines */
} jsonl_ctx;

/* Each line is read exactly as golden_doc_load_json reads a buffer (a byte order mark may
 * open it; lines.c refuses one on a later line), into the reused doc and arena. */
static int jsonl_line(void *ctx, const char *line, size_t len, size_t line_no, golden_error *err)
{
    jsonl_ctx *c = ctx;
    golden_doc *d = c->doc;
    const unsigned char *buf = (const unsigned char *)line;
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF) {
        buf += 3;
        len -= 3;
    }
    doc_arena_use(c->arena);
    int r = doc_load_json(d, buf, len, line_no, 0, err);
    doc_arena_use(NULL);
    if (r == GOLDEN_OK)
        r = c->fn(c->ctx, d, line_no, err);
    doc_clear(d);
    doc_arena_rewind(c->arena);
    return r;
}

int golden_doc_each_jsonl(const char *path, golden_jsonl_fn fn, void *ctx, golden_error *err)
{
    jsonl_ctx c = {fn, ctx, doc_new(path, err), doc_arena_lines_new()};
    if (!c.doc) {
        doc_arena_free(c.arena);
        return GOLDEN_ERR;
    }
    int rc = golden_doc_each_line(path, GOLDEN_JSONL_MAX_LINE, jsonl_line, &c, err);
    golden_doc_free(c.doc);
    doc_arena_free(c.arena);
    return rc;
}
