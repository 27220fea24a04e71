// os/balancing.cpp — reading, switching and guarding automatic NUMA
// balancing, and finding the mappings it leaves alone.
#include "os/balancing.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include "numaware/error.hpp"

namespace numaware {

namespace {

constexpr const char* kField = "numa_balancing";
constexpr const char* kPath = "/proc/sys/kernel/numa_balancing";

[[noreturn]] void throw_os_error(int err, const std::string& action, int value = -1) {
    std::string why;
    switch (err) {
    case ENOENT:
        why = std::string(kPath) + " does not exist: kernel built without NUMA balancing (CONFIG_NUMA_BALANCING)";
        break;
    case EPERM:
    case EACCES:
    case EROFS:
        why = std::string("not permitted to write ") + kPath + " (" + std::strerror(err) +
              "): needs root (CAP_SYS_ADMIN) and a writable /proc";
        break;
    case EINVAL:
        why = "the kernel refused the value " + std::to_string(value) +
              (value >= 2 ? " (memory-tiering modes need Linux 5.18 or later)" : "");
        break;
    default: why = std::string(kPath) + ": " + std::strerror(err); break;
    }
    throw Error(kField, "cannot " + action + ": " + why, err);
}

bool valid_state(int v) { return v >= 0 && v <= 3; }

}  // namespace

std::string_view to_string(BalancingState state) {
    switch (state) {
    case BalancingState::off: return "off";
    case BalancingState::normal: return "normal";
    case BalancingState::memory_tiering: return "memory-tiering";
    case BalancingState::normal_and_memory_tiering: return "normal+memory-tiering";
    }
    return "unknown";
}

BalancingState parse_balancing_state(std::string_view text, std::string_view field) {
    for (int v = 0; v <= 3; ++v) {
        const auto s = static_cast<BalancingState>(v);
        if (text == to_string(s) || (text.size() == 1 && text[0] == static_cast<char>('0' + v))) return s;
    }
    throw Error(std::string(field), "'" + std::string(text) +
                                        "' is not a NUMA balancing state: expected off, normal, memory-tiering, "
                                        "normal+memory-tiering or 0-3");
}

namespace os {

BalancingState read_balancing(Os& os) {
    int value = 0;
    if (int err = os.read_numa_balancing(value)) throw_os_error(err, "read NUMA balancing state");
    if (!valid_state(value))
        throw Error(kField, std::string(kPath) + " holds " + std::to_string(value) +
                                ", which numaware does not know (expected 0-3)", EINVAL);
    return static_cast<BalancingState>(value);
}

void write_balancing(Os& os, BalancingState state) {
    const int value = static_cast<int>(state);
    if (!valid_state(value))
        throw Error(kField, "state " + std::to_string(value) + " is out of range (expected 0-3)");
    if (int err = os.write_numa_balancing(value))
        throw_os_error(err, "set NUMA balancing to " + std::string(to_string(state)), value);
}

std::vector<BalancingExemptRange> exempt_ranges(const std::vector<NumaMapsRecord>& records) {
    std::vector<BalancingExemptRange> out;
    for (const auto& r : records) {
        BalancingExemptRange e;
        e.address = r.address;
        e.policy = r.policy;
        e.pages = r.total_pages();
        const bool balancing_flag = r.policy_flags.find("balancing") != std::string::npos;
        if (r.hugetlb) {
            e.reason = "hugetlbfs mapping (never scanned)";
        } else if (r.policy_mode == "default") {
            continue;   // migrate-on-fault: balancing scans it
        } else if (r.policy_mode == "bind") {
            if (balancing_flag) continue;   // MPOL_F_NUMA_BALANCING makes it migrate-on-fault
            e.bound = true;
            e.reason = "bound to nodes " + r.policy_nodes.to_string() + " (MPOL_BIND)";
        } else {
            e.reason = "explicit '" + r.policy_mode + "' policy (not migrate-on-fault)";
        }
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<BalancingExemptRange> exempt_ranges(Os& os, pid_t pid) {
    std::string text;
    if (int err = os.read_numa_maps(pid, text))
        throw Error("pid " + std::to_string(pid), std::string("cannot read numa_maps: ") + std::strerror(err), err);
    return exempt_ranges(parse_numa_maps(text));
}

}  // namespace os

BalancingState balancing_state() { return os::read_balancing(os::linux_os()); }

void set_balancing_state(BalancingState state) { os::write_balancing(os::linux_os(), state); }

BalancingGuard::BalancingGuard(BalancingState want) : BalancingGuard(want, os::linux_os()) {}

BalancingGuard::BalancingGuard(BalancingState want, os::Os& os)
    : os_(&os), previous_(os::read_balancing(os)), changed_(false) {
    if (previous_ != want) {
        os::write_balancing(os, want);
        changed_ = true;
    }
}

BalancingGuard::~BalancingGuard() {
    if (changed_) (void)os_->write_numa_balancing(static_cast<int>(previous_));
}

std::vector<BalancingExemptRange> balancing_exempt_ranges(pid_t pid) {
    return os::exempt_ranges(os::linux_os(), pid);
}

}  // namespace numaware
