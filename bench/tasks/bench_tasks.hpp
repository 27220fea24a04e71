// bench/tasks/bench_tasks.hpp — the problems of the task-runtime overhead
// benchmarks and the entry points of each implementation (numaware,
// oneTBB, libgomp). Every implementation solves the same problem with the
// same per-task work; main.cpp times them in turn and checks each result
// against a serial reference.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bench::tasks {

// What one timed run produced.
struct Outcome {
    double seconds = 0;          // from the first spawn to the end of the last wait
    std::uint64_t tasks = 0;     // tasks created in the timed part
    double checksum = 0;         // compared with the serial reference
};

// ---- 1. independent empty tasks -------------------------------------------
struct SpawnProblem {
    std::uint64_t tasks = 1'000'000;
};
// The body of an "empty" task in every implementation: no work, but a
// compiler barrier, so no compiler may drop the task (GCC removes an
// `omp task` whose body is empty).
inline void empty_task_body() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// ---- 2. wavefront -----------------------------------------------------------
// Cell (i, j) of an n x n grid (row-major doubles) is computed from its
// north (i-1, j) and west (i, j-1) neighbours; outside the grid counts as 0.
// Every cell is its own dependency (8 bytes, disjoint from its neighbours).
struct WavefrontProblem {
    std::size_t n = 1000;
};
inline double wavefront_cell(double north, double west) { return 0.5 * (north + west) + 1.0; }
inline double wavefront_at(const double* grid, std::size_t n, std::size_t i, std::size_t j) {
    const double north = i > 0 ? grid[(i - 1) * n + j] : 0.0;
    const double west = j > 0 ? grid[i * n + j - 1] : 0.0;
    return wavefront_cell(north, west);
}
// The checksum of a finished grid: the sum of its cells in row-major order
// (every implementation computes each cell by the same expression from the
// same inputs, so the sums match exactly).
double grid_checksum(const double* grid, std::size_t cells);
// The serial reference: fills `grid` (n * n) and returns its checksum.
double wavefront_serial(double* grid, std::size_t n);

// ---- 3. stencils (Jacobi, Gauss-Seidel) with the apps' kernels -------------
// The per-block work is apps/common/stencil_kernels.hpp, the same functions the
// task-runtime apps run, in every implementation.
//   jacobi        n x n row-major grid, double-buffered; a block is `block`
//                 whole rows (one contiguous range). Task (t, b) reads blocks
//                 b-1, b, b+1 of the source buffer and writes block b of the
//                 destination; the buffers swap every sweep.
//   gauss-seidel  n x n grid in tiles of block x block (tile-major); task
//                 (t, ti, tj) updates its tile in place and reads its four
//                 neighbour tiles; tiles are spawned in row-major order.
enum class Stencil { jacobi, gauss_seidel };
std::string_view to_string(Stencil s);

struct StencilProblem {
    Stencil kind = Stencil::jacobi;
    std::size_t n = 0;            // grid side
    std::size_t block = 0;        // jacobi: rows per block; gauss-seidel: tile side
    unsigned iterations = 0;      // sweeps
    std::size_t blocks_per_side() const { return n / block; }
    // Tasks per sweep.
    std::size_t blocks() const { return kind == Stencil::jacobi ? n / block : (n / block) * (n / block); }
    std::size_t block_doubles() const { return kind == Stencil::jacobi ? block * n : block * block; }
};
// Throws std::invalid_argument naming the flag when the sizes do not fit:
// block must divide n and a block must be a whole number of pages.
void check(const StencilProblem& p);

// The buffers of a stencil run (page-aligned, one mapping each).
class StencilGrids {
public:
    explicit StencilGrids(const StencilProblem& p);
    ~StencilGrids();
    StencilGrids(const StencilGrids&) = delete;
    StencilGrids& operator=(const StencilGrids&) = delete;
    // Writes the apps' initial condition into both buffers (untimed).
    void reset();
    double* buffer(unsigned which) const { return which == 0 ? a_ : b_; }
    // The buffer that holds the result after the sweeps.
    const double* result() const;
    double checksum() const;

private:
    StencilProblem p_;
    std::size_t bytes_ = 0;
    double* a_ = nullptr;
    double* b_ = nullptr;
};

// Runs the kernel of task (t, b) of sweep t, block b (gauss-seidel: b = ti *
// blocks_per_side + tj). Every implementation calls this and nothing else.
void stencil_task(const StencilProblem& p, const StencilGrids& g, unsigned t, std::size_t b);
// The dependencies of task (t, b) as address ranges, in the shape every
// runtime takes them: up to four inputs and one output (`inout` for
// gauss-seidel, `out` for jacobi).
struct StencilDeps {
    const double* in[4] = {};
    std::size_t in_count = 0;
    double* out = nullptr;
    bool out_is_inout = false;
    std::size_t bytes = 0;   // every range is one whole block
};
StencilDeps stencil_deps(const StencilProblem& p, const StencilGrids& g, unsigned t, std::size_t b);
// The serial reference (the sweeps in program order); returns the checksum.
double stencil_serial(const StencilProblem& p, StencilGrids& g);

// ---- pinning the peers' threads --------------------------------------------
// numaware pins worker r to one CPU; with peer pinning on (the default) the
// peers' threads are pinned the same way for the duration of a run: thread
// k (oneTBB arena slot, OpenMP thread number) to the k-th CPU this process
// may use. A guard restores the thread's previous affinity.
void set_peer_pinning(bool on);
class PinGuard {
public:
    explicit PinGuard(unsigned index);   // no-op when peer pinning is off
    ~PinGuard();
    PinGuard(const PinGuard&) = delete;
    PinGuard& operator=(const PinGuard&) = delete;

private:
    bool pinned_ = false;
    unsigned char saved_[128] = {};      // the previous cpu_set_t
};

// ---- the implementations -----------------------------------------------------
// The numaware Runtime on a team of `threads` pinned workers (one per CPU).
// The team lives as long as the object; each run builds a fresh Runtime
// with the given policy before the clock starts.
class NumawareRunner {
public:
    // `machine_spec`: a Machine::from_spec() text, or "live" for this host.
    // `steal_delay_tasks` < 0: the policies' default.
    NumawareRunner(unsigned threads, const std::string& machine_spec, bool kernel_homes,
                   double steal_delay_tasks = -1);
    ~NumawareRunner();
    NumawareRunner(const NumawareRunner&) = delete;
    NumawareRunner& operator=(const NumawareRunner&) = delete;

    Outcome spawn(std::string_view policy, const SpawnProblem& p);
    Outcome wavefront(std::string_view policy, const WavefrontProblem& p, double* grid);
    Outcome stencil(std::string_view policy, const StencilProblem& p, StencilGrids& g);

private:
    struct State;
    std::unique_ptr<State> state_;
};

// oneTBB: a task_arena of `threads` slots under a global_control of the same
// parallelism; the main thread enters the arena and spawns.
Outcome tbb_spawn(unsigned threads, const SpawnProblem& p);
// Successor counters: a finished cell releases its south and east
// neighbours with task_group::run when their count reaches zero.
Outcome tbb_wavefront(unsigned threads, const WavefrontProblem& p, double* grid);
// The stencil's task graph built explicitly (predecessor counts, successor
// lists), run with the same counters.
Outcome tbb_stencil(unsigned threads, const StencilProblem& p, StencilGrids& g);

// libgomp: `omp parallel num_threads(threads)` + `omp single`; the single
// thread spawns with `omp task` (and `depend` clauses) and ends with
// `omp taskwait`.
// Beyond 64 queued tasks per thread, libgomp runs each new task at once on
// the spawning thread (its throttle), so most of omp_spawn's tasks are plain
// calls. omp_spawn_deferred spawns in batches of 64 per thread with a
// taskwait after each, so every task is queued and scheduled.
Outcome omp_spawn(unsigned threads, const SpawnProblem& p);
Outcome omp_spawn_deferred(unsigned threads, const SpawnProblem& p);
Outcome omp_wavefront(unsigned threads, const WavefrontProblem& p, double* grid);
Outcome omp_stencil(unsigned threads, const StencilProblem& p, StencilGrids& g);

}  // namespace bench::tasks
