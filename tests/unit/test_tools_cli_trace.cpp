// CLI tests of `numaware sim memory --trace` and `numaware trace record`'s
// one-line failures (the real recordings are tests/trace/record_check.sh).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support.hpp"
#include "trace_writer.hpp"

using numaware::test::CliResult;
using numaware::test::contains;
using numaware::test::one_line;
using numaware::test::run_cli;
using numaware::test::TraceWriter;

namespace {

std::string temp_path(const std::string& name) {
    return ::testing::TempDir() + "nw_cli_trace_" + std::to_string(::getpid()) + "_" + name;
}

std::string small_trace() {
    const std::string path = temp_path("small.nwt");
    TraceWriter w;
    w.thread(0);
    w.block(0, {{2, 0x1000, 0x400000, 8, false}, {1, 0x1040, 0x400004, 8, true}});
    w.thread(1);
    w.block(1, {{1, 0x9000, 0x400100, 4, false}});
    w.end();
    numaware::test::write_bytes(path, w.bytes);
    return path;
}

}  // namespace

TEST(ToolsCliTrace, SimMemoryReplaysATrace) {
    const std::string path = small_trace();
    const CliResult r = run_cli("sim memory --trace " + path + " --prefetch none,stride:2 --json", false);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["simulated"], true);
    EXPECT_EQ(doc["workload"], "trace:" + path);
    EXPECT_EQ(doc["trace"]["threads"], 2);
    EXPECT_EQ(doc["trace"]["format"], "numaware");
    ASSERT_EQ(doc["runs"].size(), 2u);
    EXPECT_EQ(doc["runs"][0]["accesses"], 3);
    EXPECT_EQ(doc["runs"][0]["simulated"], true);
    const CliResult table = run_cli("sim memory --trace " + path);
    EXPECT_EQ(table.status, 0) << table.out;
    EXPECT_TRUE(contains(table.out, "SIMULATED")) << table.out;
    ::unlink(path.c_str());
}

TEST(ToolsCliTrace, SimMemoryRejectsBadTraceArgumentsInOneLine) {
    const std::string path = small_trace();
    const CliResult both = run_cli("sim memory --trace " + path + " --workload stream");
    EXPECT_NE(both.status, 0);
    EXPECT_TRUE(one_line(both.out)) << both.out;
    EXPECT_TRUE(contains(both.out, "excludes")) << both.out;

    const CliResult format_alone = run_cli("sim memory --trace-format champsim");
    EXPECT_NE(format_alone.status, 0);
    EXPECT_TRUE(one_line(format_alone.out)) << format_alone.out;

    const std::string missing = temp_path("missing.nwt");
    const CliResult gone = run_cli("sim memory --trace " + missing);
    EXPECT_NE(gone.status, 0);
    EXPECT_TRUE(one_line(gone.out)) << gone.out;
    EXPECT_TRUE(contains(gone.out, missing)) << gone.out;

    const std::string cut = temp_path("cut.nwt");
    TraceWriter w;
    w.thread(0);
    numaware::test::write_bytes(cut, w.bytes);
    const CliResult truncated = run_cli("sim memory --trace " + cut);
    EXPECT_NE(truncated.status, 0);
    EXPECT_TRUE(one_line(truncated.out)) << truncated.out;
    EXPECT_TRUE(contains(truncated.out, "byte offset 56")) << truncated.out;

    const CliResult format = run_cli("sim memory --trace " + path + " --trace-format pin");
    EXPECT_NE(format.status, 0);
    EXPECT_TRUE(contains(format.out, "known: auto, numaware, champsim")) << format.out;

    const CliResult too_few = run_cli("sim memory --trace " + path + " --threads 1");
    EXPECT_NE(too_few.status, 0);
    EXPECT_TRUE(contains(too_few.out, "has 2 threads")) << too_few.out;
    ::unlink(path.c_str());
    ::unlink(cut.c_str());
}

TEST(ToolsCliTrace, RecordSaysHowToGetWhatIsMissing) {
    const std::string out = temp_path("never.nwt");
    const CliResult no_tool = run_cli("trace record -o " + out + " -- /bin/true", true, "NUMAWARE_VALGRIND_LIB=/nonexistent");
    EXPECT_NE(no_tool.status, 0);
    EXPECT_TRUE(one_line(no_tool.out)) << no_tool.out;
    EXPECT_TRUE(contains(no_tool.out, "build target numaware_tracer")) << no_tool.out;

    const CliResult no_valgrind = run_cli("trace record -o " + out + " -- /bin/true", true, "PATH=/nonexistent");
    EXPECT_NE(no_valgrind.status, 0);
    EXPECT_TRUE(one_line(no_valgrind.out)) << no_valgrind.out;
    EXPECT_TRUE(contains(no_valgrind.out, "apt-get install valgrind")) << no_valgrind.out;

    const CliResult no_program = run_cli("trace record -o " + out);
    EXPECT_NE(no_program.status, 0);
    EXPECT_TRUE(one_line(no_program.out)) << no_program.out;

    const CliResult no_output = run_cli("trace record -- /bin/true");
    EXPECT_NE(no_output.status, 0);
    EXPECT_TRUE(one_line(no_output.out)) << no_output.out;
    EXPECT_NE(::access(out.c_str(), F_OK), 0);
}
