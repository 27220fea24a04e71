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
 * The range must be private anonymous memory, page-aligned. Placement is
 * checked page by page with move_pages(nodes=NULL) and summarised in an
 * nw_place_report. Functions return -1 with errno set on failure (EINVAL for
 * a bad spec or range, the kernel's errno when a system call fails) and
 * nw_last_error() names the input or the pages that failed; a failed
 * nw_place leaves the range with its previous policy and page locations.
 */
#ifndef NUMAWARE_C_PLACEMENT_H
#define NUMAWARE_C_PLACEMENT_H

#include <stddef.h>

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
 * `out` may be NULL. */
int nw_place(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);

/* Verifies an existing range against the plan of `policy_spec`; same
 * return values as nw_place. Changes nothing. */
int nw_place_verify(const void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);

/* Moves the present pages of [addr, addr+bytes) to the plan's nodes with
 * move_pages (policies unchanged), then verifies; same return values. Pages
 * never touched count as unplaced. */
int nw_place_migrate(void* addr, size_t bytes, const char* policy_spec, struct nw_place_report* out);

/* The plan alone, on any machine (no system call): writes the node of each
 * page (-1: the kernel decides) into page_nodes[0 .. capacity-1] and
 * returns the number of pages in the range (which may exceed capacity).
 * `cpu` is the CPU of the thread that local/remote/first-touch are relative
 * to, or -1 for none. page_nodes may be NULL when capacity is 0. */
long nw_place_plan(const nw_machine_t* machine, const void* addr, size_t bytes, const char* policy_spec,
                   int cpu, int* page_nodes, size_t capacity);

/* Sets the calling thread's memory policy (set_mempolicy); threads created
 * afterwards and exec'd programs inherit it. Block and cyclic specs are
 * refused (EINVAL): they describe ranges. */
int nw_place_process(const char* policy_spec);

#ifdef __cplusplus
}
#endif

#endif
