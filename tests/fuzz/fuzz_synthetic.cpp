// Fuzzes Machine::from_synthetic (numaware's own "nodes=4 ..." and hwloc's
// "hwloc:NUMANode:2 ..." syntax). Oracle: an accepted machine of up to 64
// nodes survives its JSON exactly. Larger ones are accepted up to Linux's
// 1024 nodes, but their round trip (a 935-node machine: 8.9 MB of JSON,
// 0.27 s in the release build) takes over 10 s instrumented, libFuzzer's
// timeout; the unit test MachineJson.RoundTripsTheLargestMachine checks it.
#include "harness.hpp"
#include "numaware/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size > 4096) return 0;
    std::optional<Machine> m;
    if (!fuzz::accepts([&] { m = Machine::from_synthetic(fuzz::text(data, size)); })) return 0;
    if (m->nodes.size() <= 64) fuzz::require(Machine::from_json(m->to_json()) == *m);
    return 0;
}
