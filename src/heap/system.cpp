// heap/system.cpp — the engine's memory and node queries.
//
// Plain mmap/munmap and getcpu live here (they are not NUMA policy calls);
// binding goes through the placement layer and so through the os layer.
// Nothing here allocates: the engine runs inside malloc.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>

#include "heap/internal.hpp"
#include "numaware/placement.hpp"
#include "os/os.hpp"

namespace numaware::heap::detail {

unsigned read_node_list(const char* path, std::uint64_t& mask) noexcept {
    char buf[256];
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    // The kernel's list syntax: "0-3,6\n".
    mask = 0;
    unsigned top = 0;
    const char* s = buf;
    while (*s >= '0' && *s <= '9') {
        unsigned lo = 0;
        while (*s >= '0' && *s <= '9') lo = lo * 10 + static_cast<unsigned>(*s++ - '0');
        unsigned hi = lo;
        if (*s == '-') {
            ++s;
            hi = 0;
            while (*s >= '0' && *s <= '9') hi = hi * 10 + static_cast<unsigned>(*s++ - '0');
        }
        for (unsigned i = lo; i <= hi && i < max_nodes; ++i) mask |= std::uint64_t{1} << i;
        if (hi + 1 > top) top = hi + 1;
        if (*s == ',') ++s;
    }
    return top > max_nodes ? max_nodes : top;
}

unsigned nearest_memory_node(unsigned node, std::uint64_t memory_nodes, unsigned fallback) noexcept {
    // /sys/devices/system/node/nodeN/distance: one SLIT row, "10 21 31 ...".
    char path[64];
    std::snprintf(path, sizeof path, "/sys/devices/system/node/node%u/distance", node);
    char buf[1024];
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fallback;
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) return fallback;
    buf[n] = '\0';
    unsigned best = fallback;
    unsigned best_distance = ~0u;
    const char* s = buf;
    for (unsigned to = 0; to < max_nodes; ++to) {
        while (*s == ' ') ++s;
        if (*s < '0' || *s > '9') break;
        unsigned d = 0;
        while (*s >= '0' && *s <= '9') d = d * 10 + static_cast<unsigned>(*s++ - '0');
        if (((memory_nodes >> to) & 1u) && d < best_distance) {
            best = to;
            best_distance = d;
        }
    }
    return best;
}

void* map_aligned(std::size_t bytes, std::size_t alignment) noexcept {
    // Map extra and trim both ends so the start is aligned.
    const std::size_t span = bytes + alignment;
    void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const std::uintptr_t r = reinterpret_cast<std::uintptr_t>(raw);
    const std::uintptr_t a = (r + alignment - 1) & ~(alignment - 1);
    if (a > r) ::munmap(raw, a - r);
    const std::uintptr_t end = r + span;
    if (end > a + bytes) ::munmap(reinterpret_cast<void*>(a + bytes), end - (a + bytes));
    return reinterpret_cast<void*>(a);
}

void unmap(void* p, std::size_t bytes) noexcept { ::munmap(p, bytes); }

unsigned current_node(unsigned* cpu) noexcept {
    unsigned c = 0;
    unsigned node = 0;
    if (::getcpu(&c, &node) != 0) node = 0;
    if (cpu != nullptr) *cpu = c;
    return node;
}

int bind_to_node(void* p, std::size_t bytes, unsigned node) noexcept {
    // The os layer may allocate inside mbind; tl_busy sends such reentrant
    // allocations to the bootstrap region instead of our held locks.
    const bool was = tl_busy;
    tl_busy = true;
    const int err = bind_range_to_node(p, bytes, node, *g_engine.os, nullptr);
    tl_busy = was;
    // A kernel without NUMA support cannot misplace pages on a one-node
    // machine; anywhere else an unbound chunk would break the promise.
    if ((err == ENOSYS || err == EPERM) && g_engine.nodes == 1) return 0;
    return err;
}

}  // namespace numaware::heap::detail
