/* numaware/c/team.h — pinned thread teams from C.
 *
 * A team is N threads, each pinned to one CPU for its whole life, laid out
 * by a mapping given once at creation (contiguous or scatter over the first
 * K nodes with CPUs, or an explicit CPU list). nw_team_run() runs a function
 * on every thread and returns when all are done; inside it a rank reads its
 * rank, CPU and node from the context and may wait for the others with
 * nw_team_barrier().
 *
 *     static void work(const struct nw_team_ctx* ctx, void* arg) {
 *         fill_my_part(arg, ctx->rank, ctx->size);
 *         nw_team_barrier(ctx);
 *         use_all_parts(arg, ctx->rank);
 *     }
 *     struct nw_team_mapping map = { .threads = 8, .kind = NW_TEAM_SCATTER };
 *     nw_team_t* team;
 *     if (nw_team_create(machine, &map, &team) != 0) fprintf(stderr, "%s\n", nw_error_message());
 *     nw_team_run(team, work, data);
 *     nw_team_destroy(team);
 *
 * Functions return 0 (or a non-negative value) on success, -1 with errno set
 * on failure; nw_error_message() names the input and the limit. None of the
 * calls takes flags: the mapping is given once, at creation.
 *
 * Where a feature is missing. Only nw_team_create makes a system call
 * (sched_setaffinity, once per thread); the others work on any kernel.
 *   no NUMA       nothing here needs the kernel's NUMA support. A live
 *                 machine on a kernel without it has one node, so a mapping
 *                 asking for more nodes (K > 1) is EINVAL.
 *   no permission pinning the process's own threads needs no privilege. A
 *                 CPU outside the process's cpuset is refused: a live machine
 *                 does not list it (EINVAL when the mapping names it); a
 *                 machine from XML, JSON or a synthetic description may list
 *                 it, and pinning then fails with the kernel's EINVAL.
 *   old kernel    nothing here depends on the kernel version.
 */
#ifndef NUMAWARE_C_TEAM_H
#define NUMAWARE_C_TEAM_H

#include <stddef.h>

#include "numaware/c/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nw_team nw_team_t;

/* How ranks are laid over the chosen nodes' CPUs. */
enum nw_team_kind {
    NW_TEAM_CONTIGUOUS = 0, /* fill the first node's CPUs, then the next node's */
    NW_TEAM_SCATTER = 1     /* round-robin over the nodes: rank r on node r mod K */
};

struct nw_team_mapping {
    /* Number of ranks (>= 1). With an explicit CPU list, 0 means one rank
     * per listed CPU. Two ranks never share a CPU: more ranks than CPUs is
     * refused (EINVAL). */
    unsigned threads;
    /* enum nw_team_kind; ignored with an explicit CPU list. */
    int kind;
    /* K: use the first K nodes with CPUs, ascending OS index; memory-only
     * nodes never count. 0 = all nodes with CPUs. Must be 0 with `cpus`. */
    unsigned nodes;
    /* Explicit CPU OS indices (rank r on cpus[r]), or NULL. */
    const unsigned* cpus;
    size_t cpu_count;
};

/* What a rank sees while it runs in nw_team_run(). Valid only during that
 * call. */
struct nw_team_ctx {
    unsigned rank;
    unsigned cpu;   /* the planned CPU, which the thread is pinned to */
    unsigned node;  /* OS index of the node holding `cpu` */
    unsigned size;  /* number of ranks */
    const void* internal; /* for nw_team_barrier */
};

/* Plans the layout on `machine`, starts the threads and pins each to its
 * CPU. EINVAL for a bad mapping (threads = 0, K or threads over the limit,
 * a CPU not in the machine or listed twice, an unknown kind); the kernel's
 * errno when pinning fails (EINVAL for a CPU this process may not use or
 * that the host does not have), in which case no thread is left running.
 * On failure *out is left untouched. */
int nw_team_create(const nw_machine_t* machine, const struct nw_team_mapping* mapping, nw_team_t** out);

/* Runs fn(ctx, arg) on every rank and returns when all have returned.
 * One run at a time per team; fn must not call nw_team_run on its own team
 * (EINVAL). */
int nw_team_run(nw_team_t* team, void (*fn)(const struct nw_team_ctx* ctx, void* arg), void* arg);

/* Waits until every rank of the team has reached the barrier in this run.
 * Reusable any number of times per run. */
int nw_team_barrier(const struct nw_team_ctx* ctx);

/* Number of ranks. */
int nw_team_size(const nw_team_t* team);

/* The planned CPU and node of `rank` (either pointer may be NULL). EINVAL
 * if rank >= size. */
int nw_team_rank_place(const nw_team_t* team, unsigned rank, unsigned* cpu, unsigned* node);

/* Joins every thread and frees the team; NULL is ignored. Must not be
 * called while a run is in progress. */
void nw_team_destroy(nw_team_t* team);

#ifdef __cplusplus
}
#endif

#endif
