/* numaware/c/heap.h — the partitioned shared-memory heap from C.
 *
 * Every block has an owner: a NUMA node (nw_owner_node(n)) or a rank of a
 * thread team (nw_owner_rank(r), after nw_psm_register_team()). Each owner
 * has its own sub-heap bound to its node, and no page ever holds blocks of
 * two owners, so no page is shared across nodes. Any thread may free any
 * block; it goes back to its owner.
 *
 *     nw_psm_register_team(team);                 // rank -> node, once
 *     double* part = nw_psm_alloc(n * sizeof *part, nw_owner_rank(ctx->rank));
 *     if (part == NULL) fprintf(stderr, "%s\n", nw_error_message());
 *     ...
 *     nw_psm_free(part);                          // from any thread
 *
 * Errors: functions that return a pointer (nw_psm_alloc, nw_psm_calloc,
 * nw_psm_realloc, nw_psm_aligned_alloc) return NULL like malloc, with errno
 * set (EINVAL for bad input, ENOMEM when memory runs out) and
 * nw_error_message() naming the input and the limit. nw_psm_usable_size
 * returns 0 with errno EINVAL. The others return 0 on success and -1 with
 * errno on failure. A failed call leaves the heap as it was. All functions
 * are thread-safe. None takes flags: the owner says where a block lives.
 *
 * Where memory comes from: each sub-heap maps 8 MiB chunks (and, for blocks
 * over 256 KiB, regions of 8 MiB doubling to 256 MiB, whose freed extents
 * it reuses), binds each to its node with
 * mbind(MPOL_BIND, MPOL_MF_MOVE|MPOL_MF_STRICT) and checks the binding
 * (get_mempolicy, move_pages) before carving any block from it. Only the
 * allocating calls that need a new chunk or a large block make those
 * system calls; the heap's nodes are read from /sys/devices/system/node
 * (every node with memory, whatever the cpuset allows).
 *
 * Where a feature is missing:
 *   no NUMA       a kernel without NUMA support shows one node; the heap then
 *                 uses its memory unbound (mbind's ENOSYS is ignored: with
 *                 one node no page can be misplaced), and every call works
 *                 with nw_owner_node(0).
 *   no permission on one node, a refused mbind (EPERM) is ignored the same
 *                 way. With several nodes, a chunk or region whose
 *                 binding fails (EPERM when the call is refused, EINVAL for
 *                 a node the process's cpuset does not allow, EIO when the
 *                 check finds the chunk not bound as asked) is unmapped, and
 *                 the allocation that needed it returns NULL + ENOMEM; the
 *                 kernel's errno is not passed on. Blocks already in the
 *                 sub-heap are still served. (The drop-in malloc,
 *                 libnumaware_malloc.so, does not fail there: it keeps
 *                 the chunk unbound, its pages placed by first touch, and
 *                 says so once on stderr.)
 *   old kernel    the heap uses only mbind, get_mempolicy and move_pages,
 *                 which every supported kernel has; nothing depends on the
 *                 kernel version.
 */
#ifndef NUMAWARE_C_HEAP_H
#define NUMAWARE_C_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "numaware/c/team.h"

#ifdef __cplusplus
extern "C" {
#endif

enum nw_owner_kind {
    NW_OWNER_NODE = 0, /* id is a node OS index */
    NW_OWNER_RANK = 1  /* id is a team rank registered with nw_psm_register_team */
};

/* Who a block belongs to. Build it with nw_owner_node() or nw_owner_rank(). */
typedef struct nw_owner {
    int kind; /* enum nw_owner_kind */
    unsigned id;
} nw_owner_t;

static inline nw_owner_t nw_owner_node(unsigned node) {
    nw_owner_t owner;
    owner.kind = NW_OWNER_NODE;
    owner.id = node;
    return owner;
}

static inline nw_owner_t nw_owner_rank(unsigned rank) {
    nw_owner_t owner;
    owner.kind = NW_OWNER_RANK;
    owner.id = rank;
    return owner;
}

/* What nw_psm_owner_of() reports about a live block. */
struct nw_psm_owner_info {
    unsigned node;       /* the node whose memory holds the block */
    nw_owner_t owner;    /* the owner it was allocated for */
    int large;           /* 1 if a large block (over 256 KiB, in a region) */
    size_t usable_size;  /* == nw_psm_usable_size() */
};

struct nw_psm_stats {
    uint64_t bytes_in_use;   /* usable bytes of live blocks */
    uint64_t bytes_cached;   /* free bytes held by caches, central lists and page heap */
    uint64_t pages_mapped;   /* OS pages mapped for this node */
    double fragmentation;    /* bytes mapped / bytes in use; 0 when nothing is in use */
};

/* Registers rank -> node for every rank of `team`, each rank getting its own
 * sub-heap on its node; a rank on a node without memory (or whose memory is
 * outside the process's cpuset) gets it on the nearest node with memory it
 * may use, where the kernel puts that CPU's first touches. Registering again
 * with the same node keeps a rank's sub-heap. EINVAL for a NULL team or a
 * node that is not online; ENOSPC when the heap has no room for more
 * sub-heaps. */
int nw_psm_register_team(const nw_team_t* team);

/* At least `bytes` bytes (0 is served as 1) for `owner`, aligned like
 * malloc. NULL + EINVAL for a node without memory, an unregistered rank or
 * an unknown owner kind; NULL + ENOMEM when memory runs out. */
void* nw_psm_alloc(size_t bytes, nw_owner_t owner);

/* Returns p to its owner, from any thread; NULL is ignored (returns 0).
 * -1 + EINVAL when p is not the start of a block of the heap, or is a large
 * block already freed (nothing is freed then). Freeing a small block twice
 * is not detected: like free(), it is undefined. */
int nw_psm_free(void* p);

/* n * size zero bytes; NULL + EINVAL when n * size overflows. */
void* nw_psm_calloc(size_t n, size_t size, nw_owner_t owner);

/* Resizes p keeping its owner. Unlike realloc, p must be a live block (NULL
 * has no owner: EINVAL). On failure returns NULL and p stays valid. */
void* nw_psm_realloc(void* p, size_t bytes);

/* A block aligned to `alignment`, a power of two (else NULL + EINVAL). */
void* nw_psm_aligned_alloc(size_t alignment, size_t bytes, nw_owner_t owner);

/* Bytes usable in p; 0 + EINVAL when p is not a live block. */
size_t nw_psm_usable_size(const void* p);

/* Fills *out for a live block; -1 + EINVAL for any other pointer. */
int nw_psm_owner_of(const void* p, struct nw_psm_owner_info* out);

/* Statistics of node `node`; -1 + EINVAL for a node without a heap. */
int nw_psm_node_stats(unsigned node, struct nw_psm_stats* out);

#ifdef __cplusplus
}
#endif

#endif
