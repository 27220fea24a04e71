// sim/memory_exact.cpp — the "exact" memory model.
//
// Every dependency transfer is a flow in a FlowNetwork through the core's
// own limit on its path (a resource only that worker uses), the home's
// memory, and for a remote access the path's link and every shared link it
// crosses; shares are max-min fair and revised at every start and end of a
// transfer. A task transfers its dependencies one after another, then
// computes. Costlier than the snapshot model; for validation and small
// graphs.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/memory_model.hpp"

namespace numaware::sim {

namespace {

class ExactMemory final : public MemoryModel {
public:
    void attach(const MemorySetup& setup) override;
    void task_start(std::uint32_t worker, std::span<const MemoryAccess> accesses, const TaskCost& cost) override;
    bool step(double t_next) override;
    void task_end(std::uint32_t) override {}
    void final_stats(SimReport& report) const override { report.link_bytes = link_bytes_; }

private:
    struct Running {
        std::span<const MemoryAccess> accesses;
        std::size_t next = 0;   // the dependency being transferred
        TaskCost cost;
    };
    void start_flow(std::uint32_t w);

    static constexpr std::size_t none_res = ~std::size_t{0};
    static constexpr std::uint32_t no_worker = 0xffffffffu;
    const TimedMachine* m_ = nullptr;
    EventEngine* engine_ = nullptr;
    std::vector<std::size_t> pos_;   // per worker
    std::vector<Running> running_;   // per worker
    std::size_t n_ = 0;
    FlowNetwork net_;
    std::vector<std::size_t> mem_res_, link_res_, shared_res_;
    std::vector<std::size_t> core_res_;   // [worker * n + home], made when first used
    std::vector<std::vector<std::uint32_t>> shared_of_;   // [reader * n + home]: the shared links the path crosses
    std::vector<std::uint32_t> flow_worker_;
    NodeMatrix<std::uint64_t> link_bytes_;
};

void ExactMemory::attach(const MemorySetup& setup) {
    m_ = setup.machine;
    engine_ = setup.engine;
    pos_ = setup.worker_pos;
    running_.resize(pos_.size());
    n_ = m_->machine.node_count();
    shared_of_.assign(n_ * n_, {});
    for (std::uint32_t l = 0; l < m_->shared_links.size(); ++l)
        for (const auto& [r, h] : m_->shared_links[l].paths) shared_of_[r * n_ + h].push_back(l);
    link_bytes_.assign(n_, std::vector<std::uint64_t>(n_, 0));
    for (std::size_t h = 0; h < n_; ++h)
        mem_res_.push_back(net_.add_resource(m_->memory_gbps[h] * 1e9, fmt::format("memory {}", m_->machine.nodes[h].os_index)));
    link_res_.assign(n_ * n_, 0);
    core_res_.assign(pos_.size() * n_, none_res);
    for (const auto& l : m_->shared_links) shared_res_.push_back(net_.add_resource(l.gbps * 1e9, l.name));
    for (std::size_t r = 0; r < n_; ++r)
        for (std::size_t h = 0; h < n_; ++h)
            if (r != h)
                link_res_[r * n_ + h] = net_.add_resource(
                    m_->link_gbps[r][h] * 1e9,
                    fmt::format("link {}->{}", m_->machine.nodes[h].os_index, m_->machine.nodes[r].os_index));
}

void ExactMemory::task_start(std::uint32_t w, std::span<const MemoryAccess> accesses, const TaskCost& cost) {
    running_[w] = Running{accesses, 0, cost};
    start_flow(w);
    pending_ = net_.active() > 0;
}

// The task's next dependency, or, when all are moved, its compute.
void ExactMemory::start_flow(std::uint32_t w) {
    Running& run = running_[w];
    const double now = engine_->now();
    if (run.next < run.accesses.size()) {
        if (net_.active() == 0 && now > net_.time()) net_.advance_to(now);   // an idle network's clock stands still
        const std::size_t reader = pos_[w];
        const MemoryAccess& a = run.accesses[run.next];
        const std::size_t h = a.home;
        std::size_t& core = core_res_[static_cast<std::size_t>(w) * n_ + h];
        if (core == none_res)
            core = net_.add_resource(m_->core_gbps(reader, h) * 1e9, fmt::format("core {} from node {}", w, h));
        std::vector<std::size_t> res{core, mem_res_[h]};
        if (h != reader) {
            res.push_back(link_res_[reader * n_ + h]);
            for (std::uint32_t l : shared_of_[reader * n_ + h]) res.push_back(shared_res_[l]);
        }
        const FlowNetwork::Id id = net_.start(static_cast<double>(a.bytes), std::move(res), m_->latency_ns[reader][h] * 1e-9);
        if (flow_worker_.size() <= id) flow_worker_.resize(id + 1, no_worker);
        flow_worker_[id] = w;
        link_bytes_[reader][h] += a.bytes;
        ++run.next;
        return;
    }
    engine_->push(now + run.cost.overhead_s + run.cost.compute_s + run.cost.extra_s, EventKind::finish, w);
}

bool ExactMemory::step(double t_next) {
    // The network's clock may be a rounding step past t_next (it ends flows
    // that finish within rounding together): never ask it to go back.
    if (net_.active() > 0 && (!std::isfinite(t_next) || !net_.advance_to(std::max(t_next, net_.time())))) {
        const auto c = net_.next();
        engine_->set_now(c->time);
        start_flow(flow_worker_[c->flow]);
        pending_ = net_.active() > 0;
        return true;
    }
    pending_ = net_.active() > 0;
    return false;
}

}  // namespace

std::unique_ptr<MemoryModel> make_exact_memory() { return std::make_unique<ExactMemory>(); }

}  // namespace numaware::sim
