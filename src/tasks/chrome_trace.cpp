// tasks/chrome_trace.cpp — ChromeTrace: an Observer writing trace-event JSON.
//
// Workers append their own B/E events to their own buffer without a lock
// (the observer contract gives worker w's start and finish to worker w's
// thread alone), so tracing costs a worker one vector push per event; the
// rarer events from any thread share one mutex.
#include <algorithm>
#include <fstream>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/observer.hpp"

namespace numaware::tasks {

namespace {

enum class Phase : char { begin = 'B', end = 'E', instant = 'i' };

struct Event {
    double t = 0;
    TaskId task = 0;
    unsigned pid = 0;   // node
    unsigned tid = 0;   // worker; partitioner = workers
    Phase ph = Phase::instant;
    const char* what = "";   // instant events: "created", "ready", "stolen"; partition: "partition"
    std::size_t count = 0;   // partition: tasks in the window
};

}  // namespace

struct ChromeTrace::State {
    std::vector<unsigned> worker_nodes;
    std::string label;
    std::vector<std::vector<Event>> per_worker;   // B/E of worker w, written by worker w only
    std::mutex shared_mutex;
    std::vector<Event> shared;                    // everything else
};

ChromeTrace::ChromeTrace() : state_(std::make_unique<State>()) {}
ChromeTrace::~ChromeTrace() = default;

void ChromeTrace::on_setup(const std::vector<unsigned>& worker_nodes, std::string_view label) {
    state_->worker_nodes = worker_nodes;
    state_->label = std::string(label);
    state_->per_worker.assign(worker_nodes.size(), {});
}

void ChromeTrace::on_task_created(TaskId task, double t) {
    std::lock_guard lock(state_->shared_mutex);
    state_->shared.push_back({t, task, 0, 0, Phase::instant, "created", 0});
}

void ChromeTrace::on_task_ready(TaskId task, double t) {
    std::lock_guard lock(state_->shared_mutex);
    state_->shared.push_back({t, task, 0, 0, Phase::instant, "ready", 0});
}

void ChromeTrace::on_task_started(TaskId task, unsigned worker, unsigned node, double t) {
    if (worker < state_->per_worker.size())
        state_->per_worker[worker].push_back({t, task, node, worker, Phase::begin, "", 0});
}

void ChromeTrace::on_task_finished(TaskId task, unsigned worker, unsigned node, double t) {
    if (worker < state_->per_worker.size())
        state_->per_worker[worker].push_back({t, task, node, worker, Phase::end, "", 0});
}

void ChromeTrace::on_task_stolen(TaskId task, unsigned thief, double t) {
    const unsigned node = thief < state_->worker_nodes.size() ? state_->worker_nodes[thief] : 0;
    std::lock_guard lock(state_->shared_mutex);
    state_->shared.push_back({t, task, node, thief, Phase::instant, "stolen", 0});
}

void ChromeTrace::on_partition_done(std::size_t tasks, double start, double end) {
    const auto tid = static_cast<unsigned>(state_->worker_nodes.size());
    std::lock_guard lock(state_->shared_mutex);
    state_->shared.push_back({start, 0, 0, tid, Phase::begin, "partition", tasks});
    state_->shared.push_back({end, 0, 0, tid, Phase::end, "partition", tasks});
}

// The document is written event by event, each one a small nlohmann
// object dumped on its own: a whole-trace DOM took about 1 KB an event
// (5.7 KB a task: 349 MB for 60,000 tasks under libnumaware_omp.so's
// NUMAWARE_REPORT), the events themselves 48 bytes. The output is the
// DOM's: keys in order, no spaces.
void ChromeTrace::write_json(std::ostream& out) const {
    using nlohmann::json;
    const State& s = *state_;
    std::vector<Event> all;
    {
        std::lock_guard lock(state_->shared_mutex);
        all = s.shared;
    }
    for (const auto& w : s.per_worker) all.insert(all.end(), w.begin(), w.end());
    // Sorted by time, stably: each worker's buffer is already in its own
    // time order, so at equal times a worker's events keep the order they
    // happened in (the end of one task before the start of the next, and
    // the start of a zero-length task before its end).
    std::stable_sort(all.begin(), all.end(), [](const Event& a, const Event& b) { return a.t < b.t; });

    const json other{{"label", s.label}, {"clock", "seconds since the run's clock zero, as microseconds"}};
    out << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << other.dump() << ",\"traceEvents\":[";
    bool first = true;
    const auto emit = [&out, &first](const json& j) {
        if (!first) out << ',';
        first = false;
        out << j.dump();
    };
    // Metadata: one process per node, one thread per worker (ts 0 so every
    // event carries ph/ts/pid/tid).
    std::vector<unsigned> seen;
    for (std::size_t w = 0; w < s.worker_nodes.size(); ++w) {
        const unsigned node = s.worker_nodes[w];
        if (std::find(seen.begin(), seen.end(), node) == seen.end()) {
            seen.push_back(node);
            emit({{"name", "process_name"}, {"ph", "M"}, {"ts", 0}, {"pid", node}, {"tid", 0},
                  {"args", {{"name", "node " + std::to_string(node)}}}});
        }
        emit({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", node}, {"tid", w},
              {"args", {{"name", "worker " + std::to_string(w)}}}});
    }
    // Two tracks of their own: the partitioner, and task creation and
    // readiness (which happen on no particular worker).
    const std::size_t partitioner_tid = s.worker_nodes.size(), scheduler_tid = partitioner_tid + 1;
    emit({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", 0}, {"tid", partitioner_tid},
          {"args", {{"name", "partitioner"}}}});
    emit({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", 0}, {"tid", scheduler_tid},
          {"args", {{"name", "tasks created and ready"}}}});

    for (const Event& e : all) {
        const double us = e.t * 1e6;
        const bool scheduling = e.ph == Phase::instant && std::string_view(e.what) != "stolen";
        json j{{"ph", std::string(1, static_cast<char>(e.ph))},
               {"ts", us},
               {"pid", e.pid},
               {"tid", scheduling ? scheduler_tid : static_cast<std::size_t>(e.tid)}};
        if (std::string_view(e.what) == "partition") {
            j["name"] = "partition";
            j["cat"] = "partition";
            if (e.ph == Phase::begin) j["args"] = {{"tasks", e.count}};
        } else if (e.ph == Phase::instant) {
            j["name"] = std::string(e.what) + " " + std::to_string(e.task);
            j["cat"] = e.what;
            j["s"] = "t";
            j["args"] = {{"task", e.task}};
        } else {
            j["name"] = "task " + std::to_string(e.task);
            j["cat"] = "task";
            if (e.ph == Phase::begin) j["args"] = {{"task", e.task}, {"node", e.pid}};
        }
        emit(j);
    }
    out << "]}";
}

std::string ChromeTrace::to_json() const {
    std::ostringstream out;
    write_json(out);
    return std::move(out).str();
}

void ChromeTrace::write(const std::string& path) const {
    std::ofstream f(path);
    if (!f) throw Error("path", "cannot open \"" + path + "\" for writing", errno ? errno : EIO);
    write_json(f);
    f << '\n';
    if (!f.flush()) throw Error("path", "cannot write \"" + path + "\"", errno ? errno : EIO);
}

}  // namespace numaware::tasks
