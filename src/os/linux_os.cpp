// os/linux_os.cpp — the real Os: the Os interface over the system-call core
// (os/syscalls.hpp) and the procfs/sysfs files.
//
// Raw system calls rather than libnuma so that numaware sees the kernel's
// own errno for every call (libnuma prints warnings and retries in places)
// and so the exact nodemask length is under our control.
#include "os/os.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>
#include <sched.h>
#include <sys/utsname.h>

#include <cstdio>

#include "os/syscalls.hpp"
#include "util/cpu_mask.hpp"

namespace numaware {

std::string to_string(MemoryPolicyMode mode) {
    switch (mode) {
    case MemoryPolicyMode::default_: return "default";
    case MemoryPolicyMode::preferred: return "preferred";
    case MemoryPolicyMode::bind: return "bind";
    case MemoryPolicyMode::interleave: return "interleave";
    case MemoryPolicyMode::local: return "local";
    case MemoryPolicyMode::preferred_many: return "preferred_many";
    case MemoryPolicyMode::weighted_interleave: return "weighted_interleave";
    }
    return "mode" + std::to_string(static_cast<int>(mode));
}

}  // namespace numaware

namespace numaware::os {

namespace {

// The kernel reads maxnode-1 bits of the mask (an old off-by-one kept for
// ABI), so a mask of mask_bits bits is passed as mask_bits + 1.
constexpr unsigned long kMaxNode = NodeSet::mask_bits + 1;
// get_mempolicy writes ALIGN(maxnode-1, 64)/8 bytes; one spare word keeps
// us safe should a kernel round the other way.
constexpr std::size_t kMaskWords = NodeSet::mask_bits / (8 * sizeof(unsigned long)) + 1;

constexpr unsigned kModeFlagMask = mode_f_static_nodes | mode_f_relative_nodes | mode_f_numa_balancing;

// Reads a whole (proc/sys) file; such files report size 0, so read to EOF.
int read_file(const std::string& path, std::string& out) {
    int fd = -1;
    if (int err = sys::open_read(path.c_str(), fd)) return err;
    out.clear();
    char buf[8192];
    int err = 0;
    for (;;) {
        std::size_t got = 0;
        if ((err = sys::read_some(fd, buf, sizeof buf, got)) != 0 || got == 0) break;
        out.append(buf, got);
    }
    (void)sys::close_fd(fd);
    return err;
}

int write_file(const std::string& path, const std::string& text) {
    int fd = -1;
    if (int err = sys::open_write(path.c_str(), fd)) return err;
    int err = sys::write_all(fd, text.data(), text.size());
    if (int cerr = sys::close_fd(fd); err == 0) err = cerr;
    return err;
}

int read_unsigned(const std::string& path, unsigned long& value) {
    std::string text;
    if (int err = read_file(path, text)) return err;
    char* end = nullptr;
    errno = 0;
    value = std::strtoul(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str()) return EINVAL;
    return 0;
}

std::string proc_dir(pid_t pid) { return pid == 0 ? "/proc/self" : "/proc/" + std::to_string(pid); }

// Plain strings: a std::string global would allocate at load time, and the
// malloc shim links this file.
constexpr const char* kBalancingPath = "/proc/sys/kernel/numa_balancing";
constexpr const char* kWeightDir = "/sys/kernel/mm/mempolicy/weighted_interleave";

// A node set as mbind/set_mempolicy take it: the mask and its bit count,
// or (nullptr, 0) for an empty set. On the stack: the malloc shim binds its
// chunks through here and must not allocate.
class KernelNodemask {
public:
    explicit KernelNodemask(const NodeSet& nodes) noexcept : mask_(nodes.to_mask()), empty_(nodes.empty()) {}
    const unsigned long* ptr() const noexcept { return empty_ ? nullptr : mask_.data(); }
    unsigned long maxnode() const noexcept { return empty_ ? 0 : kMaxNode; }

private:
    NodeSet::Mask mask_;
    bool empty_;
};

}  // namespace

bool interleave_index_is_32bit() {
    static const bool truncated = [] {
        struct utsname u {};
        if (::uname(&u) != 0) return false;
        unsigned major = 0, minor = 0;
        if (std::sscanf(u.release, "%u.%u", &major, &minor) != 2) return false;
        return major < 6 || (major == 6 && minor < 7);
    }();
    return truncated;
}

namespace {

class LinuxOs final : public Os {
public:
    std::size_t page_size() const override {
        static const std::size_t size = sys::page_size();
        return size;
    }

    int mbind(void* addr, std::size_t len, PolicyMode mode, const NodeSet& nodes,
              unsigned flags) override {
        const KernelNodemask m(nodes);
        return sys::mbind(addr, len, static_cast<int>(mode), m.ptr(), m.maxnode(), flags);
    }

    int set_mempolicy(PolicyMode mode, const NodeSet& nodes) override {
        const KernelNodemask m(nodes);
        return sys::set_mempolicy(static_cast<int>(mode), m.ptr(), m.maxnode());
    }

    int get_mempolicy(const void* addr, PolicyQuery& out) override {
        constexpr unsigned long kFlagAddr = 1ul << 1;   // MPOL_F_ADDR
        unsigned long mask[kMaskWords] = {};
        int mode = 0;
        if (int err = sys::get_mempolicy(mode, mask, kMaxNode, addr, addr != nullptr ? kFlagAddr : 0ul))
            return err;
        const unsigned raw = static_cast<unsigned>(mode);
        out.mode = static_cast<PolicyMode>(raw & ~kModeFlagMask);
        out.mode_flags = raw & kModeFlagMask;
        out.nodes = NodeSet{};
        constexpr unsigned bits = 8 * sizeof(unsigned long);
        for (unsigned n = 0; n < NodeSet::max_nodes; ++n)
            if ((mask[n / bits] >> (n % bits)) & 1ul) out.nodes.add(n);
        return 0;
    }

    int move_pages(pid_t pid, std::size_t count, void* const* pages, const int* nodes, int* status,
                   unsigned flags) override {
        return sys::move_pages(pid, count, pages, nodes, status, static_cast<int>(flags));
    }

    int madvise(void* addr, std::size_t len, int advice) override {
        return sys::madvise(addr, len, advice);
    }

    int mincore(void* addr, std::size_t len, unsigned char* vec) override { return sys::mincore(addr, len, vec); }

    int set_affinity(pid_t tid, const std::vector<unsigned>& cpus) override {
        unsigned max_cpu = 0;
        for (unsigned c : cpus) max_cpu = c > max_cpu ? c : max_cpu;
        const int ncpus = static_cast<int>(max_cpu) + 1;
        cpu_set_t* set = CPU_ALLOC(ncpus);
        if (set == nullptr) return ENOMEM;
        const std::size_t size = CPU_ALLOC_SIZE(ncpus);
        CPU_ZERO_S(size, set);
        for (unsigned c : cpus) CPU_SET_S(c, size, set);
        const int err = sys::set_affinity(tid, size, set);
        CPU_FREE(set);
        return err;
    }

    int get_affinity(pid_t tid, std::vector<unsigned>& cpus) override {
        return read_cpu_mask([tid](std::size_t bytes, cpu_set_t* set) { return sys::get_affinity(tid, bytes, set); },
                             cpus);
    }

    int current_cpu() override {
        unsigned cpu = 0;
        if (int err = sys::current_cpu(cpu)) return -err;
        return static_cast<int>(cpu);
    }

    int read_numa_balancing(int& value) override {
        unsigned long v = 0;
        if (int err = read_unsigned(kBalancingPath, v)) return err;
        value = static_cast<int>(v);
        return 0;
    }

    int write_numa_balancing(int value) override {
        return write_file(kBalancingPath, std::to_string(value) + "\n");
    }

    bool has_weighted_interleave() override {
        return sys::is_directory(kWeightDir);
    }

    int read_interleave_weight(unsigned node, unsigned& weight) override {
        unsigned long v = 0;
        if (int err = read_unsigned(std::string(kWeightDir) + "/node" + std::to_string(node), v)) return err;
        weight = static_cast<unsigned>(v);
        return 0;
    }

    int write_interleave_weight(unsigned node, unsigned weight) override {
        return write_file(std::string(kWeightDir) + "/node" + std::to_string(node), std::to_string(weight) + "\n");
    }

    int read_numa_maps(pid_t pid, std::string& text) override {
        return read_file(proc_dir(pid) + "/numa_maps", text);
    }

    int physical_frame(const void* addr, std::uint64_t& pfn) override {
        int fd = -1;
        if (int err = sys::open_read("/proc/self/pagemap", fd)) return err;
        const std::uint64_t index = reinterpret_cast<std::uintptr_t>(addr) / page_size();
        std::uint64_t entry = 0;
        std::size_t got = 0;
        int err = sys::read_at(fd, &entry, sizeof entry, static_cast<off_t>(index * sizeof entry), got);
        if (err == 0 && got != sizeof entry) err = EIO;
        (void)sys::close_fd(fd);
        if (err != 0) return err;
        constexpr std::uint64_t kPresent = 1ull << 63;
        constexpr std::uint64_t kPfnMask = (1ull << 55) - 1;   // bits 0-54
        if ((entry & kPresent) == 0) return ENOENT;
        pfn = entry & kPfnMask;
        // Without CAP_SYS_ADMIN the kernel reports present pages with PFN 0.
        return pfn == 0 ? EPERM : 0;
    }
};

}  // namespace

Os& linux_os() {
    static LinuxOs os;
    return os;
}

}  // namespace numaware::os
