// sim/flow_network.cpp — max-min fair bandwidth sharing between flows,
// advanced from event to event.
//
// Sharing is max-min fair, computed by progressive filling: the rates of
// all unfrozen flows are raised together; when a resource is full, every
// flow through it is frozen at the current level, and filling continues
// with the others until every flow is frozen. This is the textbook
// algorithm of D. Bertsekas and R. Gallager, "Data Networks" (2nd ed.,
// Prentice Hall, 1992), section 6.5.2 on max-min flow control; it is also
// described as "uniformly raising the bandwidths of all users without
// violating capacity constraints" in T. Harks, M. Hoefer, K. Schewior,
// A. Skopalik, "Routing Games with Progressive Filling" (arXiv:1308.3161).
//
// Cost: one reshare is O(R + A × L × log R) for R resources, A flows
// transferring and L resources per flow (the fill levels of the resources
// sit in a heap, updated as flows freeze); one event scans the A active
// flows. That is fine for a few thousand concurrent flows; ended flows cost
// nothing (only the active list is scanned). Incremental resharing of only
// the flows an event touches would be the next step if events dominate.
//
// Floating point: completions within a relative 1e-12 of the earliest one
// are taken as simultaneous; their leftover bytes are credited to their
// resources and they end in id order at that time, so analytically equal
// ends do not drift apart by rounding.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>

#include "numaware/error.hpp"
#include "numaware/sim.hpp"

namespace numaware::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Two event times closer than this are one event.
double tolerance(double t) { return 1e-12 * std::max(std::abs(t), 1e-9); }

std::string show(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace

std::size_t FlowNetwork::add_resource(double bytes_per_second, std::string name) {
    if (!(bytes_per_second > 0) || !std::isfinite(bytes_per_second))
        throw Error("capacity", "resource '" + name + "' capacity " + show(bytes_per_second) +
                                    " bytes/s: must be > 0 and finite");
    Resource r;
    r.capacity = bytes_per_second;
    r.name = std::move(name);
    resources_.push_back(std::move(r));
    return resources_.size() - 1;
}

FlowNetwork::Id FlowNetwork::start(double bytes, std::vector<std::size_t> resources,
                                   double latency_s) {
    if (!(bytes >= 0) || !std::isfinite(bytes))
        throw Error("bytes", "flow of " + show(bytes) + " bytes: must be >= 0 and finite");
    if (!(latency_s >= 0) || !std::isfinite(latency_s))
        throw Error("latency", "flow latency " + show(latency_s) + " s: must be >= 0 and finite");
    for (std::size_t r : resources)
        if (r >= resources_.size())
            throw Error("resources", "resource index " + std::to_string(r) + " out of range (" +
                                         std::to_string(resources_.size()) + " resources)");
    // A resource named twice is crossed once.
    std::sort(resources.begin(), resources.end());
    resources.erase(std::unique(resources.begin(), resources.end()), resources.end());

    Flow f;
    f.remaining = resources.empty() ? 0.0 : bytes;  // no resources: latency alone
    f.start_transfer = now_ + latency_s;
    f.resources = std::move(resources);
    const Id id = flows_.size();
    const bool transfers_now = f.remaining > 0 && f.start_transfer <= now_;
    flows_.push_back(std::move(f));
    active_.push_back(id);
    if (transfers_now) reshare();
    return id;
}

void FlowNetwork::reshare() {
    const std::size_t nres = resources_.size();
    // Per resource: unfrozen flows through it and the bandwidth the frozen
    // ones hold. With every unfrozen flow at the common level, resource r
    // fills when level = (capacity - frozen) / users: its fill level.
    std::vector<std::size_t> users(nres, 0);
    std::vector<double> frozen_bw(nres, 0.0);

    // The flows to share among: transferring, with bytes left.
    std::vector<Id> sharing;
    sharing.reserve(active_.size());
    for (Id id : active_) {
        Flow& f = flows_[id];
        f.rate = 0;
        if (f.remaining > 0 && f.start_transfer <= now_ && !f.resources.empty()) {
            f.rate = -1;  // unfrozen
            sharing.push_back(id);
            for (std::size_t r : f.resources) ++users[r];
        }
    }
    if (sharing.empty()) return;

    // Flows through each resource, compressed rows.
    std::vector<std::size_t> first(nres + 1, 0);
    for (std::size_t r = 0; r < nres; ++r) first[r + 1] = first[r] + users[r];
    std::vector<Id> through(first[nres]);
    {
        std::vector<std::size_t> fill(first.begin(), first.end() - 1);
        for (Id id : sharing)
            for (std::size_t r : flows_[id].resources) through[fill[r]++] = id;
    }

    // Fill levels in a min-heap; an entry is stale once its resource's
    // stamp has moved on (lazy deletion).
    auto fill_level = [&](std::size_t r) {
        return std::max(0.0, resources_[r].capacity - frozen_bw[r]) / static_cast<double>(users[r]);
    };
    struct Entry {
        double level;
        std::size_t resource;
        std::uint32_t stamp;
    };
    auto later = [](const Entry& a, const Entry& b) {
        return a.level > b.level || (a.level == b.level && a.resource > b.resource);
    };
    std::vector<std::uint32_t> stamp(nres, 0);
    std::vector<Entry> heap;
    heap.reserve(nres);
    for (std::size_t r = 0; r < nres; ++r)
        if (users[r] > 0) heap.push_back({fill_level(r), r, 0});
    std::make_heap(heap.begin(), heap.end(), later);

    std::size_t unfrozen = sharing.size();
    double reached = 0;  // the level filled so far
    std::vector<std::size_t> full, touched;
    std::vector<char> dirty(nres, 0);
    while (unfrozen > 0 && !heap.empty()) {
        // The next level at which a resource fills, and every resource
        // filling there (within rounding).
        std::pop_heap(heap.begin(), heap.end(), later);
        const Entry top = heap.back();
        heap.pop_back();
        if (top.stamp != stamp[top.resource] || users[top.resource] == 0) continue;
        const double level = std::max(top.level, reached);  // never below, even by rounding
        reached = level;
        const double limit = level * (1 + 1e-12);
        full.assign(1, top.resource);
        while (!heap.empty() && heap.front().level <= limit) {
            std::pop_heap(heap.begin(), heap.end(), later);
            const Entry e = heap.back();
            heap.pop_back();
            if (e.stamp == stamp[e.resource] && users[e.resource] > 0) full.push_back(e.resource);
        }
        // Freeze every unfrozen flow through them at this level.
        for (std::size_t r : full) {
            for (std::size_t k = first[r]; k < first[r + 1]; ++k) {
                Flow& f = flows_[through[k]];
                if (f.rate >= 0) continue;  // frozen already
                f.rate = level;
                --unfrozen;
                for (std::size_t q : f.resources) {
                    --users[q];
                    frozen_bw[q] += level;
                    if (!dirty[q]) {
                        dirty[q] = 1;
                        touched.push_back(q);
                    }
                }
            }
        }
        // New fill levels of the resources whose flows froze, once each.
        for (std::size_t q : touched) {
            dirty[q] = 0;
            ++stamp[q];
            if (users[q] > 0) {
                heap.push_back({fill_level(q), q, stamp[q]});
                std::push_heap(heap.begin(), heap.end(), later);
            }
        }
        touched.clear();
    }
    for (Id id : sharing)
        if (flows_[id].rate < 0) flows_[id].rate = 0;  // defensive: every flow crosses a resource
}

void FlowNetwork::move_to(double t) {
    const double dt = t - now_;
    if (dt > 0) {
        for (Id id : active_) {
            Flow& f = flows_[id];
            if (f.rate <= 0) continue;
            const double moved = std::min(f.remaining, f.rate * dt);
            f.remaining -= moved;
            for (std::size_t r : f.resources) resources_[r].carried += moved;
        }
    }
    now_ = t;
}

std::optional<FlowNetwork::Completion> FlowNetwork::next() {
    for (;;) {
        if (active_.empty()) return std::nullopt;
        double t_start = kInf;  // earliest end of a latency among flows with bytes left
        double t_end = kInf;    // earliest completion
        for (Id id : active_) {
            const Flow& f = flows_[id];
            if (f.remaining <= 0) {
                t_end = std::min(t_end, std::max(f.start_transfer, now_));
            } else if (f.start_transfer > now_) {
                t_start = std::min(t_start, f.start_transfer);
            } else if (f.rate > 0) {
                t_end = std::min(t_end, now_ + f.remaining / f.rate);
            }
        }
        if (t_start < t_end) {  // a flow starts transferring first: reshare and go on
            move_to(t_start);
            reshare();
            continue;
        }
        if (!std::isfinite(t_end)) return std::nullopt;  // defensive: nothing can end

        // Every flow ending at t_end (within rounding) ends now; the lowest id is returned.
        const double last = t_end + tolerance(t_end);
        move_to(t_end);
        Id winner = flows_.size();
        std::size_t winner_pos = 0;
        for (std::size_t i = 0; i < active_.size(); ++i) {
            const Id id = active_[i];
            Flow& f = flows_[id];
            double t_i = kInf;
            if (f.remaining <= 0)
                t_i = std::max(f.start_transfer, now_);
            else if (f.start_transfer <= now_ && f.rate > 0)
                t_i = now_ + f.remaining / f.rate;
            if (!(t_i <= last)) continue;
            if (f.remaining > 0) {  // rounding leftover: it was carried too
                for (std::size_t r : f.resources) resources_[r].carried += f.remaining;
                f.remaining = 0;
            }
            if (id < winner) {
                winner = id;
                winner_pos = i;
            }
        }
        if (winner == flows_.size()) continue;  // defensive: rounding left no one at t_end
        Flow& w = flows_[winner];
        w.done = true;
        w.rate = 0;
        active_[winner_pos] = active_.back();
        active_.pop_back();
        // The bandwidth of the ended and snapped flows is shared anew, and a
        // flow whose latency ended at this very time joins the sharing.
        if (!active_.empty()) reshare();
        return Completion{now_, winner};
    }
}

bool FlowNetwork::advance_to(double t) {
    if (!(t >= now_) || !std::isfinite(t))
        throw Error("t", "advance to " + show(t) + " s: must be finite and >= time() = " +
                             show(now_) + " s");
    // Saved state, taken before the first transfer start is processed.
    bool saved = false;
    double saved_now = 0;
    std::vector<double> saved_carried;
    std::vector<std::pair<double, double>> saved_flows;  // remaining, rate, per active_ entry

    auto restore = [&] {
        now_ = saved_now;
        for (std::size_t r = 0; r < resources_.size(); ++r) resources_[r].carried = saved_carried[r];
        for (std::size_t i = 0; i < active_.size(); ++i) {
            flows_[active_[i]].remaining = saved_flows[i].first;
            flows_[active_[i]].rate = saved_flows[i].second;
        }
    };

    for (;;) {
        double t_start = kInf;
        double t_end = kInf;
        for (Id id : active_) {
            const Flow& f = flows_[id];
            if (f.remaining <= 0)
                t_end = std::min(t_end, std::max(f.start_transfer, now_));
            else if (f.start_transfer > now_)
                t_start = std::min(t_start, f.start_transfer);
            else if (f.rate > 0)
                t_end = std::min(t_end, now_ + f.remaining / f.rate);
        }
        // A completion before t (beyond rounding) forbids the move.
        if (t_end < t && !(t - t_end <= tolerance(t))) {
            if (saved) restore();
            return false;
        }
        if (t_start <= t && t_start <= t_end) {  // a start at t itself is processed too
            if (!saved) {
                saved = true;
                saved_now = now_;
                saved_carried.reserve(resources_.size());
                for (const Resource& r : resources_) saved_carried.push_back(r.carried);
                saved_flows.reserve(active_.size());
                for (Id id : active_) saved_flows.emplace_back(flows_[id].remaining, flows_[id].rate);
            }
            move_to(t_start);
            reshare();
            continue;
        }
        move_to(t);
        return true;
    }
}

double FlowNetwork::time() const { return now_; }

std::size_t FlowNetwork::active() const { return active_.size(); }

double FlowNetwork::rate(Id flow) const {
    if (flow >= flows_.size())
        throw Error("flow", "flow id " + std::to_string(flow) + " out of range (" +
                                std::to_string(flows_.size()) + " flows started)");
    return flows_[flow].rate;
}

double FlowNetwork::carried(std::size_t resource) const {
    if (resource >= resources_.size())
        throw Error("resource", "resource index " + std::to_string(resource) + " out of range (" +
                                    std::to_string(resources_.size()) + " resources)");
    return resources_[resource].carried;
}

const std::string& FlowNetwork::resource_name(std::size_t resource) const {
    if (resource >= resources_.size())
        throw Error("resource", "resource index " + std::to_string(resource) + " out of range (" +
                                    std::to_string(resources_.size()) + " resources)");
    return resources_[resource].name;
}

std::size_t FlowNetwork::resources() const { return resources_.size(); }

}  // namespace numaware::sim
