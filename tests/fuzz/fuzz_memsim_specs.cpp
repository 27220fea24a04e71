// Fuzzes the memory simulator's option specs: prefetchers ("stride:8",
// "nasp:8:64", ...), page mappings, trace formats, and the task
// simulator's contention model. The first byte picks the parser.
#include "harness.hpp"
#include "numaware/memory_sim.hpp"
#include "numaware/sim.hpp"
#include "sim/memory/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size < 1 || size > 4096) return 0;
    const std::string_view t = fuzz::text(data + 1, size - 1);
    switch (data[0] % 4) {
    case 0:
        (void)fuzz::accepts([&] { (void)sim::memory::parse_prefetch(t); });
        break;
    case 1:
        (void)fuzz::accepts([&] { (void)sim::memory::parse_page_mapping(t); });
        break;
    case 2:
        (void)fuzz::accepts([&] { (void)sim::memory::parse_trace_format(t); });
        break;
    default:
        (void)fuzz::accepts([&] { (void)sim::parse_contention(t); });
        break;
    }
    return 0;
}
