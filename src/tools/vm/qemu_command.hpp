// tools/vm/qemu_command.hpp — from a Machine to the QEMU command line.
//
// Pure and deterministic: no files, no processes. The runner feeds the
// result to execvp. Two steps, so each can be tested on its own:
//   guest_layout(machine, overrides)  decides the guest's nodes, CPUs and
//                                     memory, and enforces the emulation limits;
//   qemu_command(layout, paths)       spells that layout as QEMU arguments.
//
// Guest node ids are the node *positions* in Machine::nodes (0..n-1): the
// emulated firmware numbers nodes densely, so a Machine whose os_index values
// are 0,2,5 becomes guest nodes 0,1,2. guest_machine() describes the result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "numaware/machine.hpp"

namespace numaware::vm {

// What QEMU can emulate here in reasonable time and host memory.
inline constexpr unsigned max_guest_cpus = 32;
inline constexpr std::uint64_t max_guest_memory = std::uint64_t{16} << 30;   // 16 GiB
// Below this the kernel drops a node or fails to boot; sizes are also
// rounded down to whole MiB because QEMU's memory backends are page-granular.
inline constexpr std::uint64_t min_node_memory = std::uint64_t{64} << 20;    // 64 MiB
inline constexpr std::uint64_t min_guest_memory = std::uint64_t{256} << 20;  // 256 MiB

// Command-line overrides for machines too big to emulate as described.
struct LayoutOverrides {
    std::optional<std::uint64_t> mem_per_node;   // --mem-per-node: every node
    std::optional<unsigned> cpus_per_node;       // --cpus-per-node: nodes that have CPUs
};

struct GuestNode {
    unsigned source_os_index = 0;   // the Machine node this guest node emulates
    std::uint64_t memory_bytes = 0; // 0 = memoryless node (CPUs only)
    std::vector<unsigned> cpus;     // guest CPU ids (QEMU cpu-index), ascending
};

struct GuestLayout {
    std::vector<GuestNode> nodes;         // index = guest node id
    NodeMatrix<unsigned> distances;       // SLIT, by guest node id
    unsigned cpu_count = 0;
    std::uint64_t memory_bytes = 0;
    // True when guest CPU ids equal the Machine's CPU OS indices (the
    // Machine numbers its CPUs 0..N-1 and no override changed the counts).
    bool cpu_ids_preserved = false;
    // Hardware threads per emulated core: the Machine's (Machine::cores())
    // when CPU ids are preserved and every core is `t` consecutive CPUs
    // starting at a multiple of t, as QEMU numbers a core's threads; else 1.
    unsigned threads_per_core = 1;
};

// Decides the guest layout. Throws Error naming the field and the limit:
//   "machine"  more than max_guest_cpus vCPUs or max_guest_memory in total
//              (the message names --cpus-per-node / --mem-per-node);
//   "node N"   a node with neither CPUs nor memory, or memory below
//              min_node_memory;
//   "distances[i][j]"  a SLIT entry QEMU cannot express (diagonal must be 10,
//              others 11..255).
GuestLayout guest_layout(const Machine& machine, const LayoutOverrides& overrides = {});

// The Machine the guest will report: node os_index = guest node id, CPUs as
// numbered in the guest, tiers/kinds/distances/latency/bandwidth carried
// over. Caches are dropped unless CPU ids are preserved; SMT cores unless
// QEMU emulates them (threads_per_core > 1).
Machine guest_machine(const Machine& machine, const GuestLayout& layout);

// Files and shares the command line refers to.
struct QemuPaths {
    std::string qemu = "qemu-system-x86_64";
    std::string kernel;        // vmlinuz
    std::string initramfs;     // cpio
    std::string serial_log;    // the guest console goes here
    std::string results_dir;   // writable export, mount tag "nwout"
    // Extra writable exports: mount tags "nwshare0", "nwshare1", ...
    std::vector<std::string> shares;
    // Appended to kernel_cmdline(), e.g. "numa_balancing=disable".
    std::string kernel_args;
};

// The mount tag QEMU and the guest init use for shares[i].
std::string share_tag(std::size_t i);

// Full argv, argv[0] = paths.qemu.
std::vector<std::string> qemu_command(const GuestLayout& layout, const QemuPaths& paths);

// The kernel command line qemu_command passes with -append.
std::string kernel_cmdline();

}  // namespace numaware::vm
