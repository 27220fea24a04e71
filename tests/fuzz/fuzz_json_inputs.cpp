// Fuzzes the other JSON inputs: task graphs (TaskGraph::from_json, what
// `numaware sim` reads) and latency databases (what the latency-aware
// block allocator loads). The first byte picks the reader.
#include "harness.hpp"
#include "numaware/latency_blocks.hpp"
#include "numaware/tasks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size < 1 || size > 65536) return 0;
    const std::string_view t = fuzz::text(data + 1, size - 1);
    if (data[0] % 2 == 0)
        (void)fuzz::accepts([&] { (void)tasks::TaskGraph::from_json(t); });
    else
        (void)fuzz::accepts([&] { (void)latency_database_from_json(t); });
    return 0;
}
