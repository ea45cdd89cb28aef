/* The harness's side of the backend host (host_priv.h): start the host (fork + exec of the tool's
 * hidden `__backend-host` command, a new session, no terminal, limits, output to a log file),
 * forward each call of the backend table to it under a deadline, check everything that comes
 * back, and turn a host that dies or misses a deadline into a failed call whose message says
 * so (`backend host crashed|exited|hung in CALL: ...`). The next call starts a fresh host and
 * opens the backend again, so a retest after reset runs where nothing of the dead one is left. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "replay/host_priv.h"

extern char **environ;

#define MAX_CALL_TAPS 512

typedef struct {
    /* how to start a host */
    char **argv, **envp;
    char *exe, log[4096];
    bool own_log;          /* the default log: removed when empty */
    bool filter;           /* the host runs under replay_host_filter */
    double timeout;
    uint64_t mem;
    volatile sig_atomic_t *stop;
    /* the live host */
    pid_t pid;
    int sock;
    unsigned char *map;
    replay_host_shm *shm;
    const unsigned char *data;
    bool dead, stopped;
    char last_death[REPLAY_HOST_MSG]; /* how the last host ended */
    /* what the harness was told, to check a restarted host against and to replay on it */
    char name[64];
    golden_backend_info info;
    bool have_info;
    unsigned abi, flags;   /* of the backend the first host opened */
    golden_backend_hooks hooks;
    bool have_hooks;
    /* the call under way */
    const char *op_name;
    uint64_t call_start;
    int64_t positions;      /* positions the call processes: the rows a tap may have */
    uint64_t mark_start[GOLDEN_BK_STAGE_COUNT];
    bool mark_open[GOLDEN_BK_STAGE_COUNT];
    char violation[512];    /* what the host did wrong in this call ("" = nothing) */
    /* issue 33: the optional calls, the cancel channel, the last step_batch's lane lengths */
    golden_backend_vtable_v2 table; /* the proxy's table with what the backend has */
    uint32_t opt;
    int csock;
    pthread_mutex_t cmu;    /* one cancel on the channel at a time */
    int *call_lanes;        /* the lanes of the call under way (cancelled at its deadline) */
    size_t n_call_lanes, call_lanes_cap;
    int64_t *lens;          /* [2 * num_lanes]: before, then after the last step_batch */
    bool have_lens;
    /* a stop (SIGINT/SIGTERM, or the soak's --duration cut at cut_at) during a call: with
     * cancel, the call's lanes are cancelled (REPLAY_STOP_GRACE_S at most) and the host lives
     * on to its normal close; otherwise it is killed. stop_handled: seen once, never again. */
    uint64_t cut_at;        /* CLOCK_MONOTONIC ns, 0 = none */
    bool stop_handled, in_cancel;
    int stop_call;          /* REPLAY_STOP_CALL_* */
    size_t stop_lanes;      /* the lanes cancelled at the stop */
    char stop_why[REPLAY_HOST_MSG]; /* a cancel at a stop that broke the protocol: which rule */
    int op;                 /* the call under way */
    struct { char name[96]; int64_t rows; } taps[MAX_CALL_TAPS];
    size_t n_taps;
} hostp;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char *dupf(const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, fmt, a, b);
    return s;
}

/* The host's environment: the harness's, with sanitizer options that let a crash be a crash
 * (a signal the harness sees, not a report and exit 1) and a plug-in's exit not a leak report. */
static char **host_env(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 2, sizeof *e);
    if (!e)
        return NULL;
    const char *old = getenv("ASAN_OPTIONS");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "ASAN_OPTIONS=", 13) != 0)
            e[k++] = environ[i];
    e[k] = dupf("ASAN_OPTIONS=%s%shandle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:"
                "detect_leaks=0:allow_user_segv_handler=1",
                old ? old : "", old && *old ? ":" : "");
    return e[k] ? e : (free(e), NULL);
}

static void host_kill(hostp *h)
{
    if (h->pid > 0) {
        kill(-h->pid, SIGKILL);
        kill(h->pid, SIGKILL);
        while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    h->pid = 0;
}

static void host_drop(hostp *h)
{
    if (h->sock >= 0)
        close(h->sock);
    h->sock = -1;
    if (h->csock >= 0)
        close(h->csock);
    h->csock = -1;
    if (h->map)
        munmap(h->map, REPLAY_HOST_DATA_OFF + REPLAY_HOST_DATA);
    h->map = NULL;
    h->shm = NULL;
    h->data = NULL;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child(hostp *h, int sock, int memfd, int logfd, int csock, pid_t parent)
{
    setsid(); /* no controlling terminal; the harness's Ctrl-C is not the host's, nor is a
               * signal the host sends its own process group (kill(0, ...)) the harness's */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    if (h->filter && replay_host_filter(getpid()) != 0) {
        static const char say[] = "npu-replay " REPLAY_HOST_CMD ": the kernel refused the "
                                  "system-call filter; the host runs without it\n";
        if (write(logfd, say, sizeof say - 1) < 0)
            _exit(127);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0 ||
        dup2(sock, REPLAY_HOST_SOCK_FD) < 0 || dup2(memfd, REPLAY_HOST_SHM_FD) < 0 ||
        dup2(csock, REPLAY_HOST_CANCEL_FD) < 0)
        _exit(127);
    /* no other descriptor of the harness (its open outputs) reaches the host */
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 6u, ~0u, 0) != 0)
#endif
        for (int fd = 6; fd < 65536; fd++)
            close(fd);
    struct rlimit core = {0, 0}, fsize = {REPLAY_HOST_LOG_MAX, REPLAY_HOST_LOG_MAX};
    setrlimit(RLIMIT_CORE, &core);
    setrlimit(RLIMIT_FSIZE, &fsize);
    if (h->mem) {
        struct rlimit as = {(rlim_t)h->mem, (rlim_t)h->mem};
        setrlimit(RLIMIT_AS, &as);
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        sigaction(s, &dfl, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(h->exe, h->argv, h->envp);
    _exit(127);
}

static int spawn(hostp *h, char *msg, size_t n)
{
    int sv[2] = {-1, -1}, cv[2] = {-1, -1};
    int memfd = -1, logfd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cv) != 0) {
        snprintf(msg, n, "backend host: cannot make the channel: %s", strerror(errno));
        for (int i = 0; i < 2; i++)
            if (sv[i] >= 0)
                close(sv[i]);
        return 1;
    }
    memfd = memfd_create("npu-replay-channel", MFD_CLOEXEC);
    size_t len = REPLAY_HOST_DATA_OFF + REPLAY_HOST_DATA;
    if (memfd < 0 || ftruncate(memfd, (off_t)len) != 0)
        goto fail;
    h->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (h->map == MAP_FAILED) {
        h->map = NULL;
        goto fail;
    }
    h->shm = (replay_host_shm *)(void *)h->map;
    h->data = h->map + REPLAY_HOST_DATA_OFF;
    logfd = open(h->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
    if (logfd < 0) {
        snprintf(msg, n, "backend host: %.900s: cannot open the log: %s", h->log, strerror(errno));
        goto fail_msg;
    }
    pid_t parent = getpid();
    h->pid = fork();
    if (h->pid < 0)
        goto fail;
    if (h->pid == 0)
        child(h, sv[1], memfd, logfd, cv[1], parent);
    close(sv[1]);
    close(cv[1]);
    h->csock = cv[0];
    close(memfd);
    close(logfd);
    h->sock = sv[0];
    h->dead = false;
    return 0;
fail:
    snprintf(msg, n, "backend host: cannot start: %s", strerror(errno));
fail_msg:
    h->pid = 0;
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close(sv[i]);
        if (cv[i] >= 0)
            close(cv[i]);
    }
    if (memfd >= 0)
        close(memfd);
    if (logfd >= 0)
        close(logfd);
    sv[0] = -1;
    h->sock = -1;
    h->csock = -1;
    host_drop(h);
    return 1;
}

/* The host went away or broke the protocol: reap it and say how, into msg. */
static int died(hostp *h, const char *how, char *msg, size_t n)
{
    int st = 0;
    pid_t r = 0;
    for (int i = 0; how == NULL && i < 2000 && (r = waitpid(h->pid, &st, WNOHANG)) == 0; i++)
        usleep(500); /* EOF first, exit status a moment later */
    if (r != h->pid) {
        host_kill(h);
        if (!how)
            how = "closed the channel";
        snprintf(msg, n, "backend host crashed in %s: %s; killed (its output: %.700s)", h->op_name,
                 how, h->log);
    } else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS && h->filter) {
        snprintf(msg, n, "backend host crashed in %s: signal %d (%s): it made a system call its "
                 "filter forbids (a signal to another process, ptrace) (its output: %.700s)",
                 h->op_name, SIGSYS, strsignal(SIGSYS), h->log);
    } else if (WIFSIGNALED(st)) {
        snprintf(msg, n, "backend host crashed in %s: signal %d (%s) (its output: %.700s)",
                 h->op_name, WTERMSIG(st), strsignal(WTERMSIG(st)), h->log);
    } else if (WEXITSTATUS(st) == REPLAY_HOST_BROKEN) {
        snprintf(msg, n, "backend host crashed in %s: it broke the channel (the backend closed or "
                 "replaced its descriptors; the host exited with status %d) (its output: %.700s)",
                 h->op_name, REPLAY_HOST_BROKEN, h->log);
    } else {
        snprintf(msg, n, "backend host exited in %s with status %d %s(its output: %.700s)",
                 h->op_name, WEXITSTATUS(st), WEXITSTATUS(st) == 0 ? "in the middle of the call, "
                 "a fault however clean the status " : "", h->log);
    }
    h->pid = 0;
    h->dead = true;
    host_drop(h);
    snprintf(h->last_death, sizeof h->last_death, "%.600s", msg);
    return 1;
}

enum { WAIT_OK, WAIT_DEAD, WAIT_HUNG, WAIT_STOP, WAIT_BAD, WAIT_SIGNALLED };

/* Whether the stop signal came from the host (or a process of its session): a handler that
 * knows the sender stores its pid in *stop (golden_backend_isolation). */
static bool stop_from_host(const hostp *h)
{
    if (!h->stop || !*h->stop || h->pid <= 0)
        return false;
    pid_t from = (pid_t)*h->stop;
    return from == h->pid || (from > 1 && getsid(from) == h->pid);
}

/* The host signalled the harness: a fault of the backend, not the user's interrupt. The stop
 * flag is cleared (the run goes on to its retest and its fault line), the host is killed. */
static int signalled(hostp *h, char *msg, size_t n)
{
    pid_t from = (pid_t)*h->stop;
    *h->stop = 0;
    host_kill(h);
    h->dead = true;
    host_drop(h);
    snprintf(msg, n, "backend host signalled the harness in %s: SIGINT or SIGTERM from pid %ld "
             "(the host or its session); killed (its output: %.700s)", h->op_name ? h->op_name :
             "a call", (long)from, h->log);
    snprintf(h->last_death, sizeof h->last_death, "%.600s", msg);
    return 1;
}

/* The user's stop, or the soak's duration cut, not yet dealt with. */
static bool stop_due(const hostp *h)
{
    if (h->stop_handled)
        return false;
    return (h->stop && *h->stop) || (h->cut_at && now_ns() >= h->cut_at);
}

static int wait_msg(hostp *h, uint64_t deadline, replay_host_msg *m)
{
    for (;;) {
        if (stop_from_host(h))
            return WAIT_SIGNALLED;
        if (stop_due(h))
            return WAIT_STOP;
        uint64_t t = now_ns();
        if (t >= deadline)
            return WAIT_HUNG;
        uint64_t until = h->cut_at && !h->stop_handled && h->cut_at < deadline ? h->cut_at
                                                                                 : deadline;
        uint64_t left_ms = until > t ? (until - t) / 1000000u + 1 : 1; /* the cut on time */
        struct pollfd p = {h->sock, POLLIN, 0};
        int r = poll(&p, 1, left_ms > 100 ? 100 : (int)left_ms);
        if (r < 0 && errno != EINTR)
            return WAIT_DEAD;
        if (r <= 0)
            continue;
        ssize_t got = recv(h->sock, m, sizeof *m, MSG_DONTWAIT);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            return WAIT_DEAD;
        return got == (ssize_t)sizeof *m ? WAIT_OK : WAIT_BAD;
    }
}

static void violate(hostp *h, const char *what)
{
    if (!h->violation[0])
        snprintf(h->violation, sizeof h->violation, "%s", what);
}

static void on_mark(hostp *h, const replay_host_msg *m)
{
    char why[200];
    uint64_t t = now_ns();
    if (m->a < 0 || m->a >= GOLDEN_BK_STAGE_COUNT || (m->b != 0 && m->b != 1)) {
        snprintf(why, sizeof why, "backend marked stage %d (%s %d), which does not exist", m->a,
                 "is_end", m->b);
        return violate(h, why);
    }
    if (m->ns < h->call_start || m->ns > t) {
        snprintf(why, sizeof why, "backend marked stage %d at a time outside the %s call", m->a,
                 h->op_name);
        return violate(h, why);
    }
    if (m->b == 1 && (!h->mark_open[m->a] || m->ns < h->mark_start[m->a])) {
        snprintf(why, sizeof why, "backend marked the end of stage %d before its start", m->a);
        return violate(h, why);
    }
    h->mark_open[m->a] = m->b == 0;
    h->mark_start[m->a] = m->ns;
    if (h->hooks.mark)
        h->hooks.mark(h->hooks.ctx, m->a, m->b, m->ns);
}

/* A tap chunk: checked against the call's positions, then given to the harness's hook. */
static int on_tap(hostp *h)
{
    char name[96], why[300];
    replay_host_shm s = *h->shm; /* one copy: the host cannot change it under the checks */
    replay_clean_text(name, sizeof name, s.tap_name, sizeof s.tap_name);
    if (strcmp(name, s.tap_name) != 0 || !name[0])
        return violate(h, "backend sent a tap with a malformed name"), 1;
    if ((s.tap_dtype != GOLDEN_BK_F32 && s.tap_dtype != GOLDEN_BK_I32) || s.tap_rows < 0 ||
        s.tap_cols < 1 || s.tap_cols > (int64_t)(REPLAY_HOST_DATA / 4) ||
        s.tap_rows > (int64_t)(REPLAY_HOST_DATA / 4) / s.tap_cols) {
        snprintf(why, sizeof why, "backend sent tap %s with an impossible shape", name);
        return violate(h, why), 1;
    }
    size_t i = 0;
    while (i < h->n_taps && strcmp(h->taps[i].name, name) != 0)
        i++;
    if (i == h->n_taps) {
        if (h->n_taps == MAX_CALL_TAPS)
            return violate(h, "backend sent more taps in one call than the harness keeps"), 1;
        snprintf(h->taps[h->n_taps++].name, sizeof h->taps[0].name, "%s", name);
        h->taps[i].rows = 0;
    }
    h->taps[i].rows += s.tap_rows;
    if (h->taps[i].rows > h->positions) {
        snprintf(why, sizeof why, "backend sent %lld rows of tap %s in a %s call of %lld "
                 "positions", (long long)h->taps[i].rows, name, h->op_name,
                 (long long)h->positions);
        return violate(h, why), 1;
    }
    if (!h->hooks.tap || !h->hooks.want_taps)
        return 0;
    /* the hook copies the rows; a private copy first, so the host cannot change them meanwhile */
    size_t bytes = (size_t)(s.tap_rows * s.tap_cols) * 4;
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy)
        return 1;
    memcpy(copy, h->data, bytes);
    int rc = h->hooks.tap(h->hooks.ctx, name, s.tap_layer, s.tap_dtype, s.tap_rows, s.tap_cols,
                          copy);
    free(copy);
    return rc;
}

static const char *op_names[REPLAY_OP_COUNT] = {
    "", "open", "info", "set_hooks", "prefill", "decode", "logits", "truncate", "reset", "length",
    "close", "decode_at", "prefill_keep", "logits_at", "topk", "sample", "step_batch"};

static int exchange_once(hostp *h, int op, double seconds, char *msg, size_t n);
static int on_stop(hostp *h, char *msg, size_t n);

/* One call: shm's arguments are filled; wait for its answer, serving taps and marks. Returns
 * the backend's own status (a status that would read as REPLAY_HOST_LOST becomes -1), or
 * REPLAY_HOST_LOST when the host was lost or broke a rule (msg is then the proxy's). */
static int exchange(hostp *h, int op, double seconds, char *msg, size_t n)
{
    int rc = exchange_once(h, op, seconds, msg, n);
    if (rc == -2)
        return REPLAY_HOST_LOST;
    return rc == REPLAY_HOST_LOST ? -1 : rc;
}

static int lost(int x)
{
    (void)x;
    return -2;
}

/* Serve the call's messages (taps, marks) until its answer: 0 at DONE; WAIT_HUNG when the
 * deadline passed (nothing done to the host yet); -2 when the host is lost (msg says how). */
static int serve(hostp *h, uint64_t deadline, char *msg, size_t n)
{
    replay_host_msg m;
    for (;;) {
        int w = wait_msg(h, deadline, &m);
        if (w == WAIT_SIGNALLED)
            return lost(signalled(h, msg, n));
        if (w == WAIT_STOP) {
            int s = on_stop(h, msg, n);
            if (s == 0)
                continue; /* no call of the workload under way (close): its answer is awaited */
            return s;
        }
        if (w == WAIT_HUNG)
            return WAIT_HUNG;
        if (w == WAIT_DEAD)
            return lost(died(h, NULL, msg, n));
        if (w == WAIT_BAD)
            return lost(died(h, "it broke the channel's protocol", msg, n));
        if (m.type == REPLAY_MSG_DONE)
            return 0;
        if (m.type == REPLAY_MSG_MARK) {
            on_mark(h, &m);
        } else if (m.type == REPLAY_MSG_TAP) {
            replay_host_msg ack = {REPLAY_MSG_TAP_ACK, 0, on_tap(h), 0, 0};
            if (send(h->sock, &ack, sizeof ack, MSG_NOSIGNAL) != (ssize_t)sizeof ack)
                return lost(died(h, NULL, msg, n));
        } else {
            return lost(died(h, "it broke the channel's protocol", msg, n));
        }
    }
}

/* One cancel over the second channel, its answer waited for until deadline. 0 with *rc and msg
 * the backend's, or 1 (the channel broke or no answer came: the host is to be given up). */
static int cancel_once(hostp *h, int lane, uint64_t deadline, int *rc, char *msg, size_t n)
{
    replay_host_cancel_msg c;
    memset(&c, 0, sizeof c);
    c.type = REPLAY_CANCEL_CALL;
    c.lane = lane;
    if (h->csock < 0 || send(h->csock, &c, sizeof c, MSG_NOSIGNAL) != (ssize_t)sizeof c)
        return snprintf(msg, n, "the cancel channel is closed"), 1;
    for (;;) {
        uint64_t t = now_ns();
        if (t >= deadline)
            return snprintf(msg, n, "no answer to cancel"), 1;
        uint64_t left = (deadline - t) / 1000000u + 1;
        struct pollfd p = {h->csock, POLLIN, 0};
        int r = poll(&p, 1, left > 100 ? 100 : (int)left);
        if (r < 0 && errno != EINTR)
            return snprintf(msg, n, "the cancel channel broke"), 1;
        if (r <= 0)
            continue;
        ssize_t got = recv(h->csock, &c, sizeof c, MSG_DONTWAIT);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got != (ssize_t)sizeof c || c.type != REPLAY_CANCEL_DONE || c.lane != lane)
            return snprintf(msg, n, "the cancel channel broke its protocol"), 1;
        *rc = c.rc;
        replay_clean_text(msg, n, c.msg, sizeof c.msg);
        return 0;
    }
}

/* Cancel the call's lanes and wait until grace seconds from now for the call's answer and every
 * cancel's. 0: all came (the host lives); 1: not in time, or the channel broke (the caller
 * kills the host); -2: the host was lost meanwhile (msg says how). The deadline cancel and the
 * stop's (on_stop) share it. */
static int cancel_lanes(hostp *h, const int *lanes, size_t n_lanes, double grace, char *msg,
                        size_t n)
{
    uint64_t until = now_ns() + (uint64_t)(grace * 1e9);
    h->in_cancel = true;
    pthread_mutex_lock(&h->cmu);
    /* the cancels go out first (each answered once its lane is idle), then the call's answer */
    replay_host_cancel_msg c;
    bool sent = true;
    for (size_t i = 0; i < n_lanes && sent; i++) {
        memset(&c, 0, sizeof c);
        c.type = REPLAY_CANCEL_CALL;
        c.lane = lanes[i];
        sent = h->csock >= 0 && send(h->csock, &c, sizeof c, MSG_NOSIGNAL) == (ssize_t)sizeof c;
    }
    char why[REPLAY_HOST_MSG];
    int r = sent ? serve(h, until, why, sizeof why) : 1;
    for (size_t i = 0; r == 0 && i < n_lanes; i++) { /* every cancel answered, in order */
        bool ok = false;
        while (!ok && now_ns() < until) {
            struct pollfd p = {h->csock, POLLIN, 0};
            if (poll(&p, 1, 100) <= 0)
                continue;
            ssize_t got = recv(h->csock, &c, sizeof c, MSG_DONTWAIT);
            if (got != (ssize_t)sizeof c || c.type != REPLAY_CANCEL_DONE || c.lane != lanes[i])
                break;
            ok = true;
        }
        if (!ok)
            r = 1;
    }
    pthread_mutex_unlock(&h->cmu);
    h->in_cancel = false;
    if (r == -2) { /* the host was lost meanwhile: that message */
        snprintf(msg, n, "%s", why);
        return -2;
    }
    return r != 0 ? 1 : 0;
}

/* The call missed its deadline and the backend has cancel: cancel its lanes and wait up to one
 * more deadline (at most 5 s) for its answer. 0: the call ended (msg says so, the host lives);
 * 1: it did not (the caller kills the host as before). */
static int cancel_at_deadline(hostp *h, const int *lanes, size_t n_lanes, double seconds,
                              char *msg, size_t n)
{
    int r = cancel_lanes(h, lanes, n_lanes, seconds < 5 ? seconds : 5, msg, n);
    if (r != 0)
        return r;
    char ln[64] = "";
    if (n_lanes == 1)
        snprintf(ln, sizeof ln, "lane %d", lanes[0]);
    else
        snprintf(ln, sizeof ln, "its %zu lanes", n_lanes);
    snprintf(msg, n, "backend call %s missed its deadline of %.3f s; cancelled, %s reset (the "
             "backend host lives on)", h->op_name, seconds, ln);
    return 0;
}


/* After a cancel at the deadline: every cancelled lane must be as after reset (length 0,
 * backend.h). One that still holds positions is a protocol violation: the host is killed and
 * msg says which lane held how many (a harness that went on would read a half-filled lane). */
static int cancelled_lanes_empty(hostp *h, double seconds, const char *why, char *msg, size_t n)
{
    int lanes[64];
    size_t k = h->n_call_lanes < 64 ? h->n_call_lanes : 64;
    memcpy(lanes, h->call_lanes, k * sizeof *lanes);
    const char *op = h->op_name;
    for (size_t i = 0; i < k; i++) {
        char m[REPLAY_HOST_MSG];
        h->shm->lane = lanes[i];
        h->positions = 0;
        int rc = exchange_once(h, REPLAY_OP_LENGTH, seconds, m, sizeof m);
        int64_t len = rc == 0 ? h->shm->value : -1;
        if (rc == 0 && len == 0)
            continue;
        if (rc == 0) {
            host_kill(h);
            h->dead = true;
            host_drop(h);
            if (why)
                snprintf(msg, n, "backend call %s cancelled %s; the backend answered the cancel "
                         "but lane %d still holds %lld positions (a cancelled lane must be empty): "
                         "protocol violation, backend host killed", op, why, lanes[i],
                         (long long)len);
            else
                snprintf(msg, n, "backend call %s missed its deadline of %.3f s; the backend "
                         "answered the cancel but lane %d still holds %lld positions (a cancelled "
                         "lane must be as after reset): protocol violation, backend host killed",
                         op, seconds, lanes[i], (long long)len);
            snprintf(h->last_death, sizeof h->last_death, "%.600s", msg);
        } else {
            snprintf(msg, n, "%s", m);
        }
        return -2;
    }
    h->op_name = op;
    return 0;
}

static bool lane_op(int op)
{
    return op == REPLAY_OP_PREFILL || op == REPLAY_OP_DECODE || op == REPLAY_OP_LOGITS ||
           op == REPLAY_OP_TRUNCATE || op == REPLAY_OP_RESET || op == REPLAY_OP_DECODE_AT ||
           op == REPLAY_OP_PREFILL_KEEP || op == REPLAY_OP_LOGITS_AT || op == REPLAY_OP_TOPK ||
           op == REPLAY_OP_STEP_BATCH;
}

/* A stop came (the user's SIGINT/SIGTERM, or the soak's --duration cut) while the harness waited
 * for the call under way. With cancel (a version 2 backend that has it): the call's lanes are
 * cancelled, the call and the cancels answered within REPLAY_STOP_GRACE_S, every cancelled lane
 * empty (the backend's length): the host lives on to its normal close (stop_call cancelled).
 * Anything else, and every backend without cancel: the host is killed at once (killed). A close
 * under way is no call of the workload: with cancel its answer is awaited (0), without the host
 * is killed as before. -2 otherwise: the call failed with "interrupted", later calls too. */
static int on_stop(hostp *h, char *msg, size_t n)
{
    h->stop_handled = true; /* once: the cancel, the length queries and the close go on */
    bool with_cancel = (h->opt & REPLAY_HOST_HAS_CANCEL) && !h->in_cancel;
    if (h->op == REPLAY_OP_CLOSE && with_cancel)
        return 0;
    if (with_cancel) {
        int lanes[64];
        size_t k = h->n_call_lanes < 64 ? h->n_call_lanes : 64;
        memcpy(lanes, h->call_lanes, k * sizeof *lanes);
        int op = h->op;
        const char *name = h->op_name;
        char why[REPLAY_HOST_MSG] = "";
        int c = cancel_lanes(h, lanes, k, REPLAY_STOP_GRACE_S, why, sizeof why);
        h->op_name = name;
        if (c == 0 && cancelled_lanes_empty(h, REPLAY_STOP_GRACE_S, "at a stop", why,
                                            sizeof why) == 0) {
            h->op = op;
            h->stopped = true;
            /* a call of no lane (open of a new host, info, length) ended on its own */
            h->stop_call = k ? REPLAY_STOP_CALL_CANCELLED : REPLAY_STOP_CALL_NONE;
            h->stop_lanes = k;
            return snprintf(msg, n, "interrupted"), -2;
        }
        h->op = op;
        if (h->op != REPLAY_OP_CLOSE) /* the cancel broke the protocol: say which rule */
            snprintf(h->stop_why, sizeof h->stop_why, "%s",
                     why[0] ? why : "the cancel was not answered: protocol violation");
    }
    if (h->op != REPLAY_OP_CLOSE)
        h->stop_call = REPLAY_STOP_CALL_KILLED;
    host_kill(h);
    h->dead = true;
    host_drop(h);
    h->stopped = true;
    return snprintf(msg, n, "interrupted"), -2;
}

static int exchange_once(hostp *h, int op, double seconds, char *msg, size_t n)
{
    h->op = op;
    h->op_name = op_names[op];
    h->call_start = now_ns();
    h->violation[0] = 0;
    h->n_taps = 0;
    memset(h->mark_open, 0, sizeof h->mark_open);
    h->shm->op = op;
    int lane = h->shm->lane; /* read before the host can touch the mapping */
    if (op != REPLAY_OP_STEP_BATCH)
        h->n_call_lanes = 0;
    if (op != REPLAY_OP_STEP_BATCH && lane_op(op) && lane >= 0 && h->call_lanes_cap > 0) {
        h->call_lanes[0] = lane;
        h->n_call_lanes = 1;
    }
    uint64_t deadline = h->call_start + (uint64_t)(seconds * 1e9);
    replay_host_msg m = {REPLAY_MSG_CALL, (uint32_t)op, 0, 0, 0};
    if (send(h->sock, &m, sizeof m, MSG_NOSIGNAL) != (ssize_t)sizeof m)
        return lost(died(h, NULL, msg, n));
    int w = serve(h, deadline, msg, n);
    if (w == WAIT_HUNG && (h->opt & REPLAY_HOST_HAS_CANCEL) && h->n_call_lanes > 0) {
        int c = cancel_at_deadline(h, h->call_lanes, h->n_call_lanes, seconds, msg, n);
        if (c == 0 && cancelled_lanes_empty(h, seconds, NULL, msg, n) != 0)
            return -2; /* a cancel that left a lane holding positions: the host is killed */
        if (c == 0)
            return GOLDEN_BK_E_TIMEOUT; /* the host lives on: the backend's own kind of failure */
        if (c == -2)
            return -2;
    }
    if (w == WAIT_HUNG) {
        host_kill(h);
        h->dead = true;
        host_drop(h);
        snprintf(msg, n, "backend host hung in %s: no answer within %.3f s; killed "
                 "(its output: %.700s)", h->op_name, seconds, h->log);
        snprintf(h->last_death, sizeof h->last_death, "%.600s", msg);
        return -2;
    }
    if (w != 0)
        return w;
    if (stop_from_host(h)) /* the signal came with the answer */
        return lost(signalled(h, msg, n));
    int rc = h->shm->rc;
    replay_clean_text(msg, n, h->shm->msg, sizeof h->shm->msg);
    if (h->violation[0]) {
        snprintf(msg, n, "%s", h->violation);
        return -2;
    }
    return rc == -2 ? -1 : rc;
}

static double deadline_of(const hostp *h, int op, uint64_t tokens)
{
    double t = h->timeout > 0 ? h->timeout : 60.0;
    if (op == REPLAY_OP_OPEN)
        return 10 * t;
    if (op == REPLAY_OP_PREFILL)
        return t * (1.0 + (double)tokens / 64.0);
    return t;
}

static int start_and_open(hostp *h, char *msg, size_t n, golden_error *err)
{
    if (spawn(h, msg, n) != 0)
        return 1;
    memset(h->shm, 0, sizeof *h->shm);
    if (exchange(h, REPLAY_OP_OPEN, deadline_of(h, REPLAY_OP_OPEN, 0), msg, n) != 0) {
        if (err && h->shm) { /* the host's own load error: where and code as in process */
            char where[256];
            replay_clean_text(where, sizeof where, h->shm->where, sizeof h->shm->where);
            int code = h->shm->code;
            golden_fail_what(err, code > 0 && code < 64 ? (golden_code)code : GOLDEN_EINVAL,
                             where[0] ? where : NULL, "%s", msg[0] ? msg : "backend open failed");
        }
        return 1;
    }
    char name[64];
    replay_clean_text(name, sizeof name, h->shm->name, sizeof h->shm->name);
    if (!h->name[0])
        snprintf(h->name, sizeof h->name, "%s", name[0] ? name : "backend");
    unsigned abi = h->shm->abi == 2 ? 2 : 1, flags = abi == 2 ? h->shm->flags : 0;
    uint32_t opt = abi == 2 ? h->shm->opt & (REPLAY_HOST_HAS_STEP_BATCH | REPLAY_HOST_HAS_CANCEL |
                                             REPLAY_HOST_HAS_SAMPLE)
                            : 0;
    if (h->abi && (abi != h->abi || flags != h->flags || opt != h->opt)) {
        host_kill(h);
        host_drop(h);
        h->dead = true;
        return snprintf(msg, n, "backend host started again reports another ABI version or "
                        "flags"), 1;
    }
    if (flags & ~(unsigned)GOLDEN_BK_LANES_CONCURRENT) {
        host_kill(h);
        host_drop(h);
        h->dead = true;
        return snprintf(msg, n, "backend's version 2 table has unknown flags 0x%x", flags), 1;
    }
    h->abi = abi;
    h->flags = flags;
    h->opt = opt;
    h->table = *replay_host_vtable();
    if (!(opt & REPLAY_HOST_HAS_STEP_BATCH))
        h->table.step_batch = NULL; /* GOLDEN_BACKEND_V2_HAS on the proxy tells the truth */
    if (!(opt & REPLAY_HOST_HAS_CANCEL))
        h->table.cancel = NULL;
    if (!(opt & REPLAY_HOST_HAS_SAMPLE))
        h->table.sample = NULL;
    return 0;
}

/* A fresh host in place of a dead one: the same backend opened again, the same info, the same
 * hooks. Only a reset of every lane starts one (restart): a fresh host holds nothing, which is
 * what the harness expects after that reset and after nothing else, so any other call after a
 * death fails and the check or request that made it ends on the fault. */
static int ensure_alive(hostp *h, bool restart, char *msg, size_t n)
{
    if (h->stopped)
        return snprintf(msg, n, "interrupted"), 1;
    if (!h->dead && stop_from_host(h)) /* sent after the last answer */
        return signalled(h, msg, n);
    if (!h->dead)
        return 0;
    if (!restart)
        return snprintf(msg, n, "the backend host is gone since an earlier call (%s); only a "
                        "reset of every lane starts a new one", h->last_death), 1;
    char why[REPLAY_HOST_MSG];
    if (start_and_open(h, why, sizeof why, NULL) != 0) {
        if (h->pid)
            host_kill(h);
        host_drop(h);
        h->dead = true;
        return snprintf(msg, n, "backend host could not be started again: %.900s", why), 1;
    }
    if (h->have_info) {
        golden_backend_info in;
        if (exchange(h, REPLAY_OP_INFO, deadline_of(h, REPLAY_OP_INFO, 0), why, sizeof why) != 0)
            return snprintf(msg, n, "backend host started again: info: %.900s", why), 1;
        in = h->shm->info;
        if (memcmp(&in, &h->info, sizeof in) != 0) {
            host_kill(h);
            host_drop(h);
            h->dead = true;
            return snprintf(msg, n, "backend host started again reports other model info"), 1;
        }
    }
    if (h->have_hooks) {
        h->shm->want_taps = h->hooks.want_taps != 0 && h->hooks.tap != NULL;
        if (exchange(h, REPLAY_OP_HOOKS, deadline_of(h, REPLAY_OP_HOOKS, 0), why, sizeof why))
            return snprintf(msg, n, "backend host started again: set_hooks: %.900s", why), 1;
    }
    return 0;
}

/* ---- the proxy table ---- */

static int px_open(const golden_backend_open_args *a, void **self, char *msg, size_t n)
{
    (void)a, (void)self;
    return snprintf(msg, n, "the proxy is opened by replay_host_start"), 1;
}

static void px_close(void *self)
{
    hostp *h = self;
    if (!h)
        return;
    if (h->pid > 0 && !h->dead && h->shm) {
        char msg[REPLAY_HOST_MSG];
        double saved = h->timeout;
        h->timeout = 2; /* a close that hangs is not waited for long */
        exchange(h, REPLAY_OP_CLOSE, 2, msg, sizeof msg);
        h->timeout = saved;
        if (h->pid > 0) { /* it exits after CLOSE; reaped here, it is not killed (or its pid) */
            int st;
            pid_t r = 0;
            for (int i = 0; i < 2000 && (r = waitpid(h->pid, &st, WNOHANG)) == 0; i++)
                usleep(500);
            if (r == h->pid)
                h->pid = 0;
            host_kill(h);
        }
    }
    host_kill(h);
    host_drop(h);
    if (h->own_log) {
        FILE *f = fopen(h->log, "r");
        bool empty = f && fgetc(f) == EOF;
        if (f)
            fclose(f);
        if (empty)
            unlink(h->log);
    }
    free(h->call_lanes);
    free(h->lens);
    pthread_mutex_destroy(&h->cmu);
    for (size_t i = 0; h->argv && h->argv[i]; i++)
        free(h->argv[i]);
    free(h->argv);
    if (h->envp) {
        size_t k = 0;
        while (h->envp[k])
            k++;
        free(h->envp[k - 1]); /* the one string host_env made */
    }
    free(h->envp);
    free(h->exe);
    free(h);
}

static int px_info(void *self, golden_backend_info *out, char *msg, size_t n)
{
    hostp *h = self;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    int rc = exchange(h, REPLAY_OP_INFO, deadline_of(h, REPLAY_OP_INFO, 0), msg, n);
    if (rc)
        return rc;
    *out = h->shm->info; /* one copy, then checked by the caller */
    h->info = *out;
    h->have_info = true;
    return 0;
}

static int px_hooks(void *self, const golden_backend_hooks *hk, char *msg, size_t n)
{
    hostp *h = self;
    if (hk)
        h->hooks = *hk;
    else
        memset(&h->hooks, 0, sizeof h->hooks);
    h->have_hooks = true;
    if (h->dead && !h->stopped)
        return 0; /* given to the next host when a reset starts it */
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->want_taps = h->hooks.want_taps != 0 && h->hooks.tap != NULL;
    return exchange(h, REPLAY_OP_HOOKS, deadline_of(h, REPLAY_OP_HOOKS, 0), msg, n);
}

static int px_prefill(void *self, int lane, int64_t pos, const int32_t *tokens, size_t count,
                      char *msg, size_t n)
{
    hostp *h = self;
    if (count > REPLAY_HOST_DATA / 4)
        return snprintf(msg, n, "prefill of %zu tokens is beyond the channel", count),
               REPLAY_HOST_LOST;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->shm->pos = pos;
    h->shm->n = count;
    memcpy((void *)h->data, tokens, count * sizeof *tokens);
    h->positions = (int64_t)count;
    return exchange(h, REPLAY_OP_PREFILL, deadline_of(h, REPLAY_OP_PREFILL, count), msg, n);
}

static int px_decode(void *self, int lane, int32_t token, char *msg, size_t n)
{
    hostp *h = self;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->shm->token = token;
    h->positions = 1;
    return exchange(h, REPLAY_OP_DECODE, deadline_of(h, REPLAY_OP_DECODE, 1), msg, n);
}

/* logits and logits_at: the same channel set-up, the entries copied out of the data region. */
static int logits_call(hostp *h, int op, int lane, int64_t pos, int first, int count, void *dst,
                       char *msg, size_t n)
{
    size_t esz = h->have_info && h->info.logits_dtype == GOLDEN_BK_BF16 ? 2 : 4;
    if (count < 0 || (size_t)count * esz > REPLAY_HOST_DATA)
        return snprintf(msg, n, "logits of %d entries are beyond the channel", count),
               REPLAY_HOST_LOST;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->shm->pos = pos;
    h->shm->first = first;
    h->shm->count = count;
    h->shm->length = (int64_t)esz;
    h->positions = 0;
    int rc = exchange(h, op, deadline_of(h, REPLAY_OP_LOGITS, 1), msg, n);
    if (rc)
        return rc;
    memcpy(dst, h->data, (size_t)count * esz);
    return 0;
}

static int px_logits(void *self, int lane, int first, int count, void *dst, char *msg, size_t n)
{
    return logits_call(self, REPLAY_OP_LOGITS, lane, 0, first, count, dst, msg, n);
}

static int px_truncate(void *self, int lane, int64_t length, char *msg, size_t n)
{
    hostp *h = self;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->shm->length = length;
    h->positions = 0;
    return exchange(h, REPLAY_OP_TRUNCATE, deadline_of(h, REPLAY_OP_TRUNCATE, 1), msg, n);
}

static int px_reset(void *self, int lane, char *msg, size_t n)
{
    hostp *h = self;
    if (ensure_alive(h, lane < 0, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->positions = 0;
    return exchange(h, REPLAY_OP_RESET, deadline_of(h, REPLAY_OP_RESET, 1), msg, n);
}

int replay_host_length(void *self, int lane, int64_t *len, char *msg, size_t n)
{
    hostp *h = self;
    *len = -1;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->positions = 0;
    int rc = exchange(h, REPLAY_OP_LENGTH, deadline_of(h, REPLAY_OP_LENGTH, 1), msg, n);
    if (rc)
        return rc;
    *len = h->shm->value;
    return 0;
}

static int64_t px_length(void *self, int lane)
{
    char msg[REPLAY_HOST_MSG];
    int64_t len;
    return replay_host_length(self, lane, &len, msg, sizeof msg) ? -1 : len;
}

/* ---- ABI version 2 through the host ---- */

static int px_decode_at(void *self, int lane, int64_t pos, int32_t token, int64_t *written,
                        char *msg, size_t n)
{
    hostp *h = self;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->shm->pos = pos;
    h->shm->token = token;
    h->positions = 1;
    int rc = exchange(h, REPLAY_OP_DECODE_AT, deadline_of(h, REPLAY_OP_DECODE_AT, 1), msg, n);
    *written = rc == REPLAY_HOST_LOST || !h->shm ? -1 : h->shm->value; /* one read, then compared */
    return rc;
}

static int px_prefill_keep(void *self, int lane, int64_t pos, const int32_t *tokens,
                           size_t count, const int64_t *keep, size_t n_keep, char *msg, size_t n)
{
    hostp *h = self;
    if (count > REPLAY_HOST_DATA / 8 || n_keep > GOLDEN_BK_MAX_KEEP)
        return snprintf(msg, n, "prefill of %zu tokens is beyond the channel", count),
               REPLAY_HOST_LOST;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->shm->pos = pos;
    h->shm->n = count;
    h->shm->n_keep = n_keep;
    memcpy((void *)h->data, tokens, count * sizeof *tokens);
    if (n_keep)
        memcpy((void *)(h->data + count * sizeof *tokens), keep, n_keep * sizeof *keep);
    h->positions = (int64_t)count;
    return exchange(h, REPLAY_OP_PREFILL_KEEP, deadline_of(h, REPLAY_OP_PREFILL, count), msg, n);
}

static int px_logits_at(void *self, int lane, int64_t pos, int first, int count, void *dst,
                        char *msg, size_t n)
{
    return logits_call(self, REPLAY_OP_LOGITS_AT, lane, pos, first, count, dst, msg, n);
}

static int px_topk(void *self, int lane, int k, float *values, int32_t *indices, char *msg,
                   size_t n)
{
    hostp *h = self;
    if (k < 1 || k > GOLDEN_BK_MAX_TOPK)
        return snprintf(msg, n, "top-k of %d entries is beyond the channel", k), REPLAY_HOST_LOST;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    h->shm->lane = lane;
    h->shm->count = k;
    h->positions = 0;
    int rc = exchange(h, REPLAY_OP_TOPK, deadline_of(h, REPLAY_OP_LOGITS, 1), msg, n);
    if (rc)
        return rc;
    memcpy(values, h->data, (size_t)k * sizeof *values);
    memcpy(indices, h->data + (size_t)k * sizeof *values, (size_t)k * sizeof *indices);
    return 0;
}

/* sample: the settings, the history and the seeds through the data region, the tokens back. */
static int px_sample(void *self, int lane, const golden_backend_sampling *s, int32_t *token,
                     char *msg, size_t n)
{
    hostp *h = self;
    size_t nd = s->n_draws > 1 ? s->n_draws : 1;
    token[0] = -1;
    if (nd > GOLDEN_BK_MAX_DRAWS ||
        s->n_history > (REPLAY_HOST_DATA - sizeof(replay_host_sample_args) -
                        GOLDEN_BK_MAX_DRAWS * sizeof(uint64_t)) / sizeof(int32_t))
        return snprintf(msg, n, "a sample call of %zu draws and %zu history tokens is beyond "
                        "the channel", nd, s->n_history), REPLAY_HOST_LOST;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    replay_host_sample_args a = {s->temp, s->top_p, s->min_p, s->repeat_penalty, s->top_k,
                                 s->repeat_last_n, s->seed, s->n_history, nd};
    unsigned char *d = (unsigned char *)(void *)h->data;
    memcpy(d, &a, sizeof a);
    if (s->n_history)
        memcpy(d + sizeof a, s->history, s->n_history * sizeof *s->history);
    if (nd > 1)
        memcpy(d + sizeof a + s->n_history * sizeof(int32_t), s->seeds, nd * sizeof *s->seeds);
    h->shm->lane = lane;
    h->positions = 0;
    int rc = exchange(h, REPLAY_OP_SAMPLE, deadline_of(h, REPLAY_OP_LOGITS, 1), msg, n);
    if (rc)
        return rc;
    memcpy(token, h->data, nd * sizeof *token); /* one copy, then checked by the caller */
    return 0;
}

/* ---- issue 33: step_batch on the channel, cancel on the second one ---- */

static int px_step_batch(void *self, golden_backend_step *steps, size_t n_steps, char *msg,
                         size_t n)
{
    hostp *h = self;
    h->have_lens = false;
    int lanes = h->have_info ? h->info.num_lanes : 0;
    uint64_t toks = 0;
    for (size_t i = 0; i < n_steps; i++)
        toks += steps[i].n;
    uint64_t head = (uint64_t)n_steps * sizeof(replay_host_step);
    uint64_t lens_off = (head + toks * 4 + 7) / 8 * 8;
    if (lanes < 1 || n_steps == 0 || n_steps > (size_t)lanes || toks > REPLAY_HOST_DATA / 4 ||
        lens_off + 16 * (uint64_t)lanes > REPLAY_HOST_DATA)
        return snprintf(msg, n, "step_batch of %zu steps and %llu tokens is beyond the channel",
                        n_steps, (unsigned long long)toks), REPLAY_HOST_LOST;
    if (ensure_alive(h, false, msg, n))
        return REPLAY_HOST_LOST;
    if (!h->lens && !(h->lens = malloc(2 * (size_t)lanes * sizeof *h->lens)))
        return snprintf(msg, n, "out of memory for the lane lengths"), REPLAY_HOST_LOST;
    if (n_steps > h->call_lanes_cap) {
        int *cl = realloc(h->call_lanes, n_steps * sizeof *cl);
        if (!cl)
            return snprintf(msg, n, "out of memory"), REPLAY_HOST_LOST;
        h->call_lanes = cl;
        h->call_lanes_cap = n_steps;
    }
    unsigned char *d = (unsigned char *)h->data;
    uint64_t off = head;
    for (size_t i = 0; i < n_steps; i++) {
        replay_host_step r = {steps[i].lane, steps[i].kind, steps[i].pos, steps[i].n, off, -1, 0,
                              -1};
        memcpy(d + i * sizeof r, &r, sizeof r);
        memcpy(d + off, steps[i].tokens, steps[i].n * 4);
        off += steps[i].n * 4;
        h->call_lanes[i] = steps[i].lane;
    }
    h->n_call_lanes = n_steps;
    h->shm->lane = -1;
    h->shm->n = n_steps;
    h->shm->count = lanes;
    h->shm->length = (int64_t)lens_off;
    h->positions = (int64_t)toks;
    double t = h->timeout > 0 ? h->timeout : 60.0;
    int rc = exchange(h, REPLAY_OP_STEP_BATCH, t * ((double)n_steps + (double)toks / 64.0), msg,
                      n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n_steps; i++) { /* one copy each, then checked by the caller */
        replay_host_step r;
        memcpy(&r, d + i * sizeof r, sizeof r);
        steps[i].status = r.status;
        steps[i].written = r.written;
    }
    memcpy(h->lens, d + lens_off, 2 * (size_t)lanes * sizeof *h->lens);
    h->have_lens = true;
    return 0;
}

/* From any thread, also while a call is under way on the main channel. */
static int px_cancel(void *self, int lane, char *msg, size_t n)
{
    hostp *h = self;
    if (!(h->opt & REPLAY_HOST_HAS_CANCEL))
        return snprintf(msg, n, "the backend has no cancel"), GOLDEN_BK_E_INVALID;
    if (h->dead || h->stopped || h->pid <= 0)
        return snprintf(msg, n, "the backend host is gone (%s)", h->last_death),
               REPLAY_HOST_LOST;
    double t = h->timeout > 0 ? h->timeout : 60.0;
    int rc = 0;
    pthread_mutex_lock(&h->cmu);
    int bad = cancel_once(h, lane, now_ns() + (uint64_t)(t * 1e9), &rc, msg, n);
    pthread_mutex_unlock(&h->cmu);
    if (bad) {
        char why[300];
        snprintf(why, sizeof why, "%s", msg);
        return snprintf(msg, n, "backend host: cancel of lane %d: %s", lane, why),
               REPLAY_HOST_LOST;
    }
    return rc == REPLAY_HOST_LOST ? -1 : rc;
}

static const golden_backend_vtable_v2 proxy = {
    {GOLDEN_BACKEND_ABI_VERSION, "host", px_open, px_close, px_info, px_hooks, px_prefill,
     px_decode, px_logits, px_truncate, px_reset, px_length},
    sizeof(golden_backend_vtable_v2), 0, px_decode_at, px_prefill_keep, px_logits_at, px_topk,
    px_step_batch, px_cancel, px_sample};

const golden_backend_vtable_v2 *replay_host_vtable(void) { return &proxy; }
const golden_backend_vtable_v2 *replay_host_table(const void *self)
{
    return &((const hostp *)self)->table;
}
void replay_host_batch_lengths(const void *self, const int64_t **before, const int64_t **after)
{
    const hostp *h = self;
    *before = h->have_lens ? h->lens : NULL;
    *after = h->have_lens ? h->lens + h->info.num_lanes : NULL;
}
unsigned replay_host_abi(const void *self, unsigned *flags)
{
    const hostp *h = self;
    *flags = h->flags;
    return h->abi;
}
void replay_host_set_cut(void *self, uint64_t at_ns) { ((hostp *)self)->cut_at = at_ns; }
int replay_host_stop_call(const void *self, size_t *lanes)
{
    const hostp *h = self;
    *lanes = h->stop_call == REPLAY_STOP_CALL_CANCELLED ? h->stop_lanes : 0;
    return h->stop_call;
}
const char *replay_host_stop_why(const void *self)
{
    const hostp *h = self;
    return h->stop_call == REPLAY_STOP_CALL_KILLED && h->stop_why[0] ? h->stop_why : NULL;
}
const char *replay_host_name(const void *self) { return ((const hostp *)self)->name; }
const char *replay_host_log(const void *self) { return ((const hostp *)self)->log; }

void replay_host_log_path(const golden_backend_isolation *iso, char *buf, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    if (iso->log)
        snprintf(buf, n, "%s", iso->log);
    else
        snprintf(buf, n, "%s/npu-replay-backend.%ld.log", tmp && *tmp ? tmp : "/tmp",
                 (long)getpid());
}

static int host_argv(hostp *h, const golden_backend_load_opts *o, golden_error *err)
{
    h->argv = calloc(o->n_opts + 7, sizeof *h->argv);
    if (!h->argv)
        return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    char threads[32];
    snprintf(threads, sizeof threads, "%d", o->threads);
    const char *fixed[] = {"npu-replay", REPLAY_HOST_CMD, o->spec ? o->spec : "cpu",
                           o->model_dir ? o->model_dir : "", threads};
    for (size_t i = 0; i < 5; i++)
        if (!(h->argv[i] = strdup(fixed[i])))
            return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    for (size_t i = 0; i < o->n_opts; i++) {
        const char *eq = strchr(o->opts[i], '=');
        if (!eq || eq == o->opts[i])
            return golden_fail_what(err, GOLDEN_EINVAL, "--backend-opt",
                                    "'%s' is not KEY=VALUE", o->opts[i]);
        if (!(h->argv[5 + i] = strdup(o->opts[i])))
            return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    }
    return 0;
}

int replay_host_start(const golden_backend_load_opts *o, const golden_backend_isolation *iso,
                      void **self, golden_error *err)
{
    *self = NULL;
    hostp *h = calloc(1, sizeof *h);
    if (!h)
        return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    h->sock = -1;
    h->csock = -1;
    pthread_mutex_init(&h->cmu, NULL);
    h->call_lanes = malloc(64 * sizeof *h->call_lanes);
    h->call_lanes_cap = h->call_lanes ? 64 : 0;
    h->timeout = iso->call_timeout;
    h->mem = iso->mem_limit;
    h->stop = iso->stop;
    replay_host_log_path(iso, h->log, sizeof h->log);
    h->own_log = !iso->log;
    const char *fenv = getenv(REPLAY_HOST_FILTER_ENV);
    h->filter = !(fenv && strcmp(fenv, "off") == 0);
    if (host_argv(h, o, err) != 0) {
        px_close(h);
        return GOLDEN_ERR;
    }
    h->exe = strdup(iso->host_exe ? iso->host_exe : "/proc/self/exe");
    h->envp = host_env();
    if (!h->exe || !h->envp) {
        px_close(h);
        return golden_fail_what(err, GOLDEN_ENOMEM, "backend", "out of memory");
    }
    char msg[REPLAY_HOST_MSG];
    golden_error_clear(err);
    if (start_and_open(h, msg, sizeof msg, err) != 0) {
        if (!err->what[0])
            golden_fail_what(err, GOLDEN_EINVAL, o->spec ? o->spec : "cpu", "%s", msg);
        px_close(h);
        return GOLDEN_ERR;
    }
    *self = h;
    return 0;
}
