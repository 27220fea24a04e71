// os/recording_os.cpp — the recording fake Os (see recording_os.hpp): its
// construction, the call log and failure injection, threads and CPUs, and
// the sysctl and sysfs settings it stands in for. The simulated memory
// (policies, faults, migration) is in recording_os_memory.cpp, its
// numa_maps text in recording_os_numa_maps.cpp.
#include "os/recording_os.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

#include "os/hex.hpp"

namespace numaware::os {

std::string to_string(CallKind kind) {
    switch (kind) {
    case CallKind::mbind: return "mbind";
    case CallKind::set_mempolicy: return "set_mempolicy";
    case CallKind::get_mempolicy: return "get_mempolicy";
    case CallKind::move_pages: return "move_pages";
    case CallKind::madvise: return "madvise";
    case CallKind::mincore: return "mincore";
    case CallKind::set_affinity: return "set_affinity";
    case CallKind::get_affinity: return "get_affinity";
    case CallKind::current_cpu: return "current_cpu";
    case CallKind::read_numa_balancing: return "read_numa_balancing";
    case CallKind::write_numa_balancing: return "write_numa_balancing";
    case CallKind::has_weighted_interleave: return "has_weighted_interleave";
    case CallKind::read_interleave_weight: return "read_interleave_weight";
    case CallKind::write_interleave_weight: return "write_interleave_weight";
    case CallKind::read_numa_maps: return "read_numa_maps";
    case CallKind::physical_frame: return "physical_frame";
    }
    return "call" + std::to_string(static_cast<int>(kind));
}

namespace {

std::string flags_string(unsigned flags) {
    std::string out;
    auto add = [&](unsigned bit, const char* name) {
        if ((flags & bit) == 0) return;
        if (!out.empty()) out += '|';
        out += name;
        flags &= ~bit;
    };
    add(mf_move, "MOVE");
    add(mf_move_all, "MOVE_ALL");
    add(mf_strict, "STRICT");
    if (flags != 0) {
        if (!out.empty()) out += '|';
        out += hex(flags);
    }
    return out.empty() ? "0" : out;
}

std::string nodes_string(const NodeSet& nodes) { return nodes.empty() ? "{}" : nodes.to_string(); }

std::string cpus_string(const std::vector<unsigned>& cpus) {
    std::string out;
    for (unsigned c : cpus) out += (out.empty() ? "" : ",") + std::to_string(c);
    return out.empty() ? "{}" : out;
}

template <class T>
std::string join(const std::vector<T>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
    return out;
}

}  // namespace

std::string Call::to_string() const {
    std::string args;
    switch (kind) {
    case CallKind::mbind:
        args = hex(addr) + ", " + std::to_string(len) + ", " + numaware::to_string(mode) + ", " +
               nodes_string(nodes) + ", " + flags_string(flags);
        break;
    case CallKind::set_mempolicy: args = numaware::to_string(mode) + ", " + nodes_string(nodes); break;
    case CallKind::get_mempolicy: args = addr == 0 ? "thread" : hex(addr); break;
    case CallKind::move_pages: {
        std::string pg;
        for (auto p : pages) pg += (pg.empty() ? "" : ",") + hex(p);
        args = std::to_string(pid) + ", [" + pg + "], " + (targets.empty() ? "query" : "to [" + join(targets) + "]") +
               ", " + flags_string(flags);
        break;
    }
    case CallKind::madvise: args = hex(addr) + ", " + std::to_string(len) + ", " + std::to_string(advice); break;
    case CallKind::mincore: args = hex(addr) + ", " + std::to_string(len); break;
    case CallKind::set_affinity: args = std::to_string(pid) + ", " + cpus_string(cpus); break;
    case CallKind::get_affinity: args = std::to_string(pid); break;
    case CallKind::write_numa_balancing: args = std::to_string(value); break;
    case CallKind::read_interleave_weight: args = std::to_string(node); break;
    case CallKind::write_interleave_weight: args = std::to_string(node) + ", " + std::to_string(value); break;
    case CallKind::read_numa_maps: args = std::to_string(pid); break;
    case CallKind::physical_frame: args = hex(addr); break;
    case CallKind::current_cpu:
    case CallKind::read_numa_balancing:
    case CallKind::has_weighted_interleave: break;
    }
    return os::to_string(kind) + "(" + args + ") = " + std::to_string(result);
}

// ---- construction --------------------------------------------------------

RecordingOs::RecordingOs(unsigned nodes, unsigned cpus_per_node, std::size_t page_size,
                         std::size_t huge_page_size)
    : page_size_(page_size), huge_page_size_(huge_page_size) {
    unsigned cpu = 0;
    for (unsigned n = 0; n < nodes; ++n) {
        SimNode node;
        node.os_index = n;
        for (unsigned c = 0; c < cpus_per_node; ++c) node.cpus.push_back(cpu++);
        nodes_.push_back(node);
    }
    distance_.assign(nodes, std::vector<unsigned>(nodes, 20));
    for (unsigned n = 0; n < nodes; ++n) distance_[n][n] = 10;
    init_common();
}

RecordingOs::RecordingOs(const Machine& machine, std::size_t page_size, std::size_t huge_page_size)
    : page_size_(page_size), huge_page_size_(huge_page_size) {
    for (const Node& n : machine.nodes) {
        SimNode node;
        node.os_index = n.os_index;
        node.cpus = n.cpus;
        node.has_memory = n.memory_bytes > 0;
        nodes_.push_back(node);
    }
    distance_ = machine.distances;
    if (distance_.size() != nodes_.size()) {
        distance_.assign(nodes_.size(), std::vector<unsigned>(nodes_.size(), 20));
        for (std::size_t n = 0; n < nodes_.size(); ++n) distance_[n][n] = 10;
    }
    init_common();
}

void RecordingOs::init_common() {
    for (const auto& n : nodes_) {
        all_cpus_.insert(all_cpus_.end(), n.cpus.begin(), n.cpus.end());
        weights_[n.os_index] = 1;
    }
    std::sort(all_cpus_.begin(), all_cpus_.end());
}

// ---- the recording and failure injection ------------------------------------

int RecordingOs::record(Call call, int result) {
    call.result = result;
    calls_.push_back(std::move(call));
    return result;
}

std::vector<Call> RecordingOs::calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
}

std::vector<Call> RecordingOs::calls(CallKind kind) const {
    std::lock_guard lock(mutex_);
    std::vector<Call> out;
    for (const auto& c : calls_)
        if (c.kind == kind) out.push_back(c);
    return out;
}

void RecordingOs::clear_calls() {
    std::lock_guard lock(mutex_);
    calls_.clear();
}

int RecordingOs::check_injected(CallKind kind) {
    int error = 0;
    for (auto it = failures_.begin(); it != failures_.end();) {
        if (it->kind != kind) {
            ++it;
            continue;
        }
        if (it->skip > 0) {
            --it->skip;
            ++it;
            continue;
        }
        if (error == 0) {
            error = it->error;
            if (it->times == 1) {
                it = failures_.erase(it);
                continue;
            }
            if (it->times > 1) --it->times;
        }
        ++it;
    }
    return error;
}

void RecordingOs::fail_call(CallKind kind, int error, unsigned nth, unsigned times) {
    std::lock_guard lock(mutex_);
    failures_.push_back(Failure{kind, error, nth == 0 ? 0 : nth - 1, times});
}

void RecordingOs::fail_page(const void* addr, int error) {
    std::lock_guard lock(mutex_);
    failing_pages_[reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_] = error;
}

void RecordingOs::set_absent_errno(int error) {
    std::lock_guard lock(mutex_);
    absent_errno_ = error;
}

void RecordingOs::hint_balancing(const void* addr, std::size_t len) {
    std::lock_guard lock(mutex_);
    const auto start = reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_;
    const auto end = reinterpret_cast<std::uintptr_t>(addr) + len;
    for (auto it = page_node_.lower_bound(start); it != page_node_.end() && it->first < end; ++it)
        hinted_.insert(it->first);
}

void RecordingOs::clear_failures() {
    std::lock_guard lock(mutex_);
    failures_.clear();
    failing_pages_.clear();
}

// ---- threads and CPUs ----------------------------------------------------------

pid_t RecordingOs::self_tid() const { return static_cast<pid_t>(::syscall(SYS_gettid)); }

RecordingOs::ThreadState& RecordingOs::thread(pid_t tid) { return threads_[tid == 0 ? self_tid() : tid]; }

const RecordingOs::ThreadState* RecordingOs::find_thread(pid_t tid) const {
    auto it = threads_.find(tid == 0 ? self_tid() : tid);
    return it == threads_.end() ? nullptr : &it->second;
}

int RecordingOs::set_affinity(pid_t tid, const std::vector<unsigned>& cpus) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::set_affinity;
    call.pid = tid;
    call.cpus = cpus;
    int err = check_injected(CallKind::set_affinity);
    std::vector<unsigned> allowed;
    for (unsigned c : all_cpus_)
        if (std::find(cpus.begin(), cpus.end(), c) != cpus.end()) allowed.push_back(c);
    // Like the kernel: CPUs that do not exist are ignored, none left is EINVAL.
    if (err == 0 && allowed.empty()) err = EINVAL;
    if (err == 0) {
        ThreadState& ts = thread(tid);
        ts.affinity = allowed;
        if (!ts.cpu || std::find(allowed.begin(), allowed.end(), *ts.cpu) == allowed.end()) ts.cpu = allowed.front();
    }
    return record(std::move(call), err);
}

int RecordingOs::get_affinity(pid_t tid, std::vector<unsigned>& cpus) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::get_affinity;
    call.pid = tid;
    int err = check_injected(CallKind::get_affinity);
    if (err == 0) {
        const ThreadState* ts = find_thread(tid);
        cpus = ts != nullptr && ts->affinity ? *ts->affinity : all_cpus_;
    }
    return record(std::move(call), err);
}

int RecordingOs::current_cpu() {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::current_cpu;
    int result;
    if (int err = check_injected(CallKind::current_cpu)) {
        result = -err;
    } else {
        const ThreadState* ts = find_thread(0);
        if (ts != nullptr && ts->cpu)
            result = static_cast<int>(*ts->cpu);
        else if (ts != nullptr && ts->affinity)
            result = static_cast<int>(ts->affinity->front());
        else
            result = static_cast<int>(all_cpus_.front());
    }
    return record(std::move(call), result);
}

std::vector<unsigned> RecordingOs::affinity(pid_t tid) const {
    std::lock_guard lock(mutex_);
    const ThreadState* ts = find_thread(tid);
    return ts != nullptr && ts->affinity ? *ts->affinity : all_cpus_;
}

void RecordingOs::set_current_cpu(unsigned cpu) {
    std::lock_guard lock(mutex_);
    thread(0).cpu = cpu;
}

void RecordingOs::set_pid(pid_t pid) {
    std::lock_guard lock(mutex_);
    pid_ = pid;
}

// ---- sysctl and sysfs settings ---------------------------------------------------

int RecordingOs::read_numa_balancing(int& value) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::read_numa_balancing;
    int err = check_injected(CallKind::read_numa_balancing);
    if (err == 0 && !balancing_) err = ENOENT;
    if (err == 0) value = *balancing_;
    return record(std::move(call), err);
}

int RecordingOs::write_numa_balancing(int value) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::write_numa_balancing;
    call.value = value;
    int err = check_injected(CallKind::write_numa_balancing);
    if (err == 0 && !balancing_) err = ENOENT;
    if (err == 0 && balancing_write_error_ != 0) err = balancing_write_error_;
    if (err == 0 && (value < 0 || value > 3)) err = EINVAL;   // the sysctl's range
    if (err == 0) balancing_ = value;
    return record(std::move(call), err);
}

void RecordingOs::set_numa_balancing(std::optional<int> value) {
    std::lock_guard lock(mutex_);
    balancing_ = value;
}

std::optional<int> RecordingOs::numa_balancing() const {
    std::lock_guard lock(mutex_);
    return balancing_;
}

void RecordingOs::set_balancing_write_error(int error) {
    std::lock_guard lock(mutex_);
    balancing_write_error_ = error;
}

bool RecordingOs::has_weighted_interleave() {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::has_weighted_interleave;
    record(std::move(call), weighted_available_ ? 1 : 0);
    return weighted_available_;
}

int RecordingOs::read_interleave_weight(unsigned node, unsigned& weight) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::read_interleave_weight;
    call.node = node;
    int err = check_injected(CallKind::read_interleave_weight);
    if (err == 0 && (!weighted_available_ || weights_.count(node) == 0)) err = ENOENT;
    if (err == 0) weight = weights_.at(node);
    return record(std::move(call), err);
}

int RecordingOs::write_interleave_weight(unsigned node, unsigned weight) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::write_interleave_weight;
    call.node = node;
    call.value = static_cast<int>(weight);
    int err = check_injected(CallKind::write_interleave_weight);
    if (err == 0 && (!weighted_available_ || weights_.count(node) == 0)) err = ENOENT;
    // The sysfs file takes a u8; numaware treats 0 as invalid (6.13+ refuse it).
    if (err == 0 && (weight == 0 || weight > 255)) err = EINVAL;
    if (err == 0) weights_[node] = weight;
    return record(std::move(call), err);
}

void RecordingOs::set_weighted_interleave_available(bool available) {
    std::lock_guard lock(mutex_);
    weighted_available_ = available;
}

unsigned RecordingOs::interleave_weight(unsigned node) const {
    std::lock_guard lock(mutex_);
    auto it = weights_.find(node);
    return it == weights_.end() ? 0 : it->second;
}

}  // namespace numaware::os
