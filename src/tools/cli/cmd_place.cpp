// tools/cli/cmd_place.cpp — `numaware place`: allocate a fresh array under
// each policy, apply its plan, and show the plan's intent next to what the
// kernel reports, page by page. This is the placement half of `make demo`.
#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "numaware/error.hpp"
#include "numaware/machine.hpp"
#include "numaware/placement.hpp"
#include "os/os.hpp"
#include "os/syscalls.hpp"
#include "tools/cli/commands.hpp"

namespace numaware::cli {

namespace {

struct PlaceOptions {
    std::string size = "256M";
    std::vector<std::string> policies;
    bool all = false;
    bool huge_units = false;
    bool json = false;
};

struct Row {
    std::string spec;
    std::string granularity;    // short note for the table
    std::string realisation;
    std::optional<PlacementPlan> plan;
    std::optional<PlacementResult> result;
    std::string error;
    bool ok() const { return error.empty() && result && result->ok(); }
};

// Every policy kind that makes sense on `m` for a thread on `home`.
std::vector<std::string> all_policies(const Machine& m, unsigned home) {
    const std::vector<unsigned> mem = m.memory_nodes().to_vector();
    std::vector<std::string> out{"first-touch"};
    for (unsigned n : mem) out.push_back("bind:" + std::to_string(n));
    out.push_back("preferred:" + std::to_string(mem.back()));
    NodeSet others;
    for (unsigned n : mem)
        if (n != home) others.add(n);
    if (others.size() >= 2) out.push_back("preferred-many:" + others.to_string());
    out.push_back("interleave:all");
    if (mem.size() >= 2) {
        std::string w = "weighted:";
        for (std::size_t i = 0; i < mem.size(); ++i)
            w += (i ? "," : "") + std::to_string(mem[i]) + "=" + (i == 0 ? "3" : "1");
        out.push_back(w);
    }
    out.push_back("local");
    if (mem.size() >= 2) out.push_back("remote");
    out.push_back("block:all");
    out.push_back("cyclic:all/16");
    return out;
}

std::string short_granularity(const PlacementPlan& p) {
    if (p.no_huge_pages) return format_size(p.unit_bytes) + ", THP off (MADV_NOHUGEPAGE)";
    if (p.policy.fine_grained()) return format_size(p.unit_bytes) + " units, huge-page aligned";
    return format_size(p.page_size) + ", THP allowed (one node per huge page)";
}

std::string short_realisation(const PlacementPlan& p, const PlacementResult* r) {
    if (r != nullptr && r->realisation.find("no MPOL_WEIGHTED_INTERLEAVE") != std::string::npos)
        return "move_pages (no kernel weighted mode)";
    switch (p.realisation) {
    case Realisation::range_policy: {
        static const char* names[] = {"default", "preferred", "bind", "interleave",
                                      "local", "preferred-many", "weighted-interleave"};
        return std::string("mbind ") + names[static_cast<int>(p.mode)];
    }
    case Realisation::per_run_mbind: return "mbind bind x" + std::to_string(p.runs.size()) + " runs";
    case Realisation::move_pages: return "move_pages";
    }
    return "?";
}

std::string counts(const std::map<unsigned, std::size_t>& per_node, const std::vector<unsigned>& nodes,
                   std::size_t extra, const char* extra_tag) {
    std::string out;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        auto it = per_node.find(nodes[i]);
        out += (i ? "/" : "") + std::to_string(it == per_node.end() ? 0 : it->second);
    }
    if (extra > 0) out += fmt::format(" +{} {}", extra, extra_tag);
    return out;
}

nlohmann::json per_node_json(const std::map<unsigned, std::size_t>& m) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [node, n] : m) j[std::to_string(node)] = n;
    return j;
}

void run_place(const PlaceOptions& opt) {
    const std::uint64_t size = parse_size(opt.size, "--size");
    if (size == 0) throw Error("--size", "must be more than 0 bytes");
    const Machine m = Machine::from_live();
    os::Os& os = os::linux_os();
    // The policies asked for are checked before anything is pinned or
    // mapped: a malformed one, or one this machine cannot hold, is bad input.
    for (const std::string& spec : opt.policies) {
        try {
            (void)parse_policy(spec, m);
        } catch (const Error& e) {
            throw Error("--policy", e.what(), e.code());
        }
    }

    // Pin to the first allowed CPU so first-touch, local and remote have
    // one well-defined thread to be relative to.
    std::vector<unsigned> cpus;
    if (int err = os.get_affinity(0, cpus); err != 0 || cpus.empty())
        throw Error("affinity", "cannot read the calling thread's CPUs: " + errno_name(err), err);
    const unsigned cpu = cpus.front();
    if (int err = os.set_affinity(0, {cpu}))
        throw Error("affinity", "cannot pin the calling thread to CPU " + std::to_string(cpu) + ": " + errno_name(err), err);
    const unsigned home = m.node_of_cpu(cpu);

    std::vector<std::string> specs = opt.policies;
    if (opt.all || specs.empty()) {
        auto more = all_policies(m, home);
        specs.insert(specs.end(), more.begin(), more.end());
    }

    PlanOptions po = plan_options_for(os);
    po.thread_cpu = cpu;
    if (opt.huge_units) po.fine_grained = HugePageHandling::huge_units;

    std::vector<Row> rows;
    for (const std::string& spec : specs) {
        Row row;
        row.spec = spec;
        void* addr = nullptr;
        std::size_t mapped = 0;
        if (int err = os::sys::map_for_placement(size, addr, mapped))
            throw Error("--size", "cannot map " + opt.size + ": " + errno_name(err), err);
        try {
            const PlacementPolicy policy = parse_policy(spec, m);
            row.plan = plan(policy, addr, size, m, po);
            row.granularity = short_granularity(*row.plan);
            row.result = apply(addr, size, *row.plan, os);
            row.realisation = short_realisation(*row.plan, &*row.result);
        } catch (const Error& e) {
            row.error = e.what();
            if (row.plan) row.realisation = short_realisation(*row.plan, nullptr);
        }
        forget_placement(addr, size);   // placement remembers what apply() placed
        (void)os::sys::unmap(addr, mapped);
        rows.push_back(std::move(row));
    }

    std::vector<unsigned> nodes;
    for (const Node& n : m.nodes) nodes.push_back(n.os_index);
    bool all_ok = true;
    for (const Row& r : rows) all_ok = all_ok && r.ok();

    if (opt.json) {
        nlohmann::json out;
        out["size_bytes"] = size;
        out["page_size"] = po.page_size;
        out["cpu"] = cpu;
        out["node"] = home;
        out["ok"] = all_ok;
        out["rows"] = nlohmann::json::array();
        for (const Row& r : rows) {
            nlohmann::json j;
            j["policy"] = r.spec;
            j["ok"] = r.ok();
            if (r.plan) {
                j["granularity"] = r.plan->granularity;
                j["unit_bytes"] = r.plan->unit_bytes;
                j["no_huge_pages"] = r.plan->no_huge_pages;
                j["realisation"] = r.result ? r.result->realisation : r.plan->realisation_text();
                j["intended"] = per_node_json(r.plan->intent);
                j["undecided_pages"] = r.plan->undecided_pages;
            }
            if (r.result) {
                j["pages"] = r.result->pages;
                j["kernel"] = per_node_json(r.result->actual);
                j["matched"] = r.result->matched;
                j["mismatched"] = r.result->mismatches.size();
                j["unplaced"] = r.result->unplaced.size();
                j["summary"] = r.result->summary();
            }
            if (!r.error.empty()) j["error"] = r.error;
            out["rows"].push_back(j);
        }
        fmt::print("{}\n", out.dump(2));
    } else {
        fmt::print("numaware place: {} per policy ({} pages of {}), {} node{}; calling thread pinned to CPU {} (node {})\n",
                   format_size(size), (size + po.page_size - 1) / po.page_size, format_size(po.page_size),
                   m.node_count(), m.node_count() == 1 ? "" : "s", cpu, home);
        std::string node_header;
        for (std::size_t i = 0; i < nodes.size(); ++i) node_header += (i ? "/" : "") + std::to_string(nodes[i]);
        struct Cells {
            std::string policy, gran, how, intended, kernel, mark;
        };
        std::vector<Cells> cells;
        cells.push_back({"POLICY", "GRANULARITY", "REALISED BY", "PLAN pages/node " + node_header,
                         "KERNEL pages/node " + node_header, ""});
        for (const Row& r : rows) {
            Cells c{r.spec, r.granularity.empty() ? "-" : r.granularity, r.realisation.empty() ? "-" : r.realisation,
                    "-", "-", ""};
            if (r.plan) c.intended = counts(r.plan->intent, nodes, r.plan->undecided_pages, "any");
            if (r.result) {
                c.kernel = counts(r.result->actual, nodes, r.result->unplaced.size(), "absent");
                const std::size_t bad = r.result->mismatches.size() + r.result->unplaced.size();
                c.mark = bad == 0 ? "✓" : fmt::format("✗ {} pages off plan", bad);
            } else {
                c.mark = "✗ failed";
            }
            cells.push_back(c);
        }
        std::size_t w[5] = {};
        for (const Cells& c : cells) {
            w[0] = std::max(w[0], c.policy.size());
            w[1] = std::max(w[1], c.gran.size());
            w[2] = std::max(w[2], c.how.size());
            w[3] = std::max(w[3], c.intended.size());
            w[4] = std::max(w[4], c.kernel.size());
        }
        fmt::print("\n");
        for (const Cells& c : cells)
            fmt::print("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", c.policy, w[0], c.gran, w[1], c.how, w[2],
                       c.intended, w[3], c.kernel, w[4], c.mark);
        bool notes = false;
        for (const Row& r : rows) {
            std::string why;
            if (!r.error.empty())
                why = r.error;
            else if (r.result && !r.result->ok())
                why = r.result->summary();
            if (why.empty()) continue;
            if (!notes) fmt::print("\n");
            notes = true;
            fmt::print("{}: {}\n", r.spec, why);
        }
        std::size_t passed = 0;
        for (const Row& r : rows) passed += r.ok() ? 1 : 0;
        fmt::print("\n{} of {} policies placed every page where the plan says (checked page by page with "
                   "move_pages).{}\n",
                   passed, rows.size(),
                   std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.plan && r.plan->undecided_pages; })
                       ? " \"+N any\": pages the kernel may put on any node the policy allows."
                       : "");
    }
    if (!all_ok) set_exit_status(1);
}

}  // namespace

void add_place_command(CLI::App& app) {
    auto opt = std::make_shared<PlaceOptions>();
    CLI::App* cmd = app.add_subcommand(
        "place", "Allocate an array under each placement policy; show the plan next to the kernel's page counts");
    cmd->add_option("--size", opt->size, "Bytes per policy, e.g. 64M, 1G")->capture_default_str();
    cmd->add_option("--policy", opt->policies,
                    "Policy spec (repeatable): first-touch, bind:NODES, preferred:N, preferred-many:NODES, "
                    "interleave:NODES|all, weighted:N=W,..., local, remote, block:NODES, cyclic:NODES/UNIT");
    cmd->add_flag("--all", opt->all, "Every policy kind that makes sense on this machine (the default without --policy)");
    cmd->add_flag("--huge-units", opt->huge_units,
                  "Fine-grained policies place 2M huge-page-aligned units instead of asking for small pages");
    cmd->add_flag("--json", opt->json, "Machine-readable output");
    cmd->footer("Example: numaware place --size 64M --policy interleave:all --policy bind:1\n"
                "Exit status 1 if any policy left a page off its plan.");
    cmd->callback([opt] { run_place(*opt); });
}

}  // namespace numaware::cli
