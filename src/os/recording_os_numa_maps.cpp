// os/recording_os_numa_maps.cpp — RecordingOs's /proc/PID/numa_maps: the
// injected text, or the simulated state printed as the kernel prints it.
#include "os/recording_os.hpp"

#include <cinttypes>
#include <cstdio>
#include <set>
#include <utility>

namespace numaware::os {

namespace {

// A policy as the kernel's mpol_to_str prints it in numa_maps. Its mode
// names differ from numaware's (to_string(PolicyMode)); preferred with no
// node is how the fake stores MPOL_LOCAL, which the kernel prints "local".
std::string kernel_policy_string(const SimPolicy& p) {
    switch (p.mode) {
    case PolicyMode::default_: return "default";
    case PolicyMode::local: return "local";
    case PolicyMode::preferred: return p.nodes.empty() ? "local" : "prefer:" + p.nodes.to_string();
    case PolicyMode::bind: return "bind:" + p.nodes.to_string();
    case PolicyMode::interleave: return "interleave:" + p.nodes.to_string();
    case PolicyMode::preferred_many: return "prefer (many):" + p.nodes.to_string();
    case PolicyMode::weighted_interleave: return "weighted interleave:" + p.nodes.to_string();
    }
    return "default";
}

}  // namespace

int RecordingOs::read_numa_maps(pid_t pid, std::string& text) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::read_numa_maps;
    call.pid = pid;
    int err = check_injected(CallKind::read_numa_maps);
    if (err == 0) {
        const pid_t key = pid == pid_ ? 0 : pid;
        auto it = numa_maps_.find(key);
        if (it != numa_maps_.end()) {
            text = it->second;
        } else {
            std::string simulated = key == 0 ? numa_maps_locked() : std::string{};
            if (simulated.empty())
                err = ENOENT;
            else
                text = std::move(simulated);
        }
    }
    return record(std::move(call), err);
}

void RecordingOs::set_numa_maps_text(pid_t pid, std::string text) {
    std::lock_guard lock(mutex_);
    numa_maps_[pid == pid_ ? 0 : pid] = std::move(text);
}

std::string RecordingOs::simulated_numa_maps() const {
    std::lock_guard lock(mutex_);
    return numa_maps_locked();
}

std::string RecordingOs::numa_maps_locked() const {
    std::set<std::uintptr_t> known;
    for (const auto& [p, node] : page_node_) known.insert(p);
    for (const auto& [p, pol] : page_policy_) known.insert(p);
    for (const auto& [p, adv] : advice_) known.insert(p);

    auto policy_at = [&](std::uintptr_t p) {
        auto it = page_policy_.find(p);
        return it == page_policy_.end() ? SimPolicy{} : it->second;
    };
    auto advice_at = [&](std::uintptr_t p) {
        auto it = advice_.find(p);
        return it == advice_.end() ? 0 : it->second;
    };
    std::string out;
    auto it = known.begin();
    while (it != known.end()) {
        // One "VMA": contiguous pages with the same policy and advice.
        const std::uintptr_t start = *it;
        const SimPolicy policy = policy_at(start);
        const int advice = advice_at(start);
        std::map<unsigned, std::size_t> per_node;
        std::size_t present = 0;
        std::uintptr_t next = start;
        while (it != known.end() && *it == next && policy_at(next) == policy && advice_at(next) == advice) {
            if (auto n = page_node_.find(next); n != page_node_.end()) {
                ++per_node[static_cast<unsigned>(n->second)];
                ++present;
            }
            next += page_size_;
            ++it;
        }
        char address[32];
        std::snprintf(address, sizeof address, "%08" PRIxPTR, start);
        out += address;
        out += ' ' + kernel_policy_string(policy);
        if (present != 0) {
            // Pages the fake places were written (touch, POPULATE_WRITE): anonymous and dirty.
            out += " anon=" + std::to_string(present) + " dirty=" + std::to_string(present);
            for (const auto& [node, count] : per_node)
                out += " N" + std::to_string(node) + "=" + std::to_string(count);
            out += " kernelpagesize_kB=" + std::to_string(page_size_ / 1024);
        }
        out += '\n';
    }
    return out;
}

}  // namespace numaware::os
