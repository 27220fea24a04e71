// numaware/sim.hpp — the task-level NUMA machine simulator (the `sim`
// layer): time, latency and bandwidth, which the emulated machines lack.
//
// Built so far: the timed machine model (a Machine plus per-node memory
// bandwidth, per-link bandwidth and a full latency matrix, derived by
// documented rules), the named machine models of the published studies,
// and the bandwidth-sharing core (FlowNetwork) that the task simulator's
// memory model runs on. Every figure the simulator produces is labelled
// "simulated" with its model's name. The model and its assumptions are
// written down in docs/SIMULATOR.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "numaware/machine.hpp"

namespace numaware::sim {

// =====================================================================
// The timed machine
// =====================================================================

// Figures a machine description may lack, used by the rules below.
struct TimingDefaults {
    double local_latency_ns = 80.0;   // a load from the reader's own node
    double memory_gbps = 20.0;        // one node's memory controller(s)
};

// A Machine with everything the simulator times. Matrices are indexed by
// node *position* in machine.nodes, row = reader (where the task runs),
// column = home (whose memory is read or written).
struct TimedMachine {
    Machine machine;
    NodeMatrix<double> latency_ns;     // every entry > 0
    std::vector<double> memory_gbps;   // per node, > 0
    // Bandwidth of the path from home h to reader r (r != h), > 0; the
    // diagonal is 0 (a local access uses only the node's memory).
    NodeMatrix<double> link_gbps;
    std::string name;                  // "bullion-s16 (8 sockets)", "live", the spec
    std::string source;                // where the figures come from, one paragraph
    std::vector<std::string> rules;    // every derivation applied, one line each

    // Throws Error naming the field when a matrix is not node_count square,
    // an entry that must be positive is not, or memory_gbps has the wrong size.
    void validate() const;
};

// The derivation rules (each use is recorded in `rules`):
//   latency[r][h]  = machine.latency_ns[r][h] if present and > 0;
//                    else local_latency_ns × SLIT[r][h] / SLIT[h][h]
//                    (SLIT 10 = local; 21 means 2.1× the local latency).
//   memory[h]      = machine.bandwidth_gbps[h][h] if present and > 0;
//                    else defaults.memory_gbps.
//   link[r][h]     = machine.bandwidth_gbps[r][h] if present and > 0;
//                    else memory[h] × SLIT[h][h] / SLIT[r][h]
//                    (bandwidth falls as distance grows).
// Memory-only nodes have no readers but are homes; their rows are filled
// by the same rules.
TimedMachine timed(const Machine& machine, const TimingDefaults& defaults = {});

// ---- named models of the published studies ----
//
// Each is built from a synthetic description whose distances, latencies
// and bandwidths come from public figures; `source` cites them and says
// which figures are assumptions. Names:
//   "bullion-s16"     Bull bullion S16: 16 sockets × 18 cores, 4 modules
//                     of 4 sockets; QPI hop +79% latency, inter-module
//                     (BCS2) hop +260%. `sockets` may be 4, 8 or 16.
//   "altix-uv100"     SGI Altix UV100: 12 sockets × 8 cores, 2 per blade;
//                     same blade +17%, other rack unit +200%, farthest +240%.
//   "sim-4socket"     the 4-socket "simulated" system: 80 ns local, 160 ns
//                     near, 240 ns far.
//   "skylake-sp-2s"   2-socket Skylake-SP: remote ≈ local + 60 ns.
//   "epyc-nps4-2s"    2-socket AMD EPYC in NPS4 mode: 8 nodes.
// sockets = 0 means the model's full size; otherwise the first `sockets`
// sockets (Error("sockets", ...) naming the accepted sizes when the model
// cannot be cut there). Unknown names: Error("machine", ...) listing them.
std::vector<std::string> model_names();
TimedMachine model(std::string_view name, unsigned sockets = 0);

// "bullion-s16", "bullion-s16:8" (8 sockets), a named model; otherwise any
// Machine::from_spec SPEC (live, XML, JSON, synthetic), timed by the rules.
TimedMachine timed_from_spec(std::string_view spec, const TimingDefaults& defaults = {});

// =====================================================================
// Bandwidth sharing
// =====================================================================

// Resources of fixed capacity (bytes per second: a node's memory, a link)
// shared by flows (a task moving some bytes through some resources). At
// every moment each flow gets its max-min fair share: rates are raised
// together until a resource is full, the flows through it are frozen, and
// the rest continue (progressive filling). A flow first waits its latency,
// then transfers; it takes no bandwidth while it waits. Rates change only
// when a flow starts transferring or ends, so the network jumps from
// event to event: exact, no time steps.
class FlowNetwork {
public:
    using Id = std::size_t;

    // capacity > 0 and finite, else Error("capacity", ...).
    std::size_t add_resource(double bytes_per_second, std::string name = {});

    // Starts a flow at the current time(). bytes >= 0, latency_s >= 0,
    // every resource index valid (Error("resources", ...) otherwise); a flow
    // with no resources or 0 bytes ends after its latency alone.
    Id start(double bytes, std::vector<std::size_t> resources, double latency_s = 0);

    struct Completion {
        double time = 0;   // seconds since the network's start
        Id flow = 0;
    };
    // Advances time to the next flow completion and returns it (ties: the
    // lower id first); nullopt when no flow is active.
    std::optional<Completion> next();
    // Advances time to `t` (>= time(), Error("t", ...) otherwise) without
    // passing a completion: returns false, and does not move, if a flow
    // would end before t (call next() first).
    bool advance_to(double t);

    double time() const;
    std::size_t active() const;
    double rate(Id flow) const;                       // bytes/s now (0 while waiting its latency)
    double carried(std::size_t resource) const;       // bytes moved through it so far
    const std::string& resource_name(std::size_t resource) const;
    std::size_t resources() const;

private:
    struct Flow {
        double remaining = 0;
        double start_transfer = 0;   // time the latency ends
        std::vector<std::size_t> resources;
        double rate = 0;
        bool done = false;
    };
    struct Resource {
        double capacity = 0;
        double carried = 0;
        std::string name;
    };
    void reshare();
    void move_to(double t);
    std::vector<Flow> flows_;
    std::vector<Id> active_;         // ids of the flows not yet ended, in no order
    std::vector<Resource> resources_;
    double now_ = 0;
};

}  // namespace numaware::sim
