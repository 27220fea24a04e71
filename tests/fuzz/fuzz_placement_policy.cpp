// Fuzzes placement policy specs (parse_policy: "interleave:0-3",
// "bind:1", "weighted:0=3,1=1", ...) against a 4-node machine with a
// CPU-less node.
#include "harness.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size > 1024) return 0;
    static const Machine machine = Machine::from_synthetic("nodes=4 cpus=2,2,2,0 mem=1G,1G,1G,1G distances=10,21,31,31/21,10,31,31/31,31,10,21/31,31,21,10");
    (void)fuzz::accepts([&] { (void)parse_policy(fuzz::text(data, size), machine); });
    return 0;
}
