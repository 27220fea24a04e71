// src/sim/report.cpp — SimReport as JSON: one flat object, the run's
// figures (tasks::RunReport) among the simulation's own, in the order the
// tools and docs have always read them.
#include <nlohmann/json.hpp>

#include "numaware/sim.hpp"

namespace numaware::sim {

std::string SimReport::to_json() const {
    nlohmann::ordered_json j;
    j["label"] = label;
    j["simulated"] = true;
    j["machine"] = machine;
    j["policy"] = run.policy;
    j["graph"] = graph;
    j["contention"] = contention;
    j["tasks"] = run.tasks;
    j["workers"] = workers;
    j["makespan_s"] = run.makespan_s;
    j["dep_bytes"] = run.dep_bytes;
    j["cross_node_bytes"] = run.cross_node_bytes;
    j["nodes"] = run.nodes;
    j["tasks_per_node"] = run.tasks_per_node;
    j["link_bytes"] = link_bytes;
    j["load_balance_pct"] = run.load_balance_pct;
    j["runtime_overhead_pct"] = run.runtime_overhead_pct;
    j["partition_s"] = partition_s;
    j["partition_overhead_pct"] = run.partition_overhead_pct;
    j["partition_busy_pct"] = partition_busy_pct;
    j["window"] = window;
    j["partition_host_s"] = partition_host_s;
    j["partition_jobs"] = partition_jobs;
    j["migrated_bytes"] = migrated_bytes;
    j["hinting_faults"] = hinting_faults;
    j["host_s"] = host_s;
    j["tasks_per_host_s"] = tasks_per_host_s;
    return j.dump();
}

}  // namespace numaware::sim
