/* A rank's scratch folders and their removal, also from a signal handler (scratch.h). */
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/guard.h"

#define SCRATCH_DIRS 4
#define SCRATCH_PATH 4096

static char dirs[SCRATCH_DIRS][SCRATCH_PATH];
static volatile sig_atomic_t used[SCRATCH_DIRS];
static volatile pid_t worker_pid;
static volatile sig_atomic_t disowned; /* a worker: the folders are its rank's */

struct linux_dirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Every entry of dir removed (files only: the folder holds no folders), then dir itself. Only
 * system calls: safe in a signal handler. */
static void remove_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096] __attribute__((aligned(8)));
    for (int pass = 0; pass < 64; pass++) { /* entries removed while reading: read again */
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long at = 0; at < n;) {
            struct linux_dirent64 *e = (struct linux_dirent64 *)(buf + at);
            const char *s = e->d_name;
            if (!(s[0] == '.' && (s[1] == '\0' || (s[1] == '.' && s[2] == '\0'))))
                unlinkat(fd, s, 0);
            at += e->d_reclen;
        }
    }
    close(fd);
    rmdir(dir);
}

void scratch_clean(void)
{
    if (disowned)
        return;
    for (int i = 0; i < SCRATCH_DIRS; i++)
        if (used[i]) {
            remove_dir(dirs[i]);
            used[i] = 0;
        }
}

void scratch_set_worker(pid_t pid)
{
    worker_pid = pid;
}

void scratch_disown(void)
{
    disowned = 1;
    worker_pid = 0;
}

void scratch_on_signal(void)
{
    if (disowned)
        return;
    int saved = errno;
    pid_t w = worker_pid;
    if (w > 0) { /* its files are in the folders: it must stop writing first */
        kill(w, SIGKILL);
        while (waitpid(w, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    for (int i = 0; i < SCRATCH_DIRS; i++)
        if (used[i])
            remove_dir(dirs[i]);
    errno = saved;
}

/* MPI_Init may have replaced the tools' handler (cli.c) that ran before it: this one does what
 * that one does, and the folders first. A signal ignored by whoever started us stays so. */
static void on_stop(int sig)
{
    scratch_on_signal();
    lg_guard_unlink_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* The absolute path as one line into golden-mpirun's list (best effort: a rank on a node
 * without that file relies on its own removal). */
static void tell_launcher(const char *dir)
{
    const char *list = getenv("GOLDEN_MPIRUN_SCRATCH");
    if (!list || !*list)
        return;
    char line[SCRATCH_PATH + 2], cwd[PATH_MAX];
    int n = dir[0] == '/' ? snprintf(line, sizeof line, "%s\n", dir)
            : getcwd(cwd, sizeof cwd) ? snprintf(line, sizeof line, "%s/%s\n", cwd, dir) : -1;
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    int fd = open(list, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) != n) { /* one write: the ranks' lines never interleave */
    }
    close(fd);
}

int scratch_make(const char *prefix, char **dir, golden_error *err)
{
    int slot = -1;
    for (int i = 0; slot < 0 && i < SCRATCH_DIRS; i++)
        if (!used[i])
            slot = i;
    if (slot < 0 || strlen(prefix) + 8 > SCRATCH_PATH)
        return golden_fail_what(err, GOLDEN_EINVAL, prefix, "too many or too long scratch "
                                "folder names");
    if (asprintf(dir, "%s.XXXXXX", prefix) < 0) {
        *dir = NULL;
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
    }
    install_handlers();
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old); /* made and registered, or neither */
    int e = mkdtemp(*dir) ? 0 : errno;
    if (!e) {
        strcpy(dirs[slot], *dir);
        used[slot] = 1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (e) {
        golden_fail_what(err, GOLDEN_EIO, *dir, "cannot make the rank's scratch folder: %s",
                         strerror(e));
        free(*dir);
        *dir = NULL;
        return -1;
    }
    tell_launcher(*dir);
    return 0;
}
