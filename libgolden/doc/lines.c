/* The one reader of line files (JSON Lines, and the CSV of a device trace): streamed from a
 * bounded buffer, one line at a time. A line longer than the cap is refused as soon as the cap
 * is passed, so /dev/zero or a 1 GB line costs the cap, not the line; a FIFO is opened without
 * blocking (golden_infile_open). */
#include "doc/internal.h"
#include "golden/report.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int too_long(golden_error *err, const char *path, size_t line_no, size_t max_line)
{
    if (max_line == GOLDEN_JSONL_MAX_LINE)
        return golden_fail_where(err, GOLDEN_EINVAL,
                                 "line longer than the 64 MiB limit of JSON Lines", "%s:%zu",
                                 path, line_no);
    char what[96];
    snprintf(what, sizeof what, "line longer than the %zu-byte limit", max_line);
    return golden_fail_where(err, GOLDEN_EINVAL, what, "%s:%zu", path, line_no);
}

int golden_doc_each_line(const char *path, size_t max_line, golden_line_fn fn, void *ctx,
                         golden_error *err)
{
    if (max_line == 0 || max_line > GOLDEN_JSONL_MAX_LINE)
        max_line = GOLDEN_JSONL_MAX_LINE;
    int fd = golden_infile_open(path, GOLDEN_IN_STREAM, err); /* never blocks on a FIFO */
    if (fd < 0)
        return GOLDEN_ERR;
    struct stat st;
    bool have_st = fstat(fd, &st) == 0;
    if (have_st && S_ISDIR(st.st_mode)) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "is a directory, not a document");
    }
    /* 1 MiB (at most the cap), or less for a small regular file (the buffer doubles as lines
     * need it) */
    size_t cap = (size_t)1 << 20, start = 0, len = 0, scan = 0, line_no = 1;
    if (cap > max_line + 2)
        cap = max_line + 2;
    if (have_st && S_ISREG(st.st_mode) && st.st_size >= 0 && (uint64_t)st.st_size < cap)
        cap = (size_t)st.st_size + 1 < 4096 ? 4096 : (size_t)st.st_size + 1;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    int rc = GOLDEN_OK, eof = 0;
    while (rc == GOLDEN_OK) {
        char *nl = scan < len ? memchr(buf + scan, '\n', len - scan) : NULL;
        if (!nl && !eof) {
            if (len - start > max_line) {
                rc = too_long(err, path, line_no, max_line);
                break;
            }
            if (start > 0) {
                memmove(buf, buf + start, len - start);
                len -= start;
                scan -= start;
                start = 0;
            }
            ssize_t r = doc_read_more(fd, &buf, &cap, len, max_line + 2);
            if (r == DOC_READ_NOMEM) {
                rc = golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
                break;
            }
            if (r < 0) {
                rc = golden_fail_what(err, golden_code_from_errno(errno), path,
                                      "read error: %s", strerror(errno));
                break;
            }
            if (r == 0)
                eof = 1;
            scan = len;
            len += (size_t)r;
            continue;
        }
        size_t end = nl ? (size_t)(nl - buf) : len;
        if (!nl && start == len)
            break;
        size_t llen = end - start;
        if (llen > max_line) {
            rc = too_long(err, path, line_no, max_line);
            break;
        }
        if (llen && buf[start + llen - 1] == '\r')
            llen--;
        int blank = 1;
        for (size_t i = 0; i < llen && blank; i++) {
            char c = buf[start + i];
            blank = c == ' ' || c == '\t' || c == '\r';
        }
        /* a byte order mark may open the file, never a later line (a concatenation slip) */
        if (line_no > 1 && llen >= 3 && memcmp(buf + start, "\xEF\xBB\xBF", 3) == 0) {
            rc = golden_fail_where(err, GOLDEN_EINVAL, "byte order mark in the middle of a JSON "
                                   "Lines file", "%s:%zu", path, line_no);
            break;
        }
        if (!blank) {
            int r = fn(ctx, buf + start, llen, line_no, err);
            if (r != 0) {
                rc = r;
                break;
            }
        }
        line_no++;
        start = scan = nl ? end + 1 : len;
        if (!nl)
            break;
    }
    free(buf);
    close(fd);
    return rc;
}

int golden_doc_check_text(const char *name, const char *p, size_t len, size_t line,
                          golden_error *err)
{
    return doc_check_text(name, (const unsigned char *)p, len, line, err);
}
