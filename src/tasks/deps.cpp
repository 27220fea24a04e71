// tasks/deps.cpp — the dependency tracker (see deps.hpp).
#include "tasks/deps.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::tasks::detail {

namespace {

std::string range_text(std::uint64_t start, std::uint64_t bytes) {
    return fmt::format("[{:#x}, {:#x})", start, start + bytes);
}

std::string field_of(std::size_t i) { return "deps[" + std::to_string(i) + "]"; }

std::string_view access_name(AccessMode a) {
    switch (a) {
        case AccessMode::in: return "in";
        case AccessMode::out: return "out";
        case AccessMode::inout: return "inout";
    }
    return "?";
}

bool overlaps(std::uint64_t a, std::uint64_t n, std::uint64_t b, std::uint64_t m) { return a < b + m && b < a + n; }

// Forget idle regions once there are this many and they are at least half
// of all regions: amortised, and nothing is erased while it is in use.
constexpr std::size_t forget_batch = 4096;

}  // namespace

// ---- RangeIndex -----------------------------------------------------------

std::size_t RangeIndex::leaf_of(std::uint64_t start) const {
    const auto it = std::upper_bound(firsts_.begin(), firsts_.end(), start);
    return it == firsts_.begin() ? 0 : static_cast<std::size_t>(it - firsts_.begin()) - 1;
}

namespace {
// First entry of [e, e+n) whose start is greater than `start`.
std::uint32_t first_after(const RangeIndex::Entry* e, std::uint32_t n, std::uint64_t start) {
    std::uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const std::uint32_t mid = (lo + hi) / 2;
        if (e[mid].start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
}  // namespace

const RangeIndex::Entry* RangeIndex::overlapping(std::uint64_t start, std::uint64_t end) const {
    if (size_ == 0) return nullptr;
    const std::size_t i = leaf_of(start);
    const Leaf& l = *leaves_[i];
    const std::uint32_t j = first_after(l.e, l.n, start);
    const Entry* prev = j > 0 ? &l.e[j - 1] : (i > 0 ? &leaves_[i - 1]->e[leaves_[i - 1]->n - 1] : nullptr);
    const Entry* next = j < l.n ? &l.e[j] : (i + 1 < leaves_.size() ? &leaves_[i + 1]->e[0] : nullptr);
    if (prev != nullptr && prev->end > start) return prev;
    if (next != nullptr && next->start < end) return next;
    return nullptr;
}

void RangeIndex::insert(std::uint64_t start, std::uint64_t end) {
    auto fresh_leaf = [&]() -> std::unique_ptr<Leaf> {
        if (!spare_.empty()) {
            std::unique_ptr<Leaf> l = std::move(spare_.back());
            spare_.pop_back();
            l->n = 0;
            return l;
        }
        return std::make_unique<Leaf>();
    };
    ++size_;
    if (leaves_.empty()) {
        leaves_.push_back(fresh_leaf());
        firsts_.push_back(start);
        leaves_[0]->e[0] = Entry{start, end};
        leaves_[0]->n = 1;
        return;
    }
    std::size_t i = leaf_of(start);
    Leaf* l = leaves_[i].get();
    std::uint32_t j = first_after(l->e, l->n, start);
    if (l->n == leaf_cap) {
        // Full: appending (the usual address-ordered run) opens a new leaf,
        // anything else splits the leaf in halves.
        const std::uint32_t keep = j == leaf_cap ? leaf_cap : leaf_cap / 2;
        std::unique_ptr<Leaf> right = fresh_leaf();
        right->n = leaf_cap - keep;
        if (right->n > 0) std::memcpy(right->e, l->e + keep, right->n * sizeof(Entry));
        l->n = keep;
        if (j > keep || (j == keep && keep == leaf_cap)) {
            j -= keep;
            const std::uint64_t first = right->n > 0 ? right->e[0].start : start;
            leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(i + 1), std::move(right));
            firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(i + 1), first);
            ++i;
            l = leaves_[i].get();
        } else {
            const std::uint64_t first = right->e[0].start;
            leaves_.insert(leaves_.begin() + static_cast<std::ptrdiff_t>(i + 1), std::move(right));
            firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(i + 1), first);
        }
    }
    if (j < l->n) std::memmove(l->e + j + 1, l->e + j, (l->n - j) * sizeof(Entry));
    l->e[j] = Entry{start, end};
    ++l->n;
    if (j == 0) firsts_[i] = start;
}

void RangeIndex::erase(std::uint64_t start) {
    if (size_ == 0) return;
    const std::size_t i = leaf_of(start);
    Leaf* l = leaves_[i].get();
    const std::uint32_t after = first_after(l->e, l->n, start);
    if (after == 0 || l->e[after - 1].start != start) return;   // not present
    const std::uint32_t j = after - 1;
    std::memmove(l->e + j, l->e + j + 1, (l->n - j - 1) * sizeof(Entry));
    --l->n;
    --size_;
    if (l->n == 0) {
        spare_.push_back(std::move(leaves_[i]));
        leaves_.erase(leaves_.begin() + static_cast<std::ptrdiff_t>(i));
        firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(i));
        if (spare_.size() > 16) spare_.pop_back();
    } else if (j == 0) {
        firsts_[i] = l->e[0].start;
    }
}

void RangeIndex::assign(std::span<const Entry> sorted) {
    for (auto& l : leaves_)
        if (spare_.size() < 16) spare_.push_back(std::move(l));
    leaves_.clear();
    firsts_.clear();
    size_ = sorted.size();
    // Leaves three quarters full: room for inserts between survivors.
    constexpr std::size_t fill = leaf_cap * 3 / 4;
    for (std::size_t k = 0; k < sorted.size(); k += fill) {
        std::unique_ptr<Leaf> l;
        if (!spare_.empty()) {
            l = std::move(spare_.back());
            spare_.pop_back();
        } else {
            l = std::make_unique<Leaf>();
        }
        const std::size_t n = std::min(fill, sorted.size() - k);
        std::memcpy(l->e, sorted.data() + k, n * sizeof(Entry));
        l->n = static_cast<std::uint32_t>(n);
        firsts_.push_back(l->e[0].start);
        leaves_.push_back(std::move(l));
    }
}

// ---- DepTracker ---------------------------------------------------------------

namespace {
constexpr std::size_t chunk_regions = 256;
}  // namespace

DepTracker::DepTracker() = default;

void DepTracker::reserve(std::size_t tasks) {
    tasks = std::min<std::size_t>(tasks, no_slot);
    pending_.reserve(tasks);
    gen_.reserve(tasks);
    ids_.reserve(tasks);
    nodes_.reserve(tasks);
    succ_.reserve(tasks);
}

Region* DepTracker::new_region() {
    if (free_ == nullptr) {
        chunks_.push_back(std::make_unique<Region[]>(chunk_regions));
        Region* c = chunks_.back().get();
        for (std::size_t k = chunk_regions; k-- > 0;) {
            c[k].next_free = free_;
            free_ = &c[k];
        }
    }
    Region* r = free_;
    free_ = r->next_free;
    r->next_free = nullptr;
    return r;
}

void DepTracker::prepare(std::span<const Dep> deps, DepList& out) const {
    out.clear();
    for (std::size_t i = 0; i < deps.size(); ++i) {
        const Dep& d = deps[i];
        if (d.addr == nullptr) throw Error(field_of(i), "address is null; a dependency names a non-empty range");
        if (d.bytes == 0) throw Error(field_of(i), "has 0 bytes; a dependency names a non-empty range");
        if (d.access != AccessMode::in && d.access != AccessMode::out && d.access != AccessMode::inout)
            throw Error(field_of(i), "access " + std::to_string(static_cast<int>(d.access)) +
                                         " is not in, out or inout");
        const auto start = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(d.addr));
        const std::uint64_t bytes = d.bytes;
        if (bytes > std::numeric_limits<std::uint64_t>::max() - start)
            throw Error(field_of(i), fmt::format("range at {:#x} of {} bytes wraps around the address space",
                                                 start, bytes));
        // Against the other dependencies of this task.
        bool duplicate = false;
        for (std::size_t j = 0; j < out.size(); ++j) {
            const TrackedDep& o = out[j];
            if (o.region == start && o.bytes == bytes) {
                if (o.access != d.access)
                    throw Error(field_of(i), "range " + range_text(start, bytes) +
                                                 " named twice in one task with different access (" +
                                                 std::string(access_name(o.access)) + " and " +
                                                 std::string(access_name(d.access)) + "); name it once as inout");
                duplicate = true;
                break;
            }
            if (overlaps(start, bytes, o.region, o.bytes))
                throw Error(field_of(i), "range " + range_text(start, bytes) + " partially overlaps range " +
                                             range_text(o.region, o.bytes) +
                                             " of the same task; ranges must be identical or disjoint");
        }
        if (duplicate) continue;
        // Against the known regions: an exact hit was checked when it was
        // new; only a new range needs the ordered index.
        Region* hit = table_.find(start);
        if (hit != nullptr) {
            if (hit->bytes != bytes)
                throw Error(field_of(i), "range " + range_text(start, bytes) + " partially overlaps range " +
                                             range_text(start, hit->bytes) +
                                             " already in use; ranges must be identical or disjoint");
        } else if (const RangeIndex::Entry* o = ordered_.overlapping(start, start + bytes)) {
            throw Error(field_of(i), "range " + range_text(start, bytes) + " partially overlaps range " +
                                         range_text(o->start, o->end - o->start) +
                                         " already in use; ranges must be identical or disjoint");
        }
        // The hit is a hint for add(), which checks that it is still live.
        out.push_back(TrackedDep{start, bytes, hit, d.access, 0});
    }
}

Region& DepTracker::region_for(const TrackedDep& d) {
    Region* r = d.reg;
    if (r == nullptr || !r->live || r->start != d.region) r = table_.find(d.region);
    if (r == nullptr) {
        r = new_region();
        r->start = d.region;
        r->bytes = d.bytes;
        r->live = true;
        table_.insert(r);
        ordered_.insert(d.region, d.region + d.bytes);
    } else if (r->idle) {
        r->idle = false;
        --idle_;
    }
    return *r;
}

std::uint32_t DepTracker::new_slot(DepNode& node) {
    std::uint32_t s;
    if (!free_slots_.empty()) {
        s = free_slots_.back();
        free_slots_.pop_back();
    } else {
        s = static_cast<std::uint32_t>(pending_.size());
        if (s == no_slot) throw Error("tasks", "more than 2^32 - 1 unfinished tasks with dependencies");
        pending_.push_back(0);
        gen_.push_back(0);
        ids_.push_back(0);
        nodes_.push_back(nullptr);
        succ_.emplace_back();
    }
    pending_[s] = 0;
    ids_[s] = node.id;
    nodes_[s] = &node;
    SuccHead& h = succ_[s];
    h.count = 0;
    h.first_block = h.last_block = no_slot;
    return s;
}

std::uint32_t DepTracker::new_block() {
    if (free_block_ != no_slot) {
        const std::uint32_t b = free_block_;
        free_block_ = blocks_[b].next;
        return b;
    }
    blocks_.emplace_back();
    return static_cast<std::uint32_t>(blocks_.size() - 1);
}

void DepTracker::add_edge(DepNode& node, std::uint32_t pred, std::uint64_t bytes) {
    const TaskId from = ids_[pred];
    for (Edge& e : preds_)
        if (e.from == from) {
            e.bytes += bytes;
            return;
        }
    preds_.push_back(Edge{from, bytes});
    ++pending_[node.slot];
    SuccHead& h = succ_[pred];
    const std::uint32_t k = h.count++;
    if (k < SuccHead::inline_cap) {
        h.items[k] = node.slot;
        return;
    }
    const std::uint32_t in_block = (k - SuccHead::inline_cap) % SuccBlock::cap;
    if (in_block == 0) {
        const std::uint32_t b = new_block();   // may move blocks_, not succ_
        blocks_[b].next = no_slot;
        if (h.last_block == no_slot)
            h.first_block = b;
        else
            blocks_[h.last_block].next = b;
        h.last_block = b;
    }
    blocks_[h.last_block].items[in_block] = node.slot;
}

// Drops the readers that have finished (their slot's generation moved on),
// so a region read again and again without a write keeps a short list.
void DepTracker::compact_readers(Region& r) {
    std::size_t kept = 0;
    for (const Region::Reader& rd : r.readers)
        if (gen_[rd.slot] == rd.gen) r.readers[kept++] = rd;
    r.readers.resize(kept);
}

bool DepTracker::add(DepNode& node) {
    preds_.clear();
    node.slot = new_slot(node);
    const std::uint32_t me = node.slot;
    for (TrackedDep& d : node.deps) {
        Region& r = region_for(d);
        d.reg = &r;
        if (d.access == AccessMode::in) {
            if (r.writer != no_slot) add_edge(node, r.writer, d.bytes);
            if (r.readers.size() >= 2 * std::size_t{r.live_readers} + 16) compact_readers(r);
            r.readers.push_back(Region::Reader{me, gen_[me]});
            ++r.live_readers;
            d.epoch = r.epoch;
        } else {
            if (r.live_readers > 0) {
                for (const Region::Reader& rd : r.readers)
                    if (gen_[rd.slot] == rd.gen) add_edge(node, rd.slot, d.bytes);
            } else if (r.writer != no_slot) {
                add_edge(node, r.writer, d.bytes);
            }
            r.readers.clear();
            r.live_readers = 0;
            ++r.epoch;
            r.writer = me;
        }
    }
    return pending_[me] == 0;
}

void DepTracker::complete(DepNode& node, std::vector<ReadyNode>& ready) {
    const std::uint32_t me = node.slot;
    for (TrackedDep& d : node.deps) {
        Region* r = d.reg;
        if (r == nullptr) continue;
        if (d.access == AccessMode::in) {
            if (d.epoch == r->epoch) --r->live_readers;   // else a writer has taken it off the list
        } else if (r->writer == me) {
            r->writer = no_slot;
        }
        d.reg = nullptr;
        if (r->unused() && !r->idle) {
            r->idle = true;
            r->readers.clear();
            ++idle_;
        }
    }
    if (me == no_slot) return;
    // The successors: one 32-bit count each, in the dense array.
    const SuccHead& h = succ_[me];
    const std::uint32_t n_inline = std::min(h.count, SuccHead::inline_cap);
    for (std::uint32_t k = 0; k < n_inline; ++k)
        if (const std::uint32_t s = h.items[k]; --pending_[s] == 0) ready.push_back(ReadyNode{nodes_[s], ids_[s]});
    std::uint32_t left = h.count - n_inline;
    for (std::uint32_t b = h.first_block; b != no_slot;) {
        SuccBlock& blk = blocks_[b];
        const std::uint32_t n = std::min(left, SuccBlock::cap);
        for (std::uint32_t k = 0; k < n; ++k)
            if (const std::uint32_t s = blk.items[k]; --pending_[s] == 0) ready.push_back(ReadyNode{nodes_[s], ids_[s]});
        left -= n;
        const std::uint32_t next = blk.next;
        blk.next = free_block_;
        free_block_ = b;
        b = next;
    }
    ++gen_[me];
    nodes_[me] = nullptr;
    free_slots_.push_back(me);
    node.slot = no_slot;
    if (idle_ >= forget_batch && idle_ * 2 >= table_.size()) forget_idle();
}

void DepTracker::forget_idle() {
    if (idle_ == 0) return;
    // The ordered index is rebuilt from the survivors, taken in address
    // order from the index itself (erasing one by one from the middle of a
    // large index costs more; collecting them from the hash table needed a
    // sort). Consecutive starts share table pages, so the lookups are cheap.
    scratch_.clear();
    ordered_.for_each([&](const RangeIndex::Entry& e) {
        const Region* r = table_.find(e.start);
        if (r != nullptr && !r->idle) scratch_.push_back(e);
    });
    table_.erase_if([&](Region* r) {
        if (!r->idle) return false;
        r->idle = false;
        r->live = false;
        r->writer = no_slot;
        r->live_readers = 0;
        r->readers.clear();
        if (r->cache != nullptr) forgotten_.push_back(r->cache);
        r->cache = nullptr;
        r->next_free = free_;
        free_ = r;
        return true;
    });
    idle_ = 0;
    ordered_.assign(scratch_);
}

}  // namespace numaware::tasks::detail
