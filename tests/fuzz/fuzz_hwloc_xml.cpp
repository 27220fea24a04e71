// Fuzzes the hwloc XML loader (Machine::from_hwloc_xml: hwloc parses, then
// numaware's model is built and validated from what hwloc made of it).
// Oracle: an accepted machine survives its own JSON exactly.
#include <cstdlib>

#include "harness.hpp"
#include "numaware/machine.hpp"

// hwloc's own XML importer, built into libhwloc: the libxml2 one is a
// plugin that hwloc unloads, so LeakSanitizer could not name its frames.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("HWLOC_XML_VERBOSE", "0", 1);
    setenv("HWLOC_LIBXML_IMPORT", "0", 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size > 65536) return 0;
    fuzz::InputFile file(data, size);
    std::optional<Machine> m;
    if (!fuzz::accepts([&] { m = Machine::from_hwloc_xml(file.path()); })) return 0;
    fuzz::require(Machine::from_json(m->to_json()) == *m);
    return 0;
}
