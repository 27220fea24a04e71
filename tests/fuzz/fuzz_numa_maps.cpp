// Fuzzes the /proc/PID/numa_maps parser.
#include "harness.hpp"
#include "os/numa_maps.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size > 65536) return 0;
    (void)fuzz::accepts([&] { (void)os::parse_numa_maps(fuzz::text(data, size)); });
    return 0;
}
