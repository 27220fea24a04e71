// sim/memory/rodinia_kernels.hpp — multithreaded kernels with the
// memory-access patterns of the OpenMP codes of the Rodinia suite, for the
// memory-hierarchy simulator.
//
// Each kernel is a LoopKernel (loop_kernel.hpp), written from the public
// descriptions of the algorithms (S. Che et al., "Rodinia: A Benchmark
// Suite for Heterogeneous Computing", IISWC 2009, and the papers each
// file cites), never from Rodinia's source: the arrays, index arrays and
// loop orders at the level of data structures, every parallel loop cut
// OpenMP-static-style (static_block), one phase each, each thread first
// touching its share in an unmeasured "init" phase. Each file's opening
// comment says what its kernel models and what it leaves out; so does
// docs/SIMULATOR.md ("Memory-hierarchy simulator: workloads").
//
// Sizes are class letters defined here: S, tiny, for the unit tests; W,
// the default, whose working set (31-50 MiB) is 2-3 times the 16 MiB of
// L3 of thesis-4s, so that page placement matters, while one kernel under
// one prefetcher takes a few seconds of host time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::rodinia {

// "NAME[:SIZE]" with NAME one of bfs, hotspot, kmeans, lud, nw,
// pathfinder, streamcluster, cfd and SIZE a class letter, S or W (default
// W); nullptr for any other NAME, so that make_workload can try its own.
// Error("workload", ...) naming the field for a bad SIZE.
std::unique_ptr<Workload> make_rodinia_kernel(std::string_view spec);
// For make_workload's list of the known workloads.
inline constexpr const char* known_kernels = "bfs|hotspot|kmeans|lud|nw|pathfinder|streamcluster|cfd[:S|W]";

// ---- the sizes of each class, and the inputs the tests recompute ------------
// Factories take a size too (the tests make small odd ones); each throws
// Error("workload", ...) naming the field and the limit for a size the
// kernel cannot run.

// BFS: a random directed graph in CSR, each node's degree uniform in
// [1, 2 × mean_degree - 1], its neighbours uniform over the nodes; a
// breadth-first search from node 0, one expand and one update phase per
// level.
struct BfsSize {
    std::uint64_t nodes = 0;
    unsigned mean_degree = 0;
    std::uint64_t seed = 271828183;
};
BfsSize bfs_size(char cls);
struct BfsGraph {
    std::vector<std::uint64_t> first;    // nodes + 1: node i's edges are edges[first[i] .. first[i + 1])
    std::vector<std::uint32_t> edges;    // the neighbour of each edge
};
BfsGraph bfs_graph(const BfsSize& s);
std::unique_ptr<Workload> make_bfs(const BfsSize& s, std::string name);

// Hotspot: rows × cols temperature and power grids of doubles, a 5-point
// stencil swept tile by tile (16 × 16), `iterations` steps ping-ponging
// between the temperature grid and the result grid.
struct HotspotSize {
    unsigned rows = 0, cols = 0;
    unsigned iterations = 2;
};
inline constexpr unsigned hotspot_tile = 16;
HotspotSize hotspot_size(char cls);
std::unique_ptr<Workload> make_hotspot(const HotspotSize& s, std::string name);

// k-means: points × features floats, `clusters` centres, `iterations` of
// assignment (distance to every centre, membership, per-thread partial
// sums) and reduction. The distance loop is vectorised, 8 floats (32 B) a
// load, so features must be a multiple of 8.
struct KmeansSize {
    std::uint64_t points = 0;
    unsigned features = 0;
    unsigned clusters = 0;
    unsigned iterations = 1;
    std::uint64_t seed = 141421356;
};
KmeansSize kmeans_size(char cls);
std::unique_ptr<Workload> make_kmeans(const KmeansSize& s, std::string name);

// LUD: an n × n float matrix factorised in 16 × 16 blocks; `steps` block
// steps (diagonal, perimeter, internal) of the n / 16 - 1 a full
// factorisation takes.
struct LudSize {
    unsigned n = 0;
    unsigned steps = 1;
};
inline constexpr unsigned lud_block = 16;
LudSize lud_size(char cls);
std::unique_ptr<Workload> make_lud(const LudSize& s, std::string name);

// NW: Needleman-Wunsch on two sequences of n residues: (n+1)² int score
// and reference matrices, block × block tiles computed along the
// anti-diagonals of tiles, one phase each.
struct NwSize {
    unsigned n = 0;
    unsigned block = 16;
};
NwSize nw_size(char cls);
std::unique_ptr<Workload> make_nw(const NwSize& s, std::string name);

// Pathfinder: a rows × cols int wall, one dynamic-programming row a phase
// (rows - 1 of them) over two row buffers; the row loop is vectorised, 4
// ints (16 B) a load, so cols must be a multiple of 4.
struct PathfinderSize {
    std::uint64_t cols = 0;
    unsigned rows = 0;
};
PathfinderSize pathfinder_size(char cls);
std::unique_ptr<Workload> make_pathfinder(const PathfinderSize& s, std::string name);

// Streamcluster: points × dims floats, `centres` open centres at the
// start, `candidates` calls of pgain (the gain of opening one candidate
// point as a centre), each of which opens its candidate. The distance loop
// is vectorised, 8 floats (32 B) a load, so dims must be a multiple of 8.
struct StreamclusterSize {
    std::uint64_t points = 0;
    unsigned dims = 0;
    unsigned centres = 0;
    unsigned candidates = 1;
    unsigned switch_one_in = 8;   // a point moves to the candidate with probability 1 / switch_one_in
    std::uint64_t seed = 173205080;
};
StreamclusterSize streamcluster_size(char cls);
// What each pgain call decides, drawn before the run (the same for any
// thread count): its candidate, the centres open before it (point ids, in
// increasing order), each point's centre before it and whether it moves to
// the candidate.
struct StreamclusterCall {
    std::uint64_t candidate = 0;
    std::vector<std::uint64_t> centres;
    std::vector<std::uint32_t> assign;
    std::vector<bool> moves;
};
std::vector<StreamclusterCall> streamcluster_plan(const StreamclusterSize& s);
std::unique_ptr<Workload> make_streamcluster(const StreamclusterSize& s, std::string name);

// CFD: an unstructured mesh of `elements` cells with 4 faces each (a
// tetrahedral mesh), 5 double variables a cell; `iterations` of the
// explicit Runge-Kutta scheme, `rk_stages` flux and time-step phases each.
struct CfdSize {
    std::uint64_t elements = 0;
    unsigned bandwidth = 0;   // a face's neighbour lies within this many cells after it (the mesh's ordering)
    unsigned iterations = 1;
    unsigned rk_stages = 3;
    std::uint64_t seed = 161803398;
};
inline constexpr int cfd_wall = -1, cfd_far_field = -2;
CfdSize cfd_size(char cls);
// Face j of cell i: neighbours[j × elements + i], a cell or cfd_wall or
// cfd_far_field; symmetric (a face between two cells is listed by both).
struct CfdMesh {
    std::vector<std::int32_t> neighbours;
};
CfdMesh cfd_mesh(const CfdSize& s);
std::unique_ptr<Workload> make_cfd(const CfdSize& s, std::string name);

}  // namespace numaware::sim::memory::rodinia
