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
// The kernel's list syntax from `s`: "0-3,6\n".
unsigned parse_list(const char* s, std::uint64_t& mask, unsigned limit) noexcept {
    mask = 0;
    unsigned top = 0;
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
}  // namespace

unsigned read_node_mask(const char* path, std::uint64_t& mask, unsigned limit) noexcept {
    if (limit > 64) limit = 64;
    char buf[256];
    std::size_t len = 0;
    if (read_small_file(path, buf, sizeof buf, len) != 0 || len == 0) return 0;
    return parse_list(buf, mask, limit);
}

bool read_mems_allowed(std::uint64_t& mask, unsigned limit) noexcept {
    if (limit > 64) limit = 64;
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
        return parse_list(s, mask, limit) > 0;
    }
    return false;
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
