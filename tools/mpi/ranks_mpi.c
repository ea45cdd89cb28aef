/* The ranks of an MPI job (make MPI=1 only; tools/common/ranks.c is the one-process build).
 * Each rank runs its share in a worker process it forks, so that a crash, a kill or the OOM
 * killer there ends as a report from its rank instead of a torn-down job; the rank then sends
 * the worker's bytes (or its error) to rank 0 with MPI. docs/scale.md. */
#include "../common/ranks.h"
#include "../common/scratch.h"

#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define TAG_HEAD 1
#define TAG_DATA 2
#define PIECE ((size_t)1 << 30) /* bytes per MPI message (counts are ints) */

static bool started, mpi_on;
static int my_rank, n_ranks = 1;

/* A launcher (mpirun, srun, another PMI/PMIx one) started this process. */
bool ranks_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK") ||
           getenv("PMI_SIZE");
}

int ranks_start(golden_error *err)
{
    if (started)
        return 0;
    started = true;
    if (!ranks_launched())
        return 0;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return golden_fail_what(err, GOLDEN_EIO, NULL, "MPI_Init failed: cannot join the job");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    mpi_on = true;
    return 0;
}

int ranks_size(void)
{
    return n_ranks;
}

int ranks_rank(void)
{
    return my_rank;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The worker: its share, then one record on the pipe ('R' length bytes, or 'E' error). */
static void worker(int fd, ranks_work work, void *ctx)
{
    void *buf = NULL;
    size_t len = 0;
    golden_error e;
    golden_error_clear(&e);
    int rc;
    if (work(ctx, &buf, &len, &e) == 0) {
        uint64_t n = len;
        rc = write_all(fd, "R", 1) || write_all(fd, &n, sizeof n) || write_all(fd, buf, len);
    } else {
        rc = write_all(fd, "E", 1) || write_all(fd, &e, sizeof e);
    }
    free(buf);
    _exit(rc ? 3 : 0);
}

/* Everything the worker wrote, until it closed the pipe. */
static int read_all(int fd, unsigned char **out, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    if (!b)
        return -1;
    for (;;) {
        if (n == cap) {
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return -1;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = b;
    *len = n;
    return 0;
}

/* The test hook GOLDEN_TEST_SIGKILL=R (a rank's worker) or R:rank (the rank's own process):
 * that one raises SIGKILL as its worker starts on its share (tests/e2e/mpi-*.sh; docs/scale.md).
 * 1 kill the worker, 2 kill the rank, 0 neither. */
static int test_kill(void)
{
    const char *v = getenv("GOLDEN_TEST_SIGKILL");
    char want[32];
    if (!v || !*v)
        return 0;
    snprintf(want, sizeof want, "%d", my_rank);
    size_t n = strlen(want);
    if (strncmp(v, want, n) != 0)
        return 0;
    return v[n] == '\0' ? 1 : strcmp(v + n, ":rank") == 0 ? 2 : 0;
}

/* Run this rank's share in a worker process: 0 with its bytes, or -1 with err (the worker's
 * own error, or how it died). */
static int run_worker(ranks_work work, void *ctx, void **buf, size_t *len, golden_error *err)
{
    int fd[2];
    if (pipe(fd) != 0)
        return golden_fail_what(err, GOLDEN_EIO, NULL, "cannot make a pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return golden_fail_what(err, GOLDEN_EIO, NULL, "cannot start a worker process: %s",
                                strerror(errno));
    }
    if (pid == 0) {
        close(fd[0]);
        /* the worker never outlives its rank (mpirun killing the rank kills it too) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        scratch_disown(); /* the rank removes the scratch folders, not its worker */
        if (getppid() != parent)
            _exit(3);
        if (test_kill() == 1)
            raise(SIGKILL);
        worker(fd[1], work, ctx);
    }
    close(fd[1]);
    scratch_set_worker(pid);
    if (test_kill() == 2)
        raise(SIGKILL);
    unsigned char *rec = NULL;
    size_t n = 0;
    int rrc = read_all(fd[0], &rec, &n);
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    scratch_set_worker(0);
    int rc = -1;
    if (rrc != 0)
        golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory reading the worker's result");
    else if (WIFSIGNALED(st))
        golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "its worker process %ld was killed by "
                         "signal %d (%s)", (long)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "its worker process %ld exited with "
                         "status %d", (long)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    else if (n == 1 + sizeof *err && rec[0] == 'E')
        memcpy(err, rec + 1, sizeof *err);
    else if (n >= 9 && rec[0] == 'R') {
        uint64_t want;
        memcpy(&want, rec + 1, sizeof want);
        if (want != n - 9) {
            golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "its worker's result is cut short");
        } else {
            memmove(rec, rec + 9, n - 9);
            *buf = rec;
            *len = n - 9;
            rec = NULL;
            rc = 0;
        }
    } else
        golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "its worker process ended without a result");
    free(rec);
    return rc;
}

static int send_bytes(const void *p, size_t n, int tag)
{
    const char *c = p;
    do {
        size_t k = n < PIECE ? n : PIECE;
        if (MPI_Send(c, (int)k, MPI_BYTE, 0, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
        c += k;
        n -= k;
    } while (n);
    return 0;
}

static int recv_bytes(void *p, size_t n, int from, int tag)
{
    char *c = p;
    do {
        size_t k = n < PIECE ? n : PIECE;
        if (MPI_Recv(c, (int)k, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS)
            return -1;
        c += k;
        n -= k;
    } while (n);
    return 0;
}

/* Rank k's report: 0 with its bytes, 1 with its error in *e, -1 when MPI failed. */
static int recv_report(int k, void **buf, size_t *len, golden_error *e)
{
    uint64_t head[2];
    if (MPI_Recv(head, 2, MPI_UINT64_T, k, TAG_HEAD, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return -1;
    if (head[0] != 0) {
        if (head[1] != sizeof *e)
            return -1;
        return recv_bytes(e, sizeof *e, k, TAG_DATA) ? -1 : 1;
    }
    if (head[1] > SIZE_MAX - 1)
        return -1;
    *buf = malloc(head[1] ? (size_t)head[1] : 1);
    *len = (size_t)head[1];
    if (!*buf)
        return -1;
    return recv_bytes(*buf, *len, k, TAG_DATA);
}

static void free_all(void **bufs, size_t n)
{
    for (size_t k = 0; bufs && k < n; k++)
        free(bufs[k]);
    free(bufs);
}

int ranks_gather(ranks_work work, void *ctx, char *const *doing, void ***bufs, size_t **lens,
                 golden_error *err)
{
    *bufs = NULL;
    *lens = NULL;
    size_t n = (size_t)n_ranks;
    if (!mpi_on || n == 1) { /* one process: as the normal build, no worker */
        void **b = calloc(1, sizeof *b);
        size_t *l = calloc(1, sizeof *l);
        if (!b || !l || work(ctx, &b[0], &l[0], err) != 0) {
            if (!b || !l)
                golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory");
            free(b);
            free(l);
            return -1;
        }
        *bufs = b;
        *lens = l;
        return 0;
    }
    void *mine = NULL;
    size_t mylen = 0;
    golden_error myerr;
    golden_error_clear(&myerr);
    int failed = run_worker(work, ctx, &mine, &mylen, &myerr);
    if (my_rank != 0) {
        uint64_t head[2] = {failed ? 1u : 0u, failed ? sizeof myerr : mylen};
        if (MPI_Send(head, 2, MPI_UINT64_T, 0, TAG_HEAD, MPI_COMM_WORLD) == MPI_SUCCESS)
            send_bytes(failed ? (void *)&myerr : mine, (size_t)head[1], TAG_DATA);
        free(mine);
        return 0;
    }
    void **b = calloc(n, sizeof *b);
    size_t *l = calloc(n, sizeof *l);
    golden_error *errs = calloc(n, sizeof *errs);
    int *state = calloc(n, sizeof *state); /* 0 bytes, 1 its error, -1 lost */
    if (!b || !l || !errs || !state) {
        free(mine);
        free(b);
        free(l);
        free(errs);
        free(state);
        return golden_fail_what(err, GOLDEN_ENOMEM, NULL, "out of memory gathering the ranks");
    }
    b[0] = mine;
    l[0] = mylen;
    state[0] = failed ? 1 : 0;
    errs[0] = myerr;
    for (size_t k = 1; k < n; k++)
        state[k] = recv_report((int)k, &b[k], &l[k], &errs[k]);
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        if (state[k] == 0)
            continue;
        rc = -1;
        if (state[k] < 0)
            golden_fail_what(err, GOLDEN_EIO, NULL, "rank %zu of %zu (%.300s): its report never "
                             "arrived (MPI failed)", k, n, doing ? doing[k] : "planning its share");
        else
            golden_fail_what(err, errs[k].code, errs[k].where[0] ? errs[k].where : NULL,
                             "rank %zu of %zu (%.300s): %.700s", k, n, doing ? doing[k] : "planning its share",
                             errs[k].what);
    }
    free(errs);
    free(state);
    if (rc == 0 && !doing) /* a caller that failed before its plan gathers only errors */
        rc = golden_fail_what(err, GOLDEN_EINTERNAL, NULL, "no share was planned");
    if (rc != 0) {
        free_all(b, n);
        free(l);
        return -1;
    }
    *bufs = b;
    *lens = l;
    return 0;
}

int ranks_finish(int status)
{
    if (!mpi_on) {
        scratch_clean();
        return status;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    scratch_clean(); /* rank 0 has merged: this rank's files go (scratch.h) */
    MPI_Finalize();
    mpi_on = false;
    /* Only rank 0 exits with the job's status. mpirun aborts the job when the first process
     * exits non-zero: a worker that exited 1 or 2 first would kill rank 0 before it flushed
     * its report or wrote its JUnit error case (cli_exit runs after this). */
    return my_rank == 0 ? status : 0;
}
