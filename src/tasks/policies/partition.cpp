// src/tasks/policies/partition.cpp — task-graph partitioning with Scotch,
// and with METIS when a second balance constraint is given.
//
// Two constraints (PartitionProblem::second_weight, nothing fixed): METIS's
// multi-constraint k-way partition (METIS_PartGraphKway, ncon = 2, both
// constraints within 1 + imbalance), then the same refinement pass, which
// keeps both loads within their limits. METIS minimises the edge cut
// without the distances; the refinement then weighs the cut by them.
//
// Target architecture: a complete graph on the parts whose edge weights
// are the SLIT distances between them, turned into a decomposition-defined
// architecture by SCOTCH_archBuild2 (terminal domains are the target
// vertices 0..parts-1, which the mapping returns). Scotch then maps the
// window so that heavy edges are kept within a part, or else between near
// parts. Strategy: SCOTCH_stratGraphMapBuild(SCOTCH_STRATBALANCE, parts,
// imbalance). Fixed vertices use SCOTCH_graphMapFixed. SCOTCH_STRATDEFAULT
// gave the same partitions on free task graphs but, with fixed vertices,
// ignored their edges: 64 tasks, each tied to one of two fixed vertices,
// were split with about half of those edges cut (see the unit test
// PartitionFollowsFixedVertices); the balance strategy cuts none with 64
// tasks but still a quarter to a third with 16 or 32. So Scotch's mapping
// is followed by a greedy refinement pass of our own (refine(): moves,
// then pairwise swaps, each only when it lowers the distance-weighted cut
// and keeps every part within the imbalance or Scotch's own largest load).
//
// Reproducibility: every call makes its own SCOTCH_Context with one thread
// (SCOTCH_contextThreadSpawn(ctx, 1)), a private random state
// (SCOTCH_contextRandomClone) seeded from the problem's seed and reset, and
// the deterministic option set, and binds both graphs to it (the target's
// too: SCOTCH_archBuild2 decomposes it). Scotch's
// process-global random state is never used or reset, so concurrent calls
// from different runtimes neither race nor perturb each other.
//
// Scotch numbers are 32-bit here; vertex and edge weights (bytes) are
// divided by a common factor so that their sums, times the largest
// distance, stay below 2^30. Each weight stays at least 1.
#include "partition.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <string>

#include "numaware/error.hpp"

// scotch.h needs the stdio and stdint types declared first.
#include "scotch.h"
#include <metis.h>

namespace numaware::tasks::policy_detail {
namespace {

constexpr std::uint64_t weight_limit = std::uint64_t{1} << 30;

[[noreturn]] void fail(const std::string& what) { throw Error("partition", "Scotch " + what + " failed"); }

// RAII holders: every Scotch object is exited exactly once.
struct GraphHolder {
    SCOTCH_Graph g;
    bool live = false;
    GraphHolder() {
        if (SCOTCH_graphInit(&g) != 0) fail("graphInit");
        live = true;
    }
    ~GraphHolder() {
        if (live) SCOTCH_graphExit(&g);
    }
    GraphHolder(const GraphHolder&) = delete;
    GraphHolder& operator=(const GraphHolder&) = delete;
};
struct ArchHolder {
    SCOTCH_Arch a;
    ArchHolder() {
        if (SCOTCH_archInit(&a) != 0) fail("archInit");
    }
    ~ArchHolder() { SCOTCH_archExit(&a); }
    ArchHolder(const ArchHolder&) = delete;
    ArchHolder& operator=(const ArchHolder&) = delete;
};
struct StratHolder {
    SCOTCH_Strat s;
    StratHolder() {
        if (SCOTCH_stratInit(&s) != 0) fail("stratInit");
    }
    ~StratHolder() { SCOTCH_stratExit(&s); }
    StratHolder(const StratHolder&) = delete;
    StratHolder& operator=(const StratHolder&) = delete;
};
struct ContextHolder {
    SCOTCH_Context c;
    ContextHolder() {
        if (SCOTCH_contextInit(&c) != 0) fail("contextInit");
    }
    ~ContextHolder() { SCOTCH_contextExit(&c); }
    ContextHolder(const ContextHolder&) = delete;
    ContextHolder& operator=(const ContextHolder&) = delete;
};

// A compressed sparse row graph in Scotch's types.
struct Csr {
    std::vector<SCOTCH_Num> verttab, velotab, edgetab, edlotab;
};

void build(GraphHolder& graph, Csr& csr) {
    const auto n = static_cast<SCOTCH_Num>(csr.verttab.size() - 1);
    const auto m = static_cast<SCOTCH_Num>(csr.edgetab.size());
    if (SCOTCH_graphBuild(&graph.g, 0, n, csr.verttab.data(), nullptr,
                          csr.velotab.empty() ? nullptr : csr.velotab.data(), nullptr, m,
                          csr.edgetab.empty() ? nullptr : csr.edgetab.data(),
                          csr.edlotab.empty() ? nullptr : csr.edlotab.data()) != 0)
        fail("graphBuild");
}

SCOTCH_Num scaled(std::uint64_t w, std::uint64_t divisor) {
    return static_cast<SCOTCH_Num>(std::max<std::uint64_t>(1, w / divisor));
}

// Greedy refinement of Scotch's mapping, on the same scaled weights. The
// cost of a vertex in part q is the sum, over its edges, of edge weight
// times the distance between q and the other end's part (0 within a
// part). A pass moves each free vertex to its cheapest part when that
// part's load stays within `limit`, then, for every pair of parts, swaps
// the free vertices that gain most from changing sides, best first, while
// a swap still gains and keeps both loads within `limit`. Scotch 7 leaves
// vertices tied to a fixed vertex on the wrong side in small graphs (see
// the header of this file); the passes repair that and never raise the cost.
void refine(const Csr& g, const std::vector<int>& fixed, const std::vector<std::vector<unsigned>>& distance,
            double imbalance, std::vector<unsigned>& part, const std::vector<std::uint64_t>& second = {}) {
    // Every weight is an integer and every sum of weight times distance
    // stays below 2^30 (the scaling above), so loads, costs and gains are
    // exact in 64-bit integers; a load limit only matters as the largest
    // integer load within it, its floor.
    const std::size_t n = part.size(), k = distance.size();
    auto is_fixed = [&](std::size_t v) { return !fixed.empty() && fixed[v] >= 0; };
    std::vector<std::int64_t> load(k, 0), load2(k, 0);
    std::int64_t total = 0, total2 = 0;
    auto w2 = [&](std::size_t v) { return second.empty() ? std::int64_t{0} : static_cast<std::int64_t>(second[v]); };
    for (std::size_t v = 0; v < n; ++v) {
        load[part[v]] += g.velotab[v];
        total += g.velotab[v];
        load2[part[v]] += w2(v);
        total2 += w2(v);
    }
    auto cap = [&](std::int64_t sum, const std::vector<std::int64_t>& loads) {
        const long double even = static_cast<long double>(sum) / static_cast<long double>(k) *
                                 (1 + static_cast<long double>(imbalance));
        return std::max(static_cast<std::int64_t>(std::floor(even)), *std::max_element(loads.begin(), loads.end()));
    };
    const std::int64_t limit = cap(total, load), limit2 = cap(total2, load2);
    auto dist = [&](std::size_t a, std::size_t b) -> std::int64_t { return a == b ? 0 : distance[a][b]; };
    std::vector<std::int64_t> cost(n * k);
    auto vertex_cost = [&](std::size_t v) {
        std::int64_t* c = &cost[v * k];
        std::fill(c, c + k, 0);
        for (auto e = g.verttab[v]; e < g.verttab[v + 1]; ++e) {
            const std::int64_t w = g.edlotab[static_cast<std::size_t>(e)];
            const unsigned other = part[static_cast<std::size_t>(g.edgetab[static_cast<std::size_t>(e)])];
            for (std::size_t q = 0; q < k; ++q)
                if (q != other) c[q] += w * distance[q][other];
        }
    };
    auto move = [&](std::size_t v, unsigned q) {
        load[part[v]] -= g.velotab[v];
        load[q] += g.velotab[v];
        load2[part[v]] -= w2(v);
        load2[q] += w2(v);
        part[v] = q;
    };
    constexpr int max_passes = 8;
    std::vector<std::pair<std::int64_t, std::size_t>> from_a, from_b;   // (gain of the move, vertex)
    for (int pass = 0; pass < max_passes; ++pass) {
        bool changed = false;
        for (std::size_t v = 0; v < n; ++v) {
            if (is_fixed(v)) continue;
            vertex_cost(v);
            const std::int64_t w = g.velotab[v];
            unsigned best = part[v];
            for (std::size_t q = 0; q < k; ++q)
                if (cost[v * k + q] < cost[v * k + best] && load[q] + w <= limit && load2[q] + w2(v) <= limit2)
                    best = static_cast<unsigned>(q);
            if (best != part[v]) {
                move(v, best);
                changed = true;
            }
        }
        for (std::size_t v = 0; v < n; ++v) vertex_cost(v);
        // The free vertices of each part (a vertex a swap moves is added to
        // its new part's list; entries whose part changed are skipped), so
        // a pass over the part pairs costs O(k n), not O(k^2 n).
        std::vector<std::vector<std::size_t>> members(k);
        for (std::size_t v = 0; v < n; ++v)
            if (!is_fixed(v)) members[part[v]].push_back(v);
        for (unsigned a = 0; a < k; ++a)
            for (unsigned b = a + 1; b < k; ++b) {
                from_a.clear();
                from_b.clear();
                for (std::size_t v : members[a])
                    if (part[v] == a) from_a.emplace_back(cost[v * k + a] - cost[v * k + b], v);
                for (std::size_t v : members[b])
                    if (part[v] == b) from_b.emplace_back(cost[v * k + b] - cost[v * k + a], v);
                if (from_a.empty() || from_b.empty()) continue;
                // Only candidates that some vertex of the other side could
                // pair with: a swap needs gain(u) + gain(v) > 0, so a gain
                // of at most -(the other side's best gain) is never reached
                // before the sweep below stops (dropping those shortens the
                // sorts and changes no swap).
                const auto best_of = [](const auto& list) {
                    return std::max_element(list.begin(), list.end())->first;
                };
                const std::int64_t best_a = best_of(from_a), best_b = best_of(from_b);
                std::erase_if(from_a, [&](const auto& x) { return x.first <= -best_b; });
                std::erase_if(from_b, [&](const auto& x) { return x.first <= -best_a; });
                auto by_gain = [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; };
                std::sort(from_a.begin(), from_a.end(), by_gain);
                std::sort(from_b.begin(), from_b.end(), by_gain);
                for (std::size_t i = 0; i < std::min(from_a.size(), from_b.size()); ++i) {
                    if (from_a[i].first + from_b[i].first <= 0) break;
                    const std::size_t u = from_a[i].second, v = from_b[i].second;
                    if (part[u] != a || part[v] != b) continue;   // listed twice, already swapped
                    // Exact gain now (earlier swaps and the u-v edge change it).
                    vertex_cost(u);
                    vertex_cost(v);
                    std::int64_t uv = 0;
                    for (auto e = g.verttab[u]; e < g.verttab[u + 1]; ++e)
                        if (static_cast<std::size_t>(g.edgetab[static_cast<std::size_t>(e)]) == v)
                            uv += g.edlotab[static_cast<std::size_t>(e)];
                    const std::int64_t gain = (cost[u * k + a] - cost[u * k + b]) + (cost[v * k + b] - cost[v * k + a]) -
                                              2 * uv * dist(a, b);
                    const std::int64_t wu = g.velotab[u], wv = g.velotab[v];
                    if (gain <= 0 || load[a] - wu + wv > limit || load[b] - wv + wu > limit) continue;
                    if (load2[a] - w2(u) + w2(v) > limit2 || load2[b] - w2(v) + w2(u) > limit2) continue;
                    move(u, b);
                    move(v, a);
                    members[b].push_back(u);
                    members[a].push_back(v);
                    changed = true;
                }
            }
        if (!changed) break;
    }
}

}  // namespace

std::vector<unsigned> partition_graph(const PartitionProblem& p) {
    const std::size_t n = p.vertex_weight.size();
    const std::size_t k = p.distance.size();
    if (k == 0) throw Error("partition", "needs at least 1 part, got 0");
    for (const auto& row : p.distance)
        if (row.size() != k) throw Error("partition", "distance matrix must be " + std::to_string(k) + " x " + std::to_string(k));
    if (n > static_cast<std::size_t>(std::numeric_limits<SCOTCH_Num>::max() / 4))
        throw Error("partition", "window of " + std::to_string(n) + " tasks is too large for Scotch");
    if (!p.fixed.empty() && p.fixed.size() != n)
        throw Error("partition", "fixed must have one entry per vertex (" + std::to_string(n) + "), got " +
                                     std::to_string(p.fixed.size()));
    for (int f : p.fixed)
        if (f < -1 || f >= static_cast<int>(k))
            throw Error("partition", "fixed part " + std::to_string(f) + " is outside [-1, " + std::to_string(k) + ")");
    for (const auto& e : p.edges)
        if (e.a >= n || e.b >= n) throw Error("partition", "edge names vertex outside [0, " + std::to_string(n) + ")");
    if (!p.second_weight.empty() && p.second_weight.size() != n)
        throw Error("partition", "second_weight must have one entry per vertex (" + std::to_string(n) + "), got " +
                                     std::to_string(p.second_weight.size()));

    std::vector<unsigned> parts(n, 0);
    if (n == 0) return parts;
    if (k == 1) return parts;

    // The target is an undirected graph (Scotch checks that its arcs pair
    // up) and a cut edge's bytes are not given a direction: an asymmetric
    // SLIT (validate.cpp) enters as the mean of its two directions, rounded
    // up, which leaves a symmetric one as it is.
    std::vector<std::vector<unsigned>> distance = p.distance;
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j)
            distance[i][j] = static_cast<unsigned>(
                (std::uint64_t{p.distance[i][j]} + std::uint64_t{p.distance[j][i]} + 1) / 2);

    unsigned max_distance = 1;
    for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j)
            if (i != j) max_distance = std::max(max_distance, distance[i][j]);

    // ---- source graph: symmetric arcs, summed, no self loops ----
    struct Arc {
        std::uint32_t from, to;
        std::uint64_t bytes;
    };
    // In (from, to) order: counted into one bucket per vertex (linear),
    // then each vertex's few arcs sorted by `to`.
    std::vector<std::size_t> first(n + 1, 0);
    for (const auto& e : p.edges)
        if (e.a != e.b) {
            ++first[e.a + 1];
            ++first[e.b + 1];
        }
    for (std::size_t v = 0; v < n; ++v) first[v + 1] += first[v];
    std::vector<Arc> arcs(first[n]);
    {
        std::vector<std::size_t> next(first.begin(), first.end() - 1);
        for (const auto& e : p.edges) {
            if (e.a == e.b) continue;
            arcs[next[e.a]++] = Arc{e.a, e.b, e.bytes};
            arcs[next[e.b]++] = Arc{e.b, e.a, e.bytes};
        }
    }
    for (std::size_t v = 0; v < n; ++v)
        std::sort(arcs.begin() + static_cast<std::ptrdiff_t>(first[v]), arcs.begin() + static_cast<std::ptrdiff_t>(first[v + 1]),
                  [](const Arc& x, const Arc& y) { return x.to < y.to; });
    std::vector<Arc> merged;
    for (const Arc& a : arcs) {
        if (!merged.empty() && merged.back().from == a.from && merged.back().to == a.to) {
            const std::uint64_t sum = merged.back().bytes + a.bytes;
            merged.back().bytes = sum < a.bytes ? std::numeric_limits<std::uint64_t>::max() : sum;
        } else {
            merged.push_back(a);
        }
    }
    const std::uint64_t edge_budget = weight_limit / max_distance;
    if (merged.size() >= edge_budget)
        throw Error("partition", "window has " + std::to_string(merged.size() / 2) + " edges; at most " +
                                     std::to_string(edge_budget / 2) + " fit Scotch's 32-bit weights");
    long double edge_total = 0;
    for (const Arc& a : merged) edge_total += static_cast<long double>(a.bytes);
    // Leave room for the weights rounded up to 1.
    const auto edge_room = static_cast<long double>(edge_budget - merged.size());
    const auto edge_divisor = static_cast<std::uint64_t>(edge_total / edge_room) + 1;

    long double vertex_total = 0;
    for (std::uint64_t w : p.vertex_weight) vertex_total += static_cast<long double>(w);
    const auto vertex_divisor = static_cast<std::uint64_t>(vertex_total / static_cast<long double>(weight_limit - n)) + 1;

    Csr csr;
    csr.verttab.assign(n + 1, 0);
    csr.velotab.reserve(n);
    for (std::uint64_t w : p.vertex_weight) csr.velotab.push_back(scaled(w, vertex_divisor));
    for (const Arc& a : merged) {
        ++csr.verttab[a.from + 1];
        csr.edgetab.push_back(static_cast<SCOTCH_Num>(a.to));
        csr.edlotab.push_back(scaled(a.bytes, edge_divisor));
    }
    for (std::size_t v = 0; v < n; ++v) csr.verttab[v + 1] += csr.verttab[v];

    // ---- target: complete graph on the parts, weighted by distance ----
    Csr target;
    target.verttab.assign(k + 1, 0);
    for (std::size_t i = 0; i < k; ++i) {
        for (std::size_t j = 0; j < k; ++j) {
            if (i == j) continue;
            target.edgetab.push_back(static_cast<SCOTCH_Num>(j));
            target.edlotab.push_back(static_cast<SCOTCH_Num>(std::max(1u, distance[i][j])));
        }
        target.verttab[i + 1] = static_cast<SCOTCH_Num>(target.edgetab.size());
    }

    const bool any_fixed = std::any_of(p.fixed.begin(), p.fixed.end(), [](int f) { return f >= 0; });

    // ---- two constraints: METIS multi-constraint k-way, then refine ----
    long double second_total = 0;
    for (std::uint64_t w : p.second_weight) second_total += static_cast<long double>(w);
    if (!p.second_weight.empty() && !any_fixed && second_total > 0) {
        const auto second_divisor =
            static_cast<std::uint64_t>(second_total / static_cast<long double>(weight_limit - n)) + 1;
        std::vector<std::uint64_t> second(n);
        std::vector<idx_t> xadj(csr.verttab.begin(), csr.verttab.end()), adjncy(csr.edgetab.begin(), csr.edgetab.end()),
            adjwgt(csr.edlotab.begin(), csr.edlotab.end()), vwgt(2 * n), where(n, 0);
        for (std::size_t v = 0; v < n; ++v) {
            second[v] = p.second_weight[v] / second_divisor;
            vwgt[2 * v] = static_cast<idx_t>(csr.velotab[v]);
            vwgt[2 * v + 1] = static_cast<idx_t>(second[v]);
        }
        idx_t nvtxs = static_cast<idx_t>(n), ncon = 2, nparts = static_cast<idx_t>(k), objval = 0;
        real_t ubvec[2] = {static_cast<real_t>(1 + p.imbalance), static_cast<real_t>(1 + p.imbalance)};
        idx_t options[METIS_NOPTIONS];
        METIS_SetDefaultOptions(options);
        options[METIS_OPTION_SEED] = static_cast<idx_t>(p.seed & 0x3fffffffU);
        options[METIS_OPTION_NUMBERING] = 0;
        const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(),
                                           vwgt.data(), nullptr, adjwgt.empty() ? nullptr : adjwgt.data(), &nparts,
                                           nullptr, ubvec, options, &objval, where.data());
        if (rc != METIS_OK) throw Error("partition", "METIS_PartGraphKway failed (" + std::to_string(rc) + ")");
        for (std::size_t v = 0; v < n; ++v) {
            if (where[v] < 0 || where[v] >= nparts)
                throw Error("partition", "METIS returned part " + std::to_string(where[v]) + " outside [0, " +
                                             std::to_string(k) + ")");
            parts[v] = static_cast<unsigned>(where[v]);
        }
        refine(csr, p.fixed, distance, p.imbalance, parts, second);
        return parts;
    }

    ContextHolder context;
    if (SCOTCH_contextThreadSpawn(&context.c, 1, nullptr) != 0) fail("contextThreadSpawn");
    if (SCOTCH_contextRandomClone(&context.c) != 0) fail("contextRandomClone");
    SCOTCH_contextRandomSeed(&context.c, static_cast<SCOTCH_Num>(p.seed & 0x3fffffffU));
    SCOTCH_contextRandomReset(&context.c);   // the clone's state, restarted from that seed
    if (SCOTCH_contextOptionSetNum(&context.c, SCOTCH_OPTIONNUMDETERMINISTIC, 1) != 0) fail("contextOptionSetNum");

    // The target architecture is built from the target graph bound to the
    // same context: unbound, Scotch decomposes it with its default context,
    // on as many threads as the machine has, and the decomposition (so the
    // mapping) varied from call to call (about one RIP-MW window in 150).
    GraphHolder target_graph;
    build(target_graph, target);
    GraphHolder target_bound;
    if (SCOTCH_contextBindGraph(&context.c, &target_graph.g, &target_bound.g) != 0) fail("contextBindGraph");
    ArchHolder arch;
    std::vector<SCOTCH_Num> terminals(k);
    std::iota(terminals.begin(), terminals.end(), SCOTCH_Num{0});
    if (SCOTCH_archBuild2(&arch.a, &target_bound.g, static_cast<SCOTCH_Num>(k), terminals.data()) != 0)
        fail("archBuild2");

    GraphHolder source;
    build(source, csr);
    GraphHolder bound;
    if (SCOTCH_contextBindGraph(&context.c, &source.g, &bound.g) != 0) fail("contextBindGraph");

    StratHolder strat;
    if (SCOTCH_stratGraphMapBuild(&strat.s, SCOTCH_STRATBALANCE, static_cast<SCOTCH_Num>(k), p.imbalance) != 0)
        fail("stratGraphMapBuild");

    std::vector<SCOTCH_Num> map(n, -1);
    int rc = 0;
    if (any_fixed) {
        for (std::size_t v = 0; v < n; ++v) map[v] = p.fixed[v];
        rc = SCOTCH_graphMapFixed(&bound.g, &arch.a, &strat.s, map.data());
    } else {
        rc = SCOTCH_graphMap(&bound.g, &arch.a, &strat.s, map.data());
    }
    if (rc != 0) fail(any_fixed ? "graphMapFixed" : "graphMap");
    // The bound graph goes before its context (destruction order: bound, source, ..., context).
    for (std::size_t v = 0; v < n; ++v) {
        if (map[v] < 0 || map[v] >= static_cast<SCOTCH_Num>(k))
            throw Error("partition", "Scotch returned part " + std::to_string(map[v]) + " outside [0, " +
                                         std::to_string(k) + ")");
        parts[v] = static_cast<unsigned>(map[v]);
    }
    refine(csr, p.fixed, distance, p.imbalance, parts);
    return parts;
}

}  // namespace numaware::tasks::policy_detail
