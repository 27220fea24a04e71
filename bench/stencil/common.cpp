// bench/stencil/common.cpp — small readers of /proc and /sys.
#include "common.hpp"

#include <ctime>
#include <fstream>
#include <sstream>

namespace nwbench {

int read_numa_balancing() {
    std::ifstream in("/proc/sys/kernel/numa_balancing");
    int v = -1;
    if (!(in >> v)) return -1;
    return v;
}

std::string read_loadavg() {
    std::ifstream in("/proc/loadavg");
    std::string a, b, c;
    if (!(in >> a >> b >> c)) return "";
    return a + " " + b + " " + c;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon == std::string::npos) return "";
            const auto start = line.find_first_not_of(' ', colon + 1);
            return start == std::string::npos ? "" : line.substr(start);
        }
    }
    return "";
}

std::string thp_setting() {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    if (!std::getline(in, line)) return "";
    const auto lo = line.find('[');
    const auto hi = line.find(']');
    if (lo == std::string::npos || hi == std::string::npos || hi < lo) return "";
    return line.substr(lo + 1, hi - lo - 1);
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    if (std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) return "";
    return buf;
}

}  // namespace nwbench
