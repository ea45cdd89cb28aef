/* The dependency-graph model of calculet-graph/v1: queues on chips, buffers, ops with byte-range
 * accesses, after edges, events and barriers, loaded from a document tree with structure checks. */
#ifndef GOLDEN_GRAPH_H
#define GOLDEN_GRAPH_H
#include "golden/api.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "golden/doc.h"
#include "golden/error.h"
#include "golden/report.h"

#define GOLDEN_NONE UINT32_MAX

typedef enum {
    GOLDEN_OP_COMPUTE = 0, /* anything that is not a sync: reads and writes buffers */
    GOLDEN_OP_SIGNAL,
    GOLDEN_OP_WAIT,
    GOLDEN_OP_BARRIER
} golden_op_kind;

typedef struct {
    uint32_t op;       /* the op that makes this access */
    uint32_t buffer;
    uint32_t index;    /* position in the op's reads (or writes) list */
    bool write;
    uint64_t lo, hi;   /* absolute bytes [lo, hi) in the buffer's chip and space */
} golden_access;

typedef struct {
    char *id;
    golden_op_kind kind;
    uint32_t queue;       /* GOLDEN_NONE for barriers */
    uint32_t family;      /* index into families, GOLDEN_NONE when absent */
    uint32_t event;       /* signal/wait: index into events */
    uint32_t acc_first, acc_count;     /* into accesses */
    uint32_t after_first, after_count; /* into after */
    uint32_t bq_first, bq_count;       /* barrier: into barrier_queues */
    int64_t data_size;    /* -1 when absent */
} golden_op;

typedef struct {
    char *id;
    int64_t chip;
} golden_queue;

typedef struct {
    char *id;
    int64_t chip;
    uint32_t space;       /* index into spaces */
    uint32_t domain;      /* index of the (chip, space) pair: accesses conflict only within one */
    uint64_t address, size;
    uint32_t live_first, live_last; /* op indices, GOLDEN_NONE when no `live` */
    uint32_t inplace_of;  /* buffer index, GOLDEN_NONE when none */
} golden_buffer;

typedef struct {
    char *id;
    uint32_t signal;      /* op index of its one signal */
    uint32_t first_op;    /* the first op naming it */
} golden_event;

typedef struct golden_graph {
    char *name;           /* file name used in messages */
    golden_queue *queues;   uint32_t nqueues;
    golden_buffer *buffers; uint32_t nbuffers;
    golden_op *ops;         uint32_t nops;
    golden_access *accesses; uint32_t naccesses;
    uint32_t *after;        uint32_t nafter;     /* predecessor op indices */
    uint32_t *barrier_queues; uint32_t nbarrier_queues;
    golden_event *events;   uint32_t nevents;
    char **spaces;          uint32_t nspaces;
    char **families;        uint32_t nfamilies;
    uint32_t ndomains;
    int64_t *domain_chip;   uint32_t *domain_space;   /* per domain */
    /* per queue: op indices in program order (barriers listing the queue included) */
    uint32_t *qops_first, *qops_count, *qops;
    void *index;          /* id -> op / buffer / queue lookups */
} golden_graph;

/* Build a graph from a calculet-graph/v1 tree. `name` is used in messages; when doc is
 * non-NULL (the tree's document) errors say file:line:col, else name#/json/pointer.
 * Structure errors (unknown or duplicate ids, wait without signal, event signalled twice,
 * ranges outside their buffer, barrier naming an unknown queue, ...) fail with err set. */
GOLDEN_API int golden_graph_from_json(const json_t *root, const char *name, const golden_doc *doc,
                           golden_graph **out, golden_error *err);

/* How a graph file is read. Versioned: set version to GOLDEN_GRAPH_LOAD_OPTIONS_VERSION. */
#define GOLDEN_GRAPH_LOAD_OPTIONS_VERSION 1u
/* every JSON file streams (issue 35: one reader at every size); the tree path stays for YAML,
 * pipes and a threshold set on purpose (the tests compare the two) */
#define GOLDEN_GRAPH_STREAM_DEFAULT ((size_t)0)
typedef struct {
    unsigned version;
    int64_t stream_bytes;       /* JSON files at least this big stream; < 0 or 0: all */
    bool no_fast_ops;           /* streaming: every element through the strict loader (tests) */
    golden_progress *progress;  /* bytes read while streaming; may be NULL */
} golden_graph_load_options;

/* Load a JSON or YAML file and build the graph. A JSON file (of opts->stream_bytes or more,
 * by default every one) streams: the top level is scanned, each
 * queue, buffer and op is parsed and checked on its own, with the same grammar (the document
 * loader's) and the same rules as the tree path (YAML, a pipe, or a JSON file under a
 * threshold set on purpose: a document tree validated against calculet-graph/v1), so the
 * verdict never depends on the path.
 * opts may be NULL (defaults). */
GOLDEN_API int golden_graph_load_file_opts(const char *path, const golden_graph_load_options *opts,
                                golden_graph **out, golden_error *err);
/* The same with default options. */
GOLDEN_API int golden_graph_load_file(const char *path, golden_graph **out, golden_error *err);

GOLDEN_API void golden_graph_free(golden_graph *g);

/* Index of the op / buffer / queue with this id, or GOLDEN_NONE. */
GOLDEN_API uint32_t golden_graph_find_op(const golden_graph *g, const char *id);
GOLDEN_API uint32_t golden_graph_find_buffer(const golden_graph *g, const char *id);
GOLDEN_API uint32_t golden_graph_find_queue(const golden_graph *g, const char *id);

/* "compute", "signal", "wait" or "barrier". */
GOLDEN_API const char *golden_op_kind_name(golden_op_kind k);

#endif
