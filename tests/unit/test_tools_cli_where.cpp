// `numaware where`: run the built CLI on this test process after binding a
// range, and check its report against what we placed; plus the error texts.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "os/os.hpp"

namespace {

struct CliResult {
    int status = -1;
    std::string out;
};

CliResult run_cli(const std::string& args) {
    CliResult r;
    const std::string cmd = std::string(NUMAWARE_CLI) + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

TEST(WhereCli, ReportsABoundRangeOfThisProcess) {
    using namespace numaware;
    const std::size_t page = os::linux_os().page_size();
    const std::size_t pages = 37;
    char* addr = static_cast<char*>(mmap(nullptr, pages * page, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(addr, MAP_FAILED);
    ASSERT_EQ(os::linux_os().madvise(addr, pages * page, MADV_NOHUGEPAGE), 0);
    ASSERT_EQ(os::linux_os().mbind(addr, pages * page, os::PolicyMode::bind, NodeSet{0}, 0), 0);
    for (std::size_t i = 0; i < pages; ++i) addr[i * page] = 1;

    const CliResult r = run_cli("where " + std::to_string(getpid()) + " --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["pid"], getpid());
    char want[32];
    std::snprintf(want, sizeof want, "0x%lx", reinterpret_cast<unsigned long>(addr));
    bool found = false;
    std::uint64_t sum = 0;
    for (const auto& m : j["mappings"]) {
        sum += m["pages"].get<std::uint64_t>();
        if (m["address"] != want) continue;
        found = true;
        EXPECT_EQ(m["policy"], "bind:0");
        EXPECT_EQ(m["kind"], "anon");
        EXPECT_EQ(m["pages_per_node"]["0"], pages);
        EXPECT_EQ(m["pages"], pages);
        EXPECT_EQ(m["balancing_exempt"], "bound to nodes 0 (MPOL_BIND)");
    }
    EXPECT_TRUE(found) << "no mapping at " << want;
    EXPECT_EQ(j["total"]["pages"], sum);
    EXPECT_GE(j["total"]["pages_per_node"]["0"].get<std::uint64_t>(), pages);

    const CliResult text = run_cli("where " + std::to_string(getpid()));
    ASSERT_EQ(text.status, 0) << text.out;
    EXPECT_NE(text.out.find(std::string(want + 2) + " "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("bind:0"), std::string::npos);
    EXPECT_NE(text.out.find("\ntotal "), std::string::npos);
    // At least our range; other tests in the same process (heap arenas)
    // may hold bound mappings too.
    const auto at = text.out.find("exempt from automatic NUMA balancing (");
    ASSERT_NE(at, std::string::npos) << text.out;
    unsigned bound = 0;
    EXPECT_EQ(std::sscanf(text.out.c_str() + at, "exempt from automatic NUMA balancing (%u bound)", &bound), 1);
    EXPECT_GE(bound, 1u) << text.out;
    munmap(addr, pages * page);
}

TEST(WhereCli, SelfWorks) {
    const CliResult r = run_cli("where --self --json");
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["total"]["pages"].get<std::uint64_t>(), 0u);
    EXPECT_FALSE(j["mappings"].empty());
}

TEST(WhereCli, BadInputNamesTheProblem) {
    CliResult r = run_cli("where");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "numaware: PID: missing: give a process id or --self\n");
    r = run_cli("where 12x");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "numaware: PID: '12x' is not a process id (expected a positive integer)\n");
    r = run_cli("where 999999999");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, "numaware: PID 999999999: no such process\n");
    r = run_cli("where 1 --self");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.out.find("not both"), std::string::npos);
}

TEST(WhereCli, HelpHasAnExample) {
    const CliResult r = run_cli("where --help");
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("Example: numaware where"), std::string::npos);
    EXPECT_NE(r.out.find("--json"), std::string::npos);
}

}  // namespace
