// capi/tasks.cpp — C wrappers over numaware::tasks::Runtime.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_util.hpp"
#include "numaware/c/tasks.h"
#include "numaware/tasks.hpp"
#include "capi/team_handle.hpp"
#include "numaware/team.hpp"

using numaware::Error;
using numaware::capi::guarded;
using numaware::capi::require;
namespace tasks = numaware::tasks;

struct nw_runtime {
    std::unique_ptr<tasks::Runtime> rt;
};

namespace {

constexpr std::size_t inline_deps = 16;

tasks::Runtime& runtime_of(nw_runtime_t* rt) {
    require(rt, "rt");
    return *rt->rt;
}

// Converts C dependencies; small lists stay on the stack.
template <class Fn>
int with_deps(const nw_dep* deps, std::size_t ndeps, Fn&& fn) {
    if (ndeps > 0) require(deps, "deps");
    tasks::Dep small[inline_deps];
    std::vector<tasks::Dep> big;
    tasks::Dep* out = small;
    if (ndeps > inline_deps) {
        big.resize(ndeps);
        out = big.data();
    }
    for (std::size_t i = 0; i < ndeps; ++i) {
        tasks::AccessMode a;
        switch (deps[i].access) {
            case NW_IN: a = tasks::AccessMode::in; break;
            case NW_OUT: a = tasks::AccessMode::out; break;
            case NW_INOUT: a = tasks::AccessMode::inout; break;
            default:
                throw Error("deps[" + std::to_string(i) + "].access",
                            "is " + std::to_string(deps[i].access) + "; expected NW_IN (0), NW_OUT (1) or NW_INOUT (2)");
        }
        out[i] = tasks::Dep{deps[i].addr, deps[i].bytes, a};
    }
    return fn(std::span<const tasks::Dep>(out, ndeps));
}

}  // namespace

extern "C" {

int nw_runtime_create(nw_team_t* team, const char* policy, const struct nw_policy_options* options,
                      nw_runtime_t** out) {
    return guarded([&] {
        require(team, "team");
        require(policy, "policy");
        require(out, "out");
        const nw_policy_options o = options != nullptr ? *options : nw_policy_options_default();
        tasks::PolicyOptions po;
        po.seed = o.seed;
        po.window = o.window;
        po.initial_extra = o.initial_extra;
        po.intersection = o.intersection;
        po.imbalance = o.imbalance;
        tasks::RuntimeOptions ro;
        ro.kernel_homes = o.kernel_homes != 0;
        ro.record_graph = o.record_graph != 0;
        auto handle = std::make_unique<nw_runtime>();
        handle->rt = std::make_unique<tasks::Runtime>(team->team, policy, po, ro);
        *out = handle.release();
        return 0;
    });
}

void nw_runtime_destroy(nw_runtime_t* rt) { delete rt; }

int nw_task_spawn(nw_runtime_t* rt, void (*fn)(void* arg), void* arg, const struct nw_dep* deps, size_t ndeps) {
    return guarded([&] {
        tasks::Runtime& r = runtime_of(rt);
        if (fn == nullptr) throw Error("fn", "is NULL");
        return with_deps(deps, ndeps, [&](std::span<const tasks::Dep> d) {
            r.spawn([fn, arg] { fn(arg); }, d);
            return 0;
        });
    });
}

int nw_task_spawn_on(nw_runtime_t* rt, unsigned node, void (*fn)(void* arg), void* arg, const struct nw_dep* deps,
                     size_t ndeps) {
    return guarded([&] {
        tasks::Runtime& r = runtime_of(rt);
        if (fn == nullptr) throw Error("fn", "is NULL");
        return with_deps(deps, ndeps, [&](std::span<const tasks::Dep> d) {
            r.spawn_on(node, [fn, arg] { fn(arg); }, d);
            return 0;
        });
    });
}

int nw_task_wait(nw_runtime_t* rt) {
    return guarded([&] {
        runtime_of(rt).taskwait();
        return 0;
    });
}

int nw_runtime_barrier(nw_runtime_t* rt) {
    return guarded([&] {
        runtime_of(rt).barrier();
        return 0;
    });
}

int nw_runtime_register_region(nw_runtime_t* rt, const void* addr, size_t bytes, unsigned node) {
    return guarded([&] {
        runtime_of(rt).register_region(addr, bytes, node);
        return 0;
    });
}

int nw_runtime_report(const nw_runtime_t* rt, struct nw_run_report* report) {
    return guarded([&] {
        require(rt, "rt");
        require(report, "report");
        const tasks::RunReport r = rt->rt->report();
        nw_run_report c{};
        c.tasks = r.tasks;
        c.makespan_s = r.makespan_s;
        c.dep_bytes = r.dep_bytes;
        c.cross_node_bytes = r.cross_node_bytes;
        c.node_count = static_cast<unsigned>(r.nodes.size());
        const std::size_t n = std::min<std::size_t>(r.nodes.size(), NW_REPORT_MAX_NODES);
        for (std::size_t i = 0; i < n; ++i) {
            c.nodes[i] = r.nodes[i];
            c.tasks_per_node[i] = r.tasks_per_node[i];
        }
        c.load_balance_pct = r.load_balance_pct;
        c.runtime_overhead_pct = r.runtime_overhead_pct;
        c.partition_overhead_pct = r.partition_overhead_pct;
        c.cross_node_steals = r.cross_node_steals;
        c.cross_node_steal_bytes = r.cross_node_steal_bytes;
        *report = c;
        return 0;
    });
}

}  // extern "C"
