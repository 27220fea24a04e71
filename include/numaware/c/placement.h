/* numaware/c/placement.h — verified page placement from C.
 *
 * A policy is given as a spec string, the same syntax as the C++
 * parse_policy() and `numaware place --policy`:
 *   first-touch | bind:NODES | preferred:N | preferred-many:NODES |
 *   interleave:NODES | weighted:N=W,... | local[:cpu=C|:node=N] |
 *   remote[:cpu=C|:node=N] | block:NODES | block:N=W,... | cyclic:NODES[/UNIT]
 * where NODES is "0-3,6" or "all" (every node with memory). "local",
 * "remote" and first-touch predictions are relative to the calling thread's
 * current CPU; pin the thread first for a stable answer.
 *
 * The object of these calls is a range: [addr, addr+bytes) of private
 * anonymous memory, page-aligned, of the calling process (no call here acts
 * on another process's pages). Placement is checked page by page with
 * move_pages(nodes=NULL) and summarised in an nw_place_report. Functions
 * return -1 with errno set on failure (EINVAL for a bad spec or range, the
 * kernel's errno when a system call fails) and nw_error_message() names the
 * input or the pages that failed; a failed nw_range_place or
 * nw_range_migrate leaves the range with its previous policy and page
 * locations. None of the calls takes flags.
 *
 * The live machine that specs are resolved against (by every call but
 * nw_range_plan, which is given its machine) is read through hwloc once, at
 * the first call of the process; it lists only the nodes that the
 * process's cpuset allows, so "all" means those and naming another node is
 * EINVAL.
 *
 * Where a feature is missing (each call below says which apply to it):
 *   no NUMA       a kernel built without NUMA support fails every NUMA system
 *                 call with ENOSYS; the live machine then has one node. On a
 *                 one-node machine with NUMA support every call works and
 *                 every page is on that node.
 *   no permission a NUMA system call refused outright (EPERM, as a seccomp
 *                 filter may answer) fails the call with that errno. Pages
 *                 still shared with another process (after fork(), until one
 *                 side writes them) cannot be moved without
 *                 MPOL_MF_MOVE_ALL, which needs CAP_SYS_NICE and which
 *                 numaware does not use: mbind(MPOL_MF_MOVE|MPOL_MF_STRICT)
 *                 skips them without an error and move_pages refuses them
 *                 (EACCES). The cpuset is read with the live machine, at the
 *                 first call: a node set it no longer allows at all is
 *                 refused by the kernel (mbind and set_mempolicy: EINVAL;
 *                 move_pages to such a node: EACCES).
 *   old kernel    before Linux 5.14 there is no MADV_POPULATE_WRITE; ranges
 *                 are populated by writing each page from the calling thread
 *                 instead (same data, same placement, slower). Before 5.15
 *                 the kernel has no MPOL_PREFERRED_MANY: "preferred-many"
 *                 fails with EINVAL. Before 6.9 it has no
 *                 MPOL_WEIGHTED_INTERLEAVE (see each call).
 */
#ifndef NUMAWARE_C_PLACEMENT_H
#define NUMAWARE_C_PLACEMENT_H

#include <stddef.h>

#include "numaware/c/deprecated.h"
#include "numaware/c/machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Node OS indices at or above this are counted in `pages` but not in the
 * per-node arrays. */
#define NW_PLACE_MAX_NODES 64

struct nw_place_report {
    size_t pages;        /* pages in the range */
    size_t matched;      /* pages where the kernel agrees with the plan */
    size_t mismatched;   /* pages present on a node the plan did not choose */
    size_t unplaced;     /* pages not present or not placeable */
    size_t undecided;    /* pages the plan leaves to the kernel (first touch, ties) */
    size_t intended[NW_PLACE_MAX_NODES];   /* plan: pages per node OS index */
    size_t actual[NW_PLACE_MAX_NODES];     /* kernel: pages per node OS index */
    size_t unit_bytes;   /* granularity of the plan */
    int no_huge_pages;   /* 1 if MADV_NOHUGEPAGE was asked on the range */
    char granularity[160];   /* e.g. "4K pages; MADV_NOHUGEPAGE asked (...)" */
    char realisation[192];   /* what was done, e.g. "mbind(interleave, 0-3) over the range; populated" */
};

/* Plans `policy_spec` for [addr, addr+bytes) on the live machine, applies it
 * (mbind with MPOL_MF_MOVE|MPOL_MF_STRICT, or per-run mbind, or move_pages),
 * populates the range and verifies it. Returns 0 when every page is where
 * the plan says, 1 when the report shows pages elsewhere, -1 on failure.
 * `out` may be NULL.
 *   no NUMA       -1 + ENOSYS before anything is changed (reading the
 *                 range's policy with get_mempolicy is the first step).
 *   no permission -1 + the kernel's errno (EPERM), the range restored.
 *                 Shared pages (see above) that the plan puts on one node:
 *                 -1 + EACCES, the range restored; shared pages the plan
 *                 leaves to the kernel stay where they are, and count as
 *                 mismatched (returns 1) if that node is not allowed.
 *                 "weighted:" on a kernel that has the mode writes the
 *                 system-wide weights in /sys/kernel/mm/mempolicy/
 *                 weighted_interleave/, which only root may write: -1 +
 *                 EACCES, nothing changed.
 *   old kernel    without MPOL_WEIGHTED_INTERLEAVE (before 6.9), "weighted:"
 *                 is realised as populate then move_pages page by page, with
 *                 the same page -> node map; the report's realisation says
 *                 so. Without MADV_POPULATE_WRITE, pages are written once
 *                 each. "preferred-many" before 5.15: -1 + EINVAL, the range
 *                 restored. */
int nw_range_place(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);

/* Verifies an existing range against the plan of `policy_spec`; same
 * return values as nw_range_place. Changes nothing.
 *   no NUMA       -1 + ENOSYS (move_pages).
 *   no permission only move_pages on the calling process's own pages, which
 *                 needs no privilege.
 *   old kernel    pages never touched read as absent on every kernel
 *                 (-ENOENT, or -EFAULT on older kernels such as 6.1) and
 *                 count as unplaced. */
int nw_range_verify(const void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);

/* Moves the present pages of [addr, addr+bytes) to the plan's nodes with
 * move_pages (policies unchanged), then verifies; same return values. Pages
 * never touched count as unplaced.
 *   no NUMA       -1 + ENOSYS, nothing changed.
 *   no permission shared pages (see above) the plan puts elsewhere: -1 +
 *                 EACCES, the pages moved back. A target node that the
 *                 process's cpuset no longer allows: -1 + EACCES, the pages
 *                 moved back.
 *   old kernel    no dependency on the kernel version. */
int nw_range_migrate(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);

/* Forgets what nw_range_place remembered of [addr, addr+bytes): a range
 * that it placed with every page present under a policy other than first
 * touch is remembered page by page, and the task runtime takes the homes of
 * regions inside it from there without asking the kernel. Call it before
 * unmapping such a range whose addresses may be reused. Returns 0.
 *   bad input     addr NULL with bytes > 0, or a range that wraps around
 *                 the address space: -1 + EINVAL, nothing forgotten. */
int nw_range_forget(const void* addr, size_t bytes);

/* The plan alone, on any machine (no system call): writes the node of each
 * page (-1: the kernel decides) into page_nodes[0 .. capacity-1] and
 * returns the number of pages in the range (which may exceed capacity).
 * `cpu` is the CPU of the thread that local/remote/first-touch are relative
 * to, or -1 for none. page_nodes may be NULL when capacity is 0.
 *   no NUMA, no permission, old kernel: works the same everywhere, since it
 *   makes no system call. */
long nw_range_plan(const nw_machine_t* machine, const void* addr, size_t bytes, const char* policy_spec,
                   int cpu, int* page_nodes, size_t capacity);

/* Sets the calling thread's memory policy (set_mempolicy); threads created
 * afterwards and exec'd programs inherit it. Block and cyclic specs are
 * refused (EINVAL): they describe ranges.
 *   no NUMA       -1 + ENOSYS.
 *   no permission -1 + the kernel's errno (EPERM). "weighted:" writes the
 *                 system-wide interleave weights, which only root may write:
 *                 -1 + EACCES, the weights written so far put back.
 *   old kernel    "weighted:" before 6.9: -1 + EINVAL, the message naming
 *                 Linux 6.9 (a thread policy cannot be emulated page by
 *                 page). "preferred-many" before 5.15: -1 + EINVAL. */
int nw_thread_set_mempolicy(const char* policy_spec);

/* The 0.1 names, kept for one release. */
NW_DEPRECATED(nw_range_place)
int nw_place(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);
NW_DEPRECATED(nw_range_verify)
int nw_place_verify(const void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);
NW_DEPRECATED(nw_range_migrate)
int nw_place_migrate(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);
NW_DEPRECATED(nw_range_plan)
long nw_place_plan(const nw_machine_t* machine, const void* addr, size_t bytes, const char* policy_spec, int cpu,
                   int* page_nodes, size_t capacity);
NW_DEPRECATED(nw_thread_set_mempolicy) int nw_place_process(const char* policy_spec);

#ifdef __cplusplus
}
#endif

#endif
