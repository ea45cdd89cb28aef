/* Loading a graph file: every regular JSON file streams (by default; issue 35), YAML, pipes
 * and JSON under a threshold set on purpose take the tree path (document layer + schema); the
 * file is read, never mapped. */
#include "graph/build.h"
#include "golden/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read the whole file into memory. read(), not mmap(): a file that shrinks while it is read is
 * a short read (then judged as the bytes it holds), never a SIGBUS, and the library installs
 * no signal handler. */
static int read_whole(const char *path, int fd, size_t hint, char **out, size_t *outlen,
                      golden_error *err)
{
    size_t cap = hint + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory for a %zu-byte graph", hint);
    for (;;) {
        if (n == cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return golden_fail_what(err, golden_code_from_errno(e), path, "cannot read: %s",
                                    strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = buf;
    *outlen = n;
    return GOLDEN_OK;
}

int golden_graph_load_file(const char *path, golden_graph **out, golden_error *err)
{
    return golden_graph_load_file_opts(path, NULL, out, err);
}

int golden_graph_load_file_opts(const char *path, const golden_graph_load_options *opts,
                                golden_graph **out, golden_error *err)
{
    *out = NULL;
    golden_graph_load_options o = {GOLDEN_GRAPH_LOAD_OPTIONS_VERSION, -1, false, NULL};
    if (opts) {
        if (opts->version != GOLDEN_GRAPH_LOAD_OPTIONS_VERSION)
            return golden_fail_what(err, GOLDEN_EINVAL, path, "graph load options of version %u "
                                    "(this library knows %u)", opts->version,
                                    GOLDEN_GRAPH_LOAD_OPTIONS_VERSION);
        o = *opts;
    }
    size_t threshold = o.stream_bytes < 0 ? GOLDEN_GRAPH_STREAM_DEFAULT : (size_t)o.stream_bytes;
    /* a pipe or stdin ("-") is read once, by the tree loader: no sniffing */
    struct stat pst;
    if (strcmp(path, "-") == 0 || (stat(path, &pst) == 0 && !S_ISREG(pst.st_mode)))
        return graph_load_tree(path, out, err);
    int fd = golden_infile_open(path, 0, err); /* never blocks on a FIFO */
    if (fd < 0)
        return GOLDEN_ERR;
    struct stat st;
    char head[64];
    ssize_t nh = 0;
    bool big = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= threshold;
    if (big)
        nh = pread(fd, head, sizeof head, 0);
    ssize_t i = 0;
    while (i < nh && strchr(" \t\r\n", head[i]))
        i++;
    if (!big || i >= nh || head[i] != '{') {
        close(fd);
        return graph_load_tree(path, out, err);
    }
    char *buf = NULL;
    size_t len = 0;
    int rc = read_whole(path, fd, (size_t)st.st_size, &buf, &len, err);
    close(fd);
    if (rc != 0)
        return rc;
    if (o.progress)
        o.progress->total = len;
    rc = graph_load_stream(path, buf, len, o.progress, !o.no_fast_ops, out, err);
    free(buf);
    return rc;
}

