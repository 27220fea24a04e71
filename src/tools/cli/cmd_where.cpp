// tools/cli/cmd_where.cpp — `numaware where PID|--self`: where a process's
// pages are, per mapping and in total, as the kernel reports them in
// /proc/PID/numa_maps.
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "os/balancing.hpp"
#include "os/hex.hpp"
#include "os/numa_maps.hpp"
#include "os/os.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {

namespace {

struct WhereOptions {
    std::string pid;
    bool self = false;
    bool json = false;
    bool all = false;
};

pid_t parse_pid(const std::string& text) {
    long value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || value <= 0 ||
        value > 0x3fffffff)
        throw Error("PID", "'" + text + "' is not a process id (expected a positive integer)");
    return static_cast<pid_t>(value);
}

std::string read_maps_text(pid_t pid) {
    std::string text;
    const int err = os::linux_os().read_numa_maps(pid, text);
    const std::string who = pid == 0 ? "self" : std::to_string(pid);
    if (err == ENOENT) {
        if (::access("/proc/self/numa_maps", F_OK) != 0)
            throw Error("PID " + who, "/proc/<pid>/numa_maps does not exist: kernel built without NUMA support", err);
        throw Error("PID " + who, "no such process", err);
    }
    if (err == EACCES || err == EPERM)
        throw Error("PID " + who, "not permitted to read /proc/" + who + "/numa_maps (another user's process?)", err);
    if (err != 0) throw Error("PID " + who, std::string("cannot read numa_maps: ") + std::strerror(err), err);
    return text;
}

std::string human_bytes(std::uint64_t bytes) {
    const char* units[] = {"B", "K", "M", "G", "T"};
    // Exact ("4K", "2M") when the size is a whole number of the unit.
    std::uint64_t whole = bytes;
    int exact = 0;
    while (whole >= 1024 && whole % 1024 == 0 && exact < 4) {
        whole /= 1024;
        ++exact;
    }
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    if (exact == u) return fmt::format("{}{}", whole, units[u]);
    return fmt::format("{:.1f}{}", v, units[u]);
}

void show_text(pid_t pid, const std::vector<os::NumaMapsRecord>& records,
               const std::vector<BalancingExemptRange>& exempt, bool all) {
    const auto totals = os::numa_maps_totals(records);
    std::set<unsigned> nodes;
    for (const auto& r : records)
        for (const auto& [n, p] : r.pages_per_node) nodes.insert(n);

    fmt::print("process {}: {} mappings, {} pages ({}) present\n\n", pid, records.size(), totals.pages,
               human_bytes(totals.bytes));
    fmt::print("{:<14} {:<24} {:<6}", "address", "policy", "kind");
    for (unsigned n : nodes) fmt::print(" {:>8}", fmt::format("N{}", n));
    fmt::print(" {:>9} {:>6}  {}\n", "pages", "page", "file");
    std::size_t hidden = 0;
    for (const auto& r : records) {
        if (!all && r.total_pages() == 0) {
            ++hidden;
            continue;
        }
        // Addresses as numa_maps prints them: hex without 0x.
        fmt::print("{:<14x} {:<24} {:<6}", r.address, r.policy, r.hugetlb ? "huge" : r.kind);
        for (unsigned n : nodes) {
            auto it = r.pages_per_node.find(n);
            fmt::print(" {:>8}", it == r.pages_per_node.end() ? std::string("-") : std::to_string(it->second));
        }
        fmt::print(" {:>9} {:>6}  {}\n", r.total_pages(),
                   r.page_size_kb == 0 ? std::string("-") : human_bytes(r.page_size_kb * 1024), r.file);
    }
    fmt::print("{:<14} {:<24} {:<6}", "total", "", "");
    for (unsigned n : nodes) fmt::print(" {:>8}", totals.pages_per_node.at(n));
    fmt::print(" {:>9}\n", totals.pages);
    fmt::print("{:<14} {:<24} {:<6}", "bytes", "", "");
    for (unsigned n : nodes) fmt::print(" {:>8}", human_bytes(totals.bytes_per_node.at(n)));
    fmt::print(" {:>9}\n", human_bytes(totals.bytes));
    if (hidden != 0) fmt::print("\n{} mappings without present pages not shown (--all shows them)\n", hidden);
    std::size_t bound = 0;
    for (const auto& e : exempt) bound += e.bound ? 1 : 0;
    fmt::print("{} mappings exempt from automatic NUMA balancing ({} bound)\n", exempt.size(), bound);
}

void show_json(pid_t pid, const std::vector<os::NumaMapsRecord>& records,
               const std::vector<BalancingExemptRange>& exempt) {
    using nlohmann::json;
    std::map<std::uintptr_t, const BalancingExemptRange*> exempt_at;
    for (const auto& e : exempt) exempt_at[e.address] = &e;
    json maps = json::array();
    for (const auto& r : records) {
        json per_node = json::object();
        for (const auto& [n, p] : r.pages_per_node) per_node[std::to_string(n)] = p;
        json m = {
            {"address", os::hex(r.address)},
            {"policy", r.policy},
            {"policy_mode", r.policy_mode},
            {"policy_nodes", r.policy_nodes.empty() ? "" : r.policy_nodes.to_string()},
            {"kind", r.kind},
            {"file", r.file},
            {"hugetlb", r.hugetlb},
            {"page_size_kb", r.page_size_kb},
            {"pages_per_node", per_node},
            {"pages", r.total_pages()},
            {"bytes", r.total_bytes()},
        };
        auto it = exempt_at.find(r.address);
        m["balancing_exempt"] = it == exempt_at.end() ? json(nullptr) : json(it->second->reason);
        maps.push_back(std::move(m));
    }
    const auto totals = os::numa_maps_totals(records);
    json pages = json::object();
    json bytes = json::object();
    for (const auto& [n, p] : totals.pages_per_node) pages[std::to_string(n)] = p;
    for (const auto& [n, b] : totals.bytes_per_node) bytes[std::to_string(n)] = b;
    json out = {
        {"pid", pid},
        {"mappings", maps},
        {"total", {{"pages_per_node", pages}, {"bytes_per_node", bytes}, {"pages", totals.pages}, {"bytes", totals.bytes}}},
    };
    fmt::print("{}\n", out.dump(2));
}

}  // namespace

void add_where_command(CLI::App& app) {
    auto opts = std::make_shared<WhereOptions>();
    CLI::App* cmd = app.add_subcommand(
        "where", "Show where a process's pages are: pages per NUMA node, per mapping and in total (numa_maps)");
    cmd->add_option("PID", opts->pid, "Process id to inspect");
    cmd->add_flag("--self", opts->self, "Inspect the numaware process itself");
    cmd->add_flag("--all", opts->all, "Also list mappings that have no pages present");
    cmd->add_flag("--json", opts->json,
                  "Print JSON: every mapping (address, policy, kind, pages_per_node, balancing_exempt) and totals");
    cmd->footer("Example: numaware where $(pidof myapp)    # or: numaware where --self --json");
    cmd->callback([opts] {
        if (opts->self == !opts->pid.empty())
            throw Error("PID", opts->self ? "give either a PID or --self, not both"
                                          : "missing: give a process id or --self");
        const pid_t pid = opts->self ? ::getpid() : parse_pid(opts->pid);
        const auto records = os::parse_numa_maps(read_maps_text(opts->self ? 0 : pid));
        const auto exempt = os::exempt_ranges(records);
        if (opts->json)
            show_json(pid, records, exempt);
        else
            show_text(pid, records, exempt, opts->all);
    });
}

}  // namespace numaware::cli
