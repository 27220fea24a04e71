// sim/event_engine.hpp — the task simulator's clock and its queue of
// future events.
//
// Events at the same time run in the order they were scheduled (a sequence
// number breaks ties), so a simulation is deterministic. Everything is
// inline: the simulator's event loop pushes and pops a few events per task,
// and a call across files would cost more than the heap operation.
#pragma once

#include <cstdint>
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
class EventEngine {
public:
    void push(double t, EventKind kind, std::uint32_t a = 0, std::uint64_t b = 0) {
        if (kind == EventKind::submit && !has_submit_) {
            submit_ = Event{t, seq_++, kind, a, b};
            has_submit_ = true;
            return;
        }
        events_.push(Event{t, seq_++, kind, a, b});
    }
    bool empty() const { return events_.empty() && !has_submit_; }
    // The time of the next event; infinity when there is none.
    double next_time() const {
        if (submit_first()) return submit_.t;
        return events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().t;
    }
    // Removes the next event. The caller moves the clock (set_now) only if
    // it acts on the event: a scan that finds the work done is dropped
    // without making the run any longer.
    Event pop() {
        if (submit_first()) {
            has_submit_ = false;
            return submit_;
        }
        const Event e = events_.top();
        events_.pop();
        return e;
    }

    double now() const { return now_; }
    // Also for a model with events of its own (the exact memory model's
    // flow completions), when one of them comes first.
    void set_now(double t) { now_ = t; }

private:
    struct Later {
        bool operator()(const Event& x, const Event& y) const { return x.t != y.t ? x.t > y.t : x.seq > y.seq; }
    };
    bool submit_first() const { return has_submit_ && (events_.empty() || !Later{}(submit_, events_.top())); }
    std::priority_queue<Event, std::vector<Event>, Later> events_;
    Event submit_{};
    bool has_submit_ = false;
    std::uint64_t seq_ = 0;
    double now_ = 0;
};

}  // namespace numaware::sim
