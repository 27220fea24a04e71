// os/recording_os.hpp — a fake Os for unit tests: records every call and
// simulates a kernel's page placement on a configurable machine.
//
// How to use it:
//
//   os::RecordingOs fake(4, 2);              // 4 nodes x 2 CPUs (cpus 0-1 on node 0, ...)
//   // or: os::RecordingOs fake(machine);    // any numaware::Machine (CPU-less nodes too)
//   void* p = reinterpret_cast<void*>(0x10000000);   // addresses are never dereferenced
//   fake.mbind(p, 8 * 4096, os::PolicyMode::interleave, NodeSet{0, 1}, os::mf_move | os::mf_strict);
//   fake.touch(p, 8 * 4096, /*cpu=*/0);      // first touch: pages get placed by the policy
//   EXPECT_EQ(fake.node_of_page(p), 0);      // interleave: node = set[(addr/page) % n]
//   EXPECT_EQ(fake.calls()[0].kind, os::CallKind::mbind);
//   EXPECT_EQ(fake.calls()[0].to_string(), "mbind(0x10000000, 32768, interleave, 0-1, MOVE|STRICT) = 0");
//
// Failure injection (for rollback tests):
//   fake.fail_call(os::CallKind::mbind, EIO, /*nth=*/2);  // the 2nd mbind from now fails, once
//   fake.fail_page(p, EBUSY);   // this page cannot migrate: move_pages status -EBUSY,
//                               // mbind(MOVE|STRICT) moves the others and returns EIO
//   fake.fail_page(p, EACCES);  // a page shared with another process: mbind skips it
//                               // silently (returns 0), move_pages status -EACCES
//   fake.set_absent_errno(EFAULT);  // queries of untouched pages give -EFAULT, as on 6.1
//   fake.hint_balancing(p, 4096);   // a present page made PROT_NONE by NUMA balancing:
//                                   // queries read it absent until a fault (touch, populate),
//                                   // which under the default policy moves it to the CPU's node
//   fake.set_numa_balancing(std::nullopt);   // file absent: read/write give ENOENT
//   fake.set_balancing_write_error(EPERM);
//   fake.set_weighted_interleave_available(false);  // mbind(weighted_interleave) gives EINVAL
//   fake.set_numa_maps_text(0, "...");       // what read_numa_maps returns for that pid
//                                            // (otherwise it is made from the simulated state)
//
// A call that fails by injection changes nothing and is recorded with its
// result. The simulated kernel follows Linux where it matters to callers:
//  - Policies live per page (a VMA split to page granularity). mbind
//    installs the policy on every page of the range, then with mf_move
//    migrates present pages whose node is outside the policy's node set to
//    the node the policy gives that page (pages already inside the set stay,
//    even if interleave would have put them elsewhere).
//    mf_strict without mf_move: a misplaced page gives EIO and nothing is
//    installed (checked in guests on 6.1 and 6.12).
//    mf_move|mf_strict with a page that fails to migrate (fail_page with an
//    errno other than EACCES) gives EIO *after* the policy was installed and
//    the other pages moved — the kernel's order, which is why callers need
//    rollback. A page failed with EACCES models a page shared with another
//    process: mbind skips it silently and returns 0 even with mf_strict, and
//    move_pages reports -EACCES for it (both checked in guests on 6.1/6.12),
//    so only a verification query shows it is misplaced.
//  - Node sets are intersected with the nodes that have memory; an empty
//    result is EINVAL (like the kernel's mpol_set_nodemask).
//  - touch(addr, len, cpu) stands in for page faults: each absent page is
//    placed by the range's policy, else the calling thread's policy
//    (set_mempolicy), else on the CPU's node (first touch).
//      bind / preferred_many: the CPU's node if in the set, else the
//        nearest node of the set (SLIT distance, ties to the lower index);
//      preferred: its node; local/default: the CPU's node;
//      interleave (range policy): node = set[(addr / page) % |set|]. The
//        kernel uses the page's offset in the VMA plus vm_pgoff, which for
//        anonymous memory is addr >> PAGE_SHIFT, so this is exact for
//        anonymous mappings; for huge pages the unit is the huge page;
//      weighted interleave (range policy): with W = sum of weights over the
//        set, i = (addr / page) % W, walk the set in ascending order
//        subtracting weights (the kernel's weighted_interleave_nid rule);
//      interleave / weighted interleave as a thread policy: the same
//        address rule as a range policy. A page fault computes the
//        interleave index from the faulting address whichever policy
//        governs it (6.1 and 6.12 alike; interleave checked in guests by
//        ProcessInterleavePolicyPlacesByAddress); the kernel's
//        per-task rotor (il_prev / il_weight) only serves allocations that
//        have no address, which the fake does not simulate.
//  - madvise(MADV_POPULATE_WRITE) (Linux >= 5.14) is a fault of every page
//    of the range, as touch() by the calling thread on its current CPU.
//    madvise(MADV_POPULATE_READ) is recorded but places nothing: the fake's
//    memory is anonymous, and a read fault there maps the shared zero page
//    rather than allocating a page on a node.
//  - Huge pages: with a huge page size given, a touch places a whole huge
//    page (all its small pages on one node) when the aligned huge region
//    lies in a range advised MADV_HUGEPAGE, or when thp "always" is on and
//    the region lies inside the touched range and no MADV_NOHUGEPAGE covers
//    it. The policy is evaluated for the huge page index (addr / huge).
//  - move_pages with nodes moves regardless of policy (as the kernel does);
//    a target node that does not exist or has no memory aborts the call with
//    ENODEV after the earlier pages were handled.
//  - read_numa_maps of this process without injected text prints the
//    simulated state as the kernel's /proc/PID/numa_maps: one line per run
//    of contiguous known pages (present, or under a range policy or
//    MADV_(NO)HUGEPAGE advice) that share policy and advice — the VMAs
//    mbind and madvise would split — with the policy as mpol_to_str prints
//    it ("bind:0-1", "prefer (many):2", "weighted interleave:0-3") and
//    anon=, dirty=, N<node>= counts in small pages and kernelpagesize_kB.
//    The fake knows no mmap boundaries, so untouched pages without policy
//    or advice end a line. With nothing known (no mappings simulated) and
//    for any other pid, read_numa_maps gives ENOENT.
//  - Threads: tid 0 means the calling thread (keyed by gettid()), so
//    affinity, current CPU and the thread policy are per real thread.
// Thread-safe: every method takes one internal lock.
#pragma once

#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "numaware/machine.hpp"
#include "os/os.hpp"

namespace numaware::os {

enum class CallKind {
    mbind,
    set_mempolicy,
    get_mempolicy,
    move_pages,
    madvise,
    mincore,
    set_affinity,
    get_affinity,
    current_cpu,
    read_numa_balancing,
    write_numa_balancing,
    has_weighted_interleave,
    read_interleave_weight,
    write_interleave_weight,
    read_numa_maps,
    physical_frame,
};
std::string to_string(CallKind kind);

// One recorded Os call. Only the fields that the call takes are set.
struct Call {
    CallKind kind{};
    std::uintptr_t addr = 0;              // mbind, get_mempolicy, madvise, mincore, physical_frame
    std::size_t len = 0;                  // mbind, madvise, mincore
    PolicyMode mode = PolicyMode::default_;   // mbind, set_mempolicy
    NodeSet nodes;                        // mbind, set_mempolicy
    unsigned flags = 0;                   // mbind, move_pages
    int advice = 0;                       // madvise
    pid_t pid = 0;                        // move_pages, read_numa_maps; tid for affinity
    std::vector<std::uintptr_t> pages;    // move_pages
    std::vector<int> targets;             // move_pages: empty for a query
    std::vector<unsigned> cpus;           // set_affinity
    int value = 0;                        // write_numa_balancing, weights: the value written
    unsigned node = 0;                    // interleave weights
    int result = 0;                       // what the call returned

    // e.g. "mbind(0x10000000, 32768, interleave, 0-1, MOVE|STRICT) = 0"
    std::string to_string() const;
};

// A policy as the fake stores it.
struct SimPolicy {
    PolicyMode mode = PolicyMode::default_;
    NodeSet nodes;
    bool operator==(const SimPolicy&) const = default;
};

class RecordingOs final : public Os {
public:
    // `nodes` nodes with OS indices 0..nodes-1, each with `cpus_per_node`
    // CPUs numbered contiguously, SLIT 10 local / 20 remote.
    RecordingOs(unsigned nodes, unsigned cpus_per_node, std::size_t page_size = 4096,
                std::size_t huge_page_size = 0);
    // Nodes, CPUs and distances from a Machine (memory-only nodes included;
    // a node with zero memory is not a valid placement target).
    explicit RecordingOs(const Machine& machine, std::size_t page_size = 4096,
                         std::size_t huge_page_size = 0);

    // ---- Os ------------------------------------------------------------
    std::size_t page_size() const override { return page_size_; }
    int mbind(void* addr, std::size_t len, PolicyMode mode, const NodeSet& nodes,
              unsigned flags) override;
    int set_mempolicy(PolicyMode mode, const NodeSet& nodes) override;
    int get_mempolicy(const void* addr, PolicyQuery& out) override;
    int move_pages(pid_t pid, std::size_t count, void* const* pages, const int* nodes, int* status,
                   unsigned flags) override;
    int madvise(void* addr, std::size_t len, int advice) override;
    int mincore(void* addr, std::size_t len, unsigned char* vec) override;
    int set_affinity(pid_t tid, const std::vector<unsigned>& cpus) override;
    int get_affinity(pid_t tid, std::vector<unsigned>& cpus) override;
    int current_cpu() override;
    int read_numa_balancing(int& value) override;
    int write_numa_balancing(int value) override;
    bool has_weighted_interleave() override;
    int read_interleave_weight(unsigned node, unsigned& weight) override;
    int write_interleave_weight(unsigned node, unsigned weight) override;
    int read_numa_maps(pid_t pid, std::string& text) override;
    int physical_frame(const void* addr, std::uint64_t& pfn) override;

    // ---- the recording -------------------------------------------------
    std::vector<Call> calls() const;
    std::vector<Call> calls(CallKind kind) const;
    void clear_calls();

    // ---- simulated faults and state ------------------------------------
    // First touch of [addr, addr+len) by `cpu` (-1: the calling thread's
    // current CPU). Present pages stay where they are.
    void touch(const void* addr, std::size_t len, int cpu = -1);
    // Unmaps pages (munmap): they become absent and lose their policy.
    void release(const void* addr, std::size_t len);
    // Node holding the page containing addr, or -1 if not present.
    int node_of_page(const void* addr) const;
    // Present pages per node OS index in [addr, addr+len).
    std::map<unsigned, std::size_t> pages_per_node(const void* addr, std::size_t len) const;
    // Range policy of the page holding addr (default if none).
    SimPolicy policy_of_page(const void* addr) const;
    // Policy of the calling thread (set_mempolicy).
    SimPolicy thread_policy() const;
    // Affinity of thread `tid` (0: calling thread); all CPUs if never set.
    std::vector<unsigned> affinity(pid_t tid = 0) const;
    // Sets the CPU the calling thread "runs on" (defaults to its first allowed CPU).
    void set_current_cpu(unsigned cpu);
    // Process id the fake answers to in move_pages/read_numa_maps besides 0.
    void set_pid(pid_t pid);
    void set_thp_always(bool on);

    // ---- failure injection ---------------------------------------------
    // The nth call of `kind` from now (1 = the next) returns `error`
    // (a positive errno; for current_cpu the call returns -error), `times`
    // times in a row (0 = for ever). Injected calls change nothing.
    void fail_call(CallKind kind, int error, unsigned nth = 1, unsigned times = 1);
    // The page holding addr cannot be migrated: move_pages reports -error in
    // its status, mbind(mf_move) leaves it and (with mf_strict) returns EIO,
    // except for EACCES (a shared page), which mbind skips silently.
    void fail_page(const void* addr, int error);
    // Status a move_pages query gives an untouched page: ENOENT (default,
    // recent kernels) or EFAULT (Debian's 6.1).
    void set_absent_errno(int error);
    // Automatic NUMA balancing made the present pages of the range
    // PROT_NONE for a hinting fault: move_pages queries read them absent
    // (as 6.1's follow_page() does) until a touch or an
    // MADV_POPULATE_READ/WRITE of them takes the fault. Under the default
    // policy (no range policy, no thread policy) that fault moves the page
    // to the faulting CPU's node first, as the kernel's migrate-on-fault
    // does; under any other policy the page stays where it is.
    void hint_balancing(const void* addr, std::size_t len);
    void clear_failures();

    // numa_balancing sysctl value; nullopt = the file does not exist.
    void set_numa_balancing(std::optional<int> value);
    std::optional<int> numa_balancing() const;
    // Writes fail with this errno (EPERM, EACCES, ...); 0 = writes allowed.
    void set_balancing_write_error(int error);
    void set_weighted_interleave_available(bool available);
    // Text read_numa_maps returns for `pid` (0 = self). Without it, the fake
    // prints its simulated state for this process (see above) and returns
    // ENOENT for other pids.
    void set_numa_maps_text(pid_t pid, std::string text);
    // The numa_maps text of the simulated state ("" when nothing is known).
    std::string simulated_numa_maps() const;
    // Node weights for weighted interleave (default 1 each).
    unsigned interleave_weight(unsigned node) const;

private:
    struct SimNode {
        unsigned os_index = 0;
        std::vector<unsigned> cpus;
        bool has_memory = true;
    };
    struct ThreadState {
        std::optional<std::vector<unsigned>> affinity;
        std::optional<unsigned> cpu;
        SimPolicy policy;
    };
    struct Failure {
        CallKind kind;
        int error;
        unsigned skip;    // calls to let pass first
        unsigned times;   // 0 = for ever
    };

    void init_common();
    int check_injected(CallKind kind);   // returns error or 0; consumes a count
    int record(Call call, int result);   // logs the call with its result; returns it
    pid_t self_tid() const;
    ThreadState& thread(pid_t tid);
    const ThreadState* find_thread(pid_t tid) const;
    int normalise_nodes(PolicyMode mode, const NodeSet& in, NodeSet& out) const;
    int node_of_cpu(unsigned cpu) const;
    const SimPolicy& effective_policy_locked(std::uintptr_t page);
    // The CPU a fault by the calling thread happens on (`cpu` if >= 0).
    unsigned fault_cpu_locked(int cpu);
    void resolve_hints_locked(std::uintptr_t start, std::uintptr_t end, unsigned fault_cpu);
    unsigned nearest_in(const NodeSet& set, unsigned from) const;
    // Node a fresh (or migrating) page at interleave index `index` (page
    // or huge page number) gets, for a fault by `cpu`, under `policy`.
    unsigned place(const SimPolicy& policy, std::uintptr_t index, unsigned cpu) const;
    void touch_locked(const void* addr, std::size_t len, int cpu);
    std::string numa_maps_locked() const;
    bool huge_eligible(std::uintptr_t huge_start, const void* touch_addr, std::size_t touch_len) const;
    bool is_valid_target(int node) const;

    std::size_t page_size_;
    std::size_t huge_page_size_;
    std::vector<SimNode> nodes_;
    std::vector<std::vector<unsigned>> distance_;   // by position in nodes_
    std::vector<unsigned> all_cpus_;

    mutable std::mutex mutex_;
    std::vector<Call> calls_;
    std::map<std::uintptr_t, int> page_node_;          // page address -> node (present pages)
    std::map<std::uintptr_t, SimPolicy> page_policy_;  // page address -> range policy
    std::map<std::uintptr_t, int> advice_;             // page address -> MADV_(NO)HUGEPAGE
    std::map<std::uintptr_t, int> failing_pages_;      // page address -> errno
    std::set<std::uintptr_t> hinted_;                  // present pages that read absent (hint_balancing)
    std::map<pid_t, ThreadState> threads_;
    std::vector<Failure> failures_;
    std::optional<int> balancing_ = 0;
    int balancing_write_error_ = 0;
    bool weighted_available_ = true;
    std::map<unsigned, unsigned> weights_;
    std::map<pid_t, std::string> numa_maps_;
    pid_t pid_ = 4242;
    bool thp_always_ = false;
    int absent_errno_ = ENOENT;
};

}  // namespace numaware::os
