// numaware/placement.hpp — where the pages of an address range go, decided
// first, then done, then proven.
//
//   Machine m = Machine::from_live();
//   PlacementPolicy pol = parse_policy("interleave:all", m);
//   PlacementPlan p = plan(pol, addr, bytes, m);      // pure: page -> node
//   PlacementResult r = apply(addr, bytes, p);         // mbind + populate + verify
//   if (!r.ok()) std::puts(r.summary().c_str());
//
// plan() is a pure, deterministic function of (policy, address range,
// machine, options): it touches no system state and can be tested without a
// NUMA machine. apply(), migrate() and verify() carry it out through the os
// layer and ask the kernel (move_pages with nodes == NULL) where every page
// really is.
//
// Plans assume private anonymous memory (mmap MAP_PRIVATE|MAP_ANONYMOUS, not
// mremap()ed): the kernel interleaves such memory by the page's virtual page
// number (vm_pgoff + offset in the VMA == addr >> PAGE_SHIFT), which is why a
// plan is computed for a start address and must be applied there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/mempolicy.hpp"
#include "numaware/nodeset.hpp"

namespace numaware {

namespace os {
class Os;
Os& linux_os();
}  // namespace os

// What a policy is relative to, for local and remote placement.
enum class Anchor {
    calling_thread,   // the CPU given in PlanOptions::thread_cpu
    cpu,              // a named CPU
    node,             // a thread running on a named node (must have CPUs)
};

// A placement policy: a value, independent of any address range. Node
// sets are checked against a Machine when a plan is made (or by
// parse_policy), not when the policy is built.
struct PlacementPolicy {
    enum class Kind {
        first_touch,          // the kernel default: the faulting CPU's node
        bind,                 // only these nodes (strict)
        preferred,            // this node first, others when it is full
        preferred_many,       // these nodes first (nearest to the toucher)
        interleave,           // round robin by virtual page number
        weighted_interleave,  // round robin with per-node weights
        local,                // bound to the node of a thread
        remote,               // bound to the nearest other node with memory
        block,                // contiguous parts, one per node, sized by weight
        cyclic,               // units of unit_pages dealt round robin from the range start
        page_map,             // an explicit node per page of the range
    };

    Kind kind = Kind::first_touch;
    NodeSet nodes;                                         // bind, preferred(-many), interleave, cyclic
    std::vector<std::pair<unsigned, unsigned>> weights;    // weighted_interleave, block: (node, weight) ascending by node for weighted
    std::size_t unit_pages = 1;                            // cyclic
    Anchor anchor = Anchor::calling_thread;                // local, remote
    unsigned anchor_index = 0;                             // the CPU or node of the anchor
    std::vector<unsigned> map;                             // page_map

    static PlacementPolicy first_touch();
    static PlacementPolicy bind(NodeSet nodes);
    static PlacementPolicy preferred(unsigned node);
    static PlacementPolicy preferred_many(NodeSet nodes);
    static PlacementPolicy interleave(NodeSet nodes);
    // Weights 1..255 (the kernel's range). Node order does not matter.
    static PlacementPolicy weighted_interleave(std::map<unsigned, unsigned> node_weights);
    static PlacementPolicy local_to_calling_thread();
    static PlacementPolicy local_to_cpu(unsigned cpu);
    // Refused at plan time if the node has no CPUs: no thread runs there.
    static PlacementPolicy local_to_node(unsigned node);
    // "Remote" is the nearest node by SLIT distance, other than the
    // thread's own, that has memory; ties go to the lower OS index.
    static PlacementPolicy remote_to_calling_thread();
    static PlacementPolicy remote_to_cpu(unsigned cpu);
    static PlacementPolicy remote_to_node(unsigned node);
    // Parts in range order; a part's share of the pages is its weight over
    // the total (boundaries at floor(pages * cumulative / total)).
    static PlacementPolicy block(std::vector<std::pair<unsigned, unsigned>> node_weights);
    static PlacementPolicy block_even(NodeSet nodes);
    static PlacementPolicy cyclic(NodeSet nodes, std::size_t unit_pages = 1);
    // One node per page of the range; the range must have exactly map.size() pages.
    static PlacementPolicy page_map(std::vector<unsigned> page_nodes);

    // The spec form parse_policy() reads ("interleave:0-3", "cyclic:0-3/16").
    // A page_map renders as "map:<N pages>" and cannot be parsed back.
    std::string to_string() const;
    // True for plans whose unit is smaller than a huge page by nature
    // (interleave, weighted, block, cyclic, page maps).
    bool fine_grained() const;

    bool operator==(const PlacementPolicy&) const = default;
};

// Parses a policy spec, checking every node against `machine`:
//   first-touch | default
//   bind:NODES            preferred:N           preferred-many:NODES
//   interleave:NODES      weighted:N=W,N=W,...  (also weighted-interleave:)
//   local | local:cpu=C | local:node=N          (same forms for remote)
//   block:NODES | block:N=W,N=W,...             cyclic:NODES[/UNIT_PAGES]
// NODES is a list like "0-3,6" or "all" (every node with memory).
// Throws Error whose field is "policy 'SPEC'" for malformed text, an
// unknown node, an empty node set, a node with zero memory or local
// placement for a node without CPUs.
PlacementPolicy parse_policy(std::string_view spec, const Machine& machine);

// The checks parse_policy and plan make; `field` names the caller's input.
void validate_policy(const PlacementPolicy& policy, const Machine& machine, std::string_view field);

// How fine-grained plans treat transparent huge pages.
enum class HugePageHandling {
    small_pages,   // madvise(MADV_NOHUGEPAGE) on the range; units are base pages
    huge_units,    // units rounded up to and aligned on huge pages; THP allowed
};

struct PlanOptions {
    std::size_t page_size = 4096;
    std::size_t huge_page_size = std::size_t{2} << 20;
    HugePageHandling fine_grained = HugePageHandling::small_pages;
    // The CPU of the thread that local/remote "calling thread" policies are
    // relative to, and of the thread that populates the range (it decides
    // first-touch and preferred-many pages). Unset: those pages are
    // "kernel decides" (-1) in the plan, and calling-thread policies are refused.
    std::optional<unsigned> thread_cpu;
    // Explicit maps with at most this many runs are realised by one mbind
    // per run (each run becomes a VMA; vm.max_map_count is 65530 by
    // default); more runs are realised by populating the range and moving
    // it page by page with move_pages.
    std::size_t max_mbind_runs = 1024;
    // The kernel counts an interleave policy's page index modulo 2^32
    // (Linux before 6.7; os::interleave_index_is_32bit): the plan predicts
    // its pages the same way. plan_options_for() sets it from the running
    // kernel.
    bool interleave_index_32bit = false;
};

// Options for ranges of this process: the system's page size and how its
// kernel interleaves (the rest default).
PlanOptions plan_options_for(os::Os& os);

// How apply() carries a plan out.
enum class Realisation {
    range_policy,   // one mbind of `mode`/`mode_nodes` over the whole range
    per_run_mbind,  // one mbind(MPOL_BIND, {node}) per run of equal nodes
    move_pages,     // populate, then move_pages page by page
};

struct PlacementRun {
    std::size_t first_page = 0;
    std::size_t pages = 0;
    unsigned node = 0;
    bool operator==(const PlacementRun&) const = default;
};

struct PlacementPlan {
    PlacementPolicy policy;
    std::uintptr_t start = 0;      // the address the plan was computed for
    std::size_t bytes = 0;
    std::size_t page_size = 4096;

    // Node of every page, -1 = the kernel decides among `allowed` (first
    // touch or preferred-many without a known toucher, ties).
    std::vector<int> page_nodes;
    NodeSet allowed;

    // Granularity: the unit of placement in bytes, whether the plan asks for
    // small pages, and a sentence saying which.
    std::size_t unit_bytes = 4096;
    bool no_huge_pages = false;
    std::string granularity;

    Realisation realisation = Realisation::range_policy;
    MemoryPolicyMode mode = MemoryPolicyMode::default_;   // range_policy
    NodeSet mode_nodes;                                   // range_policy
    std::vector<std::pair<unsigned, unsigned>> node_weights;   // weighted interleave (kernel weights)
    std::vector<PlacementRun> runs;                       // maximal runs of equal planned nodes (>= 0)

    // Intended pages per node OS index; `undecided_pages` counts the -1 pages.
    std::map<unsigned, std::size_t> intent;
    std::size_t undecided_pages = 0;

    std::size_t pages() const { return page_nodes.size(); }
    // e.g. "mbind(interleave, 0-3) over the range" — what apply() will do.
    std::string realisation_text() const;
};

// Pure and deterministic. `addr` must be page-aligned and `bytes` > 0 (the
// last page may be partial). Throws Error for a policy the machine cannot
// honour (see validate_policy) or a page_map of the wrong length.
PlacementPlan plan(const PlacementPolicy& policy, const void* addr, std::size_t bytes,
                   const Machine& machine, const PlanOptions& options = {});

struct PageMismatch {
    std::size_t page = 0;   // index in the range
    int planned = -1;
    int actual = -1;
};

struct UnplacedPage {
    std::size_t page = 0;
    int error = 0;          // errno: ENOENT not present, EBUSY, ENOMEM, ...
};

struct PlacementResult {
    std::size_t pages = 0;
    std::map<unsigned, std::size_t> actual;   // pages per node, as the kernel reports them
    std::size_t matched = 0;                  // pages where the kernel agrees with the plan
    std::vector<PageMismatch> mismatches;
    std::vector<UnplacedPage> unplaced;
    std::string realisation;                  // what was done, in words

    bool ok() const { return matched == pages && mismatches.empty() && unplaced.empty(); }
    // "65536 pages, 65536 as planned" or "... 3 misplaced (page 7: planned 1, on 0), 2 not placed (page 9: ENOENT)"
    std::string summary() const;
};

struct ApplyOptions {
    // Fault every page in after setting the policy (MADV_POPULATE_WRITE).
    // Plans realised page by page, and weighted interleave through the
    // kernel (its node weights are a system-wide table, set only while the
    // range is populated), are always populated.
    bool populate = true;
    // Treat pages the kernel put elsewhere than planned (a preferred node
    // that was full, say) as a failure: roll back and throw.
    bool rollback_on_mismatch = false;
};

// Applies `plan` to [addr, addr+bytes), which must be the range the plan
// was made for. mbind uses MPOL_MF_MOVE | MPOL_MF_STRICT, so pages already
// present are moved. On failure the range's previous policies (read with
// get_mempolicy(MPOL_F_ADDR) page by page beforehand) are restored, pages
// that were moved are moved back, interleave weights are restored, and
// Error(field "pages") names the pages that failed and the errno. Pages
// this call populated stay populated (their contents are unchanged).
// A range that shares its first or last 2 MiB block with another mapping
// (the kernel merges adjacent anonymous mappings) may already hold a
// transparent huge page made by a fault there; its small pages sit on one
// node and move only together, so a fine-grained plan reports them off the
// plan. Ranges on 2 MiB boundaries (os::sys::map_for_placement, or
// aligned_alloc(2 MiB) with a length rounded up to it) cannot meet one.
PlacementResult apply(void* addr, std::size_t bytes, const PlacementPlan& plan,
                      os::Os& os = os::linux_os(), const ApplyOptions& options = {});

// Asks the kernel where every page of the range is and compares with the plan.
PlacementResult verify(const void* addr, std::size_t bytes, const PlacementPlan& plan,
                       os::Os& os = os::linux_os());

// Moves the present pages of an existing range to the plan's nodes with
// move_pages (range policies are left unchanged), then verifies. Absent
// pages are reported as unplaced (ENOENT). On a failed move, every page
// already moved is moved back and Error names the failed pages. A
// transparent huge page moves whole (the kernel does not split it for
// move_pages), so a page-granular plan on a range already backed by huge
// pages fails for the small pages that cannot follow their neighbours;
// map such ranges with MADV_NOHUGEPAGE before first touch.
// Because the range's policy is unchanged, pages under the default policy
// stay subject to automatic NUMA balancing, which may move them back to the
// threads that touch them (seen in our 4-node guests within milliseconds).
// To keep pages where they are, apply() a plan (it binds), or switch
// balancing off for the run (BalancingGuard, numaware/balancing.hpp).
PlacementResult migrate(void* addr, std::size_t bytes, const PlacementPlan& plan,
                        os::Os& os = os::linux_os());

// ---- Placed ranges: the process remembers what apply() placed.
// When apply() on the live system (os::linux_os()) finds every page of the
// range present and the range under a policy that keeps pages where they
// are (anything but the default first-touch policy, which automatic NUMA
// balancing may move), it remembers the node of every page, as the kernel
// reported it. The task runtime then takes the homes of regions inside such
// ranges from here (exact, page by page) without asking the kernel. A later
// apply() over the same pages replaces what is known of them; migrate()
// forgets them (the pages stay under their range policy, and balancing may
// move them). numaware cannot see munmap or free: call forget_placement()
// before unmapping a placed range whose addresses may be reused.
void forget_placement(const void* addr, std::size_t bytes);
// Bytes of [addr, addr+bytes) per node OS index, ascending, when every page
// of it is remembered; nullopt otherwise. A remembered range found under
// the default policy again (unmapped and mapped anew, most likely) is
// forgotten, and nullopt returned: one get_mempolicy at each end of the
// query checks it.
std::optional<std::vector<std::pair<unsigned, std::size_t>>> placed_bytes(const void* addr, std::size_t bytes);

// Sets the calling thread's policy (set_mempolicy), which threads created
// later inherit: for a process, call it before creating threads or before
// exec. Only policies that are one kernel mode qualify (first-touch, bind,
// preferred, preferred-many, interleave, weighted interleave, local,
// remote); block, cyclic and page maps name ranges and are refused.
// Weighted interleave needs the kernel's MPOL_WEIGHTED_INTERLEAVE (>= 6.9)
// and leaves the node weights set (every later fault reads them).
void apply_process_policy(const PlacementPolicy& policy, const Machine& machine,
                          const PlanOptions& options = {}, os::Os& os = os::linux_os());

// "ENOENT", "EIO", ...; "errno N" for unknown values.
std::string errno_name(int error);
// The errno of a failed memory-policy call (mbind, set_mempolicy,
// get_mempolicy, move_pages on the process's own pages), and why where the
// errno says it: without MPOL_MF_MOVE_ALL only a seccomp filter refuses
// these calls with EPERM (containers' default profiles, without
// CAP_SYS_NICE), and ENOSYS is a kernel without NUMA. Else errno_name.
std::string policy_call_error(int error);

}  // namespace numaware
