// tasks/deps.cpp — the dependency tracker (see deps.hpp).
#include "tasks/deps.hpp"

#include <algorithm>
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

std::string_view access_name(Access a) {
    switch (a) {
        case Access::in: return "in";
        case Access::out: return "out";
        case Access::inout: return "inout";
    }
    return "?";
}

bool overlaps(std::uint64_t a, std::uint64_t n, std::uint64_t b, std::uint64_t m) { return a < b + m && b < a + n; }

// Forget idle regions once there are this many and they are at least half
// of all regions: amortised, and nothing is erased while it is in use.
constexpr std::size_t forget_batch = 4096;

}  // namespace

void DepTracker::prepare(std::span<const Dep> deps, std::vector<TrackedDep>& out) const {
    out.clear();
    for (std::size_t i = 0; i < deps.size(); ++i) {
        const Dep& d = deps[i];
        if (d.addr == nullptr) throw Error(field_of(i), "address is null; a dependency names a non-empty range");
        if (d.bytes == 0) throw Error(field_of(i), "has 0 bytes; a dependency names a non-empty range");
        if (d.access != Access::in && d.access != Access::out && d.access != Access::inout)
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
        // Against the known regions.
        if (auto hit = regions_.find(start); hit != regions_.end()) {
            if (hit->second.bytes != bytes)
                throw Error(field_of(i), "range " + range_text(start, bytes) + " partially overlaps range " +
                                             range_text(start, hit->second.bytes) +
                                             " already in use; ranges must be identical or disjoint");
        } else {
            auto next = ordered_.upper_bound(start);
            if (next != ordered_.end() && overlaps(start, bytes, next->first, next->second))
                throw Error(field_of(i), "range " + range_text(start, bytes) + " partially overlaps range " +
                                             range_text(next->first, next->second) +
                                             " already in use; ranges must be identical or disjoint");
            if (next != ordered_.begin()) {
                auto prev = std::prev(next);
                if (overlaps(start, bytes, prev->first, prev->second))
                    throw Error(field_of(i), "range " + range_text(start, bytes) + " partially overlaps range " +
                                                 range_text(prev->first, prev->second) +
                                                 " already in use; ranges must be identical or disjoint");
            }
        }
        out.push_back(TrackedDep{start, bytes, d.access, nullptr, no_position});
    }
}

Region& DepTracker::region_for(const TrackedDep& d) {
    auto [it, fresh] = regions_.try_emplace(d.region, &pool_);
    Region& r = it->second;
    if (fresh) {
        r.start = d.region;
        r.bytes = d.bytes;
        ordered_.emplace(d.region, d.bytes);
    } else if (r.idle) {
        r.idle = false;
        --idle_;
    }
    return r;
}

void DepTracker::add_edge(DepNode& node, DepNode& pred, std::uint64_t bytes) {
    for (Edge& e : node.preds)
        if (e.from == pred.id) {
            e.bytes += bytes;
            return;
        }
    node.preds.push_back(Edge{pred.id, bytes});
    pred.succ.push_back(&node);
    ++node.pending;
}

bool DepTracker::add(DepNode& node) {
    node.preds.clear();
    node.succ.clear();
    node.pending = 0;
    for (std::uint32_t k = 0; k < node.deps.size(); ++k) {
        TrackedDep& d = node.deps[k];
        Region& r = region_for(d);
        d.reg = &r;
        d.reader_pos = no_position;
        if (d.access == Access::in) {
            if (r.writer != nullptr) add_edge(node, *r.writer, d.bytes);
            d.reader_pos = static_cast<std::uint32_t>(r.readers.size());
            r.readers.push_back(Region::Reader{&node, k});
        } else {
            if (!r.readers.empty()) {
                for (const Region::Reader& rd : r.readers) {
                    add_edge(node, *rd.task, d.bytes);
                    rd.task->deps[rd.dep].reader_pos = no_position;
                }
                r.readers.clear();
            } else if (r.writer != nullptr) {
                add_edge(node, *r.writer, d.bytes);
            }
            r.writer = &node;
        }
    }
    return node.pending == 0;
}

void DepTracker::complete(DepNode& node, std::vector<DepNode*>& ready) {
    for (TrackedDep& d : node.deps) {
        Region* r = d.reg;
        if (r == nullptr) continue;
        if (d.access == Access::in) {
            if (d.reader_pos != no_position) {
                const std::uint32_t pos = d.reader_pos;
                const Region::Reader last = r->readers.back();
                r->readers[pos] = last;
                last.task->deps[last.dep].reader_pos = pos;
                r->readers.pop_back();
                d.reader_pos = no_position;
            }
        } else if (r->writer == &node) {
            r->writer = nullptr;
        }
        d.reg = nullptr;
        if (r->unused() && !r->idle) {
            r->idle = true;
            ++idle_;
        }
    }
    for (DepNode* s : node.succ)
        if (--s->pending == 0) ready.push_back(s);
    node.succ.clear();
    if (idle_ >= forget_batch && idle_ * 2 >= regions_.size()) forget_idle();
}

void DepTracker::forget_idle() {
    for (auto it = regions_.begin(); it != regions_.end();) {
        if (it->second.idle) {
            ordered_.erase(it->first);
            it = regions_.erase(it);
        } else {
            ++it;
        }
    }
    idle_ = 0;
}

}  // namespace numaware::tasks::detail
