// Fuzzes the short lists and names of the CLI and the APIs: node and CPU
// index lists, sizes, the NUMA balancing state, team mapping kinds and
// task policy names. The first byte picks the parser. Oracle for index
// lists: every index is below the limit.
#include "harness.hpp"
#include "numaware/balancing.hpp"
#include "numaware/machine.hpp"
#include "numaware/nodeset.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/team.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace numaware;
    if (size < 1 || size > 4096) return 0;
    const std::string_view t = fuzz::text(data + 1, size - 1);
    switch (data[0] % 7) {
    case 0:
        (void)fuzz::accepts([&] {
            for (unsigned i : parse_index_list(t, "nodes", "node", 64)) fuzz::require(i < 64);
        });
        break;
    case 1:
        (void)fuzz::accepts([&] { (void)parse_cpu_list(t); });
        break;
    case 2:
        (void)fuzz::accepts([&] { (void)parse_size(t, "size"); });
        break;
    case 3:
        (void)fuzz::accepts([&] { (void)parse_balancing_state(t); });
        break;
    case 4:
        (void)fuzz::accepts([&] { (void)parse_mapping_kind(t); });
        break;
    case 5:
        (void)fuzz::accepts([&] { tasks::check_policy_name(t); });
        break;
    default:
        (void)fuzz::accepts([&] { (void)tasks::make_policy(t); });
        break;
    }
    return 0;
}
