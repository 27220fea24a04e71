// Tests for `numaware run` and `numaware probe`, through the built binary.
// run: the child must see the memory policy (in its own /proc/self/numa_maps)
// and the CPU set (in its /proc/self/status) that run was asked for.
// probe: the measured matrices cover every (CPU node, memory node) pair and
// the JSON loads back as a Machine.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "numaware/machine.hpp"
#include "numaware/team.hpp"
#include "os/os.hpp"

namespace numaware {
namespace {

struct Outcome {
    int status = -1;
    std::string out;
    std::string err;
};

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// Runs NUMAWARE_CLI with `args` (single-quoted for the shell; none of the
// test arguments contain a quote).
Outcome cli(const std::vector<std::string>& args) {
    const std::string err_path = ::testing::TempDir() + "run_cli_stderr_" + std::to_string(::getpid());
    std::string cmd = std::string("'") + NUMAWARE_CLI + "'";
    for (const std::string& a : args) cmd += " '" + a + "'";
    cmd += " 2>'" + err_path + "'";
    Outcome o;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return o;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
    const int raw = ::pclose(p);
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    o.err = slurp(err_path);
    std::remove(err_path.c_str());
    return o;
}

// Policy column of every numa_maps line: policy text -> line count.
std::map<std::string, int> policies(const std::string& numa_maps) {
    std::map<std::string, int> count;
    std::istringstream lines(numa_maps);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream f(line);
        std::string addr, policy;
        if (f >> addr >> policy) ++count[policy];
    }
    return count;
}

std::string memory_nodes(const Machine& m) {
    NodeSet s;
    for (const Node& n : m.nodes)
        if (n.memory_bytes > 0) s.add(n.os_index);
    return s.to_string();
}

TEST(RunCli, ChildSeesInterleavePolicyInItsNumaMaps) {
    const std::string expected = "interleave:" + memory_nodes(Machine::from_live());
    const Outcome o = cli({"run", "--pages", "interleave:all", "--", "cat", "/proc/self/numa_maps"});
    ASSERT_EQ(o.status, 0) << o.err;
    const auto seen = policies(o.out);
    ASSERT_FALSE(seen.empty()) << o.out;
    // Every mapping without a policy of its own shows the task policy; cat
    // sets none, so all of them must show the interleave it inherited.
    EXPECT_EQ(seen.size(), 1u) << o.out;
    EXPECT_GT(seen.count(expected) ? seen.at(expected) : 0, 0) << o.out;

    // The control: the same command without run shows the default policy,
    // so the check above does distinguish.
    const Outcome plain = cli({"run", "--", "cat", "/proc/self/numa_maps"});
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(policies(plain.out).count(expected), 0u) << plain.out;
    EXPECT_GT(policies(plain.out).count("default"), 0u) << plain.out;
}

TEST(RunCli, JsonGoesToStderrAndStdoutStaysTheChilds) {
    std::vector<unsigned> allowed;
    ASSERT_EQ(os::linux_os().get_affinity(0, allowed), 0);
    const std::string cpu = std::to_string(allowed.back());
    const Outcome o = cli({"run", "--json", "--pages", "interleave:all", "--cpus", cpu, "--", "grep",
                           "Cpus_allowed_list", "/proc/self/status"});
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(o.out, "Cpus_allowed_list:\t" + cpu + "\n");
    const auto j = nlohmann::json::parse(o.err);
    EXPECT_EQ(j.at("cpus"), cpu);
    EXPECT_EQ(j.at("pages"), "interleave:" + memory_nodes(Machine::from_live()));
    EXPECT_EQ(j.at("command"), (nlohmann::json{"grep", "Cpus_allowed_list", "/proc/self/status"}));
}

TEST(RunCli, AffinityIsTheUnionOfTheTeamLayoutsCpus) {
    const Outcome all = cli({"run", "--mapping", "scatter", "--", "grep", "Cpus_allowed_list", "/proc/self/status"});
    ASSERT_EQ(all.status, 0) << all.err;
    // --mapping alone: every CPU of every node with CPUs of the live machine.
    const Machine live = Machine::from_live();
    std::vector<unsigned> every;
    for (const Node& n : live.nodes) every.insert(every.end(), n.cpus.begin(), n.cpus.end());
    EXPECT_EQ(all.out, "Cpus_allowed_list:\t" + format_cpu_list(every) + "\n");

    const Outcome one = cli({"run", "--threads", "1", "--", "grep", "Cpus_allowed_list", "/proc/self/status"});
    ASSERT_EQ(one.status, 0) << one.err;
    const TeamLayout l = plan_team(live, {.threads = 1});
    EXPECT_EQ(one.out, "Cpus_allowed_list:\t" + format_cpu_list(l.cpus()) + "\n");
}

// --cpu-nodes: the CPUs of the named nodes (numactl --cpunodebind), on a
// two-node machine model whose node 1 holds this host's CPU 1.
TEST(RunCli, CpuNodesRunsOnTheNamedNodesCpus) {
    if (Machine::from_live().cpu_count() < 2) GTEST_FAIL() << "this test needs a host with 2 CPUs (0 and 1)";
    const std::string two = "nodes=2 cpus-per-node=1 mem-per-node=256M distances=10,21/21,10";
    const Outcome one = cli({"run", "--machine", two, "--cpu-nodes", "1", "--json", "--", "grep", "Cpus_allowed_list",
                             "/proc/self/status"});
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(one.out, "Cpus_allowed_list:\t1\n");
    const nlohmann::json j = nlohmann::json::parse(one.err);
    EXPECT_EQ(j.at("nodes"), "1");
    EXPECT_EQ(j.at("cpus"), "1");
    const Outcome both = cli({"run", "--machine", two, "--cpu-nodes", "0,1", "--threads", "2", "--mapping", "scatter",
                              "--", "grep", "Cpus_allowed_list", "/proc/self/status"});
    ASSERT_EQ(both.status, 0) << both.err;
    EXPECT_EQ(both.out, "Cpus_allowed_list:\t0-1\n");
}

// --omp: the OpenMP drop-in preloaded, the planned CPUs as OpenMP places in
// rank order, the policy passed on; the child's environment shows them.
TEST(RunCli, OmpPreloadsTheShimWithThePlannedPlaces) {
    const Machine live = Machine::from_live();
    const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(live.cpu_count(), 2));
    const Outcome o = cli({"run", "--omp", "--policy", "dep", "--threads", std::to_string(threads), "--mapping",
                           "scatter", "--", "env"});
    ASSERT_EQ(o.status, 0) << o.err;
    const std::string out = "\n" + o.out;   // every variable starts a line
    const TeamLayout l = plan_team(live, {.threads = threads, .kind = MappingKind::scatter});
    std::string places;
    for (const RankPlace& r : l.ranks) places += (places.empty() ? "{" : ",{") + std::to_string(r.cpu) + "}";
    EXPECT_NE(out.find("\nOMP_PLACES=" + places + "\n"), std::string::npos) << o.out;
    EXPECT_NE(out.find("\nOMP_NUM_THREADS=" + std::to_string(threads) + "\n"), std::string::npos);
    EXPECT_NE(out.find("\nOMP_PROC_BIND=close\n"), std::string::npos);
    EXPECT_NE(out.find("\nNUMAWARE_POLICY=dep\n"), std::string::npos);
    const std::size_t at = out.find("\nLD_PRELOAD=");
    ASSERT_NE(at, std::string::npos);
    const std::string preload = out.substr(at + 12, out.find('\n', at + 1) - at - 12);
    EXPECT_EQ(preload.substr(preload.size() - 19), "/libnumaware_omp.so") << preload;
    // Without a CPU option the program keeps OpenMP's own defaults.
    const Outcome plain = cli({"run", "--omp", "--", "env"});
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_NE(plain.out.find("libnumaware_omp.so"), std::string::npos);
    EXPECT_EQ(plain.out.find("OMP_PLACES="), std::string::npos);
}

TEST(RunCli, BadInputIsOneLineNamingTheInput) {
    const Machine live = Machine::from_live();
    const std::string too_many = std::to_string(live.cpu_count() + 1);
    const struct {
        std::vector<std::string> args;
        std::string expect;
    } cases[] = {
        {{"run", "--threads", too_many, "--", "true"}, "--threads: threads=" + too_many + " exceeds the"},
        {{"run", "--threads", "0", "--", "true"}, "--threads: threads=0"},
        {{"run", "--nodes", "99", "--", "true"}, "--nodes: nodes=99 exceeds the"},
        {{"run", "--cpus", "0,100000", "--", "true"}, "--cpus: cpus[1]: CPU 100000 is not in this machine"},
        {{"run", "--cpus", "0", "--nodes", "1", "--", "true"}, "--cpus: an explicit CPU list cannot be combined"},
        {{"run", "--mapping", "spread", "--", "true"}, "--mapping: unknown mapping 'spread'"},
        {{"run", "--cpu-nodes", "99", "--", "true"}, "--cpu-nodes: node 99 is not in this machine"},
        {{"run", "--cpu-nodes", "0", "--nodes", "1", "--", "true"}, "--cpu-nodes: names the nodes; --nodes counts them"},
        {{"run", "--cpu-nodes", "0", "--cpus", "0", "--", "true"}, "--cpus: an explicit CPU list cannot be combined"},
        {{"run", "--cpu-nodes", "0-x", "--", "true"}, "--cpu-nodes"},
        {{"run", "--machine", "nodes=2 cpus=1,0 mem=256M,256M distances=10,21/21,10", "--cpu-nodes", "1", "--", "true"},
         "--cpu-nodes: node 1 has no CPUs (a memory-only node cannot run threads); the nodes with CPUs are 0"},
        {{"run", "--pages", "interleave:77", "--", "true"}, "policy 'interleave:77'"},
        {{"run", "--", "/nonexistent/command"}, "command: cannot run '/nonexistent/command'"},
        {{"run", "--policy", "dep", "--", "true"}, "--policy: is the task scheduler of --omp; add --omp"},
        {{"run", "--omp", "--policy", "bogus", "--", "true"}, "--policy: unknown policy 'bogus'; expected one of dfifo, lq"},
    };
    for (const auto& c : cases) {
        const Outcome o = cli(c.args);
        EXPECT_NE(o.status, 0) << c.expect;
        EXPECT_EQ(o.out, "");
        EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
        EXPECT_NE(o.err.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << o.err;
    }
}

TEST(ProbeCli, JsonIsTheLiveMachineWithMeasuredMatrices) {
    const Outcome o = cli({"probe", "--json", "--size", "1M", "--iterations", "20000"});
    ASSERT_EQ(o.status, 0) << o.err;
    const Machine probed = Machine::from_json(o.out);
    const Machine live = Machine::from_live();
    EXPECT_EQ(probed.nodes, live.nodes);
    EXPECT_EQ(probed.distances, live.distances);
    ASSERT_TRUE(probed.latency_ns.has_value());
    ASSERT_TRUE(probed.bandwidth_gbps.has_value());
    for (std::size_t i = 0; i < probed.nodes.size(); ++i)
        for (std::size_t j = 0; j < probed.nodes.size(); ++j) {
            const bool measurable = probed.nodes[i].has_cpus() && probed.nodes[j].memory_bytes > 0;
            const double lat = (*probed.latency_ns)[i][j];
            const double bw = (*probed.bandwidth_gbps)[i][j];
            if (measurable) {
                // Loose physical bounds: a DRAM load is neither free nor a millisecond.
                EXPECT_GT(lat, 0.5) << i << "," << j;
                EXPECT_LT(lat, 1e6) << i << "," << j;
                EXPECT_GT(bw, 0.001) << i << "," << j;
                EXPECT_LT(bw, 10000.0) << i << "," << j;
            } else {
                EXPECT_EQ(lat, 0.0);
                EXPECT_EQ(bw, 0.0);
            }
        }

    // `topo --machine FILE` loads what probe wrote.
    const std::string path = ::testing::TempDir() + "probe_" + std::to_string(::getpid()) + ".json";
    {
        std::ofstream f(path);
        f << o.out;
    }
    const Outcome topo = cli({"topo", "--json", "--machine", path});
    std::remove(path.c_str());
    ASSERT_EQ(topo.status, 0) << topo.err;
    EXPECT_EQ(Machine::from_json(topo.out).latency_ns, probed.latency_ns);
}

TEST(ProbeCli, TableAndBadInput) {
    const Outcome o = cli({"probe", "--size", "256K", "--iterations", "5000"});
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_NE(o.out.find("latency (ns per load"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("bandwidth (GB/s"), std::string::npos) << o.out;
    // Bound where there is a choice of node; with one node of memory every
    // page is there already.
    const Machine live = Machine::from_live();
    const auto memory_nodes = std::count_if(live.nodes.begin(), live.nodes.end(),
                                            [](const Node& n) { return n.holds_pages(); });
    EXPECT_NE(o.out.find(memory_nodes > 1 ? "bound with placement bind" : "on the one node with memory (not bound"),
              std::string::npos)
        << o.out;

    Outcome bad = cli({"probe", "--size", "4K"});
    EXPECT_NE(bad.status, 0);
    EXPECT_NE(bad.err.find("--size: 4K is too small: at least 64K"), std::string::npos) << bad.err;
    bad = cli({"probe", "--iterations", "0"});
    EXPECT_NE(bad.status, 0);
    EXPECT_NE(bad.err.find("--iterations: must be at least 1"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace numaware
