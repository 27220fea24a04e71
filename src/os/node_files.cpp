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

unsigned read_node_mask(const char* path, std::uint64_t& mask, unsigned limit) noexcept {
    if (limit > 64) limit = 64;
    char buf[256];
    std::size_t len = 0;
    if (read_small_file(path, buf, sizeof buf, len) != 0 || len == 0) return 0;
    // The kernel's list syntax: "0-3,6\n".
    mask = 0;
    unsigned top = 0;
    const char* s = buf;
    while (*s >= '0' && *s <= '9') {
        const unsigned lo = parse_number(s);
        unsigned hi = lo;
        if (*s == '-') {
            ++s;
            hi = parse_number(s);
        }
        for (unsigned i = lo; i <= hi && i < limit; ++i) mask |= std::uint64_t{1} << i;
        if (hi + 1 > top) top = hi + 1;
        if (*s == ',') ++s;
    }
    return top > limit ? limit : top;
}

unsigned read_node_distances(unsigned node, unsigned* distance, unsigned max) noexcept {
    char path[64];
    std::snprintf(path, sizeof path, "/sys/devices/system/node/node%u/distance", node);
    char buf[1024];
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
