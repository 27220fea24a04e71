// bench/tasks/numaware_runs.cpp — the numaware implementations.
//
// One team of T pinned workers for the whole process; every run builds a
// fresh Runtime with the policy under test before its clock starts. The
// clock covers one outer task that spawns all the work and waits for it
// (taskwait inside a task), so the spawner is a worker as in the peers:
// oneTBB's main thread holds an arena slot, libgomp's single thread is a
// team member.
#include <chrono>
#include <span>
#include <stdexcept>
#include <string>

#include "bench_tasks.hpp"
#include "numaware/machine.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"

namespace bench::tasks {

namespace nt = numaware::tasks;

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// "live", or a Machine::from_spec() text; the default spec the caller
// passes is T one-CPU nodes, so the policies see T nodes.
numaware::Machine machine_for(const std::string& spec) {
    return spec == "live" ? numaware::Machine::from_live() : numaware::Machine::from_spec(spec);
}
}  // namespace

struct NumawareRunner::State {
    numaware::Machine machine;
    numaware::Team team;
    nt::RuntimeOptions options;
    nt::PolicyOptions policy;
    State(const std::string& spec, unsigned threads, bool kernel_homes, double steal_delay_tasks)
        : machine(machine_for(spec)),
          team(machine, {.threads = threads, .kind = numaware::MappingKind::scatter}),
          options{.kernel_homes = kernel_homes, .record_graph = false} {
        policy.steal_delay_tasks = nt::steal_delay_setting(steal_delay_tasks);
    }
};

NumawareRunner::NumawareRunner(unsigned threads, const std::string& machine_spec, bool kernel_homes,
                               double steal_delay_tasks)
    : state_(std::make_unique<State>(machine_spec, threads, kernel_homes, steal_delay_tasks)) {}

NumawareRunner::~NumawareRunner() = default;

Outcome NumawareRunner::spawn(std::string_view policy, const SpawnProblem& p) {
    Outcome o;
    {
        nt::Runtime rt(state_->team, policy, state_->policy, state_->options);
        const std::uint64_t n = p.tasks;
        const Clock::time_point t0 = Clock::now();
        rt.spawn([&rt, n] {
            for (std::uint64_t k = 0; k < n; ++k) rt.spawn([] { empty_task_body(); });
            rt.taskwait();
        });
        rt.taskwait();
        o.seconds = since(t0);
        rt.barrier();
        // The runtime's own count: the N empty tasks and the spawner.
        const std::uint64_t ran = rt.report().tasks;
        if (ran != n + 1)
            throw std::runtime_error("numaware ran " + std::to_string(ran) + " tasks, expected " + std::to_string(n + 1));
        o.checksum = static_cast<double>(ran - 1);
    }
    o.tasks = p.tasks;
    return o;
}

Outcome NumawareRunner::wavefront(std::string_view policy, const WavefrontProblem& p, double* grid) {
    Outcome o;
    nt::Runtime rt(state_->team, policy, state_->policy, state_->options);
    const std::size_t n = p.n;
    const Clock::time_point t0 = Clock::now();
    rt.spawn([&rt, grid, n] {
        for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j < n; ++j) {
                nt::Dep deps[3];
                std::size_t k = 0;
                if (i > 0) deps[k++] = nt::in(grid + (i - 1) * n + j, sizeof(double));
                if (j > 0) deps[k++] = nt::in(grid + i * n + j - 1, sizeof(double));
                deps[k++] = nt::out(grid + i * n + j, sizeof(double));
                rt.spawn([grid, n, i, j] { grid[i * n + j] = wavefront_at(grid, n, i, j); },
                         std::span<const nt::Dep>(deps, k));
            }
        }
        rt.taskwait();
    });
    rt.taskwait();
    o.seconds = since(t0);
    o.tasks = n * n;
    return o;
}

Outcome NumawareRunner::stencil(std::string_view policy, const StencilProblem& p, StencilGrids& g) {
    Outcome o;
    nt::Runtime rt(state_->team, policy, state_->policy, state_->options);
    const Clock::time_point t0 = Clock::now();
    rt.spawn([&rt, &p, &g] {
        for (unsigned t = 0; t < p.iterations; ++t) {
            for (std::size_t b = 0; b < p.blocks(); ++b) {
                const StencilDeps d = stencil_deps(p, g, t, b);
                nt::Dep deps[5];
                std::size_t k = 0;
                for (std::size_t q = 0; q < d.in_count; ++q) deps[k++] = nt::in(d.in[q], d.bytes);
                deps[k++] = d.out_is_inout ? nt::inout(d.out, d.bytes) : nt::out(d.out, d.bytes);
                rt.spawn([&p, &g, t, b] { stencil_task(p, g, t, b); }, std::span<const nt::Dep>(deps, k));
            }
        }
        rt.taskwait();
    });
    rt.taskwait();
    o.seconds = since(t0);
    o.tasks = static_cast<std::uint64_t>(p.iterations) * p.blocks();
    return o;
}

}  // namespace bench::tasks
