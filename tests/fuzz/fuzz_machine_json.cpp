// Fuzzes Machine::from_json. Oracle: an accepted machine survives its own
// JSON exactly.
#include "harness.hpp"
#include "numaware/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size > 65536) return 0;
    std::optional<Machine> m;
    if (!fuzz::accepts([&] { m = Machine::from_json(fuzz::text(data, size)); })) return 0;
    fuzz::require(Machine::from_json(m->to_json()) == *m);
    return 0;
}
