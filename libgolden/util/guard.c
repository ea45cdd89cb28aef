/* Turns a crash or a hang inside the HDF5 library (malformed metadata) into the contract's error
 * line and exit status 2, with no partial output left. The signal path is async-signal-safe.
 * This file is the one place where libgolden writes to stderr and exits, and only in a tool
 * that called lg_guard_install: a process that never installs the guard is never ended. */
#include "util/guard.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GUARD_TEMPS 32
#define GUARD_PATH 1024

static const char *guard_tool = "libgolden";
/* Per thread: a crash is blamed on HDF5 only when the crashing thread itself is inside HDF5
 * (SIGSEGV/SIGBUS are delivered to the faulting thread). initial-exec, so that reading it
 * from the signal handler never goes through the lazy (allocating) TLS path. */
static _Thread_local volatile sig_atomic_t in_hdf5_here __attribute__((tls_model("initial-exec")));
/* Process-wide, but written only by the thread holding the HDF5 lock (one at a time): the
 * watchdog looks at the section in progress, the crash path at its own thread's section.
 * Atomic (lock-free, so also safe in the signal path): the watchdog thread reads it while the
 * lock holder writes it. */
static atomic_int in_hdf5;
static char hdf5_file[GUARD_PATH];
static char temps[GUARD_TEMPS][GUARD_PATH];
static atomic_int temp_used[GUARD_TEMPS]; /* read by the signal path without the lock */
static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long long entered_ms; /* when the current HDF5 section began */
static _Atomic long long limit_ms = 120000; /* lg_guard_set_hdf5_timeout; tools pass
                                              * GOLDEN_HDF5_TIMEOUT */

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void put(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void die_in_hdf5(const char *what)
{
    for (int i = 0; i < GUARD_TEMPS; i++)
        if (atomic_load(&temp_used[i]))
            unlink(temps[i]);
    put(guard_tool);
    put(": ");
    put(hdf5_file[0] ? hdf5_file : "(an HDF5 file)");
    put(": the HDF5 library ");
    put(what);
    put(" reading this file: its metadata is corrupt or hostile\n");
    _exit(2);
}

static void on_crash(int sig)
{
    if (!in_hdf5_here) {
        signal(sig, SIG_DFL); /* our own bug: crash as usual, with a core and a signal */
        raise(sig);
        return;
    }
    die_in_hdf5("crashed");
}

/* No single HDF5 call of ours takes long (metadata, or a few MiB of data), so one that runs
 * for minutes is looping on hostile metadata. */
static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        sleep(1);
        long long t = atomic_load(&entered_ms);
        long long limit = atomic_load(&limit_ms);
        if (atomic_load(&in_hdf5) && t && now_ms() - t > limit) {
            char what[96];
            snprintf(what, sizeof what, "stopped responding (over %lld s)", limit / 1000);
            die_in_hdf5(what);
        }
    }
    return NULL;
}

void lg_guard_install(const char *tool)
{
    guard_tool = tool;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    pthread_t tid;
    if (pthread_create(&tid, NULL, watchdog, NULL) == 0)
        pthread_detach(tid);
}

void lg_guard_set_hdf5_timeout(long long seconds)
{
    if (seconds > 0 && seconds <= LLONG_MAX / 1000)
        atomic_store(&limit_ms, seconds * 1000);
}

/* Called with the HDF5 lock held, so one writer at a time. */
void lg_guard_enter_hdf5(const char *file)
{
    if (file) {
        size_t n = strlen(file);
        if (n >= GUARD_PATH)
            n = GUARD_PATH - 1;
        memcpy(hdf5_file, file, n);
        hdf5_file[n] = '\0';
    }
    if (!atomic_load(&in_hdf5))
        atomic_store(&entered_ms, now_ms());
    atomic_store(&in_hdf5, 1);
    in_hdf5_here = 1;
}

void lg_guard_leave_hdf5(void)
{
    in_hdf5_here = 0;
    atomic_store(&in_hdf5, 0);
    atomic_store(&entered_ms, 0);
}

void lg_guard_add_temp(const char *path)
{
    if (strlen(path) >= GUARD_PATH)
        return;
    pthread_mutex_lock(&temps_lock);
    for (int i = 0; i < GUARD_TEMPS; i++)
        if (!temp_used[i]) {
            strcpy(temps[i], path);
            temp_used[i] = 1;
            break;
        }
    pthread_mutex_unlock(&temps_lock);
}

void lg_guard_remove_temp(const char *path)
{
    pthread_mutex_lock(&temps_lock);
    for (int i = 0; i < GUARD_TEMPS; i++)
        if (temp_used[i] && strcmp(temps[i], path) == 0) {
            temp_used[i] = 0;
            break;
        }
    pthread_mutex_unlock(&temps_lock);
}

void lg_guard_unlink_temps(void)
{
    for (int i = 0; i < GUARD_TEMPS; i++)
        if (atomic_load(&temp_used[i]))
            unlink(temps[i]);
}
