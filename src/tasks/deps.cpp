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

// add() sweeps the idle regions away once this many regions are known, and
// then again once twice as many as survived the last sweep: amortised, and
// nothing is erased while it is in use.
constexpr std::size_t forget_batch = 4096;

}  // namespace

// ---- RangeIndex -----------------------------------------------------------

std::size_t RangeIndex::leaf_of(std::uint64_t start) const {
    // Ranges mostly come in address order: the last leaf first.
    if (!firsts_.empty() && start >= firsts_.back()) return firsts_.size() - 1;
    const auto it = std::upper_bound(firsts_.begin(), firsts_.end(), start);
    return it == firsts_.begin() ? 0 : static_cast<std::size_t>(it - firsts_.begin()) - 1;
}

namespace {
// First entry of [e, e+n) whose start is greater than `start`.
std::uint32_t first_after(const RangeIndex::Entry* e, std::uint32_t n, std::uint64_t start) {
    if (n > 0 && e[n - 1].start <= start) return n;   // past the last: the usual append
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

DepTracker::DepTracker() : next_sweep_(forget_batch) {}

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
    // The next one, asked for now: a sweep freed it long ago, and the
    // next new region reads it first thing.
    if (free_ != nullptr) __builtin_prefetch(free_, 1);
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
        const auto addr = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(d.addr));
        const std::uint64_t bytes = d.bytes;
        if (bytes > std::numeric_limits<std::uint64_t>::max() - addr)
            throw Error(field_of(i), fmt::format("range at {:#x} of {} bytes wraps around the address space",
                                                 addr, bytes));
        std::uint64_t start = addr;
        if (d.scope != 0) {
            if (addr >= TrackedDep::scope_key_limit || bytes > TrackedDep::scope_key_limit - addr)
                throw Error(field_of(i), fmt::format("range at {:#x} of {} bytes in scope {} reaches 2^48; a "
                                                     "scoped dependency must lie below it",
                                                     addr, bytes, d.scope));
            start |= std::uint64_t{d.scope} << TrackedDep::scope_shift;
        }
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
        // add() reads the state of the region's last writer, which a
        // finishing worker on another CPU may have written: ask for it now.
        if (hit != nullptr && hit->writer != no_slot && !given_again(hit->writer, hit->writer_gen))
            __builtin_prefetch(&slots_[hit->writer]);
        // The hit is a hint for add(), which checks that it is still live.
        out.push_back(TrackedDep{start, bytes, hit, d.access, hit == nullptr, d.scope});
    }
}

// The hint, when it still holds the region (inline: add() asks once per
// dependency, and the hint is usually right), else the table's record or a
// new one.
[[gnu::always_inline]] inline Region& DepTracker::region_for(const TrackedDep& d) {
    Region* r = d.reg;
    if (r != nullptr && r->live && r->start == d.region) return *r;
    return region_lookup(d);
}

Region& DepTracker::region_lookup(const TrackedDep& d) {
    Region* r = d.reg == nullptr && d.unknown ? nullptr : table_.find(d.region);
    if (r == nullptr) {
        r = new_region();
        r->start = d.region;
        r->bytes = d.bytes;
        r->live = true;
        r->named = sweeps_ - 1;   // not yet in young_: add() puts it there
        table_.insert(r);
        ordered_.insert(d.region, d.region + d.bytes);
    }
    return *r;
}

std::uint32_t DepTracker::new_slot(DepNode& node) {
    std::uint32_t s = no_slot;
    if (!free_slots_.empty()) {
        s = free_slots_.back();
        free_slots_.pop_back();
    } else {
        // The oldest slots first: a busy one goes to the back.
        for (int k = 0; k < 2 && !given_.empty() && s == no_slot; ++k) {
            const std::uint32_t f = given_.pop_front();
            if (reusable(f))
                s = f;
            else
                given_.push_back(f);
        }
        if (s == no_slot && given_.size() >= next_scan_) {
            // All of it, once it has doubled: bounded by twice the slots in use.
            for (std::size_t k = given_.size(); k-- > 0;) {
                const std::uint32_t f = given_.pop_front();
                if (reusable(f))
                    free_slots_.push_back(f);
                else
                    given_.push_back(f);
            }
            next_scan_ = std::max<std::size_t>(64, 2 * given_.size());
            if (!free_slots_.empty()) {
                s = free_slots_.back();
                free_slots_.pop_back();
            }
        }
    }
    if (s == no_slot) {
        s = slots_.append();
        if (s != no_slot) {
            pending_.append();
            given_gen_.append();
        }
        if (s == no_slot)
            throw Error("tasks", fmt::format("more than {} unfinished tasks with dependencies",
                                             ChunkedArray<SlotRecord>::max_size));
    }
    SlotRecord& rec = slots_[s];
    if (rec.first_block != no_slot) {
        // The last task's overflow blocks, as one chain, for reuse.
        blocks_[rec.last_block].next = free_block_;
        free_block_ = rec.first_block;
    }
    pending_[s].store(adding_hold, std::memory_order_relaxed);   // held by add() until commit()
    rec.first_block = rec.last_block = no_slot;
    rec.id = node.id;
    rec.node = &node;
    adding_gen_ = generation_of(rec.state.load(std::memory_order_relaxed));   // with no successors
    given_gen_[s] = adding_gen_;
    given_.push_back(s);
    // The next candidate's record and count, asked for early: a finishing
    // thread wrote them last.
    __builtin_prefetch(&slots_[given_.front()], 1);
    __builtin_prefetch(&pending_[given_.front()]);
    return s;
}

std::uint32_t DepTracker::new_block() {
    if (free_block_ != no_slot) {
        const std::uint32_t b = free_block_;
        free_block_ = blocks_[b].next;
        return b;
    }
    const std::uint32_t b = blocks_.append();
    if (b == no_slot)
        throw Error("tasks", fmt::format("more than {} successor blocks", ChunkedArray<SuccBlock>::max_size));
    return b;
}

// Inline: add() calls it for every predecessor a dependency names.
[[gnu::always_inline]] inline bool DepTracker::add_edge(DepNode& node, std::uint32_t pred, std::uint32_t gen,
                                                        std::uint64_t bytes) {
    // Its slot given out again: finished, and known without its record.
    if (given_again(pred, gen)) return false;
    SlotRecord& p = slots_[pred];
    // Seeing it finished acquires: the predecessor's effects happen before
    // whatever runs the new task, which no edge orders after it.
    std::uint64_t state = p.state.load(std::memory_order_acquire);
    if (generation_of(state) != gen) return false;
    const TaskId from = p.id;
    for (Edge& e : preds_)
        if (e.from == from) {
            e.bytes += bytes;
            return true;
        }
    // The successor goes past the count, where complete() does not read
    // yet; the compare-and-swap that counts it publishes it, unless the
    // predecessor has finished meanwhile (only complete() changes the
    // generation; only this thread the count).
    const std::uint32_t k = successors_of(state);
    if (k < SlotRecord::inline_cap) {
        p.items[k] = node.slot;
    } else {
        const std::uint32_t in_block = (k - SlotRecord::inline_cap) % SuccBlock::cap;
        if (in_block == 0) {
            // Chained before it is counted: a block left over by a lost
            // race is freed with the record's chain when the slot is reused.
            const std::uint32_t b = new_block();
            blocks_[b].next = no_slot;
            if (p.last_block == no_slot)
                p.first_block = b;
            else
                blocks_[p.last_block].next = b;
            p.last_block = b;
        }
        blocks_[p.last_block].items[in_block] = node.slot;
    }
    if (!p.state.compare_exchange_strong(state, state + 1, std::memory_order_release, std::memory_order_acquire))
        return false;
    preds_.push_back(Edge{from, bytes});
    return true;
}

// Drops the readers that have finished, so a region read again and again
// without a write keeps a short list.
void DepTracker::compact_readers(Region& r) {
    std::size_t kept = 0;
    for (const Region::Reader& rd : r.readers)
        if (alive(rd.slot, rd.gen)) r.readers[kept++] = rd;
    r.readers.resize(kept);
    r.compact_at = static_cast<std::uint32_t>(std::max<std::size_t>(16, 2 * kept));
}

void DepTracker::add(DepNode& node) {
    if (table_.size() >= next_sweep_) sweep(true);
    preds_.clear();
    node.slot = new_slot(node);
    const std::uint32_t me = node.slot;
    const std::uint32_t gen = adding_gen_;
    for (TrackedDep& d : node.deps) {
        Region& r = region_for(d);
        d.reg = &r;
        if (r.named != sweeps_) {
            r.named = sweeps_;
            young_.push_back(&r);
        }
        if (d.access == AccessMode::in) {
            if (r.writer != no_slot && !add_edge(node, r.writer, r.writer_gen, d.bytes)) r.writer = no_slot;
            if (r.readers.size() >= r.compact_at) compact_readers(r);
            r.readers.push_back(Region::Reader{me, gen});
        } else {
            bool reader = false;
            for (const Region::Reader& rd : r.readers) reader |= add_edge(node, rd.slot, rd.gen, d.bytes);
            // With no unfinished reader, the writer (a reader finishes after it).
            if (!reader && r.writer != no_slot) add_edge(node, r.writer, r.writer_gen, d.bytes);
            r.readers.clear();
            r.compact_at = 16;
            r.writer = me;
            r.writer_gen = gen;
        }
    }
}

bool DepTracker::commit(DepNode& node) {
    static_assert(ChunkedArray<SlotRecord>::max_size < adding_hold,
                  "a task's predecessors, at most the slots, stay below the hold");
    // The hold, less one for each predecessor linked: each counts one down
    // as it finishes, and the last to do so makes the task ready.
    const std::uint32_t drop = adding_hold - static_cast<std::uint32_t>(preds_.size());
    return pending_[node.slot].fetch_sub(drop, std::memory_order_acq_rel) == drop;
}

void DepTracker::complete_slot(std::uint32_t me, std::vector<ReadyNode>& ready) {
    SlotRecord& rec = slots_[me];
    // Finished: the next generation, with no successors. Only this thread
    // changes the generation; the word taken holds the successors counted.
    const std::uint64_t next = std::uint64_t{generation_of(rec.state.load(std::memory_order_relaxed)) + 1u} << 32;
    const std::uint32_t count = successors_of(rec.state.exchange(next, std::memory_order_acq_rel));
    // No edge is linked to it any more: its successors are final. (Inline:
    // called once per successor, the call cost as much as the count.)
    auto release = [&](std::uint32_t s) __attribute__((always_inline)) {
        const std::uint32_t left = count_down(pending_[s]);
        if (left == 0)
            ready.push_back(ReadyNode{slots_[s].node, slots_[s].id});
        else if (left == 1)
            __builtin_prefetch(&slots_[s]);   // its last predecessor may finish soon: it will be read then
    };
    const std::uint32_t n_inline = std::min(count, SlotRecord::inline_cap);
    for (std::uint32_t k = 0; k < n_inline; ++k) release(rec.items[k]);
    // Only the blocks counted: add() may be chaining the next one.
    std::uint32_t left = count - n_inline;
    for (std::uint32_t b = left > 0 ? rec.first_block : no_slot; left > 0;) {
        const SuccBlock& blk = blocks_[b];
        const std::uint32_t n = std::min(left, SuccBlock::cap);
        for (std::uint32_t k = 0; k < n; ++k) release(blk.items[k]);
        left -= n;
        if (left > 0) b = blk.next;
    }
    // The last read of the record is done: add() may reuse it (and its blocks).
    pending_[me].store(released, std::memory_order_release);
}

bool DepTracker::idle(const Region& r) const {
    if (r.writer != no_slot && alive(r.writer, r.writer_gen)) return false;
    for (const Region::Reader& rd : r.readers)
        if (alive(rd.slot, rd.gen)) return false;
    return true;
}

std::size_t DepTracker::idle_regions() const {
    std::size_t n = 0;
    table_.for_each([&](const Region* r) { n += idle(*r) ? 1 : 0; });
    return n;
}

void DepTracker::forget_idle() { sweep(false); }

void DepTracker::sweep(bool aged) {
    // A batch judges the regions of old_: those named again since are in
    // young_ and stay; an idle one is forgotten; a busy one goes to young_,
    // to be judged at the next batch. forget_idle() judges every region.
    // The slot states that idle() reads were written by finishing workers
    // on other CPUs: those of a few regions ahead are asked for early.
    std::vector<Region*>& all = sweep_scratch_;
    all.clear();
    if (aged) {
        all.swap(old_);
    } else {
        table_.for_each([&](Region* r) { all.push_back(r); });
        young_.clear();
        old_.clear();
    }
    auto ask = [&](const Region& r) {
        if (aged && r.named == sweeps_) return;   // named again: kept whatever its tasks
        if (r.writer != no_slot && !given_again(r.writer, r.writer_gen)) __builtin_prefetch(&slots_[r.writer]);
        const std::size_t n = std::min<std::size_t>(r.readers.size(), 4);
        for (std::size_t i = 0; i < n; ++i)
            if (!given_again(r.readers[i].slot, r.readers[i].gen)) __builtin_prefetch(&slots_[r.readers[i].slot]);
    };
    constexpr std::size_t ahead = 8;
    for (std::size_t k = 0; k < std::min(ahead, all.size()); ++k) ask(*all[k]);
    std::vector<Region*> gone;
    std::size_t busy = 0;   // judged and kept: named by unfinished tasks
    for (std::size_t k = 0; k < all.size(); ++k) {
        if (k + ahead < all.size()) ask(*all[k + ahead]);
        Region* r = all[k];
        if (aged && r->named == sweeps_) continue;
        if (idle(*r)) {
            gone.push_back(r);
        } else {
            ++busy;
            r->named = sweeps_;
            young_.push_back(r);
        }
    }
    all.clear();
    if (!gone.empty()) {
        // Out of the table first, then the ordered index keeps what the
        // table still holds: neither reads a record that stays.
        for (Region* r : gone) r->live = false;
        table_.erase(gone);
        scratch_.clear();
        ordered_.for_each([&](const RangeIndex::Entry& e) {
            if (table_.find(e.start) != nullptr) scratch_.push_back(e);
        });
        for (Region* r : gone) {
            r->writer = no_slot;
            r->readers.clear();
            r->compact_at = 16;
            if (r->cache != nullptr) forgotten_.push_back(r->cache);
            r->cache = nullptr;
            r->next_free = free_;
            free_ = r;
        }
        ordered_.assign(scratch_);
    }
    old_.swap(young_);
    young_.clear();
    // The next batch after as many new regions as are busy, and at least a
    // batch: it judges the regions named meanwhile (at most the new ones
    // and those named again) and the busy ones kept now, so a batch costs a
    // bounded number of looks per region added.
    next_sweep_ = table_.size() + std::max(forget_batch, busy);
    ++sweeps_;
}

}  // namespace numaware::tasks::detail
