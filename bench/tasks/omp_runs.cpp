// bench/tasks/omp_runs.cpp — the libgomp (OpenMP tasks) implementations.
//
// One `omp parallel num_threads(T)` region; inside it one thread (`omp
// single`) spawns every task and ends with `omp taskwait`, while the other
// threads of the team run tasks from the implicit barrier of the single.
// Each thread of the region is pinned (PinGuard) before the single starts.
// The clock runs inside the single, so starting the team is not counted
// (numaware's workers and oneTBB's arena also exist before their clocks
// start).
#include <omp.h>

#include <chrono>

#include "bench_tasks.hpp"

namespace bench::tasks {

namespace {
using Clock = std::chrono::steady_clock;

// The shape every run shares: a pinned team, one spawning thread, the clock
// around the spawning and the final taskwait. Tasks created in `spawn` (an
// orphaned task construct) bind to this region's team.
template <class Spawn>
double timed_single(unsigned threads, const Spawn& spawn) {
    double seconds = 0;
#pragma omp parallel num_threads(static_cast<int>(threads))
    {
        const PinGuard pin(static_cast<unsigned>(omp_get_thread_num()));
#pragma omp single
        {
            const Clock::time_point t0 = Clock::now();
            spawn();
#pragma omp taskwait
            seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        }
    }
    return seconds;
}
}  // namespace

Outcome omp_spawn(unsigned threads, const SpawnProblem& p) {
    Outcome o;
    const std::uint64_t n = p.tasks;
    o.seconds = timed_single(threads, [n] {
        for (std::uint64_t k = 0; k < n; ++k) {
#pragma omp task
            empty_task_body();
        }
    });
    o.tasks = n;
    return o;
}

Outcome omp_spawn_deferred(unsigned threads, const SpawnProblem& p) {
    Outcome o;
    const std::uint64_t n = p.tasks;
    // libgomp runs a new task at once, on the spawning thread, when the team
    // already has more than 64 tasks per thread; batches of that many with a
    // taskwait after each keep every task deferred (queued, then run by
    // whichever thread takes it).
    const std::uint64_t batch = 64 * std::uint64_t{threads};
    o.seconds = timed_single(threads, [n, batch] {
        for (std::uint64_t k = 0; k < n;) {
            const std::uint64_t end = n - k < batch ? n : k + batch;
            for (; k < end; ++k) {
#pragma omp task
                empty_task_body();
            }
#pragma omp taskwait
        }
    });
    o.tasks = n;
    return o;
}

Outcome omp_wavefront(unsigned threads, const WavefrontProblem& p, double* grid) {
    Outcome o;
    const std::size_t n = p.n;
    o.seconds = timed_single(threads, [n, grid] {
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) {
                // Named only in depend clauses, which GCC does not count as a use.
                [[maybe_unused]] double* cell = grid + i * n + j;
                if (i > 0 && j > 0) {
#pragma omp task firstprivate(i, j) depend(in : cell[-static_cast<std::ptrdiff_t>(n)], cell[-1]) depend(out : cell[0])
                    grid[i * n + j] = wavefront_at(grid, n, i, j);
                } else if (i > 0) {
#pragma omp task firstprivate(i, j) depend(in : cell[-static_cast<std::ptrdiff_t>(n)]) depend(out : cell[0])
                    grid[i * n + j] = wavefront_at(grid, n, i, j);
                } else if (j > 0) {
#pragma omp task firstprivate(i, j) depend(in : cell[-1]) depend(out : cell[0])
                    grid[i * n + j] = wavefront_at(grid, n, i, j);
                } else {
#pragma omp task firstprivate(i, j) depend(out : cell[0])
                    grid[i * n + j] = wavefront_at(grid, n, i, j);
                }
            }
        }
    });
    o.tasks = n * n;
    return o;
}

Outcome omp_stencil(unsigned threads, const StencilProblem& p, StencilGrids& g) {
    Outcome o;
    const StencilGrids* grids = &g;
    const StencilProblem* prob = &p;
    o.seconds = timed_single(threads, [grids, prob, &g, &p] {
        for (unsigned t = 0; t < p.iterations; ++t) {
            for (std::size_t b = 0; b < p.blocks(); ++b) {
                const StencilDeps d = stencil_deps(p, g, t, b);
                // OpenMP matches dependencies by the address of their first
                // element; every range here is a whole block, named by its
                // first double, so ranges are identical or disjoint as in
                // the other runtimes. `out` and `inout` order tasks alike in
                // OpenMP; both are spelt as the kernel uses them. The pointers
                // are named only in depend clauses, which GCC does not count
                // as a use.
                [[maybe_unused]] const double* i0 = d.in[0];
                [[maybe_unused]] const double* i1 = d.in[1];
                [[maybe_unused]] const double* i2 = d.in[2];
                [[maybe_unused]] const double* i3 = d.in[3];
                [[maybe_unused]] double* w = d.out;
                if (d.out_is_inout) {
                    switch (d.in_count) {
                    case 2:
#pragma omp task firstprivate(t, b) depend(in : i0[0], i1[0]) depend(inout : w[0])
                        stencil_task(*prob, *grids, t, b);
                        break;
                    case 3:
#pragma omp task firstprivate(t, b) depend(in : i0[0], i1[0], i2[0]) depend(inout : w[0])
                        stencil_task(*prob, *grids, t, b);
                        break;
                    case 4:
#pragma omp task firstprivate(t, b) depend(in : i0[0], i1[0], i2[0], i3[0]) depend(inout : w[0])
                        stencil_task(*prob, *grids, t, b);
                        break;
                    default:   // a 1 x 1 tile grid: no neighbours
#pragma omp task firstprivate(t, b) depend(inout : w[0])
                        stencil_task(*prob, *grids, t, b);
                        break;
                    }
                } else {
                    switch (d.in_count) {
                    case 1:
#pragma omp task firstprivate(t, b) depend(in : i0[0]) depend(out : w[0])
                        stencil_task(*prob, *grids, t, b);
                        break;
                    case 2:
#pragma omp task firstprivate(t, b) depend(in : i0[0], i1[0]) depend(out : w[0])
                        stencil_task(*prob, *grids, t, b);
                        break;
                    default:
#pragma omp task firstprivate(t, b) depend(in : i0[0], i1[0], i2[0]) depend(out : w[0])
                        stencil_task(*prob, *grids, t, b);
                        break;
                    }
                }
            }
        }
    });
    o.tasks = static_cast<std::uint64_t>(p.iterations) * p.blocks();
    return o;
}

}  // namespace bench::tasks
