// skeletons/engine.cpp — placed arrays, placement of a grid through the
// placement layer, balancing for a run and timed phases on a team.
#include "skeletons/engine.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <utility>

#include "numaware/balancing.hpp"
#include "numaware/error.hpp"
#include "os/os.hpp"
#include "os/syscalls.hpp"
#include "placement/page_locations.hpp"

namespace numaware::stencil::detail {

namespace {

std::string node_counts(const std::map<unsigned, std::size_t>& per_node) {
    std::string s;
    for (const auto& [node, n] : per_node) {
        if (!s.empty()) s += ", ";
        s += "node " + std::to_string(node) + ": " + std::to_string(n);
    }
    return s.empty() ? "no page present" : s;
}

void write_summary(PlacementReport& r) {
    if (!r.verified) {
        r.summary = r.mode + ": " + std::to_string(r.pages) + " pages, not verified";
        return;
    }
    r.summary = r.mode + ": " + std::to_string(r.pages) + " pages, " + std::to_string(r.pages_as_intended) +
                " where intended";
    if (r.pages_unknown) r.summary += ", " + std::to_string(r.pages_unknown) + " unknown";
    r.summary += " (" + node_counts(r.pages_per_node) + ")";
}

// Faults [lo, hi) of the array in on the calling thread, as a first touch:
// MADV_POPULATE_WRITE through the os layer, or a write to every page when
// the kernel has no such advice.
void first_touch(os::Os& os, double* base, std::size_t lo, std::size_t hi, std::size_t page) {
    if (lo >= hi) return;
    auto* p = reinterpret_cast<char*>(base) + lo;
    if (os.madvise(p, hi - lo, os::madv_populate_write) == 0) return;
    for (std::size_t off = lo; off < hi; off += page) {
        // The mapping is zero-filled: writing a zero changes no value.
        reinterpret_cast<volatile char*>(base)[off] = 0;
    }
}

std::vector<unsigned> page_owner_nodes(const std::vector<ByteRange>& owned, const std::vector<unsigned>& nodes,
                                       std::size_t pages, std::size_t page) {
    std::vector<unsigned> map(pages, nodes.empty() ? 0u : nodes[0]);
    for (std::size_t r = 0; r < owned.size(); ++r) {
        const auto [lo, hi] = owned[r];
        if (lo >= hi) continue;
        const std::size_t first = lo / page;
        const std::size_t last = std::min(pages, (hi + page - 1) / page);
        for (std::size_t p = first; p < last; ++p) map[p] = nodes[r];
    }
    return map;
}

}  // namespace

os::Os& os_of(const Options& options) { return options.os ? *options.os : os::linux_os(); }

void check_options(const Options& o, const char* static_only) {
    if (o.placement == PagePlacement::explicit_plan && !o.explicit_policy)
        throw Error("explicit_policy", "placement explicit needs a policy (Options::explicit_policy is empty)");
    if (o.placement != PagePlacement::explicit_plan && o.explicit_policy)
        throw Error("explicit_policy", "a policy was given but the placement is " +
                                           std::string(to_string(o.placement)) + "; only placement explicit takes one");
    if (static_only && o.distribution != Distribution::static_equal)
        throw Error("distribution", std::string(static_only) + " runs only the static distribution, got " +
                                        std::string(to_string(o.distribution)));
}

// ---------------------------------------------------------------- PlacedArray

PlacedArray::PlacedArray(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) throw Error("grid", "an array of 0 bytes cannot be mapped");
    void* p = nullptr;
    if (int err = os::sys::map_for_placement(bytes, p, mapped_))
        throw Error("grid", "cannot map " + std::to_string(bytes) + " bytes for the grid: " + std::strerror(err), err);
    data_ = static_cast<double*>(p);
}

// Placement remembers what apply() placed (numaware/placement.hpp): forget
// it before the addresses go back to the system.
PlacedArray::~PlacedArray() {
    if (data_) {
        forget_placement(data_, bytes_);
        (void)os::sys::unmap(data_, mapped_);
    }
}

PlacedArray::PlacedArray(PlacedArray&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

PlacedArray& PlacedArray::operator=(PlacedArray&& other) noexcept {
    if (this != &other) {
        if (data_) {
            forget_placement(data_, bytes_);
            (void)os::sys::unmap(data_, mapped_);
        }
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
        mapped_ = std::exchange(other.mapped_, 0);
    }
    return *this;
}

std::vector<int> PlacedArray::page_nodes(os::Os& os) const {
    const std::size_t page = os.page_size();
    const std::size_t pages = (bytes_ + page - 1) / page;
    std::vector<int> nodes(pages, -1);
    if (!data_) return nodes;
    // The array was initialised (placed and written) before anyone asks, so
    // pages that read absent or busy are in transit and are settled.
    std::vector<int> status(pages, -ENOENT);
    if (locate_range(os, data_, pages, status.data(), PagesExpected::present) != 0) return nodes;   // all -1
    for (std::size_t i = 0; i < pages; ++i) nodes[i] = status[i] >= 0 ? status[i] : -1;
    return nodes;
}

// ---------------------------------------------------------------- place

PlacementReport place(Team& team, PlacedArray& array, PagePlacement mode,
                      const std::optional<PlacementPolicy>& explicit_policy, const std::vector<ByteRange>& owned,
                      const std::function<void(unsigned rank, std::size_t lo, std::size_t hi)>& init, bool verify,
                      os::Os& os) {
    const std::size_t page = os.page_size();
    const std::size_t threads = team.size();
    if (owned.size() != threads)
        throw Error("owned", std::to_string(owned.size()) + " byte ranges for a team of " + std::to_string(threads));
    // Where each rank's pages go (its node, or the nearest with memory).
    const std::vector<unsigned> nodes = rank_memory_nodes(team);
    const Machine& machine = team.machine();
    double* base = array.data();

    // Small pages: page-granular placement must not be undone by THP.
    (void)os.madvise(base, array.bytes(), MADV_NOHUGEPAGE);

    PlacementReport report;
    report.mode = std::string(to_string(mode));
    report.pages = (array.bytes() + page - 1) / page;

    std::optional<PlacementPlan> the_plan;
    PlanOptions popts = plan_options_for(os);
    popts.page_size = page;
    popts.thread_cpu = team.layout().ranks.at(0).cpu;

    auto apply_plan = [&](const PlacementPolicy& policy, const char* field) {
        // Planned and applied on rank 0's thread: "calling thread" policies
        // and the populating thread are rank 0.
        team.run([&](TeamContext& ctx) {
            if (ctx.rank() != 0) return;
            try {
                the_plan = plan(policy, base, array.bytes(), machine, popts);
            } catch (const Error& e) {
                throw Error(field, e.what(), e.code());
            }
            const PlacementResult r = apply(base, array.bytes(), *the_plan, os);
            report.realisation = r.realisation;
        });
    };

    switch (mode) {
    case PagePlacement::serial_first_touch:
        team.run([&](TeamContext& ctx) {
            if (ctx.rank() != 0) return;
            for (unsigned r = 0; r < threads; ++r) {
                first_touch(os, base, owned[r].first, owned[r].second, page);
                init(r, owned[r].first, owned[r].second);
            }
        });
        report.realisation = "rank 0 (cpu " + std::to_string(team.layout().ranks[0].cpu) + ", node " +
                             std::to_string(team.layout().ranks[0].node) +
                             (nodes[0] == team.layout().ranks[0].node
                                  ? std::string()
                                  : ", its pages on node " + std::to_string(nodes[0])) +
                             ") first-touched and initialised every page";
        break;
    case PagePlacement::parallel_first_touch:
        team.run([&](TeamContext& ctx) {
            const unsigned r = ctx.rank();
            first_touch(os, base, owned[r].first, owned[r].second, page);
            init(r, owned[r].first, owned[r].second);
        });
        report.realisation = "each rank first-touched and initialised its owned block";
        break;
    case PagePlacement::interleave: {
        apply_plan(PlacementPolicy::interleave(machine.memory_nodes()), "placement");
        break;
    }
    case PagePlacement::stencil_aware: {
        const std::size_t pages = report.pages;
        apply_plan(PlacementPolicy::page_map(page_owner_nodes(owned, nodes, pages, page)), "placement");
        report.realisation = "each owned block bound to its rank's node (a node without memory: the nearest with "
                             "memory): " + report.realisation;
        break;
    }
    case PagePlacement::explicit_plan:
        if (!explicit_policy) throw Error("explicit_policy", "placement explicit needs a policy");
        apply_plan(*explicit_policy, "explicit_policy");
        break;
    }
    if (mode != PagePlacement::serial_first_touch && mode != PagePlacement::parallel_first_touch) {
        team.run([&](TeamContext& ctx) {
            const unsigned r = ctx.rank();
            init(r, owned[r].first, owned[r].second);
        });
    }

    report.verified = verify;
    if (verify) {
        const std::vector<int> actual = array.page_nodes(os);
        const std::vector<unsigned> owner = page_owner_nodes(owned, nodes, actual.size(), page);
        for (std::size_t p = 0; p < actual.size(); ++p) {
            const int a = actual[p];
            if (a < 0) {
                ++report.pages_unknown;
                continue;
            }
            ++report.pages_per_node[static_cast<unsigned>(a)];
            bool ok = false;
            switch (mode) {
            case PagePlacement::serial_first_touch: ok = static_cast<unsigned>(a) == nodes[0]; break;
            case PagePlacement::parallel_first_touch:
            case PagePlacement::stencil_aware: ok = static_cast<unsigned>(a) == owner[p]; break;
            case PagePlacement::interleave:
            case PagePlacement::explicit_plan: {
                const int want = p < the_plan->page_nodes.size() ? the_plan->page_nodes[p] : -1;
                ok = want >= 0 ? a == want : the_plan->allowed.contains(static_cast<unsigned>(a));
                break;
            }
            }
            if (ok) ++report.pages_as_intended;
        }
    }
    write_summary(report);
    return report;
}

void merge(PlacementReport& a, const PlacementReport& b) {
    if (a.mode.empty() && a.pages == 0) {
        a = b;
        return;
    }
    if (a.mode != b.mode) a.mode += "+" + b.mode;
    if (a.realisation != b.realisation && !b.realisation.empty()) {
        if (a.realisation.empty())
            a.realisation = b.realisation;
        else
            a.realisation += "; " + b.realisation;
    }
    a.pages += b.pages;
    a.pages_as_intended += b.pages_as_intended;
    for (const auto& [node, n] : b.pages_per_node) a.pages_per_node[node] += n;
    a.pages_unknown += b.pages_unknown;
    a.verified = a.verified && b.verified;
    write_summary(a);
}

// ---------------------------------------------------------------- balancing

BalancingScope::BalancingScope(bool want_off, os::Os& os) : os_(&os) {
    int value = -1;
    const int err = os.read_numa_balancing(value);
    if (err == ENOENT) {
        report_.note = "the kernel has no automatic NUMA balancing";
        return;
    }
    if (err != 0) {
        report_.note = "cannot read the automatic NUMA balancing state (" + errno_name(err) + ")";
        return;
    }
    report_.available = true;
    report_.before = value >= 0 && value <= 3 ? std::string(to_string(static_cast<BalancingState>(value)))
                                              : std::to_string(value);
    if (!want_off || value == 0) return;
    const int werr = os.write_numa_balancing(0);
    if (werr == 0) {
        report_.switched_off = true;
        previous_ = value;
    } else if (werr == EPERM || werr == EACCES || werr == EROFS) {
        report_.note = "automatic NUMA balancing is " + report_.before + " and cannot be switched off here (" +
                       errno_name(werr) + "): run as root for a placement that stays put";
    } else {
        report_.note = "automatic NUMA balancing is " + report_.before + " and could not be switched off (" +
                       errno_name(werr) + ")";
    }
}

BalancingScope::~BalancingScope() { (void)finish(); }

void BalancingScope::hold_still(const PlacedArray& array) {
    if (!report_.switched_off || done_ || array.data() == nullptr) return;
    // A failure (no MADV_POPULATE_READ before Linux 5.14) leaves the hints
    // as they were: the page query after the sweeps still reports the truth.
    (void)resolve_balancing_hints(*os_, array.data(), array.bytes());
}

BalancingReport BalancingScope::finish() {
    if (done_) return report_;
    done_ = true;
    if (report_.switched_off) {
        const int err = os_->write_numa_balancing(previous_);
        if (err == 0) {
            report_.restored = true;
        } else {
            if (!report_.note.empty()) report_.note += "; ";
            report_.note += "could not restore automatic NUMA balancing to " + report_.before + " (" +
                            errno_name(err) + ")";
        }
    }
    return report_;
}

// ---------------------------------------------------------------- phases

Timing run_phases(Team& team, std::size_t phases,
                  const std::function<void(TeamContext& ctx, std::size_t phase)>& body,
                  const std::function<void(std::size_t phase)>& on_phase) {
    using Clock = std::chrono::steady_clock;
    Timing t;
    t.busy_seconds.assign(team.size(), 0.0);
    Clock::time_point start{}, end{};
    team.run([&](TeamContext& ctx) {
        const unsigned r = ctx.rank();
        ctx.barrier();   // everyone starts together
        if (r == 0) start = Clock::now();
        double busy = 0;
        for (std::size_t p = 0; p < phases; ++p) {
            const auto t0 = Clock::now();
            body(ctx, p);
            busy += std::chrono::duration<double>(Clock::now() - t0).count();
            ctx.barrier();
            if (on_phase) {
                if (r == 0) on_phase(p);
                ctx.barrier();
            }
        }
        if (r == 0) end = Clock::now();
        t.busy_seconds[r] = busy;
    });
    t.seconds = std::chrono::duration<double>(end - start).count();
    return t;
}

std::vector<unsigned> rank_nodes(const Team& team) {
    std::vector<unsigned> nodes;
    nodes.reserve(team.size());
    for (const RankPlace& p : team.layout().ranks) nodes.push_back(p.node);
    return nodes;
}

std::vector<unsigned> rank_memory_nodes(const Team& team) {
    std::vector<unsigned> nodes;
    nodes.reserve(team.size());
    for (const RankPlace& p : team.layout().ranks) nodes.push_back(team.machine().memory_node_near(p.node));
    return nodes;
}

}  // namespace numaware::stencil::detail
