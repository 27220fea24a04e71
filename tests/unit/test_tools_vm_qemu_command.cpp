// Tests for the emulated-machine harness's pure parts: the guest layout and
// QEMU command built from a Machine, the guest scripts, kernel selection,
// module load order, the cpio writer and the guest environment. Machines are
// built by hand so these tests depend on nothing but the Machine struct.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support.hpp"
#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "tools/vm/guest_init.hpp"
#include "tools/vm/initramfs.hpp"
#include "tools/vm/kernel_cache.hpp"
#include "tools/vm/process.hpp"
#include "tools/vm/qemu_command.hpp"
#include "tools/vm/runner.hpp"

using numaware::Error;
using numaware::Machine;
using numaware::Node;
namespace vm = numaware::vm;

namespace {

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

Node node(unsigned os_index, std::uint64_t mem, std::vector<unsigned> cpus) {
    Node n;
    n.os_index = os_index;
    n.memory_bytes = mem;
    n.cpus = std::move(cpus);
    return n;
}

// A 4-node machine with SLIT 10/21/31, one CPU per node.
Machine four_nodes() {
    Machine m;
    m.name = "four";
    for (unsigned i = 0; i < 4; ++i) m.nodes.push_back(node(i, 256 * MiB, {i}));
    m.distances = {{10, 21, 31, 31}, {21, 10, 21, 31}, {31, 21, 10, 21}, {31, 31, 21, 10}};
    return m;
}

using numaware::test::contains;
using numaware::test::expect_error;

std::vector<std::string> values_of(const std::vector<std::string>& argv, const std::string& flag) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == flag) out.push_back(argv[i + 1]);
    return out;
}

vm::QemuPaths paths() {
    vm::QemuPaths p;
    p.kernel = "/k/vmlinuz";
    p.initramfs = "/k/initramfs.cpio";
    p.serial_log = "/r/console.log";
    p.results_dir = "/r/out";
    return p;
}

}  // namespace

TEST(VmLayout, FourNodesKeepTheirCpusMemoryAndSlit) {
    const Machine m = four_nodes();
    const vm::GuestLayout l = vm::guest_layout(m);
    ASSERT_EQ(l.nodes.size(), 4u);
    EXPECT_EQ(l.cpu_count, 4u);
    EXPECT_EQ(l.memory_bytes, 1024 * MiB);
    EXPECT_TRUE(l.cpu_ids_preserved);
    for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(l.nodes[i].cpus, std::vector<unsigned>{i});
    EXPECT_EQ(l.distances, m.distances);
}

TEST(VmQemuCommand, FourNodesSpellNodesCpusAndEveryDistancePair) {
    const auto argv = vm::qemu_command(vm::guest_layout(four_nodes()), paths());
    EXPECT_EQ(argv.front(), "qemu-system-x86_64");
    EXPECT_EQ(values_of(argv, "-accel"), std::vector<std::string>{"tcg,thread=multi"});
    EXPECT_EQ(values_of(argv, "-cpu"), std::vector<std::string>{"max"});
    EXPECT_EQ(values_of(argv, "-smp"), std::vector<std::string>{"4,sockets=4,cores=1,threads=1"});
    EXPECT_EQ(values_of(argv, "-m"), std::vector<std::string>{"1024M"});
    EXPECT_EQ(values_of(argv, "-object"),
              (std::vector<std::string>{"memory-backend-ram,id=m0,size=256M", "memory-backend-ram,id=m1,size=256M",
                                        "memory-backend-ram,id=m2,size=256M", "memory-backend-ram,id=m3,size=256M"}));
    const auto numa = values_of(argv, "-numa");
    ASSERT_EQ(numa.size(), 4u + 12u);   // 4 nodes + every ordered pair i != j
    EXPECT_EQ(numa[0], "node,nodeid=0,cpus=0,memdev=m0");
    EXPECT_EQ(numa[3], "node,nodeid=3,cpus=3,memdev=m3");
    EXPECT_NE(std::find(numa.begin(), numa.end(), "dist,src=0,dst=3,val=31"), numa.end());
    EXPECT_NE(std::find(numa.begin(), numa.end(), "dist,src=3,dst=0,val=31"), numa.end());
    EXPECT_NE(std::find(numa.begin(), numa.end(), "dist,src=2,dst=1,val=21"), numa.end());
    EXPECT_EQ(std::find(numa.begin(), numa.end(), "dist,src=1,dst=1,val=10"), numa.end());
    // No KVM: it hangs after the BIOS on the hosts this targets.
    EXPECT_EQ(std::find(argv.begin(), argv.end(), "-enable-kvm"), argv.end());
    EXPECT_TRUE(values_of(argv, "-accel").size() == 1);
    EXPECT_EQ(values_of(argv, "-append"), std::vector<std::string>{vm::kernel_cmdline()});
    EXPECT_TRUE(contains(vm::kernel_cmdline(), "console=ttyS0"));
    EXPECT_TRUE(contains(vm::kernel_cmdline(), "panic=-1"));
    EXPECT_NE(std::find(argv.begin(), argv.end(), "-no-reboot"), argv.end());
    const auto fs = values_of(argv, "-virtfs");
    ASSERT_EQ(fs.size(), 2u);
    EXPECT_EQ(fs[0], "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap");
    EXPECT_EQ(fs[1], "local,path=/r/out,mount_tag=nwout,security_model=none,multidevs=remap");
}

TEST(VmQemuCommand, CpuRangesAreGroupedPerNode) {
    Machine m;
    // CPUs interleaved across nodes, as on many two-socket machines.
    m.nodes = {node(0, 512 * MiB, {0, 1, 2, 3, 8, 9}), node(1, 512 * MiB, {4, 5, 6, 7, 10, 11})};
    m.distances = {{10, 20}, {20, 10}};
    const auto l = vm::guest_layout(m);
    EXPECT_TRUE(l.cpu_ids_preserved);
    const auto numa = values_of(vm::qemu_command(l, paths()), "-numa");
    EXPECT_EQ(numa[0], "node,nodeid=0,cpus=0-3,cpus=8-9,memdev=m0");
    EXPECT_EQ(numa[1], "node,nodeid=1,cpus=4-7,cpus=10-11,memdev=m1");
    EXPECT_EQ(values_of(vm::qemu_command(l, paths()), "-smp"), std::vector<std::string>{"12,sockets=12,cores=1,threads=1"});
}

TEST(VmQemuCommand, HardwareThreadsNumberedSideBySideAreEmulated) {
    // 2 nodes x 2 cores x 2 threads, a core's threads next to each other
    // (as QEMU numbers them): one socket per core, two threads each.
    const Machine m = Machine::from_synthetic("hwloc:NUMANode:2 L1Cache:2 Core:1 PU:2");
    const auto l = vm::guest_layout(m);
    EXPECT_EQ(l.threads_per_core, 2u);
    const auto argv = vm::qemu_command(l, paths());
    EXPECT_EQ(values_of(argv, "-smp"), std::vector<std::string>{"8,sockets=4,cores=1,threads=2"});
    const auto numa = values_of(argv, "-numa");
    EXPECT_EQ(numa[0], "node,nodeid=0,cpus=0-3,memdev=m0");
    EXPECT_EQ(numa[1], "node,nodeid=1,cpus=4-7,memdev=m1");
    // The guest's model keeps the cores.
    EXPECT_EQ(vm::guest_machine(m, l).cores(), m.cores());
    // Linux's numbering of the threads (a core's second thread in the
    // node's second half) is not QEMU's: one thread per emulated core.
    const Machine linux_numbered =
        Machine::from_hwloc_xml(std::string(NUMAWARE_TOPOLOGY_DIR) + "/32em64t-2n8c2t-pci-noio.xml");
    const auto flat = vm::guest_layout(linux_numbered, {.mem_per_node = 256 * MiB, .cpus_per_node = std::nullopt});
    EXPECT_EQ(flat.threads_per_core, 1u);
    EXPECT_TRUE(vm::guest_machine(linux_numbered, flat).smt_cores.empty()) << "the guest shows no SMT";
    // Cores of unequal sizes: one thread per core too.
    Machine uneven = m;
    uneven.caches.pop_back();   // the last core's threads become two cores
    uneven.smt_cores.pop_back();
    EXPECT_EQ(vm::guest_layout(uneven).threads_per_core, 1u);
}

TEST(VmQemuCommand, CpuLessNodeHasMemdevButNoCpus) {
    Machine m;
    m.nodes = {node(0, 512 * MiB, {0, 1}), node(1, 256 * MiB, {})};
    m.nodes[1].kind = "CXL";
    m.nodes[1].tier = 1;
    m.distances = {{10, 40}, {40, 10}};
    const auto l = vm::guest_layout(m);
    const auto argv = vm::qemu_command(l, paths());
    const auto numa = values_of(argv, "-numa");
    EXPECT_EQ(numa[1], "node,nodeid=1,memdev=m1");
    EXPECT_EQ(values_of(argv, "-m"), std::vector<std::string>{"768M"});
    EXPECT_EQ(values_of(argv, "-smp"), std::vector<std::string>{"2,sockets=2,cores=1,threads=1"});
    const Machine g = vm::guest_machine(m, l);
    EXPECT_FALSE(g.nodes[1].has_cpus());
    EXPECT_EQ(g.nodes[1].kind, "CXL");
    EXPECT_EQ(g.nodes[1].tier, 1);
}

TEST(VmQemuCommand, ZeroMemoryNodeWithCpusBecomesMemoryless) {
    Machine m;
    m.nodes = {node(0, 512 * MiB, {0}), node(1, 0, {1})};
    m.distances = {{10, 20}, {20, 10}};
    const auto argv = vm::qemu_command(vm::guest_layout(m), paths());
    const auto numa = values_of(argv, "-numa");
    EXPECT_EQ(numa[1], "node,nodeid=1,cpus=1");   // no memdev: a memoryless node
    EXPECT_EQ(values_of(argv, "-object").size(), 1u);
    EXPECT_EQ(values_of(argv, "-m"), std::vector<std::string>{"512M"});
}

TEST(VmLayout, NonContiguousOsIndicesBecomeGuestPositions) {
    Machine m;
    m.nodes = {node(0, 256 * MiB, {0}), node(2, 256 * MiB, {1}), node(5, 256 * MiB, {})};
    m.distances = {{10, 20, 30}, {20, 10, 30}, {30, 30, 10}};
    const auto l = vm::guest_layout(m);
    EXPECT_EQ(l.nodes[1].source_os_index, 2u);
    EXPECT_EQ(l.nodes[2].source_os_index, 5u);
    const auto numa = values_of(vm::qemu_command(l, paths()), "-numa");
    EXPECT_EQ(numa[1], "node,nodeid=1,cpus=1,memdev=m1");
    EXPECT_EQ(numa[2], "node,nodeid=2,memdev=m2");
    const Machine g = vm::guest_machine(m, l);
    EXPECT_EQ(g.nodes[2].os_index, 2u);
    EXPECT_EQ(g.distances, m.distances);
}

TEST(VmLayout, SparseCpuIdsAreRenumberedContiguouslyByNode) {
    Machine m;
    m.nodes = {node(0, 256 * MiB, {4, 6}), node(1, 256 * MiB, {20, 22})};
    m.distances = {{10, 20}, {20, 10}};
    const auto l = vm::guest_layout(m);
    EXPECT_FALSE(l.cpu_ids_preserved);
    EXPECT_EQ(l.nodes[0].cpus, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(l.nodes[1].cpus, (std::vector<unsigned>{2, 3}));
}

TEST(VmLayout, OverridesApplyToEveryNodeButCpuLessStayCpuLess) {
    Machine m;
    m.nodes = {node(0, 64ull << 30, {0, 1, 2, 3, 4, 5, 6, 7}), node(1, 64ull << 30, {8, 9, 10, 11, 12, 13, 14, 15}),
               node(2, 16ull << 30, {})};
    m.distances = {{10, 20, 30}, {20, 10, 30}, {30, 30, 10}};
    vm::LayoutOverrides o;
    o.cpus_per_node = 2;
    o.mem_per_node = 512 * MiB;
    const auto l = vm::guest_layout(m, o);
    EXPECT_FALSE(l.cpu_ids_preserved);
    EXPECT_EQ(l.nodes[0].cpus, (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(l.nodes[1].cpus, (std::vector<unsigned>{2, 3}));
    EXPECT_TRUE(l.nodes[2].cpus.empty());
    EXPECT_EQ(l.memory_bytes, 3 * 512 * MiB);
}

TEST(VmLayout, TooManyCpusNamesTheLimitAndTheOverride) {
    Machine m;
    std::vector<unsigned> a, b;
    for (unsigned c = 0; c < 20; ++c) a.push_back(c);
    for (unsigned c = 20; c < 40; ++c) b.push_back(c);
    m.nodes = {node(0, 256 * MiB, a), node(1, 256 * MiB, b)};
    m.distances = {{10, 20}, {20, 10}};
    const Error e = expect_error([&] { vm::guest_layout(m); });
    EXPECT_EQ(e.field(), "machine");
    EXPECT_TRUE(contains(e.what(), "40 vCPUs")) << e.what();
    EXPECT_TRUE(contains(e.what(), "limit of 32")) << e.what();
    EXPECT_TRUE(contains(e.what(), "--cpus-per-node")) << e.what();
    vm::LayoutOverrides o;
    o.cpus_per_node = 16;
    EXPECT_EQ(vm::guest_layout(m, o).cpu_count, 32u);   // exactly at the limit is fine
}

TEST(VmLayout, TooMuchMemoryNamesTheLimitAndTheOverride) {
    Machine m = four_nodes();
    for (auto& n : m.nodes) n.memory_bytes = 8ull << 30;
    const Error e = expect_error([&] { vm::guest_layout(m); });
    EXPECT_EQ(e.field(), "machine");
    EXPECT_TRUE(contains(e.what(), "32G")) << e.what();
    EXPECT_TRUE(contains(e.what(), "limit of 16G")) << e.what();
    EXPECT_TRUE(contains(e.what(), "--mem-per-node")) << e.what();
    for (auto& n : m.nodes) n.memory_bytes = 4ull << 30;
    EXPECT_EQ(vm::guest_layout(m).memory_bytes, 16ull << 30);   // exactly at the limit is fine
}

TEST(VmLayout, NodeWithNeitherCpusNorMemoryIsRefused) {
    Machine m;
    m.nodes = {node(0, 512 * MiB, {0}), node(3, 0, {})};
    m.distances = {{10, 20}, {20, 10}};
    const Error e = expect_error([&] { vm::guest_layout(m); });
    EXPECT_EQ(e.field(), "node 3");
    EXPECT_TRUE(contains(e.what(), "neither CPUs nor memory")) << e.what();
    vm::LayoutOverrides o;
    o.mem_per_node = 256 * MiB;
    EXPECT_EQ(vm::guest_layout(m, o).nodes[1].memory_bytes, 256 * MiB);
}

TEST(VmLayout, TinyNodesAndBadOverridesAreRefused) {
    Machine m = four_nodes();
    m.nodes[2].memory_bytes = 16 * MiB;
    Error e = expect_error([&] { vm::guest_layout(m); });
    EXPECT_EQ(e.field(), "node 2");
    EXPECT_TRUE(contains(e.what(), "minimum of 64M")) << e.what();

    vm::LayoutOverrides zero_cpus;
    zero_cpus.cpus_per_node = 0;
    e = expect_error([&] { vm::guest_layout(four_nodes(), zero_cpus); });
    EXPECT_EQ(e.field(), "--cpus-per-node");

    vm::LayoutOverrides small;
    small.mem_per_node = MiB;
    e = expect_error([&] { vm::guest_layout(four_nodes(), small); });
    EXPECT_EQ(e.field(), "--mem-per-node");
    EXPECT_TRUE(contains(e.what(), "1M")) << e.what();

    Machine all_cpuless;
    all_cpuless.nodes = {node(0, 512 * MiB, {})};
    all_cpuless.distances = {{10}};
    e = expect_error([&] { vm::guest_layout(all_cpuless); });
    EXPECT_TRUE(contains(e.what(), "has no CPUs")) << e.what();
}

TEST(VmLayout, SlitEntriesQemuCannotExpressAreNamed) {
    Machine m = four_nodes();
    m.distances[1][1] = 11;
    Error e = expect_error([&] { vm::guest_layout(m); });
    EXPECT_EQ(e.field(), "distances[1][1]");
    EXPECT_TRUE(contains(e.what(), "local distance 10")) << e.what();

    m = four_nodes();
    m.distances[0][3] = 300;
    e = expect_error([&] { vm::guest_layout(m); });
    EXPECT_EQ(e.field(), "distances[0][3]");
    EXPECT_TRUE(contains(e.what(), "11..255")) << e.what();

    m = four_nodes();
    m.distances.pop_back();
    e = expect_error([&] { vm::guest_layout(m); });
    EXPECT_EQ(e.field(), "distances");
}

TEST(VmQemuCommand, SharesAndCommasInPathsAreEscaped) {
    auto p = paths();
    p.results_dir = "/r/a,b";
    p.shares = {"/data/x", "/data/y,z"};
    const auto fs = values_of(vm::qemu_command(vm::guest_layout(four_nodes()), p), "-virtfs");
    ASSERT_EQ(fs.size(), 4u);
    EXPECT_EQ(fs[1], "local,path=/r/a,,b,mount_tag=nwout,security_model=none,multidevs=remap");
    EXPECT_EQ(fs[2], "local,path=/data/x,mount_tag=nwshare0,security_model=none,multidevs=remap");
    EXPECT_EQ(fs[3], "local,path=/data/y,,z,mount_tag=nwshare1,security_model=none,multidevs=remap");
}

TEST(VmGuestScripts, CommandScriptQuotesEveryWordAndExportsTheEnvironment) {
    vm::GuestCommand c;
    c.argv = {"printf", "%s|", "it's", "$HOME", "a b"};
    c.cwd = "/home/u/my dir";
    c.env = {{"NUMAWARE_VM", "1"}, {"X", "a'b"}};
    const std::string s = vm::command_script(c);
    EXPECT_TRUE(contains(s, "export NUMAWARE_VM='1'\n"));
    EXPECT_TRUE(contains(s, "export X='a'\\''b'\n"));
    EXPECT_TRUE(contains(s, "cd '/home/u/my dir' ||"));
    EXPECT_TRUE(contains(s, "exit 125"));
    EXPECT_TRUE(contains(s, "exec 'printf' '%s|' 'it'\\''s' '$HOME' 'a b'\n"));
}

TEST(VmGuestScripts, InitLoadsModulesInOrderAndReportsStatusLast) {
    const std::string s = vm::guest_init_script({"virtio_ring", "9pnet", "9p"});
    EXPECT_EQ(s.rfind("#!/bin/busybox sh\n", 0), 0u);
    EXPECT_TRUE(contains(s, "for m in virtio_ring 9pnet 9p; do"));
    // The host root is mounted read-only.
    const auto host_mount = s.find(" host /host");
    ASSERT_NE(host_mount, std::string::npos);
    const std::string line = s.substr(s.rfind('\n', host_mount) + 1, host_mount - s.rfind('\n', host_mount));
    EXPECT_TRUE(contains(line, ",ro")) << line;
    EXPECT_TRUE(contains(s, "mount -t tmpfs -o mode=1777 tmpfs /host/tmp"));
    // status is the host's sign that the command ran, so it comes after the
    // outputs are closed and before power-off.
    const auto status = s.find("> /out/status");
    ASSERT_NE(status, std::string::npos);
    EXPECT_LT(s.find(">/out/stdout 2>/out/stderr"), status);
    EXPECT_LT(status, s.rfind("poweroff -f"));
}

TEST(VmKernelCache, ReleasesCompareNumerically) {
    EXPECT_LT(vm::compare_releases("6.1.0-9-amd64", "6.1.0-56-amd64"), 0);
    EXPECT_LT(vm::compare_releases("6.1.0-56-amd64", "6.12.95+deb12-amd64"), 0);
    EXPECT_GT(vm::compare_releases("6.12.1", "6.9.20"), 0);
    EXPECT_EQ(vm::compare_releases("6.1.0-56-amd64", "6.1.0-56-amd64"), 0);
    EXPECT_TRUE(vm::release_in_series("6.1.0-56-amd64", "6.1"));
    EXPECT_FALSE(vm::release_in_series("6.12.95+deb12-amd64", "6.1"));
    EXPECT_TRUE(vm::release_in_series("6.12.95+deb12-amd64", "6.12"));
}

TEST(VmKernelCache, FindsByNewestSeriesExactOrPathAndNamesTheFetchScript) {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("nw-kcache-" + std::to_string(::getpid()));
    fs::remove_all(root);
    Error e = expect_error([&] { vm::find_kernel("", root.string()); });
    EXPECT_EQ(e.field(), "--kernel");
    EXPECT_TRUE(contains(e.what(), "scripts/fetch-guest-kernel")) << e.what();

    for (const char* rel : {"6.1.0-9-amd64", "6.1.0-56-amd64", "6.12.95+deb12-amd64"}) {
        const fs::path dir = root / "kernels" / rel;
        fs::create_directories(dir / "lib" / "modules" / rel);
        std::ofstream(dir / "vmlinuz") << "image";
    }
    fs::create_directories(root / "kernels" / "incomplete");   // no vmlinuz: ignored
    EXPECT_EQ(vm::cached_kernels(root.string()).size(), 3u);
    EXPECT_EQ(vm::find_kernel("", root.string()).release, "6.12.95+deb12-amd64");
    EXPECT_EQ(vm::find_kernel("6.1", root.string()).release, "6.1.0-56-amd64");
    EXPECT_EQ(vm::find_kernel("6.1.0-9-amd64", root.string()).release, "6.1.0-9-amd64");
    const auto by_path = vm::find_kernel((root / "kernels" / "6.1.0-9-amd64" / "vmlinuz").string(), root.string());
    EXPECT_EQ(by_path.release, "6.1.0-9-amd64");
    EXPECT_TRUE(contains(by_path.modules_dir, "lib/modules/6.1.0-9-amd64"));
    e = expect_error([&] { vm::find_kernel("5.10", root.string()); });
    EXPECT_TRUE(contains(e.what(), "5.10")) << e.what();
    EXPECT_TRUE(contains(e.what(), "6.1.0-56-amd64")) << e.what();   // lists what is cached
    EXPECT_TRUE(contains(e.what(), "scripts/fetch-guest-kernel")) << e.what();
    fs::remove_all(root);
}

TEST(VmKernelCache, BootsTheDecompressedPvhImageWhenTheEntryHasOneUnlessVmlinuzIsNamed) {
    namespace fs = std::filesystem;
    const fs::path root = fs::temp_directory_path() / ("nw-kpvh-" + std::to_string(::getpid()));
    fs::remove_all(root);
    const fs::path dir = root / "kernels" / "6.1.0-56-amd64";
    fs::create_directories(dir / "lib" / "modules" / "6.1.0-56-amd64");
    std::ofstream(dir / "vmlinuz") << "image";
    EXPECT_EQ(vm::find_kernel("6.1", root.string()).boot_image(), (dir / "vmlinuz").string());
    std::ofstream(dir / "vmlinux") << "elf";
    EXPECT_EQ(vm::find_kernel("6.1", root.string()).boot_image(), (dir / "vmlinux").string());
    EXPECT_EQ(vm::find_kernel(dir.string(), root.string()).boot_image(), (dir / "vmlinux").string());
    EXPECT_EQ(vm::find_kernel((dir / "vmlinuz").string(), root.string()).boot_image(), (dir / "vmlinuz").string());
    EXPECT_EQ(vm::find_kernel((dir / "vmlinux").string(), root.string()).boot_image(), (dir / "vmlinux").string());
    EXPECT_EQ(vm::find_kernel("6.1", root.string()).image, (dir / "vmlinuz").string());
    fs::remove_all(root);
}

TEST(VmInitramfs, ModulesLoadDependenciesFirstAndSkipBuiltins) {
    // The 6.1 shape: virtio is modular.
    const std::map<std::string, std::vector<std::string>> deps{
        {"virtio_pci", {"virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio", "virtio_ring"}},
        {"virtio_pci_modern_dev", {"virtio"}},
        {"virtio_pci_legacy_dev", {}},
        {"virtio", {"virtio_ring"}},
        {"virtio_ring", {}},
        {"9pnet_virtio", {"9pnet", "virtio", "virtio_ring"}},
        {"9pnet", {}},
        {"9p", {"9pnet", "netfs", "fscache"}},
        {"netfs", {}},
        {"fscache", {"netfs"}},
    };
    const auto order = vm::module_load_order(vm::wanted_modules(), deps, {});
    EXPECT_EQ(order.size(), deps.size());
    auto at = [&](const std::string& n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
    for (const auto& [mod, needs] : deps)
        for (const auto& d : needs) EXPECT_LT(at(d), at(mod)) << d << " before " << mod;

    // The 6.12 shape: virtio built in.
    const auto order612 = vm::module_load_order(
        vm::wanted_modules(), {{"9pnet_virtio", {"9pnet"}}, {"9pnet", {}}, {"9p", {"9pnet", "netfs"}}, {"netfs", {}}},
        {"virtio_pci", "virtio", "virtio_ring"});
    EXPECT_EQ(order612, (std::vector<std::string>{"9pnet", "9pnet_virtio", "netfs", "9p"}));

    const Error e = expect_error([&] { vm::module_load_order({"9p"}, {}, {}); });
    EXPECT_EQ(e.field(), "module 9p");
}

TEST(VmInitramfs, ModuleNamesTreatDashAsUnderscore) {
    EXPECT_EQ(vm::module_name("virtio-pci"), "virtio_pci");
    EXPECT_EQ(vm::module_name("9p"), "9p");
}

TEST(VmInitramfs, NotAModuleIsReportedByName) {
    const Error e = expect_error([] { vm::modinfo_depends("#!/bin/sh\n", "x.ko"); });
    EXPECT_EQ(e.field(), "x.ko");
}

TEST(VmInitramfs, CpioNewcHeadersArePaddedAndTerminated) {
    vm::CpioWriter w;
    w.directory("/bin");
    w.file("/init", "abc", 0755);
    w.char_device("/dev/console", 5, 1);
    const std::string a = w.finish();
    ASSERT_GE(a.size(), 110u);
    EXPECT_EQ(a.substr(0, 6), "070701");
    EXPECT_EQ(a.size() % 4, 0u);
    // Directory "bin": mode 040755, name size 4 (with NUL).
    EXPECT_EQ(a.substr(6 + 8, 8), "000041ED");
    EXPECT_EQ(a.substr(6 + 11 * 8, 8), "00000004");
    EXPECT_EQ(a.substr(110, 4), std::string("bin\0", 4));
    const auto init = a.find(std::string("init\0", 5));
    ASSERT_NE(init, std::string::npos);
    // The file's data starts at the next 4-byte boundary after its name.
    const std::size_t data = (init + 5 + 3) / 4 * 4;
    EXPECT_EQ(a.substr(data, 3), "abc");
    EXPECT_NE(a.find(std::string("TRAILER!!!\0", 11)), std::string::npos);
}

TEST(VmEnvironment, SetsTheHarnessVariablesAndPassesSelectedHostOnes) {
    const auto env = vm::guest_environment({"GTEST_FILTER=A.*", "SECRET=x", "LANG=C.UTF-8", "PATH=/weird", "FOO=bar"},
                                           {"EXTRA=1", "FOO"}, "nodes=2", "6.1.0-56-amd64");
    auto get = [&](const std::string& n) -> std::string {
        for (const auto& [k, v] : env)
            if (k == n) return v;
        return "<unset>";
    };
    EXPECT_EQ(get("NUMAWARE_VM"), "1");
    EXPECT_EQ(get("NUMAWARE_VM_SPEC"), "nodes=2");
    EXPECT_EQ(get("NUMAWARE_VM_KERNEL"), "6.1.0-56-amd64");
    EXPECT_EQ(get("NUMAWARE_VM_MACHINE"), "/tmp/numaware-vm/machine.json");
    EXPECT_EQ(get("HOME"), "/tmp");
    EXPECT_TRUE(contains(get("PATH"), "/usr/bin"));
    EXPECT_NE(get("PATH"), "/weird");
    EXPECT_EQ(get("GTEST_FILTER"), "A.*");
    EXPECT_EQ(get("LANG"), "C.UTF-8");
    EXPECT_EQ(get("SECRET"), "<unset>");
    EXPECT_EQ(get("EXTRA"), "1");
    EXPECT_EQ(get("FOO"), "bar");
    Error e = expect_error([] { vm::guest_environment({}, {"UNSET_ON_HOST"}, "", ""); });
    EXPECT_EQ(e.field(), "--env");
    EXPECT_TRUE(contains(e.what(), "UNSET_ON_HOST")) << e.what();
    e = expect_error([] { vm::guest_environment({}, {"1BAD=x"}, "", ""); });
    EXPECT_EQ(e.field(), "--env");
}

TEST(VmRunner, TailKeepsTheLastLines) {
    EXPECT_EQ(vm::tail_lines("a\nb\nc\nd\n", 2), "c\nd");
    EXPECT_EQ(vm::tail_lines("a\nb", 5), "a\nb");
    EXPECT_EQ(vm::tail_lines("", 3), "");
}

// The 16-vCPU guest whose CPU 0 stopped taking timer interrupts (CI, 2026-12-08).
TEST(VmRunner, AStalledGuestCpuIsNamedByItsFirstConsoleLine) {
    const std::string console =
        "[    3.10] Run /init as init process\n"
        "[  612.62] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n"
        "[  612.62] rcu: rcu_preempt kthread timer wakeup didn't happen for 15768 jiffies! g-1035\n";
    EXPECT_EQ(vm::guest_stall(console), "[  612.62] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:");
    EXPECT_EQ(vm::guest_stall("x\n[ 9.0] rcu: rcu_preempt kthread timer wakeup didn't happen for 5 jiffies!"),
              "[ 9.0] rcu: rcu_preempt kthread timer wakeup didn't happen for 5 jiffies!");
    EXPECT_EQ(vm::guest_stall("[ 22.1] watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [app:123]\n"),
              "[ 22.1] watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [app:123]");
    EXPECT_EQ(vm::guest_stall("[    3.10] Run /init as init process\n[    4.00] rcu: Hierarchical RCU implementation.\n"), "");
    EXPECT_EQ(vm::guest_stall(""), "");
}

// The guest kernel panic that CI met once at boot (6.12, 4 nodes), before init ran.
TEST(VmRunner, AKernelPanicBeforeTheCommandIsNamedForABootAgain) {
    const std::string console =
        "[    1.90] RIP: 0010:hrtimer_start_range_ns+0x2a/0x3c0\n"
        "[    1.93] Kernel panic - not syncing: Fatal exception in interrupt\n"
        "[    1.93] Kernel Offset: disabled\n";
    EXPECT_EQ(vm::boot_failure_before_command(console, 0, false, false), "[    1.93] Kernel panic - not syncing: Fatal exception in interrupt");
    // Once the command started, its side effects may have happened: no second boot.
    EXPECT_EQ(vm::boot_failure_before_command(console, 0, true, false), "");
    EXPECT_EQ(vm::boot_failure_before_command("[    1.00] Run /init as init process\n", 0, false, false), "");
    // An init that reported an error, or exited, fails the same way on every boot.
    EXPECT_EQ(vm::boot_failure_before_command(console, 0, false, true), "");
    EXPECT_EQ(vm::boot_failure_before_command("Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100", 0, false, false), "");
    EXPECT_EQ(vm::boot_failure_before_command("Kernel panic - not syncing: VFS: Unable to mount root fs", 0, false, false),
              "Kernel panic - not syncing: VFS: Unable to mount root fs");
}

// QEMU itself died of SIGSEGV before the guest printed anything (CI,
// 2026-12-02, the 8-node stencil check): a boot again; not once the command
// started, not for a plain non-zero exit.
TEST(VmRunner, QemuKilledBySignalBeforeTheCommandIsNamedForABootAgain) {
    EXPECT_EQ(vm::boot_failure_before_command("", 139, false, false),
              "QEMU was killed by signal 11 before the command started");
    EXPECT_EQ(vm::boot_failure_before_command("", 139, true, false), "");
    EXPECT_EQ(vm::boot_failure_before_command("", 139, false, true), "");
    EXPECT_EQ(vm::boot_failure_before_command("", 1, false, false), "");
    EXPECT_EQ(vm::boot_failure_before_command("", 0, false, false), "");
}

TEST(VmRunner, PathsUnderTmpAreHiddenUnlessShared) {
    EXPECT_TRUE(vm::hidden_in_guest("/tmp/build/tests", {}));
    EXPECT_TRUE(vm::hidden_in_guest("/tmp", {}));
    EXPECT_FALSE(vm::hidden_in_guest("/tmpfoo/x", {}));
    EXPECT_FALSE(vm::hidden_in_guest("/home/u/build", {}));
    EXPECT_FALSE(vm::hidden_in_guest("/tmp/build/tests", {"/tmp/build"}));
    EXPECT_TRUE(vm::hidden_in_guest("/tmp/buildx/tests", {"/tmp/build"}));
}

TEST(VmQemuCommand, ExtraKernelArgsFollowTheFixedCmdline) {
    auto p = paths();
    p.kernel_args = "numa_balancing=disable";
    EXPECT_EQ(values_of(vm::qemu_command(vm::guest_layout(four_nodes()), p), "-append"),
              std::vector<std::string>{vm::kernel_cmdline() + " numa_balancing=disable"});
}

namespace {

// A minimal ELF64 relocatable with a .shstrtab and a .modinfo section, the
// two things modinfo_depends reads.
std::string tiny_module(const std::string& modinfo) {
    const std::string shstrtab = std::string("\0.shstrtab\0.modinfo\0", 20);
    std::string elf(64, '\0');
    auto put = [&](std::size_t at, auto value) { std::memcpy(elf.data() + at, &value, sizeof(value)); };
    elf[0] = 0x7f; elf[1] = 'E'; elf[2] = 'L'; elf[3] = 'F';
    elf[4] = 2;   // 64-bit
    elf[5] = 1;   // little-endian
    const std::uint64_t strtab_at = elf.size();
    elf += shstrtab;
    const std::uint64_t modinfo_at = elf.size();
    elf += modinfo;
    elf.append((8 - elf.size() % 8) % 8, '\0');
    const std::uint64_t shoff = elf.size();
    put(0x28, shoff);
    put(0x3A, std::uint16_t{64});
    put(0x3C, std::uint16_t{3});
    put(0x3E, std::uint16_t{1});
    std::string sh(3 * 64, '\0');
    auto put_sh = [&](std::size_t i, std::uint32_t name, std::uint64_t off, std::uint64_t size) {
        std::memcpy(sh.data() + i * 64, &name, 4);
        std::memcpy(sh.data() + i * 64 + 24, &off, 8);
        std::memcpy(sh.data() + i * 64 + 32, &size, 8);
    };
    put_sh(1, 1, strtab_at, shstrtab.size());
    put_sh(2, 11, modinfo_at, modinfo.size());
    return elf + sh;
}

}  // namespace

TEST(VmInitramfs, ModinfoDependsAreReadFromTheElfSection) {
    const std::string m = tiny_module(std::string("license=GPL\0depends=9pnet,virtio-ring\0name=9pnet_virtio\0", 57));
    EXPECT_EQ(vm::modinfo_depends(m, "9pnet_virtio.ko"), (std::vector<std::string>{"9pnet", "virtio_ring"}));
    const std::string none = tiny_module(std::string("depends=\0name=virtio_ring\0", 26));
    EXPECT_TRUE(vm::modinfo_depends(none, "virtio_ring.ko").empty());
}

// The guest is hardware: a description restricted to a cpuset is refused,
// saying how to restrict the command inside the guest instead (issue 17).
TEST(VmLayout, ARestrictedDescriptionIsRefused) {
    const Machine m = Machine::from_synthetic("nodes=2 cpus-per-node=2 allowed-cpus=0-1");
    expect_error([&] { (void)vm::guest_layout(m, {}); }, "machine",
                 "is the part of a machine that the allowed-cpus=/allowed-mems= sets allow; emulate the whole machine");
}

// A 4-node 6.1 guest in CI stayed silent until the 300 s timeout, where such
// boots take 7-11 s: past the boot limit without the command is a hung boot.
TEST(VmRunner, ABootWithoutTheCommandPastTheLimitHasHung) {
    EXPECT_TRUE(vm::boot_stalled(120.0, 120.0, false));
    EXPECT_TRUE(vm::boot_stalled(300.0, 120.0, false));
    EXPECT_FALSE(vm::boot_stalled(119.9, 120.0, false));
    EXPECT_FALSE(vm::boot_stalled(300.0, 120.0, true));
}

TEST(VmProcess, GivingUpKillsTheChildAndSaysSoNotATimeout) {
    double asked_at = 0;
    const vm::ProcessResult r = vm::run_process({"sleep", "30"}, "", "", 60.0, {}, [&](double elapsed) {
        asked_at = elapsed;
        return elapsed >= 0.2;
    });
    EXPECT_TRUE(r.given_up);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.status, 128 + SIGTERM);
    EXPECT_GE(asked_at, 0.2);
    EXPECT_LT(r.seconds, 10.0);
    const vm::ProcessResult done = vm::run_process({"true"}, "", "", 60.0, {}, [](double) { return false; });
    EXPECT_FALSE(done.given_up);
    EXPECT_EQ(done.status, 0);
}
