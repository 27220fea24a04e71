// sim/memory_snapshot.cpp — the "snapshot" memory model (the default).
//
// A task's share of each resource (its home's memory, the path's link, any
// shared link the path crosses) is fixed when it starts: the resource's
// capacity divided by max(1, its users), where every running task counts on
// each resource with the share of its dependency bytes that go through it
// (its expected occupancy, since it transfers one region at a time). Tasks
// starting at the same instant all count before any share is fixed, which
// is why durations are computed in step(), once the clock is about to move.
// Cost: O(dependencies) per task.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "sim/memory_model.hpp"

namespace numaware::sim {

namespace {

class SnapshotMemory final : public MemoryModel {
public:
    void attach(const MemorySetup& setup) override;
    void task_start(std::uint32_t worker, std::span<const MemoryAccess> accesses, const TaskCost& cost) override;
    bool step(double t_next) override;
    void task_end(std::uint32_t worker) override;
    void final_stats(SimReport& report) const override;

private:
    // Users, in units of 1/weight_unit of a task.
    static constexpr std::uint64_t weight_unit = std::uint64_t{1} << 20;
    struct Running {
        std::span<const MemoryAccess> accesses;
        std::vector<std::uint64_t> weight;   // each access's share of the task's bytes, in weight_unit (a prefix)
        TaskCost cost;
    };
    // One (reader, home) pair's figures, read once per dependency: the
    // machine's, computed once here.
    // Capacities are kept as seconds per byte, so a share costs a
    // multiplication (users × seconds per byte) rather than a division.
    struct Path {
        double core_s_per_byte = 0;        // 1 / TimedMachine::core_gbps(reader, home), in s/B
        double link_s_per_byte = 0;        // 1 / link_gbps[reader][home], in s/B
        double latency_s = 0;              // latency_ns[reader][home] * 1e-9
        std::uint32_t shared_begin = 0;    // its shared links: shared_[shared_begin, shared_begin + shared_per_path_)
    };
    template <bool add>
    void count_users(std::size_t reader, std::size_t h, std::uint64_t weight);
    void begin_memory(std::uint32_t w);

    const TimedMachine* m_ = nullptr;
    EventEngine* engine_ = nullptr;
    std::vector<std::size_t> pos_;             // per worker
    std::vector<Running> running_;             // per worker
    std::size_t n_ = 0;
    std::vector<double> memory_s_per_byte_;    // per node position: 1 / memory_gbps, in s/B
    std::vector<double> shared_s_per_byte_;    // per shared link: 1 / its gbps, in s/B
    std::vector<std::uint64_t> users_mem_;     // per node position
    std::vector<std::uint64_t> users_link_;    // [reader * n + home]
    std::vector<Path> paths_;                  // [reader * n + home]
    std::vector<std::uint32_t> shared_;        // the shared links of each path, path after path, padded with the dummy
    std::uint32_t shared_per_path_ = 0;        // the longest path's count of shared links
    std::vector<std::uint64_t> users_shared_;
    std::vector<std::uint32_t> starting_;      // workers that started at the current time
    std::vector<std::uint64_t> link_bytes_;    // [reader * n + home]
};

void SnapshotMemory::attach(const MemorySetup& setup) {
    m_ = setup.machine;
    engine_ = setup.engine;
    pos_ = setup.worker_pos;
    running_.resize(pos_.size());
    n_ = m_->machine.node_count();
    users_mem_.assign(n_, 0);
    users_link_.assign(n_ * n_, 0);
    std::vector<std::vector<std::uint32_t>> shared_of(n_ * n_);
    for (std::uint32_t l = 0; l < m_->shared_links.size(); ++l)
        for (const auto& [r, h] : m_->shared_links[l].paths) shared_of[r * n_ + h].push_back(l);
    // Every access takes the same steps, local or remote (a branch on
    // local or remote would be mispredicted at every change): a local
    // access crosses no link, so its link term is 0 s/B (the counts it adds
    // to users_link_[r * n + r] are never read) and it lists no shared
    // link; and every path lists as many shared links as the longest list,
    // the rest being a dummy link of 0 s/B, so the loops over them run a
    // fixed count.
    for (std::size_t r = 0; r < n_; ++r) shared_of[r * n_ + r].clear();
    shared_per_path_ = 0;
    for (const auto& list : shared_of) shared_per_path_ = std::max(shared_per_path_, static_cast<std::uint32_t>(list.size()));
    const auto dummy = static_cast<std::uint32_t>(m_->shared_links.size());
    paths_.assign(n_ * n_, Path{});
    shared_.clear();
    for (std::size_t r = 0; r < n_; ++r)
        for (std::size_t h = 0; h < n_; ++h) {
            Path& p = paths_[r * n_ + h];
            p.core_s_per_byte = 1 / (m_->core_gbps(r, h) * 1e9);
            p.link_s_per_byte = r == h ? 0.0 : 1 / (m_->link_gbps[r][h] * 1e9);
            p.latency_s = m_->latency_ns[r][h] * 1e-9;
            p.shared_begin = static_cast<std::uint32_t>(shared_.size());
            shared_.insert(shared_.end(), shared_of[r * n_ + h].begin(), shared_of[r * n_ + h].end());
            shared_.resize(p.shared_begin + shared_per_path_, dummy);
        }
    users_shared_.assign(m_->shared_links.size() + 1, 0);   // + the dummy
    memory_s_per_byte_.resize(n_);
    for (std::size_t h = 0; h < n_; ++h) memory_s_per_byte_[h] = 1 / (m_->memory_gbps[h] * 1e9);
    shared_s_per_byte_.clear();
    for (const TimedMachine::SharedLink& l : m_->shared_links) shared_s_per_byte_.push_back(1 / (l.gbps * 1e9));
    shared_s_per_byte_.push_back(0.0);   // the dummy
    link_bytes_.assign(n_ * n_, 0);
}

void SnapshotMemory::final_stats(SimReport& report) const {
    report.link_bytes.assign(n_, std::vector<std::uint64_t>(n_, 0));
    for (std::size_t r = 0; r < n_; ++r)
        for (std::size_t h = 0; h < n_; ++h) report.link_bytes[r][h] = link_bytes_[r * n_ + h];
}

void SnapshotMemory::task_start(std::uint32_t w, std::span<const MemoryAccess> accesses, const TaskCost& cost) {
    Running& run = running_[w];
    run.accesses = accesses;
    run.cost = cost;
    std::uint64_t bytes = 0;
    for (const MemoryAccess& a : accesses) bytes += a.bytes;
    if (run.weight.size() < accesses.size()) run.weight.resize(accesses.size());   // grows only
    const double per_byte = bytes > 0 ? weight_unit / static_cast<double>(bytes) : 0;
    const std::size_t reader = pos_[w];
    for (std::size_t k = 0; k < accesses.size(); ++k) {
        run.weight[k] = static_cast<std::uint64_t>(static_cast<double>(accesses[k].bytes) * per_byte);
        count_users<true>(reader, accesses[k].home, run.weight[k]);
    }
    starting_.push_back(w);
    pending_ = true;
}

// Adds (or removes) one access of a running task, weighted by its share of
// the task's bytes, to the users of every resource it goes through.
template <bool add>
void SnapshotMemory::count_users(std::size_t reader, std::size_t h, std::uint64_t weight) {
    // Members read once, into locals: the counts are std::uint64_t, as
    // std::size_t is, so every store to one would otherwise make the
    // compiler load n_ and the arrays again.
    const auto apply = [weight](std::uint64_t& u) { u = add ? u + weight : u - weight; };
    const std::size_t path = reader * n_ + h;
    const std::uint32_t begin = paths_[path].shared_begin, end = begin + shared_per_path_;
    const std::uint32_t* shared = shared_.data();
    std::uint64_t* users_shared = users_shared_.data();
    apply(users_mem_[h]);
    apply(users_link_[path]);
    for (std::uint32_t j = begin; j < end; ++j) apply(users_shared[shared[j]]);
}

void SnapshotMemory::task_end(std::uint32_t w) {
    const Running& run = running_[w];
    const std::size_t reader = pos_[w];
    for (std::size_t k = 0; k < run.accesses.size(); ++k) count_users<false>(reader, run.accesses[k].home, run.weight[k]);
}

bool SnapshotMemory::step(double t_next) {
    if (!(t_next > engine_->now())) return false;
    for (std::uint32_t w : starting_) begin_memory(w);
    starting_.clear();
    pending_ = false;
    return true;
}

// Every share is fixed now.
void SnapshotMemory::begin_memory(std::uint32_t w) {
    const Running& run = running_[w];
    const std::size_t reader = pos_[w];
    double d_s = run.cost.overhead_s + run.cost.compute_s + run.cost.extra_s;
    for (const MemoryAccess& a : run.accesses) {
        const std::size_t h = a.home;
        // A resource's capacity is split between its users (at least one:
        // a task never gets more than the whole resource); the slowest
        // share sets the time per byte.
        // max(1, x) without a branch (a comparison of doubles became one,
        // mispredicted as users come and go): doubles >= 0 order as their
        // bit patterns do, and an integer maximum is a conditional move.
        // The weights' sum is far below 2^63, so the signed conversion, one
        // instruction, is exact.
        const auto users = [](std::uint64_t u) {
            const double x = static_cast<double>(static_cast<std::int64_t>(u)) * (1.0 / weight_unit);
            return std::bit_cast<double>(std::max(std::bit_cast<std::int64_t>(x), std::bit_cast<std::int64_t>(1.0)));
        };
        const Path& p = paths_[reader * n_ + h];
        double s_per_byte = std::max(p.core_s_per_byte, memory_s_per_byte_[h] * users(users_mem_[h]));
        s_per_byte = std::max(s_per_byte, p.link_s_per_byte * users(users_link_[reader * n_ + h]));   // local: 0
        for (std::uint32_t j = p.shared_begin; j < p.shared_begin + shared_per_path_; ++j)
            s_per_byte = std::max(s_per_byte, shared_s_per_byte_[shared_[j]] * users(users_shared_[shared_[j]]));
        d_s += p.latency_s + static_cast<double>(a.bytes) * s_per_byte;
        link_bytes_[reader * n_ + h] += a.bytes;
    }
    engine_->push(engine_->now() + d_s, EventKind::finish, w);
}

}  // namespace

std::unique_ptr<MemoryModel> make_snapshot_memory() { return std::make_unique<SnapshotMemory>(); }

}  // namespace numaware::sim
