/* Opening an input the one safe way: never block in open() on a FIFO, decide from fstat whether
 * the file is one we read (a regular file, or a stream where the caller can read one). */
#include "golden/report.h"

#include "util/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int golden_infile_open(const char *path, unsigned flags, golden_error *err)
{
    bool streams = (flags & GOLDEN_IN_STREAM) != 0;
    if (strcmp(path, "-") == 0) {
        if (!streams)
            return golden_fail_what(err, GOLDEN_EINVAL, path,
                                    "standard input cannot be read here: this input needs a "
                                    "regular file");
        int fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
            return golden_fail_what(err, golden_code_from_errno(errno), path,
                                    "cannot read standard input: %s", strerror(errno));
        return fd;
    }
    /* O_NONBLOCK: opening a FIFO for reading never waits for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s",
                                strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot stat: %s", strerror(e));
    }
    const char *refuse = NULL;
    if (S_ISDIR(st.st_mode))
        refuse = "is a directory, not a file";
    else if (!S_ISREG(st.st_mode) && !(streams && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))))
        refuse = streams ? "is not a regular file, a pipe or a character device"
                         : "is not a regular file (this input cannot be a pipe or a device)";
    if (refuse) {
        close(fd);
        return golden_fail_what(err, GOLDEN_EINVAL, path, "%s", refuse);
    }
    /* back to blocking reads: a pipe's writer may be slower than we are */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot read: %s", strerror(e));
    }
    return fd;
}

FILE *golden_infile_fopen(const char *path, unsigned flags, golden_error *err)
{
    int fd = golden_infile_open(path, flags, err);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        golden_fail_what(err, golden_code_from_errno(e), path, "cannot read: %s", strerror(e));
    }
    return f;
}

int golden_infile_spool_stdin(const char *beside, char **tmp, golden_error *err)
{
    int fd = golden_tmpfile_beside(beside, tmp, err);
    if (fd < 0)
        return GOLDEN_ERR;
    char buf[1 << 16];
    int e = 0;
    for (;;) {
        ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            e = errno;
            break;
        }
        if (r == 0)
            break;
        for (ssize_t done = 0; done < r;) {
            ssize_t w = write(fd, buf + done, (size_t)(r - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                e = w < 0 ? errno : ENOSPC;
                break;
            }
            done += w;
        }
        if (e)
            break;
    }
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        golden_infile_spool_done(*tmp);
        *tmp = NULL;
        return golden_fail_what(err, golden_code_from_errno(e), "-",
                                "cannot copy standard input beside %s: %s", beside, strerror(e));
    }
    return GOLDEN_OK;
}

void golden_infile_spool_done(char *tmp)
{
    if (!tmp)
        return;
    unlink(tmp);
    lg_guard_remove_temp(tmp);
    free(tmp);
}
