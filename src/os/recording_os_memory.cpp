// os/recording_os_memory.cpp — RecordingOs's simulated memory: range and
// thread policies, where a fault places a page, migration, and the page
// state tests inspect (the rules are listed in recording_os.hpp).
#include "os/recording_os.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/mman.h>
#include <utility>

namespace numaware::os {

namespace {

bool valid_mode(PolicyMode mode) {
    const int m = static_cast<int>(mode);
    return m >= 0 && m <= static_cast<int>(PolicyMode::weighted_interleave);
}

}  // namespace

// ---- placement rules (lock held) ---------------------------------------------

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

// The range's policy (never a default one: mbind(default) erases it), else
// the calling thread's.
const SimPolicy& RecordingOs::effective_policy_locked(std::uintptr_t page) {
    auto it = page_policy_.find(page);
    return it != page_policy_.end() ? it->second : thread(0).policy;
}

unsigned RecordingOs::fault_cpu_locked(int cpu) {
    if (cpu >= 0) return static_cast<unsigned>(cpu);
    const ThreadState& ts = thread(0);
    return ts.cpu.value_or(ts.affinity ? ts.affinity->front() : all_cpus_.front());
}

// The fault resolves the hint. Under migrate-on-fault, which only the
// default policy has (neither the page's range nor the thread has a policy
// of its own), the kernel first moves the page to the faulting CPU's node
// (mpol_misplaced with MPOL_F_MORON), whether balancing is still on or not.
void RecordingOs::resolve_hints_locked(std::uintptr_t start, std::uintptr_t end, unsigned fault_cpu) {
    for (auto it = hinted_.lower_bound(start); it != hinted_.end() && *it < end; it = hinted_.erase(it)) {
        const SimPolicy& policy = effective_policy_locked(*it);
        if (policy.mode != PolicyMode::default_) continue;
        auto page = page_node_.find(*it);
        if (page != page_node_.end()) page->second = static_cast<int>(place(policy, 0, fault_cpu));
    }
}

void RecordingOs::touch_locked(const void* addr, std::size_t len, int cpu) {
    const unsigned fault_cpu = fault_cpu_locked(cpu);
    const auto start = reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_;
    const auto end = reinterpret_cast<std::uintptr_t>(addr) + len;
    resolve_hints_locked(start, end, fault_cpu);
    for (std::uintptr_t p = start; p < end;) {
        if (page_node_.count(p) != 0) {
            p += page_size_;
            continue;
        }
        if (huge_page_size_ != 0) {
            const std::uintptr_t h = p / huge_page_size_ * huge_page_size_;
            if (h == p && huge_eligible(h, addr, len)) {
                const unsigned node = place(effective_policy_locked(h), h / huge_page_size_, fault_cpu);
                for (std::uintptr_t q = h; q < h + huge_page_size_; q += page_size_)
                    page_node_[q] = static_cast<int>(node);
                p = h + huge_page_size_;
                continue;
            }
        }
        page_node_[p] = static_cast<int>(place(effective_policy_locked(p), p / page_size_, fault_cpu));
        p += page_size_;
    }
}

// ---- Os memory calls -----------------------------------------------------------

int RecordingOs::mbind(void* addr, std::size_t len, PolicyMode mode, const NodeSet& nodes, unsigned flags) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::mbind;
    call.addr = reinterpret_cast<std::uintptr_t>(addr);
    call.len = len;
    call.mode = mode;
    call.nodes = nodes;
    call.flags = flags;
    if (int err = check_injected(CallKind::mbind)) return record(std::move(call), err);
    if (call.addr % page_size_ != 0) return record(std::move(call), EINVAL);
    if ((flags & ~(mf_strict | mf_move | mf_move_all)) != 0) return record(std::move(call), EINVAL);
    NodeSet effective;
    if (int err = normalise_nodes(mode, nodes, effective)) return record(std::move(call), err);
    if (len == 0) return record(std::move(call), 0);
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
            if (misplaced(it->second)) return record(std::move(call), EIO);
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
    return record(std::move(call), failed != 0 && (flags & mf_strict) != 0 ? EIO : 0);
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
    return record(std::move(call), err);
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
    return record(std::move(call), err);
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
    if (int err = check_injected(CallKind::move_pages)) return record(std::move(call), err);
    if (pid != 0 && pid != pid_) return record(std::move(call), ESRCH);
    if ((flags & ~(mf_move | mf_move_all)) != 0) return record(std::move(call), EINVAL);
    for (std::size_t i = 0; i < count; ++i) {
        const std::uintptr_t page = call.pages[i] / page_size_ * page_size_;
        auto it = page_node_.find(page);
        if (nodes == nullptr) {
            status[i] = it == page_node_.end() || hinted_.count(page) != 0 ? -absent_errno_ : it->second;
            continue;
        }
        // The kernel validates each target as it reaches it and aborts the
        // whole call there; earlier pages have already been handled.
        if (!is_valid_target(nodes[i])) return record(std::move(call), ENODEV);
        if (it == page_node_.end()) {
            status[i] = -ENOENT;
        } else if (auto f = failing_pages_.find(page); f != failing_pages_.end() && it->second != nodes[i]) {
            status[i] = -f->second;
        } else {
            it->second = nodes[i];
            status[i] = nodes[i];
        }
    }
    return record(std::move(call), 0);
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
            if (advice == MADV_DONTNEED) {   // the next touch faults afresh
                page_node_.erase(p);
                hinted_.erase(p);
            }
        }
        // A write fault of every page, by this thread on its CPU, as the
        // kernel's populate does. MADV_POPULATE_READ (22) of anonymous
        // memory maps the zero page and places nothing; of a present page
        // whose entry balancing hinted, it takes the hinting fault.
        if (advice == madv_populate_write) touch_locked(addr, len, -1);
        if (advice == madv_populate_read) resolve_hints_locked(call.addr, end, fault_cpu_locked(-1));
    }
    return record(std::move(call), err);
}

// Resident: every present page, hinted ones included (their entries are
// PROT_NONE, not empty).
int RecordingOs::mincore(void* addr, std::size_t len, unsigned char* vec) {
    std::lock_guard lock(mutex_);
    Call call;
    call.kind = CallKind::mincore;
    call.addr = reinterpret_cast<std::uintptr_t>(addr);
    call.len = len;
    int err = check_injected(CallKind::mincore);
    if (err == 0 && call.addr % page_size_ != 0) err = EINVAL;
    if (err == 0) {
        const std::size_t pages = (len + page_size_ - 1) / page_size_;
        for (std::size_t i = 0; i < pages; ++i) vec[i] = page_node_.count(call.addr + i * page_size_) != 0 ? 1 : 0;
    }
    return record(std::move(call), err);
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
    return record(std::move(call), err);
}

// ---- simulated faults and page state -----------------------------------------

void RecordingOs::touch(const void* addr, std::size_t len, int cpu) {
    std::lock_guard lock(mutex_);
    touch_locked(addr, len, cpu);
}

void RecordingOs::release(const void* addr, std::size_t len) {
    std::lock_guard lock(mutex_);
    const auto start = reinterpret_cast<std::uintptr_t>(addr) / page_size_ * page_size_;
    const auto end = reinterpret_cast<std::uintptr_t>(addr) + len;
    page_node_.erase(page_node_.lower_bound(start), page_node_.lower_bound(end));
    page_policy_.erase(page_policy_.lower_bound(start), page_policy_.lower_bound(end));
    advice_.erase(advice_.lower_bound(start), advice_.lower_bound(end));
    hinted_.erase(hinted_.lower_bound(start), hinted_.lower_bound(end));
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

void RecordingOs::set_thp_always(bool on) {
    std::lock_guard lock(mutex_);
    thp_always_ = on;
}

}  // namespace numaware::os
