// sim/event_engine.hpp — the task simulator's clock and its queue of
// future events.
//
// Events at the same time run in the order they were scheduled (a sequence
// number breaks ties), so a simulation is deterministic. Everything is
// inline: the simulator's event loop pushes and pops a few events per task,
// and a call across files would cost more than the heap operation.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

namespace numaware::sim {

enum class EventKind : std::uint8_t {
    finish,     // a = worker: its running task ends
    job_done,   // the partition job running on the background thread ends
    submit,     // the spawning thread submits its next task
    wake,       // a = worker, b = its idle epoch: a new round of its search starts
    scan,       // the balancing model's periodic scan
};

struct Event {
    double t;
    std::uint64_t seq;
    EventKind kind;
    std::uint32_t a;
    std::uint64_t b;
};

// The spawning thread has at most one submit event pending at a time (one
// per task of the graph): it waits beside the heap instead of in it, which
// takes a push and a pop per task off the heap and changes no order.
//
// Finish events (kind finish, a = worker) wait in a winner tree over the
// workers, one leaf each: a worker runs one task at a time, so it has at
// most one finish pending. Popping the earliest is a fixed walk from its
// leaf to the root whose loads do not wait on each other's comparisons
// (a binary heap's pop waits on one comparison per level before it can
// load the next). A new finish walks up only while it wins: about two
// levels, where the full walk (9 levels for 288 workers) cost about 140
// host instructions a task. A second finish for a worker whose leaf is
// taken goes to the main heap with the other kinds, so no order depends
// on this.
//
// Wake events (kind wake, a = worker) wait in a heap of their own, indexed
// by worker, with at most one per worker: a new one replaces the worker's
// pending one, and cancel_wake() removes it when the worker starts a task.
// A wake whose idle period has ended does nothing when it comes, so
// removing it early changes no result; left in one heap with the rest,
// such stale wakes were four in ten of the events popped on a busy
// 288-worker machine, each a full sift of a heap they had made deep.
class EventEngine {
public:
    void push(double t, EventKind kind, std::uint32_t a = 0, std::uint64_t b = 0) {
        if (kind == EventKind::submit && !has_submit_) {
            submit_ = Event{t, seq_++, kind, a, b};
            has_submit_ = true;
            return;
        }
        if (kind == EventKind::wake) {
            set_wake(Event{t, seq_++, kind, a, b});
            return;
        }
        if (kind == EventKind::finish && fits_tree(t, a)) {
            if (a >= leaves_) grow_finishes(a);
            if (tree_[std::size_t{leaves_} + a] == free_key) {
                finishes_[a] = Event{t, seq_, kind, a, b};
                finish_insert(a, key_of(t, seq_++, a));
                return;
            }
        }
        events_.push(Event{t, seq_++, kind, a, b});
    }
    // The next sequence number, for an event that waits outside the engine
    // and is published with set_first_wake() when it comes first of its kind.
    std::uint64_t take_seq() { return seq_++; }
    // The worker model's earliest first wake-up of an idle period (at most
    // one published at a time; WorkerModel keeps the others in time order,
    // so that the many idle periods that end before their first wake-up
    // cost neither a push nor a removal here).
    void set_first_wake(const Event& e) {
        first_wake_ = e;
        has_first_wake_ = true;
    }
    void clear_first_wake() { has_first_wake_ = false; }
    // Drops worker w's pending wake event, if any.
    void cancel_wake(std::uint32_t w) {
        if (w < wake_at_.size() && wake_at_[w] != npos) wake_remove(wake_at_[w]);
    }
    bool empty() const {
        return events_.empty() && wakes_.empty() && !has_submit_ && !has_first_wake_ &&
               (leaves_ == 0 || tree_[1] == free_key);
    }
    // The time of the next event; infinity when there is none.
    double next_time() const {
        const Event* e = next();
        return e == nullptr ? std::numeric_limits<double>::infinity() : e->t;
    }
    // Removes the next event. The caller moves the clock (set_now) only if
    // it acts on the event: a scan that finds the work done is dropped
    // without making the run any longer.
    Event pop() {
        const Event* next_event = next();
        const Event e = *next_event;
        if (next_event == &submit_)
            has_submit_ = false;
        else if (next_event == &first_wake_)
            has_first_wake_ = false;
        else if (is_finish(next_event)) {
            finish_update(static_cast<std::uint32_t>(next_event - finishes_.data()), free_key);
        } else if (next_event == &events_.top())
            events_.pop();
        else
            wake_remove(0);
        return e;
    }

    double now() const { return now_; }
    // Also for a model with events of its own (the exact memory model's
    // flow completions), when one of them comes first.
    void set_now(double t) { now_ = t; }

private:
    static constexpr std::uint32_t npos = 0xffffffffu;
    struct Later {
        bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
    };
    // The earliest of the submit event, the published first wake-up, the
    // main heap's top and the wake heap's top; null when there is none.
    const Event* next() const {
        const Event* best = has_submit_ ? &submit_ : nullptr;
        if (has_first_wake_ && (best == nullptr || Later{}(*best, first_wake_))) best = &first_wake_;
        if (!events_.empty() && (best == nullptr || Later{}(*best, events_.top()))) best = &events_.top();
        if (!wakes_.empty() && (best == nullptr || Later{}(*best, wakes_.front()))) best = &wakes_.front();
        if (leaves_ != 0 && tree_[1] != free_key) {
            const Event* f = &finishes_[leaf_of(tree_[1])];
            if (best == nullptr || Later{}(*best, *f)) best = f;
        }
        return best;
    }

    // ---- the finish tree
    // Each node holds its subtree's earliest finish as one 128-bit key that
    // orders as (time, sequence number): the time's bits above (a double
    // >= 0 orders as its bit pattern does), then the sequence number and
    // the leaf below (seq << leaf_bits | leaf; sequence numbers are unique,
    // so the leaf never decides). One unsigned comparison per level, which
    // the compiler turns into a conditional move: a branch there would be
    // mispredicted half the time. A free leaf holds the largest key.
    __extension__ using Key = unsigned __int128;
    static constexpr unsigned leaf_bits = 20;
    static constexpr std::uint32_t max_finish_leaves = std::uint32_t{1} << leaf_bits;
    static constexpr std::uint64_t max_finish_seq = (std::uint64_t{1} << (64 - leaf_bits)) - 1;
    static constexpr Key free_key = ~Key{0};
    // Whether a finish of worker `a` at time t with the next sequence
    // number fits the tree's key (always, in practice: workers below 2^20,
    // fewer than 2^44 events, t >= 0).
    bool fits_tree(double t, std::uint32_t a) const { return a < max_finish_leaves && seq_ <= max_finish_seq && t >= 0; }
    static Key key_of(double t, std::uint64_t seq, std::uint32_t leaf) {
        return Key{std::bit_cast<std::uint64_t>(t + 0.0)} << 64 | Key{seq << leaf_bits | leaf};   // + 0.0: -0 is 0
    }
    static std::uint32_t leaf_of(Key k) { return static_cast<std::uint32_t>(k) & (max_finish_leaves - 1); }
    // Whether e is one of finishes_ (std::less: pointers into different
    // arrays have no order of their own).
    bool is_finish(const Event* e) const {
        return leaves_ != 0 && !std::less<const Event*>{}(e, finishes_.data()) &&
               std::less<const Event*>{}(e, finishes_.data() + leaves_);
    }
    // Leaf `leaf`'s key is now k: the winners on its path to the root again.
    void finish_update(std::uint32_t leaf, Key k) {
        std::size_t p = std::size_t{leaves_} + leaf;
        tree_[p] = k;
        for (; p > 1; p >>= 1) {
            const Key s = tree_[p ^ 1];
            k = s < k ? s : k;
            tree_[p >> 1] = k;
        }
    }
    // Free leaf `leaf` now holds k. Its subtree winners change only up to
    // the first level where k loses (about two levels for a finish among
    // the others, rather than the whole path): there the parent keeps the
    // winner it had, and so do the nodes above it.
    void finish_insert(std::uint32_t leaf, Key k) {
        std::size_t p = std::size_t{leaves_} + leaf;
        tree_[p] = k;
        for (; p > 1; p >>= 1) {
            if (tree_[p ^ 1] < k) return;
            tree_[p >> 1] = k;
        }
    }
    // Room for leaf `leaf`: the next power of two of leaves, the pending
    // finishes kept, every winner found again.
    void grow_finishes(std::uint32_t leaf) {
        std::uint32_t n = leaves_ == 0 ? 64 : leaves_;
        while (n <= leaf) n *= 2;
        std::vector<Key> grown(std::size_t{2} * n, free_key);
        for (std::uint32_t l = 0; l < leaves_; ++l) grown[std::size_t{n} + l] = tree_[std::size_t{leaves_} + l];
        for (std::size_t p = n - 1; p >= 1; --p) grown[p] = std::min(grown[2 * p], grown[2 * p + 1]);
        tree_ = std::move(grown);
        finishes_.resize(n);
        leaves_ = n;
    }

    // ---- the wake heap: a binary min-heap with each worker's position
    void set_wake(const Event& e) {
        if (e.a >= wake_at_.size()) wake_at_.resize(std::size_t{e.a} + 1, npos);
        std::uint32_t i = wake_at_[e.a];
        if (i == npos) {
            i = static_cast<std::uint32_t>(wakes_.size());
            wakes_.push_back(e);
        }
        wake_place(i, e);
    }
    void wake_remove(std::uint32_t i) {
        wake_at_[wakes_[i].a] = npos;
        const Event last = wakes_.back();
        wakes_.pop_back();
        if (i < wakes_.size()) wake_place(i, last);
    }
    // Puts e at position i, then restores the heap order around it.
    void wake_place(std::uint32_t i, const Event& e) {
        while (i > 0) {
            const std::uint32_t parent = (i - 1) / 2;
            if (!Later{}(wakes_[parent], e)) break;
            wake_move(i, parent);
            i = parent;
        }
        for (;;) {
            const std::size_t left = std::size_t{i} * 2 + 1;
            if (left >= wakes_.size()) break;
            std::size_t child = left;
            if (left + 1 < wakes_.size() && Later{}(wakes_[left], wakes_[left + 1])) child = left + 1;
            if (!Later{}(e, wakes_[child])) break;
            wake_move(i, static_cast<std::uint32_t>(child));
            i = static_cast<std::uint32_t>(child);
        }
        wakes_[i] = e;
        wake_at_[e.a] = i;
    }
    void wake_move(std::uint32_t to, std::uint32_t from) {
        wakes_[to] = wakes_[from];
        wake_at_[wakes_[to].a] = to;
    }

    std::priority_queue<Event, std::vector<Event>, Later> events_;
    std::vector<Event> finishes_;         // per worker: its pending finish (when its leaf's key is not free_key)
    std::vector<Key> tree_;               // [1, 2 * leaves_): the winner tree; leaves at [leaves_, 2 * leaves_)
    std::uint32_t leaves_ = 0;
    std::vector<Event> wakes_;            // the wake heap
    std::vector<std::uint32_t> wake_at_;  // per worker: its wake's position in wakes_, or npos
    Event submit_{};
    bool has_submit_ = false;
    Event first_wake_{};
    bool has_first_wake_ = false;
    std::uint64_t seq_ = 0;
    double now_ = 0;
};

}  // namespace numaware::sim
