// src/sim/report.cpp — SimReport as JSON: one flat object, the labels, then
// every field of the run's tasks::RunReport (written by RunReport::to_json,
// the one metrics model), then the simulation's own figures.
#include <nlohmann/json.hpp>

#include "numaware/sim.hpp"

namespace numaware::sim {

std::string SimReport::to_json() const {
    nlohmann::ordered_json j;
    j["label"] = label;
    j["simulated"] = true;
    j["machine"] = machine;
    j["graph"] = graph;
    j["contention"] = contention;
    j["workers"] = workers;
    j.update(nlohmann::ordered_json::parse(run.to_json()));
    j["link_bytes"] = link_bytes;
    j["partition_s"] = partition_s;
    j["partition_busy_pct"] = partition_busy_pct;
    j["window"] = window;
    j["partition_host_s"] = partition_host_s;
    j["partition_jobs"] = partition_jobs;
    nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
    for (const PartitionRecord& p : partitions)
        jobs.push_back({{"vertices", p.size.vertices},
                        {"edges", p.size.edges},
                        {"parts", p.size.parts},
                        {"start_s", p.start_s},
                        {"simulated_s", p.simulated_s},
                        {"host_s", p.host_s}});
    j["partitions"] = std::move(jobs);
    j["migrated_bytes"] = migrated_bytes;
    j["hinting_faults"] = hinting_faults;
    j["host_s"] = host_s;
    j["tasks_per_host_s"] = tasks_per_host_s;
    return j.dump();
}

}  // namespace numaware::sim
