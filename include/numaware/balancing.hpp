// numaware/balancing.hpp — the kernel's automatic NUMA balancing.
//
// Automatic NUMA balancing (/proc/sys/kernel/numa_balancing) migrates pages
// toward the threads that touch them. It helps untuned programs and fights
// tuned ones: a careful placement can be undone behind the program's back.
// Switching it off (where permitted) or binding ranges keeps placement put.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace numaware {

namespace os {
class Os;
}

// The sysctl's values. 2 and 3 (memory tiering: promote hot pages from slow
// tiers) exist since Linux 5.18.
enum class BalancingState : int {
    off = 0,
    normal = 1,
    memory_tiering = 2,
    normal_and_memory_tiering = 3,
};

// "off", "normal", "memory-tiering", "normal+memory-tiering".
std::string_view to_string(BalancingState state);
// Accepts those names or the digits 0-3; throws Error naming `field` otherwise.
BalancingState parse_balancing_state(std::string_view text, std::string_view field = "numa_balancing");

// Current state. Throws Error("numa_balancing", ...) when the kernel has no
// NUMA balancing (no sysctl file: ENOENT) or the file cannot be read.
BalancingState balancing_state();
// Writes the sysctl. Throws Error("numa_balancing", ...) with the errno as
// code(): EPERM/EACCES/EROFS when not permitted (needs root and a writable
// /proc), ENOENT without NUMA balancing, EINVAL when the kernel refuses the
// value (tiering modes before 5.18). A failed call changes nothing.
void set_balancing_state(BalancingState state);

// Switches balancing to `want` (default off) for its lifetime and restores
// the previous state on destruction. Writes nothing when the state already
// is `want`, so it works unprivileged on a machine where balancing is off.
// The constructor throws like set_balancing_state; the destructor never
// throws (a failed restore is ignored: there is no one left to tell).
class BalancingGuard {
public:
    explicit BalancingGuard(BalancingState want = BalancingState::off);
    // Same, through a given os layer (numaware's own tests use a fake).
    BalancingGuard(BalancingState want, os::Os& os);
    ~BalancingGuard();
    BalancingGuard(const BalancingGuard&) = delete;
    BalancingGuard& operator=(const BalancingGuard&) = delete;

    BalancingState previous() const { return previous_; }
    bool changed() const { return changed_; }

private:
    os::Os* os_;
    BalancingState previous_;
    bool changed_;
};

// A mapping of the process that NUMA balancing leaves alone.
//
// The rule (Linux's task_numa_work): balancing only scans a mapping whose
// effective memory policy is "migrate on fault" (MPOL_F_MOF). The default
// policy is; any explicit policy installed by mbind or set_mempolicy
// (bind, interleave, weighted interleave, prefer, prefer (many), local) is
// not — except bind with the MPOL_F_NUMA_BALANCING flag, which numa_maps
// prints as "bind=balancing". hugetlbfs mappings are never scanned either.
struct BalancingExemptRange {
    std::uintptr_t address = 0;   // start of the mapping, as numa_maps gives it
    std::string policy;           // as numa_maps prints it, e.g. "bind:0-1"
    bool bound = false;           // the policy is bind: pages stay on its nodes
    std::string reason;           // one line, e.g. "bound to nodes 0-1 (MPOL_BIND)"
    std::uint64_t pages = 0;      // present pages
};

// Exempt mappings of process `pid` (0 = this process), from its numa_maps.
// Throws Error("pid N", ...) when numa_maps cannot be read.
std::vector<BalancingExemptRange> balancing_exempt_ranges(pid_t pid = 0);

}  // namespace numaware
