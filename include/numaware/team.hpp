// numaware/team.hpp — pinned thread teams (the `threads` layer).
//
// A team is N threads, each pinned to one CPU for its whole life. Where
// each rank goes is decided once, by the pure function plan_team(), from a
// Machine and a TeamMapping; the Team then only carries that decision out.
// Like oneTBB's arena constraints, placement is given at construction and
// never per call: every run() uses the same ranks on the same CPUs.
//
//     numaware::Team team{machine, {.threads = 8, .kind = numaware::MappingKind::scatter}};
//     team.run([&](numaware::TeamContext& ctx) {
//         work(ctx.rank(), ctx.node());
//         ctx.barrier();
//         more_work(ctx.rank());
//     });
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/machine.hpp"
#include "numaware/nodeset.hpp"

namespace numaware {

namespace os {
class Os;
}

// How ranks are laid over the chosen nodes' CPUs (team_cpu_order()): on
// a machine with SMT, two ranks share a core only once every core of the
// chosen nodes has one.
enum class MappingKind {
    contiguous,   // fill the first node's cores in order, then the next node's
    scatter,      // round-robin over the nodes: rank r on node r mod K
};

// Parses "contiguous" or "scatter"; throws Error naming `field` otherwise.
MappingKind parse_mapping_kind(std::string_view text, std::string_view field = "mapping");
std::string_view to_string(MappingKind kind);

// CPU lists in the kernel's cpulist syntax ("0-3,8,10-11"), as taskset and
// /sys/devices/system/cpu/online write them. parse keeps the listed order
// of items but expands ranges ascending; throws Error naming `field` on
// malformed text. format writes an ascending, deduplicated list.
std::vector<unsigned> parse_cpu_list(std::string_view text, std::string_view field = "cpus");
std::string format_cpu_list(std::vector<unsigned> cpus);

// What the caller asks for. Either (threads, kind, nodes) or an explicit
// CPU list.
struct TeamMapping {
    // Number of ranks; must be >= 1. With an explicit `cpus` list, 0 means
    // "one rank per listed CPU".
    unsigned threads = 0;
    MappingKind kind = MappingKind::contiguous;
    // K: use the first K nodes that have CPUs, in ascending OS index order
    // (memory-only nodes never count). 0 means all nodes with CPUs.
    unsigned nodes = 0;
    // Explicit CPU OS indices, rank r on cpus[r]. When non-empty, `kind`
    // is ignored and `nodes` must be 0.
    std::vector<unsigned> cpus{};
    // Explicit nodes (OS indices) whose CPUs the team runs on, laid out by
    // `kind` in ascending index order like the first-K rule (numactl's
    // --cpunodebind). When non-empty, `nodes` must be 0 and `cpus` empty;
    // every listed node must be in the machine and have CPUs.
    NodeSet node_set{};
};

// Where one rank runs.
struct RankPlace {
    unsigned rank = 0;
    unsigned cpu = 0;    // CPU OS index
    unsigned node = 0;   // OS index of the node holding `cpu`

    bool operator==(const RankPlace&) const = default;
};

// The decision: one place per rank, rank order. Plain data.
struct TeamLayout {
    std::vector<RankPlace> ranks;

    std::size_t size() const { return ranks.size(); }
    std::vector<unsigned> cpus() const;   // ascending, each once: the union of the ranks' CPUs
    NodeSet nodes() const;                // nodes that hold at least one rank

    bool operator==(const TeamLayout&) const = default;
};

// The nodes a mapping without an explicit CPU list uses: the first `nodes`
// (K) nodes that have CPUs, in ascending OS index order; all of them for
// K = 0. Throws Error("nodes", ...) when K exceeds the nodes with CPUs.
NodeSet team_nodes(const Machine& machine, unsigned nodes);
// The same for a whole mapping: its node_set when it names one (checked:
// Error("node_set", ...) for a node that is not in the machine or has no
// CPUs, and for a node_set combined with `nodes`), else the first-K rule
// above. plan_team refuses a node_set beside an explicit CPU list.
NodeSet team_nodes(const Machine& machine, const TeamMapping& mapping);

// One CPU of team_cpu_order(): its OS index and the position, in the
// per-node lists given, of the list it came from.
struct OrderedCpu {
    unsigned cpu = 0;
    std::size_t node = 0;

    bool operator==(const OrderedCpu&) const = default;
};

// The order in which a team without an explicit CPU list takes the CPUs
// of its nodes: `per_node` holds each node's usable CPUs, ascending, the
// nodes in the team's order. A core's hardware threads (Machine::cores();
// among its CPUs in `per_node`) come in rounds: every core's first one,
// then every core's second one, and so on, so that two ranks share a core
// only once every core has one (a memory-bound rank on a sibling runs at
// half speed or worse while another core idles; on a machine that numbers
// a core's threads next to each other, or puts them in a node's second
// half, filling CPUs in index order did exactly that).
//   contiguous: round by round, the first node's cores in order, then the
//     next node's;
//   scatter: round by round, the nodes dealt in turn, one core each, a node
//     whose cores are all taken in that round dropping out.
// Without SMT (one CPU per core) this is the node-by-node order of the
// CPUs, or the round-robin over the nodes.
std::vector<OrderedCpu> team_cpu_order(const Machine& machine, const std::vector<std::vector<unsigned>>& per_node,
                                       MappingKind kind);

// Pure and deterministic. Oversubscription is refused: two ranks never share
// a CPU, because a pinned team that time-slices a CPU makes every barrier
// wait for the slowest time slice. Throws Error naming the input:
//   threads == 0; threads larger than the CPUs of the chosen nodes;
//   nodes (K) larger than the number of nodes with CPUs;
//   a node_set node that is absent or has no CPUs, or a node_set with nodes or cpus;
//   an explicit CPU that is not in the machine, or listed twice;
//   an explicit list combined with `nodes`, or whose length differs from threads.
TeamLayout plan_team(const Machine& machine, const TeamMapping& mapping);

// What a rank sees while it runs inside Team::run().
class TeamContext {
public:
    unsigned rank() const { return place_.rank; }
    unsigned cpu() const { return place_.cpu; }     // the planned CPU
    unsigned node() const { return place_.node; }   // the planned node
    std::size_t size() const { return size_; }
    // Waits until every rank of the team has reached this barrier in this
    // run. Reusable any number of times per run. If another rank's work
    // threw, the barrier unwinds this rank too (run() then rethrows the
    // first exception) so a failing rank never leaves the others waiting.
    void barrier() const;

private:
    friend class Team;
    struct Sync;
    TeamContext(RankPlace place, std::size_t size, Sync* sync)
        : place_(place), size_(size), sync_(sync) {}
    RankPlace place_;
    std::size_t size_;
    Sync* sync_;
};

class Team {
public:
    // Plans the layout, then starts one thread per rank; each pins itself to
    // its CPU (sched_setaffinity through the os layer) before the
    // constructor returns. If any pin fails, every thread already started is
    // joined and Error("cpu N", ...) is thrown with the kernel's errno as
    // code(): no thread is left behind.
    Team(const Machine& machine, const TeamMapping& mapping);
    Team(const Machine& machine, const TeamMapping& mapping, os::Os& os);
    ~Team();   // joins every thread

    Team(const Team&) = delete;
    Team& operator=(const Team&) = delete;

    // Runs fn(ctx) on every rank's thread and returns when all have
    // finished. If some ranks throw, the first exception is rethrown here
    // after all ranks have stopped. One run at a time; calling run() from
    // inside the team's own work throws Error("run", ...).
    void run(const std::function<void(TeamContext&)>& fn);

    std::size_t size() const;
    const TeamLayout& layout() const;
    const Machine& machine() const;   // the machine the team was planned on

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace numaware
