// sim/balancing_model.hpp — the task simulator's balancing model: the
// kernel moving pages between nodes while tasks run.
//
// A model is one module behind these hooks; the simulator knows none by
// its type. Today: automatic NUMA balancing (balancing_autonuma.cpp), made
// by make_balancer() when SimOptions::balancing.enabled. Contract:
//   attach(machine, graph, pages)   once, before any task; `pages` is the
//                                   simulator's home of each page group,
//                                   which the model may change (a migration);
//   period_s()                      seconds between two scan() calls (> 0);
//   scan()                          a periodic scan, while tasks remain;
//   touch(node, pos, region)        a task on node (OS index; `pos` its
//                                   position) is about to access `region`:
//                                   the seconds this costs it on top;
//   final_stats(report)             once, at the end.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "numaware/sim.hpp"

namespace numaware::sim {

// Where a page group lives: the simulator's first touch writes it, a
// balancing model may move it.
struct PageHome {
    int home = tasks::unallocated;   // node OS index, or unallocated
    std::uint32_t home_pos = 0;      // node position of `home` (when allocated)
};

class Balancer {
public:
    virtual ~Balancer() = default;
    virtual void attach(const TimedMachine& machine, const Graph& graph, std::vector<PageHome>& pages) = 0;
    virtual double period_s() const = 0;
    virtual void scan() = 0;
    virtual double touch(unsigned node, std::size_t pos, std::uint32_t region) = 0;
    virtual void final_stats(SimReport& report) const = 0;
};

// The model `options` asks for; nullptr when it is disabled (no balancing
// costs nothing). Error("balancing.<field>", ...) for a setting out of range.
std::unique_ptr<Balancer> make_balancer(const BalancingModel& options);

}  // namespace numaware::sim
