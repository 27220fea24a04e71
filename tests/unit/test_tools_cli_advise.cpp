// `numaware advise` hands over to the Python package's advisor: the same
// arguments, the package on PYTHONPATH, NUMAWARE_CLI naming the executable.
// A stand-in interpreter (a shell script) shows what it was given.
#include <cstdio>
#include <fstream>
#include <string>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "numaware/memory_sim.hpp"
#include "support.hpp"

using numaware::test::contains;
using numaware::test::one_line;
using numaware::test::run_cli;

namespace {

// A script that prints its arguments and the variables the advisor reads.
std::string stand_in() {
    char dir[] = "/tmp/numaware-advise-XXXXXX";
    if (::mkdtemp(dir) == nullptr) return "";
    const std::string path = std::string(dir) + "/python3";
    std::ofstream(path) << "#!/bin/sh\necho \"args: $*\"\necho \"cli: $NUMAWARE_CLI\"\necho \"path: $PYTHONPATH\"\n";
    ::chmod(path.c_str(), 0755);
    return path;
}

}  // namespace

TEST(AdviseCli, HandsOverToThePythonAdvisor) {
    const std::string python = stand_in();
    ASSERT_FALSE(python.empty());
    const auto r = run_cli("advise evaluate --preset thesis-4s --size test --json", false, "NUMAWARE_PYTHON=" + python);
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "args: -m numaware.advisor evaluate --preset thesis-4s --size test --json")) << r.out;
    EXPECT_TRUE(contains(r.out, "cli: /")) << r.out;   // an absolute path: /proc/self/exe resolved
    EXPECT_TRUE(contains(r.out, "numaware")) << r.out;
    EXPECT_TRUE(contains(r.out, "path: /")) << r.out;
    std::remove(python.c_str());
}

TEST(AdviseCli, AMissingInterpreterIsOneLine) {
    const auto r = run_cli("advise sweep --size test", true, "NUMAWARE_PYTHON=/nonexistent/python3");
    EXPECT_NE(r.status, 0);
    EXPECT_TRUE(one_line(r.out)) << r.out;
    EXPECT_TRUE(contains(r.out, "numaware: advise: NUMAWARE_PYTHON='/nonexistent/python3' is not an executable")) << r.out;
}

// The advisor keys stored results by this line: the project's version and
// the memory simulator's model revision.
TEST(AdviseCli, VersionNamesTheSimulatorModel) {
    const auto r = run_cli("--version", false);
    ASSERT_EQ(r.status, 0);
    EXPECT_TRUE(contains(r.out, std::string("+memsim.") + numaware::sim::memory::model_revision)) << r.out;
    EXPECT_TRUE(one_line(r.out)) << r.out;
}
