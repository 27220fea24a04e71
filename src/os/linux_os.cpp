// os/linux_os.cpp — the real Os: raw Linux NUMA system calls and sysfs/procfs.
//
// Raw syscall(2) rather than libnuma so that numaware sees the kernel's own
// errno for every call (libnuma prints warnings and retries in places) and
// so the exact nodemask length is under our control.
#include "os/os.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int last_errno() { return errno != 0 ? errno : EIO; }

// Reads a whole (proc/sys) file; such files report size 0, so read to EOF.
int read_file(const std::string& path, std::string& out) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return last_errno();
    out.clear();
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = last_errno();
            ::close(fd);
            return err;
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return 0;
}

int write_file(const std::string& path, const std::string& text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return last_errno();
    ssize_t n;
    do {
        n = ::write(fd, text.data(), text.size());
    } while (n < 0 && errno == EINTR);
    int err = n < 0 ? last_errno() : (static_cast<std::size_t>(n) != text.size() ? EIO : 0);
    if (::close(fd) != 0 && err == 0) err = last_errno();
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

const std::string kBalancingPath = "/proc/sys/kernel/numa_balancing";
const std::string kWeightDir = "/sys/kernel/mm/mempolicy/weighted_interleave";

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

class LinuxOs final : public Os {
public:
    std::size_t page_size() const override {
        static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        return size;
    }

    int mbind(void* addr, std::size_t len, PolicyMode mode, const NodeSet& nodes,
              unsigned flags) override {
        const KernelNodemask m(nodes);
        long rc = ::syscall(SYS_mbind, addr, len, static_cast<unsigned long>(mode), m.ptr(), m.maxnode(), flags);
        return rc == 0 ? 0 : last_errno();
    }

    int set_mempolicy(PolicyMode mode, const NodeSet& nodes) override {
        const KernelNodemask m(nodes);
        long rc = ::syscall(SYS_set_mempolicy, static_cast<int>(mode), m.ptr(), m.maxnode());
        return rc == 0 ? 0 : last_errno();
    }

    int get_mempolicy(const void* addr, PolicyQuery& out) override {
        constexpr unsigned long kFlagAddr = 1ul << 1;   // MPOL_F_ADDR
        unsigned long mask[kMaskWords] = {};
        int mode = 0;
        long rc = ::syscall(SYS_get_mempolicy, &mode, mask, kMaxNode, addr,
                            addr != nullptr ? kFlagAddr : 0ul);
        if (rc != 0) return last_errno();
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
        long rc = ::syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
        if (rc < 0) return last_errno();
        // A positive count means the kernel stopped after some pages could
        // not be migrated; the status of pages after that point is stale.
        return rc == 0 ? 0 : EAGAIN;
    }

    int madvise(void* addr, std::size_t len, int advice) override {
        return ::madvise(addr, len, advice) == 0 ? 0 : last_errno();
    }

    int set_affinity(pid_t tid, const std::vector<unsigned>& cpus) override {
        unsigned max_cpu = 0;
        for (unsigned c : cpus) max_cpu = c > max_cpu ? c : max_cpu;
        const int ncpus = static_cast<int>(max_cpu) + 1;
        cpu_set_t* set = CPU_ALLOC(ncpus);
        if (set == nullptr) return ENOMEM;
        const std::size_t size = CPU_ALLOC_SIZE(ncpus);
        CPU_ZERO_S(size, set);
        for (unsigned c : cpus) CPU_SET_S(c, size, set);
        int rc = ::sched_setaffinity(tid, size, set);
        int err = rc == 0 ? 0 : last_errno();
        CPU_FREE(set);
        return err;
    }

    int get_affinity(pid_t tid, std::vector<unsigned>& cpus) override {
        // The kernel refuses a mask shorter than its nr_cpu_ids with EINVAL;
        // grow until it fits.
        for (int ncpus = 1024; ncpus <= (1 << 20); ncpus *= 2) {
            cpu_set_t* set = CPU_ALLOC(ncpus);
            if (set == nullptr) return ENOMEM;
            const std::size_t size = CPU_ALLOC_SIZE(ncpus);
            CPU_ZERO_S(size, set);
            if (::sched_getaffinity(tid, size, set) == 0) {
                cpus.clear();
                for (int c = 0; c < ncpus; ++c)
                    if (CPU_ISSET_S(c, size, set)) cpus.push_back(static_cast<unsigned>(c));
                CPU_FREE(set);
                return 0;
            }
            int err = last_errno();
            CPU_FREE(set);
            if (err != EINVAL) return err;
        }
        return EINVAL;
    }

    int current_cpu() override {
        int cpu = ::sched_getcpu();
        return cpu >= 0 ? cpu : -last_errno();
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
        struct stat st{};
        return ::stat(kWeightDir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }

    int read_interleave_weight(unsigned node, unsigned& weight) override {
        unsigned long v = 0;
        if (int err = read_unsigned(kWeightDir + "/node" + std::to_string(node), v)) return err;
        weight = static_cast<unsigned>(v);
        return 0;
    }

    int write_interleave_weight(unsigned node, unsigned weight) override {
        return write_file(kWeightDir + "/node" + std::to_string(node), std::to_string(weight) + "\n");
    }

    int read_numa_maps(pid_t pid, std::string& text) override {
        return read_file(proc_dir(pid) + "/numa_maps", text);
    }

    int physical_frame(const void* addr, std::uint64_t& pfn) override {
        int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return last_errno();
        const std::uint64_t index = reinterpret_cast<std::uintptr_t>(addr) / page_size();
        std::uint64_t entry = 0;
        ssize_t n = ::pread(fd, &entry, sizeof entry, static_cast<off_t>(index * sizeof entry));
        int err = n == static_cast<ssize_t>(sizeof entry) ? 0 : (n < 0 ? last_errno() : EIO);
        ::close(fd);
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
