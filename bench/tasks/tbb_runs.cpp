// bench/tasks/tbb_runs.cpp — the oneTBB implementations.
//
// Parallelism is fixed with a global_control (max_allowed_parallelism = T)
// and a task_arena of T slots; the main thread enters the arena (taking
// one slot) and spawns into a task_group. oneTBB has no data-dependency
// tasks, so the wavefront and the stencils run their graphs with
// predecessor counters, the usual oneTBB idiom: a finished task decrements
// its successors' counters and runs each that reaches zero.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <tbb/task_scheduler_observer.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "bench_tasks.hpp"

namespace bench::tasks {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Pins every thread that enters the arena by its slot, as long as it stays.
class SlotPinning : public tbb::task_scheduler_observer {
public:
    explicit SlotPinning(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) { observe(true); }
    ~SlotPinning() override { observe(false); }
    void on_scheduler_entry(bool) override {
        pin_.reset();
        pin_ = std::make_unique<PinGuard>(static_cast<unsigned>(tbb::this_task_arena::current_thread_index()));
    }
    void on_scheduler_exit(bool) override { pin_.reset(); }

private:
    static thread_local std::unique_ptr<PinGuard> pin_;
};
thread_local std::unique_ptr<PinGuard> SlotPinning::pin_;

// Runs fn() inside an arena of `threads` slots with the parallelism capped
// at `threads`; the arena is ready before fn() (and its clock) starts.
template <class F>
void in_arena(unsigned threads, F&& fn) {
    tbb::global_control cap(tbb::global_control::max_allowed_parallelism, threads);
    tbb::task_arena arena(static_cast<int>(threads));
    arena.initialize();
    SlotPinning pinning(arena);
    arena.execute(fn);
}

// ---- wavefront ----
struct Wave {
    double* grid;
    std::size_t n;
    std::unique_ptr<std::atomic<std::uint8_t>[]> waiting;   // unfinished predecessors per cell
    tbb::task_group* group;

    void run(std::size_t i, std::size_t j) {
        grid[i * n + j] = wavefront_at(grid, n, i, j);
        if (i + 1 < n && waiting[(i + 1) * n + j].fetch_sub(1, std::memory_order_acq_rel) == 1)
            group->run([this, i, j] { run(i + 1, j); });
        if (j + 1 < n && waiting[i * n + j + 1].fetch_sub(1, std::memory_order_acq_rel) == 1)
            group->run([this, i, j] { run(i, j + 1); });
    }
};

// ---- stencils: the graph built explicitly ----
// Task k = t * blocks + b. Its predecessors are the tasks the dependency
// rules of the other runtimes would find (read-after-write, write-after-read,
// write-after-write), written out from the stencil's shape:
//   jacobi (t, b):        (t-1, b-1), (t-1, b), (t-1, b+1)
//   gauss-seidel (t, b):  (t, north), (t, west), (t-1, south), (t-1, east), (t-1, b)
struct Graph {
    const StencilProblem* p;
    const StencilGrids* g;
    std::size_t blocks;
    std::vector<std::uint32_t> first;   // successors of k: succ[first[k] .. first[k+1])
    std::vector<std::uint32_t> succ;
    std::unique_ptr<std::atomic<std::uint32_t>[]> waiting;
    std::vector<std::uint32_t> roots;   // tasks without predecessors
    tbb::task_group* group;

    template <class Visit>
    void for_each_pred(std::size_t k, Visit&& visit) const {
        const std::size_t t = k / blocks, b = k % blocks;
        if (p->kind == Stencil::jacobi) {
            if (t == 0) return;
            const std::size_t prev = (t - 1) * blocks;
            if (b > 0) visit(prev + b - 1);
            visit(prev + b);
            if (b + 1 < blocks) visit(prev + b + 1);
        } else {
            const std::size_t ts = p->blocks_per_side();
            const std::size_t ti = b / ts, tj = b % ts;
            const std::size_t cur = t * blocks;
            if (ti > 0) visit(cur + b - ts);
            if (tj > 0) visit(cur + b - 1);
            if (t == 0) return;
            const std::size_t prev = (t - 1) * blocks;
            if (ti + 1 < ts) visit(prev + b + ts);
            if (tj + 1 < ts) visit(prev + b + 1);
            visit(prev + b);
        }
    }

    void build(std::size_t tasks) {
        waiting = std::make_unique<std::atomic<std::uint32_t>[]>(tasks);
        first.assign(tasks + 1, 0);
        for (std::size_t k = 0; k < tasks; ++k) {
            std::uint32_t preds = 0;
            for_each_pred(k, [&](std::size_t q) {
                ++preds;
                ++first[q + 1];
            });
            waiting[k].store(preds, std::memory_order_relaxed);
            if (preds == 0) roots.push_back(static_cast<std::uint32_t>(k));
        }
        for (std::size_t k = 0; k < tasks; ++k) first[k + 1] += first[k];
        succ.resize(first[tasks]);
        std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
        for (std::size_t k = 0; k < tasks; ++k)
            for_each_pred(k, [&](std::size_t q) { succ[fill[q]++] = static_cast<std::uint32_t>(k); });
    }

    void run(std::size_t k) {
        stencil_task(*p, *g, static_cast<unsigned>(k / blocks), k % blocks);
        for (std::uint32_t s = first[k]; s < first[k + 1]; ++s) {
            const std::uint32_t next = succ[s];
            if (waiting[next].fetch_sub(1, std::memory_order_acq_rel) == 1) group->run([this, next] { run(next); });
        }
    }
};
}  // namespace

Outcome tbb_spawn(unsigned threads, const SpawnProblem& p) {
    Outcome o;
    in_arena(threads, [&] {
        tbb::task_group group;
        const Clock::time_point t0 = Clock::now();
        for (std::uint64_t k = 0; k < p.tasks; ++k) group.run([] { empty_task_body(); });
        group.wait();
        o.seconds = since(t0);
    });
    o.tasks = p.tasks;
    return o;
}

Outcome tbb_wavefront(unsigned threads, const WavefrontProblem& p, double* grid) {
    Outcome o;
    in_arena(threads, [&] {
        tbb::task_group group;
        const Clock::time_point t0 = Clock::now();
        const std::size_t n = p.n;
        Wave w{grid, n, std::make_unique<std::atomic<std::uint8_t>[]>(n * n), &group};
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j)
                w.waiting[i * n + j].store(static_cast<std::uint8_t>((i > 0) + (j > 0)), std::memory_order_relaxed);
        group.run([&w] { w.run(0, 0); });
        group.wait();
        o.seconds = since(t0);
    });
    o.tasks = p.n * p.n;
    return o;
}

Outcome tbb_stencil(unsigned threads, const StencilProblem& p, StencilGrids& g) {
    Outcome o;
    const std::size_t tasks = static_cast<std::size_t>(p.iterations) * p.blocks();
    in_arena(threads, [&] {
        tbb::task_group group;
        const Clock::time_point t0 = Clock::now();
        Graph graph{&p, &g, p.blocks(), {}, {}, nullptr, {}, &group};
        graph.build(tasks);
        // The roots are collected before any task runs: a counter that
        // reaches zero later belongs to the task that brought it there.
        for (const std::uint32_t k : graph.roots) group.run([&graph, k] { graph.run(k); });
        group.wait();
        o.seconds = since(t0);
    });
    o.tasks = tasks;
    return o;
}

}  // namespace bench::tasks
