// sim/memory/nas_kernels.hpp — multithreaded kernels with the memory-access
// patterns of the NAS Parallel Benchmarks (NPB 3), for the memory-hierarchy
// simulator.
//
// Each kernel is a LoopKernel (loop_kernel.hpp) written from the public
// descriptions of the algorithms (D. H. Bailey et al., "The NAS Parallel
// Benchmarks", RNR-91-002 / Int. J. Supercomputer Applications 5(3), 1991;
// "The NAS Parallel Benchmarks 2.0", NAS-95-020; H. Jin, M. Frumkin, J. Yan,
// "The OpenMP Implementation of NAS Parallel Benchmarks and Its
// Performance", NAS-99-011), never from NPB's source: the arrays, index
// arrays and loop orders of the kernel at the level of data structures,
// the outer parallel loop cut OpenMP-static-style, each thread first
// touching what it computes on in an unmeasured "init" phase, then the
// measured iterations, one phase per parallel loop. Each file's opening
// comment says what its kernel models and what it leaves out; so does
// docs/SIMULATOR.md ("Memory-hierarchy simulator: workloads").
//
// Sizes are class letters: S, tiny, for the unit tests (ours); W, NPB's
// class W problem sizes where a kernel takes those parameters, with NPB's
// iterations cut as class A cuts them; A, the default (ours, not NPB's
// class A), whose working set exceeds the 16 MiB of L3 of thesis-4s (EP
// aside: it has almost none by design). NPB's class W working sets are
// smaller than class A's here, most of them below the L3 (MG's and FT's
// are not).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "numaware/memory_sim.hpp"

namespace numaware::sim::memory::nas {

// "NAME[:SIZE]" with NAME one of cg, mg, ft, is, lu, bt, sp, ep and SIZE a
// class letter, S, W or A (default A); nullptr for any other NAME, so that
// make_workload can try its own. Error("workload", ...) naming the field
// for a bad SIZE.
std::unique_ptr<Workload> make_nas_kernel(std::string_view spec);
// For make_workload's list of the known workloads.
inline constexpr const char* known_kernels = "cg|mg|ft|is|lu|bt|sp|ep[:S|W|A]";

// ---- the sizes of each class ------------------------------------------------
// Factories take a size too (the tests make small odd ones); each throws
// Error("workload", ...) naming the field and the limit for a size the
// kernel cannot run.

// CG: an n × n sparse matrix in CSR with a fixed number of nonzeros per row
// (the diagonal and distinct random columns, seeded), and CG iterations.
struct CgSize {
    std::uint64_t rows = 0;
    unsigned nonzeros_per_row = 0;
    unsigned iterations = 1;
    std::uint64_t seed = 314159265;
};
CgSize cg_size(char cls);
std::unique_ptr<Workload> make_cg(const CgSize& s, std::string name);

// MG: an n³ grid (n a power of two) and its coarser grids down to 2³; V-cycles.
struct MgSize {
    unsigned n = 0;
    unsigned iterations = 1;
};
MgSize mg_size(char cls);
std::unique_ptr<Workload> make_mg(const MgSize& s, std::string name);

// FT: an nx × ny × nz complex grid (powers of two); evolve + inverse 3-D FFT.
struct FtSize {
    unsigned nx = 0, ny = 0, nz = 0;
    unsigned iterations = 1;
};
FtSize ft_size(char cls);
std::unique_ptr<Workload> make_ft(const FtSize& s, std::string name);

// IS: keys of 4 bytes in [0, max_key), counted into buckets (powers of two).
struct IsSize {
    std::uint64_t keys = 0;
    std::uint64_t max_key = 0;
    unsigned buckets = 0;
    unsigned iterations = 1;
    std::uint64_t seed = 314159265;
};
IsSize is_size(char cls);
std::unique_ptr<Workload> make_is(const IsSize& s, std::string name);

// LU, BT, SP: an n³ grid of 5-component cells (boundary included).
struct GridSize {
    unsigned n = 0;
    unsigned iterations = 1;
};
GridSize lu_size(char cls);
GridSize bt_size(char cls);
GridSize sp_size(char cls);
std::unique_ptr<Workload> make_lu(const GridSize& s, std::string name);
enum class AdiSolver { bt, sp };
std::unique_ptr<Workload> make_adi(AdiSolver solver, const GridSize& s, std::string name);

// EP: pairs of uniform random numbers, made a batch at a time into a small
// per-thread table, turned into Gaussian pairs and counted.
struct EpSize {
    std::uint64_t pairs = 0;
    unsigned batch_pairs = 0;
    std::uint64_t seed = 271828183;
};
EpSize ep_size(char cls);
std::unique_ptr<Workload> make_ep(const EpSize& s, std::string name);

}  // namespace numaware::sim::memory::nas
