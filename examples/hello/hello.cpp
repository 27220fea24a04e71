// Loads the machine this program runs on and prints its NUMA nodes.
#include <cstdio>
#include <numaware/machine.hpp>

int main() {
    const numaware::Machine m = numaware::Machine::from_live();
    std::printf("%zu NUMA node(s), %zu CPU(s)\n", m.node_count(), m.cpu_count());
    for (const auto& n : m.nodes)
        std::printf("node %u: %zu CPU(s), %llu bytes%s\n", n.os_index, n.cpus.size(),
                    static_cast<unsigned long long>(n.memory_bytes), n.has_cpus() ? "" : " (memory only)");
    return m.node_count() > 0 ? 0 : 1;
}
