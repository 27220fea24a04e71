// sim/memory/rodinia_bfs.cpp — BFS: frontier-based breadth-first search
// over a graph in CSR, the pattern of Rodinia's BFS.
//
// Source of the algorithm: P. Harish, P. J. Narayanan, "Accelerating large
// graph algorithms on the GPU using CUDA", HiPC 2007, the BFS that Rodinia
// (Che et al., IISWC 2009) ports to OpenMP: per level, one parallel loop
// over every node expands the nodes of the frontier mask (each unvisited
// neighbour gets its cost and a flag in the updating mask), and a second
// one turns the updating mask into the next frontier, marks it visited and
// raises the shared "stop" flag; the search ends after the first level
// that updates nothing.
//
// Modelled: the graph in CSR (per node its first edge and degree, 8 B; per
// edge the neighbour, 4 B), the masks and the visited flags of 1 B and the
// costs of 4 B; both loops cut with static_block over the nodes. Expand,
// per node: load its mask byte; for a frontier node clear it, load its
// degree and first edge, then per edge the neighbour (the first edge's
// address comes from the first-edge load: dependent) and the neighbour's
// visited byte (its address is the neighbour just loaded: dependent); for
// an unvisited neighbour load the node's cost, store the neighbour's cost
// and its updating byte. Update, per node: load the updating byte; for a
// node of the next level set its mask and visited bytes, clear the
// updating byte and store the shared stop flag. The search is run on the
// host first (levels from node 0), so each phase emits exactly the
// accesses of its level, the same for any thread count. Init: each thread
// writes its nodes of every per-node array and its nodes' edges; thread 0
// the stop flag. The graph: each node's degree uniform in
// [1, 2 × mean - 1], neighbours uniform over the nodes, seeded.
// Left out: reading the graph file (the init phase stands for it), the
// per-level copy of the stop flag to the host of the GPU version, the
// final write of the costs.
// Accesses per level l (frontier F_l, next level F_{l+1}): 2 × nodes +
// Σ_{i ∈ F_l} (3 + 2 × degree(i) + 3 × |edges of i into F_{l+1}|) +
// 4 × |F_{l+1}|, for l = 0 .. the deepest level.
#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "sim/memory/arrays.hpp"
#include "sim/memory/kernel_common.hpp"
#include "sim/memory/loop_kernel.hpp"
#include "sim/memory/rodinia_kernels.hpp"

namespace numaware::sim::memory::rodinia {

using detail::base_of;
using detail::concat;
using detail::each;
using detail::Emitter;
using detail::fill_bytes;
using detail::Range;
using detail::require;
using detail::Share;
using detail::static_block;

BfsSize bfs_size(char cls) {
    BfsSize s;
    if (cls == 'S') {
        s.nodes = std::uint64_t{1} << 12;
        s.mean_degree = 6;
    } else {
        // Edges 2^19 × 13 × 4 B = 26 MiB, the per-node arrays 2^19 × 15 B = 7.5 MiB.
        s.nodes = std::uint64_t{1} << 19;
        s.mean_degree = 13;
    }
    return s;
}

BfsGraph bfs_graph(const BfsSize& s) {
    BfsGraph g;
    std::mt19937_64 rng(s.seed);
    g.first.assign(s.nodes + 1, 0);
    for (std::uint64_t i = 0; i < s.nodes; ++i) g.first[i + 1] = g.first[i] + 1 + detail::draw_below(rng, 2 * s.mean_degree - 1);
    g.edges.resize(g.first[s.nodes]);
    for (std::uint32_t& e : g.edges) e = static_cast<std::uint32_t>(detail::draw_below(rng, s.nodes));
    return g;
}

namespace {

enum Array : unsigned { graph_nodes, graph_edges, graph_mask, updating_mask, visited, cost, stop_flag };
enum Pc : std::uint32_t { pc_init = 100, pc_expand = 200, pc_update = 300 };

std::uint64_t byte_at(Array a, std::uint64_t i) { return base_of(a) + i; }
std::uint64_t u32_at(Array a, std::uint64_t i) { return base_of(a) + i * 4; }
std::uint64_t node_at(std::uint64_t i) { return base_of(graph_nodes) + i * 8; }   // first edge at +0, degree at +4

struct Search {
    BfsGraph g;
    std::vector<std::int32_t> level;   // -1: unreached
    std::int32_t deepest = 0;
};

std::shared_ptr<const Search> search(const BfsSize& s) {
    auto out = std::make_shared<Search>();
    out->g = bfs_graph(s);
    out->level.assign(s.nodes, -1);
    std::deque<std::uint32_t> q{0};
    out->level[0] = 0;
    while (!q.empty()) {
        const std::uint32_t u = q.front();
        q.pop_front();
        for (std::uint64_t e = out->g.first[u]; e < out->g.first[u + 1]; ++e) {
            const std::uint32_t v = out->g.edges[e];
            if (out->level[v] < 0) {
                out->level[v] = out->level[u] + 1;
                out->deepest = std::max(out->deepest, out->level[v]);
                q.push_back(v);
            }
        }
    }
    return out;
}

class Bfs final : public detail::LoopKernel {
public:
    Bfs(const BfsSize& s, std::string name) : LoopKernel(std::move(name)) {
        const std::shared_ptr<const Search> bfs = search(s);
        const std::uint64_t n = s.nodes;
        constexpr std::uint64_t nodes_per_segment = 1024;
        add_loop("init", false, [bfs, n](unsigned r, unsigned t) {
            const Range mine = static_block(n, t, r);
            std::vector<Share> parts;
            parts.push_back(fill_bytes(node_at(mine.begin), node_at(mine.end), pc_init));
            parts.push_back(fill_bytes(u32_at(graph_edges, bfs->g.first[mine.begin]),
                                       u32_at(graph_edges, bfs->g.first[mine.end]), pc_init + 1));
            for (Array a : {graph_mask, updating_mask, visited})
                parts.push_back(fill_bytes(byte_at(a, mine.begin), byte_at(a, mine.end), pc_init + 2 + a));
            parts.push_back(fill_bytes(u32_at(cost, mine.begin), u32_at(cost, mine.end), pc_init + 10));
            if (r == 0) parts.push_back(fill_bytes(byte_at(stop_flag, 0), byte_at(stop_flag, 1), pc_init + 11));
            return concat(std::move(parts));
        });
        // Iteration k expands the frontier of level k - 1 and makes level k
        // the next one; the last finds nothing new and ends the search.
        for (std::int32_t k = 1; k <= bfs->deepest + 1; ++k) {
            const std::string pre = fmt::format("iter{}:", k);
            add_loop(pre + "expand", true, [bfs, n, k](unsigned r, unsigned t) {
                return each(static_block(n, t, r), nodes_per_segment, [bfs, k](std::uint64_t i, Emitter& e) {
                    e.load(byte_at(graph_mask, i), pc_expand, 2, 1);
                    if (bfs->level[i] != k - 1) return;
                    e.store(byte_at(graph_mask, i), pc_expand + 1, 1, 1);
                    e.load(node_at(i) + 4, pc_expand + 2, 1, 4);
                    e.load(node_at(i), pc_expand + 3, 0, 4);
                    for (std::uint64_t x = bfs->g.first[i]; x < bfs->g.first[i + 1]; ++x) {
                        if (x == bfs->g.first[i]) e.load_indirect(u32_at(graph_edges, x), pc_expand + 4, 2, 4);
                        else e.load(u32_at(graph_edges, x), pc_expand + 4, 2, 4);
                        const std::uint32_t id = bfs->g.edges[x];
                        e.load_indirect(byte_at(visited, id), pc_expand + 5, 1, 1);
                        // Unvisited now means in the next level: visited holds levels up to k - 1.
                        if (bfs->level[id] != k) continue;
                        e.load(u32_at(cost, i), pc_expand + 6, 1, 4);
                        e.store(u32_at(cost, id), pc_expand + 7, 1, 4);
                        e.store(byte_at(updating_mask, id), pc_expand + 8, 0, 1);
                    }
                });
            });
            add_loop(pre + "update", true, [bfs, n, k](unsigned r, unsigned t) {
                return each(static_block(n, t, r), nodes_per_segment, [bfs, k](std::uint64_t i, Emitter& e) {
                    e.load(byte_at(updating_mask, i), pc_update, 2, 1);
                    if (bfs->level[i] != k) return;
                    e.store(byte_at(graph_mask, i), pc_update + 1, 1, 1);
                    e.store(byte_at(visited, i), pc_update + 2, 0, 1);
                    e.store(byte_at(updating_mask, i), pc_update + 3, 0, 1);
                    e.store(byte_at(stop_flag, 0), pc_update + 4, 0, 1);
                });
            });
        }
    }
};

}  // namespace

std::unique_ptr<Workload> make_bfs(const BfsSize& s, std::string name) {
    require(s.nodes >= 2 && s.nodes <= (std::uint64_t{1} << 26), name, "nodes must be 2 to 2^26");
    require(s.mean_degree >= 1 && s.mean_degree <= 64, name, "mean_degree must be 1 to 64");
    return std::make_unique<Bfs>(s, std::move(name));
}

}  // namespace numaware::sim::memory::rodinia
