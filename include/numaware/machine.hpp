// numaware/machine.hpp — the one description of a NUMA machine.
//
// The live runtime, the simulators and the emulated-machine harness all use
// this type. A Machine is plain data: build it from the live system, an
// hwloc XML file, a synthetic description or its own JSON, and every
// constructor validates it (see validate()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/nodeset.hpp"

namespace numaware {

// One cache object. `cpus` are the OS indices of the PUs that share it.
struct Cache {
    unsigned level = 0;            // 1, 2, 3 ...
    std::string type;              // "unified", "data", "instruction"
    std::uint64_t size_bytes = 0;
    unsigned line_bytes = 0;       // 0 when unknown
    std::vector<unsigned> cpus;

    bool operator==(const Cache&) const = default;
};

// One NUMA node. A node with no CPUs is a memory-only node (CXL, HBM/MCDRAM,
// NVM); it is a valid binding target but no thread can be local to it.
struct Node {
    unsigned os_index = 0;
    std::uint64_t memory_bytes = 0;
    std::vector<unsigned> cpus;    // PU OS indices, ascending
    // Memory tier: 0 is the default DRAM tier; larger is farther/slower
    // (CXL, NVM). HBM/MCDRAM nodes are tier 0 with kind "HBM"/"MCDRAM".
    int tier = 0;
    std::string kind = "DRAM";     // "DRAM", "HBM", "MCDRAM", "CXL", "NVM", ...
    // False when this process may not place memory here (the node is not
    // among its allowed memory nodes: a cgroup's cpuset.mems, a Slurm job's
    // or a container's limit) while some of its CPUs are allowed: the node
    // stays for those CPUs, and placement refuses it (check_placement_target();
    // memory_node_near() gives the nearest node that may hold their pages).
    bool memory_allowed = true;

    bool has_cpus() const { return !cpus.empty(); }
    // Placement may put pages here: it has memory, and this process may use it.
    bool holds_pages() const { return memory_allowed && memory_bytes > 0; }
    bool operator==(const Node&) const = default;
};

// What of the hardware a restricted process may not use, and who restricts
// it: Linux cgroup cpusets (Slurm jobs, containers: hwloc's allowed cpuset
// and nodeset), the process's CPU affinity (taskset, numactl
// --cpunodebind), or a description's allowed sets. Empty when the process
// may use the whole machine (Machine::restrict_to() fills it).
struct Restriction {
    std::vector<unsigned> cpus;   // CPUs left out, ascending
    NodeSet nodes;                // nodes left out: none of their CPUs and not their memory is allowed
    NodeSet memory;               // nodes kept for their allowed CPUs whose memory is not allowed
    NodeSet cpuless;              // nodes kept for their memory whose CPUs are all left out
    std::string by;               // who restricts, e.g. "this process's cpuset"

    bool empty() const { return cpus.empty() && nodes.empty() && memory.empty() && cpuless.empty(); }
    // One sentence per fact, e.g. "nodes 5-7 are left out: neither their
    // CPUs nor their memory are in this process's cpuset".
    std::vector<std::string> describe() const;
    bool operator==(const Restriction&) const = default;
};

// A square node-by-node matrix, indexed by node *position* in
// Machine::nodes (not OS index). Row = where the access comes from (the
// initiator's CPUs), column = the node whose memory is accessed.
template <class T>
using NodeMatrix = std::vector<std::vector<T>>;

class Machine {
public:
    // CPU OS indices are below this: 16 times the most CPUs Linux can be
    // built for (NR_CPUS, up to 8,192 with x86's MAXSMP). A larger index is
    // a malformed source; it would ask for affinity masks of gigabytes.
    static constexpr unsigned max_cpus = 1u << 17;

    std::string name;                       // free text, e.g. "4-node synthetic"
    std::vector<Node> nodes;                // ascending OS index
    std::vector<Cache> caches;              // may be empty
    // The cores with more than one hardware thread (SMT), as the source
    // lists them (hwloc's Core objects): each core's PUs, ascending, the
    // cores by their first PU. Empty when the source lists no such core
    // (no SMT, or a source that does not say: the key=value synthetic
    // form). Read through cores().
    std::vector<std::vector<unsigned>> smt_cores;
    NodeMatrix<unsigned> distances;         // SLIT, always present (defaulted 10/20 if the source has none)
    // Measured or given, node to node. An entry of 0 means "not known": a
    // memory-only node has no CPUs to measure from, and hwloc memory
    // attributes often cover only some pairs. Latency is in nanoseconds;
    // bandwidth in GB/s (10^9 bytes/s; hwloc's MiB/s are converted).
    std::optional<NodeMatrix<double>> latency_ns;
    std::optional<NodeMatrix<double>> bandwidth_gbps;
    // The base page size in bytes: the unit the kernel places and migrates,
    // and the granularity simulated memory is homed at. hwloc sources take
    // the first NUMA node's smallest page type; sources without one
    // (synthetic, JSON without the field, hwloc files that omit page types)
    // use 4096, the base page of x86-64 and of most arm64 kernels. A power
    // of two >= 1024 (validate()).
    std::uint64_t page_bytes = 4096;
    // What the sources left out because this process may not use it
    // (hwloc's allowed sets, the CPU affinity, allowed-cpus=/allowed-mems=).
    Restriction left_out;

    // ---- sources -------------------------------------------------------
    static Machine from_live();                          // hwloc on this system
    static Machine from_hwloc_xml(const std::string& path);
    // "nodes=4 cpus-per-node=2 mem-per-node=512M distances=10,21,31,31/21,10,21,31/..."
    // Keys (space separated, key=value): nodes= (required), cpus-per-node=
    // (default 1), mem-per-node= (default 512M), distances= (default 10
    // local / 20 remote), and per-node lists that override them:
    // cpus=2,2,0,0 (0 = memory-only node), mem=512M,512M,1G,1G,
    // tiers=0,0,1,1, kinds=DRAM,DRAM,CXL,CXL, plus latency= and bandwidth=
    // matrices in the distances syntax (rows split by '/', entries by ',').
    // page= sets the page size (default 4K). allowed-cpus= and
    // allowed-mems= (index lists, "0-3,8") restrict the machine to what a
    // process in such a cpuset may use (restrict_to()).
    // Node OS indices are 0..nodes-1; CPUs are numbered contiguously across
    // the nodes that have CPUs.
    // Or hwloc synthetic syntax ("hwloc:NUMANode:4 Core:2 PU:1") with
    // optional distances=/latency=/bandwidth= tokens after it.
    static Machine from_synthetic(std::string_view description);
    static Machine from_json(std::string_view json);
    // Dispatch on a SPEC as the CLI takes it: "live", a path ending in
    // .xml or .json, "@file" for a file containing any of these, or a
    // synthetic description.
    static Machine from_spec(std::string_view spec);

    std::string to_json() const;   // from_json(to_json()) == *this, exactly

    // The part of this machine a process may use whose allowed CPUs are
    // `cpus` and allowed memory nodes `allowed_memory`, restricted by `by`
    // ("this process's cpuset"). CPUs outside `cpus` leave their nodes; a
    // node left with no CPU stays as a memory-only node if its memory is
    // allowed, and leaves otherwise; a node whose memory is not allowed
    // stays for its allowed CPUs with memory_allowed false. Caches keep
    // their allowed CPUs; matrices their kept rows. What was left out is
    // added to left_out. Throws Error("cpus"/"memory nodes", ...) naming the
    // index when one is not in the machine, or when nothing would be left
    // to run on or to place memory on.
    Machine restrict_to(const std::vector<unsigned>& cpus, const NodeSet& allowed_memory, std::string_view by) const;

    // Throws Error naming the field: non-square or asymmetric matrices, a
    // diagonal entry that is not its row's minimum, duplicate OS indices,
    // CPUs listed on two nodes, a matrix whose size differs from the node
    // count, a page size that is not a power of two >= 1024. The SLIT must be positive, symmetric and minimal on the
    // diagonal (ties allowed); latency/bandwidth need only be square,
    // finite and >= 0, since measurements are noisy and may be one-sided.
    // Zero memory is allowed here; check_placement_target() refuses it.
    void validate() const;

    // ---- queries -------------------------------------------------------
    std::size_t node_count() const { return nodes.size(); }
    std::size_t cpu_count() const;
    // Position of the node with this OS index; throws Error("node", ...) if absent.
    std::size_t index_of(unsigned os_index) const;
    const Node& node(unsigned os_index) const { return nodes[index_of(os_index)]; }
    // OS index of the node holding CPU `cpu`; throws if no node holds it.
    unsigned node_of_cpu(unsigned cpu) const;
    // The cores: each a core's hardware threads (SMT siblings) among this
    // machine's CPUs, ascending, the cores in the order of their first CPU.
    // They are smt_cores when the source listed them; else the CPUs that
    // share a level-1 data or unified cache. A CPU that neither lists is a
    // core of its own, as every CPU is in a model with neither (the
    // synthetic key=value form). (An emulated x86 guest reports each
    // thread's own L1 beside its siblings: smt_cores is what tells.)
    std::vector<std::vector<unsigned>> cores() const;
    NodeSet all_nodes() const;
    NodeSet nodes_with_cpus() const;
    unsigned distance(unsigned from_os, unsigned to_os) const;
    // Throws Error("node N", "has zero memory ...") when a placement would
    // target a node that has no memory, or whose memory this process may
    // not use (naming who restricts it). `field` names the caller's input.
    void check_placement_target(unsigned os_index, std::string_view field) const;
    // Why CPU `cpu` or node `os_index`, not found here, is absent, for error
    // messages: left out by a restriction (naming who restricts, and what
    // is allowed) or not in this machine at all.
    std::string absent_cpu_reason(unsigned cpu) const;
    std::string absent_node_reason(unsigned os_index) const;
    // Nodes whose memory placement may target: memory > 0 and allowed.
    NodeSet memory_nodes() const;
    // The node nearest to node `os_index` (SLIT, then lower OS index) whose
    // memory placement may target: itself when it can. Throws when there
    // is none.
    unsigned memory_node_near(unsigned os_index) const;

    bool operator==(const Machine&) const = default;
};

// Size strings as used in synthetic specs: "512M", "2G", "4096", "1.5G".
std::uint64_t parse_size(std::string_view text, std::string_view field);
std::string format_size(std::uint64_t bytes);   // "512M", "2G", exact when possible

}  // namespace numaware
