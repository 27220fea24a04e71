// Fuzzes the memory simulator's trace readers (numaware's binary format
// and ChampSim's records) through inspect_trace, on an in-memory file. The
// first byte picks the format: detected, numaware or ChampSim.
#include "harness.hpp"
#include "sim/memory/trace_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    using sim::memory::TraceFormat;
    if (size < 1 || size > (1u << 20)) return 0;
    static constexpr TraceFormat formats[] = {TraceFormat::automatic, TraceFormat::numaware, TraceFormat::champsim};
    fuzz::InputFile file(data + 1, size - 1);
    (void)fuzz::accepts([&] { (void)sim::memory::inspect_trace(file.path(), formats[data[0] % 3]); });
    return 0;
}
