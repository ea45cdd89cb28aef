/* The first look at a golden from outside happens in a child process with CPU and memory
 * limits, so a crash, a spin or a huge allocation inside libhdf5 ends there, as an error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "golden/store.h"
#include "tensor/store_private.h"

/* Sanitizer builds: the child's own sanitizer report must end the child only. */
#if defined(__SANITIZE_ADDRESS__)
#define GOLDEN_ISOLATE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GOLDEN_ISOLATE_ASAN 1
#endif
#endif
#ifdef GOLDEN_ISOLATE_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* Virtual memory the child may add to what the process already maps. */
#define PRECHECK_EXTRA_BYTES (4ull << 30)

/* Current virtual size of this process in bytes (0 when unknown). */
static unsigned long long vm_size(void)
{
    FILE *f = fopen("/proc/self/statm", "re");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

/* In the child: limits, default crash handling (the tool's guard would print and remove
 * the parent's temporary files), no stderr, then the work. Never returns. */
static void write_all(int out, const void *data, size_t left)
{
    const char *p = data;
    while (left > 0) {
        ssize_t w = write(out, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        p += w;
        left -= (size_t)w;
    }
}

static void child_main(int out, unsigned long long vm_limit,
                       int (*fn)(void *ctx, lg_blob *out, golden_error *err), void *ctx)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
#ifdef GOLDEN_ISOLATE_ASAN
    /* a sanitizer's death callback belongs to the parent (libFuzzer's writes a crash artifact
     * of the parent's input): a fault inside libhdf5 here is the corrupt file's, reported by
     * the parent as such */
    __sanitizer_set_death_callback(NULL);
#endif
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (devnull >= 0)
        dup2(devnull, STDERR_FILENO);
    struct rlimit cpu = {GOLDEN_PRECHECK_CPU_SECONDS, GOLDEN_PRECHECK_CPU_SECONDS + 1};
    setrlimit(RLIMIT_CPU, &cpu);
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
    if (vm_limit) {
        struct rlimit as = {vm_limit, vm_limit};
        setrlimit(RLIMIT_AS, &as);
    }
    golden_error e;
    golden_error_clear(&e);
    lg_blob b = {0};
    int rc = fn(ctx, &b, &e);
    if (rc == GOLDEN_OK && b.oom)
        rc = golden_fail_what(&e, GOLDEN_ENOMEM, NULL, "out of memory");
    if (rc == GOLDEN_OK) {
        write_all(out, b.p, b.n);
        _exit(0);
    }
    write_all(out, &e, sizeof e);
    _exit(3);
}

/* CPU clock ticks the child has used so far (-1 when unknown), and its state letter (R, S, D...)
 * in *state when that is not NULL. */
static long long child_ticks(pid_t pid, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* fields after the command name */
    unsigned long long ut, st;
    char c = '?';
    if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &c, &ut, &st) != 3)
        return -1;
    if (state)
        *state = c;
    return (long long)(ut + st);
}

enum { CHILD_DONE, CHILD_KILLED, CHILD_STALLED, CHILD_TOOBIG };

/* Collect what the child writes and wait for it to end, at most GOLDEN_PRECHECK_WALL_SECONDS
 * (then it is killed). The pipe's end of file says the child is gone, so there is no polling
 * delay. A child that has used almost no CPU after STALL_SECONDS is blocked, not parsing (a
 * lock another thread held at fork time, as sanitizer runtimes can leave): it is killed and
 * reported as stalled, so the caller can try again. */
#define STALL_SECONDS 5
static int wait_child(pid_t pid, int in, lg_blob *got, int *status, int *how)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    *how = CHILD_DONE;
    got->n = 0;
    long long last_ticks = 0, last_progress = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ms = (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1000000;
        long long left = (long long)GOLDEN_PRECHECK_WALL_SECONDS * 1000 - ms;
        if (left <= 0) {
            kill(pid, SIGKILL);
            *how = CHILD_KILLED;
            break;
        }
        if (ms >= 1000) {
            char state = '?';
            long long t = child_ticks(pid, &state);
            if (t > last_ticks) {
                last_ticks = t;
                last_progress = ms;
            }
            /* blocked from the start, or asleep (not in disk I/O) with no CPU used for
             * STALL_SECONDS: a lock held at fork time (parsing never sleeps that long) */
            bool never = ms >= STALL_SECONDS * 1000 && t >= 0 &&
                         t * 1000 / sysconf(_SC_CLK_TCK) < 50;
            bool asleep = state == 'S' && ms - last_progress >= STALL_SECONDS * 1000;
            if (never || asleep) {
                kill(pid, SIGKILL);
                *how = CHILD_STALLED;
                break;
            }
        }
        struct pollfd p = {.fd = in, .events = POLLIN};
        int r = poll(&p, 1, left < 1000 ? (int)left : 1000);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        if (got->cap - got->n < 65536) {
            lg_blob_put(got, NULL, 65536); /* room for one more pipe's worth */
            got->n -= got->oom ? 0 : 65536;
        }
        if (got->oom || got->n >= LG_ISOLATED_MAX_BYTES) {
            kill(pid, SIGKILL);
            *how = CHILD_TOOBIG;
            break;
        }
        ssize_t n = read(in, got->p + got->n, got->cap - got->n);
        if (n > 0) {
            got->n += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        break; /* end of file: the child has exited (or closed its end) */
    }
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* One child: GOLDEN_OK, GOLDEN_ERR with err filled, 1 when it stalled, or (sanitizer builds
 * only) 2 when it ran over its CPU limit and 3 over its time (err untouched but for the first). */
static int isolated_once(const char *path, int (*fn)(void *ctx, lg_blob *out, golden_error *err),
                         void *ctx, lg_blob *got, golden_error *err)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return golden_fail_what(err, golden_code_from_errno(errno), path,
                                "cannot check the file in a child process: %s", strerror(errno));
    unsigned long long vm = vm_size();
    unsigned long long limit = vm ? vm + PRECHECK_EXTRA_BYTES : 0;
    /* No other thread is inside HDF5 while the child is made (its copy of HDF5 is consistent);
     * the child runs HDF5 without taking the lock, which it holds as the forking thread. */
    lg_store_lock_file(path);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_main(fds[1], limit, fn, ctx);
    }
    golden_hdf5_unlock();
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return golden_fail_what(err, golden_code_from_errno(errno), path,
                                "cannot check the file in a child process: %s", strerror(errno));
    }
    int status = 0, how = CHILD_DONE;
    golden_error e;
    golden_error_clear(&e);
    int wrc = wait_child(pid, fds[0], got, &status, &how);
    close(fds[0]);
    if (wrc != 0)
        return golden_fail_what(err, GOLDEN_EINTERNAL, path, "lost the child process checking this file");
    if (how == CHILD_STALLED)
        return 1;
    if (how == CHILD_TOOBIG)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "the description of this file's metadata is over %llu MiB: it is "
                                "corrupt or hostile", LG_ISOLATED_MAX_BYTES >> 20);
#ifdef GOLDEN_ISOLATE_ASAN
    if (how == CHILD_KILLED)
        return 3; /* perhaps spinning on the sanitizer's lock (see below): once more */
#endif
    if (how == CHILD_KILLED)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "the HDF5 library ran over %d s reading this file's metadata: it is "
                                "corrupt or hostile", GOLDEN_PRECHECK_WALL_SECONDS);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
#ifdef GOLDEN_ISOLATE_ASAN
        /* The sanitizer's allocator has no fork handler: a child forked while another thread
         * held its spin lock spins on it until the CPU limit ends it. Try again (the caller
         * reports the CPU limit if every attempt ends so). */
        if (sig == SIGXCPU || sig == SIGKILL)
            return 2;
#endif
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "the HDF5 library %s reading this file's metadata: it is corrupt or "
                                "hostile", sig == SIGXCPU || sig == SIGKILL
                                               ? "ran over its CPU limit"
                                               : sig == SIGSEGV || sig == SIGBUS ? "crashed"
                                                                                 : "aborted");
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return GOLDEN_OK;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3 && got->n == sizeof e) {
        memcpy(&e, got->p, sizeof e);
        e.where[sizeof e.where - 1] = 0;
        e.what[sizeof e.what - 1] = 0;
        if (err)
            *err = e;
        return GOLDEN_ERR;
    }
    return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                            "the HDF5 library failed reading this file's metadata (exit %d): it is "
                            "corrupt or hostile", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

void lg_blob_put(lg_blob *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->cap - b->n < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n < n && cap < SIZE_MAX / 2)
            cap *= 2;
        unsigned char *p = cap - b->n >= n ? realloc(b->p, cap) : NULL;
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (data)
        memcpy(b->p + b->n, data, n);
    b->n += n;
}

void lg_blob_free(lg_blob *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

int lg_store_isolated_blob(const char *path, int (*fn)(void *ctx, lg_blob *out, golden_error *err),
                           void *ctx, lg_blob *out, golden_error *err)
{
    int cpu = 0, wall = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        lg_blob_free(out);
        int rc = isolated_once(path, fn, ctx, out, err);
        if (rc == GOLDEN_ERR)
            lg_blob_free(out);
        if (rc == 2)
            cpu++;
        else if (rc == 3)
            wall++;
        else if (rc != 1)
            return rc;
    }
    lg_blob_free(out);
    if (wall > 0)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "the HDF5 library ran over %d s reading this file's metadata: it is "
                                "corrupt or hostile", GOLDEN_PRECHECK_WALL_SECONDS);
    if (cpu > 0)
        return golden_fail_what(err, GOLDEN_ECORRUPT, path,
                                "the HDF5 library ran over its CPU limit reading this file's "
                                "metadata: it is corrupt or hostile");
    return golden_fail_what(err, GOLDEN_EINTERNAL, path,
                            "the child process checking this file stalled three times (not in "
                            "HDF5's parsing: it used no CPU)");
}

typedef struct {
    int (*fn)(void *ctx, golden_error *err);
    void *ctx;
} plain_call;

static int plain_adapter(void *ctx, lg_blob *out, golden_error *err)
{
    (void)out;
    plain_call *c = ctx;
    return c->fn(c->ctx, err);
}

int lg_store_isolated(const char *path, int (*fn)(void *ctx, golden_error *err), void *ctx,
                          golden_error *err)
{
    plain_call c = {fn, ctx};
    lg_blob b = {0};
    int rc = lg_store_isolated_blob(path, plain_adapter, &c, &b, err);
    lg_blob_free(&b);
    return rc;
}
