// os/recording_os.cpp — the recording, simulating fake Os (see recording_os.hpp).
#include "os/recording_os.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace numaware::os {

std::string to_string(CallKind kind) {
    switch (kind) {
    case CallKind::mbind: return "mbind";
    case CallKind::set_mempolicy: return "set_mempolicy";
    case CallKind::get_mempolicy: return "get_mempolicy";
    case CallKind::move_pages: return "move_pages";
    case CallKind::madvise: return "madvise";
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

std::string hex(std::uintptr_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, v);
    return buf;
}

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

// MADV_POPULATE_WRITE (Linux 5.14); older headers lack the name.
constexpr int kMadvPopulateWrite = 23;

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

bool valid_mode(PolicyMode mode) {
    const int m = static_cast<int>(mode);
    return m >= 0 && m <= static_cast<int>(PolicyMode::weighted_interleave);
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

// ---- helpers (lock held) -------------------------------------------------

void RecordingOs::record(Call call) { calls_.push_back(std::move(call)); }

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

pid_t RecordingOs::self_tid() const { return static_cast<pid_t>(::syscall(SYS_gettid)); }

RecordingOs::ThreadState& RecordingOs::thread(pid_t tid) { return threads_[tid == 0 ? self_tid() : tid]; }

const RecordingOs::ThreadState* RecordingOs::find_thread(pid_t tid) const {
    auto it = threads_.find(tid == 0 ? self_tid() : tid);
    return it == threads_.end() ? nullptr : &it->second;
}

int RecordingOs::node_of_cpu(unsigned cpu) const {
    for (const auto& n : nodes_)
        if (std::find(n.cpus.begin(), n.cpus.end(), cpu) != n.cpus.end()) return static_cast<int>(n.os_index);
    return -1;
}

bool RecordingOs::is_valid_target(int node) const {
    if (node < 0) return false;
    for (const auto& n : nodes_)
        if (n.os_index == static_cast<unsigned>(node)) return n.has_memory;
    return false;
}

// Nearest node of `set` from node `from` by SLIT distance, ties to the
// lower index: the order of the kernel's zonelist for `from`.
unsigned RecordingOs::nearest_in(const NodeSet& set, unsigned from) const {
    std::size_t from_pos = 0;
    for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i].os_index == from) from_pos = i;
    unsigned best = 0;
    unsigned best_dist = ~0u;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const auto& n = nodes_[i];
        if (!set.contains(n.os_index) || !n.has_memory) continue;
        if (distance_[from_pos][i] < best_dist) {
            best_dist = distance_[from_pos][i];
            best = n.os_index;
        }
    }
    return best;
}

int RecordingOs::normalise_nodes(PolicyMode mode, const NodeSet& in, NodeSet& out) const {
    if (!valid_mode(mode)) return EINVAL;
    if (mode == PolicyMode::weighted_interleave && !weighted_available_) return EINVAL;
    out = NodeSet{};
    if (mode == PolicyMode::default_ || mode == PolicyMode::local) return in.empty() ? 0 : EINVAL;
    if (in.empty()) return mode == PolicyMode::preferred ? 0 : EINVAL;   // preferred {} = local
    // The kernel intersects the request with the nodes that have memory.
    for (const auto& n : nodes_)
        if (n.has_memory && in.contains(n.os_index)) out.add(n.os_index);
    if (out.empty()) return EINVAL;
    if (mode == PolicyMode::preferred) {
        const unsigned first = out.to_vector().front();
        out = NodeSet{first};
    }
    return 0;
}

unsigned RecordingOs::place(const SimPolicy& policy, std::uintptr_t index, unsigned cpu) const {
    const int cpu_node = node_of_cpu(cpu);
    const unsigned local = cpu_node < 0 ? nodes_.front().os_index : static_cast<unsigned>(cpu_node);
    NodeSet memory_nodes;
    for (const auto& n : nodes_)
        if (n.has_memory) memory_nodes.add(n.os_index);
    const unsigned local_mem = memory_nodes.contains(local) ? local : nearest_in(memory_nodes, local);
    const std::vector<unsigned> set = policy.nodes.to_vector();
    switch (policy.mode) {
    case PolicyMode::default_:
    case PolicyMode::local: return local_mem;
    case PolicyMode::preferred: return set.empty() ? local_mem : set.front();
    case PolicyMode::bind:
    case PolicyMode::preferred_many: return policy.nodes.contains(local) ? local : nearest_in(policy.nodes, local);
    case PolicyMode::interleave: return set[index % set.size()];
    case PolicyMode::weighted_interleave: {
        std::uintptr_t total = 0;
        for (unsigned n : set) total += weights_.at(n);
        std::uintptr_t target = index % total;
        for (unsigned n : set) {
            if (target < weights_.at(n)) return n;
            target -= weights_.at(n);
        }
        return set.back();
    }
    }
    return local_mem;
}

bool RecordingOs::huge_eligible(std::uintptr_t huge_start, const void* touch_addr,
                                std::size_t touch_len) const {
    bool all_advised = true;
    for (std::uintptr_t p = huge_start; p < huge_start + huge_page_size_; p += page_size_) {
        auto it = advice_.find(p);
        if (it != advice_.end() && it->second == MADV_NOHUGEPAGE) return false;
        if (it == advice_.end() || it->second != MADV_HUGEPAGE) all_advised = false;
        if (page_node_.count(p) != 0) return false;   // a THP fault needs an empty region
    }
    if (all_advised) return true;
    const auto t0 = reinterpret_cast<std::uintptr_t>(touch_addr);
    return thp_always_ && huge_start >= t0 && huge_start + huge_page_size_ <= t0 + touch_len;
}

// ---- Os --------------------------------------------------------------------

int RecordingOs::mbind(void* addr, std::size_t len, PolicyMode mode, const NodeSet& nodes, unsigned flags) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::mbind;
    call.addr = reinterpret_cast<std::uintptr_t>(addr);
    call.len = len;
    call.mode = mode;
    call.nodes = nodes;
    call.flags = flags;
    auto finish = [&](int result) {
        call.result = result;
        record(call);
        return result;
    };
    if (int err = check_injected(CallKind::mbind)) return finish(err);
    if (call.addr % page_size_ != 0) return finish(EINVAL);
    if ((flags & ~(mf_strict | mf_move | mf_move_all)) != 0) return finish(EINVAL);
    NodeSet effective;
    if (int err = normalise_nodes(mode, nodes, effective)) return finish(err);
    if (len == 0) return finish(0);
    const std::uintptr_t end = call.addr + (len + page_size_ - 1) / page_size_ * page_size_;
    const SimPolicy policy{mode, effective};
    const bool moving = (flags & (mf_move | mf_move_all)) != 0;
    // Pages conform when they sit on a node of the policy's set; default and
    // local policies (and preferred {} = local) have no set to check.
    auto misplaced = [&](int node) { return !effective.empty() && !effective.contains(static_cast<unsigned>(node)); };

    // STRICT alone checks before installing anything (seen on 6.1 and 6.12:
    // EIO and the old policy stays).
    if ((flags & mf_strict) != 0 && !moving) {
        for (auto it = page_node_.lower_bound(call.addr); it != page_node_.end() && it->first < end; ++it)
            if (misplaced(it->second)) return finish(EIO);
    }
    // Install first, then migrate, as the kernel's do_mbind does.
    for (std::uintptr_t p = call.addr; p < end; p += page_size_) {
        if (mode == PolicyMode::default_)
            page_policy_.erase(p);
        else
            page_policy_[p] = policy;
    }
    std::size_t failed = 0;
    if (moving) {
        ThreadState& ts = thread(0);
        const unsigned cpu = ts.cpu.value_or(ts.affinity ? ts.affinity->front() : all_cpus_.front());
        for (auto it = page_node_.lower_bound(call.addr); it != page_node_.end() && it->first < end; ++it) {
            if (!misplaced(it->second)) continue;
            if (auto f = failing_pages_.find(it->first); f != failing_pages_.end()) {
                // A page shared with another process (EACCES) is skipped
                // silently, even with STRICT; other failures count.
                if (f->second != EACCES) ++failed;
                continue;
            }
            it->second = static_cast<int>(place(policy, it->first / page_size_, cpu));
        }
    }
    return finish(failed != 0 && (flags & mf_strict) != 0 ? EIO : 0);
}

int RecordingOs::set_mempolicy(PolicyMode mode, const NodeSet& nodes) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::set_mempolicy;
    call.mode = mode;
    call.nodes = nodes;
    int err = check_injected(CallKind::set_mempolicy);
    NodeSet effective;
    if (err == 0) err = normalise_nodes(mode, nodes, effective);
    if (err == 0) {
        thread(0).policy = SimPolicy{mode, effective};
    }
    call.result = err;
    record(call);
    return err;
}

int RecordingOs::get_mempolicy(const void* addr, PolicyQuery& out) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::get_mempolicy;
    call.addr = reinterpret_cast<std::uintptr_t>(addr);
    int err = check_injected(CallKind::get_mempolicy);
    if (err == 0) {
        SimPolicy p;
        if (addr == nullptr) {
            p = thread(0).policy;
        } else {
            auto it = page_policy_.find(call.addr / page_size_ * page_size_);
            if (it != page_policy_.end()) p = it->second;
        }
        out.mode = p.mode;
        out.nodes = p.nodes;
        out.mode_flags = 0;
    }
    call.result = err;
    record(call);
    return err;
}

int RecordingOs::move_pages(pid_t pid, std::size_t count, void* const* pages, const int* nodes, int* status,
                            unsigned flags) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::move_pages;
    call.pid = pid;
    call.flags = flags;
    for (std::size_t i = 0; i < count; ++i) {
        call.pages.push_back(reinterpret_cast<std::uintptr_t>(pages[i]));
        if (nodes != nullptr) call.targets.push_back(nodes[i]);
    }
    auto finish = [&](int result) {
        call.result = result;
        record(call);
        return result;
    };
    if (int err = check_injected(CallKind::move_pages)) return finish(err);
    if (pid != 0 && pid != pid_) return finish(ESRCH);
    if ((flags & ~(mf_move | mf_move_all)) != 0) return finish(EINVAL);
    for (std::size_t i = 0; i < count; ++i) {
        const std::uintptr_t page = call.pages[i] / page_size_ * page_size_;
        auto it = page_node_.find(page);
        if (nodes == nullptr) {
            status[i] = it == page_node_.end() ? -absent_errno_ : it->second;
            continue;
        }
        // The kernel validates each target as it reaches it and aborts the
        // whole call there; earlier pages have already been handled.
        if (!is_valid_target(nodes[i])) return finish(ENODEV);
        if (it == page_node_.end()) {
            status[i] = -ENOENT;
        } else if (auto f = failing_pages_.find(page); f != failing_pages_.end() && it->second != nodes[i]) {
            status[i] = -f->second;
        } else {
            it->second = nodes[i];
            status[i] = nodes[i];
        }
    }
    return finish(0);
}

int RecordingOs::madvise(void* addr, std::size_t len, int advice) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::madvise;
    call.addr = reinterpret_cast<std::uintptr_t>(addr);
    call.len = len;
    call.advice = advice;
    int err = check_injected(CallKind::madvise);
    if (err == 0 && call.addr % page_size_ != 0) err = EINVAL;
    if (err == 0) {
        const std::uintptr_t end = call.addr + (len + page_size_ - 1) / page_size_ * page_size_;
        for (std::uintptr_t p = call.addr; p < end; p += page_size_) {
            if (advice == MADV_HUGEPAGE || advice == MADV_NOHUGEPAGE) advice_[p] = advice;
            if (advice == MADV_DONTNEED) page_node_.erase(p);   // the next touch faults afresh
        }
        // A write fault of every page, by this thread on its CPU, as the
        // kernel's populate does. MADV_POPULATE_READ (22) of anonymous
        // memory maps the zero page and places nothing, so it changes no
        // state here.
        if (advice == kMadvPopulateWrite) touch_locked(addr, len, -1);
    }
    call.result = err;
    record(call);
    return err;
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
    call.result = err;
    record(call);
    return err;
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
    call.result = err;
    record(call);
    return err;
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
    call.result = result;
    record(call);
    return result;
}

int RecordingOs::read_numa_balancing(int& value) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::read_numa_balancing;
    int err = check_injected(CallKind::read_numa_balancing);
    if (err == 0 && !balancing_) err = ENOENT;
    if (err == 0) value = *balancing_;
    call.result = err;
    record(call);
    return err;
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
    call.result = err;
    record(call);
    return err;
}

bool RecordingOs::has_weighted_interleave() {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::has_weighted_interleave;
    call.result = weighted_available_ ? 1 : 0;
    record(call);
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
    call.result = err;
    record(call);
    return err;
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
    call.result = err;
    record(call);
    return err;
}

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
    call.result = err;
    record(call);
    return err;
}

int RecordingOs::physical_frame(const void* addr, std::uint64_t& pfn) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::physical_frame;
    call.addr = reinterpret_cast<std::uintptr_t>(addr);
    int err = check_injected(CallKind::physical_frame);
    if (err == 0) {
        auto it = page_node_.find(call.addr / page_size_ * page_size_);
        if (it == page_node_.end())
            err = ENOENT;
        else  // a made-up frame that encodes node and page: distinct per page
            pfn = (static_cast<std::uint64_t>(it->second) << 40) | (call.addr / page_size_ & ((1ull << 40) - 1));
    }
    call.result = err;
    record(call);
    return err;
}

// ---- recording and simulation controls --------------------------------------

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

void RecordingOs::touch(const void* addr, std::size_t len, int cpu) {
    std::lock_guard lock(mutex_);
    touch_locked(addr, len, cpu);
}

void RecordingOs::touch_locked(const void* addr, std::size_t len, int cpu) {
    ThreadState& ts = thread(0);
    unsigned fault_cpu;
    if (cpu >= 0)
        fault_cpu = static_cast<unsigned>(cpu);
    else
        fault_cpu = ts.cpu.value_or(ts.affinity ? ts.affinity->front() : all_cpus_.front());
    const auto start = reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_;
    const auto end = reinterpret_cast<std::uintptr_t>(addr) + len;
    auto effective = [&](std::uintptr_t page) {
        auto it = page_policy_.find(page);
        return it != page_policy_.end() ? it->second : ts.policy;
    };
    for (std::uintptr_t p = start; p < end;) {
        if (page_node_.count(p) != 0) {
            p += page_size_;
            continue;
        }
        if (huge_page_size_ != 0) {
            const std::uintptr_t h = p / huge_page_size_ * huge_page_size_;
            if (h == p && huge_eligible(h, addr, len)) {
                const unsigned node = place(effective(h), h / huge_page_size_, fault_cpu);
                for (std::uintptr_t q = h; q < h + huge_page_size_; q += page_size_)
                    page_node_[q] = static_cast<int>(node);
                p = h + huge_page_size_;
                continue;
            }
        }
        page_node_[p] = static_cast<int>(place(effective(p), p / page_size_, fault_cpu));
        p += page_size_;
    }
}

void RecordingOs::release(const void* addr, std::size_t len) {
    std::lock_guard lock(mutex_);
    const auto start = reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_;
    const auto end = reinterpret_cast<std::uintptr_t>(addr) + len;
    page_node_.erase(page_node_.lower_bound(start), page_node_.lower_bound(end));
    page_policy_.erase(page_policy_.lower_bound(start), page_policy_.lower_bound(end));
    advice_.erase(advice_.lower_bound(start), advice_.lower_bound(end));
}

int RecordingOs::node_of_page(const void* addr) const {
    std::lock_guard lock(mutex_);
    auto it = page_node_.find(reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_);
    return it == page_node_.end() ? -1 : it->second;
}

std::map<unsigned, std::size_t> RecordingOs::pages_per_node(const void* addr, std::size_t len) const {
    std::lock_guard lock(mutex_);
    std::map<unsigned, std::size_t> out;
    const auto start = reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_;
    const auto end = reinterpret_cast<std::uintptr_t>(addr) + len;
    for (auto it = page_node_.lower_bound(start); it != page_node_.end() && it->first < end; ++it)
        ++out[static_cast<unsigned>(it->second)];
    return out;
}

SimPolicy RecordingOs::policy_of_page(const void* addr) const {
    std::lock_guard lock(mutex_);
    auto it = page_policy_.find(reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_);
    return it == page_policy_.end() ? SimPolicy{} : it->second;
}

SimPolicy RecordingOs::thread_policy() const {
    std::lock_guard lock(mutex_);
    const ThreadState* ts = find_thread(0);
    return ts == nullptr ? SimPolicy{} : ts->policy;
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

void RecordingOs::set_thp_always(bool on) {
    std::lock_guard lock(mutex_);
    thp_always_ = on;
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

void RecordingOs::clear_failures() {
    std::lock_guard lock(mutex_);
    failures_.clear();
    failing_pages_.clear();
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

void RecordingOs::set_weighted_interleave_available(bool available) {
    std::lock_guard lock(mutex_);
    weighted_available_ = available;
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

unsigned RecordingOs::interleave_weight(unsigned node) const {
    std::lock_guard lock(mutex_);
    auto it = weights_.find(node);
    return it == weights_.end() ? 0 : it->second;
}

}  // namespace numaware::os
