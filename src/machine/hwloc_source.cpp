// machine/hwloc_source.cpp — Machines read through hwloc: the live system,
// an hwloc XML file, and hwloc's synthetic syntax.
//
// hwloc is used read-only, to describe; nothing here binds memory or threads
// (that is the os layer's job).
//
// Rules, stated once because every hwloc-based Machine follows them:
//  * Nodes: every NUMANode object, by OS index; memory = local_memory.
//  * CPUs of a node: hwloc gives a NUMA node the cpuset of its locality, so
//    a KNL's MCDRAM node and its DDR node share the same cpuset. Linux,
//    however, puts each CPU on exactly one node and reports HBM/MCDRAM/CXL
//    nodes as CPU-less. So a PU goes to the node that contains it in its
//    cpuset, preferring plain DRAM (no memory subtype, or "DRAM"), then
//    the smallest cpuset, then the lowest OS index. A node left without PUs
//    is memory-only.
//  * Kind and tier: hwloc names special memory by the node's subtype
//    ("MCDRAM", "HBM", "NVM", "SPM", "GPUMemory", "CXL-DRAM", ...); 2.10 and
//    later also name ordinary memory "DRAM" when they find heterogeneous
//    memory. No subtype or "DRAM" -> kind "DRAM", tier 0. "MCDRAM"/"HBM" ->
//    that kind, tier 0 (fast memory is not a slower tier). Any other subtype
//    -> kind = the subtype, tier 1. A CPU-less node without a subtype stays
//    "DRAM": hwloc gives no evidence that it is CXL, so we do not claim it.
//  * SLIT: among hwloc's NUMANode distance matrices that mean latency and
//    cover every node, the one named "NUMALatency" (the OS/firmware SLIT) is
//    taken first, then one that came from the OS, then the first. Matrices
//    over other object types (Packages, Cores, PUs, as in the 8-node AMD
//    file) are not SLITs and are ignored. No matrix -> 10 local / 20 remote.
//  * Latency and bandwidth: from hwloc memory attributes Latency (ns) and
//    Bandwidth (MiB/s, converted to GB/s = 10^9 bytes/s). Entry [i][j] is
//    the value for target node j from the most specific initiator whose CPUs
//    include all of node i's CPUs. Pairs without such a value, and rows of
//    memory-only nodes, are 0 ("not known"). A matrix with no known entry is
//    left absent.
//  * Page size: the smallest page type (hwloc sorts them by size) of the
//    first NUMA node that lists any; hwloc reads it from the kernel for the
//    live system. Files without page types get Machine's default, 4096.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <hwloc.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "machine/machine_internal.hpp"
#include "util/cpu_mask.hpp"
#include "util/text.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"

namespace numaware {

namespace {

struct TopologyDeleter {
    void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using Topology = std::unique_ptr<hwloc_topology, TopologyDeleter>;

struct BitmapDeleter {
    void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

// Disallowed CPUs and nodes are loaded too, so that restrict_to() can say
// what it left out; the allowed sets are applied by allowed_part().
Topology new_topology(const std::string& source) {
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0)
        throw Error(source, "hwloc_topology_init failed", errno != 0 ? errno : ENOMEM);
    Topology topo(raw);
    if (hwloc_topology_set_flags(raw, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0)
        throw Error(source, "hwloc refused to load disallowed objects", errno != 0 ? errno : EINVAL);
    return topo;
}

void load(hwloc_topology_t topo, const std::string& source) {
    if (hwloc_topology_load(topo) != 0) {
        const int err = errno;
        throw Error(source, std::string("hwloc could not load the topology: ") + std::strerror(err),
                    err != 0 ? err : EINVAL);
    }
}

// A NUMA node or PU whose OS index the model cannot hold: one without an
// index (a malformed file: hwloc then sets bit 2^32-1 of the complete
// cpuset, half a gigabyte, and the model would show CPU 4294967295; the
// bit stays when hwloc drops the PU itself), or one at or beyond the
// model's limit (NodeSet::max_nodes, Machine::max_cpus).
struct BadIndex {
    hwloc_obj_type_t type;   // HWLOC_OBJ_NUMANODE or HWLOC_OBJ_PU
    unsigned index;          // HWLOC_UNKNOWN_INDEX: none
};

std::optional<BadIndex> bad_index(hwloc_topology_t topo) {
    for (hwloc_obj_type_t type : {HWLOC_OBJ_NUMANODE, HWLOC_OBJ_PU}) {
        const unsigned limit = type == HWLOC_OBJ_PU ? Machine::max_cpus : NodeSet::max_nodes;
        for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, type, o)) != nullptr;)
            if (o->os_index == HWLOC_UNKNOWN_INDEX || o->os_index >= limit) return BadIndex{type, o->os_index};
    }
    // The complete sets also hold what hwloc dropped. hwloc_bitmap_last
    // gives an int, so bit 2^32-1 is asked for by name.
    const auto beyond = [](hwloc_const_bitmap_t set, unsigned limit) -> std::optional<unsigned> {
        if (set == nullptr || hwloc_bitmap_weight(set) < 0) return std::nullopt;
        if (hwloc_bitmap_isset(set, HWLOC_UNKNOWN_INDEX)) return HWLOC_UNKNOWN_INDEX;
        const int last = hwloc_bitmap_last(set);
        if (last >= 0 && static_cast<unsigned>(last) >= limit) return static_cast<unsigned>(last);
        return std::nullopt;
    };
    if (const auto i = beyond(hwloc_topology_get_complete_nodeset(topo), NodeSet::max_nodes))
        return BadIndex{HWLOC_OBJ_NUMANODE, *i};
    if (const auto i = beyond(hwloc_topology_get_complete_cpuset(topo), Machine::max_cpus))
        return BadIndex{HWLOC_OBJ_PU, *i};
    return std::nullopt;
}

std::string bad_index_reason(BadIndex bad) {
    const bool pu = bad.type == HWLOC_OBJ_PU;
    if (bad.index == HWLOC_UNKNOWN_INDEX)
        return std::string("hwloc reports a ") + (pu ? "PU" : "NUMA node") + " without an OS index";
    return std::string("hwloc reports ") + (pu ? "PU " : "NUMA node ") + std::to_string(bad.index) +
           ", out of range (limit " + std::to_string((pu ? Machine::max_cpus : NodeSet::max_nodes) - 1) + ")";
}

// hwloc 2.9 crashes (SIGSEGV in hwloc_bitmap_compare_first, from
// hwloc_topology_load) on some malformed XML files, with either of its XML
// importers: tests/fuzz/corpus/hwloc_xml/repro-hwloc-crashes-on-load, shown
// with hwloc alone by tests/fuzz/hwloc_xml_leak.c. It also leaks objects
// and bitmaps while refusing some others (the same program shows it). So an
// XML topology is first loaded in a child process, which says through a
// pipe whether hwloc loaded it or refused it, and at which step with which
// errno, or that it loaded a node or PU with a bad index. Such a file
// is then refused here with that reason, without loading it in this
// process (nor leaking into it, nor paying twice); a child that does not
// come back with an answer (a signal, a sanitizer's exit) means the file
// would crash this process, and it is refused by name. A failed fork or
// pipe leaves the in-process load as the only check.
struct ProbeAnswer {
    int step = 0;         // 0: loaded; 1: hwloc refused the buffer; 2: hwloc refused to load it; 3: init failed;
                          // 4: loaded, with a node or PU with a bad index
    int error = 0;        // errno after the refusing call; for 4, the object's hwloc type
    unsigned index = 0;   // for 4, its index
};

void probe_xml(const std::string& xml, const std::string& source) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return;
    }
    if (pid == 0) {
        // Die of the signal itself, without a core file, and without the
        // program's own handlers (or a sanitizer's report) in the copy.
        ::close(fds[0]);
        const rlimit no_core{0, 0};
        (void)::setrlimit(RLIMIT_CORE, &no_core);
        for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) (void)::signal(sig, SIG_DFL);
        ProbeAnswer a;
        hwloc_topology_t t = nullptr;
        if (hwloc_topology_init(&t) != 0 || hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) {
            a.step = 3;
        } else {
            errno = 0;
            if (hwloc_topology_set_xmlbuffer(t, xml.data(), static_cast<int>(xml.size() + 1)) != 0) {
                a = {1, errno};
            } else {
                errno = 0;
                if (hwloc_topology_load(t) != 0) a = {2, errno};
                else if (const auto bad = bad_index(t)) a = {4, static_cast<int>(bad->type), bad->index};
            }
        }
        // Answered after destroy, which this process will do too: a file
        // whose topology crashes it gets no answer.
        if (t != nullptr) hwloc_topology_destroy(t);
        const bool told = ::write(fds[1], &a, sizeof a) == static_cast<ssize_t>(sizeof a);
        ::_exit(told ? 0 : 4);
    }
    ::close(fds[1]);
    ProbeAnswer a;
    ssize_t got = 0;
    while ((got = ::read(fds[0], &a, sizeof a)) < 0 && errno == EINTR) {
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return;
    if (got == static_cast<ssize_t>(sizeof a)) {
        if (a.step == 1) throw Error(source, "hwloc rejected the XML", a.error != 0 ? a.error : EINVAL);
        if (a.step == 2)
            throw Error(source, std::string("hwloc could not load the topology: ") + std::strerror(a.error),
                        a.error != 0 ? a.error : EINVAL);
        if (a.step == 4) throw Error(source, bad_index_reason({static_cast<hwloc_obj_type_t>(a.error), a.index}));
        return;   // loaded, or hwloc would not start: the in-process load says why
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 4) return;   // no answer written: load here
    const std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                : "exit status " + std::to_string(WEXITSTATUS(status));
    throw Error(source, "hwloc crashed loading this XML (" + how + " in a probe process): the file is malformed");
}

std::string subtype_of(hwloc_obj_t node) { return node->subtype ? std::string(node->subtype) : std::string(); }

// hwloc's NUMA node subtypes: none (hwloc before 2.10, and ordinary
// memory), DRAM (2.10 and later name ordinary memory so once they find
// heterogeneous memory), HBM, MCDRAM (KNL), SPM, NVM, GPUMemory, CXL-DRAM,
// CXL-NVM. DRAM and the high-bandwidth kinds are tier 0; the others are
// farther or slower, tier 1.
void set_kind_and_tier(Node& node, const std::string& subtype) {
    if (subtype.empty() || subtype == "DRAM") {
        node.kind = "DRAM";
        node.tier = 0;
    } else if (subtype == "MCDRAM" || subtype == "HBM") {
        node.kind = subtype;
        node.tier = 0;
    } else {
        node.kind = subtype;
        node.tier = 1;
    }
}

// Which NUMANode (position in `objs`) owns each PU; see the rule above.
// Built in one pass over the nodes' cpusets (not nodes x PUs: 1,024 nodes
// of 8 PUs took seconds instrumented). A PU no node covers has none.
class PuHomes {
public:
    explicit PuHomes(const std::vector<hwloc_obj_t>& objs) : objs_(objs) {
        for (std::size_t i = 0; i < objs.size(); ++i) {
            const hwloc_const_cpuset_t set = objs[i]->cpuset;
            if (set == nullptr) continue;
            if (hwloc_bitmap_weight(set) < 0) {   // infinite (a malformed file): covers every PU
                everywhere_.push_back(i);
                continue;
            }
            for (int pu = hwloc_bitmap_first(set); pu >= 0; pu = hwloc_bitmap_next(set, pu)) {
                const auto [at, fresh] = home_.try_emplace(static_cast<unsigned>(pu), i);
                if (!fresh && better(i, at->second)) at->second = i;
            }
        }
    }
    // objs.size() for a PU that no node covers.
    std::size_t of(unsigned pu) const {
        const auto it = home_.find(pu);
        std::size_t best = it == home_.end() ? objs_.size() : it->second;
        for (std::size_t i : everywhere_)
            if (best == objs_.size() || better(i, best)) best = i;
        return best;
    }

private:
    // Ordinary memory: no subtype, or hwloc 2.10's "DRAM".
    static bool plain(hwloc_obj_t node) { return node->subtype == nullptr || std::strcmp(node->subtype, "DRAM") == 0; }
    bool better(std::size_t a, std::size_t b) const {
        const bool a_plain = plain(objs_[a]), b_plain = plain(objs_[b]);
        if (a_plain != b_plain) return a_plain;
        const int wa = hwloc_bitmap_weight(objs_[a]->cpuset), wb = hwloc_bitmap_weight(objs_[b]->cpuset);
        if (wa != wb) return wa < wb;
        return objs_[a]->os_index < objs_[b]->os_index;
    }
    const std::vector<hwloc_obj_t>& objs_;
    std::unordered_map<unsigned, std::size_t> home_;
    std::vector<std::size_t> everywhere_;
};

NodeMatrix<unsigned> read_slit(hwloc_topology_t topo, const std::vector<hwloc_obj_t>& objs) {
    const std::size_t n = objs.size();
    unsigned count = 0;
    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &count, nullptr,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 || count == 0)
        return detail::default_distances(n);
    std::vector<hwloc_distances_s*> all(count, nullptr);
    hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &count, all.data(), HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0);
    all.resize(std::min<std::size_t>(count, all.size()));

    auto rank = [&](hwloc_distances_s* d) {
        const char* name = hwloc_distances_get_name(topo, d);
        if (name && std::string(name) == "NUMALatency") return 0;
        if (d->kind & HWLOC_DISTANCES_KIND_FROM_OS) return 1;
        return 2;
    };
    hwloc_distances_s* chosen = nullptr;
    for (hwloc_distances_s* d : all) {
        if (d->nbobjs != n) continue;   // must cover every node to be the machine's SLIT
        if (!chosen || rank(d) < rank(chosen)) chosen = d;
    }
    NodeMatrix<unsigned> out = detail::default_distances(n);
    if (chosen) {
        // Map the matrix's object order onto Machine node positions.
        std::vector<std::size_t> pos(n);
        for (unsigned k = 0; k < n; ++k)
            pos[k] = static_cast<std::size_t>(
                std::find(objs.begin(), objs.end(), chosen->objs[k]) - objs.begin());
        for (unsigned a = 0; a < n; ++a)
            for (unsigned b = 0; b < n; ++b)
                out[pos[a]][pos[b]] = static_cast<unsigned>(chosen->values[a * n + b]);
    }
    for (hwloc_distances_s* d : all) hwloc_distances_release(topo, d);
    return out;
}

hwloc_const_cpuset_t initiator_cpuset(const hwloc_location& loc) {
    if (loc.type == HWLOC_LOCATION_TYPE_CPUSET) return loc.location.cpuset;
    return loc.location.object ? loc.location.object->cpuset : nullptr;
}

std::optional<NodeMatrix<double>> read_memattr(hwloc_topology_t topo, const std::vector<hwloc_obj_t>& objs,
                                               const std::vector<Node>& nodes, hwloc_memattr_id_t attr,
                                               double scale) {
    const std::size_t n = objs.size();
    NodeMatrix<double> m(n, std::vector<double>(n, 0.0));
    bool any = false;
    // Node i's CPUs as a bitmap, to test initiator coverage.
    std::vector<Bitmap> node_cpus;
    for (const Node& node : nodes) {
        Bitmap b(hwloc_bitmap_alloc());
        for (unsigned cpu : node.cpus) hwloc_bitmap_set(b.get(), cpu);
        node_cpus.push_back(std::move(b));
    }
    for (std::size_t j = 0; j < n; ++j) {
        unsigned count = 0;
        if (hwloc_memattr_get_initiators(topo, attr, objs[j], 0, &count, nullptr, nullptr) != 0 || count == 0)
            continue;
        std::vector<hwloc_location> inits(count);
        std::vector<hwloc_uint64_t> values(count);
        hwloc_memattr_get_initiators(topo, attr, objs[j], 0, &count, inits.data(), values.data());
        count = std::min<unsigned>(count, static_cast<unsigned>(inits.size()));
        for (std::size_t i = 0; i < n; ++i) {
            if (nodes[i].cpus.empty()) continue;   // nothing initiates from a memory-only node
            int best_weight = -1;
            for (unsigned k = 0; k < count; ++k) {
                hwloc_const_cpuset_t set = initiator_cpuset(inits[k]);
                if (!set || !hwloc_bitmap_isincluded(node_cpus[i].get(), set)) continue;
                const int w = hwloc_bitmap_weight(set);
                if (best_weight < 0 || w < best_weight) {
                    best_weight = w;
                    m[i][j] = static_cast<double>(values[k]) * scale;
                    any = true;
                }
            }
        }
    }
    if (!any) return std::nullopt;
    return m;
}

// The PUs of `housed` (sorted, each once) that `set` holds, in order: the
// cheaper of walking the set's bits or the PUs, so that caches x PUs is
// never paid (hwloc:3 51 47 1 1 1, 7,191 PUs and 14,382 caches, took 1.5 s
// in the release build and over 10 s instrumented when every cache looked
// at every PU).
std::vector<unsigned> housed_in(hwloc_const_bitmap_t set, const std::vector<unsigned>& housed) {
    std::vector<unsigned> out;
    const int weight = hwloc_bitmap_weight(set);   // -1: infinite (a malformed file)
    if (weight >= 0 && static_cast<std::size_t>(weight) <= housed.size()) {
        for (int pu = hwloc_bitmap_first(set); pu >= 0; pu = hwloc_bitmap_next(set, pu))
            if (std::binary_search(housed.begin(), housed.end(), static_cast<unsigned>(pu)))
                out.push_back(static_cast<unsigned>(pu));
    } else {
        for (unsigned pu : housed)
            if (hwloc_bitmap_isset(set, pu)) out.push_back(pu);
    }
    return out;
}

Machine machine_from_topology(hwloc_topology_t topo, std::string name) {
    Machine m;
    m.name = printable_ascii(name);

    std::vector<hwloc_obj_t> objs;
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o)) != nullptr;)
        objs.push_back(o);
    std::sort(objs.begin(), objs.end(), [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });
    if (objs.empty()) throw Error(m.name, "hwloc reports no NUMA node");
    // Refused before the per-PU work below, which grows with nodes x PUs
    // (validate() would refuse the machine anyway).
    if (objs.size() > NodeSet::max_nodes)
        throw Error("nodes", std::to_string(objs.size()) + " nodes exceed the limit of " +
                                 std::to_string(NodeSet::max_nodes));

    if (const auto bad = bad_index(topo)) throw Error(m.name, bad_index_reason(*bad));
    for (hwloc_obj_t o : objs) {
        Node node;
        node.os_index = o->os_index;
        node.memory_bytes = o->attr ? o->attr->numanode.local_memory : 0;
        set_kind_and_tier(node, subtype_of(o));
        m.nodes.push_back(std::move(node));
    }
    for (hwloc_obj_t o : objs) {
        if (o->attr && o->attr->numanode.page_types_len > 0 && o->attr->numanode.page_types[0].size > 0) {
            m.page_bytes = o->attr->numanode.page_types[0].size;
            break;
        }
    }
    std::vector<unsigned> homeless;   // PUs no NUMA node covers (files written without their nodes)
    std::vector<unsigned> housed;     // the others: what a cache's cpus may name
    const PuHomes homes(objs);
    for (hwloc_obj_t pu = nullptr; (pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu)) != nullptr;) {
        const std::size_t home = homes.of(pu->os_index);
        if (home < objs.size()) {
            m.nodes[home].cpus.push_back(pu->os_index);
            housed.push_back(pu->os_index);
        } else {
            homeless.push_back(pu->os_index);
        }
    }
    for (Node& node : m.nodes) std::sort(node.cpus.begin(), node.cpus.end());
    std::sort(housed.begin(), housed.end());
    housed.erase(std::unique(housed.begin(), housed.end()), housed.end());

    // Data and unified caches, then instruction caches, each by level. A
    // memory-side cache (KNL's MCDRAM in cache mode, which hwloc 1.x files
    // give as an L3 of subtype "MemorySideCache"; hwloc 2 as a MemCache,
    // not read here) caches a node's memory, not the CPUs' accesses: it is
    // not one of theirs.
    static constexpr hwloc_obj_type_t cache_types[] = {
        HWLOC_OBJ_L1CACHE,  HWLOC_OBJ_L2CACHE,  HWLOC_OBJ_L3CACHE,  HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
        HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE};
    for (hwloc_obj_type_t type : cache_types) {
        for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, type, o)) != nullptr;) {
            if (o->subtype != nullptr && std::string_view(o->subtype) == "MemorySideCache") continue;
            Cache c;
            c.level = o->attr->cache.depth;
            c.size_bytes = o->attr->cache.size;
            c.line_bytes = o->attr->cache.linesize;
            switch (o->attr->cache.type) {
                case HWLOC_OBJ_CACHE_DATA: c.type = "data"; break;
                case HWLOC_OBJ_CACHE_INSTRUCTION: c.type = "instruction"; break;
                default: c.type = "unified"; break;
            }
            if (o->cpuset) c.cpus = housed_in(o->cpuset, housed);
            if (!c.cpus.empty()) m.caches.push_back(std::move(c));
        }
    }

    // Cores with more than one hardware thread (Machine::smt_cores).
    for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, o)) != nullptr;) {
        if (o->cpuset == nullptr) continue;
        std::vector<unsigned> pus = housed_in(o->cpuset, housed);
        if (pus.size() > 1) m.smt_cores.push_back(std::move(pus));
    }
    std::sort(m.smt_cores.begin(), m.smt_cores.end());

    m.distances = read_slit(topo, objs);
    m.latency_ns = read_memattr(topo, objs, m.nodes, HWLOC_MEMATTR_ID_LATENCY, 1.0);
    // hwloc bandwidth is MiB/s; GB/s here means 10^9 bytes per second.
    m.bandwidth_gbps = read_memattr(topo, objs, m.nodes, HWLOC_MEMATTR_ID_BANDWIDTH, 1048576.0 / 1e9);
    if (!homeless.empty()) {
        // A malformed file may list one PU twice: it is one CPU.
        std::sort(homeless.begin(), homeless.end());
        homeless.erase(std::unique(homeless.begin(), homeless.end()), homeless.end());
        m.left_out.cpus = homeless;
        m.left_out.by = "the topology (no NUMA node holds them)";
    }
    m.validate();
    return m;
}

// The part of `full` (read from `topo`) that hwloc's allowed cpuset and
// nodeset allow; `by` names who restricts, for Restriction::by.
Machine allowed_part(hwloc_topology_t topo, Machine full, const std::string& by) {
    hwloc_const_cpuset_t cpuset = hwloc_topology_get_allowed_cpuset(topo);
    hwloc_const_nodeset_t nodeset = hwloc_topology_get_allowed_nodeset(topo);
    std::vector<unsigned> cpus;
    NodeSet mems;
    for (const Node& n : full.nodes) {
        for (unsigned cpu : n.cpus)
            if (hwloc_bitmap_isset(cpuset, cpu)) cpus.push_back(cpu);
        if (hwloc_bitmap_isset(nodeset, n.os_index)) mems.add(n.os_index);
    }
    if (cpus.size() == full.cpu_count() && mems == full.all_nodes()) return full;
    return full.restrict_to(cpus, mems, by);
}

// The part of `m` whose CPUs are in `affinity` (sorted); every node's
// memory stays as it is.
Machine affinity_part(Machine m, const std::vector<unsigned>& affinity, const std::string& by) {
    std::vector<unsigned> cpus;
    for (const Node& n : m.nodes)
        for (unsigned cpu : n.cpus)
            if (std::binary_search(affinity.begin(), affinity.end(), cpu)) cpus.push_back(cpu);
    if (cpus.size() == m.cpu_count()) return m;
    const NodeSet mems = m.memory_nodes();
    return m.restrict_to(cpus, mems, by);
}

// The CPUs of the process's affinity when the library was loaded: what
// taskset, numactl --cpunodebind or a batch system's task binding gave
// the program, before it (or numaware's teams) bound any thread.
std::optional<std::vector<unsigned>> start_affinity;
__attribute__((constructor)) void read_start_affinity() {
    std::vector<unsigned> cpus;
    const auto read = [](std::size_t bytes, cpu_set_t* set) { return sched_getaffinity(0, bytes, set) == 0 ? 0 : errno; };
    if (read_cpu_mask(read, cpus) != 0) return;
    start_affinity = std::move(cpus);
}

// The XML format version of an hwloc export, from its root element
// (<topology version="2.0">; hwloc 1.x wrote none: 1), or 0 when the text
// has no <topology> element to read it from (hwloc's load then says why).
unsigned xml_format_major(const std::string& xml) {
    const std::size_t root = xml.find("<topology");
    if (root == std::string::npos) return 0;
    const std::size_t end = xml.find('>', root);
    const std::string tag = xml.substr(root, end == std::string::npos ? std::string::npos : end - root);
    const std::size_t at = tag.find("version=\"");
    if (at == std::string::npos) return 1;
    unsigned major = 0;
    for (std::size_t i = at + 9; i < tag.size() && tag[i] >= '0' && tag[i] <= '9' && major < 1000; ++i)
        major = major * 10 + static_cast<unsigned>(tag[i] - '0');
    return major;
}

// An hwloc XML text, named `source` in errors and `name` in the machine.
Machine machine_from_xml(const std::string& xml, const std::string& source, const std::string& name) {
    // hwloc refuses a format newer than its own major version with EINVAL
    // alone (its reason goes nowhere unless HWLOC_XML_VERBOSE is set): say it.
    const unsigned readable = hwloc_get_api_version() >> 16;   // the loaded hwloc's major version
    if (const unsigned major = xml_format_major(xml); major > readable)
        throw Error(source, fmt::format("the file is in hwloc's XML format {}, which the hwloc {}.x loaded here "
                                        "cannot read (it reads formats 1 to {}): export it again with hwloc {}.x "
                                        "(lstopo-no-graphics --of xml FILE), or use numaware with a newer hwloc",
                                        major, readable, readable, readable),
                    EINVAL);
    probe_xml(xml, source);
    Topology topo = new_topology(source);
    if (hwloc_topology_set_xmlbuffer(topo.get(), xml.data(), static_cast<int>(xml.size() + 1)) != 0)
        throw Error(source, "hwloc rejected the XML", errno != 0 ? errno : EINVAL);
    load(topo.get(), source);
    return allowed_part(topo.get(), machine_from_topology(topo.get(), "hwloc XML " + name),
                        "the allowed sets recorded in " + name);
}

}  // namespace

namespace detail {

Machine machine_from_hwloc_xml_buffer(const std::string& xml, const std::string& name) {
    return machine_from_xml(xml, name, name);
}

Machine machine_from_hwloc_synthetic(const std::string& description) {
    const std::string field = "synthetic 'hwloc:" + description + "'";
    Topology topo = new_topology(field);
    if (hwloc_topology_set_synthetic(topo.get(), description.c_str()) != 0)
        throw Error(field, "hwloc rejected the synthetic description (expected e.g. "
                           "'hwloc:Package:2 NUMANode:1 Core:2 PU:1')");
    load(topo.get(), field);
    return machine_from_topology(topo.get(), "hwloc synthetic: " + description);
}

}  // namespace detail

namespace {

// hwloc's sysfs root: "/" unless HWLOC_FSROOT points its Linux backend
// elsewhere (a saved or made-up /sys and /proc, as hwloc's own tests use).
std::string sysfs_root() {
    const char* root = std::getenv("HWLOC_FSROOT");
    std::string r = root != nullptr && *root != '\0' ? root : "";
    while (!r.empty() && r.back() == '/') r.pop_back();
    return r;
}

// The numbers N of the entries prefixN in directory `dir` (cpuN, nodeN),
// ascending; nullopt when the directory cannot be opened.
std::optional<std::vector<unsigned>> numbered_entries(const std::string& dir, std::string_view prefix) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return std::nullopt;
    std::vector<unsigned> out;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name(e->d_name);
        if (name.size() > prefix.size() && name.size() < prefix.size() + 6 && name.substr(0, prefix.size()) == prefix &&
            name.find_first_not_of("0123456789", prefix.size()) == std::string_view::npos)
            out.push_back(static_cast<unsigned>(std::strtoul(std::string(name.substr(prefix.size())).c_str(), nullptr, 10)));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// Whether the system's node directory exists but lists no node. hwloc's
// Linux backend then stops the process (2.9: the assertion `nbnodes >= 1`
// in list_sysfsnode) where libgomp and numactl carry on: a sysfs that a
// container or sandbox masked with an empty directory. (A kernel without
// NUMA has no such directory, and hwloc reads it as one node.)
bool node_directory_is_empty(const std::string& root) {
    const auto nodes = numbered_entries(root + "/sys/devices/system/node", "node");
    return nodes && nodes->empty();
}

// Whether the system's CPU directory lists no CPU (no cpuN entry, or no
// directory): a container or sandbox that masked /sys/devices/system/cpu,
// or no sysfs at all. hwloc 2.9's Linux backend then prints "failed to
// find sysfs cpu topology directory, aborting linux discovery" on the
// program's stderr and finds no NUMA node and no memory size, although the
// node directory may still say both.
bool cpu_directory_lists_no_cpu(const std::string& root) {
    const auto cpus = numbered_entries(root + "/sys/devices/system/cpu", "cpu");
    return !cpus || cpus->empty();
}

// The CPUs of a kernel CPU list file ("0-3,8"), read with hwloc's parser;
// empty when the file cannot be read or lists none.
std::vector<unsigned> cpu_list_file(const std::string& path) {
    std::vector<unsigned> cpus;
    std::string text;
    try {
        text = std::string(trim(detail::read_text_file(path)));
    } catch (const Error&) {
        return cpus;
    }
    Bitmap set(hwloc_bitmap_alloc());
    if (text.empty() || set == nullptr || hwloc_bitmap_list_sscanf(set.get(), text.c_str()) != 0) return cpus;
    unsigned cpu = 0;
    hwloc_bitmap_foreach_begin(cpu, set.get()) {
        if (cpu < Machine::max_cpus) cpus.push_back(cpu);
    }
    hwloc_bitmap_foreach_end();
    return cpus;
}

// The CPUs a node directory-less machine has: the kernel's online list,
// else the start affinity, else CPUs 0..n-1.
std::vector<unsigned> online_cpus(const std::string& root) {
    std::vector<unsigned> cpus = cpu_list_file(root + "/sys/devices/system/cpu/online");
    if (cpus.empty() && start_affinity) cpus = *start_affinity;
    if (cpus.empty()) {
        const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
        for (unsigned c = 0; c < static_cast<unsigned>(n > 0 ? n : 1); ++c) cpus.push_back(c);
    }
    return cpus;
}

void set_base_page(Machine& m) {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page >= 1024 && (page & (page - 1)) == 0) m.page_bytes = static_cast<std::uint64_t>(page);
}

// The live system without NUMA information: one node 0 holding the online
// CPUs and the memory sysinfo() gives, with the base page of sysconf. Its
// name says why (`why`).
Machine one_node_machine(const std::string& root, const std::string& why) {
    Machine m;
    m.name = "live (one node: " + why + ")";
    Node node;
    node.os_index = 0;
    node.cpus = online_cpus(root);
    struct sysinfo info {};
    if (::sysinfo(&info) == 0) node.memory_bytes = static_cast<std::uint64_t>(info.totalram) * info.mem_unit;
    m.nodes.push_back(std::move(node));
    m.distances = {{10}};
    set_base_page(m);
    m.validate();
    return m;
}

// The live system from the node directory alone, for a masked CPU
// directory (cpu_directory_lists_no_cpu), read as hwloc's Linux backend
// reads it: per nodeN, its CPUs (cpulist), its memory (meminfo's MemTotal,
// kB) and its SLIT row (distance). A row that is missing or malformed
// gives the default distances for all; a machine whose nodes list no CPU
// gets the online CPUs on its first node. Caches, memory tiers and the
// cgroup's allowed sets are not read (hwloc reads those); the name says
// where the machine came from.
Machine node_directory_machine(const std::string& root, const std::vector<unsigned>& ids) {
    Machine m;
    m.name = "live (from /sys/devices/system/node: /sys/devices/system/cpu lists no CPU)";
    NodeMatrix<unsigned> slit;
    bool slit_ok = true;
    for (unsigned id : ids) {
        const std::string dir = root + "/sys/devices/system/node/node" + std::to_string(id);
        Node node;
        node.os_index = id;
        node.cpus = cpu_list_file(dir + "/cpulist");
        try {
            const std::string info = detail::read_text_file(dir + "/meminfo");
            const std::size_t at = info.find("MemTotal:");
            if (at != std::string::npos) node.memory_bytes = std::strtoull(info.c_str() + at + 9, nullptr, 10) * 1024;
        } catch (const Error&) {
        }
        std::vector<unsigned> row;
        try {
            for (std::string_view w : split(trim(detail::read_text_file(dir + "/distance")), ' ')) {
                if (w.empty()) continue;
                if (w.size() > 3 || w.find_first_not_of("0123456789") != std::string_view::npos) {
                    slit_ok = false;
                    break;
                }
                row.push_back(static_cast<unsigned>(std::strtoul(std::string(w).c_str(), nullptr, 10)));
            }
        } catch (const Error&) {
            slit_ok = false;
        }
        if (row.size() != ids.size()) slit_ok = false;
        slit.push_back(std::move(row));
        m.nodes.push_back(std::move(node));
    }
    if (std::none_of(m.nodes.begin(), m.nodes.end(), [](const Node& n) { return n.has_cpus(); }))
        m.nodes.front().cpus = online_cpus(root);
    set_base_page(m);
    // Distances the model refuses (a diagonal that is not the smallest, say)
    // are dropped for the defaults, as hwloc drops a matrix it refuses.
    if (slit_ok) {
        m.distances = std::move(slit);
        try {
            m.validate();
            return m;
        } catch (const Error&) {
        }
    }
    m.distances = detail::default_distances(ids.size());
    m.validate();
    return m;
}

// The live system as hwloc reads it, restricted to hwloc's allowed sets
// (the cgroup cpuset: Slurm, containers).
Machine live_from_hwloc() {
    Topology topo = new_topology("live");
    load(topo.get(), "live");
    const char* host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo.get()), "HostName");
    // A guest without a host name reports "(none)"; say nothing then.
    const bool named = host != nullptr && *host != '\0' && std::string_view(host) != "(none)";
    Machine full = machine_from_topology(topo.get(), std::string("live") + (named ? std::string(" (") + host + ")" : ""));
    return allowed_part(topo.get(), std::move(full), "this process's cpuset");
}

}  // namespace

Machine Machine::from_live() {
    // Two restrictions, each named only when it leaves something out: the
    // cgroup cpuset (Slurm, containers), then the affinity the process
    // started with (taskset, numactl --cpunodebind, a job's task binding).
    const std::string root = sysfs_root();
    Machine allowed = [&root] {
        if (cpu_directory_lists_no_cpu(root)) {
            const std::vector<unsigned> ids =
                numbered_entries(root + "/sys/devices/system/node", "node").value_or(std::vector<unsigned>{});
            if (ids.empty()) return one_node_machine(root, "/sys/devices/system/cpu lists no CPU and /sys/devices/system/node lists none");
            return node_directory_machine(root, ids);
        }
        if (node_directory_is_empty(root)) return one_node_machine(root, "/sys/devices/system/node lists none");
        return live_from_hwloc();
    }();
    if (!start_affinity) return allowed;
    return affinity_part(std::move(allowed), *start_affinity, "this process's CPU affinity");
}

Machine Machine::from_hwloc_xml(const std::string& path) {
    // Read the file ourselves so a bad path is reported with its name and
    // errno rather than as a generic hwloc failure.
    const std::string xml = detail::read_text_file(path);
    const std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    return machine_from_xml(xml, "machine file '" + path + "'", base);
}

}  // namespace numaware
