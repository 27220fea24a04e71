// tools/vm/qemu_command.cpp — Machine -> guest layout -> QEMU argv (pure).
#include "tools/vm/qemu_command.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "numaware/nodeset.hpp"

namespace numaware::vm {
namespace {

constexpr std::uint64_t mib = std::uint64_t{1} << 20;
// ACPI SLIT: the local distance is 10 by definition and an entry is one byte.
constexpr unsigned slit_local = 10;
constexpr unsigned slit_max = 255;

std::string node_field(const Machine& machine, std::size_t pos) {
    return fmt::format("node {}", machine.nodes[pos].os_index);
}

// True when the Machine numbers its CPUs exactly 0..N-1 (in any node order),
// so the guest can use the same ids.
bool cpus_are_dense(const Machine& machine) {
    std::set<unsigned> all;
    std::size_t count = 0;
    for (const Node& node : machine.nodes) {
        all.insert(node.cpus.begin(), node.cpus.end());
        count += node.cpus.size();
    }
    if (all.size() != count || all.empty()) return false;
    return *all.rbegin() == count - 1;
}

// QEMU's option parser treats ',' as a separator; a literal comma is ",,".
std::string escape_option_value(const std::string& value) {
    std::string out;
    for (char c : value) {
        out += c;
        if (c == ',') out += ',';
    }
    return out;
}

// "cpus=0-3,cpus=6": QEMU takes one range per cpus= key.
std::string cpu_ranges(const std::vector<unsigned>& cpus) {
    std::string out;
    const std::string list = format_index_list(cpus);
    for (std::size_t i = 0; i < list.size();) {
        const std::size_t comma = std::min(list.find(',', i), list.size());
        out += ",cpus=" + list.substr(i, comma - i);
        i = comma + 1;
    }
    return out;
}

// A core's hardware threads as QEMU can emulate them (GuestLayout::
// threads_per_core): every core the same size t, its CPUs k*t..k*t+t-1.
unsigned qemu_threads_per_core(const Machine& machine) {
    const std::vector<std::vector<unsigned>> cores = machine.cores();
    if (cores.empty()) return 1;
    const auto t = static_cast<unsigned>(cores.front().size());
    if (t < 2) return 1;
    for (const std::vector<unsigned>& core : cores) {
        if (core.size() != t || core.front() % t != 0) return 1;
        for (unsigned i = 0; i < t; ++i)
            if (core[i] != core.front() + i) return 1;
    }
    return t;
}

}  // namespace

GuestLayout guest_layout(const Machine& machine, const LayoutOverrides& overrides) {
    const std::size_t n = machine.nodes.size();
    if (n == 0) throw Error("machine", "has no NUMA nodes; nothing to emulate");
    // The guest is hardware: a cpuset restricts a process inside it, not the
    // machine QEMU emulates (tests/vm set one up in the guest with cgroups).
    if (!machine.left_out.empty())
        throw Error("machine", "is the part of a machine that " + machine.left_out.by +
                                   " allow; emulate the whole machine and restrict the command inside the guest "
                                   "(a cgroup cpuset, numactl --cpunodebind)");
    if (overrides.cpus_per_node && *overrides.cpus_per_node == 0)
        throw Error("--cpus-per-node", "must be at least 1 (CPU-less nodes stay CPU-less)");
    if (overrides.mem_per_node && *overrides.mem_per_node < min_node_memory)
        throw Error("--mem-per-node", fmt::format("{} is below the minimum of {} per node",
                                                  format_size(*overrides.mem_per_node),
                                                  format_size(min_node_memory)));

    GuestLayout layout;
    layout.cpu_ids_preserved = !overrides.cpus_per_node && cpus_are_dense(machine);

    unsigned next_cpu = 0;
    for (std::size_t pos = 0; pos < n; ++pos) {
        const Node& src = machine.nodes[pos];
        GuestNode node;
        node.source_os_index = src.os_index;
        node.memory_bytes = overrides.mem_per_node.value_or(src.memory_bytes) / mib * mib;
        if (layout.cpu_ids_preserved) {
            node.cpus = src.cpus;
            std::sort(node.cpus.begin(), node.cpus.end());
        } else if (src.has_cpus()) {
            const unsigned count = overrides.cpus_per_node.value_or(static_cast<unsigned>(src.cpus.size()));
            for (unsigned c = 0; c < count; ++c) node.cpus.push_back(next_cpu++);
        }
        if (node.memory_bytes == 0 && node.cpus.empty())
            throw Error(node_field(machine, pos),
                        "has neither CPUs nor memory, so QEMU cannot emulate it; give it memory with --mem-per-node");
        if (node.memory_bytes != 0 && node.memory_bytes < min_node_memory)
            throw Error(node_field(machine, pos),
                        fmt::format("memory {} is below the emulation minimum of {}; pass --mem-per-node",
                                    format_size(node.memory_bytes), format_size(min_node_memory)));
        layout.cpu_count += static_cast<unsigned>(node.cpus.size());
        layout.memory_bytes += node.memory_bytes;
        layout.nodes.push_back(std::move(node));
    }

    if (layout.cpu_count == 0)
        throw Error("machine", "has no CPUs; the guest needs at least one node with CPUs");
    if (layout.cpu_count > max_guest_cpus)
        throw Error("machine", fmt::format("{} vCPUs exceed the emulation limit of {}; "
                                           "pass --cpus-per-node to use fewer CPUs per node",
                                           layout.cpu_count, max_guest_cpus));
    if (layout.memory_bytes > max_guest_memory)
        throw Error("machine", fmt::format("{} of guest memory exceeds the emulation limit of {}; "
                                           "pass --mem-per-node to give each node less",
                                           format_size(layout.memory_bytes), format_size(max_guest_memory)));
    if (layout.memory_bytes < min_guest_memory)
        throw Error("machine", fmt::format("{} of guest memory is below the {} a guest needs to boot; "
                                           "pass --mem-per-node",
                                           format_size(layout.memory_bytes), format_size(min_guest_memory)));

    if (machine.distances.size() != n)
        throw Error("distances", fmt::format("has {} rows for {} nodes", machine.distances.size(), n));
    for (std::size_t i = 0; i < n; ++i) {
        if (machine.distances[i].size() != n)
            throw Error(fmt::format("distances[{}]", i),
                        fmt::format("has {} entries for {} nodes", machine.distances[i].size(), n));
        for (std::size_t j = 0; j < n; ++j) {
            const unsigned d = machine.distances[i][j];
            const std::string field = fmt::format("distances[{}][{}]", i, j);
            if (i == j && d != slit_local)
                throw Error(field, fmt::format("is {}; an emulated SLIT needs the local distance {}", d, slit_local));
            if (i != j && (d <= slit_local || d > slit_max))
                throw Error(field, fmt::format("is {}; an emulated SLIT needs remote distances in {}..{}",
                                               d, slit_local + 1, slit_max));
        }
    }
    layout.distances = machine.distances;
    if (layout.cpu_ids_preserved) layout.threads_per_core = qemu_threads_per_core(machine);
    return layout;
}

Machine guest_machine(const Machine& machine, const GuestLayout& layout) {
    Machine guest;
    guest.name = machine.name.empty() ? "emulated" : machine.name + " (emulated)";
    for (std::size_t pos = 0; pos < layout.nodes.size(); ++pos) {
        const Node& src = machine.nodes[pos];
        Node node;
        node.os_index = static_cast<unsigned>(pos);
        node.memory_bytes = layout.nodes[pos].memory_bytes;
        node.cpus = layout.nodes[pos].cpus;
        node.tier = src.tier;
        node.kind = src.kind;
        guest.nodes.push_back(std::move(node));
    }
    if (layout.cpu_ids_preserved) guest.caches = machine.caches;
    // The cores the guest kernel shows: a core's threads only where QEMU
    // emulates them (else each vCPU is a core of its own).
    if (layout.threads_per_core > 1) guest.smt_cores = machine.smt_cores;
    guest.distances = layout.distances;
    guest.latency_ns = machine.latency_ns;
    guest.bandwidth_gbps = machine.bandwidth_gbps;
    return guest;
}

std::string share_tag(std::size_t i) { return fmt::format("nwshare{}", i); }

std::string kernel_cmdline() {
    // panic=-1 turns a failed init into an immediate reboot, which
    // -no-reboot turns into QEMU exiting: a broken guest never hangs.
    return "console=ttyS0 quiet panic=-1 rdinit=/init";
}

std::vector<std::string> qemu_command(const GuestLayout& layout, const QemuPaths& paths) {
    std::vector<std::string> argv{
        paths.qemu,
        // KVM hangs after the BIOS on these hosts; multi-threaded TCG works.
        "-accel", "tcg,thread=multi", "-cpu", "max",
        // One socket per core (a vCPU, or a core's hardware threads):
        // sockets never straddle nodes, so the guest scheduler sees no
        // cache shared across nodes.
        "-smp", fmt::format("{},sockets={},cores=1,threads={}", layout.cpu_count,
                            layout.cpu_count / layout.threads_per_core, layout.threads_per_core),
        "-m", fmt::format("{}M", layout.memory_bytes / mib),
    };
    for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
        const GuestNode& node = layout.nodes[i];
        if (node.memory_bytes == 0) continue;
        argv.insert(argv.end(), {"-object", fmt::format("memory-backend-ram,id=m{},size={}M", i,
                                                         node.memory_bytes / mib)});
    }
    for (std::size_t i = 0; i < layout.nodes.size(); ++i) {
        const GuestNode& node = layout.nodes[i];
        // No cpus= makes a memory-only node; no memdev= a memoryless one.
        std::string spec = fmt::format("node,nodeid={}", i) + cpu_ranges(node.cpus);
        if (node.memory_bytes != 0) spec += fmt::format(",memdev=m{}", i);
        argv.insert(argv.end(), {"-numa", spec});
    }
    for (std::size_t i = 0; i < layout.nodes.size(); ++i)
        for (std::size_t j = 0; j < layout.nodes.size(); ++j)
            if (i != j)
                argv.insert(argv.end(), {"-numa", fmt::format("dist,src={},dst={},val={}", i, j,
                                                              layout.distances[i][j])});
    argv.insert(argv.end(), {
        "-kernel", paths.kernel,
        "-initrd", paths.initramfs,
        "-append", paths.kernel_args.empty() ? kernel_cmdline() : kernel_cmdline() + " " + paths.kernel_args,
        // No default devices (VGA, NIC, floppy): faster boot, nothing to
        // configure. The console goes to a file so QEMU's stdio stays free.
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-chardev", "file,id=console,path=" + escape_option_value(paths.serial_log),
        "-serial", "chardev:console",
        "-monitor", "none",
        // The host root, read-only; multidevs=remap keeps inode numbers
        // unique across the host's mount points.
        "-virtfs", "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap",
        "-virtfs", "local,path=" + escape_option_value(paths.results_dir) +
                       ",mount_tag=nwout,security_model=none,multidevs=remap",
    });
    for (std::size_t i = 0; i < paths.shares.size(); ++i)
        argv.insert(argv.end(), {"-virtfs", "local,path=" + escape_option_value(paths.shares[i]) +
                                                ",mount_tag=" + share_tag(i) +
                                                ",security_model=none,multidevs=remap"});
    return argv;
}

}  // namespace numaware::vm
