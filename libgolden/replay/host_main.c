/* The backend host: the process npu-replay starts to run a backend in (the tool re-executed as
 * `npu-replay __backend-host SPEC MODEL THREADS KEY=VALUE...`). It loads the backend, then
 * answers one call at a time from the channel on fds 3 and 4 (host_priv.h) until CLOSE or the
 * harness goes away. It writes no file: its stdout and stderr are the harness's log file. The
 * buffers the backend writes (messages, logits) end at a PROT_NONE guard page, so a write past
 * their end kills the host, which the harness reports as a crash. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "golden/parse.h"
#include "replay/host_priv.h"

typedef struct {
    int sock;
    replay_host_shm *shm;
    unsigned char *data;
    const golden_backend_vtable *vt;
    const golden_backend_vtable_v2 *vt2; /* NULL: a version 1 backend */
    void *self;
    char *msg;            /* REPLAY_HOST_MSG bytes, a guard page after them */
    unsigned char *out;   /* logits buffer: ends at a guard page */
    size_t out_bytes;
    unsigned char *out_map;
    size_t out_map_len;
} host;

static host H;

/* n bytes that end right before a PROT_NONE page. */
static void *guarded(size_t n, unsigned char **map, size_t *map_len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (n + page - 1) / page * page + page;
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    if (mprotect(m + len - page, page, PROT_NONE) != 0) {
        munmap(m, len);
        return NULL;
    }
    *map = m;
    *map_len = len;
    return m + len - page - n;
}

static int send_msg(const replay_host_msg *m)
{
    ssize_t n;
    do
        n = send(H.sock, m, sizeof *m, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof *m ? 0 : -1;
}

/* 0: a message; 1: end of file (the harness closed the channel); -1: the channel is broken. */
static int recv_msg(replay_host_msg *m)
{
    ssize_t n;
    do
        n = recv(H.sock, m, sizeof *m, 0);
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof *m ? 0 : n == 0 ? 1 : -1;
}

/* The tap hook the backend calls: chunks of whole rows through the data region, each answered. */
static int host_tap(void *ctx, const char *name, int layer, int dtype, int64_t rows, int64_t cols,
                    const void *data)
{
    (void)ctx;
    if (!name || rows < 0 || cols < 1 || cols > (int64_t)(REPLAY_HOST_DATA / 4) ||
        (dtype != GOLDEN_BK_F32 && dtype != GOLDEN_BK_I32))
        return 1;
    int64_t per = (int64_t)(REPLAY_HOST_DATA / 4) / cols, done = 0;
    do {
        int64_t r = rows - done < per ? rows - done : per;
        snprintf(H.shm->tap_name, sizeof H.shm->tap_name, "%s", name);
        H.shm->tap_layer = layer;
        H.shm->tap_dtype = dtype;
        H.shm->tap_rows = r;
        H.shm->tap_cols = cols;
        memcpy(H.data, (const unsigned char *)data + (size_t)(done * cols) * 4, (size_t)(r * cols) * 4);
        replay_host_msg m = {REPLAY_MSG_TAP, 0, 0, 0, 0};
        if (send_msg(&m) || recv_msg(&m) || m.type != REPLAY_MSG_TAP_ACK)
            _exit(REPLAY_HOST_BROKEN); /* mid-call: the channel broke (or the harness is gone) */
        if (m.a != 0)
            return 1;
        done += r;
    } while (done < rows);
    return 0;
}

static void host_mark(void *ctx, int stage, int is_end, uint64_t ns)
{
    (void)ctx;
    replay_host_msg m = {REPLAY_MSG_MARK, 0, stage, is_end, ns};
    if (send_msg(&m))
        _exit(REPLAY_HOST_BROKEN);
}

static int do_open(int argc, char **argv, replay_host_shm *s)
{
    golden_error err;
    golden_error_clear(&err);
    void *dl = NULL;
    if (replay_find_vtable(argv[1], &H.vt, &H.vt2, &dl, &err) != 0) {
        s->code = err.code;
        snprintf(s->where, sizeof s->where, "%.255s", err.where);
        snprintf(H.msg, REPLAY_HOST_MSG, "%s", err.what);
        return 1;
    }
    int64_t threads; /* written by the harness (host.c host_argv), parsed strictly all the same */
    if (golden_parse_int(argv[3], 0, 1 << 20, &threads) != GOLDEN_PARSE_OK)
        return snprintf(H.msg, REPLAY_HOST_MSG, "threads '%.60s' is not an integer from 0 to "
                        "1048576", argv[3]), 1;
    size_t n = (size_t)(argc - 4);
    const char **keys = calloc(n + 1, sizeof *keys), **vals = calloc(n + 1, sizeof *vals);
    char **own = calloc(n + 1, sizeof *own);
    if (!keys || !vals || !own)
        return snprintf(H.msg, REPLAY_HOST_MSG, "out of memory"), 1;
    for (size_t i = 0; i < n; i++) {
        own[i] = strdup(argv[4 + i]);
        char *eq = own[i] ? strchr(own[i], '=') : NULL;
        if (!eq)
            return snprintf(H.msg, REPLAY_HOST_MSG, "out of memory"), 1;
        *eq = 0;
        keys[i] = own[i];
        vals[i] = eq + 1;
    }
    golden_backend_open_args args = {H.vt->abi_version, argv[2][0] ? argv[2] : NULL, n,
                                     keys, vals, (int)threads};
    s->abi = H.vt2 ? 2 : 1;
    s->flags = H.vt2 ? H.vt2->flags : 0;
    s->opt = (H.vt2 && GOLDEN_BACKEND_V2_HAS(H.vt2, step_batch) ? REPLAY_HOST_HAS_STEP_BATCH : 0) |
             (H.vt2 && GOLDEN_BACKEND_V2_HAS(H.vt2, cancel) ? REPLAY_HOST_HAS_CANCEL : 0) |
             (H.vt2 && GOLDEN_BACKEND_V2_HAS(H.vt2, sample) ? REPLAY_HOST_HAS_SAMPLE : 0);
    snprintf(s->name, sizeof s->name, "%s", H.vt->name ? H.vt->name : "backend");
    int rc = H.vt->open(&args, &H.self, H.msg, REPLAY_HOST_MSG);
    if (rc == 0 && !H.self)
        H.self = &H; /* a backend may keep no state; never call it with NULL by mistake */
    /* the options stay allocated: a backend may keep pointers to them */
    s->code = GOLDEN_EINVAL;
    snprintf(s->where, sizeof s->where, "%.255s", dl ? argv[1] : "");
    return rc;
}

static int do_logits(replay_host_shm *s)
{
    size_t esz = s->length == 2 ? 2 : 4; /* the harness says the entry size of info */
    if (s->count < 0 || (size_t)s->count * esz > REPLAY_HOST_DATA)
        return snprintf(H.msg, REPLAY_HOST_MSG, "logits count %d beyond the channel", s->count), 1;
    size_t bytes = (size_t)s->count * esz;
    if (bytes != H.out_bytes || !H.out) {
        if (H.out_map)
            munmap(H.out_map, H.out_map_len);
        H.out_map = NULL;
        H.out = guarded(bytes, &H.out_map, &H.out_map_len);
        H.out_bytes = bytes;
        if (!H.out)
            return snprintf(H.msg, REPLAY_HOST_MSG, "out of memory for the logits"), 1;
    }
    int rc = H.vt->logits(H.self, s->lane, s->first, s->count, H.out, H.msg, REPLAY_HOST_MSG);
    if (rc == 0)
        memcpy(H.data, H.out, bytes);
    return rc;
}

/* prefill_keep: tokens and kept positions leave the channel first (taps reuse it). */
static int do_prefill_keep(replay_host_shm *s)
{
    if (s->n > REPLAY_HOST_DATA / 8 || s->n_keep > GOLDEN_BK_MAX_KEEP)
        return snprintf(H.msg, REPLAY_HOST_MSG, "prefill beyond the channel"), GOLDEN_BK_E_INVALID;
    size_t n = (size_t)s->n, nk = (size_t)s->n_keep;
    int32_t *tokens = malloc(n ? n * sizeof *tokens : 1);
    int64_t *keep = malloc(nk ? nk * sizeof *keep : 1);
    int rc = GOLDEN_BK_E_NOMEM;
    if (!tokens || !keep) {
        snprintf(H.msg, REPLAY_HOST_MSG, "out of memory for the tokens");
    } else {
        memcpy(tokens, H.data, n * sizeof *tokens);
        memcpy(keep, H.data + n * sizeof *tokens, nk * sizeof *keep);
        rc = H.vt2->prefill_keep(H.self, s->lane, s->pos, tokens, n, keep, nk, H.msg,
                                 REPLAY_HOST_MSG);
    }
    free(tokens);
    free(keep);
    return rc;
}

/* logits_at and topk write into a buffer that ends at a guard page, then into the channel. */
static int out_buffer(size_t bytes)
{
    if (bytes == H.out_bytes && H.out)
        return 0;
    if (H.out_map)
        munmap(H.out_map, H.out_map_len);
    H.out_map = NULL;
    H.out = guarded(bytes, &H.out_map, &H.out_map_len);
    H.out_bytes = bytes;
    if (!H.out)
        return snprintf(H.msg, REPLAY_HOST_MSG, "out of memory for the output"), GOLDEN_BK_E_NOMEM;
    return 0;
}

static int do_v2(replay_host_shm *s)
{
    if (!H.vt2)
        return snprintf(H.msg, REPLAY_HOST_MSG, "the backend is of ABI version 1"),
               GOLDEN_BK_E_INVALID;
    if (s->op == REPLAY_OP_DECODE_AT) {
        int64_t written = -1;
        int rc = H.vt2->decode_at(H.self, s->lane, s->pos, s->token, &written, H.msg,
                                  REPLAY_HOST_MSG);
        s->value = written;
        return rc;
    }
    if (s->op == REPLAY_OP_PREFILL_KEEP)
        return do_prefill_keep(s);
    if (s->op == REPLAY_OP_LOGITS_AT) {
        size_t esz = s->length == 2 ? 2 : 4;
        if (s->count < 0 || (size_t)s->count * esz > REPLAY_HOST_DATA)
            return snprintf(H.msg, REPLAY_HOST_MSG, "logits count %d beyond the channel",
                            s->count), GOLDEN_BK_E_INVALID;
        size_t bytes = (size_t)s->count * esz;
        int rc = out_buffer(bytes);
        if (rc == 0)
            rc = H.vt2->logits_at(H.self, s->lane, s->pos, s->first, s->count, H.out, H.msg,
                                  REPLAY_HOST_MSG);
        if (rc == 0)
            memcpy(H.data, H.out, bytes);
        return rc;
    }
    /* REPLAY_OP_TOPK: values then indices, each in a guarded buffer */
    if (s->count < 1 || s->count > GOLDEN_BK_MAX_TOPK)
        return snprintf(H.msg, REPLAY_HOST_MSG, "top-k of %d beyond the channel", s->count),
               GOLDEN_BK_E_INVALID;
    size_t k = (size_t)s->count;
    unsigned char *imap;
    size_t imap_len;
    int32_t *idx = guarded(k * sizeof *idx, &imap, &imap_len);
    int rc = idx ? out_buffer(k * sizeof(float)) : GOLDEN_BK_E_NOMEM;
    if (!idx)
        snprintf(H.msg, REPLAY_HOST_MSG, "out of memory for the output");
    if (rc == 0)
        rc = H.vt2->topk(H.self, s->lane, s->count, (float *)(void *)H.out, idx, H.msg,
                         REPLAY_HOST_MSG);
    if (rc == 0) {
        memcpy(H.data, H.out, k * sizeof(float));
        memcpy(H.data + k * sizeof(float), idx, k * sizeof *idx);
    }
    if (idx)
        munmap(imap, imap_len);
    return rc;
}

/* sample: the settings, the history and the seeds leave the channel first; the tokens through
 * a guarded buffer (a backend that writes past it kills the host). */
static int do_sample(replay_host_shm *s)
{
    if (!H.vt2 || !GOLDEN_BACKEND_V2_HAS(H.vt2, sample))
        return snprintf(H.msg, REPLAY_HOST_MSG, "the backend has no sample call"),
               GOLDEN_BK_E_INVALID;
    replay_host_sample_args a;
    memcpy(&a, H.data, sizeof a);
    size_t nd = a.n_draws > 1 ? (size_t)a.n_draws : 1;
    if (a.n_draws > GOLDEN_BK_MAX_DRAWS ||
        a.n_history > (REPLAY_HOST_DATA - sizeof a - GOLDEN_BK_MAX_DRAWS * sizeof(uint64_t)) /
                          sizeof(int32_t))
        return snprintf(H.msg, REPLAY_HOST_MSG, "sample call beyond the channel"),
               GOLDEN_BK_E_INVALID;
    size_t nh = (size_t)a.n_history;
    int32_t *hist = malloc(nh ? nh * sizeof *hist : 1);
    uint64_t *seeds = malloc(nd * sizeof *seeds);
    unsigned char *tmap = NULL;
    size_t tmap_len;
    int32_t *tok = guarded(nd * sizeof *tok, &tmap, &tmap_len);
    int rc = GOLDEN_BK_E_NOMEM;
    if (!hist || !seeds || !tok) {
        snprintf(H.msg, REPLAY_HOST_MSG, "out of memory for the sample call");
    } else {
        memcpy(hist, H.data + sizeof a, nh * sizeof *hist);
        if (nd > 1)
            memcpy(seeds, H.data + sizeof a + nh * sizeof *hist, nd * sizeof *seeds);
        golden_backend_sampling gs = {a.temp, a.top_k, a.top_p, a.min_p, a.repeat_penalty,
                                      a.repeat_last_n, hist, nh, a.seed, nd > 1 ? nd : 0,
                                      nd > 1 ? seeds : NULL};
        for (size_t i = 0; i < nd; i++)
            tok[i] = -1;
        rc = H.vt2->sample(H.self, s->lane, &gs, tok, H.msg, REPLAY_HOST_MSG);
        if (rc == 0)
            memcpy(H.data, tok, nd * sizeof *tok);
    }
    free(hist);
    free(seeds);
    if (tok)
        munmap(tmap, tmap_len);
    return rc;
}

/* step_batch: the steps and their tokens leave the channel first (taps reuse it); the lengths
 * of every lane are read around the call for the harness's check (host_priv.h). */
static int do_step_batch(replay_host_shm *s)
{
    if (!H.vt2 || !GOLDEN_BACKEND_V2_HAS(H.vt2, step_batch))
        return snprintf(H.msg, REPLAY_HOST_MSG, "the backend has no step_batch"),
               GOLDEN_BK_E_INVALID;
    uint64_t ns = s->n, head = ns * sizeof(replay_host_step);
    int lanes = s->count;
    uint64_t lens_off = (uint64_t)s->length;
    if (ns == 0 || ns > (1u << 16) || lanes < 1 || lanes > (1 << 16) || head > REPLAY_HOST_DATA ||
        lens_off % 8 || lens_off > REPLAY_HOST_DATA - 16 * (uint64_t)lanes)
        return snprintf(H.msg, REPLAY_HOST_MSG, "step_batch beyond the channel"),
               GOLDEN_BK_E_INVALID;
    replay_host_step *rec = malloc(head);
    golden_backend_step *st = calloc(ns, sizeof *st);
    int32_t **tok = calloc(ns, sizeof *tok);
    int64_t *lens = malloc(16 * (size_t)lanes);
    int rc = 0;
    if (!rec || !st || !tok || !lens)
        rc = GOLDEN_BK_E_NOMEM;
    if (rc == 0)
        memcpy(rec, H.data, head);
    for (uint64_t i = 0; rc == 0 && i < ns; i++) {
        if (rec[i].n > REPLAY_HOST_DATA / 4 || rec[i].tok_off > REPLAY_HOST_DATA - rec[i].n * 4) {
            rc = GOLDEN_BK_E_INVALID;
            break;
        }
        tok[i] = malloc(rec[i].n ? rec[i].n * 4 : 4);
        if (!tok[i]) {
            rc = GOLDEN_BK_E_NOMEM;
            break;
        }
        memcpy(tok[i], H.data + rec[i].tok_off, rec[i].n * 4);
        st[i] = (golden_backend_step){rec[i].lane, rec[i].kind, rec[i].pos, tok[i],
                                      (size_t)rec[i].n, -1, -1};
    }
    if (rc) {
        snprintf(H.msg, REPLAY_HOST_MSG, "step_batch: %s", rc == GOLDEN_BK_E_NOMEM ?
                 "out of memory" : "a step beyond the channel");
    } else {
        for (int L = 0; L < lanes; L++)
            lens[L] = H.vt->length(H.self, L);
        rc = H.vt2->step_batch(H.self, st, (size_t)ns, H.msg, REPLAY_HOST_MSG);
        for (int L = 0; L < lanes; L++)
            lens[lanes + L] = H.vt->length(H.self, L);
        for (uint64_t i = 0; i < ns; i++) {
            rec[i].status = st[i].status;
            rec[i].written = st[i].written;
        }
        memcpy(H.data, rec, head);
        memcpy(H.data + lens_off, lens, 16 * (size_t)lanes);
    }
    for (uint64_t i = 0; tok && i < ns; i++)
        free(tok[i]);
    free(tok);
    free(st);
    free(rec);
    free(lens);
    return rc;
}

/* The cancel channel's thread (fd 5): one cancel at a time, each answered. It ends when the
 * harness closes the channel. */
static void *cancel_thread(void *arg)
{
    (void)arg;
    for (;;) {
        replay_host_cancel_msg c;
        ssize_t got;
        do
            got = recv(REPLAY_HOST_CANCEL_FD, &c, sizeof c, 0);
        while (got < 0 && errno == EINTR);
        if (got != (ssize_t)sizeof c || c.type != REPLAY_CANCEL_CALL)
            return NULL;
        char msg[256] = "";
        int lane = c.lane;
        int rc = H.vt2->cancel(H.self, lane, msg, sizeof msg);
        memset(&c, 0, sizeof c);
        c.type = REPLAY_CANCEL_DONE;
        c.lane = lane;
        c.rc = rc;
        memcpy(c.msg, msg, strnlen(msg, sizeof msg - 1));
        ssize_t put;
        do
            put = send(REPLAY_HOST_CANCEL_FD, &c, sizeof c, MSG_NOSIGNAL);
        while (put < 0 && errno == EINTR);
        if (put != (ssize_t)sizeof c)
            return NULL;
    }
}

static void start_cancel_thread(void)
{
    static bool started;
    if (started || !H.vt2 || !GOLDEN_BACKEND_V2_HAS(H.vt2, cancel) || !H.self)
        return;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &a, cancel_thread, NULL) == 0;
    pthread_attr_destroy(&a);
}

static int do_call(int argc, char **argv, replay_host_shm *s)
{
    golden_backend_hooks h = {NULL, host_tap, host_mark, s->want_taps};
    switch (s->op) {
    case REPLAY_OP_OPEN: {
        int rc = do_open(argc, argv, s);
        if (rc == 0)
            start_cancel_thread(); /* before the answer: a cancel may follow at once */
        return rc;
    }
    case REPLAY_OP_STEP_BATCH: return do_step_batch(s);
    case REPLAY_OP_INFO: return H.vt->info(H.self, &s->info, H.msg, REPLAY_HOST_MSG);
    case REPLAY_OP_HOOKS: return H.vt->set_hooks(H.self, &h, H.msg, REPLAY_HOST_MSG);
    case REPLAY_OP_PREFILL:
        if (s->n > REPLAY_HOST_DATA / 4)
            return snprintf(H.msg, REPLAY_HOST_MSG, "prefill beyond the channel"), 1;
    {
        /* the tokens leave the channel first: taps sent back during the call reuse it, and a
         * backend that reads its tokens as it goes (chunk=1) would read tap data */
        size_t bytes = (size_t)s->n * sizeof(int32_t);
        int32_t *tokens = malloc(bytes ? bytes : 1);
        if (!tokens)
            return snprintf(H.msg, REPLAY_HOST_MSG, "out of memory for the tokens"), 1;
        memcpy(tokens, H.data, bytes);
        int rc = H.vt->prefill(H.self, s->lane, s->pos, tokens, (size_t)s->n, H.msg,
                               REPLAY_HOST_MSG);
        free(tokens);
        return rc;
    }
    case REPLAY_OP_DECODE: return H.vt->decode(H.self, s->lane, s->token, H.msg, REPLAY_HOST_MSG);
    case REPLAY_OP_LOGITS: return do_logits(s);
    case REPLAY_OP_TRUNCATE:
        return H.vt->truncate(H.self, s->lane, s->length, H.msg, REPLAY_HOST_MSG);
    case REPLAY_OP_RESET: return H.vt->reset(H.self, s->lane, H.msg, REPLAY_HOST_MSG);
    case REPLAY_OP_LENGTH: s->value = H.vt->length(H.self, s->lane); return 0;
    case REPLAY_OP_DECODE_AT:
    case REPLAY_OP_PREFILL_KEEP:
    case REPLAY_OP_LOGITS_AT:
    case REPLAY_OP_TOPK: return do_v2(s);
    case REPLAY_OP_SAMPLE: return do_sample(s);
    case REPLAY_OP_CLOSE:
        if (H.vt && H.self && H.self != &H)
            H.vt->close(H.self);
        H.self = NULL;
        return 0;
    default: return snprintf(H.msg, REPLAY_HOST_MSG, "unknown call %d", s->op), 1;
    }
}

int replay_host_main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[0], REPLAY_HOST_CMD) != 0) {
        fprintf(stderr, "npu-replay: " REPLAY_HOST_CMD " is started by npu-replay itself\n");
        return 2;
    }
    H.sock = REPLAY_HOST_SOCK_FD;
    size_t len = REPLAY_HOST_DATA_OFF + REPLAY_HOST_DATA;
    unsigned char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, REPLAY_HOST_SHM_FD, 0);
    unsigned char *msg_map;
    size_t msg_len;
    H.msg = guarded(REPLAY_HOST_MSG, &msg_map, &msg_len);
    if (map == MAP_FAILED || !H.msg) {
        fprintf(stderr, "npu-replay " REPLAY_HOST_CMD ": cannot map the channel\n");
        return 2;
    }
    close(REPLAY_HOST_SHM_FD);
    H.shm = (replay_host_shm *)(void *)map;
    H.data = map + REPLAY_HOST_DATA_OFF;
    for (;;) {
        replay_host_msg m;
        int got = recv_msg(&m);
        if (got == 1)
            return 0; /* the harness closed the channel */
        if (got != 0 || m.type != REPLAY_MSG_CALL)
            _exit(REPLAY_HOST_BROKEN);
        replay_host_shm *s = H.shm;
        int op = s->op;
        if (op != REPLAY_OP_OPEN && !H.vt) {
            s->rc = 1;
            snprintf(s->msg, sizeof s->msg, "backend not open");
        } else {
            memset(H.msg, 0, REPLAY_HOST_MSG);
            s->rc = do_call(argc, argv, s);
            /* bounded: the backend may not have terminated its message */
            size_t n = strnlen(H.msg, REPLAY_HOST_MSG - 1);
            memcpy(s->msg, H.msg, n);
            s->msg[n] = 0;
        }
        replay_host_msg d = {REPLAY_MSG_DONE, (uint32_t)op, 0, 0, 0};
        if (send_msg(&d) != 0) /* the backend closed or replaced the channel's fds */
            _exit(REPLAY_HOST_BROKEN);
        if (op == REPLAY_OP_CLOSE)
            return 0;
    }
}

int golden_backend_host_main(int argc, char **argv) { return replay_host_main(argc, argv); }
