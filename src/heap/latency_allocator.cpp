// heap/latency_allocator.cpp — serves one-block allocations from per-CPU
// lists of the blocks that are fastest for that CPU.
#include <algorithm>
#include <cmath>
#include <functional>
#include <mutex>
#include <queue>

#include <fmt/core.h>

#include "numaware/error.hpp"
#include "numaware/latency_blocks.hpp"
#include "os/os.hpp"

namespace numaware {

namespace {

// A free list that always hands out its best block: a min-heap on the
// block's rank (position in its CPU's ranking, or address for ordinary
// blocks), so a freed fast block is served again before slower ones.
struct RankedFreeList {
    using Entry = std::pair<std::uint32_t, std::uint32_t>;   // (rank, block)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;

    void push(std::uint32_t rank, std::uint32_t block) { heap.emplace(rank, block); }
    bool empty() const { return heap.empty(); }
    std::size_t size() const { return heap.size(); }
    std::uint32_t pop() {
        const std::uint32_t b = heap.top().second;
        heap.pop();
        return b;
    }
};

}  // namespace

struct LatencyBlockAllocator::Impl {
    std::byte* base = nullptr;
    std::size_t line = latency_block_bytes;
    std::size_t blocks = 0;
    LatencyPlan plan;
    std::string status;
    std::vector<int> owner;          // per block: index into plan.per_cpu, or -1
    std::vector<std::uint32_t> rank; // per block: rank within its list
    std::vector<bool> live;
    std::vector<RankedFreeList> fast;   // per plan.per_cpu index
    RankedFreeList ordinary;
    mutable std::mutex mutex;

    int cpu_index(unsigned cpu) const {
        for (std::size_t c = 0; c < plan.per_cpu.size(); ++c)
            if (plan.per_cpu[c].cpu == cpu) return static_cast<int>(c);
        return -1;
    }

    std::uint32_t block_of(const void* p, const char* what) const {
        const auto a = reinterpret_cast<std::uintptr_t>(p);
        const auto lo = reinterpret_cast<std::uintptr_t>(base);
        if (a < lo || a >= lo + blocks * line || (a - lo) % line != 0)
            throw Error("p", fmt::format("{} is not a block of this allocator's region", p));
        const auto b = static_cast<std::uint32_t>((a - lo) / line);
        if (!live[b]) throw Error("p", fmt::format("{} is not allocated ({})", p, what));
        return b;
    }
};

LatencyBlockAllocator::LatencyBlockAllocator(std::span<std::byte> region, const LatencyDatabase& db,
                                             const LatencyAllocatorOptions& options)
    : impl_(std::make_unique<Impl>()) {
    if (!std::isfinite(options.fast_fraction) || options.fast_fraction <= 0 || options.fast_fraction > 1)
        throw Error("fast_fraction", fmt::format("{} is outside (0, 1]", options.fast_fraction));
    auto& m = *impl_;
    m.plan = plan_latency_blocks(db, options.noise_factor);
    if (region.size() != db.region_bytes)
        throw Error("region", fmt::format("{} bytes, but the database measured {} bytes", region.size(), db.region_bytes));
    if (reinterpret_cast<std::uintptr_t>(region.data()) % db.line_bytes != 0)
        throw Error("region", fmt::format("not aligned to the {} B block size", db.line_bytes));
    m.base = region.data();
    m.line = db.line_bytes;
    m.blocks = db.blocks();
    m.live.assign(m.blocks, false);
    m.rank.assign(m.blocks, 0);
    m.fast.resize(m.plan.per_cpu.size());
    if (m.plan.non_uniform) {
        const auto per_cpu = static_cast<std::size_t>(std::floor(
            options.fast_fraction * static_cast<double>(m.blocks) / static_cast<double>(m.plan.per_cpu.size())));
        m.owner = assign_fast_blocks(m.plan, per_cpu);
    } else {
        // Nothing to gain from a ranking that is only noise: every block is
        // ordinary and served in address order.
        m.owner.assign(m.blocks, -1);
    }
    for (std::size_t c = 0; c < m.plan.per_cpu.size(); ++c) {
        const auto& order = m.plan.per_cpu[c].fastest_first;
        for (std::size_t i = 0; i < order.size(); ++i)
            if (m.owner[order[i]] == static_cast<int>(c)) m.rank[order[i]] = static_cast<std::uint32_t>(i);
    }
    for (std::uint32_t b = 0; b < m.blocks; ++b) {
        if (m.owner[b] < 0) {
            m.rank[b] = b;
            m.ordinary.push(b, b);
        } else {
            m.fast[static_cast<std::size_t>(m.owner[b])].push(m.rank[b], b);
        }
    }
    std::size_t fast_total = 0;
    for (const auto& f : m.fast) fast_total += f.size();
    m.status = m.plan.diagnostic + fmt::format(" ({} fast blocks over {} CPUs, {} ordinary, {} B each)", fast_total,
                                               m.plan.per_cpu.size(), m.ordinary.size(), m.line);
}

LatencyBlockAllocator::~LatencyBlockAllocator() = default;

void* LatencyBlockAllocator::allocate(std::size_t bytes, unsigned cpu) {
    auto& m = *impl_;
    if (bytes == 0 || bytes > m.line)
        throw Error("bytes", fmt::format("{} is outside 1..{} (one block)", bytes, m.line));
    std::lock_guard lock(m.mutex);
    const int c = m.cpu_index(cpu);
    std::uint32_t b;
    if (c >= 0 && !m.fast[static_cast<std::size_t>(c)].empty())
        b = m.fast[static_cast<std::size_t>(c)].pop();
    else if (!m.ordinary.empty())
        b = m.ordinary.pop();
    else
        return nullptr;
    m.live[b] = true;
    return m.base + std::size_t{b} * m.line;
}

void* LatencyBlockAllocator::allocate(std::size_t bytes) {
    const int cpu = os::linux_os().current_cpu();
    // An unknown CPU is served ordinary blocks, like an unmeasured one.
    return allocate(bytes, cpu < 0 ? ~0u : static_cast<unsigned>(cpu));
}

void LatencyBlockAllocator::deallocate(void* p) {
    if (p == nullptr) return;
    auto& m = *impl_;
    std::lock_guard lock(m.mutex);
    const std::uint32_t b = m.block_of(p, "double free?");
    m.live[b] = false;
    if (m.owner[b] < 0)
        m.ordinary.push(m.rank[b], b);
    else
        m.fast[static_cast<std::size_t>(m.owner[b])].push(m.rank[b], b);
}

bool LatencyBlockAllocator::non_uniform() const { return impl_->plan.non_uniform; }
const std::string& LatencyBlockAllocator::status() const { return impl_->status; }
const LatencyPlan& LatencyBlockAllocator::plan() const { return impl_->plan; }

std::size_t LatencyBlockAllocator::fast_free(unsigned cpu) const {
    std::lock_guard lock(impl_->mutex);
    const int c = impl_->cpu_index(cpu);
    return c < 0 ? 0 : impl_->fast[static_cast<std::size_t>(c)].size();
}

std::size_t LatencyBlockAllocator::ordinary_free() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->ordinary.size();
}

int LatencyBlockAllocator::block_owner_cpu(const void* p) const {
    auto& m = *impl_;
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const auto lo = reinterpret_cast<std::uintptr_t>(m.base);
    if (a < lo || a >= lo + m.blocks * m.line)
        throw Error("p", fmt::format("{} is not in this allocator's region", p));
    const int o = m.owner[(a - lo) / m.line];
    return o < 0 ? -1 : static_cast<int>(m.plan.per_cpu[static_cast<std::size_t>(o)].cpu);
}

}  // namespace numaware
