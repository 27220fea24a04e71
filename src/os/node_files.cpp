// os/node_files.cpp — node lists and distances from sysfs (see node_files.hpp).
#include "os/node_files.hpp"

#include <cstdio>

#include "os/syscalls.hpp"

namespace numaware::os::sys {

namespace {
unsigned parse_number(const char*& s) noexcept {
    unsigned v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + static_cast<unsigned>(*s++ - '0');
    return v;
}
}  // namespace

namespace {
// The kernel's list syntax from `s`: "0-3,6\n". Nodes past the set's
// size (none on a kernel built for at most 1,024) are left out.
unsigned parse_list(const char* s, NodeBits& mask) noexcept {
    constexpr unsigned limit = NodeSet::max_nodes;
    mask.reset();
    unsigned top = 0;
    while (*s >= '0' && *s <= '9') {
        const unsigned lo = parse_number(s);
        unsigned hi = lo;
        if (*s == '-') {
            ++s;
            hi = parse_number(s);
        }
        for (unsigned i = lo; i <= hi && i < limit; ++i) mask[i] = true;
        if (hi + 1 > top) top = hi + 1;
        if (*s == ',') ++s;
    }
    return top > limit ? limit : top;
}
}  // namespace

unsigned read_node_mask(const char* path, NodeBits& mask) noexcept {
    char buf[4096];   // "0-1023"; every other node of 1,024 listed one by one fits too
    std::size_t len = 0;
    if (read_small_file(path, buf, sizeof buf, len) != 0 || len == 0) return 0;
    return parse_list(buf, mask);
}

bool read_mems_allowed(NodeBits& mask) noexcept {
    char buf[8192];   // about 1.5 KiB on a small machine; the CPU masks grow with the CPUs
    std::size_t len = 0;
    if (read_small_file("/proc/self/status", buf, sizeof buf, len) != 0 || len == 0) return false;
    static constexpr char key[] = "\nMems_allowed_list:";
    for (const char* s = buf; *s != '\0'; ++s) {
        std::size_t k = 0;
        while (key[k] != '\0' && s[k] == key[k]) ++k;
        if (key[k] != '\0') continue;
        s += k;
        while (*s == '\t' || *s == ' ') ++s;
        return parse_list(s, mask) > 0;
    }
    return false;
}

unsigned read_node_distances(unsigned node, unsigned* distance, unsigned max) noexcept {
    char path[64];
    std::snprintf(path, sizeof path, "/sys/devices/system/node/node%u/distance", node);
    char buf[4 * NodeSet::max_nodes + 64];   // up to three digits and a space a node
    std::size_t len = 0;
    if (read_small_file(path, buf, sizeof buf, len) != 0 || len == 0) return 0;
    unsigned count = 0;
    const char* s = buf;
    while (count < max) {
        while (*s == ' ') ++s;
        if (*s < '0' || *s > '9') break;
        distance[count++] = parse_number(s);
    }
    return count;
}

}  // namespace numaware::os::sys
