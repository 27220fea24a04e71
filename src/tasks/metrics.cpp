// tasks/metrics.cpp — the one metrics model: load balance and RunReport JSON.
#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "numaware/metrics.hpp"

namespace numaware::tasks {

double load_balance_pct(std::span<const double> useful_per_worker) {
    if (useful_per_worker.empty()) return 100.0;
    const double max = *std::max_element(useful_per_worker.begin(), useful_per_worker.end());
    if (!(max > 0)) return 100.0;   // nothing ran: perfectly balanced by definition
    const double sum = std::accumulate(useful_per_worker.begin(), useful_per_worker.end(), 0.0);
    return sum / (max * static_cast<double>(useful_per_worker.size())) * 100.0;
}

std::string RunReport::to_json() const {
    nlohmann::ordered_json j;
    j["policy"] = policy;
    j["tasks"] = tasks;
    j["makespan_s"] = makespan_s;
    j["dep_bytes"] = dep_bytes;
    j["cross_node_bytes"] = cross_node_bytes;
    j["nodes"] = nodes;
    j["tasks_per_node"] = tasks_per_node;
    j["load_balance_pct"] = load_balance_pct;
    j["runtime_overhead_pct"] = runtime_overhead_pct;
    j["partition_overhead_pct"] = partition_overhead_pct;
    j["cross_node_steals"] = cross_node_steals;
    j["cross_node_steal_bytes"] = cross_node_steal_bytes;
    j["cross_node_steals_backlog"] = cross_node_steals_backlog;
    j["cross_node_steals_occupied"] = cross_node_steals_occupied;
    j["homes"] = homes;
    return j.dump();
}

}  // namespace numaware::tasks
