// sim/worker_model.cpp — the simulated cores, their queues and searches.
#include "sim/worker_model.hpp"

#include <algorithm>
#include <bit>
#include <limits>

#include <fmt/format.h>

#include "numaware/error.hpp"

namespace numaware::sim {

void WorkerModel::build(const Machine& machine, const TeamLayout& layout) {
    const std::size_t n_nodes = machine.node_count();
    cores_.resize(layout.size());
    idle_.assign(layout.size(), Idle{});
    for (std::size_t w = 0; w < layout.size(); ++w) {
        cores_[w].node = layout.ranks[w].node;
        cores_[w].pos = machine.index_of(layout.ranks[w].node);
        worker_nodes_.push_back(layout.ranks[w].node);
    }
    std::sort(worker_nodes_.begin(), worker_nodes_.end());
    worker_nodes_.erase(std::unique(worker_nodes_.begin(), worker_nodes_.end()), worker_nodes_.end());
    node_slot_of_pos_.assign(n_nodes, worker_nodes_.size());
    for (std::size_t s = 0; s < worker_nodes_.size(); ++s) node_slot_of_pos_[machine.index_of(worker_nodes_[s])] = s;
    queues_.resize(cores_.size() + n_nodes);
    for (std::size_t pos = 0; pos < n_nodes; ++pos) {
        const unsigned os = machine.nodes[pos].os_index;
        if (os >= pos_of_os_.size()) pos_of_os_.resize(std::size_t{os} + 1, no_index);
        pos_of_os_[os] = static_cast<std::uint32_t>(pos);
    }
    workers_at_.assign(n_nodes, {});
    for (std::uint32_t w = 0; w < cores_.size(); ++w) workers_at_[cores_[w].pos].push_back(w);
    free_at_.assign(n_nodes, 0);
    for (std::size_t pos = 0; pos < n_nodes; ++pos) free_at_[pos] = workers_at_[pos].size();
    occupied_since_.assign(queues_.size(), std::numeric_limits<double>::infinity());
    takers_.resize(queues_.size());
}

std::vector<unsigned> WorkerModel::node_of_each() const {
    std::vector<unsigned> out;
    out.reserve(cores_.size());
    for (const Core& c : cores_) out.push_back(c.node);
    return out;
}

void WorkerModel::bad_queue(const tasks::QueueRef& q, std::string_view policy_name) const {
    if (q.kind == tasks::QueueRef::Kind::worker)
        throw Error("policy", fmt::format("{} listed worker queue {} of {}", policy_name, q.index, cores_.size()));
    throw Error("policy", fmt::format("{} listed the queue of node {}, not a node of the machine", policy_name, q.index));
}

// Each worker's search order: steal_order(w, 0), then queues that a later
// round adds, each with the first round that lists it (tasks::queue_listings).
void WorkerModel::build_search_orders(tasks::Policy& policy, double round_s) {
    rank_.assign(cores_.size() * queues_.size(), Rank{});
    position_.assign(cores_.size() * queues_.size(), no_index);
    idle_index_.assign(cores_.size(), no_index);
    nonempty_bits_.assign((queues_.size() + 63) / 64, 0);
    nonempty_count_ = 0;
    for (std::uint32_t w = 0; w < cores_.size(); ++w) {
        Core& ws = cores_[w];
        for (const tasks::QueueListing& l : tasks::queue_listings(policy, w)) {   // each queue once
            const std::uint32_t id = queue_id(l.queue, policy);
            // Backlog rule (tasks::queue_listings): a later ring's queue
            // holding more than its workers start in first_round rounds.
            const std::size_t backlog = l.first_round == 0 || l.queue.kind != tasks::QueueRef::Kind::node
                                            ? std::numeric_limits<std::size_t>::max()
                                            : tasks::backlog_limit(workers_at_[id - size()].size(), l.first_round);
            ws.search.push_back(Listed{id, static_cast<std::uint32_t>(std::min<std::size_t>(backlog, no_index)),
                                       static_cast<double>(l.first_round) * round_s});
        }
        for (const Listed& l : ws.search)
            if (l.delay > 0) ws.wake_delays.push_back(l.delay);
        std::sort(ws.wake_delays.begin(), ws.wake_delays.end());
        ws.wake_delays.erase(std::unique(ws.wake_delays.begin(), ws.wake_delays.end()), ws.wake_delays.end());
        if (!ws.wake_delays.empty()) {
            const double d0 = ws.wake_delays.front();
            std::uint32_t lane = 0;
            while (lane < first_wakes_.size() && first_wakes_[lane].delay != d0) ++lane;
            if (lane == first_wakes_.size()) first_wakes_.push_back(WakeLane{d0, {}});
            ws.first_lane = lane;
        }
        for (std::uint32_t k = 0; k < ws.search.size(); ++k) {
            const Listed& l = ws.search[k];
            takers_[l.queue].push_back(Taker{w, k, l.delay});
            rank_[std::size_t{l.queue} * cores_.size() + w] = Rank{k, l.backlog, l.delay};
            position_[std::size_t{w} * queues_.size() + l.queue] = k;
        }
    }
    first_delay_.assign(queues_.size(), std::numeric_limits<double>::infinity());
    least_backlog_.assign(queues_.size(), no_index);
    for (std::uint32_t q = 0; q < queues_.size(); ++q)
        for (const Taker& tk : takers_[q]) {
            if (tk.delay <= 0) continue;
            first_delay_[q] = std::min(first_delay_[q], tk.delay);
            least_backlog_[q] = std::min(least_backlog_[q], rank_[std::size_t{q} * cores_.size() + tk.worker].backlog);
        }
    for (auto& list : takers_)
        std::sort(list.begin(), list.end(), [](const Taker& a, const Taker& b) {
            if (a.delay != b.delay) return a.delay < b.delay;
            if (a.position != b.position) return a.position < b.position;
            return a.worker < b.worker;
        });
    // Each queue's takers without delay lead its list: one bit each.
    idle_at_once_first_.assign(queues_.size() + 1, 0);
    for (std::uint32_t q = 0; q < queues_.size(); ++q) {
        std::uint32_t n = 0;
        while (n < takers_[q].size() && takers_[q][n].delay <= 0) ++n;
        const std::uint32_t first = idle_at_once_first_[q];
        idle_at_once_first_[q + 1] = first + (n + 63) / 64;
        for (std::uint32_t j = 0; j < n; ++j) cores_[takers_[q][j].worker].at_once_bits.push_back(first * 64 + j);
    }
    idle_at_once_.assign(idle_at_once_first_.back(), 0);
}

// Worker w takes a task from queue q: the owner of a worker queue takes
// the newest, everyone else the oldest.
Take WorkerModel::take(std::uint32_t w, std::uint32_t q) {
    Ring<std::uint32_t>& dq = queues_[q];
    // Only a take across nodes asks why (the report counts those): the
    // common take reads no search order.
    const tasks::TakeRule rule = across(w, q) ? rule_of(w, q, dq.size()) : tasks::TakeRule::in_order;
    const std::uint32_t i = q == w ? dq.pop_back() : dq.pop_front();
    if (dq.empty()) {
        nonempty_bits_[q >> 6] &= ~(std::uint64_t{1} << (q & 63));
        --nonempty_count_;
    }
    return Take{w, i, q, rule};
}

tasks::TakeRule WorkerModel::rule_of(std::uint32_t w, std::uint32_t q, std::size_t queued) {
    const std::uint32_t k = position_[std::size_t{w} * queues_.size() + q];
    if (k == no_index) return tasks::TakeRule::in_order;   // not in its order: a policy's own placement
    const Listed& l = cores_[w].search[k];
    const double idle_for = idle_[w].idle ? engine_.now() - idle_[w].since : 0;
    if (l.delay <= idle_for) return tasks::TakeRule::in_order;
    return queued > l.backlog ? tasks::TakeRule::backlog : tasks::TakeRule::occupied;
}

Take WorkerModel::enqueue(std::uint32_t q, std::uint32_t i) {
    if (queues_[q].empty()) {
        nonempty_bits_[q >> 6] |= std::uint64_t{1} << (q & 63);
        ++nonempty_count_;
    }
    queues_[q].push_back(i);
    if (idle_list_.empty()) return {};
    const double now = engine_.now();
    // The takers without delay come first in the queue's order: the first
    // idle one of them wins outright.
    for (std::uint32_t word = idle_at_once_first_[q]; word < idle_at_once_first_[q + 1]; ++word)
        if (const std::uint64_t bits = idle_at_once_[word]; bits != 0) {
            const std::size_t j = (word - idle_at_once_first_[q]) * 64 + static_cast<unsigned>(std::countr_zero(bits));
            return take(takers_[q][j].worker, q);
        }
    const double occupied_for = now - occupied_since_[q];   // -inf unless every worker of q's node runs a task
    // No idle worker may take it when none has been idle for the queue's
    // first delay and neither the backlog nor the occupied rule applies:
    // each taker's delay and backlog are at least these, and rounding is
    // monotonic, so this is the same test as the loops below make.
    if (queues_[q].size() <= least_backlog_[q] && occupied_for < first_delay_[q] &&
        oldest_idle_since() + first_delay_[q] > now)
        return {};
    if (idle_list_.size() * 4 < takers_[q].size()) {
        // Few idle workers: rank them, rather than walking every taker.
        std::uint32_t best = no_index, best_k = no_index;
        double best_delay = 0;
        const Rank* row = &rank_[std::size_t{q} * cores_.size()];
        for (std::uint32_t w : idle_list_) {
            const Rank& r = row[w];
            const std::uint32_t k = r.k;
            if (k == no_index) continue;
            const double d = r.delay;
            if (idle_[w].since + d > now && queues_[q].size() <= r.backlog && occupied_for < d) continue;
            if (best == no_index || d < best_delay ||
                (d == best_delay && (k < best_k || (k == best_k && w < best)))) {
                best = w;
                best_k = k;
                best_delay = d;
            }
        }
        if (best != no_index) return take(best, q);
        return {};
    }
    for (const Taker& tk : takers_[q]) {
        const Idle& is = idle_[tk.worker];
        if (!is.idle || (is.since + tk.delay > now && queues_[q].size() <= cores_[tk.worker].search[tk.position].backlog &&
                         occupied_for < tk.delay))
            continue;
        return take(tk.worker, q);
    }
    return {};
}

Take WorkerModel::next_task(std::uint32_t w) {
    Core& ws = cores_[w];
    if (!ws.pinned.empty()) return Take{w, ws.pinned.pop_front(), no_index};
    // The first queue of its order holding work, without delay: nothing
    // can come before it (usually the worker's own queue).
    if (!ws.search.empty() && ws.search[0].delay == 0 && !queues_[ws.search[0].queue].empty())
        return take(w, ws.search[0].queue);
    const double idle_for = idle_[w].idle ? engine_.now() - idle_[w].since : 0;
    // Two ways to the first queue in this worker's order that holds work
    // and that it may search: through the n queues holding work (their
    // bits, n steps),
    // or along the order, one bit per queue, to the first such queue
    // (about |order| / (n + 1) steps when they are spread over it).
    const std::size_t n = nonempty_count_;
    if (n * (n + 1) < ws.search.size()) {
        const std::uint32_t* row = &position_[std::size_t{w} * queues_.size()];
        std::uint32_t best_k = no_index;
        for (std::size_t word = 0; word < nonempty_bits_.size(); ++word)
            for (std::uint64_t bits = nonempty_bits_[word]; bits != 0; bits &= bits - 1) {
                const auto q = static_cast<std::uint32_t>(word * 64 + static_cast<unsigned>(std::countr_zero(bits)));
                const std::uint32_t k = row[q];
                if (k != no_index && k < best_k && searchable(ws, k, idle_for)) best_k = k;
            }
        if (best_k == no_index) return {};
        return take(w, ws.search[best_k].queue);
    }
    for (std::size_t k = 0; k < ws.search.size(); ++k) {
        const std::uint32_t q = ws.search[k].queue;
        if ((nonempty_bits_[q >> 6] >> (q & 63) & 1u) == 0 || !searchable(ws, k, idle_for)) continue;
        return take(w, q);
    }
    return {};
}

// When the longest-idle worker went idle (idle_list_ is not empty).
double WorkerModel::oldest_idle_since() {
    if (idle_fifo_.size() > 4 * idle_list_.size() + 64) {
        std::erase_if(idle_fifo_, [&](const auto& e) {
            return !idle_[e.first].idle || cores_[e.first].idle_epoch != e.second;
        });
    }
    for (;;) {
        const auto [w, epoch] = idle_fifo_.front();
        if (idle_[w].idle && cores_[w].idle_epoch == epoch) return idle_[w].since;
        idle_fifo_.pop_front();
    }
}

void WorkerModel::begin(std::uint32_t w, std::uint32_t i) {
    Core& ws = cores_[w];
    if (idle_[w].idle) {
        idle_[w].idle = false;
        for (std::uint32_t b : ws.at_once_bits) idle_at_once_[b >> 6] &= ~(std::uint64_t{1} << (b & 63));
        const std::uint32_t at = idle_index_[w];
        idle_index_[idle_list_.back()] = at;
        idle_list_[at] = idle_list_.back();
        idle_list_.pop_back();
    }
    // Its idle period is over: a pending wake would do nothing.
    engine_.cancel_wake(w);
    if (published_lane_ != no_index && first_wakes_[published_lane_].ring.front().worker == w) publish_first_wake();
    ws.task = i;
    ws.started = engine_.now();
    // The last of a node's workers to start a task: its queue is occupied
    // from now (starts only move forward in time, so this task is the
    // youngest running there until one of them ends).
    if (--free_at_[ws.pos] == 0) occupied_since_[node_queue(ws.pos)] = ws.started;
}

void WorkerModel::end(std::uint32_t w) {
    Core& ws = cores_[w];
    ws.busy += engine_.now() - ws.started;
    ws.task = no_index;
    if (free_at_[ws.pos]++ == 0) occupied_since_[node_queue(ws.pos)] = std::numeric_limits<double>::infinity();
}

void WorkerModel::go_idle(std::uint32_t w) {
    Core& ws = cores_[w];
    idle_[w] = Idle{engine_.now(), true};
    for (std::uint32_t b : ws.at_once_bits) idle_at_once_[b >> 6] |= std::uint64_t{1} << (b & 63);
    idle_fifo_.emplace_back(w, ws.idle_epoch + 1);
    ++ws.idle_epoch;
    idle_index_[w] = static_cast<std::uint32_t>(idle_list_.size());
    idle_list_.push_back(w);
    ws.wakes = 0;
    next_wake(w);
}

void WorkerModel::next_wake(std::uint32_t w) {
    Core& ws = cores_[w];
    if (ws.wakes >= ws.wake_delays.size()) return;
    const double t = idle_[w].since + ws.wake_delays[ws.wakes++];
    if (ws.wakes > 1) {
        engine_.push(t, EventKind::wake, w, ws.idle_epoch);
        return;
    }
    Ring<FirstWake>& ring = first_wakes_[ws.first_lane].ring;
    const FirstWake f{t, engine_.take_seq(), w, ws.idle_epoch};
    ring.push_back(f);
    // Behind others in its lane it is not the earliest; alone, it is when
    // it comes before the published one (ties: the earlier sequence number).
    if (ring.size() > 1) return;
    if (published_lane_ == no_index) {
        publish_first_wake();
        return;
    }
    const FirstWake& p = first_wakes_[published_lane_].ring.front();
    if (f.t < p.t) publish_first_wake();
}

// Drops the dead fronts (their idle period has ended) and hands the
// earliest live front to the engine.
void WorkerModel::publish_first_wake() {
    published_lane_ = no_index;
    const FirstWake* best = nullptr;
    for (std::uint32_t l = 0; l < first_wakes_.size(); ++l) {
        Ring<FirstWake>& ring = first_wakes_[l].ring;
        while (!ring.empty() && !(idle_[ring.front().worker].idle && cores_[ring.front().worker].idle_epoch == ring.front().epoch))
            ring.pop_front();
        if (ring.empty()) continue;
        const FirstWake& f = ring.front();
        if (best == nullptr || f.t < best->t || (f.t == best->t && f.seq < best->seq)) {
            best = &f;
            published_lane_ = l;
        }
    }
    if (best == nullptr) {
        engine_.clear_first_wake();
        return;
    }
    published_seq_ = best->seq;
    engine_.set_first_wake(Event{best->t, best->seq, EventKind::wake, best->worker, best->epoch});
}

Take WorkerModel::wake(const Event& e) {
    // The published first wake-up came: it leaves its lane.
    if (published_lane_ != no_index && e.seq == published_seq_) {
        first_wakes_[published_lane_].ring.pop_front();
        publish_first_wake();
    }
    if (!idle_[e.a].idle || cores_[e.a].idle_epoch != e.b) return {};
    if (const Take t = next_task(e.a)) return t;
    next_wake(e.a);
    return {};
}

std::vector<double> WorkerModel::busy() const {
    std::vector<double> out;
    out.reserve(cores_.size());
    for (const Core& c : cores_) out.push_back(c.busy);
    return out;
}

}  // namespace numaware::sim
