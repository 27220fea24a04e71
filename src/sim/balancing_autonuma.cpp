// sim/balancing_autonuma.cpp — Linux automatic NUMA balancing, modelled
// (docs/SIMULATOR.md): every scan period every homed region is marked; the
// next task that touches a marked region takes a hinting fault and unmarks
// it; a region faulted twice in a row from the same remote node migrates
// there, its bytes copied over the link and charged to the faulting task.
#include <cmath>

#include <fmt/format.h>

#include "numaware/error.hpp"
#include "sim/balancing_model.hpp"

namespace numaware::sim {

namespace {

class AutoNumaBalancing final : public Balancer {
public:
    explicit AutoNumaBalancing(const BalancingModel& o) : o_(o) {}

    void attach(const TimedMachine& machine, const Graph& graph, std::vector<PageHome>& pages) override {
        m_ = &machine;
        g_ = &graph;
        pages_ = &pages;
        state_.assign(pages.size(), {});
    }
    double period_s() const override { return o_.scan_period_s; }
    void scan() override {
        for (std::size_t p = 0; p < state_.size(); ++p)
            if ((*pages_)[p].home != tasks::unallocated) state_[p].marked = true;
    }
    double touch(unsigned node, std::size_t pos, std::uint32_t region) override;
    void final_stats(SimReport& report) const override {
        report.hinting_faults = hinting_faults_;
        report.migrated_bytes = migrated_bytes_;
    }

private:
    struct PageState {
        bool marked = false;    // a hinting fault is due
        int last_fault = -1;    // node of the last hinting fault
    };
    BalancingModel o_;
    const TimedMachine* m_ = nullptr;
    const Graph* g_ = nullptr;
    std::vector<PageHome>* pages_ = nullptr;
    std::vector<PageState> state_;   // per page group
    std::uint64_t hinting_faults_ = 0;
    std::uint64_t migrated_bytes_ = 0;
};

// A hinting fault on a marked region, and a migration on the second fault
// in a row from the same remote node.
double AutoNumaBalancing::touch(unsigned node, std::size_t pos, std::uint32_t region) {
    const std::uint32_t page = g_->regions()[region].page;
    PageHome& ph = (*pages_)[page];
    PageState& ps = state_[page];
    if (!ps.marked || ph.home == tasks::unallocated) return 0;
    ps.marked = false;
    ++hinting_faults_;
    double extra = o_.fault_s;
    const int here = static_cast<int>(node);
    if (here != ph.home && ps.last_fault == here) {
        const std::uint64_t bytes = g_->regions()[region].bytes;
        extra += static_cast<double>(bytes) / (m_->link_gbps[pos][ph.home_pos] * 1e9);
        migrated_bytes_ += bytes;
        ph.home = here;
        ph.home_pos = static_cast<std::uint32_t>(pos);
        ps.last_fault = -1;
    } else {
        ps.last_fault = here;
    }
    return extra;
}

}  // namespace

std::unique_ptr<Balancer> make_balancer(const BalancingModel& o) {
    if (!o.enabled) return nullptr;
    if (!(o.scan_period_s > 0) || !std::isfinite(o.scan_period_s))
        throw Error("balancing.scan_period_s", fmt::format("must be finite and > 0, got {}", o.scan_period_s));
    if (!(o.fault_s >= 0) || !std::isfinite(o.fault_s))
        throw Error("balancing.fault_s", fmt::format("must be finite and >= 0, got {}", o.fault_s));
    return std::make_unique<AutoNumaBalancing>(o);
}

}  // namespace numaware::sim
