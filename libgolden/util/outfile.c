/* Outputs that appear whole or not at all: a regular file is written to a temporary file beside
 * it, flushed to disk (file and folder) and renamed; "-" and special files are written directly. */
#include "golden/report.h"

#include "util/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct golden_outfile {
    FILE *stream;
    char *path;    /* NULL for stdout */
    char *tmp;     /* NULL when written directly (stdout, a device, a FIFO) */
    bool force;
};

golden_outkind golden_outfile_kind(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return GOLDEN_OUT_STDOUT;
    struct stat st;
    if (stat(path, &st) != 0)
        return lstat(path, &st) == 0 ? GOLDEN_OUT_EXISTING : GOLDEN_OUT_NEW; /* dangling link */
    if (S_ISREG(st.st_mode))
        return GOLDEN_OUT_EXISTING;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
        return GOLDEN_OUT_SPECIAL;
    if (S_ISDIR(st.st_mode))
        return GOLDEN_OUT_FOLDER;
    return GOLDEN_OUT_REFUSED; /* block devices and sockets: never a report's destination */
}

int golden_outfile_check(const char *path, bool force, golden_error *err)
{
    switch (golden_outfile_kind(path)) {
    case GOLDEN_OUT_FOLDER:
        return golden_fail_what(err, GOLDEN_EINVAL, path, "is a folder, not an output file");
    case GOLDEN_OUT_REFUSED:
        return golden_fail_what(err, GOLDEN_EINVAL, path,
                                "is a block device or a socket, not an output file");
    case GOLDEN_OUT_EXISTING:
        if (!force)
            return golden_fail_what(err, GOLDEN_EEXISTS, path,
                                    "output exists (use --force to replace it)");
        return GOLDEN_OK;
    default:
        return GOLDEN_OK;
    }
}

int golden_outfile_check_regular(const char *path, bool force, golden_error *err)
{
    golden_outkind k = golden_outfile_kind(path);
    if (k == GOLDEN_OUT_STDOUT || k == GOLDEN_OUT_SPECIAL)
        return golden_fail_what(err, GOLDEN_EUNSUPPORTED, path ? path : "-",
                                "not a regular file: an HDF5 file cannot be written to a stream "
                                "(give a file path)");
    return golden_outfile_check(path, force, err);
}

int golden_outfile_distinct(const char *path, const char *const *inputs, size_t n,
                            golden_error *err)
{
    struct stat out, in;
    if (!path || strcmp(path, "-") == 0 || stat(path, &out) != 0 || !S_ISREG(out.st_mode))
        return GOLDEN_OK;
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && strcmp(inputs[i], "-") != 0 && stat(inputs[i], &in) == 0 &&
            in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return golden_fail_what(err, GOLDEN_EINVAL, path,
                                    "output is also an input (%s); refusing to overwrite it",
                                    inputs[i]);
    return GOLDEN_OK;
}

int golden_tmpfile_beside(const char *path, char **tmp, golden_error *err)
{
    size_t n = strlen(path) + 16;
    *tmp = malloc(n);
    if (!*tmp)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    snprintf(*tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        int e = errno;
        free(*tmp);
        *tmp = NULL;
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot create: %s", strerror(e));
    }
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    lg_guard_add_temp(*tmp);
    return fd;
}

/* fsync the folder holding path, so that the rename itself survives a crash. */
static int sync_folder(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return ENOMEM;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    if (fd < 0)
        return errno;
    int e = fsync(fd) != 0 && errno != EINVAL ? errno : 0;
    close(fd);
    return e;
}

int golden_tmpfile_install(const char *tmp, const char *path, bool force, golden_error *err)
{
    int e = 0;
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL))
        e = errno;
    if (fd >= 0)
        close(fd);
    const char *what = "cannot flush to disk: %s";
    if (!e && !force && golden_outfile_kind(path) == GOLDEN_OUT_EXISTING) {
        lg_guard_remove_temp(tmp);
        unlink(tmp);
        return golden_fail_what(err, GOLDEN_EEXISTS, path,
                                "output appeared while writing (use --force to replace it)");
    }
    if (!e && golden_outfile_kind(path) == GOLDEN_OUT_SPECIAL)
        e = EEXIST, what = "became a special file while writing: %s";
    if (!e && rename(tmp, path) != 0)
        e = errno, what = "cannot rename into place: %s";
    lg_guard_remove_temp(tmp);
    if (e) {
        unlink(tmp);
        return golden_fail_what(err, golden_code_from_errno(e), path, what, strerror(e));
    }
    if ((e = sync_folder(path)) != 0)
        return golden_fail_what(err, golden_code_from_errno(e), path,
                                "renamed, but its folder cannot be flushed to disk: %s", strerror(e));
    return GOLDEN_OK;
}

static int open_direct(golden_outfile *f, const char *path, golden_error *err)
{
    /* no O_CREAT, no O_TRUNC: the node stays what it is (a device, a FIFO, a /dev/fd pipe) */
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path, "cannot open: %s",
                                strerror(errno));
    f->stream = fdopen(fd, "w");
    if (!f->stream) {
        int e = errno;
        close(fd);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot write: %s", strerror(e));
    }
    return GOLDEN_OK;
}

int golden_outfile_open(const char *path, bool force, golden_outfile **out, golden_error *err)
{
    *out = NULL;
    if (golden_outfile_check(path, force, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    golden_outfile *f = calloc(1, sizeof *f);
    if (!f)
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    f->force = force;
    golden_outkind kind = golden_outfile_kind(path);
    if (kind == GOLDEN_OUT_STDOUT) {
        f->stream = stdout;
        *out = f;
        return GOLDEN_OK;
    }
    f->path = strdup(path);
    if (!f->path) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    if (kind == GOLDEN_OUT_SPECIAL) {
        if (open_direct(f, path, err) != GOLDEN_OK) {
            golden_outfile_abort(f);
            return GOLDEN_ERR;
        }
        *out = f;
        return GOLDEN_OK;
    }
    int fd = golden_tmpfile_beside(path, &f->tmp, err);
    if (fd < 0) {
        golden_outfile_abort(f);
        return GOLDEN_ERR;
    }
    f->stream = fdopen(fd, "w");
    if (!f->stream) {
        int e = errno;
        close(fd);
        golden_outfile_abort(f);
        return golden_fail_what(err, golden_code_from_errno(e), path, "cannot write: %s", strerror(e));
    }
    *out = f;
    return GOLDEN_OK;
}

FILE *golden_outfile_stream(golden_outfile *f) { return f->stream; }

int golden_outfile_commit(golden_outfile *f, golden_error *err)
{
    if (!f->path) {
        int bad = fflush(stdout) != 0 || ferror(stdout);
        int e = errno;
        free(f);
        return bad ? golden_fail_what(err, golden_code_from_errno(e), "-",
                                      "cannot write to standard output: %s", strerror(e))
                   : GOLDEN_OK;
    }
    int bad = fflush(f->stream) != 0 || ferror(f->stream);
    int e = errno;
    if (fclose(f->stream) != 0 && !bad)
        bad = 1, e = errno;
    f->stream = NULL;
    if (bad) {
        char *path = strdup(f->path);
        golden_outfile_abort(f);
        golden_fail_what(err, golden_code_from_errno(e), path ? path : "output",
                         "cannot write: %s", strerror(e));
        free(path);
        return GOLDEN_ERR;
    }
    int rc = f->tmp ? golden_tmpfile_install(f->tmp, f->path, f->force, err) : GOLDEN_OK;
    free(f->tmp);
    f->tmp = NULL; /* installed or already removed */
    golden_outfile_abort(f);
    return rc;
}

void golden_outfile_abort(golden_outfile *f)
{
    if (!f)
        return;
    if (f->stream && f->stream != stdout)
        fclose(f->stream);
    if (f->tmp) {
        lg_guard_remove_temp(f->tmp);
        unlink(f->tmp);
    }
    free(f->tmp);
    free(f->path);
    free(f);
}
