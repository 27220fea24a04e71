// The real runtime's observer hooks (RuntimeOptions::observer): a small
// Jacobi run on a 2-node team traced as Chrome trace-event JSON, checked
// for structure (trace_check.hpp) and for what each hook means.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "numaware/machine.hpp"
#include "numaware/observer.hpp"
#include "numaware/task_policy.hpp"
#include "numaware/tasks.hpp"
#include "numaware/team.hpp"
#include "trace_check.hpp"

namespace numaware::tasks {
namespace {

Machine two_nodes() { return Machine::from_spec("nodes=2 cpus-per-node=1 mem-per-node=512M distances=10,21/21,10"); }

constexpr int blocks = 2;
constexpr int sweeps = 10;
constexpr int rows = 64;   // per block

// Double-buffered 1-D Jacobi: sweep s writes block b of one buffer from
// blocks b-1, b, b+1 of the other. blocks * sweeps tasks.
void jacobi(Runtime& rt, std::vector<double>& a, std::vector<double>& b) {
    for (int s = 0; s < sweeps; ++s) {
        std::vector<double>& src = s % 2 == 0 ? a : b;
        std::vector<double>& dst = s % 2 == 0 ? b : a;
        for (int k = 0; k < blocks; ++k) {
            const std::size_t lo = static_cast<std::size_t>(k * rows);
            const std::size_t bytes = rows * sizeof(double);
            std::vector<Dep> deps;
            for (int j = std::max(k - 1, 0); j <= std::min(k + 1, blocks - 1); ++j)
                deps.push_back(in(&src[static_cast<std::size_t>(j * rows)], bytes));
            deps.push_back(out(&dst[lo], bytes));
            rt.spawn(
                [&src, &dst, lo] {
                    for (std::size_t i = lo; i < lo + rows; ++i) {
                        const double left = i > 0 ? src[i - 1] : 0.0;
                        const double right = i + 1 < src.size() ? src[i + 1] : 0.0;
                        dst[i] = (left + src[i] + right) / 3.0;
                    }
                },
                std::span<const Dep>(deps));
        }
    }
}

// Forwards to a ChromeTrace and checks the threading contract on the way:
// worker w's starts and finishes come from one thread, and from no other
// worker's.
class ContractCheck final : public Observer {
public:
    explicit ContractCheck(ChromeTrace& trace) : trace_(trace) {}
    void on_setup(const std::vector<unsigned>& worker_nodes, std::string_view label) override {
        ++setups;
        nodes = worker_nodes;
        trace_.on_setup(worker_nodes, label);
    }
    void on_task_created(TaskId task, double t) override { trace_.on_task_created(task, t); }
    void on_task_ready(TaskId task, double t) override { trace_.on_task_ready(task, t); }
    void on_task_started(TaskId task, unsigned worker, unsigned node, double t) override {
        check_thread(worker, node);
        trace_.on_task_started(task, worker, node, t);
    }
    void on_task_finished(TaskId task, unsigned worker, unsigned node, double t) override {
        check_thread(worker, node);
        trace_.on_task_finished(task, worker, node, t);
    }
    void on_task_stolen(TaskId task, unsigned thief, double t) override {
        {
            std::lock_guard lk(mutex_);
            ++stolen;
        }
        trace_.on_task_stolen(task, thief, t);
    }
    void on_partition_done(std::size_t tasks, double start, double end) override {
        {
            std::lock_guard lk(mutex_);
            ++partitions;
            EXPECT_LE(start, end);
        }
        trace_.on_partition_done(tasks, start, end);
    }

    int setups = 0;
    std::vector<unsigned> nodes;
    int stolen = 0;
    int partitions = 0;

private:
    void check_thread(unsigned worker, unsigned node) {
        std::lock_guard lk(mutex_);
        auto [it, fresh] = threads_.emplace(worker, std::this_thread::get_id());
        if (!fresh) {
            EXPECT_EQ(it->second, std::this_thread::get_id()) << "worker " << worker << " on two threads";
        }
        for (const auto& [w, id] : threads_) {
            if (w != worker) {
                EXPECT_NE(id, std::this_thread::get_id()) << "workers " << w << " and " << worker << " share a thread";
            }
        }
        ASSERT_LT(worker, nodes.size());
        EXPECT_EQ(node, nodes[worker]);
    }
    ChromeTrace& trace_;
    std::mutex mutex_;
    std::map<unsigned, std::thread::id> threads_;
};

std::string read_file(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

class TasksTrace : public ::testing::TestWithParam<std::string> {
protected:
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
};

TEST_P(TasksTrace, JacobiRunTracesEveryTask) {
    ChromeTrace trace;
    ContractCheck check(trace);
    PolicyOptions po;
    po.window = 8;   // RIP-MW: a few partition jobs in 20 tasks
    po.intersection = 2;
    std::vector<double> a(blocks * rows, 1.0), b(blocks * rows, 0.0);
    std::uint64_t ran = 0;
    {
        Runtime rt{team, GetParam(), po, RuntimeOptions{.kernel_homes = false, .observer = &check}};
        EXPECT_EQ(check.setups, 1);   // at construction, before any task
        jacobi(rt, a, b);
        rt.barrier();
        ran = rt.report().tasks;
    }
    const std::uint64_t tasks = blocks * sweeps;
    ASSERT_EQ(ran, tasks);
    EXPECT_EQ(check.setups, 1);
    EXPECT_EQ(check.nodes, (std::vector<unsigned>{0, 1}));
    // RIP-MW partitions every window of 8: at least the first two windows.
    EXPECT_EQ(check.partitions > 0, GetParam() == "rip-mw");   // RIP-MW partitions every window

    const std::string text = trace.to_json();
    const numaware::test::TraceCounts c = numaware::test::check_chrome_trace(text);
    EXPECT_EQ(c.begins, tasks + static_cast<std::uint64_t>(check.partitions));
    EXPECT_EQ(c.ends, c.begins);
    EXPECT_EQ(c.instants, 2 * tasks + static_cast<std::uint64_t>(check.stolen));

    // Per task: created, ready, one start on a worker, in that order in time.
    std::map<std::uint64_t, double> created, ready, started;
    std::size_t task_begins = 0;
    const nlohmann::json doc = nlohmann::json::parse(text);
    for (const auto& e : doc["traceEvents"]) {
        if (e["ph"] == "M") continue;
        EXPECT_GE(e["ts"].get<double>(), 0.0) << "before the clock zero: " << e.dump();
        const std::string cat = e.value("cat", "");
        if (cat == "created" || cat == "ready") {
            auto& m = cat == "created" ? created : ready;
            EXPECT_TRUE(m.emplace(e["args"]["task"].get<std::uint64_t>(), e["ts"].get<double>()).second)
                << "two " << cat << " events: " << e.dump();
        } else if (cat == "task" && e["ph"] == "B") {
            ++task_begins;
            EXPECT_TRUE(started.emplace(e["args"]["task"].get<std::uint64_t>(), e["ts"].get<double>()).second)
                << "task started twice: " << e.dump();
            EXPECT_LT(e["tid"].get<int>(), 2);
        }
    }
    EXPECT_EQ(task_begins, tasks);
    ASSERT_EQ(created.size(), tasks);
    ASSERT_EQ(ready.size(), tasks);
    ASSERT_EQ(started.size(), tasks);
    for (const auto& [id, t] : started) {
        EXPECT_LE(created.at(id), ready.at(id)) << "task " << id;
        EXPECT_LE(ready.at(id), t) << "task " << id << " started before it was ready";
    }

    // Written to a file, read back: the same document.
    const std::string path =
        (std::filesystem::temp_directory_path() / ("numaware-trace-" + GetParam() + ".json")).string();
    trace.write(path);
    const std::string back = read_file(path);
    std::remove(path.c_str());
    const numaware::test::TraceCounts c2 = numaware::test::check_chrome_trace(back);
    EXPECT_EQ(c2.begins, c.begins);
    EXPECT_EQ(c2.ends, c.ends);
    EXPECT_EQ(c2.instants, c.instants);
    EXPECT_EQ(nlohmann::json::parse(back), nlohmann::json::parse(text));
}

TEST_P(TasksTrace, RunWithoutObserverGivesTheSameResult) {
    std::vector<double> a(blocks * rows, 1.0), b(blocks * rows, 0.0);
    std::vector<double> a2 = a, b2 = b;
    {
        Runtime rt{team, GetParam(), {}, RuntimeOptions{.kernel_homes = false}};
        jacobi(rt, a, b);
        rt.barrier();
        EXPECT_EQ(rt.report().tasks, static_cast<std::uint64_t>(blocks * sweeps));
    }
    ChromeTrace trace;
    {
        Runtime rt{team, GetParam(), {}, RuntimeOptions{.kernel_homes = false, .observer = &trace}};
        jacobi(rt, a2, b2);
        rt.barrier();
    }
    EXPECT_EQ(a, a2);
    EXPECT_EQ(b, b2);
}

// DEP, a stealing policy (DFIFO: random stealing) and a partitioning one.
INSTANTIATE_TEST_SUITE_P(Policies, TasksTrace, ::testing::Values("dep", "dfifo", "rip-mw"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                             return p.param == "rip-mw" ? std::string("rip_mw") : p.param;
                         });

// Every task goes to worker 0's queue; worker 1 may only steal it.
class AllOnWorkerZero final : public Policy {
public:
    std::string_view name() const override { return "all-on-0"; }
    void attach(const PolicyContext& ctx) override { workers_ = static_cast<unsigned>(ctx.worker_node.size()); }
    Destination place(const TaskView&) override { return Destination::to_worker(0); }
    void steal_order(unsigned worker, std::uint64_t, std::vector<QueueRef>& order) const override {
        order.clear();
        order.push_back({QueueRef::Kind::worker, worker});
        for (unsigned w = 0; w < workers_; ++w)
            if (w != worker) order.push_back({QueueRef::Kind::worker, w});
    }

private:
    unsigned workers_ = 1;
};

TEST(TasksTraceSteal, ATaskTakenFromAnotherWorkersQueueIsReportedStolen) {
    Machine machine = two_nodes();
    Team team{machine, TeamMapping{.threads = 2, .kind = MappingKind::scatter}};
    ChromeTrace trace;
    ContractCheck check(trace);
    std::vector<int> ran_on(2, -1);
    {
        Runtime rt{team, std::make_unique<AllOnWorkerZero>(), RuntimeOptions{.observer = &check}};
        // Two long tasks on worker 0's queue: while worker 0 runs one, the
        // other waits there long enough for worker 1 to take it.
        for (int i = 0; i < 2; ++i)
            rt.spawn([&ran_on, i] {
                ran_on[static_cast<std::size_t>(i)] = Runtime::current_worker();
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            });
        rt.barrier();
    }
    const int by_one = (ran_on[0] == 1) + (ran_on[1] == 1);
    EXPECT_EQ(check.stolen, by_one);
    EXPECT_EQ(by_one, 1) << "worker 1 should have taken one task";
    const numaware::test::TraceCounts c = numaware::test::check_chrome_trace(trace.to_json());
    EXPECT_EQ(c.begins, 2u);
    EXPECT_EQ(c.ends, 2u);
    EXPECT_EQ(c.instants, 4u + static_cast<unsigned>(check.stolen));
}

}  // namespace
}  // namespace numaware::tasks
