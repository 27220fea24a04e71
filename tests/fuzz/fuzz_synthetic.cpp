// Fuzzes Machine::from_synthetic (numaware's own "nodes=4 ..." and hwloc's
// "hwloc:NUMANode:2 ..." syntax). Oracle: an accepted machine survives its
// JSON exactly.
#include "harness.hpp"
#include "numaware/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size > 4096) return 0;
    std::optional<Machine> m;
    if (!fuzz::accepts([&] { m = Machine::from_synthetic(fuzz::text(data, size)); })) return 0;
    fuzz::require(Machine::from_json(m->to_json()) == *m);
    return 0;
}
