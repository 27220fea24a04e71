// os/os.hpp — the only door to Linux NUMA system calls.
//
// Every mbind, set_mempolicy, get_mempolicy, move_pages, sched_*affinity,
// madvise, pagemap read and numa_balancing sysctl in numaware goes through
// an Os. LinuxOs makes the real calls through the system-call core
// (os/syscalls.hpp, which the heap engine also uses directly for mmap and
// getcpu); RecordingOs (os/recording_os.hpp) records them and simulates a
// kernel's page placement so placement logic is unit-tested without a NUMA
// machine.
//
// Calls return 0 on success or a positive errno value; they never throw and
// never print. Higher layers turn errors into numaware::Error.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/mman.h>
#include <sys/types.h>
#include <vector>

#include "numaware/mempolicy.hpp"
#include "numaware/nodeset.hpp"

namespace numaware::os {

// The kernel's memory-policy modes (numaware/mempolicy.hpp), under the os
// layer's short name.
using PolicyMode = MemoryPolicyMode;

// mbind / move_pages flags (linux/mempolicy.h values).
inline constexpr unsigned mf_strict = 1u << 0;
inline constexpr unsigned mf_move = 1u << 1;
inline constexpr unsigned mf_move_all = 1u << 2;

// madvise advice (Linux 5.14) that faults every page of a range in, for
// reading or for writing, in the calling thread, without touching the data.
// The values are the kernel's; older C library headers lack the names.
inline constexpr int madv_populate_read = 22;
inline constexpr int madv_populate_write = 23;
#ifdef MADV_POPULATE_WRITE
static_assert(MADV_POPULATE_READ == madv_populate_read && MADV_POPULATE_WRITE == madv_populate_write);
#endif

// Mode flags the kernel ORs into the mode word (linux/mempolicy.h values).
// get_mempolicy reports them in PolicyQuery::mode_flags.
inline constexpr unsigned mode_f_static_nodes = 1u << 15;
inline constexpr unsigned mode_f_relative_nodes = 1u << 14;
inline constexpr unsigned mode_f_numa_balancing = 1u << 13;

struct PolicyQuery {
    PolicyMode mode = PolicyMode::default_;
    NodeSet nodes;
    unsigned mode_flags = 0;   // mode_f_* bits that came with the mode
};

class Os {
public:
    virtual ~Os() = default;

    virtual std::size_t page_size() const = 0;
    // mbind(2). `nodes` may be empty for default/local (and preferred,
    // which then means local). A non-empty set is passed with
    // maxnode = NodeSet::mask_bits + 1, as the kernel expects.
    // Note the kernel's own partial failure: with mf_move|mf_strict the
    // policy is installed on the range *before* pages are migrated, so an
    // EIO return can leave the new policy with some pages still misplaced.
    // Callers that promise all-or-nothing must restore the old policy.
    virtual int mbind(void* addr, std::size_t len, PolicyMode mode, const NodeSet& nodes,
                      unsigned flags) = 0;
    virtual int set_mempolicy(PolicyMode mode, const NodeSet& nodes) = 0;
    // Policy governing `addr` (MPOL_F_ADDR) or, with addr == nullptr, the thread's.
    virtual int get_mempolicy(const void* addr, PolicyQuery& out) = 0;
    // move_pages(2) for `pid` (0 = self). nodes == nullptr queries: status[i]
    // gets the node or a negative errno. A page never touched reads -ENOENT
    // on recent kernels but -EFAULT on older ones (Debian's 6.1 does this),
    // so callers must treat both as "not present"; is_absent_status() does.
    // With nodes, status[i] gets the node the page is on afterwards
    // or a negative errno for that page (-EBUSY, -EACCES, -ENOENT, ...).
    // Returns 0 when every page was handled; EAGAIN when the kernel gave up
    // part way (it returned a count of pages not migrated, and the status of
    // the rest is not reliable: query again); otherwise the call's errno.
    virtual int move_pages(pid_t pid, std::size_t count, void* const* pages, const int* nodes,
                           int* status, unsigned flags) = 0;
    virtual int madvise(void* addr, std::size_t len, int advice) = 0;
    // mincore(2): bit 0 of vec[i] is set when page i of [addr, addr + len)
    // (page-aligned addr) is resident. A page whose entry automatic NUMA
    // balancing made PROT_NONE for a hinting fault is resident; a
    // never-touched anonymous page is not. Changes nothing.
    virtual int mincore(void* addr, std::size_t len, unsigned char* vec) = 0;

    // Affinity for thread `tid` (0 = calling thread). CPU OS indices.
    virtual int set_affinity(pid_t tid, const std::vector<unsigned>& cpus) = 0;
    virtual int get_affinity(pid_t tid, std::vector<unsigned>& cpus) = 0;
    virtual int current_cpu() = 0;   // sched_getcpu(); negative errno on failure

    // /proc/sys/kernel/numa_balancing: 0 off, 1 normal, 2 memory tiering, 3 both.
    virtual int read_numa_balancing(int& value) = 0;
    virtual int write_numa_balancing(int value) = 0;

    // /sys/kernel/mm/mempolicy/weighted_interleave/nodeN (kernel >= 6.9).
    virtual bool has_weighted_interleave() = 0;
    virtual int read_interleave_weight(unsigned node, unsigned& weight) = 0;
    virtual int write_interleave_weight(unsigned node, unsigned weight) = 0;

    // Whole text of /proc/<pid>/numa_maps ("self" for pid 0).
    virtual int read_numa_maps(pid_t pid, std::string& text) = 0;
    // Physical frame number of the page holding `addr`, from
    // /proc/self/pagemap; ENOENT if not present, EPERM if hidden.
    virtual int physical_frame(const void* addr, std::uint64_t& pfn) = 0;
};

// True for a move_pages query status that means "no page there" (see above).
inline bool is_absent_status(int status) { return status == -ENOENT || status == -EFAULT; }

// The process-wide real implementation.
Os& linux_os();

// Whether the running kernel takes an interleave policy's page index
// modulo 2^32: Linux before 6.7 computes the node as `(unsigned int)n %
// nodes` (mm/mempolicy.c, offset_il_node), and a small page's index is its
// virtual page number, which is wider than 32 bits above 16 TiB of address
// (every mmap'ed range); 6.7 and later take the whole index. Only a node
// count that is not a power of two sees the difference. From uname's
// release, read once.
bool interleave_index_is_32bit();

}  // namespace numaware::os
