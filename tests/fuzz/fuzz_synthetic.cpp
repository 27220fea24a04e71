// Fuzzes Machine::from_synthetic (numaware's own "nodes=4 ..." and hwloc's
// "hwloc:NUMANode:2 ..." syntax). Oracle: an accepted machine of up to 64
// nodes and 2,048 CPUs and caches together survives its JSON exactly.
// Larger ones are accepted up to Linux's 1,024 nodes and 8,192 PUs, but
// their round trip is nlohmann's work at -O0 under ASan: a 935-node
// machine (8.9 MB of JSON, 0.27 s in the release build) took over 10 s,
// libFuzzer's timeout, and hwloc:1 64 128 1 1 1 (8,192 PUs, 16,384 caches,
// 2.5 MB of JSON that loads in 0.06 s release) 13.7 s beside other work.
// The unit tests MachineJson.RoundTripsTheLargestMachine* check both in the
// release build; corpus/synthetic/repro-timeout-* keep the inputs.
#include "harness.hpp"
#include "numaware/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size > 4096) return 0;
    std::optional<Machine> m;
    if (!fuzz::accepts([&] { m = Machine::from_synthetic(fuzz::text(data, size)); })) return 0;
    if (m->nodes.size() <= 64 && m->cpu_count() + m->caches.size() <= 2048)
        fuzz::require(Machine::from_json(m->to_json()) == *m);
    return 0;
}
