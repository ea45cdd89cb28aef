/* Outputs shared by every tool: atomic files (temp beside the target, then rename), JSON and
 * JUnit XML writers, colour and progress that appear only on a terminal. */
#include "golden/report.h"

#include "util/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct golden_outfile {
    FILE *stream;
    char *path;    /* NULL for stdout */
    char *tmp;
    bool force;
};

int golden_outfile_check(const char *path, bool force, golden_error *err)
{
    if (!path || strcmp(path, "-") == 0)
        return GOLDEN_OK;
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return golden_fail_what(err, GOLDEN_EINVAL, path, "is a folder, not an output file");
        if (!force)
            return golden_fail_what(err, GOLDEN_EEXISTS, path, "output exists (use --force to replace it)");
    }
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
    golden_guard_add_temp(*tmp);
    return fd;
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
    if (strcmp(path, "-") == 0) {
        f->stream = stdout;
        *out = f;
        return GOLDEN_OK;
    }
    f->path = strdup(path);
    if (!f->path) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
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
        free(f);
        return bad ? golden_fail_what(err, GOLDEN_EIO, "-", "cannot write to standard output") : GOLDEN_OK;
    }
    int bad = fflush(f->stream) != 0 || ferror(f->stream);
    int e = errno;
    if (!bad && fsync(fileno(f->stream)) != 0 && errno != EINVAL)
        bad = 1, e = errno;
    if (fclose(f->stream) != 0 && !bad)
        bad = 1, e = errno;
    f->stream = NULL;
    if (!bad && !f->force && access(f->path, F_OK) == 0)
        bad = 2;
    golden_guard_remove_temp(f->tmp);
    if (!bad && rename(f->tmp, f->path) != 0)
        bad = 1, e = errno;
    if (bad) {
        char *path = strdup(f->path);
        golden_outfile_abort(f);
        golden_fail_what(err, golden_code_from_errno(e), path ? path : "output",
                    bad == 2 ? "output appeared while writing (use --force to replace it)"
                             : "cannot write: %s",
                    strerror(e));
        free(path);
        return GOLDEN_ERR;
    }
    free(f->tmp);
    free(f->path);
    free(f);
    return GOLDEN_OK;
}

void golden_outfile_abort(golden_outfile *f)
{
    if (!f)
        return;
    if (f->stream && f->stream != stdout)
        fclose(f->stream);
    if (f->tmp) {
        golden_guard_remove_temp(f->tmp);
        unlink(f->tmp);
    }
    free(f->tmp);
    free(f->path);
    free(f);
}

json_t *golden_json_real(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int golden_json_write(const char *path, const json_t *doc, bool force, golden_error *err)
{
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    if (json_dumpf(doc, golden_outfile_stream(f), JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0 ||
        fputc('\n', golden_outfile_stream(f)) == EOF) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_EIO, path, "cannot write JSON");
    }
    return golden_outfile_commit(f, err);
}

char *golden_xml_escape(const char *s)
{
    if (!s)
        s = "";
    size_t cap = strlen(s) * 6 + 1;
    char *out = malloc(cap), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '<': o = stpcpy(o, "&lt;"); break;
        case '>': o = stpcpy(o, "&gt;"); break;
        case '&': o = stpcpy(o, "&amp;"); break;
        case '"': o = stpcpy(o, "&quot;"); break;
        case '\'': o = stpcpy(o, "&apos;"); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
                break; /* not allowed in XML 1.0 */
            *o++ = (char)*p;
        }
    }
    *o = '\0';
    return out;
}

int golden_junit_write(const char *path, bool force, const char *suite_name,
                       const golden_junit_case *cases, size_t n, golden_error *err)
{
    golden_outfile *f;
    if (golden_outfile_open(path, force, &f, err) != GOLDEN_OK)
        return GOLDEN_ERR;
    FILE *o = golden_outfile_stream(f);
    size_t failures = 0, skipped = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        failures += cases[i].failed;
        skipped += cases[i].skipped;
        total += cases[i].seconds;
    }
    char *suite = golden_xml_escape(suite_name);
    int bad = !suite;
    if (!bad)
        fprintf(o,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<testsuites tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" time=\"%.6f\">\n"
                "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" "
                "errors=\"0\" time=\"%.6f\">\n",
                n, failures, skipped, total, suite, n, failures, skipped, total);
    for (size_t i = 0; i < n && !bad; i++) {
        const golden_junit_case *c = &cases[i];
        char *cls = golden_xml_escape(c->classname ? c->classname : suite_name);
        char *name = golden_xml_escape(c->name);
        char *msg = golden_xml_escape(c->message);
        char *det = golden_xml_escape(c->details ? c->details : c->message);
        if (!cls || !name || !msg || !det) {
            bad = 1;
        } else {
            fprintf(o, "    <testcase classname=\"%s\" name=\"%s\" time=\"%.6f\"", cls, name,
                    c->seconds);
            if (c->failed)
                fprintf(o, ">\n      <failure message=\"%s\" type=\"failure\">%s</failure>\n"
                           "    </testcase>\n", msg, det);
            else if (c->skipped)
                fprintf(o, ">\n      <skipped message=\"%s\"/>\n    </testcase>\n", msg);
            else
                fprintf(o, "/>\n");
        }
        free(cls);
        free(name);
        free(msg);
        free(det);
    }
    if (!bad)
        fprintf(o, "  </testsuite>\n</testsuites>\n");
    free(suite);
    if (bad) {
        golden_outfile_abort(f);
        return golden_fail_what(err, GOLDEN_ENOMEM, path, "out of memory");
    }
    return golden_outfile_commit(f, err);
}

bool golden_use_color(FILE *stream)
{
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return false;
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0)
        return false;
    return isatty(fileno(stream));
}

const char *golden_color(bool on, const char *which)
{
    if (!on)
        return "";
    if (strcmp(which, "red") == 0) return "\033[31m";
    if (strcmp(which, "green") == 0) return "\033[32m";
    if (strcmp(which, "yellow") == 0) return "\033[33m";
    if (strcmp(which, "bold") == 0) return "\033[1m";
    return "\033[0m";
}

double golden_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void golden_progress_start(golden_progress *p, const char *label, unsigned long long total)
{
    p->enabled = isatty(STDERR_FILENO) != 0;
    p->label = label;
    p->total = total;
    p->last = 0;
}

void golden_progress_update(golden_progress *p, unsigned long long done)
{
    if (!p->enabled)
        return;
    double t = golden_seconds();
    if (t - p->last < 0.1)
        return;
    p->last = t;
    if (p->total)
        fprintf(stderr, "\r%s %5.1f%%", p->label, 100.0 * (double)done / (double)p->total);
    else
        fprintf(stderr, "\r%s %llu", p->label, done);
    fflush(stderr);
}

void golden_progress_end(golden_progress *p)
{
    if (p->enabled && p->last > 0)
        fprintf(stderr, "\r\033[K");
    p->enabled = false;
}

int golden_threads(void)
{
    const char *env = getenv("GOLDEN_THREADS");
    if (env && *env) {
        long v = strtol(env, NULL, 10);
        if (v >= 1 && v <= 256)
            return (int)v;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)(n > 256 ? 256 : n) : 1;
}
