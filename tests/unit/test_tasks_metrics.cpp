// The one metrics model: load balance, RunReport JSON, and the Chrome trace
// observer on events fed by hand.
#include <gtest/gtest.h>

#include <vector>

#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/metrics.hpp"
#include "numaware/observer.hpp"
#include "trace_check.hpp"

namespace nt = numaware::tasks;

TEST(Metrics, LoadBalanceIsSumOverMaxTimesWorkers) {
    const std::vector<double> useful{1.0, 2.0, 3.0, 2.0};
    EXPECT_NEAR(nt::load_balance_pct(useful), 8.0 / (3.0 * 4) * 100, 1e-12);
    const std::vector<double> even{5.0, 5.0};
    EXPECT_NEAR(nt::load_balance_pct(even), 100.0, 1e-12);
}

TEST(Metrics, LoadBalanceIs100WhenNothingRan) {
    EXPECT_EQ(nt::load_balance_pct(std::vector<double>{}), 100.0);
    EXPECT_EQ(nt::load_balance_pct(std::vector<double>{0.0, 0.0, 0.0}), 100.0);
    EXPECT_EQ(nt::RunReport{}.load_balance_pct, 100.0);
}

TEST(Metrics, RunReportJsonHasEveryField) {
    nt::RunReport r;
    r.policy = "dep";
    r.tasks = 3;
    r.nodes = {0, 1};
    r.tasks_per_node = {1, 2};
    const auto j = nlohmann::json::parse(r.to_json());
    for (const char* k : {"policy", "tasks", "makespan_s", "dep_bytes", "cross_node_bytes", "nodes", "tasks_per_node",
                          "load_balance_pct", "runtime_overhead_pct", "partition_overhead_pct",
                          "cross_node_steals", "cross_node_steal_bytes", "cross_node_steals_backlog",
                          "cross_node_steals_occupied", "homes"})
        EXPECT_TRUE(j.contains(k)) << k;
    EXPECT_EQ(j["tasks_per_node"][1], 2);
}

TEST(ChromeTrace, PairsBeginAndEndPerWorker) {
    nt::ChromeTrace trace;
    trace.on_setup({0, 1}, "by hand");
    trace.on_task_created(0, 0.0);
    trace.on_task_created(1, 0.0);
    trace.on_task_ready(0, 0.0);
    trace.on_task_started(0, 0, 0, 1e-6);
    trace.on_task_finished(0, 0, 0, 2e-6);
    trace.on_task_ready(1, 2e-6);
    trace.on_task_stolen(1, 1, 2e-6);
    trace.on_task_started(1, 1, 1, 2e-6);
    trace.on_task_finished(1, 1, 1, 3e-6);
    trace.on_partition_done(2, 0.5e-6, 1.5e-6);
    const auto c = numaware::test::check_chrome_trace(trace.to_json());
    EXPECT_EQ(c.begins, 3u);   // two tasks and the partition
    EXPECT_EQ(c.ends, 3u);
    EXPECT_EQ(c.instants, 5u);
    EXPECT_GE(c.metadata, 5u);   // two nodes, two workers, the partitioner, the scheduling track
}

TEST(ChromeTrace, BackToBackTasksOnOneWorkerNest) {
    nt::ChromeTrace trace;
    trace.on_setup({0}, "back to back");
    trace.on_task_started(0, 0, 0, 1.0);
    trace.on_task_finished(0, 0, 0, 2.0);
    trace.on_task_started(1, 0, 0, 2.0);   // starts the instant task 0 ends
    trace.on_task_finished(1, 0, 0, 3.0);
    const auto c = numaware::test::check_chrome_trace(trace.to_json());
    EXPECT_EQ(c.begins, 2u);
    EXPECT_EQ(c.ends, 2u);
}

TEST(ChromeTrace, ZeroLengthTaskBeginsBeforeItEnds) {
    nt::ChromeTrace trace;
    trace.on_setup({0}, "zero length");
    trace.on_task_started(0, 0, 0, 1.0);
    trace.on_task_finished(0, 0, 0, 1.0);
    trace.on_task_started(1, 0, 0, 1.0);
    trace.on_task_finished(1, 0, 0, 2.0);
    const auto c = numaware::test::check_chrome_trace(trace.to_json());
    EXPECT_EQ(c.begins, 2u);
    EXPECT_EQ(c.ends, 2u);
}

TEST(ChromeTrace, WriteNamesAnUnwritablePath) {
    nt::ChromeTrace trace;
    try {
        trace.write("/nonexistent-dir/trace.json");
        ADD_FAILURE() << "no error";
    } catch (const numaware::Error& e) {
        EXPECT_EQ(e.field(), "path");
    }
}
