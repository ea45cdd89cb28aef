/* Unit tests of the crash guard: in forked children, a crash is blamed on an HDF5 file only when
 * the crashing thread itself is inside HDF5, and the watchdog's timeout comes from the setter. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit_main.h"
#include "util/guard.h"

/* What a child did: exit status or signal, and its stderr. */
typedef struct {
    int exited, status, signaled, sig;
    char err[2048];
} child_result;

/* Run fn in a forked child with stderr going to a file; collect how it ended. */
static child_result run_child(void (*fn)(void))
{
    child_result r;
    memset(&r, 0, sizeof r);
    char path[] = "guard-stderr.XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        dup2(fd, STDERR_FILENO);
        fn();
        _exit(0);
    }
    int st;
    CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
    r.exited = WIFEXITED(st);
    r.status = r.exited ? WEXITSTATUS(st) : -1;
    r.signaled = WIFSIGNALED(st);
    r.sig = r.signaled ? WTERMSIG(st) : 0;
    ssize_t n = pread(fd, r.err, sizeof r.err - 1, 0);
    r.err[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return r;
}

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int inside;

/* A thread that enters a guarded HDF5 section and stays there. */
static void *sit_in_hdf5(void *arg)
{
    (void)arg;
    lg_guard_enter_hdf5("victim.h5");
    pthread_mutex_lock(&gate);
    inside = 1;
    pthread_cond_signal(&gate_cv);
    pthread_mutex_unlock(&gate);
    for (;;)
        pause();
    return NULL;
}

static void start_hdf5_thread(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, sit_in_hdf5, NULL) != 0)
        _exit(90);
    pthread_mutex_lock(&gate);
    while (!inside)
        pthread_cond_wait(&gate_cv, &gate);
    pthread_mutex_unlock(&gate);
}

/* A hashing or diff thread with a bug: it crashes outside HDF5. */
static void *crash_outside(void *arg)
{
    (void)arg;
    raise(SIGSEGV); /* delivered to this thread, as a fault would be */
    return NULL;
}

static void child_other_thread_crashes(void)
{
    lg_guard_install("guard-test");
    start_hdf5_thread();
    pthread_t t;
    if (pthread_create(&t, NULL, crash_outside, NULL) != 0)
        _exit(91);
    pthread_join(t, NULL);
    _exit(92); /* not reached: the crash ends the process */
}

/* The old process-wide flag turned this into "victim.h5: the HDF5 library crashed" and exit 2;
 * it is our own bug and must stay a crash. */
static void test_crash_outside_hdf5_is_a_crash(void)
{
    child_result r = run_child(child_other_thread_crashes);
    CU_ASSERT(r.signaled);
    CU_ASSERT_EQUAL(r.sig, SIGSEGV);
    CU_ASSERT_PTR_NULL(strstr(r.err, "HDF5"));
    CU_ASSERT_PTR_NULL(strstr(r.err, "victim.h5"));
}

static void *crash_inside(void *arg)
{
    (void)arg;
    lg_guard_enter_hdf5("hostile.h5");
    raise(SIGSEGV);
    return NULL;
}

static void child_hdf5_thread_crashes(void)
{
    lg_guard_install("guard-test");
    pthread_t t;
    if (pthread_create(&t, NULL, crash_inside, NULL) != 0)
        _exit(91);
    pthread_join(t, NULL);
    _exit(92);
}

/* A crash in the thread that is inside HDF5 is still the hostile file's fault: one line. */
static void test_crash_inside_hdf5_is_refused(void)
{
    child_result r = run_child(child_hdf5_thread_crashes);
    CU_ASSERT(r.exited);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_STRING_EQUAL(r.err, "guard-test: hostile.h5: the HDF5 library crashed reading "
                                  "this file: its metadata is corrupt or hostile\n");
}

static void child_crash_after_leaving(void)
{
    lg_guard_install("guard-test");
    lg_guard_enter_hdf5("done.h5");
    lg_guard_leave_hdf5();
    raise(SIGSEGV);
    _exit(92);
}

static void test_crash_after_leaving_is_a_crash(void)
{
    child_result r = run_child(child_crash_after_leaving);
    CU_ASSERT(r.signaled);
    CU_ASSERT_EQUAL(r.sig, SIGSEGV);
    CU_ASSERT_EQUAL(r.err[0], '\0');
}

static void child_hangs(void)
{
    lg_guard_set_hdf5_timeout(1);
    lg_guard_install("guard-test");
    FILE *f = fopen("guard-temp.out", "w");
    if (f)
        fclose(f);
    lg_guard_add_temp("guard-temp.out");
    lg_guard_enter_hdf5("loop.h5");
    sleep(20); /* the watchdog ends us after about 1-2 s */
    _exit(93);
}

/* The timeout comes from the setter (tools pass GOLDEN_HDF5_TIMEOUT), and a hang removes the
 * registered temporary output. */
static void test_timeout_setter(void)
{
    child_result r = run_child(child_hangs);
    CU_ASSERT(r.exited);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_STRING_EQUAL(r.err, "guard-test: loop.h5: the HDF5 library stopped responding "
                                  "(over 1 s) reading this file: its metadata is corrupt or "
                                  "hostile\n");
    CU_ASSERT_EQUAL(access("guard-temp.out", F_OK), -1);
    unlink("guard-temp.out");
}

int main(void)
{
    static const golden_test tests[] = {
        {"crash outside HDF5 while another thread is inside", test_crash_outside_hdf5_is_a_crash},
        {"crash inside HDF5 is refused", test_crash_inside_hdf5_is_refused},
        {"crash after leaving HDF5", test_crash_after_leaving_is_a_crash},
        {"timeout from the setter", test_timeout_setter},
        {0, 0}};
    return golden_test_run("guard", tests);
}
