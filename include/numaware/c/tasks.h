/* numaware/c/tasks.h — the task runtime from C.
 *
 * Tasks declare the memory they read and write; the runtime orders them by
 * those dependencies (read-after-write, write-after-read, write-after-write)
 * and a scheduler policy decides where each ready task runs. The team's
 * pinned threads are the workers.
 *
 *     static void sweep(void* arg) { ... }
 *     nw_runtime_t* rt;
 *     if (nw_runtime_create(team, "rip-dep", NULL, &rt) != 0) fprintf(stderr, "%s\n", nw_error_message());
 *     for (int b = 0; b < blocks; ++b) {
 *         struct nw_dep deps[2] = {{a + b * n, n * 8, NW_IN}, {c + b * n, n * 8, NW_OUT}};
 *         nw_task_spawn(rt, sweep, &args[b], deps, 2);
 *     }
 *     nw_task_wait(rt);
 *     nw_runtime_destroy(rt);
 *
 * Two ranges that tasks name must be identical or disjoint. Functions return
 * 0 on success and -1 with errno set on failure (EINVAL for bad input);
 * nw_error_message() names the input and the limit. A failed call leaves
 * the runtime as it was. Task functions must not call nw_runtime_barrier()
 * or nw_runtime_destroy(); they may spawn (the new task is their child) and
 * call nw_task_wait() to wait for their children. None of the calls takes
 * flags: the policy and its options are given once, at creation.
 *
 * Where a feature is missing. The workers are the team's threads, already
 * pinned (numaware/c/team.h). The only NUMA system call of the runtime is
 * move_pages(nodes=NULL) on up to 16 pages of a range, to find the home of
 * memory that is neither registered with nw_runtime_register_region() nor a
 * block of the numaware heap (when kernel_homes is on).
 *   no NUMA       that query fails (ENOSYS) and the range counts as not yet
 *                 placed, as untouched memory does; tasks still run, in
 *                 dependency order.
 *   no permission the query reads only the process's own pages; a refused
 *                 call is treated as under "no NUMA". No call fails for it.
 *   old kernel    nothing depends on the kernel version.
 */
#ifndef NUMAWARE_C_TASKS_H
#define NUMAWARE_C_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "numaware/c/deprecated.h"
#include "numaware/c/team.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nw_runtime nw_runtime_t;

/* How a task uses a range. */
enum nw_access {
    NW_IN = 0,    /* reads it */
    NW_OUT = 1,   /* writes it */
    NW_INOUT = 2  /* reads and writes it */
};

/* One dependency: a non-empty address range and its access. */
struct nw_dep {
    const void* addr;
    size_t bytes;
    int access; /* enum nw_access */
};

/* Settings of the built-in policies ("dfifo", "lq", "dep", "sa", "rip-dep",
 * "rip-mw"); start from nw_policy_options_default(). */
struct nw_policy_options {
    uint64_t seed;          /* random choices are drawn from it (default 1) */
    size_t window;          /* RIP-DEP/RIP-MW: tasks per partitioned window, >= 1 (256) */
    size_t initial_extra;   /* extra tasks in the first window (0) */
    size_t intersection;    /* RIP-MW: tasks kept from the previous window, < window (32) */
    double imbalance;       /* allowed partition imbalance, in [0, 1) (0.05) */
    int kernel_homes;       /* nonzero: ask the kernel where unregistered regions live (1) */
    int record_graph;       /* nonzero: keep the task graph (0) */
};

static inline struct nw_policy_options nw_policy_options_default(void) {
    struct nw_policy_options o;
    o.seed = 1;
    o.window = 256;
    o.initial_extra = 0;
    o.intersection = 32;
    o.imbalance = 0.05;
    o.kernel_homes = 1;
    o.record_graph = 0;
    return o;
}

#define NW_REPORT_MAX_NODES 64

/* Metrics of the tasks run since creation (see numaware/tasks.hpp). */
struct nw_run_report {
    uint64_t tasks;
    double makespan_s;            /* first spawn to last completion */
    uint64_t dep_bytes;           /* bytes of all dependencies of all tasks */
    uint64_t cross_node_bytes;    /* of which homed on another node than the runner's */
    unsigned node_count;          /* nodes with workers (at most NW_REPORT_MAX_NODES listed) */
    unsigned nodes[NW_REPORT_MAX_NODES];              /* ascending OS indices */
    uint64_t tasks_per_node[NW_REPORT_MAX_NODES];     /* parallel to nodes */
    double load_balance_pct;
    double runtime_overhead_pct;
    double partition_overhead_pct;
    uint64_t cross_node_steals;       /* tasks taken from another node's queues */
    uint64_t cross_node_steal_bytes;  /* of cross_node_bytes, those of these tasks */
};

/* Starts the team's threads as the workers of a new runtime with the named
 * policy; `options` may be NULL for the defaults. EINVAL for an unknown
 * policy name or a setting out of range. The team must stay alive, and
 * must not be run by anyone else, until nw_runtime_destroy(). On failure
 * *out is left untouched. */
int nw_runtime_create(nw_team_t* team, const char* policy, const struct nw_policy_options* options,
                      nw_runtime_t** out);

/* Waits for every task, stops the workers and frees the runtime; NULL is
 * ignored. */
void nw_runtime_destroy(nw_runtime_t* rt);

/* Creates a task that runs fn(arg) once every earlier task it depends on has
 * finished. `deps` may be NULL when ndeps is 0. EINVAL for a NULL fn, a
 * dependency with a NULL address, zero bytes or an unknown access, a range
 * that partially overlaps a range in use, or the same range named twice with
 * different access. */
int nw_task_spawn(nw_runtime_t* rt, void (*fn)(void* arg), void* arg, const struct nw_dep* deps, size_t ndeps);

/* The same with a node hint (the "sa" policy follows it). EINVAL for a node
 * without workers. */
int nw_task_spawn_on(nw_runtime_t* rt, unsigned node, void (*fn)(void* arg), void* arg, const struct nw_dep* deps,
                     size_t ndeps);

/* Inside a task: waits for the task's children. Outside: waits for every
 * task spawned from outside and their descendants. */
int nw_task_wait(nw_runtime_t* rt);

/* Waits for every task of the runtime; EINVAL from inside a task. */
int nw_runtime_barrier(nw_runtime_t* rt);

/* Tells the runtime that [addr, addr+bytes) lives on `node`. EINVAL for a
 * NULL or empty range or a node without memory. */
int nw_runtime_register_region(nw_runtime_t* rt, const void* addr, size_t bytes, unsigned node);

/* Fills *report; call after nw_runtime_barrier() for complete figures. */
int nw_runtime_report(const nw_runtime_t* rt, struct nw_run_report* report);

/* The 0.1 names, kept for one release. */
NW_DEPRECATED(nw_task_spawn)
int nw_spawn(nw_runtime_t* rt, void (*fn)(void* arg), void* arg, const struct nw_dep* deps, size_t ndeps);
NW_DEPRECATED(nw_task_spawn_on)
int nw_spawn_on(nw_runtime_t* rt, unsigned node, void (*fn)(void* arg), void* arg, const struct nw_dep* deps,
                size_t ndeps);
NW_DEPRECATED(nw_task_wait) int nw_taskwait(nw_runtime_t* rt);
NW_DEPRECATED(nw_runtime_barrier) int nw_barrier(nw_runtime_t* rt);
NW_DEPRECATED(nw_runtime_register_region)
int nw_register_region(nw_runtime_t* rt, const void* addr, size_t bytes, unsigned node);

#ifdef __cplusplus
}
#endif

#endif
